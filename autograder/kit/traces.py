"""Independent trace evidence: JAX's own monitoring events, not the student's word.

JAX fires ``/jax/core/compile/jaxpr_trace_duration`` once per top-level trace of a
jitted function. Eager ``jnp`` operations fire it too, because JAX runs them as small
jitted functions of its own (``multiply``, ``_reduce_sum``, ``_where``, ``_pad``...);
their names are not a fixed list, so a trace is attributed by *which function* JAX
traced: the event is recorded inside ``_trace_for_jit(fun, ...)``, and a ``fun`` that
JAX jitted for itself is its own eager work (:func:`is_jax_internal`), while anything
else, ``jax.jit(jnp.sum)`` included, is the student's program.

Whether something is jitted is judged by evidence too, never by the object's class: a
call at a new signature must trace the student's code once, and no later call at a
signature already met may trace (:class:`SignatureAudit`).
"""

from __future__ import annotations

import functools
import os
import sys

import jax

from autograder.grading import render
from autograder.grading.results import CallRaised, PropertyFailure
from autograder.kit import observing

_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
#: Sent through JAX's monitoring at the end of every observation: if it does not
#: arrive, the code under observation removed or bypassed the grader's listener.
_CANARY = "<autograder canary>"
_JAX_FOLDER = os.path.dirname(jax.__file__) + os.sep
#: The JAX function that records the trace event, holding the traced function as ``fun``.
_TRACING_FRAME = "_trace_for_jit"
_MAX_DEPTH = 12


def _traced_function():
    """The Python function JAX is tracing when its trace event fires, or None if unknown
    (call it from the event's listener)."""
    frame = sys._getframe(2)
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return None
        if frame.f_code.co_name == _TRACING_FRAME and frame.f_code.co_filename.startswith(_JAX_FOLDER):
            return frame.f_locals.get("fun")
        frame = frame.f_back
    return None


def _layers(fn):
    """``fn`` and every function under its partials and ``functools.wraps`` layers, outermost first."""
    for _ in range(21):
        yield fn
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif getattr(fn, "__wrapped__", None) is not None:
            fn = fn.__wrapped__
        else:
            return


def is_jax_internal(fn) -> bool:
    """Whether tracing ``fn`` is JAX's own eager work, not the student's program.

    An eager ``jnp`` call traces one of JAX's functions that JAX itself wrapped in a jit
    when it was imported (its module holds the jitted wrapper, not the function) or a
    closure JAX made for one primitive. A student's ``jax.jit(jnp.sum)`` traces
    ``jnp.sum`` itself, which its module holds as it is: that trace is the student's.
    """
    for layer in _layers(fn):  # any layer of Python code outside JAX is the student's, whatever it wraps
        layer_code = getattr(layer, "__code__", None)
        if layer_code is not None and not layer_code.co_filename.startswith(_JAX_FOLDER):
            return False
    fn = layer  # the innermost: what the partials and functools.wraps layers hold (vmap, custom wrappers)
    code = getattr(fn, "__code__", None)
    if code is None:  # a builtin or an object without Python code: not the student's source
        call_code = getattr(getattr(type(fn), "__call__", None), "__code__", None)
        if call_code is not None and not call_code.co_filename.startswith(_JAX_FOLDER):
            return False  # a callable object of the student's class, whatever module it claims
        module = getattr(fn, "__module__", "") or ""
        return module == "jax" or module.startswith(("jax.", "jaxlib"))
    if not code.co_filename.startswith(_JAX_FOLDER):
        return False
    if "<locals>" in getattr(fn, "__qualname__", "<locals>"):
        return True
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    return getattr(module, getattr(fn, "__name__", ""), None) is not fn


def student_traced() -> bool:
    """Inside a listener of the trace event: whether JAX is tracing the student's code
    rather than doing eager work of its own."""
    fn = _traced_function()
    return fn is None or not is_jax_internal(fn)


class EventLog:
    """Records one of JAX's monitoring events while active (a context manager), for the
    student's code only: a subclass names the ``EVENT``, the ``NOUN`` feedback uses for it, and
    ``is_students()``, the attribution made inside the listener.

    A canary event is sent when the block ends; if it does not arrive, the code under
    observation removed or bypassed the grader's listener, which is reported as tampering.
    The student's code may also run in another process (a kernel serving a judge): its events
    are observed there, by the same class, and taken in here (:mod:`autograder.kit.observing`).
    """

    EVENT: str
    KIND: str  # the event again: what autograder.kit.observing calls an observation's kind
    NOUN: str

    def __init__(self):
        self.names: list[str] = []
        #: How many times JAX's own eager work fired the event (not the student's code).
        self.jax_own = 0
        self._canary_seen = False

    @staticmethod
    def is_students() -> bool:
        raise NotImplementedError

    def _listen(self, event, duration_secs, **kwargs):
        if event != self.EVENT:
            return
        if kwargs.get("fun_name") == _CANARY:
            self._canary_seen = True
            return
        if self.is_students():
            self.names.append(kwargs.get("fun_name", "?"))
        elif "autograder" not in kwargs.get("fun_name", ""):
            self.jax_own += 1

    def __enter__(self):
        self._here = observing.here()
        if self._here:
            jax.monitoring.register_event_duration_secs_listener(self._listen)
        observing.opened(self)
        return self

    def __exit__(self, *exc) -> None:
        observing.closed(self)
        if not self._here:
            return  # the process that ran the student's code checked its own canary
        jax.monitoring.record_event_duration_secs(self.EVENT, 0.0, fun_name=_CANARY)
        try:
            jax.monitoring.unregister_event_duration_listener(self._listen)
        except (AssertionError, ValueError):
            pass  # already removed by the code under observation; the canary reports it
        if not self._canary_seen and exc[0] is None:
            raise PropertyFailure(
                f"Tampering: JAX's {self.NOUN} events stopped reaching the grader while the notebook's code ran "
                f"(its monitoring listeners were removed or bypassed), so its {self.NOUN}s cannot be counted."
            )

    def report(self) -> dict:
        """What was observed here, for an observation of the same kind in another process."""
        return {"names": list(self.names), "jax_own": self.jax_own}

    def absorb(self, report: dict) -> None:
        """Events observed in the process that ran the student's code (its :meth:`report`)."""
        names, jax_own = report.get("names", []), report.get("jax_own", 0)
        if not isinstance(names, list) or type(jax_own) is not int or not 0 <= jax_own <= 100_000:
            raise ValueError("not a report of events")
        self.names.extend(str(name)[:200] for name in names[:100_000])
        self.jax_own += jax_own

    @property
    def count(self) -> int:
        return len(self.names)


class TraceLog(EventLog):
    """Records the traces of the student's code while it is active (a context manager).

    >>> with TraceLog() as log:
    ...     f(x)
    >>> log.count, log.names

    Eager JAX operations inside the block (building an array, ``jnp.sum`` outside
    ``jit``) trace JAX's own small programs; they are not counted.
    """

    EVENT = KIND = _TRACE_EVENT
    NOUN = "trace"
    is_students = staticmethod(student_traced)


def traces_during(fn, *args, **kwargs):
    """Call ``fn`` and return ``(result, number of traces of the student's code it caused)``."""
    with TraceLog() as log:
        result = fn(*args, **kwargs)
    return result, log.count


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


#: Why a function traces on every call although its signature repeats.
_EVERY_CALL = (
    "It traces on every call: a lambda, `functools.partial` or inner `def` created inside the call and handed "
    "to `jax.jit` is a new function each time, and jit's cache is keyed on the wrapped function, so it never "
    "hits. (Wrapping the same top-level function in `jax.jit` again finds its program.) Build the jitted "
    "function once, at top level."
)


class Retraced(PropertyFailure):
    """A trace at a signature already met; ``cure`` is the sentence that explains it."""

    def __init__(self, problem: str, *, cure: str, **parts):
        super().__init__(problem, **parts)
        self.cure = cure


class SignatureAudit:
    """Trace behaviour of one student function, measured call by call.

    ``require_a_trace(signature, *args)`` is the evidence that the function is
    compiled at all: a call at a signature no other check uses must trace the
    student's code (if it was traced before, the function's cache is cleared and the
    call made once more). Then each ``call(signature, *args, **kwargs)`` is measured
    (``signature`` is a short text such as ``"float32[3], mode='sum'"``): once a
    signature has been called, no later call at it may trace. A call that raises is
    not counted: its mistake belongs to the value properties. ``finish()`` fails only
    when no call at all could be observed. Nothing here depends on how many
    programs JAX compiles for new signatures: only what a repeated signature does.
    There, a trace of the student's code, or a compile of the student's program (a
    jit inside an eager ``jax.checkpoint`` traces inside that transformation's own
    trace, which fires no trace event), counts as the function not reusing its program.
    """

    def __init__(self, submission, name: str, fix: str):
        self.submission = submission
        self.name = name
        self.fix = fix  # the lesson's cure for a retrace at a repeated signature
        self.first_calls: dict[str, str] = {}  # signature -> the rendered first call
        self.calls = 0
        self.first_error: PropertyFailure | None = None

    def _measure(self, *args, **kwargs):
        """The call's result, the traces of the student's code it caused, and its compiles of the
        student's programs (a jit called inside an eager transformation such as ``jax.checkpoint``
        traces inside that transformation's own trace, which fires no trace event, and still compiles)."""
        from autograder.kit.compiles import CompileLog

        with TraceLog() as traces, CompileLog() as compiles:
            result = self.submission.call(self.name, *args, **kwargs)
        return result, traces.count, compiles.count

    def cold_start(self) -> "SignatureAudit":
        """Start from a cold cache, so that a program an earlier check compiled cannot hide a
        retrace here (a weakly typed full batch, a static gain value met before)."""
        self._reset()
        return self

    def _reset(self) -> None:
        clear_cache_of(self.submission.function(self.name))

    def require_a_trace(self, signature: str, *args, **kwargs) -> None:
        """Fail unless a call at ``signature`` traces the student's code (from a cold cache if need be)."""
        text = render.call(self.name, args, kwargs)
        try:
            _, traces, _ = self._measure(*args, **kwargs)
            if not traces:
                self._reset()
                _, traces, _ = self._measure(*args, **kwargs)
        except CallRaised as failure:
            self.skip(failure)
            return  # judged below on calls that do not raise, or by finish()
        self.first_calls.setdefault(signature, text)
        self.calls += 1
        self._at_most_one(signature, text, traces)
        if not traces:
            raise PropertyFailure(
                f"`{self.name}` ran at a signature it had never seen ({signature}), from a cold cache, and JAX "
                "traced none of your code: it is not compiled with `jax.jit` (or its trace is hidden), so there "
                "is no compiled program to reuse.",
                example=text,
                got="0 traces on the first call at a new signature",
                expected="one trace on the first call at a signature, none on repeats",
            )

    def call(self, signature: str, *args, **kwargs):
        """Make one measured call; return its result, or None when the call raised."""
        text = render.call(self.name, args, kwargs)
        try:
            result, traces, compiles = self._measure(*args, **kwargs)
        except CallRaised as failure:
            self.skip(failure)
            return None
        self.calls += 1
        first = self.first_calls.get(signature)
        if first is None:
            self.first_calls[signature] = text  # may trace, or reuse a program an earlier cell built
            self._at_most_one(signature, text, traces)
            return result
        traces = traces or compiles  # at a signature met before, a compile is a program made again
        if traces:
            _, again, again_compiled = self._measure(*args, **kwargs)  # to tell "every call" from "this call"
            again = again or again_compiled
            cure = _EVERY_CALL if again else self.fix
            raise Retraced(
                f"`{self.name}` traced again ({_plural(traces, 'new trace')}) at a signature it had already "
                f"met ({signature}). {cure}",
                cure=cure,
                example=f"{first}, later {text}" + (", and again the same call" if again else ""),
                got=f"{_plural(traces, 'trace')} on the repeated call"
                + (f", {_plural(again, 'trace')} on the next" if again else ""),
                expected="no new trace at a signature already met",
            )
        return result

    def skip(self, failure: CallRaised) -> None:
        """A call the property could not make (a helper of the student's raised): not counted."""
        self.first_error = self.first_error or failure

    def _at_most_one(self, signature: str, text: str, traces: int) -> None:
        if traces > 1:
            raise PropertyFailure(
                f"`{self.name}` traced {traces} times in one call at a new signature ({signature}): one trace per "
                "signature is all jit needs. Calling the same jit once positionally and once by keyword, or two "
                "different jits, makes each call trace again.",
                example=text,
                got=f"{traces} traces in one call",
                expected="at most one trace per new signature",
            )

    def finish(self) -> None:
        """Fail if no call could be observed at all (every call raised)."""
        if not self.calls and self.first_error is not None:
            raise PropertyFailure(
                f"No trace of `{self.name}` could be observed, because every call raised. {self.first_error.problem}",
                example=self.first_error.example,
            )


def clear_cache_of(fn) -> None:
    """A cold cache for ``fn``: its own if it has one (a jitted function), else all of JAX's."""
    clear = getattr(fn, "clear_cache", None)
    (clear if callable(clear) else jax.clear_caches)()


def signature_of(x) -> str:
    """What jit keys a call on for one argument: dtype, shape and weak type, e.g. ``float32[8]``."""
    try:
        aval = jax.typeof(x)
    except TypeError:
        return render.kind(x)
    weak = " (weakly typed)" if getattr(aval, "weak_type", False) else ""
    return f"{aval.dtype}[{','.join(str(d) for d in aval.shape)}]{weak}"
