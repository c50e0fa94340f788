"""Why a scan produced no report. Anything short of these is a finding, not an error."""

from __future__ import annotations

#: What a server that admits only clients presenting a certificate is said to do (the fetch says how it showed it
#: after a colon): TargetUnreachable.requires_client_certificate.
CLIENT_CERTIFICATE_REQUIRED = "the server requires a client certificate (mutual TLS)"


class ScanError(Exception):
    """Base class: the scan could not produce a report."""

    #: CLI exit code for this failure (see `python -m websec_app scan --help`).
    exit_code = 1
    #: HTTP status the API answers with (spec section 7).
    http_status = 500


class InvalidTarget(ScanError):
    """The URL is malformed or uses a scheme other than http/https."""

    exit_code = 2
    http_status = 400


class TargetRefused(ScanError):
    """The target (or a redirect hop) resolves to an address the SSRF guard refuses."""

    exit_code = 2
    http_status = 400


class TargetUnreachable(ScanError):
    """Connection refused, DNS failure, TLS handshake failure or timeout on the target itself.

    When a request to an address failed, `url` is that address, `kind` how it failed (a fetch Failure's kind) and
    `reason` the end of the message that says so."""

    exit_code = 3
    http_status = 502

    def __init__(self, message: str, *, url: str | None = None, kind: str | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.kind = kind
        self.reason = reason

    @property
    def requires_client_certificate(self) -> bool:
        """The site serves only clients presenting a certificate (mutual TLS): no visitor without one, and no
        scan, gets a page from it."""
        return self.reason.startswith(CLIENT_CERTIFICATE_REQUIRED)

    def explained(self, reason: str, kind: str) -> TargetUnreachable:
        """The same failure with its reason in words that say more."""
        message = str(self).removesuffix(self.reason) + reason if self.reason else f"{self}: {reason}"
        return TargetUnreachable(message, url=self.url, kind=kind, reason=reason)
