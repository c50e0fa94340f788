"""Page analysis: mixed content, subresource integrity, `<base href>` and third-party origins.

Only the final response is read, and only when it is HTML. Every URL is resolved the
way the browser would: against the first `<base href>` (HTML §4.2.3) from where it
stands on (a form's action wherever the form is), against the page URL before it.
Elements inside `<noscript>` and `<template>` are skipped: with scripting on, browsers
do not fetch them.

- Mixed content (W3C Mixed Content §3, §4.3): on an HTTPS page, `http://` subresources.
  Images, audio and video are "upgradeable" (passive): browsers now upgrade them and
  drop them if that fails; not an image fetched for `srcset` or `<picture>` (initiator
  "imageset"), which is blocked. Everything else (scripts, styles, frames, plugins, fonts...)
  is "blockable" (active): it could rewrite the page, so browsers block it. A form
  posting to `http://` sends its fields in clear. `upgrade-insecure-requests` in an
  enforced CSP makes browsers fetch them over HTTPS: all of them for a header, those
  after it for a `<meta>`.
  `http://localhost` and `http://127.0.0.1` are potentially trustworthy, never mixed.
- Subresource Integrity (W3C SRI §3): only scripts and stylesheets from another site
  (another registrable domain) need `integrity`; a CDN on the site's own domain is
  under the same control. An integrity value with no hash browsers read (lowercase sha256/384/512,
  a base64 digest: `_sri_hashes`) is ignored (the resource loads unchecked, §3.3.3); a hash of the
  wrong length never matches and blocks the load; a cross-origin resource with integrity but
  no `crossorigin` attribute cannot be verified and is never loaded (§3.3.5), except a
  module script, always fetched in CORS mode (HTML §8.1.4.2).
"""

from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import SplitResult, urlsplit

from ..findings import LIST_LIMIT, CheckResult, Finding
from ..records.csp import parse_header_policies, parse_meta_policies, upgrades_insecure_requests
from ..records.html import (
    Element,
    HtmlPage,
    base_element,
    base_url,
    clean_url,
    is_html,
    join_url,
    link_rel,
    meta_elements_of,
    origin_of,
    parse_page,
    raw_resources,
    script_kind,
    split_url,
)
from ..records.origins import trustworthy_host
from ..registrable import registrable_domain
from ..snapshot import HttpResponse, SiteSnapshot
from ._shown import first_fitting, shown, shown_lists

SECTION = "page_analysis"

# Mixed Content §4.3: only these request destinations are "upgradeable" (passive); an image fetched for srcset or
# <picture> ("imageset", records/html.raw_resources) is not.
_PASSIVE_TYPES = frozenset({"image", "icon", "media"})
# SRI §3.3.3: the hash functions browsers support, with their digest length in bytes.
_SRI_DIGESTS = {"sha256": 32, "sha384": 48, "sha512": 64}
_SRI_SEPARATORS = re.compile(r"[ \t\n\v\f\r]+")
_SRI_DIGEST_CHARACTERS = re.compile(r"[A-Za-z0-9+/=_-]+")
# Third-party scripts that are living documents: the provider changes them without a new
# URL, so an integrity hash would break the site. Stripe: "always load Stripe.js directly
# from https://js.stripe.com" (docs.stripe.com/js); Google Fonts CSS varies per browser.
_SRI_NOT_APPLICABLE = (
    "js.stripe.com",
    "fonts.googleapis.com",
    "www.googletagmanager.com",
    "www.google-analytics.com",
    "www.google.com/recaptcha",
    "www.gstatic.com/recaptcha",
    "challenges.cloudflare.com",
    "connect.facebook.net",
    "maps.googleapis.com",
    "apis.google.com",
    "accounts.google.com",
    "www.paypal.com/sdk",
    "checkout.razorpay.com",
)


@dataclass(frozen=True)
class Resource:
    url: str  # absolute
    kind: str  # script, stylesheet, image, imageset, icon, media, frame, object, font, manifest, track, form, preload
    element: Element
    parts: SplitResult  # `url` split once: a page may list thousands of resources (issue 12)

    @cached_property
    def origin(self) -> str:
        return origin_of(self.parts)

    @cached_property
    def site(self) -> str:
        return registrable_domain(self.parts.hostname or "")


def _upgraded_from(response: HttpResponse, page: HtmlPage) -> int | None:
    """The position (`Element.position`) from which browsers fetch http:// subresources over https://, or None.

    upgrade-insecure-requests in an enforced header policy covers the whole page (0). A <meta> policy applies
    from where it is parsed on (CSP3 §3.3: "applies to content which follows it"): Chromium 156 blocks an http://
    script placed before the <meta> that upgrades the ones after it. Only a <meta> in <head>, of the document
    (not inert), counts (HTML §4.2.5.3)."""
    if upgrades_insecure_requests(parse_header_policies(response.headers.get_all("content-security-policy"))):
        return 0
    for element, meta in zip(page.find_all("meta"), meta_elements_of(page), strict=True):
        if meta.http_equiv == "content-security-policy" and meta.in_head and not meta.inert and meta.content:
            if upgrades_insecure_requests(parse_meta_policies(meta.content)[0]):
                return element.position
    return None


def _sri_hashes(integrity: str) -> list[tuple[str, str]]:
    """(algorithm, digest) of each token browsers read (SRI §3.3.3 "parse metadata", Chromium's
    SubresourceIntegrity::ParseIntegrityAttribute); the others they skip, and the load goes on as if absent.

    A token counts when its algorithm is exactly `sha256`, `sha384` or `sha512` (case-sensitive: Chromium 156
    skips `SHA384-...`, "the specified hash algorithm must be one of ..."), and its digest, up to an optional
    `?options`, is non-empty and all base64 or base64url characters (Chromium skips `sha384-not*base64` and a
    digest followed by `!`: "the digest must be a valid, base64-encoded value"). `sha-384-` is skipped as the
    SRI spec and Firefox split at the first '-'; Chromium alone also reads it. Tokens are split on ASCII
    whitespace and the vertical tab, as Chromium splits them (base::kWhitespaceASCII); a no-break space is
    part of a token."""
    hashes: list[tuple[str, str]] = []
    for token in _SRI_SEPARATORS.split(integrity):
        algorithm, dash, rest = token.partition("-")
        digest = rest.partition("?")[0]
        if dash and algorithm in _SRI_DIGESTS and _SRI_DIGEST_CHARACTERS.fullmatch(digest):
            hashes.append((algorithm, digest))
    return hashes


def _sri_digest_length(digest: str) -> int | None:
    """The number of bytes a digest decodes to, as Chromium decodes it (base64url made base64, every '=' at the
    end dropped, none left inside, a length that is not 1 past a multiple of 4), or None when it does not
    decode. Missing or extra '=' padding is fine: `sha256-` and 43 characters verify, and so do a sha256
    digest with '==' and a sha512 one with '====' after its own padding (Chromium 156)."""
    digest = digest.replace("-", "+").replace("_", "/").rstrip("=")
    if "=" in digest or len(digest) % 4 == 1:
        return None
    return len(base64.b64decode(digest + "=" * (-len(digest) % 4)))


def _sri_state(tag: Element) -> str:
    """ "absent", "unsupported" (no hash browsers read: ignored), "malformed" (blocks the load) or "valid"."""
    integrity = tag.get("integrity")
    if integrity is None:
        return "absent"
    known = _sri_hashes(integrity)
    if not known:
        return "unsupported"
    # SRI §3.3.4-3.3.5: only the strongest algorithm's hashes are compared ("get the strongest metadata"), so a
    # valid sha256 beside an unusable sha512 still blocks the load. The digest length orders the three.
    strongest = max(_SRI_DIGESTS[algorithm] for algorithm, _ in known)
    for algorithm, digest in known:
        if _SRI_DIGESTS[algorithm] == strongest and _sri_digest_length(digest) == strongest:
            return "valid"
    return "malformed"


def _fetched_in_cors_mode(element: Element) -> bool:
    """HTML §8.1.4.2 "fetch a single module script": module scripts (and `<link rel=modulepreload>`) are fetched
    in "cors" mode whatever `crossorigin` says (absent means credentials "same-origin"), so their integrity is
    checked and they load without the attribute. Classic scripts and stylesheets need it."""
    if element.name == "script":
        return script_kind(element) == "module"
    return element.name == "link" and "modulepreload" in link_rel(element)


def _not_applicable(parts: SplitResult) -> bool:
    """A script or stylesheet from `_SRI_NOT_APPLICABLE` (host, optionally host/path prefix)."""
    host = (parts.hostname or "").lower()
    for entry in _SRI_NOT_APPLICABLE:
        entry_host, _, entry_path = entry.partition("/")
        if host == entry_host and (not entry_path or parts.path.startswith("/" + entry_path)):
            return True
    return False


def _neutral(outcome: str, note: str, response: HttpResponse) -> CheckResult:
    details: dict[str, object] = {
        "html": False,
        "content_type": shown(response.content_type) if response.content_type else None,
        "external_origins": [],
        "external_origin_count": 0,
        "mixed_content": {"active": [], "passive": []},
        "sri": {"missing": [], "present": 0},
        "base": None,
    }
    return CheckResult(SECTION, (Finding(outcome, note=note), *_body_incomplete(response)), details)


def _body_incomplete(response: HttpResponse) -> list[Finding]:
    """The body was cut or left encoded by the fetch (fetch/body.py): the analysis covers what was read."""
    return [Finding("page.body_incomplete", note=response.body_note)] if response.body_note else []


def _mixed_content(
    resources: list[Resource], https_page: bool, upgraded_from: int | None
) -> tuple[list[Finding], list[str], list[str], bool]:
    """Mixed Content §4: blockable (active) and upgradeable (passive) http:// subresources, each as written, and
    whether upgrade-insecure-requests covers them all; those it covers (`_upgraded_from`) are one
    page.mixed_upgraded, the others a finding each."""
    active: list[str] = []
    passive: list[str] = []
    seen: set[str] = set()  # a set, not `in bucket`: thousands of URLs would make that quadratic
    if not https_page:
        note = "The page itself is plain HTTP, so mixed content does not apply"
        return [Finding("page.http_page", note=note)], active, passive, False
    insecure: dict[str, list[Finding]] = {"page.mixed_active": [], "page.mixed_passive": []}
    upgraded = 0
    for res in resources:
        if res.parts.scheme != "http" or trustworthy_host(res.parts.hostname or ""):
            continue
        bucket = passive if res.kind in _PASSIVE_TYPES else active
        key = f"{bucket is passive} {res.url}"
        if key in seen:
            continue
        seen.add(key)
        bucket.append(res.url)
        if upgraded_from is not None and res.element.position >= upgraded_from:
            upgraded += 1
        else:
            outcome = "page.mixed_passive" if bucket is passive else "page.mixed_active"
            insecure[outcome].append(Finding(outcome, shown(res.origin), shown(res.url)))
    if not active and not passive:
        return [Finding("page.no_mixed_content")], active, passive, False
    findings = [*insecure["page.mixed_active"], *insecure["page.mixed_passive"]]
    if upgraded:
        note = f"{upgraded} http:// resource(s) are fetched over HTTPS by upgrade-insecure-requests"
        findings.append(Finding("page.mixed_upgraded", note=note))
    return findings, active, passive, upgraded == len(active) + len(passive)


def _integrity(resources: list[Resource], page_origin: str, page_site: str) -> tuple[list[Finding], dict[str, Any]]:
    """SRI §3: cross-site scripts and stylesheets should be pinned by hash."""
    findings: list[Finding] = []
    missing: list[str] = []
    invalid: list[str] = []
    not_applicable: list[str] = []
    present = 0
    needing = 0
    for res in resources:
        element = res.element
        if res.kind not in ("script", "stylesheet") or element.name not in ("script", "link"):
            continue
        if element.name == "link" and "stylesheet" not in link_rel(element):
            continue  # a preload is checked on the element that uses it
        state = _sri_state(element)
        present += state == "valid"
        origin = res.origin
        url = shown(res.url)
        if (
            state in ("valid", "malformed")
            and origin != page_origin
            and element.get("crossorigin") is None
            and not _fetched_in_cors_mode(element)
        ):
            note = f"{url} has integrity but no crossorigin attribute: browsers refuse to load it"
            findings.append(Finding("page.sri_no_crossorigin", shown(origin), note))
        if state == "malformed":
            note = f"{url}: the integrity hash is not valid base64 of the right length, so the load is blocked"
            findings.append(Finding("page.sri_malformed", shown(origin), note))
        if res.site == page_site:
            continue  # same site: the same owner controls both
        needing += 1
        if state not in ("absent", "unsupported"):
            continue
        if _not_applicable(res.parts):
            not_applicable.append(res.url)
            continue
        outcome = "page.sri_missing_script" if res.kind == "script" else "page.sri_missing_stylesheet"
        note = url
        if state == "unsupported":
            note = (
                f"{url}: integrity holds no hash browsers read (sha256-, sha384- or sha512- in lowercase, then"
                " a base64 digest), so browsers ignore it and run the file unchecked"
            )
            invalid.append(res.url)
        missing.append(res.url)
        findings.append(Finding(outcome, shown(origin), note))
    if needing and not missing:
        findings.append(Finding("page.sri_ok", note=f"{needing} cross-site script(s)/stylesheet(s) checked"))
    details = shown_lists({"missing": missing, "invalid": invalid, "not_applicable": not_applicable})
    return findings, {"present": present, **details}


def _external_origins(resources: list[Resource], page_origin: str, page_site: str) -> list[dict[str, Any]]:
    """Third-party dependencies grouped by origin, most used first; the details list the first LIST_LIMIT whose
    origins store in LIST_BUDGET characters together (`_first_origins`)."""
    by_origin: dict[str, dict[str, Any]] = {}
    for res in resources:
        origin = res.origin
        if origin == page_origin:
            continue
        site = res.site
        entry = by_origin.setdefault(
            origin, {"origin": shown(origin), "resources": 0, "types": [], "same_site": site == page_site}
        )
        entry["resources"] += 1
        if res.kind not in entry["types"]:
            entry["types"].append(res.kind)
    return sorted(by_origin.values(), key=lambda e: (-e["resources"], e["origin"]))


def _first_origins(external: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first `external` origins that store in LIST_BUDGET characters (the first always), at most LIST_LIMIT:
    `external_origin_count` counts them all."""
    return external[: len(first_fitting((entry["origin"] for entry in external), LIST_LIMIT))]


def check_page(snapshot: SiteSnapshot) -> CheckResult:
    final = snapshot.final
    if final is None:
        return CheckResult(SECTION, (Finding("check.error", note="The page could not be fetched"),))
    if not final.body.strip():
        return _neutral("page.empty", f"The final response (HTTP {final.status_code}) has an empty body", final)
    if not is_html(final):
        kind = shown(final.content_type) if final.content_type else "no Content-Type"
        return _neutral("page.not_html", f"The final response is {kind}, not an HTML page", final)

    page = parse_page(final)
    page_url = final.url
    page_origin = origin_of(page_url)
    page_site = registrable_domain(urlsplit(page_url).hostname or "")
    page_base, base_href = base_url(page, page_url)
    base_tag = base_element(page)
    https_page = urlsplit(page_url).scheme == "https"

    resources: list[Resource] = []
    exhausted = list(page.exhausted)
    started = time.thread_time()  # the CPU time budget also bounds resolving the resources (issue 12)
    for count, (raw, kind, tag) in enumerate(raw_resources(page)):
        if count % 256 == 0 and time.thread_time() - started >= page.budget.max_cpu_seconds:
            exhausted.append("time")
            break
        value = clean_url(raw)
        if not value or value.startswith("#"):
            continue
        before_base = base_tag is not None and tag.position < base_tag.position and kind != "form"
        url = join_url(page_url if before_base else page_base, value)
        parts = split_url(url) if url is not None else None
        if url is not None and parts is not None and parts.scheme in ("http", "https"):
            resources.append(Resource(url, kind, tag, parts))

    findings: list[Finding] = _body_incomplete(final)
    if exhausted:
        # Issue 12: a page past a work budget is analysed as far as the budget went, never stalls the scan.
        spent = ", ".join(page.budget.describe(name) for name in dict.fromkeys(exhausted))
        note = f"Only part of the page was analysed ({page.examined:,} elements examined): past the {spent}"
        findings.append(Finding("page.analysis_limited", note=note))
    # <base href> to another origin: every relative URL on the page now loads from there.
    if (
        base_href is not None
        and urlsplit(base_href).scheme in ("http", "https")
        and origin_of(base_href) != page_origin
    ):
        shown_href = shown(repr(base_href))
        findings.append(Finding("page.base_foreign", shown(origin_of(base_href)), f"<base href={shown_href}>"))
    upgraded_from = _upgraded_from(final, page) if https_page else None
    mixed, active, passive, all_upgraded = _mixed_content(resources, https_page, upgraded_from)
    findings += mixed
    sri_findings, sri = _integrity(resources, page_origin, page_site)
    findings += sri_findings

    external = _external_origins(resources, page_origin, page_site)
    # Each list holds its first URLs within findings.LIST_BUDGET (`shown_lists`), as grading lists the findings'
    # subjects and notes: a URL sits in up to five of the section's 18 lists, whatever their length and number.
    details: dict[str, Any] = {
        "html": True,
        "external_origins": _first_origins(external),  # the most used first
        "external_origin_count": len(external),
        "mixed_content": {**shown_lists({"active": active, "passive": passive}), "upgraded_by_csp": all_upgraded},
        "sri": sri,
        "base": shown(base_href) if base_href is not None else None,
        "truncated": final.body_truncated,
        "body_note": final.body_note,
        "budgets_exhausted": list(dict.fromkeys(exhausted)),
    }
    # Every finding goes to grading, which lists each outcome's first subjects and notes and counts the rest
    # (subjects_not_listed), so the diff never takes a cut list for whole.
    return CheckResult(SECTION, tuple(findings), details)
