"""One typed settings object, read once from the environment and `.env`.

Every knob of the service lives here so that the scanner, the API, the UI and the
CLI agree on it. Names are part of the operator contract (tests, fixtures and
deployments set them), so they never change silently.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsError(ValueError):
    """A setting has a value the service cannot use."""


def _bool(env: dict[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def _tick_seconds(env: dict[str, str]) -> int:
    seconds = _int(env, "WEBSEC_MONITOR_TICK_SECONDS", 60, 1)
    if 60 % seconds:
        raise SettingsError(f"WEBSEC_MONITOR_TICK_SECONDS must divide 60 (1, 2, 5, 10, 15, 30 or 60), got {seconds}")
    return seconds


def _int(env: dict[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {value}")
    return value


def _port(env: dict[str, str], name: str, default: int) -> int:
    """A TCP port, or 0 for none."""
    port = _int(env, name, default)
    if port > 65535:
        raise SettingsError(f"{name} must be a TCP port (1-65535) or 0, got {port}")
    return port


def _optional_int(env: dict[str, str], name: str) -> int | None:
    """A non-negative integer, or None when unset or empty (the setting's own default applies)."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    return _int(env, name, 0)


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, got {value}")
    return value


@dataclass(frozen=True)
class DnsServer:
    """A resolver the scanner sends every query to."""

    host: str
    port: int = 53

    @classmethod
    def parse(cls, text: str) -> DnsServer:
        text = text.strip()
        host, port = text, 53
        if text.startswith("["):  # [::1]:5353
            close = text.find("]")
            if close < 0:
                raise SettingsError(f"WEBSEC_DNS_SERVERS entry {text!r} has an unclosed '['")
            host, rest = text[1:close], text[close + 1 :]
            if rest:
                if not rest.startswith(":"):
                    raise SettingsError(f"WEBSEC_DNS_SERVERS entry {text!r} is not ip[:port]")
                port = int(rest[1:])
        elif text.count(":") == 1:  # 127.0.0.1:5353
            host, port_text = text.split(":")
            port = int(port_text)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise SettingsError(f"WEBSEC_DNS_SERVERS entry {text!r} is not an IP address") from None
        if not 0 < port < 65536:
            raise SettingsError(f"WEBSEC_DNS_SERVERS entry {text!r} has an invalid port")
        return cls(host, port)


@dataclass(frozen=True)
class ScanLimits:
    """Bounds that keep one scan from hurting the service (hostile targets)."""

    total_seconds: float = 20.0
    connect_seconds: float = 5.0
    read_seconds: float = 8.0
    dns_seconds: float = 4.0
    max_redirects: int = 10
    max_body_bytes: int = 2 * 1024 * 1024
    max_security_txt_bytes: int = 64 * 1024


#: WEBSEC_PAYMENTS_SANDBOX values: `auto` serves each provider without keys from the sandbox in development.
SANDBOX_MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class PaymentSettings:
    """Provider credentials (issue 5). Provider A is Razorpay (INR), provider B is Stripe (USD).

    The base-URL overrides point the official SDKs elsewhere (tests: local stand-ins); empty means the
    providers' own API hosts.
    """

    razorpay_key_id: str = ""
    razorpay_key_secret: str = ""
    razorpay_webhook_secret: str = ""
    razorpay_base_url: str = ""
    stripe_secret_key: str = ""
    stripe_webhook_secret: str = ""
    stripe_api_base: str = ""
    #: auto: a provider without keys is served by the sandbox in development; on: always the sandbox; off: never.
    sandbox: str = "auto"

    @property
    def razorpay_configured(self) -> bool:
        return bool(self.razorpay_key_id and self.razorpay_key_secret)

    @property
    def stripe_configured(self) -> bool:
        return bool(self.stripe_secret_key)


@dataclass(frozen=True)
class MailSettings:
    """Outgoing email. Without an SMTP URL messages are written as .eml files to `<data_dir>/outbox/`."""

    #: smtp://user:pass@host:587 (STARTTLS), smtps://...:465 (implicit TLS), smtp://host:25?tls=none (local relay).
    smtp_url: str = ""
    sender: str = "websec <no-reply@websec.localhost>"


#: Scans in flight per process by default: a scan mostly waits on the network, but parsing and grading a page
#: costs CPU (~60 ms on loopback), so 8 per core keeps a 2-core machine busy without letting latency grow with the burst
#: (bench/load_bench.py, docs/performance.md).
DEFAULT_MAX_CONCURRENT_SCANS = 8 * (os.cpu_count() or 2)
#: Requests that may wait for a scan slot (FIFO) before the scan endpoints answer 503 with Retry-After.
DEFAULT_SCAN_QUEUE = 128


@dataclass(frozen=True)
class Settings:
    environment: str = "development"
    allow_private_targets: bool = False
    dns_servers: tuple[DnsServer, ...] = ()
    #: The port the domain's MX hosts are asked for STARTTLS on (fetch/smtp.py): 25, as senders do; 0 asks none, for
    #: a scanner whose network blocks outbound port 25 (WEBSEC_SMTP_PORT).
    smtp_port: int = 25
    #: The port the domain's name servers are asked on directly, without recursion, whether they serve its zone
    #: (fetch/nameservers.py): 53, where every name server answers; 0 asks none (WEBSEC_NAMESERVER_PORT).
    nameserver_port: int = 53
    ca_bundle: Path | None = None
    limits: ScanLimits = field(default_factory=ScanLimits)
    user_agent: str = "websec-scanner/1.0 (+https://websec.example/scanner)"
    data_dir: Path = Path("var")
    database_url: str = ""
    free_scans_per_day: int = 10
    pro_scans_per_month: int = 50
    trusted_proxies: tuple[str, ...] = ()
    base_url: str = "http://localhost:3000"
    #: Where researchers report vulnerabilities in this service (security.txt `Contact:`, RFC 9116 §2.5.3):
    #: a mailto: or https: URI. Empty: mailto:security@<the host of base_url>.
    security_contact: str = ""
    payments: PaymentSettings = field(default_factory=PaymentSettings)
    mail: MailSettings = field(default_factory=MailSettings)
    #: Scans running at once in one process (WEBSEC_MAX_CONCURRENT_SCANS) and requests waiting for one
    #: (WEBSEC_SCAN_QUEUE); past both, 503 + Retry-After (api_routes/errors.py).
    max_concurrent_scans: int = DEFAULT_MAX_CONCURRENT_SCANS
    scan_queue: int = DEFAULT_SCAN_QUEUE
    #: Shared state for several app processes (REDIS_URL): Reflex's state manager (rxconfig.py). Empty: each
    #: process keeps UI state in memory, which is right for the single-process `make run`.
    redis_url: str = ""
    #: Scans this process runs itself as a worker of the task engine (WEBSEC_SCAN_WORKERS, issue 16). None
    #: (unset): the embedded default, WEBSEC_MAX_CONCURRENT_SCANS in-process; 0: this process only queues
    #: scans and waits for `python -m websec_app worker` processes to run them.
    scan_workers: int | None = None
    #: The longest expected wait for a scan that is still accepted, across the cluster (WEBSEC_MAX_SCAN_WAIT,
    #: seconds); past it, 503 with Retry-After set to the expected wait.
    max_scan_wait: float = 60.0
    #: How often the task engine's periodic tick schedules due monitor runs (WEBSEC_MONITOR_TICK_SECONDS, a
    #: divisor of 60 from 1 to 60): once a minute by default; tests tick faster.
    monitor_tick_seconds: int = 60
    #: How long an ended scan job (its result, `GET /api/scans/{id}`, and a PDF job's PDF) is kept after it
    #: was queued (WEBSEC_JOB_RETENTION_DAYS); 0 keeps them for good. The history and the reports kept for
    #: links are other tables, kept regardless.
    job_retention_days: int = 7
    #: The server secret the async scans' callback signatures are derived from, per API key
    #: (WEBSEC_CALLBACK_SECRET, websec_app/jobs/callbacks.py). Empty: callback_url is refused.
    callback_secret: str = field(default="", repr=False)
    #: Development and tests only (WEBSEC_CLOCK_START, refused in production): the service's clock starts at
    #: this instant and runs on from there (websec_app/clock.py). None: the system clock.
    clock_start: datetime | None = None

    @property
    def is_production(self) -> bool:
        return self.environment == "production"

    def sandbox_serves(self, provider: str) -> bool:
        """Whether the local sandbox stands in for `provider` ("razorpay" / "stripe"). Never in production.

        Safe by default (issue 12): `auto` serves a provider without keys only when WEBSEC_BASE_URL is a
        loopback address (`make run`'s http://localhost:3000), and the sandbox page then answers loopback
        clients only (`sandbox_local_only`); a server deployed under its public name without keys and
        without WEBSEC_ENV=production gives nothing away. `on` is the operator's explicit opt-in."""
        if self.is_production or self.payments.sandbox == "off":
            return False
        if self.payments.sandbox == "on":
            return True
        if not self.base_url_is_loopback:
            return False
        configured = {"razorpay": self.payments.razorpay_configured, "stripe": self.payments.stripe_configured}
        return not configured.get(provider, False)

    @property
    def sandbox_local_only(self) -> bool:
        """The sandbox page answers only clients on this machine, unless WEBSEC_PAYMENTS_SANDBOX=on."""
        return self.payments.sandbox != "on"

    @property
    def base_url_is_loopback(self) -> bool:
        """WEBSEC_BASE_URL names this machine (localhost, 127.0.0.0/8, ::1): links only work here."""
        return is_loopback_host(urlsplit(self.base_url).hostname or "")

    @property
    def outbox_dir(self) -> Path:
        """Where emails go as .eml files when no SMTP server is configured."""
        return self.data_dir / "outbox"

    @property
    def in_process_scan_workers(self) -> int:
        """How many scans this process runs itself (WEBSEC_SCAN_WORKERS; unset: WEBSEC_MAX_CONCURRENT_SCANS)."""
        return self.max_concurrent_scans if self.scan_workers is None else self.scan_workers

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'websec.db'}"

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with some fields changed: used by tests and the CLI."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        dns_raw = env.get("WEBSEC_DNS_SERVERS", "")
        ca_raw = env.get("WEBSEC_CA_BUNDLE", "").strip()
        ca_bundle = Path(ca_raw) if ca_raw else None
        if ca_bundle is not None and not ca_bundle.is_file():
            raise SettingsError(f"WEBSEC_CA_BUNDLE points to {ca_raw!r}, which is not a file")
        limits = ScanLimits(
            total_seconds=_float(env, "WEBSEC_SCAN_TIMEOUT", ScanLimits.total_seconds),
            connect_seconds=_float(env, "WEBSEC_CONNECT_TIMEOUT", ScanLimits.connect_seconds),
            read_seconds=_float(env, "WEBSEC_READ_TIMEOUT", ScanLimits.read_seconds),
            max_redirects=_int(env, "WEBSEC_MAX_REDIRECTS", ScanLimits.max_redirects),
            max_body_bytes=_int(env, "WEBSEC_MAX_BODY_BYTES", ScanLimits.max_body_bytes, 1024),
        )
        proxies = tuple(p.strip() for p in env.get("WEBSEC_TRUSTED_PROXIES", "").split(",") if p.strip())
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise SettingsError(f"WEBSEC_TRUSTED_PROXIES entry {proxy!r} is not an IP or network") from None
        return cls(
            environment=env.get("WEBSEC_ENV", "development").strip().lower() or "development",
            allow_private_targets=_bool(env, "WEBSEC_ALLOW_PRIVATE_TARGETS", False),
            dns_servers=tuple(DnsServer.parse(s) for s in dns_raw.split(",") if s.strip()),
            smtp_port=_port(env, "WEBSEC_SMTP_PORT", 25),
            nameserver_port=_port(env, "WEBSEC_NAMESERVER_PORT", 53),
            ca_bundle=ca_bundle,
            limits=limits,
            data_dir=Path(env.get("WEBSEC_DATA_DIR", "var")),
            database_url=env.get("WEBSEC_DATABASE_URL", "").strip(),
            free_scans_per_day=_int(env, "WEBSEC_FREE_SCANS_PER_DAY", 10),
            pro_scans_per_month=_int(env, "WEBSEC_PRO_SCANS_PER_MONTH", 50, 1),
            trusted_proxies=proxies,
            base_url=env.get("WEBSEC_BASE_URL", _local_base_url(env)).rstrip("/"),
            security_contact=_security_contact(env),
            payments=_payment_settings(env),
            mail=MailSettings(
                smtp_url=env.get("WEBSEC_SMTP_URL", "").strip(),
                sender=env.get("WEBSEC_MAIL_FROM", "").strip() or MailSettings.sender,
            ),
            max_concurrent_scans=_int(env, "WEBSEC_MAX_CONCURRENT_SCANS", DEFAULT_MAX_CONCURRENT_SCANS, 1),
            scan_queue=_int(env, "WEBSEC_SCAN_QUEUE", DEFAULT_SCAN_QUEUE),
            redis_url=_redis_url(env),
            scan_workers=_optional_int(env, "WEBSEC_SCAN_WORKERS"),
            max_scan_wait=_float(env, "WEBSEC_MAX_SCAN_WAIT", 60.0),
            monitor_tick_seconds=_tick_seconds(env),
            job_retention_days=_int(env, "WEBSEC_JOB_RETENTION_DAYS", 7),
            callback_secret=env.get("WEBSEC_CALLBACK_SECRET", "").strip(),
            clock_start=_instant(env, "WEBSEC_CLOCK_START"),
        )


def is_loopback_host(host: str) -> bool:
    """localhost (and *.localhost, RFC 6761 section 6.3), or a loopback IP address."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _instant(env: dict[str, str], name: str) -> datetime | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise SettingsError(
            f"{name} must be an ISO 8601 date and time, e.g. 2026-11-22T12:00:00Z; got {raw!r}"
        ) from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _security_contact(env: dict[str, str]) -> str:
    contact = env.get("WEBSEC_SECURITY_CONTACT", "").strip()
    if contact and not contact.startswith(("mailto:", "https://", "tel:")):
        raise SettingsError("WEBSEC_SECURITY_CONTACT must be a mailto:, https:// or tel: URI (RFC 9116 section 2.5.3)")
    return contact


def _redis_url(env: dict[str, str]) -> str:
    url = env.get("REDIS_URL", "").strip()
    if url and not url.startswith(("redis://", "rediss://", "unix://")):
        # The schemes Reflex accepts (reflex.utils.prerequisites.parse_redis_url); checked here so a typo
        # stops the service at start rather than when the first UI event arrives.
        raise SettingsError(f"REDIS_URL must start with redis://, rediss:// or unix://, got {url.split(':')[0]!r}")
    return url


def _payment_settings(env: dict[str, str]) -> PaymentSettings:
    def get(name: str) -> str:
        return env.get(name, "").strip()

    sandbox = get("WEBSEC_PAYMENTS_SANDBOX").lower() or "auto"
    if sandbox not in SANDBOX_MODES:
        raise SettingsError(f"WEBSEC_PAYMENTS_SANDBOX must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}")
    payments = PaymentSettings(
        razorpay_key_id=get("RAZORPAY_KEY_ID"),
        razorpay_key_secret=get("RAZORPAY_KEY_SECRET"),
        razorpay_webhook_secret=get("RAZORPAY_WEBHOOK_SECRET"),
        razorpay_base_url=get("RAZORPAY_BASE_URL").rstrip("/"),
        stripe_secret_key=get("STRIPE_SECRET_KEY"),
        stripe_webhook_secret=get("STRIPE_WEBHOOK_SECRET"),
        stripe_api_base=get("STRIPE_API_BASE").rstrip("/"),
        sandbox=sandbox,
    )
    if bool(payments.razorpay_key_id) != bool(payments.razorpay_key_secret):
        raise SettingsError("RAZORPAY_KEY_ID and RAZORPAY_KEY_SECRET must be set together")
    return payments


def check_production_payments(settings: Settings) -> None:
    """Production refuses the sandbox and a provider whose webhooks could not be verified."""
    if not settings.is_production:
        return
    payments = settings.payments
    if payments.sandbox == "on":
        raise SettingsError("WEBSEC_PAYMENTS_SANDBOX=on is refused when WEBSEC_ENV=production")
    if payments.razorpay_configured and not payments.razorpay_webhook_secret:
        raise SettingsError("RAZORPAY_WEBHOOK_SECRET is required in production when Razorpay keys are set")
    if payments.stripe_configured and not payments.stripe_webhook_secret:
        raise SettingsError("STRIPE_WEBHOOK_SECRET is required in production when STRIPE_SECRET_KEY is set")


def _local_base_url(env: dict[str, str]) -> str:
    """The address `make run` serves on when WEBSEC_BASE_URL is not set: its PORT reaches the app as
    WEBSEC_RUN_PORT, so the links the app writes (checkout, emails, security.txt) follow `make run PORT=8080`."""
    port = _int(env, "WEBSEC_RUN_PORT", 3000, 1)
    if port > 65535:
        raise SettingsError(f"WEBSEC_RUN_PORT must be a TCP port, not {port}")
    return f"http://localhost:{port}"


def _dotenv_may_exist() -> bool:
    """Whether `load_dotenv()` could find a `.env`: it looks in the directory of its caller (this file) and
    each parent, or from the working directory in an interactive session; both are checked here."""
    for start in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        directory, parent = start, ""
        while directory != parent:
            if os.path.exists(os.path.join(directory, ".env")):
                return True
            directory, parent = os.path.dirname(directory), directory
    return False


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once (`.env` first, the environment wins)."""
    if _dotenv_may_exist():  # python-dotenv (~8 ms of imports, issue 14) only when there is a file to read
        from dotenv import load_dotenv

        load_dotenv(override=False)
    settings = Settings.from_env()
    if settings.allow_private_targets:
        log.warning(
            "WEBSEC_ALLOW_PRIVATE_TARGETS is on: the scanner will connect to loopback and private "
            "addresses. Use this only for tests and local development."
        )
        if settings.is_production:
            raise SettingsError("WEBSEC_ALLOW_PRIVATE_TARGETS must not be on when WEBSEC_ENV=production")
    if settings.clock_start is not None:
        log.warning("WEBSEC_CLOCK_START is set: the service's clock started at %s", settings.clock_start.isoformat())
        if settings.is_production:
            raise SettingsError("WEBSEC_CLOCK_START must not be set when WEBSEC_ENV=production")
    check_production_payments(settings)
    return settings
