"""Hypothesis profiles: CI runs a fixed, derandomised sequence so a red build is reproducible;
a developer's run explores new examples each time (and remembers failures in .hypothesis/).
`HYPOTHESIS_PROFILE=deep make test` explores twenty times as many examples."""

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=150, derandomize=True, **_COMMON)
settings.register_profile("dev", max_examples=150, **_COMMON)
settings.register_profile("deep", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
