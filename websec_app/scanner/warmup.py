"""Import the grading side of the scanner while a process's first fetch waits on the network (issue 14).

A fresh process (the command line, a worker) spends ~0.2 s importing before its first scan, and the fetch then
spends much of its time waiting for the site's answers. The modules only grading needs (the checks, the
grading and its fix snippets, the rule table) and the legacy TLS probes' module (late in the fetch) are
therefore imported by one thread started with the first scan, in those waits, instead of before the fetch or
after it. `scan()` waits for that thread before grading; a long-running process pays it once.

Safe beside the fetch: Python's import lock is per module, so a fetch that reaches `_legacy_hello` while the
thread imports it waits for it, as two threads importing one module always do. Two threads
can only wait for each other in a circle when two modules import each other; these import nothing of the
fetch's own lazy imports but each other's dependencies. The thread only imports: it changes no state the scan
reads, and an import that fails here fails again, with its traceback, where the scan imports the module.
"""

from __future__ import annotations

import importlib
import sys
import threading

from .. import startup_gc

#: In the order the scan needs them: the legacy probes run during the fetch, the rest after it.
_MODULES = (
    "websec_app.scanner.fetch._legacy_hello",
    "websec_app.scanner.checks",
    "websec_app.scanner.grading",
    "websec_app.scanner.rules",
)
# Not dns.dnssec (~10 ms): checks/dnssec.py imports it for a signed zone only, which most sites' are not.
#: While the thread imports, the fetch's event loop gets the interpreter back after 0.5 ms instead of 5 ms
#: when a socket is ready (sys.setswitchinterval), so the imports fill its waits without delaying it.
_SWITCH_INTERVAL = 0.0005

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import_all() -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, _SWITCH_INTERVAL))
    try:
        for name in _MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the scan imports it again and reports the error there
                continue
        from .rules import default_rulebook

        default_rulebook()
    except Exception:  # noqa: BLE001, S110 - as above: grading loads the rule table itself
        pass
    finally:
        sys.setswitchinterval(previous)
        startup_gc.resume()  # the command line's start-up ends here (startup_gc.py)


def start() -> None:
    """Start importing the grading side in the background, once per process, unless it is loaded."""
    global _thread  # noqa: PLW0603 - one warm-up per process
    with _lock:
        if _thread is not None or all(name in sys.modules for name in _MODULES):
            startup_gc.resume()
            return
        _thread = threading.Thread(target=_import_all, name="websec-warmup", daemon=True)
        _thread.start()


def wait() -> None:
    """Return when the warm-up (if one was started) has finished."""
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()
