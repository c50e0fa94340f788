"""Command-line entry point: one sub-command module each, registered explicitly here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from . import account_cmd, keys_cmd, scan_cmd, serve_api_cmd, worker_cmd

_COMMANDS = (scan_cmd, serve_api_cmd, worker_cmd, keys_cmd, account_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m websec_app", description="websec: website security scanner")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.handler(args))
