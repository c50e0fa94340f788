"""Page analysis benchmark (issue 12): parse + page checks on hostile and normal pages, and the parsers
that were considered.

    python -m bench.html_bench [--runs 3] [--parsers]

For each page of tests/fixtures/hostile_pages.py (a ~100 KB normal page, 10,000 nested `<div>`, 1 MB
of nested tags, 50,000 resource tags, each cut at the 2 MiB body limit like the fetch does) it prints
the median wall and CPU time of the parse alone (`records.html._parse`, the uncached `parse_page`) and of the full
grading (`grade_snapshot`: the one parse and every check), the elements examined and the budgets
that ran out. `--parsers` also times the candidate parsers on the same pages, each in a child
process with a time limit (some go quadratic): BeautifulSoup with html.parser and with lxml, lxml
alone, selectolax (lexbor). Those not installed are skipped.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/html_bench.py` puts bench/ first, not the checkout
    sys.path.insert(0, str(ROOT))

from tests.factories import make_snapshot  # noqa: E402
from tests.fixtures.hostile_pages import PAGES  # noqa: E402
from websec_app.scanner.records.html import Budget, _parse  # noqa: E402
from websec_app.scanner.scan import grade_snapshot  # noqa: E402
from websec_app.scanner.snapshot import HttpResponse  # noqa: E402

LIMIT = 2 * 1024 * 1024  # WEBSEC_MAX_BODY_BYTES: what the fetch keeps of a body
PARSER_TIME_LIMIT = 60.0  # seconds per parser and page in --parsers

_PARSERS = {
    "bs4+html.parser": "from bs4 import BeautifulSoup\nBeautifulSoup(text, 'html.parser').find_all(True)",
    "bs4+lxml": "from bs4 import BeautifulSoup\nBeautifulSoup(text, 'lxml').find_all(True)",
    "lxml": "from lxml import etree\nlist(etree.HTML(text, etree.HTMLParser(huge_tree=True)).iter())",
    "lexbor": "from selectolax.lexbor import LexborHTMLParser\nLexborHTMLParser(text).root",
}


def _bodies() -> dict[str, tuple[bytes, bool]]:
    return {path.strip("/"): (build()[:LIMIT], len(build()) > LIMIT) for path, build in PAGES.items()}


def _timed(work: Callable[[], object], runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def bench_analysis(runs: int) -> None:
    print(f"{'page':12} {'size':>8} {'parse ms':>9} {'(cpu)':>7} {'grade ms':>9} {'(cpu)':>7} {'examined':>9}  budgets")
    for name, (body, truncated) in _bodies().items():
        final = make_snapshot("https://shop.example.com/", body=body).final
        assert final is not None
        page = _parse(final, Budget())

        def parse(final: HttpResponse = final) -> object:
            return _parse(final, Budget())  # a fresh budget per run: a parse spends it

        def grade(body: bytes = body) -> object:
            # A fresh snapshot per run, so the memoised parse is not reused between runs.
            return grade_snapshot(make_snapshot("https://shop.example.com/", body=body + b" "))

        parse_ms, parse_cpu = _timed(parse, runs)
        grade_ms, grade_cpu = _timed(grade, runs)
        print(
            f"{name:12} {len(body) / 1024:6.0f}KB {parse_ms:9.1f} {parse_cpu:7.1f} {grade_ms:9.1f} {grade_cpu:7.1f}"
            f" {page.examined:9,}  {', '.join(page.exhausted) or '-'}{' (cut at 2 MiB)' if truncated else ''}"
        )


def bench_parsers() -> None:
    print(f"\nparsers alone, median of 1 run each, limit {PARSER_TIME_LIMIT:.0f} s (ms)")
    bodies = _bodies()
    print(f"{'parser':16}" + "".join(f"{name:>12}" for name in bodies))
    for parser, code in _PARSERS.items():
        cells = []
        for name in bodies:
            program = (
                "import sys, time\n"
                f"from tests.fixtures.hostile_pages import PAGES\ntext = PAGES['/{name}']()[:{LIMIT}].decode()\n"
                f"t = time.perf_counter()\n{code}\nprint((time.perf_counter() - t) * 1000)"
            )
            try:
                done = subprocess.run(
                    [sys.executable, "-c", program], capture_output=True, text=True, timeout=PARSER_TIME_LIMIT
                )
                cells.append(f"{float(done.stdout):.0f}" if done.returncode == 0 else "n/a")
            except subprocess.TimeoutExpired:
                cells.append(f">{PARSER_TIME_LIMIT:.0f}000")
        print(f"{parser:16}" + "".join(f"{cell:>12}" for cell in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parsers", action="store_true", help="also time the candidate parsers")
    args = parser.parse_args()
    bench_analysis(args.runs)
    if args.parsers:
        bench_parsers()


if __name__ == "__main__":
    main()
