"""Why a scan produced no report. Anything short of these is a finding, not an error."""

from __future__ import annotations


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
    """Connection refused, DNS failure, TLS handshake failure or timeout on the target itself."""

    exit_code = 3
    http_status = 502
