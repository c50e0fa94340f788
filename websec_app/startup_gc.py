"""The cycle collector paused while a short-lived command starts (issue 14).

A command-line scan imports ~700 modules before its first scan; the objects they create (functions, classes,
constants: a few hundred thousand) are never garbage, yet the cycle collector runs ~130 times over them while
they load, ~50 ms of a ~350 ms start-up. `pause()` turns it off for the start-up; `resume()` moves everything
that exists by then into the permanent generation (`gc.freeze`, meant for exactly this: objects that live as
long as the process), so that later collections skip it, and turns the collector back on.

The scan command pauses after its arguments are parsed (websec_app/cli/__init__.py); the scanner resumes
once its first scan's imports are done (scanner/warmup.py), so the scan itself runs with the collector on and
its memory bounded as before. Long-running processes (`serve-api`, workers) never pause. `resume()` without a
`pause()` does nothing.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_paused = False


def pause() -> None:
    """Turn the cycle collector off until `resume()` (if it is on)."""
    global _paused  # noqa: PLW0603 - one collector per process
    with _lock:
        if gc.isenabled():
            gc.disable()
            _paused = True


def resume() -> None:
    """Freeze what start-up created and turn the collector back on, if `pause()` turned it off."""
    global _paused  # noqa: PLW0603
    with _lock:
        if _paused:
            _paused = False
            gc.freeze()
            gc.enable()
