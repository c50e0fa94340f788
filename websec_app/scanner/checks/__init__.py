"""The registry of checks: (section, check) pairs, each a pure function of a SiteSnapshot.

Adding a check touches its own module, this tuple and one rule-table file.
"""

from __future__ import annotations

from ..findings import Check
from .cookies import check_cookies
from .cors import check_cors
from .cross_origin import check_cross_origin
from .dns import check_dns
from .fingerprint import check_server_fingerprint
from .headers import check_headers
from .page import check_page
from .redirection import check_redirection
from .security_txt import check_security_txt
from .tls import check_tls

CHECKS: tuple[tuple[str, Check], ...] = (
    ("headers", check_headers),
    ("tls", check_tls),
    ("dns", check_dns),
    ("cookies", check_cookies),
    ("cross_origin", check_cross_origin),
    ("security_txt", check_security_txt),
    ("cors", check_cors),
    ("server_fingerprint", check_server_fingerprint),
    ("page_analysis", check_page),
    ("redirection", check_redirection),
)

__all__ = ["CHECKS"]
