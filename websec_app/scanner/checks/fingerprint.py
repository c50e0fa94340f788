"""Server fingerprint: do responses announce exact software versions?

A product name alone (`Server: nginx`, `Server: cloudflare`) tells an attacker little
they could not guess; an exact version (`Apache/2.4.41`, `PHP/7.4.3`) lets them look up
its known vulnerabilities without sending a single probe (OWASP WSTG-INFO-02,
"Fingerprint Web Server"; CWE-497). Only digits-with-dots versions count as a leak:
`Apache/2` (ServerTokens Major) or `Drupal 10` say no more than the product name.

Every response the scan received is read, not only the final page: error pages (the
security.txt 404, the CORS probes, the port-80 redirect of an https:// target) are often
where a default `Server` header survives.
"""

from __future__ import annotations

import re
from typing import Any

from ..findings import LIST_LIMIT, CheckResult, CountedNote, Finding, noted
from ..records.html import meta_elements
from ..snapshot import HttpResponse, SiteSnapshot
from ._shown import first_fitting, shown

SECTION = "server_fingerprint"

#: Headers whose value names software, possibly with its version.
_PRODUCT_HEADERS = ("Server", "X-Powered-By", "X-Generator", "Via", "X-Powered-CMS", "Liferay-Portal")
#: Headers whose whole value is a version: header -> the product it belongs to.
_VERSION_HEADERS = {
    "X-AspNet-Version": "ASP.NET",
    "X-AspNetMvc-Version": "ASP.NET MVC",
    "X-OWA-Version": "Outlook Web App",
    "MicrosoftSharePointTeamServices": "SharePoint",
    "X-Mod-Pagespeed": "mod_pagespeed",
    "X-Page-Speed": "mod_pagespeed",
}
#: Headers that name an internal machine rather than software.
_BACKEND_HEADERS = ("X-Backend-Server", "X-Backend-Host", "X-Upstream-Server")

# product/1.2.3, product 1.2.3, product(1.2.3): the product starts with a letter, the
# version has at least one dot. `[a-z]?` keeps OpenSSL's letter releases (1.1.1f).
#
# These read what the site sends, so none may backtrack (Python's re holds the GIL: one slow match
# freezes the whole server). Searching "product/version" from every letter made a long run of letters
# quadratic (`Server: ` + 90 KB of "a": 116 s). A product is the first letter of a run of product
# characters up to the run's end wherever the run is entered, so every later letter of the run fails
# the same way: `_PRODUCT_VERSION` is tried only where a run starts (the lookbehind), skipping the run's
# leading digits and marks, with possessive quantifiers (no character is read twice). A run also starts
# where the previous match ended (`1.1.1f-fips/2.0` names fips 2.0), which re.finditer would try and
# a lookbehind cannot see: `_PRODUCT_VERSION_HERE` is that same match anchored there.
#
# Between the product and its version: a trademark sign (`Phusion Passenger(R) 6.0.27`; ® and ™ also as
# their UTF-8 bytes read as Latin-1, as header values are), then a parenthesised comment after a space
# (`Phusion Passenger (mod_rails/mod_rack) 3.0.11`). Neither starts with a product character, and without
# either the product would be followed by "(R", "®" or " (", never by a separator and a digit: giving them
# back never lets a version match, so they are possessive too. Each "(" is read by one comment at most.
_MARK = r"(?:\((?:R|TM)\)|\u00c2?\u00ae|\u2122|\u00e2\x84\u00a2)?+"
_COMMENT = r"(?: \([^()]*+\))?+"
_PRODUCT_RUN = (
    r"[0-9_.+!-]*+(?P<product>[A-Za-z][A-Za-z0-9_.+!-]*+)"
    + _MARK
    + _COMMENT
    + r"[/ (]v?(?P<version>\d++(?:\.\d++)++[a-z]?)"
)
_PRODUCT_VERSION_HERE = re.compile(_PRODUCT_RUN)
_PRODUCT_VERSION = re.compile(r"(?<![A-Za-z0-9_.+!-])" + _PRODUCT_RUN)
# Possessive: `\d+` then `[\w.-]*` could split a run of digits n ways, each failing at the end (16 KB: 2 s).
_BARE_VERSION = re.compile(r"^\s*+v?(?P<version>\d++(?:\.\d++)++[\w.-]*+)\s*+$")
_PRODUCT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+!-]*")
# "Versions" that are protocol or API levels, identical on every release of the product:
# Tomcat's connector always says Apache-Coyote/1.1, HTTP.sys always Microsoft-HTTPAPI/2.0.
_NOT_PRODUCTS = frozenset({"http", "https", "spdy", "quic", "apache-coyote", "microsoft-httpapi"})


def _via_comments(value: str) -> str:
    r"""RFC 9110 §7.6.3: each Via entry is `protocol received-by [(comment)]`; only comments name software.

    Each "(" to the next ")", as `re.findall(r"\(([^)]*)\)", value)` read them, but stopping at the first "("
    with no ")" after it instead of rescanning the rest for every later "(" (a Via of 32 K "(": 2.4 s)."""
    comments = []
    start = value.find("(")
    while start >= 0:
        end = value.find(")", start + 1)
        if end < 0:
            break
        comments.append(value[start + 1 : end])
        start = value.find("(", end + 1)
    return " ".join(comments)


def find_versions(value: str) -> list[tuple[str, str]]:
    """(product, version) pairs named in a header value or generator string."""
    found: list[tuple[str, str]] = []
    position = 0
    while True:
        match = _PRODUCT_VERSION_HERE.match(value, position) if position else None
        if match is None:
            match = _PRODUCT_VERSION.search(value, position)
        if match is None:
            return found
        position = match.end()
        product = match["product"].rstrip(".-")
        if product.lower() not in _NOT_PRODUCTS:
            found.append((product, match["version"]))


def _responses(snapshot: SiteSnapshot) -> list[HttpResponse]:
    responses = list(snapshot.main.responses)
    # The http:// form of an https:// target is its own chain (the port-80 redirect often comes from another
    # server block, or another server); for an http:// target it is `main` itself.
    if snapshot.http_upgrade is not None and snapshot.http_upgrade is not snapshot.main:
        responses.extend(snapshot.http_upgrade.responses)
    responses.extend(probe.response for probe in snapshot.cors_probes if probe.response is not None)
    if snapshot.security_txt is not None:
        responses.extend(snapshot.security_txt.responses)
    return responses


def _header_disclosures(response: HttpResponse) -> tuple[list[dict[str, str]], list[str], list[str]]:
    """Version disclosures, bare product names and backend names in one response's headers."""
    disclosures: list[dict[str, str]] = []
    products: list[str] = []
    backends: list[str] = []
    for name in _PRODUCT_HEADERS:
        for value in response.headers.get_all(name):
            text = _via_comments(value) if name == "Via" else value
            versions = find_versions(text)
            for product, version in versions:
                disclosures.append({"header": name, "value": value, "product": product, "version": version})
            if not versions and _PRODUCT_NAME.search(text):
                products.append(f"{name}: {value.strip()}")
    for name, product in _VERSION_HEADERS.items():
        for value in response.headers.get_all(name):
            match = _BARE_VERSION.match(value)
            if match:
                disclosures.append({"header": name, "value": value, "product": product, "version": match["version"]})
            elif value.strip():
                products.append(f"{name}: {value.strip()}")
    for name in _BACKEND_HEADERS:
        backends.extend(f"{name}: {value.strip()}" for value in response.headers.get_all(name) if value.strip())
    return disclosures, products, backends


def _generator_disclosures(response: HttpResponse) -> list[dict[str, str]]:
    """`<meta name="generator" content="WordPress 6.4.2">` (HTML §4.2.5.1 "generator")."""
    found = []
    for meta in meta_elements(response):  # the page's one parse, shared with the other checks
        # Trimmed here, unlike where browsers act on a <meta>: the version is there for anyone who reads the page.
        if meta.name.strip() != "generator":
            continue
        content = meta.content or ""
        for product, version in find_versions(content):
            found.append({"header": "meta generator", "value": content, "product": product, "version": version})
    return found


def _shown_item(item: Any) -> Any:
    """A product name, or a disclosure's strings, as the report shows them (`shown`): a value is a whole header."""
    if isinstance(item, str):
        return shown(item)
    return {key: shown(value) if isinstance(value, str) else value for key, value in item.items()}


def _listed(items: list[Any], name: str, not_listed: dict[str, int]) -> list[Any]:
    """The first LIST_LIMIT items that store in findings.LIST_BUDGET characters (the first always), each
    `_shown_item`; how many more there were goes into `not_listed` under `name` (10,000 <meta name=generator>
    made a 2.16 MB section; 100 KiB of Server lines of 1,500 0xFF bytes and a version, 456 KB)."""
    kept = first_fitting((_shown_item(item) for item in items), LIST_LIMIT)
    if len(items) > len(kept):
        not_listed[name] = len(items) - len(kept)
    return kept


def check_server_fingerprint(snapshot: SiteSnapshot) -> CheckResult:
    disclosures: list[dict[str, str]] = []
    products: list[str] = []
    backends: list[str] = []
    # Sets, not `in` on the lists: 11 responses of 6,053 bare Server lines each took 13.3 s to de-duplicate.
    seen: set[tuple[str, str, str]] = set()
    seen_products: set[str] = set()
    seen_backends: set[str] = set()
    for response in _responses(snapshot):
        found, named, internal = _header_disclosures(response)
        for item in found:
            key = (item["header"].lower(), item["product"], item["version"])
            if key not in seen:
                seen.add(key)
                disclosures.append({**item, "url": response.url})
        for product in named:
            if product not in seen_products:
                seen_products.add(product)
                products.append(product)
        for backend in internal:
            if backend not in seen_backends:
                seen_backends.add(backend)
                backends.append(backend)

    findings: list[Finding] = []
    # One note per header value, naming every product it reveals: a Server line naming five products read
    # as the whole line five times over.
    revealed: dict[tuple[str, str], list[str]] = {}
    for item in disclosures:
        revealed.setdefault((item["header"], item["value"].strip()), []).append(f"{item['product']} {item['version']}")
    for (header, value), versions in revealed.items():
        findings.append(
            Finding("fingerprint.header_version", header, f"{header}: {shown(value)} reveals {', '.join(versions)}")
        )

    generators = _generator_disclosures(snapshot.final) if snapshot.final is not None else []
    for item in generators:
        key = (item["header"], item["product"], item["version"])
        if key in seen:  # the same <meta> twice says it once
            continue
        seen.add(key)
        note = f'<meta name="generator" content="{shown(item["value"])}"> reveals {item["product"]} {item["version"]}'
        findings.append(Finding("fingerprint.generator_version", item["product"], note))
        disclosures.append({**item, "url": snapshot.final.url if snapshot.final else ""})

    for backend in backends:
        findings.append(Finding("fingerprint.backend_host", backend.split(":")[0], backend))

    # Grading lists 50 notes per finding and counts the rest; the lists of details are cut the same way here.
    not_listed: dict[str, int] = {}
    details: dict[str, Any] = {
        "disclosures": _listed(disclosures, "disclosures", not_listed),
        "products": _listed(products, "products", not_listed),
        "backends": _listed(backends, "backends", not_listed),
    }
    if not findings:
        if products:
            left_out = not_listed.get("products", 0)
            more = [CountedNote(f"and {left_out:,} more, not listed", left_out)] if left_out else []
            findings.append(noted("fingerprint.product_only", details["products"] + more))
        else:
            findings.append(Finding("fingerprint.none"))
    if not_listed:
        details["not_listed"] = not_listed
    return CheckResult(SECTION, tuple(findings), details)
