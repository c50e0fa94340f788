"""Placeholder: being written."""
from ...settings import Settings
from ..snapshot import SiteSnapshot
from ..target import Target


async def fetch_snapshot(target: Target, settings: Settings) -> SiteSnapshot:
    raise NotImplementedError
