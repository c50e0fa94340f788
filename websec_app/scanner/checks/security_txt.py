"""security.txt (RFC 9116): can a researcher find out how to report a vulnerability?

The fetch layer asks for `https://<final host>/.well-known/security.txt` and, when no
security.txt is there, falls back to the legacy `/security.txt` (RFC 9116 §3 allows it
as a fallback); the legacy file is graded only when it is one. Many sites answer
every path with an HTML page and status 200; that is not a security.txt, and neither
is a text page that happens to contain "Contact:". A file is taken as a security.txt
only when its body is not an HTML page and its lines follow the field syntax of §4,
whatever its Content-Type: a real file served as text/html is a security.txt served
with the wrong Content-Type (records/security_txt.py decides, for the fetch layer too).

Then the RFC's rules: served over HTTPS (§3; a site reached over http only has its file asked there when
its https origin does not answer, and one found there is invalid) as `text/plain` with `charset=utf-8` (§3: a
missing charset is a note, since readers take UTF-8 all the same, another charset a fault), at least one
`Contact` (§2.5.3, a URI: mailto:, tel:, https: or another scheme, never http:), exactly
one `Expires` as an RFC 3339 date-time in the future (§2.5.5, less than a calendar year ahead
recommended), and when `Canonical` is present it should list the URL the file was asked at or
redirected to (§2.5.2). The other fields naming a resource (Acknowledgments, Canonical, CSAF, Encryption,
Hiring, Policy) are URIs, web ones https:// (§2.5), and Preferred-Languages lists RFC 5646 language tags
(§2.5.8): notes. OpenPGP cleartext signatures (§2.3) are accepted; they are not
verified, since the scanner has no trusted key for the site, but a signature block that is no ASCII armor, text
around the signed message and a signed file without Canonical (§2.3 recommends one) are noted. A CSAF field should
point to one provider-metadata.json (CSAF 2.0 7.1.8): notes. Unknown fields are ignored (§2.4).

A file larger than the fetch reads (`MAX_FILE_BYTES`, 64 KiB), or cut by its time budget, is graded on the lines
read (records/security_txt.py leaves the cut line out): a Contact or Expires not among them may follow the cut, so
it is not reported missing, nor a Canonical listing the URL, nor a usable Contact; a note says the file was not read
whole, and, past the size limit, that a file so large is a problem of its own (RFC 9116 sets no limit, but
researchers and their tools may not read it whole either).
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..findings import CheckResult, Finding
from ..records.html import split_url
from ..records.security_txt import KNOWN_FIELDS, MAX_FILE_BYTES, not_security_txt, parse_rfc3339, read_security_txt
from ..snapshot import HttpResponse, SiteSnapshot
from ._shown import shown, shown_lists

SECTION = "security_txt"

_LIST_FIELDS = ("contact", "canonical", "encryption", "policy", "acknowledgments", "hiring", "csaf")
#: The fields whose value is a URI, and a web URI "MUST begin with https://" (RFC 9116 2.5.1, 2.5.2, 2.5.4, 2.5.6,
#: 2.5.7; CSAF 2.0 7.1.8 for CSAF). Contact has its own rules (`_contact_problem`).
_URI_FIELDS = {
    "acknowledgments": "Acknowledgments",
    "canonical": "Canonical",
    "csaf": "CSAF",
    "encryption": "Encryption",
    "hiring": "Hiring",
    "policy": "Policy",
}
_MAX_URI_PROBLEMS = 10
# RFC 5646 2.1 Language-Tag, read for its shape: a primary subtag of 2-3 letters (2.2.1: 4 letters are reserved and
# 5-8 letters only for future registration, so no such subtag is valid, 2.2.9), or the "x" of a private-use tag,
# the "i" of a grandfathered one; then subtags of 1-8 letters or digits. "en_US" and "English" are caught, not
# whether each subtag is registered.
_LANGUAGE_TAG = re.compile(r"(?:[A-Za-z]{2,3}|[XxIi])(?:-[A-Za-z0-9]{1,8})*+")
#: CSAF 2.0 7.1.8 (requirement 8): a CSAF field points to the provider's provider-metadata.json (requirement 7)
_CSAF_FILE = "/provider-metadata.json"


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


def _uri_problem(name: str, value: str) -> str | None:
    """Why a URI field's value is not a URI, or not an https:// one where it is a web URI (RFC 9116 2.5)."""
    field = _URI_FIELDS[name]
    scheme, colon, rest = value.partition(":")
    if "BEGIN PGP" in value and name == "encryption":
        return "Encryption holds a key: it must be a URI where the key can be retrieved (RFC 9116 2.5.4)"
    if not colon or not _URI_SCHEME.fullmatch(scheme.lower()) or not rest or any(c.isspace() for c in value):
        return f"{field} {value!r} is not a URI (RFC 9116 2.5)"
    if scheme.lower() == "http":
        return f"{field} {value!r} uses http:// (web URIs must use https://, RFC 9116 2.5)"
    if scheme.lower() == "https" and ((parts := split_url(value)) is None or not parts.hostname):
        return f"{field} {value!r} is not a valid URL"
    return None


def _language_problem(value: str) -> str | None:
    """§2.5.8: one or more RFC 5646 language tags, separated by commas."""
    tags = [tag.strip(" \t") for tag in value.split(",")]
    bad = [tag for tag in tags if not _LANGUAGE_TAG.fullmatch(tag)]
    if not bad:
        return None
    shown_tag = "an empty entry" if not bad[0] else repr(bad[0])
    return f"Preferred-Languages {value!r}: {shown_tag} is not a language tag (RFC 5646, e.g. en or pt-BR)"


def _a_year_after(moment: datetime) -> datetime:
    """The same moment one calendar year on (29 February: the 28th), the end of time past year 9999."""
    try:
        return moment.replace(year=moment.year + 1)
    except ValueError:
        if moment.year == datetime.max.year:
            return datetime.max.replace(tzinfo=moment.tzinfo)
        return moment.replace(year=moment.year + 1, day=28)


def _normalise_url(url: str) -> str:
    parts = split_url(url.strip())
    if parts is None:
        return url.strip()  # matches no URL a file is fetched from
    host = (parts.hostname or "").lower()
    port = parts.port
    netloc = host if port in (None, {"http": 80, "https": 443}.get(parts.scheme.lower())) else f"{host}:{port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}"


def _cut_note(response: HttpResponse, not_read: list[str]) -> str:
    """The file was not read whole: which required fields are not in the part read, and, for a file larger than
    the fetch reads, that its size is a problem of its own."""
    too_large = len(response.body) >= MAX_FILE_BYTES
    if too_large:
        note = f"the file is larger than the {MAX_FILE_BYTES // 1024} KiB the scanner reads"
    else:
        note = f"the file was not read whole ({response.body_note or 'the body was cut'})"
    note += ": only its beginning was checked"
    if not_read:
        several = len(not_read) > 1
        note += (
            f"; {' and '.join(not_read)} {'are' if several else 'is'} not in the part read, so whether the file "
            f"has {'them' if several else 'it'} is not known"
        )
    if too_large:
        note += (
            ". RFC 9116 sets no size limit, but researchers and their tools may not read a file this large whole "
            "either: keep it to its fields and a few comments"
        )
    return note


def check_security_txt(snapshot: SiteSnapshot) -> CheckResult:
    result = _checked(snapshot)
    chain = snapshot.security_txt
    asked = urlsplit(chain.start_url) if chain is not None else None
    if asked is not None and asked.scheme == "https" and asked.port not in (None, 443):
        # RFC 9116 §3: the file is at the origin's /.well-known/, port included: the fixes' https://{host}/ would name
        # the site's port 443 (the report's {host} has no port)
        return dataclasses.replace(result, fix_context={"host": asked.netloc})
    return result


def _checked(snapshot: SiteSnapshot) -> CheckResult:
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
    elif final.charset is None:  # readers take UTF-8 all the same (internet.nl's validator too): a note
        lint.append("RFC 9116 requires Content-Type `text/plain; charset=utf-8` (charset is not given)")
    elif final.charset.lower() not in ("utf-8", "utf8"):
        # §3 "MUST": a browser, and a validator, read the file in the charset named, not as UTF-8
        invalid.append(f"Content-Type names charset={shown(final.charset, 100)}; RFC 9116 requires charset=utf-8")

    # §2.5.3: one or more Contact fields. In a file cut short, a (usable) one may follow the cut.
    contacts = parsed.values("contact")
    bad_contacts = [p for p in (_contact_problem(c) for c in contacts) if p]
    if not contacts:
        if not parsed.cut:
            invalid.append("there is no Contact field")
    elif len(bad_contacts) == len(contacts):
        if parsed.cut:
            lint.append("no Contact in the part read is usable: " + "; ".join(bad_contacts))
        else:
            invalid.append("no Contact is usable: " + "; ".join(bad_contacts))
    elif bad_contacts:
        lint.extend(bad_contacts)

    # §2.5.5: exactly one Expires, an RFC 3339 date-time.
    expires_values = parsed.values("expires")
    expires = parse_rfc3339(expires_values[0]) if expires_values else None
    if not expires_values:
        if not parsed.cut:
            invalid.append("there is no Expires field")
    elif len(expires_values) > 1:
        invalid.append(f"Expires appears {len(expires_values)} times; exactly one is allowed")
    if expires_values and expires is None:
        invalid.append(f"Expires {expires_values[0]!r} is not an RFC 3339 date-time such as 2026-12-31T23:00:00Z")
    if invalid and expires is not None and expires <= now:  # said with the other problems, not left for later
        invalid.append(f"Expires {expires_values[0]} is in the past")

    # §4: at most one Preferred-Languages; lines must be fields or comments.
    languages = parsed.values("preferred-languages")
    if len(languages) > 1:
        lint.append("Preferred-Languages appears more than once (at most one is allowed)")
    lint.extend(p for p in (_language_problem(value) for value in languages[:1]) if p)
    # §2.5: the other fields naming a resource are URIs, web ones https://; a 64 KiB file holds thousands of them
    uri_problems = [
        p for f in parsed.fields if f.name.lower() in _URI_FIELDS if (p := _uri_problem(f.name.lower(), f.value))
    ]
    lint.extend(uri_problems[:_MAX_URI_PROBLEMS])
    if len(uri_problems) > _MAX_URI_PROBLEMS:
        lint.append(f"and {len(uri_problems) - _MAX_URI_PROBLEMS:,} more field values that are not https:// URIs")
    csaf = parsed.values("csaf")
    not_metadata = [v for v in csaf if (parts := split_url(v)) is None or not parts.path.endswith(_CSAF_FILE)]
    lint.extend(
        f"CSAF {shown(v, 200)!r} does not point to a provider-metadata.json (CSAF 2.0 7.1.8)" for v in not_metadata[:3]
    )
    if len(csaf) > 1:  # CSAF 2.0 7.1.8: several "SHOULD NOT be done and removed as soon as possible"
        lint.append(f"CSAF appears {len(csaf)} times: CSAF 2.0 7.1.8 asks for one provider-metadata.json")
    if parsed.signed and not parsed.cut and not parsed.values("canonical"):
        # §2.3: with a signature, Canonical is RECOMMENDED, so the signature also vouches for where the file belongs
        lint.append("the file is signed but has no Canonical field (RFC 9116 2.3 recommends one in a signed file)")
    if parsed.invalid_lines:
        numbers = ", ".join(str(n) for n in parsed.invalid_lines[:10])
        lint.append(f"line(s) {numbers} are neither a `Field: value` line nor a # comment")
    unspaced = [f.name for f in parsed.fields if not f.spaced and f.name.lower() in KNOWN_FIELDS]
    if unspaced:
        lint.append("the colon after " + ", ".join(sorted(set(unspaced))) + " should be followed by one space")
    lint.extend(parsed.problems)
    if parsed.cut:
        not_read = [name for name, values in (("Contact", contacts), ("Expires", expires_values)) if not values]
        lint.append(_cut_note(final, not_read))

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
    if expires is not None and expires > _a_year_after(now):  # §2.5.5: "less than a year into the future"
        note = f"Expires {expires_values[0]} is more than a year away"
        findings.append(Finding("security_txt.expires_far", note=note))
    if legacy:
        findings.append(Finding("security_txt.legacy_location", note=f"found at {final.url}"))
    canonical = parsed.values("canonical")
    # §2.5.2: the URI used to retrieve the file: the one asked, or where its redirects led (as internet.nl's
    # validator takes it: "either the first or last web URI of the redirect chain must match")
    retrieved = {_normalise_url(chain.start_url), _normalise_url(final.url)}
    if canonical and not retrieved & {_normalise_url(c) for c in canonical}:
        asked = f" (asked at {chain.start_url})" if final.url != chain.start_url else ""
        note = f"fetched from {final.url}{asked}, Canonical lists " + ", ".join(canonical)
        # Graded only on an otherwise sound file, so a broken file never costs more than none, and read whole: a
        # Canonical listing the URL may follow the cut
        graded = findings[0].outcome == "security_txt.present" and not parsed.cut
        if parsed.cut:
            note += " (in the part read)"
        # the fix names the URL it was fetched from (it wrote https://{host}/..., wrong for a file on another port or
        # at the legacy location, and the very URL Canonical already listed for a site on a port of its own)
        fix_vars = {"security_txt_url": shown(final.url)}
        outcome = "security_txt.canonical_mismatch" if graded else "security_txt.lint"
        findings.append(Finding(outcome, note=note, fix_vars=fix_vars))
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
