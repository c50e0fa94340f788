"""How a Reflex state handler reaches the process's Runtime (websec_app/runtime.py).

The composition root (`websec_app/websec_app.py`) builds the one runtime and hands it to the API app it
mounts (`create_api(runtime=...)` keeps it in the API app's state). Reflex applies its registration
context, which knows the `rx.App`, to every event it handles, so a handler finds the same runtime the API
uses, without a module-level copy of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from reflex_base.registry import RegistrationContext

from websec_app.usecases.runtime import Runtime


def current_runtime() -> Runtime:
    """The runtime of the app this process serves; RuntimeError outside one (e.g. a bare import)."""
    app = RegistrationContext.get().app
    transformers = app.api_transformer
    for candidate in transformers if isinstance(transformers, Sequence) else (transformers,):
        runtime = getattr(getattr(candidate, "state", None), "runtime", None)
        if isinstance(runtime, Runtime):
            return runtime
    raise RuntimeError("the Reflex app was not built with create_api(runtime=...) (websec_app/websec_app.py)")


__all__ = ["current_runtime"]
