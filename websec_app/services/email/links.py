"""Where each bought thing is used: the page a purchase email and the UI's return pages link to (issue 15).

A token in a link is a secret, so it goes in the fragment (`/one-time-scan#token=wst_...`): browsers never
send the fragment to a server, so it stays out of access logs, proxies and Referer headers; the page reads it
in the browser and fills its form. The API key is never put in a link at all (`/pro` asks for it).
"""

from __future__ import annotations

from urllib.parse import urlencode

#: The pages, by product (the values of `services.prices.Product`).
PRO_PAGE = "/pro"
ONE_TIME_SCAN_PAGE = "/one-time-scan"
COMPLIANCE_PAGE = "/compliance-report"
_PAGES = {"subscription": PRO_PAGE, "one_time_scan": ONE_TIME_SCAN_PAGE, "compliance_report": COMPLIANCE_PAGE}


def where_used(product: str, *, token: str | None = None, url: str = "", email: str = "", base_url: str = "") -> str:
    """The page where `product` is used, its form filled from the fragment: `token` (one-time scan, compliance
    report), and for the compliance report the website and the address the PDF goes to."""
    page = f"{base_url}{_PAGES.get(product, '/')}"
    if product == "subscription" or not token:
        return page
    fields = {"token": token}
    if product == "compliance_report":
        fields |= {name: value for name, value in (("url", url), ("email", email)) if value}
    return f"{page}#{urlencode(fields)}"


__all__ = ["COMPLIANCE_PAGE", "ONE_TIME_SCAN_PAGE", "PRO_PAGE", "where_used"]
