"""JAX's own cache-miss explanations, captured live while student or grader code runs.

With ``jax_explain_cache_misses`` on, JAX (0.12) explains every miss of its tracing
cache in one WARNING record on the logger ``jax._src.interpreters.partial_eval`` (the
module's ``logger``), a multi-line text starting ``TRACING CACHE MISS at <callsite>:``
and then one of these (measured here, see ``CACHE_MISSES_NOTES.md``; each line is quoted
behind a bar, so that no line of this file is one of JAX's: the scrubber of feedback would take
it for the grader's)::

    | never seen function:
    |   <name> id=<id> defined at <file>:<line>
    | [but seen another function defined on the same line; maybe the function is
    |  being re-defined repeatedly, preventing caching?]

    | for <name> defined at <file>:<line>
    | all previously seen cache keys differ. For the closest previous key:
    | different input types:
    | * at x, now f32[4] and before f32[3]              (shape; i32[4] vs f32[3]: dtype;
    |                                                    f32[]{weak_type=False} ...: weak type)
    | different input pytree:
    | * at input path [0], now tuple of length 0 and before tuple of length 1, ...
    | cache miss explanation unavailable                 (the closest key differs only in what
    |                                                    JAX does not list: a static value)

JAX ranks the keys it has seen by the first kind of difference (tracing context, pytree,
debug info, types, then what it cannot list) and explains the best one: a static value is
"unavailable" only when every key seen differs from the call in nothing else. (JAX 0.10
listed a static value as a ``Static(val=...)`` pytree difference; 0.12 does not.)

The grader must not let these records reach stderr (nbgrader zeroes a cell that writes
there), and the grading sandbox disables logging altogether while a property runs
(``logging.disable(CRITICAL)``), so a handler on JAX's logger would see nothing and lifting
the switch would let every other logger through. Instead :class:`CacheMissLog` puts a
private logger of its own in the place of that module's ``logger`` for the duration of the
block: it records every message and passes nothing on. The flag is set with JAX's
thread-local context manager, so the global configuration (a notebook may have turned it
on itself) is untouched and restored on exit, even if the block raises.

*Limits.* The wording is JAX's internal text: :func:`classify` matches it loosely, and
returns None for anything it does not recognise, which a property should skip rather than
grade. JAX explains only misses of functions defined in user files, and whether it adds
the "re-defined repeatedly" remark depends on every earlier miss at the same call site in
the process. A miss of the C++ dispatch cache that hits the tracing cache (a NumPy
argument after a ``jax.Array``) is not explained.
"""

from __future__ import annotations

import logging
import re

import jax

from autograder.grading.results import PropertyFailure

#: The logger JAX 0.12 explains tracing-cache misses on.
LOGGER_NAME = "jax._src.interpreters.partial_eval"
_HEADER = "TRACING CACHE MISS"
#: Logged through the stand-in logger at the end of every block: if it does not arrive,
#: the code under observation replaced JAX's logger again or silenced the stand-in.
_CANARY = "<autograder cache-miss canary>"

#: The fixed set of causes the lesson names, in the notebook's words.
CAUSES = (
    "new function", "redefined function", "new shape", "new dtype", "weak type", "new static value",
    "new structure",
)


def _explaining_module():
    from jax._src.interpreters import partial_eval

    return partial_eval


class _Recorder(logging.Logger):
    """A logger outside logging's hierarchy that keeps every message and emits none."""

    def __init__(self):
        super().__init__(LOGGER_NAME, logging.DEBUG)
        self.propagate = False
        self.messages: list[str] = []

    def isEnabledFor(self, level):  # noqa: N802 - logging's name; not subject to logging.disable
        return True

    def _log(self, level, msg, args, exc_info=None, extra=None, stack_info=False, stacklevel=1):
        try:
            text = msg % args if args else str(msg)
        except Exception:  # noqa: BLE001 - a malformed record is still a record
            text = str(msg)
        self.messages.append(text)


class CacheMissLog:
    """Records JAX's cache-miss explanations while it is active (a context manager).

    >>> with CacheMissLog() as log:
    ...     f(x)
    >>> log.explanations        # one text per tracing-cache miss, in order
    """

    def __init__(self):
        self._recorder = _Recorder()
        self._module = None
        self._saved = None
        self._flag = None

    @property
    def explanations(self) -> list[str]:
        return [m for m in self._recorder.messages if m.startswith(_HEADER)]

    def __enter__(self) -> "CacheMissLog":
        self._module = _explaining_module()
        self._saved = getattr(self._module, "logger", None)
        self._module.logger = self._recorder
        self._flag = jax.explain_cache_misses(True)
        self._flag.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._flag.__exit__(*exc)
        finally:
            stand_in = getattr(self._module, "logger", None)
            if stand_in is not None:
                stand_in.log(logging.WARNING, _CANARY)
            self._module.logger = self._saved
        if _CANARY not in self._recorder.messages and exc[0] is None:
            raise PropertyFailure(
                "Tampering: JAX's cache-miss explanations stopped reaching the grader while the notebook's code "
                "ran (JAX's logger was replaced), so its misses cannot be read."
            )


def misses_during(fn, *args, **kwargs):
    """Call ``fn`` and return ``(result, the explanations of the cache misses it caused)``."""
    with CacheMissLog() as log:
        result = fn(*args, **kwargs)
    return result, log.explanations


# --- the grader's own reading of an explanation --------------------------------------

_AVAL = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\](?:\{weak_type=(?P<weak>True|False)\})?")
_TYPE_LINE = re.compile(r"\*\s*at\s+[^,]*,\s*now\s+(?P<now>\S+)\s+and\s+before\s+(?P<before>\S+)")
_PYTREE_LINE = re.compile(r"\*\s*at input path")


def classify(explanation: str) -> str | None:
    """The cause of one miss, from :data:`CAUSES`, or None for a text this reading does not know.

    A new function says "never seen function" ("redefined function" when JAX adds that
    it saw another function defined on the same line). "Explanation unavailable" is a new
    static value (the only key difference JAX does not list, for the calls the graders make);
    any pytree difference is a new structure; for changed types the first argument listed
    decides: a new dtype if the dtypes differ, else a new shape if the shapes differ, else a
    weak type.
    """
    if not isinstance(explanation, str) or _HEADER not in explanation:
        return None
    text = " ".join(explanation.split())
    if "never seen function" in text:
        return "redefined function" if "re-defined repeatedly" in text else "new function"
    if "cache miss explanation unavailable" in text:
        return "new static value"
    if "different input pytree" in text:
        bullets = explanation.split("different input pytree", 1)[1]
        if not any(_PYTREE_LINE.search(line) for line in bullets.splitlines()):
            return None
        return "new structure"
    if "different input types" in text:
        bullets = explanation.split("different input types", 1)[1]
        for line in bullets.splitlines():
            found = _TYPE_LINE.search(line)
            if found is None:
                continue
            now, before = _AVAL.match(found["now"]), _AVAL.match(found["before"])
            if now is None or before is None:
                return None
            if now["dtype"] != before["dtype"]:
                return "new dtype"
            if now["shape"] != before["shape"]:
                return "new shape"
            if (now["weak"] or "") != (before["weak"] or ""):
                return "weak type"
            return None
        return None
    return None
