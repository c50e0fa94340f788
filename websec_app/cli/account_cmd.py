"""`python -m websec_app account`: a Pro subscriber's plan, this month's usage and latest scans, from a shell.

The key is read from the WEBSEC_API_KEY environment variable, never from the command line (where other users
of the machine could read it in the process list). The same use cases answer `GET /api/usage` and the web
UI's Pro page (`websec_app.usecases.accounts`): this module only prints.

Exit codes: 0 printed; 1 the key was refused (unknown, revoked, inactive subscription); 2 no key, or a bad
configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from ..settings import SettingsError, get_settings

if TYPE_CHECKING:  # the store and the use cases are imported only when the command runs
    from ..usecases import RecentScan, Subscriber, Usage
    from ..usecases.runtime import Runtime

KEY_VARIABLE = "WEBSEC_API_KEY"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "account", help=f"plan, usage this month and recent scans of the Pro key in ${KEY_VARIABLE}"
    )
    parser.add_argument("--recent", type=int, default=5, metavar="N", help="how many recent scans to list (5)")
    parser.set_defaults(handler=_account)


def _account(args: argparse.Namespace) -> int:
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        print(f"error: set {KEY_VARIABLE} to your API key (wsk_...)", file=sys.stderr)
        return 2
    try:
        settings = get_settings()
    except SettingsError as exc:
        print(f"error: invalid configuration: {exc}", file=sys.stderr)
        return 2
    import asyncio  # here, not at the top: `--help` and the other commands do without it (issue 14)

    from ..runtime import build_runtime
    from ..usecases import KeyRefused, inactive_subscription_sentence

    runtime = build_runtime(settings, bounded=False)
    try:
        subscriber, month, scans = asyncio.run(_look_up(runtime, key, max(0, args.recent)))
    except KeyRefused as exc:
        why = f": {inactive_subscription_sentence(exc.subscription_status)}" if exc.subscription_status else ""
        print(f"error: the key is refused ({exc.reason.replace('_', ' ')}){why}", file=sys.stderr)
        return 1
    finally:
        runtime.database.dispose()
    _print(subscriber, month, scans)
    return 0


async def _look_up(runtime: Runtime, key: str, limit: int) -> tuple[Subscriber, Usage, list[RecentScan]]:
    from ..usecases import authenticate, recent, usage

    subscriber = await authenticate(runtime, key)
    return subscriber, await usage(runtime, subscriber), await recent(runtime, subscriber, limit)


def _print(subscriber: Subscriber, month: Usage, scans: list[RecentScan]) -> None:
    from ..wording import counted

    print(f"{subscriber.email}: {subscriber.plan_label}")
    print(
        f"{month.used} of {counted(month.limit, 'scan')} used this month, {month.remaining} left; "
        f"resets {month.resets_at:%Y-%m-%d} 00:00 UTC"
    )
    for scan in scans:
        print(f"  {scan.scanned_at:%Y-%m-%d %H:%M} UTC  {scan.grade:<2} {scan.score:>3}  {scan.kind:<8} {scan.url}")
