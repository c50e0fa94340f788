"""`python -m websec_app keys ...`: operator commands for API keys (spec 5: "regenerated through support").

    keys create --email E   a Pro subscription (if none is active) and its key; the key is the last line
    keys rotate --email E   deactivate the current key of E and print a new one (the month's usage stays)
    keys revoke KEY         deactivate one key
    keys list               every key: id, prefix, email, plan, state, dates (never the key itself)

Exit codes: 0 done; 1 nothing to do (no such subscription or key, a key already exists); 2 bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from ..clock import clock_for
from ..settings import SettingsError, get_settings

if TYPE_CHECKING:  # the store (SQLModel, Alembic) is imported only when a keys command runs
    from ..store import Database, IssuedKey


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("keys", help="create, rotate, revoke and list API keys")
    actions = parser.add_subparsers(dest="keys_action", required=True)
    create = actions.add_parser("create", help="create a Pro key for an email address (printed on the last line)")
    create.add_argument("--email", required=True)
    create.set_defaults(handler=_create)
    rotate = actions.add_parser("rotate", help="replace the active key of an email address with a new one")
    rotate.add_argument("--email", required=True)
    rotate.set_defaults(handler=_rotate)
    revoke = actions.add_parser("revoke", help="deactivate a key")
    revoke.add_argument("key", help="the full key (wsk_...)")
    revoke.set_defaults(handler=_revoke)
    listing = actions.add_parser("list", help="list keys (prefixes only)")
    listing.set_defaults(handler=_list)


def _fail(message: str, code: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _database() -> Database:
    from ..store import database_for

    return database_for(get_settings().resolved_database_url)


def _now() -> datetime:
    return clock_for(get_settings())()


def _print_key(verb: str, issued: IssuedKey) -> None:
    print(f"{verb} {issued.plan} key {issued.prefix}… (id {issued.key_id}) for {issued.email}.")
    print("Store it now: it is shown only this once.")
    print(issued.key)


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except SettingsError as exc:
            return _fail(f"invalid configuration: {exc}", 2)

    return run


@_guarded
def _create(args: argparse.Namespace) -> int:
    from ..store import ActiveKeyExists, create_subscription, find_active_subscription, issue_api_key

    with _database().session() as session:
        subscription = find_active_subscription(session, args.email)
        if subscription is None:
            subscription = create_subscription(session, email=args.email, now=_now())
        if subscription.id is None:
            return _fail("the subscription could not be saved")
        try:
            issued = issue_api_key(session, subscription.id, _now())
        except ActiveKeyExists as exc:
            return _fail(
                f"{subscription.email} already has an active key ({exc.prefix}…); "
                f"use `keys rotate --email {subscription.email}` to replace it"
            )
    _print_key("Created", issued)
    return 0


@_guarded
def _rotate(args: argparse.Namespace) -> int:
    from ..store import find_active_subscription, rotate_api_key

    with _database().session() as session:
        subscription = find_active_subscription(session, args.email)
        if subscription is None or subscription.id is None:
            return _fail(f"no active subscription for {args.email}; use `keys create --email {args.email}`")
        issued = rotate_api_key(session, subscription.id, _now())
    _print_key("Rotated: the old key no longer works. New", issued)
    return 0


@_guarded
def _revoke(args: argparse.Namespace) -> int:
    from ..store import revoke_api_key

    with _database().session() as session:
        revoked = revoke_api_key(session, args.key.strip(), _now())
    if not revoked:
        return _fail("no active key matches (it may be revoked already, or mistyped)")
    print("Revoked: the key no longer works.")
    return 0


@_guarded
def _list(args: argparse.Namespace) -> int:
    from ..store import list_api_keys

    with _database().session() as session:
        keys = list_api_keys(session)
    if not keys:
        print("No API keys yet. Create one with `python -m websec_app keys create --email E`.")
        return 0
    print(f"{'id':>4}  {'key':<12} {'email':<32} {'plan':<6} {'state':<22} created")
    for key in keys:
        if not key.active:
            state = "revoked"
        elif key.subscription_status != "active":
            state = f"subscription {key.subscription_status}"
        else:
            state = "active"
        created = key.created_at.strftime("%Y-%m-%d %H:%M")
        print(f"{key.key_id:>4}  {key.prefix + '…':<12} {key.email:<32} {key.plan:<6} {state:<22} {created}")
    return 0
