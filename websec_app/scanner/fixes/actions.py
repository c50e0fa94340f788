"""What a header or cookie remedy asks a server to do, read from a remedy and the rendered fix.

The per-server writers (writers_config.py, writers_platform.py) turn one action into configuration. Every
text that reaches them passed through here: a scanned page controls some of it (its own CSP, cookie names),
so control characters and backslashes are dropped and cookie names outside the RFC 6265 token set are not
written into configuration at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .remedies import Remedy

CSP = "Content-Security-Policy"
CSP_REPORT_ONLY = "Content-Security-Policy-Report-Only"


@dataclass(frozen=True)
class SetHeader:
    name: str
    value: str
    mode: str  # "set": replaces the header the site sends; "add": sent beside it


@dataclass(frozen=True)
class RemoveHeaders:
    names: tuple[str, ...]  # "Server" among them: hide the server's version (it cannot always be removed)


@dataclass(frozen=True)
class CookieAttributes:
    cookies: tuple[str, ...]  # empty: every cookie the site sets
    attributes: tuple[str, ...]  # "Secure", "HttpOnly", "SameSite=Lax": each added where the cookie lacks it
    #: The finding is a missing SameSite: nginx's proxy_cookie_flags replaces a SameSite the cookie has (Strict
    #: would become Lax), so its snippet sets samesite= only then, or for the cookies of `lacking_samesite`
    samesite_missing: bool = False
    #: Cookies among `cookies` that another finding of the report shows without SameSite: nginx applies only
    #: the first proxy_cookie_flags line matching a cookie, so every finding's line for such a cookie carries
    #: samesite= too, and the lines of one cookie's findings agree whichever comes first
    lacking_samesite: tuple[str, ...] = ()


Action = SetHeader | RemoveHeaders | CookieAttributes


class Unwritable(ValueError):
    """A writer cannot write this action safely for its server (snippets.py writes a sentence instead)."""


# A header named in a fix: a hyphenated token right before ": " ("... send: Strict-Transport-Security: max-age=").
# Capitalised, as the rule table writes them: a CSP source such as "chrome-extension: " is lower case.
_NAMED_HEADER = re.compile(r"(?<![\w-])([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+):\s+")
_HEADER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,63}$")
# A trailing remark the rule table appends to a value: "require-corp (or credentialless if ...)".
_REMARK = re.compile(r"\s+\([^()]*\)\s*$")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")
# RFC 6265 cookie-name token, minus the characters configuration languages read specially ($ { } etc.).
_COOKIE_NAME = re.compile(r"^[A-Za-z0-9!#%&'*+.^_`|~-]{1,128}$")


def clean(text: str) -> str:
    """One line with no control characters or backslashes, whitespace collapsed."""
    return " ".join(_UNSAFE.sub(" ", text).split())


def header_from_fix(fix: str, subject: str | None) -> tuple[str, str] | None:
    """(header name, value) a fix recommends: the text after "Name: " (the subject's own name first), or
    the whole fix when it names no header (spec 2.3: a header object's `fix` is the recommended value, as
    the derived CSP is: "default-src 'self'; img-src 'self' data:")."""
    text = clean(fix)
    found: tuple[str, int] | None = None
    if subject:
        at = text.lower().find(subject.lower() + ": ")
        if at >= 0 and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "-")):
            found = (subject, at + len(subject) + 2)
    if found is None and (match := _NAMED_HEADER.search(text)):
        found = (match.group(1), match.end())
    if found is not None:
        name, value = found[0], text[found[1] :]
    elif subject:
        name, value = subject, text
    else:
        return None
    value = _REMARK.sub("", value).strip()
    return (name, value) if value and _HEADER_NAME.match(name) else None


def header_action(remedy: Remedy, fix: str, subject: str | None) -> SetHeader | None:
    """The header a `header` remedy sets. A header object's own Content-Security-Policy is deployed as
    Content-Security-Policy-Report-Only first: the policy is a proposal until reports show it breaks nothing."""
    if remedy.header and remedy.value:
        return SetHeader(remedy.header, clean(remedy.value), remedy.mode)
    found = header_from_fix(fix, remedy.header or subject)
    if found is None:
        return None
    name, value = found
    canonical = subject if subject and name.lower() == subject.lower() else name
    if subject and canonical == CSP and subject == CSP and not remedy.enforce:
        return SetHeader(CSP_REPORT_ONLY, value, "set")
    # A header other than the object's own (X-Frame-Options fixed by CSP frame-ancestors) is sent beside
    # whatever the site already sends: a second CSP only adds restrictions, it never lifts one.
    mode = remedy.mode if canonical == subject or subject is None else "add"
    return SetHeader(canonical, value, mode)


def cookie_names(subjects: tuple[str, ...]) -> tuple[str, ...]:
    """The subjects that are cookie names safe to write into configuration (the rest are left out)."""
    return tuple(name for name in subjects if _COOKIE_NAME.match(name))


def header_names(subjects: tuple[str, ...], default: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(name for name in subjects if _HEADER_NAME.match(name))
    return names or default


def action_for(
    remedy: Remedy, fix: str, subject: str | None, subjects: tuple[str, ...], lacking_samesite: tuple[str, ...] = ()
) -> Action | None:
    """The action of a remedy written by code, or None when the fix names nothing a server can set.
    Unwritable: a cookie finding whose cookies all have names configuration cannot hold (an empty list of
    cookies would mean every cookie). `lacking_samesite`: the subjects the report shows without SameSite."""
    if remedy.kind == "header":
        return header_action(remedy, fix, subject)
    if remedy.kind in ("remove_header", "hide_versions"):
        names = remedy.headers if remedy.kind == "remove_header" else header_names(subjects, remedy.headers)
        return RemoveHeaders(names)
    if remedy.kind == "cookie":
        names = cookie_names(subjects)
        if subjects and not names:  # the finding's cookies are all unwritable: not a fix for every cookie
            raise Unwritable(", ".join(subjects))
        without_samesite = frozenset(lacking_samesite)  # a set: `in` on the tuple was quadratic in a cookie flood
        lacking = tuple(name for name in names if name in without_samesite)
        return CookieAttributes(names, remedy.attributes, remedy.outcome.endswith("no_samesite"), lacking)
    return None
