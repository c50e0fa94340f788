"""The evidence parts of the scan PDF: the TLS table, the certificate chain, the redirect chain and
the raw response headers, and the fix snippet for the site's own server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, Paragraph

from websec_app.scanner.fixes import SERVER_LABELS, SERVERS
from websec_app.scanner.snapshot import dhe_suite
from websec_app.wording import key_usage_words, purpose_words

from ._layout import CONTENT_WIDTH, STATUS_COLOURS, badge, code, mono_box, para, prose, table, text
from ._wording import (
    CIPHER_FAMILY_LABELS,
    PROBE_RESULTS,
    PROTOCOL_VERDICT,
    cipher_strength,
    probe_name,
)

#: Most raw headers printed per response (a hostile site may send hundreds).
MAX_RAW_HEADERS = 80


def _cell(markup: str, st: dict[str, Any], style: str = "cell") -> Paragraph:
    return para(markup, st[style])


def _probe_badge(result: str, verdict_if_accepted: str) -> str:
    if result == "accepted":
        colour = STATUS_COLOURS.get(verdict_if_accepted, STATUS_COLOURS["warn"]).hexval()
        advice = {"bad": ": should be refused", "weak": ": better refused", "warn": ": better refused"}
        return f'<font color="{colour}"><b>Accepted</b></font>{text(advice.get(verdict_if_accepted, ""))}'
    if result == "rejected":
        return text(PROBE_RESULTS["rejected"])
    return text(PROBE_RESULTS.get(result, result.replace("_", " ")))


def tls_tables(tls: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    """Protocols accepted/refused, the negotiated suite and its strength, the weak cipher families,
    and the certificate chain (SSL Labs shows the same)."""
    story: list[Flowable] = []
    rows: list[list[Any]] = [[_cell(f"<b>{h}</b>", st) for h in ("What was tested", "Result")]]
    protocols = tls.get("protocols")
    if isinstance(protocols, Mapping):
        for name, result in protocols.items():
            verdict = PROTOCOL_VERDICT.get(str(name), "warn")
            rows.append(
                [_cell(f"Protocol {text(probe_name(str(name)))}", st), _cell(_probe_badge(str(result), verdict), st)]
            )
    if tls.get("protocol") or tls.get("cipher"):
        group = tls.get("dh_group")
        dh_bits = group.get("prime_bits") if isinstance(group, Mapping) else None
        verdict, words = cipher_strength(tls.get("protocol"), tls.get("cipher"), tls.get("cipher_bits"), dh_bits)
        negotiated = f"{code(tls.get('cipher') or 'none')} over {text(probe_name(str(tls.get('protocol') or '')))}"
        if tls.get("key_exchange_group"):
            negotiated += f", key exchange {code(tls.get('key_exchange_group'))}"
        elif isinstance(dh_bits, int) and dhe_suite(tls.get("cipher")):  # the DHE suites' group, not this one's
            negotiated += f", key exchange a {dh_bits}-bit Diffie-Hellman group"
        rows.append(
            [
                _cell("Connection a browser gets", st),
                _cell(f"{negotiated}<br/>{badge(verdict)} {text(words)}", st),
            ]
        )
    families = tls.get("weak_cipher_families")
    if isinstance(families, Mapping):
        for name, result in families.items():
            family_label, verdict = CIPHER_FAMILY_LABELS.get(str(name), (probe_name(str(name)), "warn"))
            found = ""
            if result == "accepted":
                suites = [
                    f.get("subjects") or []
                    for f in tls.get("findings") or []
                    if isinstance(f, Mapping) and str(f.get("check", "")).endswith(f"cipher_{name}")
                ]
                names = [str(s) for group in suites for s in group]
                if names:
                    found = "<br/>Suite found: " + ", ".join(code(n) for n in names[:4])
            rows.append(
                [_cell(f"Weak suites: {text(family_label)}", st), _cell(_probe_badge(str(result), verdict) + found, st)]
            )
    if len(rows) > 1:
        story += [
            CondPageBreak(60 * mm),
            para("Protocols and cipher suites", st["h3"]),
            table(rows, [70 * mm, CONTENT_WIDTH - 70 * mm]),
        ]
    untested = _not_tested(tls.get("not_testable"))
    if untested:
        story.append(
            para(
                "Not tested by this scan (the scanner's TLS library cannot offer them, or they cannot be seen from "
                "outside): " + text("; ".join(untested)) + ".",
                st["muted"],
            )
        )
    chain = tls.get("chain")
    if isinstance(chain, list) and chain:
        certificate = tls.get("certificate")
        usages = (key_usage_words(certificate), purpose_words(certificate)) if isinstance(certificate, Mapping) else ()
        story += [CondPageBreak(40 * mm), para("Certificate chain", st["h3"]), chain_table(chain, st, *usages)]
        if tls.get("chain_complete") is False:
            story.append(para("The server does not send every intermediate certificate.", st["small"]))
    return story


def _not_tested(items: Any) -> list[str]:
    """The names of what could not be tested, once each: "SSLv3: <OpenSSL detail>" -> "SSL 3.0"."""
    if not isinstance(items, list):
        return []
    names: list[str] = []
    for item in items:
        head = str(item).split(":", 1)[0].strip()
        head = head.split(" (", 1)[0]
        name = probe_name(head) if len(head) < 20 else head
        if name and name not in names:
            names.append(name)
    return names


def chain_table(chain: list[Any], st: dict[str, Any], key_usage: str = "", purposes: str = "") -> Flowable:
    """`key_usage` and `purposes`: the site certificate's Key Usage and Extended Key Usage, in words
    (wording.key_usage_words, purpose_words), printed under its key: the reader of tls.cert_key_usage, or of a
    certificate not for web servers, sees what the certificate allows."""
    rows: list[list[Any]] = [
        [_cell(f"<b>{h}</b>", st) for h in ("#", "Certificate (subject)", "Issued by", "Expires", "Key, signature")]
    ]
    for number, cert in enumerate(chain, start=1):
        if not isinstance(cert, Mapping):
            continue
        role = "Site certificate" if number == 1 else ("Authority" if cert.get("is_ca") else "Certificate")
        key = " ".join(str(v) for v in (cert.get("key_type"), cert.get("key_size")) if v)
        if cert.get("key_size"):
            key += " bits"
        signature = str(cert.get("signature_hash") or "").upper()
        usage = f"<br/><font color='#656d76'>Key usage:</font> {text(key_usage)}" if number == 1 and key_usage else ""
        if number == 1 and purposes:
            usage += f"<br/><font color='#656d76'>Purposes:</font> {text(purposes)}"
        rows.append(
            [
                _cell(str(number), st),
                _cell(f"{text(cert.get('subject'))}<br/><font color='#656d76'>{text(role)}</font>", st),
                _cell(text(cert.get("issuer")), st),
                _cell(text(str(cert.get("not_after") or "")[:10]), st),
                _cell(f"{text(key)}<br/>{text(signature)}{usage}", st),
            ]
        )
    return table(rows, [8 * mm, 55 * mm, 55 * mm, 22 * mm, CONTENT_WIDTH - 140 * mm])


def redirect_appendix(report: Mapping[str, Any], st: dict[str, Any]) -> list[Flowable]:
    """The redirect chain(s) and every hop's raw response headers, in wire order, final hop last."""
    redirection = report.get("redirection")
    if not isinstance(redirection, Mapping):
        return []
    story: list[Flowable] = []
    for key, title in (("main_chain", "The address scanned"), ("http_chain", "The plain-HTTP address")):
        chain = redirection.get(key)
        if not isinstance(chain, list) or not chain:
            continue
        hops = [hop for hop in chain if isinstance(hop, Mapping)]
        story.append(para(f"{title}: {len(hops)} response{'s' if len(hops) != 1 else ''}", st["h2"]))
        steps = " → ".join(f"{text(hop.get('url'))} ({text(hop.get('status_code'))})" for hop in hops)
        story.append(para(steps, st["small"]))
        for number, hop in enumerate(hops, start=1):
            last = " (final response)" if number == len(hops) else ""
            story.append(
                para(f"Response {number}{last}: {text(hop.get('status_code'))} {text(hop.get('url'))}", st["h3"])
            )
            headers = hop.get("headers")
            if not isinstance(headers, list) or not headers:
                story.append(para("No headers were recorded for this response.", st["small"]))
                continue
            lines = [
                f"{pair[0]}: {pair[1]}"
                for pair in headers[:MAX_RAW_HEADERS]
                if isinstance(pair, list | tuple) and len(pair) == 2
            ]
            if len(headers) > MAX_RAW_HEADERS:
                lines.append(f"… and {len(headers) - MAX_RAW_HEADERS} more headers")
            story.append(mono_box("\n".join(lines), st, CONTENT_WIDTH - 12))
    if not story:
        return []
    return [
        para("Appendix: redirects and raw response headers", st["h1"]),
        para(
            "Every response the scan received on its way to the page, with the headers exactly as the server sent "
            "them (in order, repeated headers kept).",
            st["small"],
        ),
        *story,
    ]


def snippet_part(item: Mapping[str, Any], server: str | None, st: dict[str, Any], width: float) -> list[Flowable]:
    """The detected server's paste-ready snippet (nginx's when the server is unknown); nothing when the
    report predates `fix_snippets`."""
    snippets = item.get("fix_snippets")
    if not isinstance(snippets, Mapping):
        return []
    chosen = server if server in SERVERS and snippets.get(server) else "nginx"
    snippet = snippets.get(chosen)
    if not isinstance(snippet, str) or not snippet.strip():
        return []
    if server in SERVERS and chosen == server:
        caption = f"For your server ({text(SERVER_LABELS[chosen])}):"
    else:
        caption = (
            f"For {text(SERVER_LABELS[chosen])} (your server was not recognised; Apache, Caddy, IIS, Express, "
            "Netlify, Vercel and Cloudflare versions are in the web report and the JSON):"
        )
    fix = str(item.get("fix") or "").strip()
    if snippet.startswith("Done ") and fix and fix in snippet and len(snippet) - len(fix) < 200:
        # Not server configuration ("Done at your DNS provider, not in ...: <the fix>"): the fix is printed
        # just above, so only where to do it.
        where = snippet.replace(fix, "").strip().rstrip(":").strip()
        return [para(f"{caption} {prose(where)}.", st["muted"])] if where else []
    # A fix that is not server configuration (edit the page, say) comes as prose with `code` spans.
    return [mono_box(snippet, st, width, label=caption, as_prose="`" in snippet)]


__all__ = ["MAX_RAW_HEADERS", "chain_table", "redirect_appendix", "snippet_part", "tls_tables"]
