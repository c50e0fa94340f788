"""Blocked is not graded: a bot challenge or WAF block page is reported as such, not as the site.

When a CDN or WAF answers the scanner with its challenge or block page (markers in
data/block_pages.toml), the headers, cookies, CORS answers and content the scanner received are
the block page's, and grading them would describe the vendor's page, not the site. So the checks
that read the page report "not checked" and say by what the scan was blocked; `page_analysis`
carries the one `scan.blocked` finding with how to let the scanner through. TLS, DNS and the
HTTP -> HTTPS upgrade are still graded: those were really observed.

A final response with another 4xx/5xx status is the site's real answer: it is graded as received,
and `page_analysis` names the status plainly (`scan.error_status`), never as an unreachable site.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..findings import Check, CheckResult, Finding
from ..parsed_cache import cached
from ..snapshot import FetchChain, HttpResponse, SiteSnapshot

_DATA = Path(__file__).resolve().parent.parent / "data" / "block_pages.toml"
_DEFAULT_STATUSES = (403, 429, 503)


@dataclass(frozen=True)
class _Signature:
    kind: str
    header: str | None = None
    value: str | None = None
    body: tuple[bytes, ...] = ()

    def matches(self, response: HttpResponse) -> str | None:
        """The evidence (what matched, for the note) when every condition holds, else None."""
        evidence: list[str] = []
        if self.header is not None:
            values = response.headers.get_all(self.header)
            if not values:
                return None
            if self.value is not None:
                found = [v for v in values if self.value.lower() in v.lower()]
                if not found:
                    return None
                values = tuple(found)
            evidence.append(f"{self.header}: {values[0]}")
        for text in self.body:
            if text not in response.body:
                return None
        if self.body:
            evidence.append(" and ".join(repr(t.decode()) for t in self.body) + " in the page")
        return ", ".join(evidence)


@dataclass(frozen=True)
class _Vendor:
    name: str
    allow: str
    statuses: tuple[int, ...]
    signatures: tuple[_Signature, ...]


@dataclass(frozen=True)
class Block:
    """Who blocked the scanner, how, and the response that shows it."""

    by: str
    kind: str  # "bot challenge" | "firewall block"
    evidence: str
    allow: str
    response: HttpResponse

    def sentence(self) -> str:
        return (
            f"{self.by} answered {self.response.url} with a {self.kind} (HTTP {self.response.status_code}; "
            f"{self.evidence}) instead of the site's page"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "kind": self.kind,
            "status_code": self.response.status_code,
            "url": self.response.url,
            "evidence": self.evidence,
        }


def _parse_block_pages() -> dict[str, Any]:
    import tomllib

    return tomllib.loads(_DATA.read_text("utf-8"))


@lru_cache(maxsize=1)
def _vendors() -> tuple[_Vendor, ...]:
    data = cached("block-pages", [_DATA], _parse_block_pages)  # every scan reads it: parsed once per install
    return tuple(
        _Vendor(
            name=row["name"],
            allow=" ".join(row["allow"].split()),
            statuses=tuple(row.get("statuses", _DEFAULT_STATUSES)),
            signatures=tuple(
                _Signature(
                    kind=sig["kind"],
                    header=sig.get("header"),
                    value=sig.get("value"),
                    body=tuple(text.encode() for text in sig.get("body", ())),
                )
                for sig in row["signatures"]
            ),
        )
        for row in data["vendors"]
    )


def identify_block(response: HttpResponse | None) -> Block | None:
    """The CDN or WAF whose challenge or block page `response` is, or None when it is not one."""
    if response is None:
        return None
    for vendor in _vendors():
        if response.status_code not in vendor.statuses:
            continue
        for signature in vendor.signatures:
            evidence = signature.matches(response)
            if evidence is not None:
                return Block(vendor.name, signature.kind, evidence, vendor.allow, response)
    return None


def not_checked(block: Block) -> Finding:
    """The finding of a section whose data came from a block page."""
    return Finding("check.error", note=f"not checked: {block.sentence()}")


def _main(snapshot: SiteSnapshot) -> FetchChain | None:
    return snapshot.main


def security_txt_chain(snapshot: SiteSnapshot) -> FetchChain | None:
    """security.txt is judged on its own fetch: a block there leaves it "not checked"."""
    return snapshot.security_txt


def unless_blocked(section: str, check: Check, *, source: Callable[[SiteSnapshot], FetchChain | None] = _main) -> Check:
    """`check`, unless the response it reads (the main page by default) is a block page."""

    def gated(snapshot: SiteSnapshot) -> CheckResult:
        chain = source(snapshot)
        block = identify_block(chain.final if chain is not None else None)
        if block is None:
            return check(snapshot)
        return CheckResult(section, (not_checked(block),), {"blocked": block.as_json()})

    gated.__name__ = f"unless_blocked_{getattr(check, '__name__', section)}"
    return gated


# What an error status means, for the scan.error_status note (RFC 9110 section 15 unless cited).
_MEANINGS = {
    400: "the server rejected the scanner's request as malformed",
    401: "the page requires authentication",
    403: "the server refuses to serve this page to the scanner",
    404: "there is no page at this address",
    405: "the server does not accept GET requests here",
    406: (
        "the server has no version of the page matching the request's Accept headers "
        "(some firewalls, such as ModSecurity setups, also answer 406 to requests they refuse)"
    ),
    410: "the page has been removed for good",
    429: "the server is rate-limiting the scanner (RFC 6585 section 4)",
    451: "the server withholds the page for legal reasons, such as a court order or a regional restriction (RFC 7725)",
    500: "the server failed while building the page",
    502: "a proxy or CDN in front of the site got an invalid answer from the server behind it",
    503: "the server is temporarily unable to serve the page (overload or maintenance)",
    504: "a proxy or CDN in front of the site got no answer in time from the server behind it",
}


def _status_note(response: HttpResponse, certificate_requested: bool = False) -> str:
    """`certificate_requested`: the TLS handshake of the page's address asked for a client certificate."""
    code = response.status_code
    try:
        phrase = HTTPStatus(code).phrase
    except ValueError:
        phrase = "Client Error" if code < 500 else "Server Error"
    meaning = _MEANINGS.get(
        code,
        "the server reports a problem with the request" if code < 500 else "the server reports an error of its own",
    )
    if certificate_requested and code < 500:
        # nginx's `ssl_verify_client on` completes the handshake without a certificate and answers 400 (its 496,
        # "No required SSL certificate was sent"); others answer 401 or 403
        meaning = (
            "the server asked for a client certificate during the TLS handshake (mutual TLS), and the scanner, like "
            "a visitor without one, sent none: this is likely its refusal"
            + (" (nginx answers 400 when ssl_verify_client on finds no certificate)" if code == 400 else "")
        )
    return (
        f"{response.url} answered {code} {phrase}: {meaning}. The server is reachable; the findings describe "
        "this error response"
    )


def _served_by(response: HttpResponse, host: str, port: int) -> bool:
    """Whether `response` came over HTTPS from `host`:`port`."""
    url = urlsplit(response.url)
    return url.scheme == "https" and (url.hostname, url.port or 443) == (host, port)


def with_page_access(check: Check) -> Check:
    """The `page_analysis` check, which also says when the page was a block page or an error status."""

    def page_access(snapshot: SiteSnapshot) -> CheckResult:
        final = snapshot.main.final
        block = identify_block(final)
        if block is not None:
            # The grade is capped (rules/general.toml explains why): nothing else is added to the
            # section, since analysing the vendor's page would describe the vendor.
            finding = Finding("scan.blocked", note=block.sentence(), fix_vars={"allow": block.allow})
            return CheckResult("page_analysis", (finding,), {"blocked": block.as_json()})
        result = check(snapshot)
        if final is None or final.status_code < 400:
            return result
        tls = snapshot.tls
        requested = tls is not None and tls.client_certificate_requested and _served_by(final, tls.host, tls.port)
        finding = Finding("scan.error_status", note=_status_note(final, requested))
        return CheckResult(result.section, (*result.findings, finding), result.details)

    return page_access
