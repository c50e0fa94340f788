"""security.txt (RFC 9116): can a researcher find out how to report a vulnerability?

The fetch layer asks for `https://<final host>/.well-known/security.txt` and, when no
security.txt is there, falls back to the legacy `/security.txt` (RFC 9116 §3 allows it
as a fallback); the legacy file is graded only when it is one. Many sites answer
every path with an HTML page and status 200; that is not a security.txt, and neither
is a text page that happens to contain "Contact:". A file is taken as a security.txt
only when its body is not an HTML page and its lines follow the field syntax of §4,
whatever its Content-Type: a real file served as text/html is a security.txt served
with the wrong Content-Type (records/security_txt.py decides, for the fetch layer too).

Then the RFC's rules: served over HTTPS (§3) as `text/plain` (§3 also requires `charset=utf-8`;
its absence is a note, not a fault: researchers read the file all the same), at least one
`Contact` (§2.5.3, a URI: mailto:, tel:, https: or another scheme, never http:), exactly
one `Expires` as an RFC 3339 date-time in the future (§2.5.5, less than a year ahead
recommended), and when `Canonical` is present it should list the URL the file came
from (§2.5.2). OpenPGP cleartext signatures (§2.3) are accepted; they are not
verified, since the scanner has no trusted key for the site. Unknown fields are
ignored (§2.4).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from ..findings import CheckResult, Finding
from ..records.html import split_url
from ..records.security_txt import KNOWN_FIELDS, not_security_txt, parse_rfc3339, read_security_txt
from ..snapshot import HttpResponse, SiteSnapshot
from ._shown import shown, shown_lists

SECTION = "security_txt"

_LIST_FIELDS = ("contact", "canonical", "encryption", "policy", "acknowledgments", "hiring", "csaf")
_RECOMMENDED_MAX_LIFETIME = timedelta(days=366)  # §2.5.5: "less than a year into the future"


def _empty_details(url: str | None, response: HttpResponse | None) -> dict[str, Any]:
    return {
        "found": False,
        "url": shown(url) if url is not None else None,
        "status_code": response.status_code if response else None,
        "content_type": shown(response.content_type) if response and response.content_type else None,
        "legacy_location": False,
        "signed": False,
        "contacts": [],
        "expires": None,
        "canonical": [],
        "encryption": [],
        "policy": [],
        "acknowledgments": [],
        "hiring": [],
        "preferred_languages": [],
    }


#: RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
_URI_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*")


def _contact_problem(uri: str) -> str | None:
    """§2.5.3: a URI (RFC 3986); e-mail and telephone as mailto: and tel:, web URIs MUST be https. Bare e-mail
    addresses are a frequent slip."""
    scheme, colon, rest = uri.partition(":")
    scheme = scheme.lower()
    if not colon:
        if "@" in uri:
            return f"{uri!r} is an e-mail address without mailto:"
        return f"{uri!r} is not a URI"
    if scheme == "mailto":
        return None if "@" in rest else f"{uri!r} has no e-mail address"
    if scheme == "tel":
        return None if any(c.isdigit() for c in rest) else f"{uri!r} has no telephone number"
    if scheme == "https":
        parts = split_url(uri)
        if parts is None:
            return f"{uri!r} is not a valid URL"
        return None if parts.hostname else f"{uri!r} has no host"
    if scheme == "http":
        return f"{uri!r} uses http:// (web contact URIs must use https://)"
    # Any other URI is allowed (an xmpp: or a matrix: address, say): RFC 3986's scheme, then no whitespace.
    if _URI_SCHEME.fullmatch(scheme) and rest and not any(c.isspace() for c in rest):
        return None
    return f"{uri!r} is not a URI (mailto:, tel: and https: are the usual forms)"


def _normalise_url(url: str) -> str:
    parts = split_url(url.strip())
    if parts is None:
        return url.strip()  # matches no URL a file is fetched from
    host = (parts.hostname or "").lower()
    port = parts.port
    netloc = host if port in (None, {"http": 80, "https": 443}.get(parts.scheme.lower())) else f"{host}:{port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}"


def check_security_txt(snapshot: SiteSnapshot) -> CheckResult:
    chain = snapshot.security_txt
    if chain is None:
        return CheckResult(SECTION, (Finding("check.error", note="security.txt was not requested"),))
    final = chain.final
    if final is None:
        reason = f"{chain.failure.kind}: {chain.failure.message}" if chain.failure else "no response"
        note = f"security.txt could not be fetched from {chain.start_url} ({reason})"
        return CheckResult(SECTION, (Finding("check.error", note=note),), _empty_details(chain.start_url, None))

    details = _empty_details(final.url, final)
    if final.status_code >= 500 or final.status_code == 429:
        # A server error or rate limiting (RFC 6585 §4) says nothing about whether the file exists.
        note = f"security.txt could not be checked: {chain.start_url} answered HTTP {final.status_code}"
        return CheckResult(SECTION, (Finding("check.error", note=note),), details)
    if final.status_code != 200:
        note = f"{chain.start_url} answered HTTP {final.status_code}"
        return CheckResult(SECTION, (Finding("security_txt.missing", note=note),), details)
    parsed = read_security_txt(final)
    rejection = not_security_txt(final, parsed)
    if rejection is not None:
        note = f"{final.url} answered HTTP 200 but {rejection}, not a security.txt file"
        return CheckResult(SECTION, (Finding("security_txt.missing", note=note),), details)

    findings: list[Finding] = []
    invalid: list[str] = []
    lint: list[str] = []
    now = snapshot.fetched_at
    url_parts = urlsplit(final.url)

    # §3: HTTPS only, text/plain.
    if url_parts.scheme != "https":
        invalid.append(f"it was served over plain HTTP ({final.url}); RFC 9116 requires HTTPS")
    if final.content_type != "text/plain":
        invalid.append(f"Content-Type is {final.content_type or 'missing'}, not text/plain")
    elif (final.charset or "").lower() not in ("utf-8", "utf8"):
        lint.append(
            f"RFC 9116 requires Content-Type `text/plain; charset=utf-8` (charset is {final.charset or 'not given'})"
        )

    # §2.5.3: one or more Contact fields.
    contacts = parsed.values("contact")
    bad_contacts = [p for p in (_contact_problem(c) for c in contacts) if p]
    if not contacts:
        invalid.append("there is no Contact field")
    elif len(bad_contacts) == len(contacts):
        invalid.append("no Contact is usable: " + "; ".join(bad_contacts))
    elif bad_contacts:
        lint.extend(bad_contacts)

    # §2.5.5: exactly one Expires, an RFC 3339 date-time.
    expires_values = parsed.values("expires")
    expires = parse_rfc3339(expires_values[0]) if expires_values else None
    if not expires_values:
        invalid.append("there is no Expires field")
    elif len(expires_values) > 1:
        invalid.append(f"Expires appears {len(expires_values)} times; exactly one is allowed")
    if expires_values and expires is None:
        invalid.append(f"Expires {expires_values[0]!r} is not an RFC 3339 date-time such as 2026-12-31T23:00:00Z")

    # §4: at most one Preferred-Languages; lines must be fields or comments.
    languages = parsed.values("preferred-languages")
    if len(languages) > 1:
        lint.append("Preferred-Languages appears more than once (at most one is allowed)")
    if parsed.invalid_lines:
        numbers = ", ".join(str(n) for n in parsed.invalid_lines[:10])
        lint.append(f"line(s) {numbers} are neither a `Field: value` line nor a # comment")
    unspaced = [f.name for f in parsed.fields if not f.spaced and f.name.lower() in KNOWN_FIELDS]
    if unspaced:
        lint.append("the colon after " + ", ".join(sorted(set(unspaced))) + " should be followed by one space")
    lint.extend(parsed.problems)
    if final.body_truncated:
        lint.append("the file is larger than the scanner reads; only its beginning was checked")

    # §3: where it came from. Legacy is where the scanner had to ask; /.well-known/security.txt redirecting to
    # /security.txt is the well-known location serving the file, which §3 allows (redirects are followed).
    legacy = urlsplit(chain.start_url).path == "/security.txt"
    if url_parts.hostname and url_parts.hostname.lower() != snapshot.final_target_host:
        lint.append(f"the request was redirected to another host ({url_parts.hostname}); researchers may distrust it")

    if invalid:
        for problem in invalid:
            findings.append(Finding("security_txt.invalid", note=problem))
    elif expires is not None and expires <= now:
        findings.append(Finding("security_txt.expired", note=f"Expires {expires_values[0]} is in the past"))
    else:
        findings.append(Finding("security_txt.present", note=final.url))
    if expires is not None and expires - now > _RECOMMENDED_MAX_LIFETIME:
        note = f"Expires {expires_values[0]} is more than a year away"
        findings.append(Finding("security_txt.expires_far", note=note))
    if legacy:
        findings.append(Finding("security_txt.legacy_location", note=f"found at {final.url}"))
    canonical = parsed.values("canonical")
    if canonical and _normalise_url(final.url) not in {_normalise_url(c) for c in canonical}:
        note = f"fetched from {final.url}, Canonical lists " + ", ".join(canonical)
        # Graded only on an otherwise sound file, so a broken file never costs more than none.
        graded = findings[0].outcome == "security_txt.present"
        findings.append(Finding("security_txt.canonical_mismatch" if graded else "security_txt.lint", note=note))
    for problem in lint:
        findings.append(Finding("security_txt.lint", note=problem))

    # Each list of values shows its first within findings.LIST_BUDGET characters, `not_listed` counting the rest:
    # a 64 KiB file of one field, in emoji (each a 12-character escape in the stored JSON), made a 190 KB section.
    lists = {
        "contacts": contacts,
        "preferred_languages": [tag.strip() for value in languages[:1] for tag in value.split(",") if tag.strip()],
        **{name: parsed.values(name) for name in _LIST_FIELDS if name != "contact"},
    }
    details.update(
        {
            "found": True,
            "legacy_location": legacy,
            "signed": parsed.signed,
            "expires": expires.isoformat().replace("+00:00", "Z") if expires else None,
            **shown_lists(lists),
        }
    )
    return CheckResult(SECTION, tuple(findings), details)
