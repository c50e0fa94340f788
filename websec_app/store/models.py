"""The tables. Rows never leave the store as API responses: routes map them to response models.

Secrets (API keys, one-time scan tokens, compliance payment tokens) are stored only as
SHA-256 hashes; the plain value is returned once, when it is issued.

Timestamps are aware UTC datetimes (see `coltypes.UTCDateTime`). Quota periods are text
keys ("2026-11" for a calendar month, "2026-11-22" for a day, both UTC) so the same
row is found on every backend without date arithmetic in SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, LargeBinary, MetaData, UniqueConstraint, false, text
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from .coltypes import UTCDateTime

#: Plan names. Limits live in Settings (`pro_scans_per_month`); see `plans.py`.
PLAN_PRO = "pro"

SUBSCRIPTION_ACTIVE = "active"
SUBSCRIPTION_CANCELLED = "cancelled"
#: Checkout started, first payment not confirmed yet (no key issued).
SUBSCRIPTION_PENDING = "pending"
#: A renewal charge failed; the provider may still retry it (keys stop working until it succeeds).
SUBSCRIPTION_PAST_DUE = "past_due"
#: The buyer disputed a charge (a chargeback, issue 12): keys stop working until an operator settles it; no
#: provider event brings it back (`store.purchases.set_provider_subscription_status`).
SUBSCRIPTION_DISPUTED = "disputed"

#: Products a payment can be for (issue 5 records payments with these).
PRODUCT_SUBSCRIPTION = "subscription"
PRODUCT_ONE_TIME_SCAN = "one_time_scan"
PRODUCT_COMPLIANCE_REPORT = "compliance_report"

#: What a scan record was for.
SCAN_FREE = "free"
SCAN_ONE_TIME = "one_time"
SCAN_PRO = "pro"
SCAN_PDF = "pdf"
SCAN_COMPLIANCE = "compliance"


#: Our own metadata (not SQLModel's global one, which Reflex's `rx.Model` and its migrations share),
#: with named constraints so Alembic migrations are the same on SQLite and PostgreSQL.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class StoreModel(SQLModel, registry=registry(metadata=metadata)):
    """Base of every table of the store."""


def _utc(nullable: bool = False, index: bool = False) -> Column:  # type: ignore[type-arg]
    return Column(UTCDateTime(), nullable=nullable, index=index)


class Subscription(StoreModel, table=True):
    """A Pro subscription: the owner of the monthly quota (keys come and go, usage stays)."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("provider", "provider_subscription_id", name="uq_subscriptions_provider_id"),)

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=254, index=True)
    plan: str = Field(default=PLAN_PRO, max_length=32)
    status: str = Field(default=SUBSCRIPTION_ACTIVE, max_length=16)
    #: "manual" for keys made with `python -m websec_app keys create`, else the payment provider.
    provider: str = Field(default="manual", max_length=32)
    provider_subscription_id: str | None = Field(default=None, max_length=128)
    created_at: datetime = Field(sa_column=_utc())
    updated_at: datetime = Field(sa_column=_utc())
    #: The provider's time of the newest event applied to `status` (not our clock): an older event, delivered
    #: late, does not change the status (`store.purchases.set_provider_subscription_status`). None: no
    #: provider event with a time has been applied yet.
    status_event_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    #: Events of the second `status_event_at` disagreed and the provider could not be asked which status is
    #: current: `status` is provisional (active, the payer's benefit of the doubt) until an event of that
    #: second is delivered again and the provider answers, or a newer event decides (migration 0017).
    status_unconfirmed: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    #: Counts the writes of `status`: a status decided by asking the provider is written only if nothing
    #: wrote it since it was read (the call to the provider cannot be inside one statement).
    status_version: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})


class ApiKey(StoreModel, table=True):
    """An API key. `key_hash` is SHA-256 of the plain key; `prefix` helps people recognise it."""

    __tablename__ = "api_keys"
    __table_args__ = (
        # At most one active key per subscription, even if two rotations race.
        Index(
            "uq_api_keys_one_active_per_subscription",
            "subscription_id",
            unique=True,
            sqlite_where=text("active"),
            postgresql_where=text("active"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(max_length=64, unique=True)
    prefix: str = Field(max_length=16)
    subscription_id: int = Field(sa_column=Column(Integer, ForeignKey("subscriptions.id"), nullable=False, index=True))
    active: bool = Field(default=True)
    created_at: datetime = Field(sa_column=_utc())
    revoked_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))


class MonthlyUsage(StoreModel, table=True):
    """Scans a subscription consumed in one calendar month (UTC); a new month is a new row."""

    __tablename__ = "monthly_usage"

    subscription_id: int = Field(
        sa_column=Column(Integer, ForeignKey("subscriptions.id"), primary_key=True, autoincrement=False)
    )
    period: str = Field(max_length=7, primary_key=True)  # "YYYY-MM"
    used: int = Field(default=0)


class FreeScanCounter(StoreModel, table=True):
    """Free scans one client (IPv4 address or IPv6 /64) made on one UTC day."""

    __tablename__ = "free_scan_counters"

    client: str = Field(max_length=64, primary_key=True)
    day: str = Field(max_length=10, primary_key=True)  # "YYYY-MM-DD"
    used: int = Field(default=0)


class Payment(StoreModel, table=True):
    """A payment at a provider. Provider ids are unique so webhook retries find the same row."""

    __tablename__ = "payments"
    __table_args__ = (
        UniqueConstraint("provider", "provider_payment_id", name="uq_payments_provider_payment"),
        UniqueConstraint("provider", "provider_order_id", name="uq_payments_provider_order"),
    )

    id: int | None = Field(default=None, primary_key=True)
    provider: str = Field(max_length=32)
    product: str = Field(max_length=32)
    email: str = Field(max_length=254, index=True)
    amount: int  # minor units: paise for INR, cents for USD
    currency: str = Field(max_length=3)
    status: str = Field(max_length=16)  # created, paid, failed, refunded, disputed
    provider_order_id: str | None = Field(default=None, max_length=128)
    provider_payment_id: str | None = Field(default=None, max_length=128)
    #: The subscription a charge paid for (its first charge and renewals), so a dispute finds it (issue 12).
    subscription_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("subscriptions.id"), nullable=True)
    )
    created_at: datetime = Field(sa_column=_utc())
    updated_at: datetime = Field(sa_column=_utc())


class PaymentReference(StoreModel, table=True):
    """Another id a provider names a recorded payment by (issue 12).

    Stripe records a subscription charge under its invoice (`payments.provider_payment_id` = `in_...`), but a
    refund or a dispute names only the charge and the payment intent (`ch_...`, `pi_...`). When an invoice is
    paid, its payment intent or charge is kept here against the invoice id, so the refund or dispute finds the
    payment row and through it the subscription. Keyed by the provider's ids, not the row, so the invoice's
    events may arrive in any order. A payment intent may pay more than one invoice: each pair is one row.
    """

    __tablename__ = "payment_references"
    __table_args__ = (
        UniqueConstraint(
            "provider", "reference", "provider_payment_id", name="uq_payment_references_provider_reference"
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    provider: str = Field(max_length=32)
    #: The id the provider's refund or dispute names (Stripe: the payment intent or the charge).
    reference: str = Field(max_length=128)
    #: The id the payment is recorded under (`payments.provider_payment_id`; Stripe: the invoice).
    provider_payment_id: str = Field(max_length=128)
    created_at: datetime = Field(sa_column=_utc())


class PendingReversal(StoreModel, table=True):
    """A refund or dispute of a payment not settled here yet (its capture webhook is late).

    The reversal names the payment by the provider's ids (Razorpay `pay_...`; Stripe the payment intent and
    the charge), which the `payments` row gets only when the capture settles. So the reversal is kept here by
    those ids, and the settlement that comes later checks it: it issues nothing, or takes back what it issued
    (`services/payments/fulfilment.py`). One row per id.
    """

    __tablename__ = "pending_reversals"
    __table_args__ = (UniqueConstraint("provider", "provider_payment_id", name="uq_pending_reversals_provider_id"),)

    id: int | None = Field(default=None, primary_key=True)
    provider: str = Field(max_length=32)
    provider_payment_id: str = Field(max_length=128)
    #: A dispute (chargeback) rather than a refund.
    dispute: bool = False
    created_at: datetime = Field(sa_column=_utc())


class WebhookEvent(StoreModel, table=True):
    """A provider event already processed: inserting it twice fails, so retries are no-ops."""

    __tablename__ = "webhook_events"
    __table_args__ = (UniqueConstraint("provider", "event_id", name="uq_webhook_events_provider_event"),)

    id: int | None = Field(default=None, primary_key=True)
    provider: str = Field(max_length=32)
    event_id: str = Field(max_length=128)
    event_type: str = Field(max_length=64)
    received_at: datetime = Field(sa_column=_utc())
    #: What processing did: fulfilled, already_fulfilled, renewed, ignored, amount_mismatch, ... (issue 5).
    outcome: str | None = Field(default=None, max_length=32)
    detail: str | None = Field(default=None, max_length=500)


class ScanToken(StoreModel, table=True):
    """A one-time scan token (spec 2.7): valid 24 hours, single use."""

    __tablename__ = "scan_tokens"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True)
    email: str = Field(max_length=254)
    #: One token per payment: verifying the same payment twice cannot mint a second token.
    payment_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("payments.id"), nullable=True, unique=True)
    )
    created_at: datetime = Field(sa_column=_utc())
    expires_at: datetime = Field(sa_column=_utc())
    used_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    #: Its payment was refunded or disputed before it was used (issue 12): it can no longer be used.
    revoked_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))


class ComplianceToken(StoreModel, table=True):
    """A compliance payment token (spec 2.8): single use, and only once its payment is confirmed."""

    __tablename__ = "compliance_tokens"
    __table_args__ = (UniqueConstraint("provider", "provider_order_id", name="uq_compliance_tokens_provider_order"),)

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True)
    provider: str = Field(max_length=32)
    email: str = Field(max_length=254)
    url: str = Field(max_length=2048)
    provider_order_id: str | None = Field(default=None, max_length=128)
    #: Indexed: a refund or dispute revokes its payment's unused tokens.
    payment_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("payments.id"), nullable=True, index=True)
    )
    created_at: datetime = Field(sa_column=_utc())
    paid_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    used_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    #: A generate request holds the token for its scan until then (a lease: a request that died mid-scan
    #: leaves it to run out); `reserved_by` names the holder, so only it can use or release the token.
    reserved_until: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    reserved_by: str | None = Field(default=None, max_length=32)
    #: Its payment was refunded or disputed before it was used (issue 12).
    revoked_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))


class ScanRecord(StoreModel, table=True):
    """One scan that produced a report: who asked, what was scanned, the result, and when."""

    __tablename__ = "scan_records"
    __table_args__ = (
        Index("ix_scan_records_subscription_created", "subscription_id", "created_at"),
        Index("ix_scan_records_client_created", "client", "created_at"),
        # a subscriber's history of one URL, and the public badge's latest scan of a URL (issue 17)
        Index("ix_scan_records_url_created", "url", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=16)  # free, one_time, pro, pdf, compliance
    subscription_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("subscriptions.id"), nullable=True)
    )
    api_key_id: int | None = Field(default=None, sa_column=Column(Integer, ForeignKey("api_keys.id"), nullable=True))
    scan_token_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("scan_tokens.id"), nullable=True)
    )
    client: str | None = Field(default=None, max_length=64)
    url: str = Field(max_length=2048)
    final_url: str = Field(max_length=2048)
    grade: str = Field(max_length=2)
    score: int
    algorithm_version: str = Field(max_length=32)
    created_at: datetime = Field(sa_column=_utc())


class StoredReport(StoreModel, table=True):
    """A report as the web UI showed it, kept so its shareable link (`/report/<id>`) works later.

    `id` is the public, unguessable part of the link (128 random bits): whoever has the link
    can read the report, nobody can enumerate them. `body` is the report dict exactly as shown
    (spec 2.1 for a free scan, fixes stripped; spec 2.2 for a Pro or one-time scan).
    """

    __tablename__ = "stored_reports"

    id: str = Field(primary_key=True, max_length=32)
    scan_record_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("scan_records.id"), nullable=True, index=True)
    )
    kind: str = Field(max_length=16)  # as ScanRecord.kind
    body: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(sa_column=_utc())


#: Outbox row states: waiting to be sent (or retried), claimed by a worker, delivered.
OUTBOX_PENDING = "pending"
OUTBOX_SENDING = "sending"
OUTBOX_SENT = "sent"


class OutboxEmail(StoreModel, table=True):
    """An email to deliver. Stored first (in the transaction that issued what it carries), sent by a worker.

    `message` is the complete RFC 5322 message; it is cleared once sent, because it may carry an API key or a
    token that the rest of the store keeps only as a hash. `dedupe_key` makes enqueuing idempotent.
    """

    __tablename__ = "outbox_emails"
    __table_args__ = (Index("ix_outbox_emails_status_next_attempt_at", "status", "next_attempt_at"),)

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=32)
    dedupe_key: str | None = Field(default=None, max_length=128, unique=True)
    recipient: str = Field(max_length=254)
    subject: str = Field(max_length=255)
    message: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    status: str = Field(default=OUTBOX_PENDING, max_length=16)
    attempts: int = Field(default=0)
    next_attempt_at: datetime = Field(sa_column=_utc())
    claimed_by: str | None = Field(default=None, max_length=64)
    claimed_until: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    last_error: str | None = Field(default=None, max_length=500)
    created_at: datetime = Field(sa_column=_utc())
    sent_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))


#: Scan job states (issue 16): waiting for a worker, being scanned, finished with a result, finished without.
JOB_QUEUED = "queued"
JOB_RUNNING = "running"
JOB_DONE = "done"
JOB_FAILED = "failed"


class ScanJob(StoreModel, table=True):
    """A scan run by a worker of the task engine (websec_app/jobs), for a waiting request or a program.

    The row is the job's truth; the engine's own queue only carries its id. The quota unit (or one-time
    token) is taken when the row is created and recorded here (`reservation`), so that whichever
    transition ends the job decides once, in one transaction, whether the unit stays (`done`) or is given
    back (`failed`): a retried job never counts twice, a job abandoned by its waiter gives its unit back.
    `id` is the public job id (128 random bits). `result` is the body as answered, `pdf` the rendered
    report of a PDF job.
    """

    __tablename__ = "scan_jobs"
    __table_args__ = (
        Index("ix_scan_jobs_status_created_at", "status", "created_at"),
        # Only the jobs that owe a callback (migration 0014): a free scan's row never enters it.
        Index(
            "ix_scan_jobs_callback_owed_at",
            "callback_owed_at",
            sqlite_where=text("callback_owed_at IS NOT NULL"),
            postgresql_where=text("callback_owed_at IS NOT NULL"),
        ),
    )

    id: str = Field(primary_key=True, max_length=32)
    kind: str = Field(max_length=16)  # as ScanRecord.kind
    url: str = Field(max_length=2048)
    status: str = Field(default=JOB_QUEUED, max_length=16)
    attempts: int = Field(default=0)
    #: Who owns it: a Pro key's subscription and key (the async API's reads check `api_key_id`), the free
    #: client, or the one-time token.
    subscription_id: int | None = Field(default=None)
    api_key_id: int | None = Field(default=None, index=True)
    client: str | None = Field(default=None, max_length=64)
    scan_token_id: int | None = Field(default=None)
    #: quotas.Reservation as a dict (None for a one-time token job: `scan_token_id` is the unit).
    reservation: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: include_fix, client_name, callback_url.
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    pdf: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    error_status: int | None = Field(default=None)
    error_message: str | None = Field(default=None, max_length=1024)
    created_at: datetime = Field(sa_column=_utc())
    started_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    #: Set when a job with a callback_url ends (in the same transaction), moved on each time its callback
    #: is queued again, cleared when the receiver took it (2xx) or its attempts were used up: while set, the
    #: callback is still owed (store/scan_jobs.py `callbacks_owed`).
    callback_owed_at: datetime | None = Field(default=None, sa_column=_utc(nullable=True))
    #: Embedded (SQLite): the in-memory queue of the process that created the job and holds it
    #: (`JobEngine.queue_id`, migration 0016). The sweep of abandoned jobs leaves the job to that process
    #: while its queue is alive (`EmbeddedQueue`). None on PostgreSQL, whose queue is a shared table.
    queue_id: str | None = Field(default=None, max_length=32)


class EmbeddedQueue(StoreModel, table=True):
    """Embedded (SQLite): a process's in-memory job queue, and until when it is to be taken for alive: its
    ticker moves that on at each tick (`JobEngine.queue_gone_after` past the tick, on the machine's clock,
    which every process on it reads alike: not the service's, `JobEngine.lease_now`).
    Several processes on one SQLite file (`serve-api --workers 2`) each sweep the jobs a stopped process
    left open; a job of a queue still alive is that process's to run (websec_app/usecases/job_worker.py
    `end_abandoned_jobs`)."""

    __tablename__ = "embedded_queues"

    id: str = Field(primary_key=True, max_length=32)
    alive_until: datetime = Field(sa_column=_utc())


class ScanWorker(StoreModel, table=True):
    """A live scan worker and how many scans it runs at once: the cluster's capacity for admission."""

    __tablename__ = "scan_workers"

    id: str = Field(primary_key=True, max_length=32)
    concurrency: int
    heartbeat_at: datetime = Field(sa_column=_utc(index=True))


class CallbackSecretShown(StoreModel, table=True):
    """The API keys whose callback signing secret has been shown (once: websec_app/jobs/callbacks.py).
    The secret itself is derived, never stored."""

    __tablename__ = "callback_secrets_shown"

    api_key_id: int = Field(primary_key=True)
    shown_at: datetime = Field(sa_column=_utc())
