"""Issue 15: PDFs a client can read. Text read back with pdftotext (poppler-utils), fonts with pdffonts.

A real scan of the worst fixture site feeds most tests; a few edits to its body add what the site does
not send (a long CSP, fix snippets) so wrapping and snippets are seen on the real report shape.
"""

from __future__ import annotations

import asyncio
import copy
import re
import subprocess
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from reportlab.lib.pagesizes import A4

from tests.clock import TEST_NOW
from tests.fixtures.sites import RunningSite
from tests.pdf_text import pdf_pages
from websec_app.scanner import scan
from websec_app.scanner.fixes import SERVERS
from websec_app.scanner.rules import default_rulebook
from websec_app.scanner.rules.titles import plain_title, plain_titles
from websec_app.services.compliance import assess
from websec_app.services.pdf import _fonts, _layout, render_compliance_pdf, render_scan_pdf
from websec_app.services.pdf._layout import MARGIN
from websec_app.settings import Settings

LONG_TOKEN = "sha256-" + "Q" * 300  # no space anywhere: must wrap inside the token, whole


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def embedded_fonts(data: bytes, tmp_path: Any) -> str:
    path = tmp_path / "fonts.pdf"
    path.write_bytes(data)
    return subprocess.run(["pdffonts", str(path)], capture_output=True, check=True, text=True, timeout=60).stdout


@pytest.fixture(scope="module")
def worst(worst_site: RunningSite, scan_settings: Settings) -> dict[str, Any]:
    """The worst site's Pro body, plus a long CSP value and fix snippets on two findings."""
    report = asyncio.run(scan(worst_site.url, scan_settings)).to_dict(pro=True, include_fix=True)
    report["headers"]["Content-Security-Policy"].update(
        present=True, value=f"default-src 'self'; script-src 'self' '{LONG_TOKEN}'"
    )
    report["headers"]["Strict-Transport-Security"]["fix_snippets"] = {
        server: f"# {server} snippet for HSTS" for server in SERVERS
    }
    cookie = next(f for f in report["cookies"]["findings"] if f["check"] == "cookie.session_no_secure")
    cookie["fix_snippets"] = {server: f"# {server} snippet for the session cookie" for server in SERVERS}
    return report


@pytest.fixture(scope="module")
def worst_pdf(worst: dict[str, Any]) -> list[str]:
    return pdf_pages(render_scan_pdf(worst, "Acme GmbH"))


def test_every_outcome_of_the_rule_book_has_a_plain_title() -> None:
    outcomes = set(default_rulebook().rules)
    titles = plain_titles()

    assert outcomes - set(titles) == set(), "outcomes without a title in rules/titles.toml"
    assert set(titles) - outcomes == set(), "titles for outcomes the rule book does not have"
    for outcome, title in titles.items():
        assert title and "`" not in title and outcome not in title and len(title) <= 70, outcome
        assert not re.search(r"\b[a-z]+[._][a-z_]+\b", title), (outcome, title)  # no ids, no field names
    assert plain_title("cookie.session_no_secure") == "Session cookie sent over plain HTTP"
    assert plain_title("tls.some_future_rule") == "Some future rule"  # never the id itself


def _leaks(text: str) -> list[str]:
    found = [outcome for outcome in default_rulebook().rules if outcome in text]
    found += re.findall(r"\b(?:True|False|None)\b", text)
    found += ["`"] if "`" in text else []
    return found


def test_neither_pdf_prints_a_rule_id_a_python_literal_or_a_backtick(worst: dict[str, Any]) -> None:
    scan_text = flat(" ".join(pdf_pages(render_scan_pdf(worst, "Acme GmbH"))))
    compliance_text = flat(" ".join(pdf_pages(render_compliance_pdf(worst))))

    assert _leaks(scan_text) == []
    assert _leaks(compliance_text) == []
    # and the texts that had backticks still print their code, as code
    assert "Access-Control-Allow-Credentials: true" in scan_text


def test_page_one_is_a_summary_a_manager_can_read(worst: dict[str, Any], worst_pdf: list[str]) -> None:
    first = flat(worst_pdf[0])

    assert f"Grade {worst['grade']}, score {worst['score']} / 100." in first
    assert "Issues by severity" in first and "Points lost, by area" in first
    block = first[first.index("Fix these first") :]
    assert len(re.findall(r"\b[1-5] -\d+ pts?\b", block)) == 5  # each with the points it costs
    assert "Any website can read logged-in users' data" in block  # CORS, the biggest loss, in plain words


def test_the_tls_part_has_the_protocol_table_the_suite_and_the_chain(
    worst: dict[str, Any], worst_pdf: list[str]
) -> None:
    text = flat(" ".join(worst_pdf))
    tls = worst["tls"]

    assert "Protocols and cipher suites" in text
    assert re.search(r"Protocol TLS 1\.3 Accepted", text) and re.search(r"Protocol TLS 1\.0 Refused", text)
    assert f"{tls['cipher']} over TLS 1.3" in text and "Strong: forward secrecy and authenticated encryption" in text
    assert "CBC mode (older, padding attacks) Accepted: better refused" in text  # the worst site accepts CBC
    assert "Suite found:" in text
    assert "Certificate chain" in text
    for cert in tls["chain"]:
        assert cert["subject"] in text and cert["not_after"][:10] in text
    assert "EC 256 bits" in text and "SHA256" in text
    assert "OpenSSL" not in text and "pyOpenSSL" not in text  # no raw library strings


def test_a_dhe_suite_over_a_small_group_is_not_called_strong(worst: dict[str, Any]) -> None:
    # Given a server whose browsers get DHE with AEAD over a 1024-bit group (tls.weak_dh caps it at B)
    body = copy.deepcopy(worst)
    body["tls"].update(protocol="TLSv1.2", cipher="DHE-RSA-AES128-GCM-SHA256", cipher_bits=128, key_exchange_group=None)
    body["tls"]["dh_group"] = {
        "prime_bits": 1024,
        "protocol": "TLSv1.2",
        "cipher": "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
    }

    text = flat(" ".join(pdf_pages(render_scan_pdf(body, "Acme GmbH"))))

    # Then the suite's line names the group and says what it lacks, and the group has a readable label
    assert "DHE-RSA-AES128-GCM-SHA256 over TLS 1.2, key exchange a 1024-bit Diffie-Hellman group" in text
    assert "Weaker: lacks a Diffie-Hellman group of at least 2048 bits (it has 1024)" in text
    assert "Strong: forward secrecy" not in text
    assert "Diffie-Hellman group (DHE key exchange) Size (bits): 1024" in text

    # The scan reads the group of any server that accepts DHE: with RSA key exchange negotiated it is not this one's
    body["tls"].update(cipher="AES128-GCM-SHA256")
    text = flat(" ".join(pdf_pages(render_scan_pdf(body, "Acme GmbH"))))
    assert "AES128-GCM-SHA256 over TLS 1.2" in text
    assert "key exchange a 1024-bit Diffie-Hellman group" not in text


def _chain_table(body: dict[str, Any]) -> str:
    """The certificate chain's table as pdftotext reads it (up to the TLS findings' table)."""
    text = flat(" ".join(pdf_pages(render_scan_pdf(body, "Acme GmbH"))))
    chain = text.split("Certificate chain", 1)[1]
    return chain.split("Finding and fix", 1)[0]


def test_the_site_certificates_key_usage_is_printed_under_its_key(worst: dict[str, Any]) -> None:
    # Given the worst site's leaf (EC), whose Key Usage allows digitalSignature only
    assert worst["tls"]["certificate"]["key_usage"] == ["digitalSignature"]

    # Then the site certificate's row of the chain table says so, once (the authorities' rows list no usage)
    assert _chain_table(worst).count("Key usage: digitalSignature") == 1

    # And a leaf whose Key Usage forbids the signed key exchange shows every use it lists
    body = copy.deepcopy(worst)
    body["tls"]["certificate"]["key_usage"] = ["nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement"]
    squeezed = re.sub(r"\s+", "", _chain_table(body))
    assert "Keyusage:nonRepudiation,keyEncipherment,dataEncipherment,keyAgreement" in squeezed

    # A leaf without the extension: every use allowed, said so
    body["tls"]["certificate"]["key_usage"] = None
    squeezed = re.sub(r"\s+", "", _chain_table(body))
    assert "Keyusage:Everyuse:thecertificatehasnoKeyUsageextension" in squeezed

    # A report stored before the field says nothing either way
    del body["tls"]["certificate"]["key_usage"]
    assert "Key usage" not in _chain_table(body)


def test_the_site_certificates_purposes_are_printed_under_its_key(worst: dict[str, Any]) -> None:
    # Given the worst site's leaf, for web servers (Extended Key Usage serverAuth): its row of the chain says so, once
    assert worst["tls"]["certificate"]["extended_key_usage"] == ["serverAuth"]
    assert _chain_table(worst).count("Purposes: serverAuth") == 1

    # And a client certificate served as the site's shows what it is for; one without the extension, any purpose
    body = copy.deepcopy(worst)
    body["tls"]["certificate"]["extended_key_usage"] = ["clientAuth", "emailProtection"]
    assert "Purposes:clientAuth,emailProtection" in re.sub(r"\s+", "", _chain_table(body))
    body["tls"]["certificate"]["extended_key_usage"] = None
    squeezed = re.sub(r"\s+", "", _chain_table(body))
    assert "Purposes:Anypurpose:thecertificatehasnoExtendedKeyUsageextension" in squeezed
    del body["tls"]["certificate"]["extended_key_usage"]  # a report stored before the field
    assert "Purposes" not in _chain_table(body)


def test_the_appendix_has_the_redirect_chain_and_the_raw_headers(worst_pdf: list[str]) -> None:
    appendix = flat(" ".join(worst_pdf)).split("Appendix: redirects and raw response headers", 1)[1]

    assert "Response 1 (final response): 200 https://worst.test/" in appendix
    assert "X-Powered-By: PHP/7.4.3" in appendix and "Set-Cookie: sessionid=xyz; Path=/" in appendix
    assert "The plain-HTTP address" in appendix and "http://worst.test/" in appendix


def test_a_long_value_wraps_whole_inside_its_box(worst: dict[str, Any], worst_pdf: list[str]) -> None:
    squeezed = re.sub(r"\s+", "", " ".join(worst_pdf))
    boxes = subprocess.run(
        ["pdftotext", "-bbox", "-", "-"], input=render_scan_pdf(worst, "Acme GmbH"), capture_output=True, timeout=60
    ).stdout.decode("utf-8")

    assert LONG_TOKEN in squeezed  # nothing cut off, no ellipsis
    right_edges = [float(x) for x in re.findall(r'xMax="([\d.]+)"', boxes)]
    assert right_edges and max(right_edges) <= A4[0] - MARGIN + 1  # nothing runs past the right margin


def test_the_fix_snippet_is_the_detected_servers(worst: dict[str, Any], worst_pdf: list[str]) -> None:
    text = flat(" ".join(worst_pdf))

    # The worst site says "Server: Apache/2.4.41": its snippets, and no other server's
    assert "For your server (Apache httpd):" in text
    assert "# apache snippet for HSTS" in text and "# apache snippet for the session cookie" in text
    assert "# nginx snippet" not in text


def test_without_a_detected_server_nginx_is_shown_and_the_others_pointed_to(worst: dict[str, Any]) -> None:
    report = copy.deepcopy(worst)
    for hop in report["redirection"]["main_chain"]:
        hop["headers"] = [h for h in hop["headers"] if h[0].lower() not in ("server", "x-powered-by")]

    text = flat(" ".join(pdf_pages(render_scan_pdf(report, "Acme"))))

    assert "# nginx snippet for HSTS" in text and "# apache snippet" not in text
    assert "your server was not recognised" in text and "in the web report and the JSON" in text


def _without_snippets(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_snippets(v) for k, v in value.items() if k != "fix_snippets"}
    if isinstance(value, list):
        return [_without_snippets(v) for v in value]
    return value


def test_an_older_report_without_snippets_or_raw_headers_still_renders(worst: dict[str, Any]) -> None:
    report = _without_snippets(worst)
    for hop in report["redirection"]["main_chain"]:
        hop.pop("headers")

    text = flat(" ".join(pdf_pages(render_scan_pdf(report, "Acme"))))

    assert "For your server" not in text and "not recognised" not in text
    assert "No headers were recorded for this response." in text
    assert "Session cookie sent over plain HTTP" in text


def _pages_with(pages: list[str], predicate: Any) -> int:
    return sum(1 for page in pages if predicate(page))


def test_a_chinese_name_is_on_every_page(worst: dict[str, Any]) -> None:
    name = "示例科技有限公司"

    pages = pdf_pages(render_scan_pdf(worst, name))

    assert len(pages) > 3
    assert _pages_with(pages, lambda page: f"Prepared for {name}" in page) == len(pages)


def test_a_hindi_name_is_shaped_and_on_every_page(worst: dict[str, Any]) -> None:
    name = "राम शर्मा एंड संस"

    pages = pdf_pages(render_scan_pdf(worst, name))

    # Words without conjuncts come back as typed; "शर्मा" is drawn with its र्म conjunct glyph, which has
    # no single character to map back to, so a text layer of the shaped word never equals the typed
    # word. Unshaped (broken) Devanagari would extract exactly as typed.
    assert _pages_with(pages, lambda page: "Prepared for राम श" in page and "एंड संस" in page) == len(pages)
    assert all("शर्मा" not in page for page in pages)


def test_an_arabic_name_is_joined_right_to_left_and_on_every_page(worst: dict[str, Any]) -> None:
    name = "شركة المثال للتجارة"

    pages = pdf_pages(render_scan_pdf(worst, name))

    # pdftotext returns what is drawn: joined letter forms (Arabic presentation forms, proof of shaping)
    # and the words in visual order, each word read right to left. Folded back with NFKC, each word is
    # the typed word, and the words run right to left: the typed order reversed.
    def has_name(page: str) -> bool:
        line = next((ln for ln in page.splitlines() if "Prepared for" in ln), "")
        drawn = line.split("Prepared for", 1)[1].strip("\u202a\u202b\u202c\u200f\u200e ")
        joined = any("\ufb50" <= c <= "\ufeff" for c in drawn)
        words = unicodedata.normalize("NFKC", drawn).split()
        return joined and words == list(reversed(name.split()))

    assert _pages_with(pages, has_name) == len(pages)


# A client's name in each script the fallbacks cover, and the font its letters must come from.
NAMES_BY_SCRIPT = [
    ("한국 보안 주식회사", "NanumGothic"),  # Droid Sans Fallback has no Hangul syllables
    ("தமிழ் நிறுவனம்", "NotoSansTamil"),
    ("বাংলা কোম্পানি", "NotoSansBengali"),
    ("తెలుగు సంస్థ", "NotoSansTelugu"),
    ("ಕನ್ನಡ ಕಂಪನಿ", "NotoSansKannada"),
    ("മലയാളം കമ്പനി", "NotoSansMalayalam"),
    ("ગુજરાતી કંપની", "NotoSansGujarati"),
    ("ਪੰਜਾਬੀ ਕੰਪਨੀ", "NotoSansGurmukhi"),
    ("ଓଡ଼ିଆ କମ୍ପାନୀ", "NotoSansOriya"),
    ("සිංහල සමාගම", "NotoSansSinhala"),
    ("Հայկական ընկերություն", "NotoSansArmenian"),
    ("ქართული კომპანია", "NotoSansGeorgian"),
    ("የኢትዮጵያ ኩባንያ", "NotoSansEthiopic"),
    ("ក្រុមហ៊ុនខ្មែរ", "NotoSansKhmer"),
    ("မြန်မာကုမ္ပဏီ", "NotoSansMyanmar"),
    ("ບໍລິສັດລາວ", "NotoSansLao"),
]


@pytest.mark.parametrize(("name", "font"), NAMES_BY_SCRIPT, ids=[font for _, font in NAMES_BY_SCRIPT])
def test_a_name_in_any_script_is_drawn_in_a_font_that_has_it(name: str, font: str, tmp_path: Any) -> None:
    data = render_scan_pdf({"url": "https://example.com/", "grade": "B", "score": 71}, name)

    first_page = pdf_pages(data)[0]

    # No letter became "?" (a font with no glyph for it), and the script's own font is embedded. Shaped
    # clusters (conjuncts, reordered vowel signs) do not copy back as typed, so the text is not compared.
    assert "Prepared for" in first_page and "?" not in first_page
    assert font in embedded_fonts(data, tmp_path)


def test_an_emoji_is_drawn_in_black_and_white_from_symbola(worst: dict[str, Any], tmp_path: Any) -> None:
    data = render_scan_pdf(worst, "Café Ünïcode 😀")

    pages = pdf_pages(data)

    # reportlab cannot draw colour emoji; Symbola's outline glyph is embedded and drawn. (reportlab's
    # text layer maps characters beyond U+FFFF wrongly, so the emoji itself does not copy back.)
    assert _pages_with(pages, lambda page: "Prepared for Café Ünïcode" in page) == len(pages)
    assert "Symbola" in embedded_fonts(data, tmp_path)


@pytest.fixture
def no_fonts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As on a machine without the font packages: every font file missing."""
    missing = _fonts.Path("/nonexistent/font.ttf")
    monkeypatch.setattr(_fonts, "_SANS", (("NoSans", missing),))
    monkeypatch.setattr(_fonts, "_SANS_BOLD", (("NoSansBold", missing),))
    monkeypatch.setattr(_fonts, "_MONO", (("NoMono", missing),))
    monkeypatch.setattr(_fonts, "_FALLBACKS", (("NoFallback", missing),))
    _fonts.fonts.cache_clear()
    _layout._FRAME_STYLES.clear()
    _layout._SHAPED_STYLES.clear()
    yield
    monkeypatch.undo()
    _fonts.fonts.cache_clear()
    _layout._FRAME_STYLES.clear()
    _layout._SHAPED_STYLES.clear()


def test_without_the_font_packages_the_pdf_still_renders_with_question_marks(
    worst: dict[str, Any], no_fonts: None, tmp_path: Any
) -> None:
    data = render_scan_pdf(worst, "Acme 示例 राम")

    pages = pdf_pages(data)

    assert _pages_with(pages, lambda page: "Prepared for Acme ?? ??" in page) == len(pages)  # marks dropped
    fonts = embedded_fonts(data, tmp_path)
    assert "Helvetica" in fonts and "Noto" not in fonts and "Symbola" not in fonts


def test_every_compliance_row_says_why_in_one_sentence_with_plain_titles(worst: dict[str, Any]) -> None:
    assessment = assess(worst)
    text = flat(" ".join(pdf_pages(render_compliance_pdf(worst))))

    rows = sum(len(result.requirements) for result in assessment.frameworks)
    sentences = re.findall(r"(Fails because the scan found: |Partly met: |Passes: the \d+ related |Not tested: )", text)
    assert len(sentences) == rows
    assert "Fails because the scan found: No Content Security Policy" in text  # OWASP A03
    a01 = text[text.index("A01:2021 Broken Access Control") : text.index("A02:2021 Cryptographic")]
    assert "Any website can read logged-in users' data" in a01
    assert "referrer" not in a01.lower()  # the review moved Referrer-Policy to A05


def test_library_error_strings_are_said_in_plain_words(worst: dict[str, Any]) -> None:
    report = copy.deepcopy(worst)
    report["tls"].update(
        trusted=False,
        verify_error="unable to get local issuer certificate",
        not_testable=["SSLv3: OpenSSL 3.0.15 3 Sep 2024 was built without SSL 3.0 support (no-ssl3)"] * 2,
    )

    text = flat(" ".join(pdf_pages(render_scan_pdf(report, "Acme"))))

    assert "The issuer is not an authority browsers trust, or an intermediate is missing" in text
    assert "unable to get local issuer" not in text and "OpenSSL" not in text
    assert "Not tested by this scan" in text and text.count("SSL 3.0;") + text.count("SSL 3.0.") >= 1


def test_a_findings_several_notes_are_printed_one_a_line_in_both_pdfs(
    worst: dict[str, Any], worst_pdf: list[str]
) -> None:
    # Given the worst site's CORS reflection, which echoed four origins: one finding, a note for each echo (the
    # first with a "; " of its own: joined, they read as one run-on list)
    notes = worst["cors"]["findings"][0]["notes"]
    assert len(notes) == 4 and "; " in notes[0]
    compliance = pdf_pages(render_compliance_pdf(worst, now=TEST_NOW))
    for pages in (worst_pdf, compliance):
        lines = "\n".join(pages).splitlines()
        # Then "Observed:" stands alone on its line, each echo after it starts a line of its own behind a bullet
        at = next(i for i, line in enumerate(lines) if line.startswith(f"• {notes[0][:40]}"))
        assert lines[at - 1] == "Observed:"
        for note in notes[1:]:
            assert any(line.startswith(f"• {note[:40]}") for line in lines[at:]), note
        # and no line holds two of them
        assert not any(line.count("was echoed with") > 1 for line in lines)
