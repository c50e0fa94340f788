"""The web UI: pages, components and state. `register_pages(app)` is the one list of routes (STYLE.md 4).

Pages render; state handlers stay thin: they call the use cases (`websec_app/usecases`: scans, the Pro
account, purchases) with the process's runtime (`ui/runtime.py`), the same calls the API makes.
Nothing here queries tables.
"""

from __future__ import annotations

import reflex as rx

from .pages.checkout import checkout, checkout_cancelled, checkout_success
from .pages.compliance import compliance
from .pages.docs import docs
from .pages.home import home
from .pages.not_found import not_found
from .pages.pricing import pricing
from .pages.pro import pro
from .pages.report import report
from .pages.site import site
from .pages.token import token_page
from .state.checkout import CheckoutState
from .state.pro import ProState
from .state.report import REPORT_ROUTE, ReportState
from .state.scan import ScanState
from .state.site import SiteState

#: Shown in search results and link previews.
_DESCRIPTION = "Scan a website's security headers, TLS, DNS, cookies and CORS; get a grade and what to fix first."


def register_pages(app: rx.App) -> None:
    app.add_page(
        home, route="/", title="websec: website security scan", description=_DESCRIPTION, on_load=ScanState.open_home
    )
    app.add_page(report, route=REPORT_ROUTE, title="Security report · websec", on_load=ReportState.load)
    app.add_page(token_page, route="/one-time-scan", title="One-time scan · websec", on_load=ScanState.open_token_page)
    app.add_page(pro, route="/pro", title="Pro · websec", on_load=ProState.open_page)
    app.add_page(site, route="/site", title="Site history · websec", on_load=[ProState.open_page, SiteState.reload])
    app.add_page(
        pricing, route="/pricing", title="Pricing · websec", description="Pro, one-time scans and compliance reports."
    )
    app.add_page(
        checkout, route="/checkout/[product_slug]", title="Checkout · websec", on_load=CheckoutState.open_checkout
    )
    app.add_page(
        checkout_success, route="/checkout/success", title="Payment · websec", on_load=CheckoutState.open_success
    )
    app.add_page(
        checkout_cancelled,
        route="/checkout/cancelled",
        title="Payment cancelled · websec",
        on_load=CheckoutState.open_cancelled,
    )
    app.add_page(
        compliance,
        route="/compliance-report",
        title="Compliance report · websec",
        on_load=ScanState.open_compliance_page,
    )
    app.add_page(docs, route="/api-docs", title="API · websec", description="The websec JSON API with curl examples.")
    # Every path no page matches (Reflex's "404" route); the server answers it with status 404.
    app.add_page(not_found, route="404", title="Page not found · websec", description="There is no page here.")


__all__ = ["register_pages"]
