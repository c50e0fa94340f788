"""Command-line entry point: one sub-command module each, registered explicitly here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from .. import startup_code, startup_gc

# Before the command modules load the settings and their dataclasses: their generated code then comes from the
# cache too (websec_app/startup_code.py). Every command reads the cache; only a scan writes it (main, below).
startup_code.install()

from . import account_cmd, keys_cmd, scan_cmd, serve_api_cmd, worker_cmd  # noqa: E402

_COMMANDS = (scan_cmd, serve_api_cmd, worker_cmd, keys_cmd, account_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m websec_app", description="websec: website security scanner")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _COMMANDS:
        module.register(sub)
    return parser


#: Commands whose start-up runs with the cycle collector paused (websec_app/startup_gc.py): a scan, which
#: resumes it when its imports are done, and saves what it compiled of dataclasses' code
#: (websec_app/startup_code.py) when it ends. Not the long-running ones.
_PAUSE_COLLECTOR = ("scan",)

#: Exit status after Ctrl-C (SIGINT): 128 + 2, what a shell reports for a command SIGINT ended.
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    if args.command in _PAUSE_COLLECTOR:
        startup_gc.pause()
        startup_code.allow_saving()
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        # One line, not the traceback of every frame the interrupted scan was in (~40 lines in a CI log).
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout's reader went away outside scan_cmd.emit (which keeps the gate's status): the Python docs'
        # recipe, stdout to devnull so the exit flush does not raise again (library/signal.html, SIGPIPE).
        scan_cmd.stdout_to_devnull()
        return 1
    finally:
        startup_gc.resume()  # when the command ended before its scan did (an invalid URL)
        startup_code.save()  # once, at the end: what the whole command defined
