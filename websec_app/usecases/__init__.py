"""What a user can do, shared by every interface: the API routes, the web UI's state and the CLI are thin
adapters that translate HTTP or UI state to these calls and their results or exceptions back.

Each use case takes the process's `Runtime` first (its type: usecases/runtime.py; built by websec_app/runtime.py).
`jobs`: the free, one-time token, Pro and PDF scans, each a job of the task engine, and async/batch scans
(`job_worker`: what a worker does with a job); `scans`: what a scan gives back and tells, and kept reports;
`accounts`: from an API key to the subscriber and usage; `history`: a subscriber's kept scans, their diffs,
the badge's facts; `monitors`: scheduled re-scans and their alerts; `purchases`: checkout, confirmation and
the compliance report.
"""

from .accounts import (
    RecentScan,
    Subscriber,
    Usage,
    authenticate,
    inactive_subscription_sentence,
    presented,
    recent,
    subscriber_of,
    usage,
)
from .errors import FreeQuotaUsed, KeyRefused, MonthlyQuotaUsed, QuotaUsed
from .scans import (
    STEPS,
    WAITING,
    PdfFile,
    Progress,
    Scanned,
    client_key,
    load_report,
    no_progress,
)

__all__ = [
    "STEPS",
    "WAITING",
    "FreeQuotaUsed",
    "KeyRefused",
    "MonthlyQuotaUsed",
    "PdfFile",
    "Progress",
    "QuotaUsed",
    "RecentScan",
    "Scanned",
    "Subscriber",
    "Usage",
    "authenticate",
    "client_key",
    "inactive_subscription_sentence",
    "load_report",
    "no_progress",
    "presented",
    "recent",
    "subscriber_of",
    "usage",
]
