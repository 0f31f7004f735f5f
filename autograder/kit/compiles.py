"""Independent compile evidence: JAX's own backend-compile events, not the student's word.

JAX fires ``/jax/core/compile/backend_compile_duration`` once per XLA compilation,
with ``fun_name='jit(<name>)'``. It is a different event from the trace event
(``/jax/core/compile/jaxpr_trace_duration``, see ``autograder.kit.traces``): measured with
jax 0.12.0.1 (and 0.10.2 before it), ``jitted.trace(x)`` fires a trace and no compile, a later ``jitted(x)``
fires a compile and no trace, ``jitted.lower(x)`` traces without compiling, and a call
after ``jitted.trace(x).lower().compile()`` at the same signature fires neither.

Eager ``jnp`` operations compile small programs of JAX's own (``jit(add)``,
``jit(stack)``...). A compile is attributed the way a trace is: when JAX compiles on
a call, the frame that dispatches the call (``cache_miss`` or ``_run_python_pjit`` in
``pjit.py``) holds the Python function as ``fun``, and a ``fun`` JAX jitted for itself
is its own eager work (:func:`autograder.kit.traces.is_jax_internal`). A compile with no
such frame comes from the ahead-of-time path (``Lowered.compile()``), which JAX's eager
operations never take: it is the student's program.
"""

from __future__ import annotations

import sys

from autograder.kit.traces import _JAX_FOLDER, EventLog, is_jax_internal

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
#: The JAX frames of a compile on a call that hold the called function as ``fun``.
_DISPATCH_FRAMES = ("cache_miss", "_run_python_pjit")
_MAX_DEPTH = 40


def _compiled_function():
    """The Python function JAX compiles on a call when its compile event fires, or None for a
    compile with no call (ahead of time). Call it from the event's listener."""
    frame = sys._getframe(2)
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name in _DISPATCH_FRAMES and code.co_filename.startswith(_JAX_FOLDER):
            fun = frame.f_locals.get("fun")
            if fun is not None:
                return fun
        frame = frame.f_back
    return None


def student_compiled() -> bool:
    """Inside a listener of the compile event: whether JAX is compiling the student's program
    rather than one of its own eager operations."""
    fn = _compiled_function()
    return fn is None or not is_jax_internal(fn)


class CompileLog(EventLog):
    """Records the XLA compilations of the student's programs while it is active.

    >>> with CompileLog() as log:
    ...     f(x)
    >>> log.count, log.names

    Compilations of JAX's own eager operations inside the block are not counted.
    """

    EVENT = KIND = _COMPILE_EVENT
    NOUN = "compile"
    is_students = staticmethod(student_compiled)


def compiles_during(fn, *args, **kwargs):
    """Call ``fn`` and return ``(result, number of compilations of the student's programs it caused)``."""
    with CompileLog() as log:
        result = fn(*args, **kwargs)
    return result, log.count
