"""Independent trace evidence: JAX's own monitoring events, not the student's word.

JAX fires ``/jax/core/compile/jaxpr_trace_duration`` once per top-level trace of a
jitted function. Eager operations fire it too, named after their primitive; those
are not traces of the student's program and are left out.
"""

from __future__ import annotations

import jax
from jax.extend.core import Primitive, primitives

from . import _render
from ._results import PropertyFailure

_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
#: Sent through JAX's monitoring at the end of every observation: if it does not
#: arrive, the code under observation removed or bypassed the grader's listener.
_CANARY = "<autograder canary>"
_PRIMITIVE_NAMES = frozenset(p.name for p in vars(primitives).values() if isinstance(p, Primitive))
#: The type of what ``jax.jit`` returns (a C++ type: it cannot be subclassed or faked).
_JITTED = type(jax.jit(lambda x: x))


class TraceLog:
    """Counts traces of jitted functions while it is active (a context manager).

    >>> with TraceLog() as log:
    ...     f(x)
    >>> log.count
    """

    def __init__(self):
        self.names: list[str] = []
        self._canary_seen = False

    def _listen(self, event, duration_secs, **kwargs):
        name = kwargs.get("fun_name", "")
        if event != _TRACE_EVENT:
            return
        if name == _CANARY:
            self._canary_seen = True
        elif name not in _PRIMITIVE_NAMES:
            self.names.append(name)

    def __enter__(self) -> "TraceLog":
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc) -> None:
        jax.monitoring.record_event_duration_secs(_TRACE_EVENT, 0.0, fun_name=_CANARY)
        try:
            jax.monitoring.unregister_event_duration_listener(self._listen)
        except (AssertionError, ValueError):
            pass  # already removed by the code under observation; the canary reports it
        if not self._canary_seen and exc[0] is None:
            raise PropertyFailure(
                "Tampering: JAX's trace events stopped reaching the grader while the notebook's code ran "
                "(its monitoring listeners were removed or bypassed), so its traces cannot be counted."
            )

    @property
    def count(self) -> int:
        return len(self.names)


def traces_during(fn, *args, **kwargs):
    """Call ``fn`` and return ``(result, number of traces it caused)``."""
    with TraceLog() as log:
        result = fn(*args, **kwargs)
    return result, log.count


def is_jitted(fn) -> bool:
    """Whether ``fn`` is what ``jax.jit`` returns, not a look-alike with ``trace`` and ``lower``
    whose calls the grader cannot see into."""
    return isinstance(fn, _JITTED)


def require_jitted(fn, name: str, expected: str) -> None:
    """Fail, naming ``name`` and what it is instead, unless ``fn`` is jax.jit-compiled."""
    if not is_jitted(fn):
        raise PropertyFailure(
            f"`{name}` is {_render.kind(fn)}, not a jax.jit-compiled function, so there is no trace to reuse.",
            expected=expected,
        )
