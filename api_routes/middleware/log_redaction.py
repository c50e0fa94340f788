"""Keep bearer secrets out of access logs: `GET /api/usage?key=wsk_...` puts the API key in the URL.

Granian (`serve-api`, and Reflex when its access log is on) logs requests with their query string.
This filter, installed once on its access logger by `create_api()`, replaces the value of
every secret-bearing query parameter with `[redacted]` before any handler formats the record. Granian
passes the path and the query string apart (`%(path)s`, `%(query_string)s`); the filter redacts the
query string and adds `%(target)s`, the two joined as in the request line, for formats that want it.
"""

from __future__ import annotations

import logging
import re

#: Query parameters that carry secrets (spec 4.5: the usage endpoint's key; tokens in emailed links).
SECRET_PARAMETERS = ("key", "api_key", "token", "one_time_token")
ACCESS_LOGGERS = ("granian.access",)
# A parameter starts the string (granian's bare query string) or follows "?" or "&".
_SECRET_RE = re.compile(r"(?i)((?:^|[?&])(?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&\s\"#]*")


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
            args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
            if "path" in args and "query_string" in args:
                query = args["query_string"]
                args["target"] = f"{args['path']}?{query}" if query else args["path"]
            record.args = args
        return True


def install_access_log_redaction() -> None:
    """Idempotent: one filter per access logger, however many apps a process builds."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())


__all__ = ["RedactSecrets", "install_access_log_redaction", "redact"]
