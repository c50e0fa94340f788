# Test cases adapted from OpenSSL's DANE tests (test/danetest.in, https://github.com/openssl/openssl), used under the
# Apache License 2.0: the certificates in tests/conformance/files/openssl-danetest-certs.pem are copied unchanged.
"""OpenSSL's DANE test cases (test/danetest.in) held to websec's TLSA matches (records/dane.py): `dane_match`, which
decides dns.dane_valid and dns.dane_mismatch for an MX host's certificate, and `web_dane_match`, which decides
tls.dane_valid and tls.dane_mismatch for the web server's (docs/conformance.md).

Each OpenSSL case gives TLSA records, the chain a server sends, whether name checks are off, and the verify result
(0: authenticated, 65: no record matches, 62: the name does not match, 20: no PKIX path) with the depth of the matching
certificate. A case **agrees** when websec finds a matching record exactly when OpenSSL authenticates, and, where
several records could match, the one at OpenSSL's depth. The PKIX-TA(0) and PKIX-EE(1) cases (21-38) are not held to
`dane_match`: RFC 7672 3.1.3 makes those usages unusable to SMTP. A web client uses them, with a PKIX path to its trust
store: the suite's store (danetest.pem) holds its Root CA, as the cases show (21 and 22 send no root and authenticate;
34 sends the leaf alone and gets 20, no local issuer), and the port builds the path with OpenSSL's verifier from the
sent chain and that root, as a scan's handshake does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from OpenSSL import crypto

from tests.clock import TEST_NOW
from websec_app.scanner.records.dane import Tlsa, WebChain, dane_match, parse_tlsa, web_dane_match

CERTS = Path(__file__).parent / "files" / "openssl-danetest-certs.pem"
DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"

#: The suite's base domain (danetest.c): the name a leaf must carry when name checks are on.
BASE_DOMAIN = "example.com"


def _certificates() -> dict[str, x509.Certificate]:
    names = ("anonymous", "leaf", "issuer", "root", "org-leaf", "ca2", "root2")
    return dict(zip(names, x509.load_pem_x509_certificates(CERTS.read_bytes()), strict=True))


CERTIFICATES = _certificates()


def _der(name: str) -> str:
    return CERTIFICATES[name].public_bytes(Encoding.DER).hex().upper()


def _spki(name: str) -> str:
    return CERTIFICATES[name].public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo).hex().upper()


# The records the cases hold, as the suite writes them (its header lists them for the example.com chain).
ANON_301 = "3 0 1 588FD5F414E3327EAFE3169DC040AE161247D1296BF38304AB9CF464850A1365"
ANON_311 = "3 1 1 05C66146D7909EAE2379825F6D0F5284146B79598DA12E403DC29C33147CF33E"
ANON_302 = (
    "3 0 2 42BEE929852C8063A0D619B53D0DD35703BBAD2FC25F2055F737C7A14DDFEA544491F8C00F50FA083BD0AD1B5C98529994FF811B"
    "BA5E5170CC6EE9F3ED5563E1"
)
ANON_312 = (
    "3 1 2 D91A3E5DC34879CD77AD1E989F56FA78FACADF05EF8D445EDF5652BD58EE392C87C02F84C0119D62309041F2D5128A73399DF25D"
    "1F47BCD497357EAF1A1009A3"
)
LEAF_301 = "3 0 1 BEDC04764CECAE80AEE454D332758F50847DCA424216466E4012E0DEAE1F2E5F"
LEAF_311 = "3 1 1 3111668338043DE264D0256A702248696C9484B6221A42740F920187B4C61838"
LEAF_302 = (
    "3 0 2 F756CCD61F3CA50D017653911701CA0052AF0B29E273DD263DD23643D86D4369D03686BD1369EF54BB2DC2DAE3CE4F05AF39D546"
    "48F94D54AA86B259AEAD9923"
)
LEAF_312 = (
    "3 1 2 CB861AF6DDED185EE04472A9092052CCC735120C34785E72C996C94B122EBA6F329BE630B1B4C6E2756E7A75392C21E253C6AEAC"
    "C31FD45FF4595DED375FAF62"
)
ISSUER_201 = "2 0 1 0DAA76425A1FC398C55A643D5A2485AE4CC2B64B9515A75054722B2E83C31BBD"
ISSUER_211 = "2 1 1 65A457617072DA3E7F1152471EB3D406526530097D0A9AA34EB47C990A1FCDA3"
ISSUER_202 = (
    "2 0 2 6BC0C0F2500320A49392910965263A3EBDD594173D3E36CCE38A003D2EC3FAFBC315EDB776CD3139637DF494FB60359601542A4F"
    "821BF0542F926E6270C9762C"
)
ISSUER_212 = (
    "2 1 2 1F484106F765B6F1AC483CC509CDAD36486A83D1BA115F562516F407C1109303658408B455824DA0785A252B205DBEECB1AFB5DB"
    "869E8AAC242091B63F258F05"
)
ROOT_201 = "2 0 1 FE7C8E01110627A782765E468D8CB4D2CC7907EAC4BA5974CD92B540ED2AAC3C"
ROOT_211 = "2 1 1 91D942E4A2D4226DDAF28CADAA7F13018E4ED0D9A43A529247E51C965188576C"
ROOT_202 = (
    "2 0 2 361029F20A3B59DAFAAF05D41811EFC1A9439B972BC6B9D7F13BC5469570E49ACAE0CB0C877C75D58346590EA950AC7A39AED6E8"
    "AA8004EA7F5DE3AB9462047E"
)
ROOT_212 = (
    "2 1 2 5F414D4D7BFDF22E39952D9F46C51370FDD050F10C55B4CDB42E40FA98611FDE23EEE9B23315EE1ECDB198C7419E9A2D6742860E"
    "4806AF45164507799C3B452E"
)
ORG_311 = "3 1 1 ee1477190203f5d8b4767f4451b89e7367cdec7f6965a4988227983562ac8270"
CA2_211 = "2 1 1 946af0956378efaba7ee1bbedc17af110ea8de19c079a98e77398724a3708a1f"
ROOT2_211 = "2 1 1 34474f2fbc39da44dfbd11215bdafadf9507406c04de1f65dbd2a1bc4f2165cc"
# A record "from DNS" whole (Full(0)): the suite writes the certificate's or key's DER in hex; these are the same bytes,
# read from the certificates, checked against the suite's first 40 digits below.
ROOT_200 = f"2 0 0 {_der('root')}"
ISSUER_200 = f"2 0 0 {_der('issuer')}"
ISSUER_210 = f"2 1 0 {_spki('issuer')}"
ROOT_210 = f"2 1 0 {_spki('root')}"
SUITE_PREFIXES = {
    ROOT_200: "308201643082010BA003020102020101300A0608",
    ISSUER_200: "308201683082010DA003020102020102300A0608",
    ISSUER_210: "3059301306072A8648CE3D020106082A8648CE3D",
    ROOT_210: "3059301306072A8648CE3D020106082A8648CE3D",
}


def _wrong(record: str) -> str:
    """The record with its last hex digit one more: the suite's "wrong digest" cases."""
    return record[:-1] + format((int(record[-1], 16) + 1) % 16, "X")


CHAIN = ("leaf", "issuer", "root")
ORG_CHAIN = ("org-leaf", "ca2", "root2")


@dataclass(frozen=True)
class Case:
    number: int  # the suite's case number
    records: tuple[str, ...]
    chain: tuple[str, ...]
    no_name_checks: bool
    result: int  # OpenSSL's verify result: 0 authenticated, 65 no match, 62 the name does not match
    depth: int  # the matching certificate's depth (-1 none)
    matched: int | None = None  # the record websec must match, by index, where several could (None: the first)
    why: str | None = None  # a documented divergence


CASES = (
    # Anonymous and "never valid" leaf certificate DANE-EE(3) tests
    Case(1, (ANON_301,), ("anonymous",), True, 0, 0),
    Case(2, (ANON_311,), ("anonymous",), True, 0, 0),
    Case(3, (ANON_302,), ("anonymous",), True, 0, 0),
    Case(4, (ANON_312,), ("anonymous",), True, 0, 0),
    Case(5, (_wrong(ANON_301),), ("anonymous",), True, 65, -1),
    Case(6, (_wrong(ANON_311),), ("anonymous",), True, 65, -1),
    Case(7, (_wrong(ANON_302),), ("anonymous",), True, 65, -1),
    Case(8, (_wrong(ANON_312),), ("anonymous",), True, 65, -1),
    # DANE-?? chain tests
    Case(9, (LEAF_301,), CHAIN, False, 0, 0),
    Case(10, (LEAF_311,), CHAIN, False, 0, 0),
    Case(11, (LEAF_302,), CHAIN, False, 0, 0),
    Case(12, (LEAF_312,), CHAIN, False, 0, 0),
    Case(13, (ISSUER_201,), CHAIN, False, 0, 1),
    Case(14, (ISSUER_211,), CHAIN, False, 0, 1),
    Case(15, (ISSUER_202,), CHAIN, False, 0, 1),
    Case(16, (ISSUER_212,), CHAIN, False, 0, 1),
    Case(17, (ROOT_201,), CHAIN, False, 0, 2),
    Case(18, (ROOT_211,), CHAIN, False, 0, 2),
    Case(19, (ROOT_202,), CHAIN, False, 0, 2),
    Case(20, (ROOT_212,), CHAIN, False, 0, 2),
    # Mixed usage cases
    Case(39, (LEAF_312, ROOT_212), CHAIN, False, 0, 0, matched=0),
    Case(40, (ROOT_212, ISSUER_212), CHAIN, False, 0, 1, matched=1),
    Case(41, (ROOT_201, "0 0 1 " + ISSUER_201[6:]), CHAIN, False, 0, 2, matched=0),
    Case(42, (ROOT_201, "0 0 1 " + ISSUER_201[6:]), CHAIN, False, 0, 2, matched=0),
    Case(43, (ROOT_200,), ("leaf", "issuer"), False, 0, 2),
    Case(44, (ISSUER_200,), ("leaf",), False, 0, 1),
    Case(45, (ISSUER_210,), ("leaf",), False, 0, 0),
    Case(46, (ROOT_210,), ("leaf", "issuer"), False, 0, 1),
    Case(47, (ORG_311,), ORG_CHAIN, True, 0, 0),
    Case(48, (CA2_211,), ORG_CHAIN, False, 62, 1),
    Case(49, (ROOT2_211,), ORG_CHAIN, False, 62, 2),
    Case(
        50,
        (ORG_311,),
        ORG_CHAIN,
        False,
        62,
        0,
        why=(
            "RFC 7672 3.1.1: an SMTP client ignores the names of a DANE-EE(3) certificate, which the record pins "
            "itself; OpenSSL checks them unless the application sets DANE_FLAG_NO_DANE_EE_NAMECHECKS, as Postfix does "
            "for SMTP"
        ),
    ),
)

ISSUER_FULL = f"0 0 0 {_der('issuer')}"  # case 35's record of the intermediate, whole

#: PKIX-TA(0) and PKIX-EE(1): held to the web server's match only.
PKIX_CASES = (
    # PKIX-?? chain tests
    Case(21, ("1" + LEAF_301[1:],), ("leaf", "issuer"), False, 0, 0),
    Case(22, ("1" + LEAF_311[1:],), ("leaf", "issuer"), False, 0, 0),
    Case(23, ("1" + LEAF_302[1:],), CHAIN, False, 0, 0),
    Case(24, ("1" + LEAF_312[1:],), CHAIN, False, 0, 0),
    Case(25, ("0" + ISSUER_201[1:],), ("leaf", "issuer"), False, 0, 1),
    Case(26, (f"0 1 0 {_spki('issuer')}",), ("leaf", "issuer"), False, 0, 1),
    Case(27, ("0" + ISSUER_211[1:],), ("leaf", "issuer"), False, 0, 1),
    Case(28, ("0" + ISSUER_202[1:],), CHAIN, False, 0, 1),
    Case(29, ("0" + ISSUER_212[1:],), CHAIN, False, 0, 1),
    Case(30, ("0" + ROOT_201[1:],), ("leaf", "issuer"), False, 0, 2),
    Case(31, ("0" + ROOT_211[1:],), ("leaf", "issuer"), False, 0, 2),
    Case(32, ("0" + ROOT_202[1:],), CHAIN, False, 0, 2),
    Case(33, ("0" + ROOT_212[1:],), CHAIN, False, 0, 2),
    # PKIX-?? chain failures: the intermediate missing; missing, and published whole in DNS; wrong digests
    Case(34, ("1" + LEAF_301[1:],), ("leaf",), False, 20, 0),
    Case(
        35,
        ("1" + LEAF_311[1:], ISSUER_FULL),
        ("leaf",),
        False,
        0,
        0,
        why=(
            "the intermediate is missing, and published whole in a PKIX-TA(0) record; OpenSSL builds the PKIX path "
            "with it, websec (as browsers, which read no TLSA record) judges the path from what the server sends and "
            "finds none: a chain a browser refuses is not made valid by DNS"
        ),
    ),
    Case(36, (_wrong("1" + LEAF_302[1:]),), CHAIN, False, 65, -1),
    Case(37, (_wrong("0" + ISSUER_201[1:]),), ("leaf", "issuer"), False, 65, -1),
    Case(38, (_wrong("0" + ROOT_201[1:]),), ("leaf", "issuer"), False, 65, -1),
)

#: The suite's cases not held to the SMTP match, and why.
NOT_PORTED = {
    case.number: "PKIX-TA(0) and PKIX-EE(1) records, which RFC 7672 3.1.3 makes unusable to SMTP (held to the web "
    "server's match)"
    for case in PKIX_CASES
}

#: Where the web server's match parts from OpenSSL's, beyond the PKIX cases' own `why`.
WEB_DIVERGENCES = {
    50: "RFC 7671 5.1: a client ignores the names of a DANE-EE(3) certificate, which the record pins itself; OpenSSL "
    "checks them unless the application sets DANE_FLAG_NO_DANE_EE_NAMECHECKS"
}


def _records(case: Case) -> list[Tlsa]:
    return [record for text in case.records if (record := parse_tlsa(text)) is not None]


def _names_host(case: Case) -> bool:
    leaf = CERTIFICATES[case.chain[0]]
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:  # the anonymous leaf of cases 1-8
        return case.no_name_checks
    return case.no_name_checks or BASE_DOMAIN in names.get_values_for_type(x509.DNSName)


def _chain(case: Case) -> tuple[bytes, ...]:
    return tuple(CERTIFICATES[name].public_bytes(Encoding.DER) for name in case.chain)


def _verdict(case: Case) -> Tlsa | None:
    return dane_match(_records(case), _chain(case), leaf_names_host=_names_host(case), leaf_current=True)


def _pkix_path(case: Case) -> tuple[bytes, ...]:
    """The path OpenSSL's verifier builds from the sent chain to the suite's Root CA (DER, leaf first, the anchor
    last), at the tests' fixed time; empty when there is none."""
    store = crypto.X509Store()
    store.add_cert(crypto.X509.from_cryptography(CERTIFICATES["root"]))
    store.set_time(TEST_NOW.replace(tzinfo=None))
    certificates = [crypto.X509.from_cryptography(CERTIFICATES[name]) for name in case.chain]
    try:
        path = crypto.X509StoreContext(store, certificates[0], certificates[1:]).get_verified_chain()
    except crypto.X509StoreContextError:
        return ()
    return tuple(certificate.to_cryptography().public_bytes(Encoding.DER) for certificate in path)


def _web_verdict(case: Case) -> Tlsa | None:
    path = _pkix_path(case)
    chain = WebChain(
        sent=_chain(case),
        verified=path[:-1],
        anchor=path[-1] if path else None,
        names_host=_names_host(case),
        current=True,
    )
    return web_dane_match(_records(case), chain)


def _agrees(case: Case, matched: Tlsa | None) -> bool:
    if (matched is not None) != (case.result == 0):
        return False
    return matched is None or matched == parse_tlsa(case.records[case.matched or 0])


def test_the_full_records_are_the_suites_bytes() -> None:
    for record, prefix in SUITE_PREFIXES.items():
        assert record.split()[3].startswith(prefix)


@pytest.mark.parametrize("case", CASES, ids=[f"case-{case.number}" for case in CASES])
def test_each_case_agrees_with_openssl_or_diverges_as_documented(case: Case) -> None:
    assert _agrees(case, _verdict(case)) == (case.why is None)


WEB_CASES = sorted((*CASES, *PKIX_CASES), key=lambda case: case.number)


def _web_why(case: Case) -> str | None:
    return case.why if case.number in NOT_PORTED else WEB_DIVERGENCES.get(case.number)


@pytest.mark.parametrize("case", WEB_CASES, ids=[f"case-{case.number}" for case in WEB_CASES])
def test_each_case_agrees_with_openssl_for_a_web_server_or_diverges_as_documented(case: Case) -> None:
    assert _agrees(case, _web_verdict(case)) == (_web_why(case) is None)


def test_the_suites_trust_store_is_its_root_as_the_cases_show() -> None:
    """Cases 21 and 22 authenticate without the root sent, so the store holds it; case 34 fails with no local issuer,
    so the store does not hold the intermediate."""
    assert _pkix_path(PKIX_CASES[0])[-1] == CERTIFICATES["root"].public_bytes(Encoding.DER)
    assert _pkix_path(next(case for case in PKIX_CASES if case.number == 34)) == ()


def test_the_doc_states_the_counts_and_every_divergence() -> None:
    text = DOC.read_text("utf-8")
    part = text[text.index("## OpenSSL's DANE tests") :]
    part = part[: part.index("\n## ", 4)] if "\n## " in part[4:] else part
    total = len(CASES) + len(NOT_PORTED)
    agree = sum(1 for case in CASES if case.why is None)
    smtp = (
        f"| `test/danetest.in`, an MX host (`dane_match`) | {total} | {agree} | {len(CASES) - agree} "
        f"| {len(NOT_PORTED)} |"
    )
    assert smtp in part
    web_agree = sum(1 for case in WEB_CASES if _web_why(case) is None)
    web = f"| `test/danetest.in`, the web server (`web_dane_match`) | {total} | {web_agree} | {total - web_agree} | 0 |"
    assert web in part
    for case in CASES:
        if case.why is not None:
            assert f"- case {case.number}, an MX host: {case.why}" in part
    for case in WEB_CASES:
        if (why := _web_why(case)) is not None:
            assert f"- case {case.number}, the web server: {why}" in part
    assert re.search(r"- cases 21-38, an MX host: " + re.escape(NOT_PORTED[21]), part)
