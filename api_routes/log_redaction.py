"""Keep bearer secrets out of access logs: `GET /api/usage?key=wsk_...` puts the API key in the URL.

uvicorn's access logger (`serve-api`) and granian's (Reflex, when its access log is on) log the path with
its query string. This filter, installed once on those loggers by `create_api()`, replaces the value of
every secret-bearing query parameter with `[redacted]` before any handler formats the record.
"""

from __future__ import annotations

import logging
import re

#: Query parameters that carry secrets (spec 4.5: the usage endpoint's key; tokens in emailed links).
SECRET_PARAMETERS = ("key", "api_key", "token", "one_time_token")
ACCESS_LOGGERS = ("uvicorn.access", "granian.access")
_SECRET_RE = re.compile(r"(?i)([?&](?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&\s\"#]*")


def redact(text: str) -> str:
    return _SECRET_RE.sub(r"\1[redacted]", text)


class RedactSecrets(logging.Filter):
    """Redacts secret query values in a record's message and arguments; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


def install_access_log_redaction() -> None:
    """Idempotent: one filter per access logger, however many apps a process builds."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())


__all__ = ["RedactSecrets", "install_access_log_redaction", "redact"]
