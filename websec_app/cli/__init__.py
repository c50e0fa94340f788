"""Command-line entry point: one sub-command module each, registered explicitly here."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import startup_code, startup_gc, startup_regex

# Before the command modules load the settings and their dataclasses: their generated code then comes from the
# cache too (websec_app/startup_code.py), and so does the code of the regular expressions they compile
# (websec_app/startup_regex.py; `python -m websec_app` installs that one before this module's imports). Every
# command reads the caches; only a scan writes them (main, below).
startup_code.install()
startup_regex.install()

from . import account_cmd, keys_cmd, scan_cmd, serve_api_cmd, worker_cmd  # noqa: E402

_COMMANDS = (scan_cmd, serve_api_cmd, worker_cmd, keys_cmd, account_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m websec_app", description="websec: website security scanner")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _COMMANDS:
        module.register(sub)
    return parser


#: Commands whose start-up runs with the cycle collector paused (websec_app/startup_gc.py): a scan, which
#: resumes it when its imports are done, and saves what it compiled of dataclasses' and regular expressions' code
#: (websec_app/startup_code.py, startup_regex.py) when it ends. Not the long-running ones.
_PAUSE_COLLECTOR = ("scan",)

#: Exit status after Ctrl-C (SIGINT): 128 + 2, what a shell reports for a command SIGINT ended.
EXIT_INTERRUPTED = 130


#: Commands whose process ends without the interpreter's teardown once their output is flushed
#: (`run_as_process`): freeing the ~700 modules and every object a scan made took ~9 ms of a ~200 ms
#: `scan URL` process (issue 14), and the kernel frees them at exit anyway.
_EXIT_WITHOUT_TEARDOWN = ("scan",)

#: The interpreter's own exit status when flushing stdout fails at exit (Py_FinalizeEx).
EXIT_FLUSH_FAILED = 120


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status (in-process callers and tests)."""
    return _run(_parse(argv))


def run_as_process(argv: Sequence[str] | None = None) -> NoReturn:
    """`python -m websec_app`: run one command, then end the process. A short-lived command ends with
    `os._exit` once the exit handlers have run (logging's flush among them) and the standard streams are
    flushed, skipping the interpreter's teardown; its files are closed and its cache write
    (startup_code.save) is atomic and done by then. Its idle threads (the grading pool, a daemon warm-up) end
    with the process, as they would at a normal exit."""
    args = _parse(argv)
    status = _run(args)
    if args.command not in _EXIT_WITHOUT_TEARDOWN:
        raise SystemExit(status)
    atexit._run_exitfuncs()  # what the interpreter would run at exit (logging.shutdown, libraries' handlers)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed reader: the status the interpreter's exit flush would give
            status = status or EXIT_FLUSH_FAILED
    os._exit(status)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    return build_parser().parse_args(argv)


def _run(args: argparse.Namespace) -> int:
    if args.command in _PAUSE_COLLECTOR:
        startup_gc.pause()
        startup_code.allow_saving()
        startup_regex.allow_saving()
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
        startup_regex.save()  # and compiled
