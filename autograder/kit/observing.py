"""The observations open in this thread, and whether the student's code runs here at all.

An observation (a :class:`~autograder.kit.traces.TraceLog`, a :class:`~autograder.kit.compiles.CompileLog`,
a :class:`~autograder.kit.host_reads.HostReads`) watches what the student's code does while it
is open. Where the student's code runs in another process (a kernel serving a judge,
:mod:`autograder.grading.judge`), the judge's thread says so (:func:`observe_elsewhere`); its
observations then watch nothing here: each call of the student's code is observed in the kernel
by an observation of the same ``KIND``, whose ``report()`` the judge's observation takes in
(``absorb(report)``).
"""

from __future__ import annotations

import threading

_thread = threading.local()


def observe_elsewhere() -> None:
    """Say that, in this thread, the student's code runs in another process."""
    _thread.elsewhere = True


def here() -> bool:
    """Whether the student's code runs in this process (so an observation watches it here)."""
    return not getattr(_thread, "elsewhere", False)


def active() -> tuple:
    """The observations open in this thread, innermost last."""
    return getattr(_thread, "open", ())


def opened(observation) -> None:
    _thread.open = (*active(), observation)


def closed(observation) -> None:
    _thread.open = tuple(o for o in active() if o is not observation)
