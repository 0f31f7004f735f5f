"""What a property hands to a student's function, beyond arrays and numbers: code of the grader's
that must run where the student's code runs, and that can travel there as data.

- :class:`Compiled`: a jitted function of the grader's (a right step, so that a trainer is judged
  whatever the notebook's own step does), handed over as its compiled program (``jax.export``):
  the same numbers, and no source to read.
- :class:`Thunk`: steps on a jitted program of the grader's (call it, ``.trace``, ``.lower``,
  compile it ahead of time, clear its cache), for a ledger that observes what a thunk makes JAX
  do. The program, built from a :mod:`autograder.kit.programs` description, lives on in the
  process that runs the thunks, one per name, so a later thunk meets its cache.

A kernel judged from outside (:mod:`autograder.grading.judge`) gets each as data
(:mod:`autograder.grading.wire`), rebuilds it here, and reports what happened to it
(:meth:`Thunk.report`: how often the student's code called it).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import inspect
import itertools

import jax
import numpy as np

from autograder.kit import programs

#: What a thunk may do to its program, on what inputs.
ACTIONS = ("call", "trace", "lower", "aot", "clear", "read", "static", "commit", "stack", "work", "log_on", "log_off",
           "log_read")
LR_FORMS = ("weak", "strong")
MAX_ACTIONS, MAX_LENGTH = 8, 64


class HandedError(ValueError):
    """Data that is not something a property hands over."""


class Compiled:
    """A jitted function of the grader's at given abstract inputs (``jax.ShapeDtypeStruct``,
    symbolic sizes allowed), callable like the function, and travelling as its exported program.

    It is exported when first called or sent, never when made: exporting starts JAX's backend and
    its threads, and a property module is imported before a process forks its grading workers."""

    def __init__(self, fn, *avals):
        self._fn, self._avals = fn, avals
        self._exported = self._call = None
        self._serialized: bytes | None = None
        self.parameters = tuple(inspect.signature(fn).parameters)

    def _export(self) -> None:
        if self._exported is None:
            from jax import export

            self._exported = export.export(jax.jit(self._fn))(*self._avals)
            self._call = jax.jit(self._exported.call)

    @functools.cached_property
    def _signature(self) -> inspect.Signature:
        return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                  for name in self.parameters])

    def __call__(self, *args, **kwargs):
        """Called as the function would be, its arguments by position or by name."""
        self._export()
        return self._call(*self._signature.bind(*args, **kwargs).args)

    def __repr__(self) -> str:
        return "<the grader's compiled step>"

    def serialized(self) -> str:
        """The exported program, as text (base64)."""
        if self._serialized is None:
            self._export()
            self._serialized = self._exported.serialize()
        return base64.b64encode(self._serialized).decode("ascii")

    @classmethod
    def from_serialized(cls, text: str, parameters) -> "Compiled":
        """The program :meth:`serialized` gave, with its parameters' names; one object per program
        in this process (a repeat meets the same jitted call, and its cache)."""
        if not (isinstance(parameters, list) and len(parameters) <= 32
                and all(isinstance(p, str) and p.isidentifier() for p in parameters)):
            raise HandedError("a compiled program's parameters must be names")
        key = hashlib.sha256((text + " ".join(parameters)).encode("utf-8")).hexdigest()
        if key not in _COMPILED:
            from jax import export

            made = cls.__new__(cls)
            made._serialized = None
            made._exported = export.deserialize(bytearray(base64.b64decode(text, validate=True)))
            made._call = jax.jit(made._exported.call)
            made.parameters = tuple(parameters)
            _COMPILED[key] = made
        return _COMPILED[key]


_COMPILED: dict[str, Compiled] = {}
#: The learning-rate-static twin and the heavy companion of each thunk program, by the program's id
#: (kept beside it).
_STATIC: dict[int, tuple] = {}
_HEAVY: dict[int, tuple] = {}
#: The jitted programs of thunks, by name, in this process.
_PROGRAMS: dict[str, object] = {}


class Thunk:
    """Steps on the grader's jitted program ``program`` (built from ``recipe``, a
    :func:`programs.program` description and arity, the first time the name is met here).

    Each action is ``(kind, length, lr form)``: ``kind`` one of :data:`ACTIONS`, the inputs a float32
    θ of that length and a learning rate 0.25, a Python float (``"weak"``) or a float32 array
    (``"strong"``). Calling the thunk does them in turn and returns None: what JAX did is the
    evidence, never what a step returned (a ``.trace`` gives a ``Traced``, which would name the kind);
    ``calls`` counts the calls. Besides the program's own methods, an action may be a step of a
    training loop gone slow: ``"read"`` calls it and converts the result to NumPy (a host read),
    ``"static"`` calls the program jitted with the learning rate static, at a learning rate this
    process has not used before (a new trace every time), ``"commit"`` calls it on θ committed to the
    first device with ``jax.device_put`` (a new compile, not a new trace, the first time after an
    uncommitted θ), ``"stack"`` calls it and stacks copies of the result eagerly, in a number never
    stacked before in this process (an eager operation at a new shape: a trace), ``"work"`` runs a
    program of the same name's that multiplies 1024-by-1024 matrices and converts the result to NumPy
    (slow, and reusing its program after its first run), ``"log_on"`` and ``"log_off"`` set JAX's option
    ``jax_log_compiles`` (the program untouched), so that a function that must leave the option as it
    found it meets it on, and ``"log_read"`` notes the option's value where the thunk runs, from the
    module JAX really is (``log_option``, reported back): never through a name of the notebook's, which
    the notebook may have bound to anything.
    """

    def __init__(self, program: str, recipe: tuple, actions: tuple):
        self.program, self.recipe, self.actions = program, recipe, tuple(map(tuple, actions))
        self.calls = 0
        self.log_option: bool | None = None

    def __call__(self):
        self.calls += 1
        jitted = _PROGRAMS.get(self.program)
        if jitted is None:
            jitted = _PROGRAMS[self.program] = jax.jit(programs.program(*self.recipe))
        for action in self.actions:
            if action[0] == "log_read":
                self.log_option = bool(jax.config.jax_log_compiles)
            else:
                _act(jitted, *action)

    def __repr__(self) -> str:
        return "<a thunk of the grader's>"

    def handed(self):
        """What the notebook's code is given: a plain function of no arguments that runs this thunk,
        without the thunk's attributes (its program and actions would name its kind)."""
        def thunk():
            self()

        return thunk

    def to_data(self) -> dict:
        return {"program": self.program, "recipe": [self.recipe[0], self.recipe[1]],
                "actions": [list(a) for a in self.actions]}

    @classmethod
    def from_data(cls, data: dict) -> "Thunk":
        program, recipe, actions = data.get("program"), data.get("recipe"), data.get("actions")
        if not isinstance(program, str) or len(program) > 200:
            raise HandedError("a thunk's program must be named")
        if not (isinstance(recipe, list) and len(recipe) == 2 and recipe[1] in programs.ARITIES):
            raise HandedError("a thunk's recipe must be a description and an arity")
        try:
            parts = programs.checked(recipe[0])
        except programs.ProgramError as error:
            raise HandedError(str(error)) from None
        if not isinstance(actions, list) or len(actions) > MAX_ACTIONS or not all(
            isinstance(a, list) and len(a) == 3 and a[0] in ACTIONS and type(a[1]) is int
            and 1 <= a[1] <= MAX_LENGTH and a[2] in LR_FORMS for a in actions
        ):
            raise HandedError("a thunk's actions must be (kind, length, lr form)")
        return cls(program, (parts, recipe[1]), tuple(actions))

    def report(self) -> dict:
        report = {"calls": self.calls}
        if self.log_option is not None:
            report["log_option"] = self.log_option
        return report

    def absorb(self, report: dict) -> None:
        calls = report.get("calls", 0) if isinstance(report, dict) else 0
        self.calls += calls if type(calls) is int and 0 <= calls <= 1000 else 0
        option = report.get("log_option") if isinstance(report, dict) else None
        if type(option) is bool:
            self.log_option = option


#: Learning rates a ``"static"`` action has not used yet in this process, and numbers of copies a
#: ``"stack"`` action has not stacked.
_FRESH_RATES = (0.25 + 2.0 ** -12 * k for k in itertools.count(1))
_FRESH_COUNTS = itertools.count(2)


def _act(jitted, kind: str, length: int, form: str):
    if kind in ("log_on", "log_off"):
        return jax.config.update("jax_log_compiles", kind == "log_on")
    theta = jax.device_put(np.linspace(0.5, 1.0, length, dtype=np.float32))
    lr = 0.25 if form == "weak" else jax.device_put(np.float32(0.25))
    if kind == "call":
        return jitted(theta, lr)
    if kind == "read":
        return np.asarray(jitted(theta, lr))
    if kind == "static":
        static = _STATIC.get(id(jitted))
        if static is None:
            static = _STATIC[id(jitted)] = (jitted, jax.jit(jitted.__wrapped__, static_argnums=1))
        return static[1](theta, next(_FRESH_RATES))
    if kind == "commit":
        return jitted(jax.device_put(theta, jax.devices()[0]), lr)
    if kind == "stack":
        return jax.numpy.stack([jitted(theta, lr)] * next(_FRESH_COUNTS))
    if kind == "work":
        heavy = _HEAVY.get(id(jitted))
        if heavy is None:
            heavy = _HEAVY[id(jitted)] = (jitted, jax.jit(lambda m: (m @ m) @ m))
        return np.asarray(heavy[1](np.full((1024, 1024), 1e-3, np.float32)))
    if kind == "trace":
        return jitted.trace(theta, lr)
    if kind == "lower":
        return jitted.lower(theta, lr)
    if kind == "aot":
        return jitted.trace(theta, lr).lower().compile()
    return jitted.clear_cache()
