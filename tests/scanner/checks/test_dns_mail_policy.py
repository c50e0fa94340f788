"""The dns section's MTA-STS (RFC 8461) and TLS-RPT (RFC 8460) findings, from hand-made snapshots: what a sending
server finds in the records and the policy file, edge by edge (test_dns_records.py has the common cases)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.factories import dns_answer, make_dns, make_handshake, make_response, make_snapshot
from websec_app.scanner.checks.dns import check_dns
from websec_app.scanner.findings import CheckResult
from websec_app.scanner.records.mta_sts import MAX_POLICY_BYTES
from websec_app.scanner.snapshot import DnsAnswer, FetchChain

HOST = "example.com"
MX = dns_answer(HOST, "MX", "10 mx1.example.com.", "20 mx2.example.com.")
STS = f"_mta-sts.{HOST}"
POLICY_URL = f"https://mta-sts.{HOST}/.well-known/mta-sts.txt"
GOOD_POLICY = "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.example.com\r\nmax_age: 604800\r\n"


def txt(name: str, *values: str, rcode: str = "NOERROR") -> DnsAnswer:
    return dns_answer(name, "TXT", *(f'"{v}"' for v in values), rcode=rcode)


def policy(body: str = GOOD_POLICY, **response: object) -> FetchChain:
    return FetchChain(
        POLICY_URL, (dataclasses.replace(make_response(POLICY_URL, 200, {}, body, "text/plain"), **response),)
    )


def check(*answers: DnsAnswer, chain: FetchChain | None = None) -> CheckResult:
    snapshot = make_snapshot(
        f"https://{HOST}/",
        dns=make_dns(HOST, MX, *answers),
        mta_sts_policy=chain,
        mta_sts_tls=make_handshake(f"mta-sts.{HOST}") if chain else None,
    )
    return check_dns(snapshot)


def found(result: CheckResult, *prefixes: str) -> dict[str, str]:
    return {f.outcome: f.note or "" for f in result.findings if f.outcome.startswith(prefixes)}


# -- the _mta-sts record (RFC 8461 3.1) --------------------------------------------------------------------------


def test_a_discarded_record_beside_a_valid_one_leaves_that_one() -> None:
    # "records that do not begin with "v=STSv1;" are discarded. If the number of resulting records is not one,
    # ...": one remains, so the policy applies (it was two records, dns.mta_sts_invalid)
    result = check(txt(STS, "v=STSv1", "v=STSv1; id=20260101"), chain=policy())
    assert found(result, "dns.mta_sts") == {"dns.mta_sts_enforce": "mode: enforce, max_age 604800"}


@pytest.mark.parametrize("record", ["v=STSv1", "v=STSv1 id=20260101", "V=STSv1; id=20260101"])
def test_a_record_that_only_looks_like_mta_sts_is_invalid_and_discarded_by_senders(record) -> None:
    result = check(txt(STS, record))
    assert found(result, "dns.mta_sts") == {
        "dns.mta_sts_invalid": f"{STS}: {record!r} does not begin with v=STSv1 and ';', "
        "so senders discard it (RFC 8461 3.1)"
    }


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("v=STSv1; id = 20260101", "'id = 20260101' is not name=value"),
        ("v=STSv1; id=20260101 ", "id=20260101  is not 1 to 32 letters and digits"),
        ("v=STSv1; id=20260101; note", "'note' is not name=value"),
    ],
)
def test_a_record_outside_the_grammar_is_invalid(record, problem) -> None:
    # senders that parse the grammar (mox) have no policy then: it was dns.mta_sts_enforce
    result = check(txt(STS, record), chain=policy())
    assert found(result, "dns.mta_sts") == {"dns.mta_sts_invalid": f"{STS}: {problem}"}


# -- the policy file (RFC 8461 3.2, 3.3) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (GOOD_POLICY.replace("mode: enforce", "mode : enforce"), "'mode : enforce' is not 'key: value'"),
        (GOOD_POLICY.replace("max_age:", " max_age:"), "' max_age: 604800' is not 'key: value'"),
        (GOOD_POLICY.replace("mx1.example.com", "mx1.example.com."), "mx 'mx1.example.com.' is not a host name"),
    ],
)
def test_a_policy_outside_the_grammar_is_invalid(body, problem) -> None:
    result = check(txt(STS, "v=STSv1; id=1"), chain=policy(body))
    assert list(found(result, "dns.mta_sts")) == ["dns.mta_sts_invalid"]
    assert problem in found(result, "dns.mta_sts")["dns.mta_sts_invalid"]


def test_a_repeated_field_of_the_policy_counts_at_its_first_occurrence() -> None:
    # 3.2: "all entries except for the first SHALL be ignored": enforce, not "mode appears twice"
    body = GOOD_POLICY + "mode: testing\r\nmax_age: 1\r\n"
    result = check(txt(STS, "v=STSv1; id=1"), chain=policy(body))
    assert found(result, "dns.mta_sts") == {"dns.mta_sts_enforce": "mode: enforce, max_age 604800"}
    assert result.details["mta_sts"]["policy"]["mode"] == "enforce"


def test_a_policy_larger_than_64_kib_is_invalid() -> None:
    # The scan reads the first 64 KiB (fetch/mail_policy.py), as mox does, which refuses a longer policy:
    # what the cut left (the lines senders need came first) was dns.mta_sts_enforce
    head = GOOD_POLICY + "note: " + "x" * (MAX_POLICY_BYTES - len(GOOD_POLICY) - 6)
    note = f"the body is larger than the {MAX_POLICY_BYTES:,} bytes the scanner reads; only its beginning was kept"
    result = check(txt(STS, "v=STSv1; id=1"), chain=policy(head, body_truncated=True, body_note=note))
    assert found(result, "dns.mta_sts") == {
        "dns.mta_sts_invalid": "the policy is larger than 64 KiB, which senders may refuse (RFC 8461 3.3)"
    }


def test_a_policy_the_scan_could_not_read_in_time_is_not_judged() -> None:
    note = "the body did not arrive within the 10 s read budget; only its start was kept"
    result = check(txt(STS, "v=STSv1; id=1"), chain=policy("version: STSv1\r\nmo", body_truncated=True, body_note=note))
    assert found(result, "dns.mta_sts", "check") == {"check.error": f"the MTA-STS policy was not read whole: {note}"}


# -- the _smtp._tls record (RFC 8460 3) --------------------------------------------------------------------------

TLSRPT = f"_smtp._tls.{HOST}"


def test_a_discarded_tls_rpt_record_beside_a_valid_one_leaves_that_one() -> None:
    # it was "2 TLS-RPT records", dns.tlsrpt_invalid
    result = check(txt(TLSRPT, "v=TLSRPTv1", "v=TLSRPTv1; rua=mailto:tls@example.com"))
    assert found(result, "dns.tlsrpt") == {"dns.tlsrpt_present": "v=TLSRPTv1; rua=mailto:tls@example.com"}


def test_a_record_that_only_looks_like_tls_rpt_is_invalid_and_discarded_by_senders() -> None:
    result = check(txt(TLSRPT, "V=TLSRPTv1; rua=mailto:tls@example.com"))
    assert found(result, "dns.tlsrpt") == {
        "dns.tlsrpt_invalid": f"{TLSRPT}: 'V=TLSRPTv1; rua=mailto:tls@example.com' does not begin with v=TLSRPTv1 "
        "and ';', so senders discard it (RFC 8460 3)"
    }


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("v=TLSRPTv1; rua = mailto:tls@example.com", "'rua = mailto:tls@example.com' is not name=value"),
        ("v=TLSRPTv1; RUA=mailto:tls@example.com", "the record has no rua= field (where reports go) (field names"),
        ("v=TLSRPTv1; rua=https://reports.example.com/!x", "'https://reports.example.com/!x' is not a URI"),
    ],
)
def test_a_tls_rpt_record_outside_the_grammar_is_invalid(record, problem) -> None:
    # each was dns.tlsrpt_present, or missing for the capitalised name
    (note,) = found(check(txt(TLSRPT, record)), "dns.tlsrpt").values()
    assert problem in note
    assert list(found(check(txt(TLSRPT, record)), "dns.tlsrpt")) == ["dns.tlsrpt_invalid"]


def test_two_tls_rpt_records_mean_no_reports() -> None:
    result = check(txt(TLSRPT, "v=TLSRPTv1; rua=mailto:a@example.com", "v=TLSRPTv1; rua=mailto:b@example.com"))
    assert found(result, "dns.tlsrpt") == {
        "dns.tlsrpt_invalid": f"2 TLS-RPT records at {TLSRPT}: senders then send no reports (RFC 8460 3)"
    }
