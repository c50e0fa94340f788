"""Request and response bodies (spec sections 2 and 4). These are API shapes, not tables.

Scan results are produced by `ScanReport.to_dict()` and passed through unchanged; the
models for them here document the shape in OpenAPI (`/docs`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from websec_app.email_address import checked_email
from websec_app.scanner import PRO_ONLY_SECTIONS, section
from websec_app.services.payments import PROVIDERS

Grade = Literal["A+", "A", "B", "C", "D", "F"]

# Field bounds (issue 12), checked by the model before any work is done; the whole body is also capped at
# 16 KiB (middleware/request_limits.py), which these fit in with room to spare.
#: The scanner's own bound (scanner/target.py); browsers and CDNs commonly stop near 2 KB as well.
URL_MAX = 2048
#: RFC 5321 section 4.5.3.1: a path of at most 256 octets, so an address of at most 254 characters.
EMAIL_MAX = 254
NAME_MAX = 80  # spec section 8
#: Our tokens and keys are ~47 characters (prefix + 32 random bytes, base64url); provider ids are ~20.
TOKEN_MAX = 128


def _about(key: str, more: str = "") -> str:
    """A report section's description, from the one section table (rules/sections.toml)."""
    entry = section(key)
    pro = " Pro only: a free result omits it." if entry.pro_only else ""
    return f"{entry.description}{pro}{more}"


class _Body(BaseModel):
    # Strict: "url": 123 is a 400, not the string "123". Unknown fields are ignored.
    model_config = ConfigDict(strict=True, extra="ignore")


def _email(value: str) -> str:
    # The one address check of the service (websec_app/email_address.py); InvalidEmail is a ValueError.
    return checked_email(value)


class ScanRequest(_Body):
    url: str = Field(
        max_length=URL_MAX,
        description="Website to scan. If no scheme is given, https:// is prepended.",
        examples=["example.com"],
    )
    one_time_token: str | None = Field(
        default=None,
        max_length=TOKEN_MAX,
        description="A one-time scan token (bought separately, valid 24 hours, single use). With a valid token "
        "the scan is a full Pro scan and does not count against the free daily quota.",
    )


class ProScanRequest(_Body):
    url: str = Field(
        max_length=URL_MAX,
        description="Website to scan. If no scheme is given, https:// is prepended.",
        examples=["example.com"],
    )


class PdfRequest(_Body):
    url: str = Field(max_length=URL_MAX, description="Website to scan.", examples=["example.com"])
    name: str | None = Field(
        default=None,
        max_length=NAME_MAX,
        description="Client or company name shown in the PDF header (at most 80 characters).",
    )


class PayRequest(_Body):
    provider: str = Field(description=f"Payment provider: one of {', '.join(PROVIDERS)}.", examples=[PROVIDERS[0]])
    email: str = Field(
        max_length=EMAIL_MAX, description="Where the compliance PDF is sent.", examples=["you@example.com"]
    )
    url: str = Field(max_length=URL_MAX, description="Website to scan.", examples=["example.com"])

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        if value not in PROVIDERS:
            raise ValueError(f"it must be one of {', '.join(PROVIDERS)}")
        return value

    _check_email = field_validator("email")(_email)


class VerifyOneTimeRequest(_Body):
    payment_id: str = Field(
        min_length=1, max_length=TOKEN_MAX, description="The payment identifier from the provider's redirect URL."
    )
    email: str = Field(
        max_length=EMAIL_MAX, description="Address to send the scan link to.", examples=["you@example.com"]
    )

    _check_email = field_validator("email")(_email)


class GenerateRequest(_Body):
    token: str = Field(min_length=1, max_length=TOKEN_MAX, description="Compliance payment token (single use).")
    url: str = Field(max_length=URL_MAX, description="Website to scan.", examples=["example.com"])
    email: str = Field(max_length=EMAIL_MAX, description="Delivery address of the PDF.", examples=["you@example.com"])

    _check_email = field_validator("email")(_email)


# --- responses -----------------------------------------------------------------------------------


class ErrorBody(BaseModel):
    error: str = Field(description="What went wrong, in one or two sentences.")


class KeyCheckResult(BaseModel):
    """Spec 2.5."""

    valid: bool = Field(description="True: the key exists and is active (invalid keys get 403).")
    plan: str = Field(description="Subscription plan name.", examples=["pro"])


class UsageResult(BaseModel):
    """Spec 2.6."""

    valid: bool = Field(description="True: the key is active (invalid keys get 403).")
    email: str = Field(description="Email address the key belongs to.")
    plan: str = Field(description="Subscription plan name.", examples=["pro"])
    scans_used: int = Field(description="Scans consumed this calendar month (UTC).")
    scans_limit: int = Field(description="Monthly limit of the plan (50 for Pro).")


class PayResult(BaseModel):
    """Spec 4.6. Provider A (razorpay): order_id, amount, key, token. Provider B (stripe): `{"checkout_url": ...}`."""

    model_config = ConfigDict(extra="allow")

    order_id: str | None = Field(default=None, description="Provider A order id for its checkout script.")
    amount: int | None = Field(default=None, description="Amount in minor units (provider A: paise; 24900 = 249 INR).")
    key: str | None = Field(default=None, description="Provider A publishable key.")
    checkout_url: str | None = Field(
        default=None,
        description="Provider B (stripe): the hosted checkout page to redirect to; the token is emailed after "
        "payment. In the development sandbox also given for provider A.",
    )
    sandbox: bool | None = Field(
        default=None, description="True in the development sandbox (no real money); absent with real providers."
    )
    token: str | None = Field(
        default=None,
        description="Compliance payment token for the generate endpoint "
        "(provider A; provider B emails it after payment).",
    )


class VerifyOneTimeResult(BaseModel):
    ok: bool = Field(description="True on success.")
    token: str = Field(description="One-time scan token, valid 24 hours, single use.")


class GenerateResult(BaseModel):
    ok: bool = Field(description="True on success.")
    message: str = Field(description="Human-readable status.")


class IssueCounts(BaseModel):
    """Spec 2.1: the findings this result shows whose status is not good (check.error excluded), by severity."""

    critical: int = Field(description="Shown findings of severity critical.")
    important: int = Field(description="Shown findings of severity important.")
    minor: int = Field(description="Shown findings of severity minor.")
    total: int = Field(description="critical + important + minor: every finding this result shows.")
    locked: int = Field(
        default=0,
        description=f"Findings in the sections a free result hides ({', '.join(PRO_ONLY_SECTIONS)}), not counted "
        "above; 0 for a Pro result. An addition to the spec.",
    )


class FixSnippets(BaseModel):
    """The fix written for each server, paste-ready (issue 15). A header object's snippet sets its header to
    the `fix` value (Content-Security-Policy as Content-Security-Policy-Report-Only first); where the fix is
    not made in that server (DNS records, certificate renewal, page content) the text is one sentence saying
    where it is made and what to add."""

    nginx: str = Field(description="nginx configuration (server {} block unless its first comment says otherwise).")
    apache: str = Field(description="Apache httpd configuration (mod_headers; server config or <VirtualHost>).")
    caddy: str = Field(description="Caddyfile lines for the site block.")
    iis: str = Field(description="IIS web.config fragment to merge, or where Windows configures it.")
    express: str = Field(description="Express JavaScript (helmet where helmet has the header).")
    netlify: str = Field(description="Netlify `_headers` rules, or where Netlify does it.")
    vercel: str = Field(description="vercel.json, or where Vercel does it.")
    cloudflare: str = Field(description="A Cloudflare Transform Rule (JSON), a Worker, or the dashboard setting.")


_SNIPPETS_ABOUT = (
    "The same fix as paste-ready snippets for nginx, Apache, Caddy, IIS, Express, Netlify, Vercel and "
    "Cloudflare; null exactly where `fix` is null. An addition to the spec."
)
_FIX_NOTE_ABOUT = (
    "How to apply this site's fix, in sentences: for Content-Security-Policy what the proposed policy allows "
    "and leaves out and how to roll it out (Report-Only first); for a cookie finding whose snippets cannot name "
    "all its cookies, how many they leave out. Null where `fix` is null (so in a free result "
    "without full=1) and where the fix needs no such advice. An addition to the spec."
)

_FAMILIES_ABOUT = (
    "In the dns section, every family of lookups that decides this finding, its own first (addresses, ipv6, "
    "cnames, mx, mx_hosts, spf, dmarc, dmarc_reports, dkim, dnssec, caa, mta_sts, tls_rpt: dns.dkim_missing "
    "names dkim, mx and spf); on a check.error, the families its failed lookups left unchecked, so a reader "
    "knows which findings it may hide: those naming one of them. Null in other sections (a check that could "
    "not run there may hide any finding of its section) and in reports made before it was added. An addition "
    "to the spec."
)

_NOTES_ABOUT = (
    'The notes `note` joins with "; ", one by one (a note may hold a "; " of its own, so the joined string '
    "cannot be split back): show them one a line. Empty when `note` is null. Absent from reports made before it "
    "was added. An addition to the spec."
)

_NOT_LISTED_ABOUT = (
    "How many more distinct subjects the finding has than `subjects` lists (it lists at most 50, within 4,096 "
    "characters as the report stores them): 0 when the "
    "list is whole. A subject missing from a list that was cut may be one of these, so a diff calls it neither "
    "new nor fixed. Absent from reports made before it was added. An addition to the spec."
)


class HeaderResult(BaseModel):
    """Spec 2.3: one entry of `headers`, keyed by header name (e.g. Content-Security-Policy)."""

    present: bool = Field(description="The header was sent by the server.")
    value: str | None = Field(description="Raw header value; null if absent.")
    status: Literal["good", "missing", "weak", "warn", "bad"]
    severity: Literal["critical", "important", "minor"]
    deduction: int = Field(description="Points deducted from the score (0 if good).")
    explanation: str = Field(description="Plain-language explanation of the header.")
    fix: str | None = Field(description="Recommended value (Pro scan, or free scan with full=1; otherwise null).")
    fix_snippets: FixSnippets | None = Field(default=None, description=_SNIPPETS_ABOUT)
    fix_note: str | None = Field(default=None, description=_FIX_NOTE_ABOUT)
    note: str | None = Field(description="Extra context when status is weak or warn.")
    notes: list[str] = Field(default_factory=list, description=_NOTES_ABOUT)


class Finding(BaseModel):
    check: str = Field(description="Stable outcome id, e.g. tls.expired.")
    status: Literal["good", "missing", "weak", "warn", "bad"]
    severity: Literal["critical", "important", "minor"]
    deduction: int
    explanation: str
    fix: str | None = Field(description="How to fix it (stripped in free scans without full=1).")
    fix_snippets: FixSnippets | None = Field(default=None, description=_SNIPPETS_ABOUT)
    fix_note: str | None = Field(default=None, description=_FIX_NOTE_ABOUT)
    cwe: str | None = None
    subjects: list[str] = Field(default_factory=list, description="What the finding is about (cookie names, ...).")
    subjects_not_listed: int = Field(default=0, description=_NOT_LISTED_ABOUT)
    note: str | None = None
    notes: list[str] = Field(default_factory=list, description=_NOTES_ABOUT)
    families: list[str] | None = Field(default=None, description=_FAMILIES_ABOUT)


class Section(BaseModel):
    """A report section: its worst status, total deduction, findings, plus section-specific details."""

    model_config = ConfigDict(extra="allow")

    status: Literal["good", "missing", "weak", "warn", "bad"]
    deduction: int
    findings: list[Finding]


class Grading(BaseModel):
    algorithm_version: str = Field(description="Version of the scoring algorithm (docs/scoring.md).")
    uncapped_score: int
    caps: list[dict[str, str]] = Field(description="Grade caps applied (outcome, max_grade).")


class _ScanResultBase(BaseModel):
    url: str = Field(description="Normalised URL that was scanned.")
    final_url: str = Field(description="URL after redirects.")
    status_code: int = Field(description="HTTP status of the final response.")
    grade: Grade
    score: int = Field(ge=0, le=100)
    headers: dict[str, HeaderResult] = Field(description=_about("headers", " Keyed by header name."))
    tls: Section = Field(description=_about("tls"))
    dns: Section = Field(description=_about("dns"))
    security_txt: Section = Field(description=_about("security_txt"))
    cors: Section = Field(description=_about("cors"))
    server_fingerprint: Section = Field(description=_about("server_fingerprint"))
    page_analysis: Section = Field(description=_about("page_analysis"))
    redirection: Section | None = Field(default=None, description=_about("redirection", " (An addition to the spec.)"))
    grading: Grading | None = None
    scanned_at: str | None = Field(default=None, description="ISO 8601 UTC time of the scan.")
    duration_ms: int | None = None


class FreeScanResult(_ScanResultBase):
    """Spec 2.1: `pro_locked` true, no cookies / cross_origin, fix values null unless `full=1`."""

    pro_locked: Literal[True]
    issue_counts: IssueCounts


class ProScanResult(_ScanResultBase):
    """Spec 2.2 (also the free endpoint's answer with a valid one_time_token): `pro_locked` false, fixes included."""

    pro_locked: Literal[False]
    issue_counts: IssueCounts | None = Field(default=None, description="Counts of issues (also given here).")
    cookies: Section = Field(description=_about("cookies"))
    cross_origin: dict[str, Any] = Field(description=_about("cross_origin", " Header objects plus findings."))


__all__ = [
    "ErrorBody",
    "FreeScanResult",
    "GenerateRequest",
    "GenerateResult",
    "KeyCheckResult",
    "PayRequest",
    "PayResult",
    "PdfRequest",
    "ProScanRequest",
    "QueuedScan",
    "ScanJobStatus",
    "ScanRequest",
    "ScansAccepted",
    "ScansRequest",
    "UsageResult",
    "VerifyOneTimeRequest",
    "VerifyOneTimeResult",
    "WebhookResult",
]


class WebhookResult(BaseModel):
    """What a provider webhook delivery did (providers only look at the status code)."""

    received: bool = Field(description="True: the event was verified and recorded (or had been before).")
    outcome: str = Field(
        description="fulfilled, already_fulfilled, renewed, status_changed, unchanged, amount_mismatch, revoked, "
        "suspended, reversal_pending (a refund or dispute before its payment was settled here), reversed_before "
        "(a payment whose refund or dispute came first: nothing issued), ignored or duplicate."
    )


# --- async and batch scans (issue 16) --------------------------------------------------------------------

#: The most URLs one POST /api/scans takes (usecases/jobs.MAX_BATCH).
BATCH_MAX = 50


class ScansRequest(_Body):
    """`url` or `urls` (not both), and an optional `callback_url`."""

    url: str | None = Field(default=None, max_length=URL_MAX, description="One website to scan.")
    urls: list[Annotated[str, Field(max_length=URL_MAX)]] | None = Field(
        default=None, min_length=1, max_length=BATCH_MAX, description=f"Up to {BATCH_MAX} websites to scan."
    )
    callback_url: str | None = Field(
        default=None,
        max_length=URL_MAX,
        description="Where each finished job is POSTed (the body of GET /api/scans/{id}), signed with "
        "HMAC-SHA256 over the body in `X-Websec-Signature: sha256=<hex>`. Public http(s) addresses only.",
    )

    @model_validator(mode="after")
    def _one_of(self) -> ScansRequest:
        if (self.url is None) == (self.urls is None):
            raise ValueError("the request body must give 'url' or 'urls', not both")
        return self

    @property
    def targets(self) -> list[str]:
        return [self.url] if self.url is not None else list(self.urls or [])


class QueuedScan(BaseModel):
    id: str = Field(description="The job id: GET /api/scans/{id}.")
    url: str = Field(description="The URL as given.")


class ScansAccepted(BaseModel):
    jobs: list[QueuedScan] = Field(description="One job per URL, in the order given.")
    callback_secret: str | None = Field(
        default=None,
        description="The key's callback signing secret, shown once: in the key's first answer with a callback_url "
        "(this or POST /api/monitors). Keep it; it is never shown again.",
    )


class ScanJobStatus(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed"]
    url: str
    report: ProScanResult | None = Field(default=None, description="When done: the same body as POST /api/scan/pro.")
    error: str | None = Field(default=None, description="When failed: what POST /api/scan/pro would have answered.")
