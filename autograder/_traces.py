"""Independent trace evidence: JAX's own monitoring events, not the student's word.

JAX fires ``/jax/core/compile/jaxpr_trace_duration`` once per top-level trace of a
jitted function. Eager operations fire it too, named after their primitive; those
are not traces of the student's program and are left out.
"""

from __future__ import annotations

import jax
from jax.extend.core import Primitive, primitives

_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
_PRIMITIVE_NAMES = frozenset(p.name for p in vars(primitives).values() if isinstance(p, Primitive))


class TraceLog:
    """Counts traces of jitted functions while it is active (a context manager).

    >>> with TraceLog() as log:
    ...     f(x)
    >>> log.count
    """

    def __init__(self):
        self.names: list[str] = []

    def _listen(self, event, duration_secs, **kwargs):
        name = kwargs.get("fun_name", "")
        if event == _TRACE_EVENT and name not in _PRIMITIVE_NAMES:
            self.names.append(name)

    def __enter__(self) -> "TraceLog":
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc) -> None:
        jax.monitoring.unregister_event_duration_listener(self._listen)

    @property
    def count(self) -> int:
        return len(self.names)


def traces_during(fn, *args, **kwargs):
    """Call ``fn`` and return ``(result, number of traces it caused)``."""
    with TraceLog() as log:
        result = fn(*args, **kwargs)
    return result, log.count


def is_jitted(fn) -> bool:
    """Whether ``fn`` is a ``jax.jit``-wrapped function (it can be lowered and traced)."""
    return callable(getattr(fn, "trace", None)) and callable(getattr(fn, "lower", None))
