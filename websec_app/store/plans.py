"""Plans and their limits. Limits come from Settings so operators and tests can change them."""

from __future__ import annotations

from ..settings import Settings
from .models import PLAN_PRO

#: Display names (spec 2.5: "for example the Pro plan name").
PLAN_LABELS = {PLAN_PRO: "Pro"}


def monthly_scan_limit(plan: str, settings: Settings) -> int:
    """Scans per calendar month for a plan (spec 8: 50 for Pro). Unknown plans get none."""
    if plan == PLAN_PRO:
        return settings.pro_scans_per_month
    return 0
