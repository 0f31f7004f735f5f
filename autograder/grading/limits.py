"""Time limits for one property: student code that never returns costs only that property.

Two timers interrupt a property where it is, inside a student's Python loop too:
a CPU-time budget, which the load of other graders on the machine does not eat
into (so grades stay reproducible), and a longer wall-clock budget for code that
waits without computing. The exception derives from BaseException, so a student's
``except Exception`` cannot swallow it; a bare ``except:`` that does is interrupted
again every few milliseconds until the property gives up.
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: CPU seconds one property may use. A correct solution needs under one here; the
#: slowest wrong one in the corpus (a re-jit on every call) about four.
CPU_SECONDS = 15.0
#: Wall-clock seconds one property may take. nbgrader's per-cell timeout
#: (course_config.py) covers three of these.
WALL_SECONDS = 40.0
_REPEAT_SECONDS = 0.05
_TIMERS = ((signal.ITIMER_PROF, signal.SIGPROF, CPU_SECONDS, "CPU"),
           (signal.ITIMER_REAL, signal.SIGALRM, WALL_SECONDS, "wall-clock")) if hasattr(signal, "setitimer") else ()


class PropertyTimeout(BaseException):
    """Raised inside a property that ran past its time limit."""


def full_budget() -> dict[str, float]:
    """A property's budgets before it starts, by kind, for :func:`time_limit`'s ``left``."""
    return {kind: seconds for _, _, seconds, kind in _TIMERS}


@contextlib.contextmanager
def time_limit(left: dict[str, float] | None = None):
    """Interrupt the block with :class:`PropertyTimeout` when a budget runs out.

    ``left`` is what remains of a property's budgets, by kind (``"CPU"``, ``"wall-clock"``),
    when the property runs in several blocks (a kernel serving a judge, one call at a time);
    the full budgets otherwise. Only the main thread can receive signals; elsewhere (a test
    runner's worker thread) the block runs unbounded, and nbgrader's cell timeout still applies.
    """
    if not _TIMERS or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for timer, signum, seconds, kind in _TIMERS:
        def interrupt(_signum, _frame, seconds=seconds, kind=kind):
            raise PropertyTimeout(f"used up its {seconds:g} s of {kind} time")

        previous[signum] = signal.signal(signum, interrupt)
        remaining = seconds if left is None else left[kind]
        signal.setitimer(timer, max(remaining, 0.001), _REPEAT_SECONDS)
    try:
        yield
    finally:
        for timer, signum, _, _ in _TIMERS:
            signal.setitimer(timer, 0)
            signal.signal(signum, previous[signum])
