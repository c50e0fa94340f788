"""What wraps the API's (and, mounted, the UI's) ASGI stack: bounded headers and bodies in front of everything,
HEAD served as GET without content, security headers on every response, the raw-ASGI fast path of the two
polled key endpoints, and secrets redacted from the access log."""

from .head_requests import HeadAsGet
from .key_polling import KeyPolling
from .log_redaction import install_access_log_redaction
from .request_limits import RequestLimits
from .security_headers import SecurityHeaders

__all__ = ["HeadAsGet", "KeyPolling", "RequestLimits", "SecurityHeaders", "install_access_log_redaction"]
