"""The registry of checks: (section, check) pairs, each a pure function of a SiteSnapshot.

Adding a check touches its own module, this tuple and one rule-table file. Checks that read the
main page are wrapped by checks/blocked.py: a bot challenge or WAF block page is not graded as the site.
"""

from __future__ import annotations

from ..findings import Check
from .blocked import security_txt_chain, unless_blocked, with_page_access
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
    ("headers", unless_blocked("headers", check_headers)),
    ("tls", check_tls),
    ("dns", check_dns),
    ("cookies", unless_blocked("cookies", check_cookies)),
    ("cross_origin", unless_blocked("cross_origin", check_cross_origin)),
    ("security_txt", unless_blocked("security_txt", check_security_txt, source=security_txt_chain)),
    ("cors", unless_blocked("cors", check_cors)),
    ("server_fingerprint", unless_blocked("server_fingerprint", check_server_fingerprint)),
    ("page_analysis", with_page_access(check_page)),
    ("redirection", check_redirection),
)

__all__ = ["CHECKS"]
