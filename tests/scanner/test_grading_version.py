"""The grading version moves with the grading: a deduction, cap, band or graded outcome changed without a
new `version` in rules/grading.toml would give stored scans graded two ways one version (issue: six outcomes
with deductions and caps were added under 2026.11.3).

When this fails after a rule change: bump `version` in websec_app/scanner/rules/grading.toml, run
`python -m websec_app.scanner.rules.docs`, and record the new version's fingerprint below.
"""

from __future__ import annotations

import hashlib

from websec_app.scanner.rules import RuleBook, default_rulebook

#: version -> fingerprint of what grades under it (`grading_fingerprint`).
RECORDED = {
    "2026.11.3": "4318c00a57bddf2f",  # at ca11288: 138 graded outcomes
    "2026.11.4": "cd16a40ac352d69c",  # six more with deductions and caps
    "2026.11.5": "6438a3bdf21bbdcf",  # CORS: look-alike origins echoed (40, C; or 2), http:// with credentials (20, B)
    "2026.11.6": "6438a3bdf21bbdcf",  # the same table; SPF records receivers reject are dns.spf_invalid, not strict
    "2026.11.7": "6438a3bdf21bbdcf",  # the same table; a leaf over 398 days issued before 2020-09-01 is refused too
    "2026.11.8": "6438a3bdf21bbdcf",  # the same table; a caIssuers bundle is searched for the issuer (B, not F)
    "2026.11.9": "1130672b80d36644",  # tls.cert_key_usage (30, F): a Key Usage that forbids the key exchange
    "2026.11.10": "1130672b80d36644",  # the same table; keys and signatures judged on the verified path when trusted
    "2026.11.11": "1130672b80d36644",  # the same table; the DHE group is read behind ECDHE too (Logjam)
    "2026.11.12": "1130672b80d36644",  # the same table; integrity values browsers skip are no pin (SRI, Chromium)
    "2026.11.13": "1130672b80d36644",  # the same table; the grading handshake offers Chrome's groups and signatures
    "2026.11.14": "1130672b80d36644",  # the same table; a <meta> upgrade-insecure-requests covers what follows it
    "2026.11.15": "1130672b80d36644",  # the same table; an SPF permerror record passes no one, +all or not
    "2026.11.16": "eb0618cdbac01cc0",  # dns.caa_invalid_inherited (2): a broken CAA RRset above the domain
    "2026.11.17": "eb0618cdbac01cc0",  # the same table; past 180 Set-Cookie lines cookie.too_many (0) counts the rest
    "2026.11.18": "eb0618cdbac01cc0",  # the same table; the cookies graded are those Chromium keeps, not the first 180
    "2026.11.19": "eb0618cdbac01cc0",  # the same table; SPF, DMARC, MTA-STS, CAA, security.txt held to their RFCs
    "2026.11.20": "eb0618cdbac01cc0",  # the same table; SPF per sender family, CAA as Boulder, MTA-STS as mox, \v \f
    "2026.11.21": "eb0618cdbac01cc0",  # the same table; csp.bypassable_script_host (0), UTF-8 cookies sent back
    "2026.11.22": "eb0618cdbac01cc0",  # the same table; a host's next address after a dead one, dns.address_down (0)
    "2026.11.23": "eb0618cdbac01cc0",  # the same table; dns.address_down for the MTA-STS policy host as well
    "2026.11.29": "ef4028a7ba2f6503",  # redirect.host_without_hsts (3): the host scanned redirects elsewhere, no HSTS
    "2026.11.30": "b515400293fb97a3",  # cookies under HSTS (3, 1, 1), a www HSTS cannot reach (0); entry host TLS
    "2026.12.1": "78599ed6ca61480f",  # tls.no_secure_renegotiation (10, A): no RFC 5746; such servers reached at all
    "2026.12.2": "6f6d5c60728500eb",  # tls.cert_revoked (40, F): the CA's OCSP responder or CRL says so
    # tls.cert_not_logged (30, F): SCTs from too few CT logs, from a public root; tls.heartbleed (50, F);
    # tls.cert_distrusted_root (40, F): a root whose newer certificates Chrome refuses
    "2026.12.3": "7261c99a61a6670e",
    # the MX hosts asked: dns.mx_no_starttls (3), dns.mta_sts_mx_failing (4), dns.dane_mismatch (5),
    # dns.mx_tls_outdated (1)
    "2026.12.4": "9f1e24bb296486b8",
    # DANE for the web server: tls.dane_mismatch (2), tls.dane_ignored (0)
    "2026.12.5": "215e99eb832692d1",
    # an MX host's certificate that expires within two weeks: dns.mx_cert_expires_soon (3)
    "2026.12.6": "1b5f3e5f2a17022a",
    # a name server on a domain that does not exist: dns.dangling_ns (25, critical)
    "2026.12.7": "6e0e1fd165493a53",
    # the MTA-STS policy host's certificate that expires within two weeks: dns.mta_sts_cert_expires_soon (2)
    "2026.12.8": "1228364f34331702",
    # a name server the domain is delegated to that does not serve its zone: dns.lame_delegation (10, important)
    "2026.12.9": "df875488d8a2e722",
    # a name server the domain is delegated to without an address: dns.nameserver_unresolvable (2)
    "2026.12.10": "d06f26126ca66f4a",
    # a name server that answers nothing while the others answer: dns.nameserver_silent (2)
    "2026.12.11": "c4bc87ebe06d3551",
}


def grading_fingerprint(book: RuleBook) -> str:
    """The bands, and every outcome that takes points or caps the grade, with its deduction and cap."""
    graded = sorted((o, r.deduction, r.max_grade or "") for o, r in book.rules.items() if r.deduction or r.max_grade)
    bands = [(b.grade, b.min_score, b.max_score) for b in book.bands]
    return hashlib.sha256(repr((bands, graded)).encode()).hexdigest()[:16]


def test_the_grading_version_names_the_grading_it_was_recorded_with() -> None:
    book = default_rulebook()
    assert book.version in RECORDED, f"grading version {book.version} has no recorded fingerprint: bump it?"
    assert grading_fingerprint(book) == RECORDED[book.version], "the grading changed: bump the version"
