"""compile_log: turn JAX's compile log on for one piece of work, keep it as text, and read it.

Part A (`compile_log_of(work)`) is judged by running work of the grader's (a thunk of steps on a
program the notebook never saw) inside the student's function, and reading the text it returns for
that program's records, against the steps the grader chose. Part B (`compiled_programs(log_text)`) is
judged on JAX's own log of sessions the grader runs in its own process, on functions and steps the
notebook never shows, written by handlers of several formats; the programs expected come from what
JAX did during the session (its compile events, and the types it handed each *Compiling* record),
never from reading the text.
"""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st

from autograder.kit import PropertyFailure, TRACES, drawn, first_failure, prop, render
from autograder.kit.compile_log import FORMATS, phases_of, session
from autograder.kit.handed import Thunk

# --- Part A: compile_log_of(work) -----------------------------------------------------------------

#: The grader's program for the work (two arguments, so JAX names it `<lambda>`).
_RECIPE = ((("ops", 3),), 2)
_PROGRAM = "<lambda>"
#: A new program for every work, so that none meets another's cache.
_WORK_NUMBERS = itertools.count(1)
#: What each kind of step does to a program at a signature met nowhere else: (traces, lowerings, compiles).
_PHASES = {"call": (1, 1, 1), "trace": (1, 0, 0), "lower": (1, 1, 0), "aot": (1, 1, 1), "again": (0, 0, 0)}
_SAID = {"call": "called", "trace": "`.trace`d", "lower": "`.lower`ed", "aot": "`.lower(...).compile()`d",
         "again": "called again"}


class _Work:
    """A thunk of steps on a program of the grader's (a fresh one, or ``program``'s), each at a length no
    other step uses but ``"again"``, a call at a signature the program has met (JAX does nothing new)."""

    def __init__(self, kinds: tuple[str, ...], first_length: int, program: str | None = None, again: int = 0):
        self.kinds = kinds
        self.lengths = tuple(again if kind == "again" else first_length + i for i, kind in enumerate(kinds))
        self.program = program or f"compile log work {next(_WORK_NUMBERS)}"
        self.thunk = Thunk(self.program, _RECIPE, tuple(("call" if kind == "again" else kind, length, "weak")
                                                        for kind, length in zip(kinds, self.lengths)))
        self.expected = tuple(map(sum, zip(*(_PHASES[k] for k in kinds))))

    def words(self) -> str:
        steps = ", ".join(f"{_SAID[k]} at θ float32[{n}]" for k, n in zip(self.kinds, self.lengths))
        return f"a work that has a jitted function of the grader's {steps}"


def _captured(submission, work: _Work) -> str:
    text = submission.call("compile_log_of", work.thunk)
    if work.thunk.calls != 1:
        raise PropertyFailure(
            f"`compile_log_of(work)` ran the work {work.thunk.calls} time(s); it should run it once.",
            example=work.words(),
        )
    if not isinstance(text, str):
        raise PropertyFailure(f"`compile_log_of(work)` returned {render.kind(text)}, not a string.",
                              example=work.words())
    return text


def _judge_capture(work: _Work, text: str, problem: str, extra_only: bool = False) -> None:
    """The text's records of the work's program against the work's steps: all of them, or (``extra_only``,
    for a property about records that do not belong) none beyond them, and not none at all."""
    got = phases_of(text, _PROGRAM)
    wrong = (any(g > e for g, e in zip(got, work.expected)) or not any(got)) if extra_only else got != work.expected
    if wrong:
        raise PropertyFailure(
            problem,
            example=work.words(),
            got="records of {} trace(s), {} lowering(s) and {} XLA compilation(s) of that function".format(*got),
            expected="{}, {} and {}: JAX's records of what the work made it do".format(*work.expected),
        )


@prop(
    group="capture",
    points=1,
    title="`compile_log_of(work)` returns what JAX's compile log wrote while the work ran",
    hint="Your text does not hold the records JAX writes for what the work did. Is JAX writing its compile log "
    "while the work runs, and does every record it writes reach your text, whole? (Part A)",
)
def test_captures_the_work(submission):
    submission.function("compile_log_of")
    order = drawn.rng(submission.notebook_memo)
    kinds = ["call", "trace", "lower", "aot"]
    order.shuffle(kinds)
    work = _Work(tuple(kinds), 3 + order.randrange(4))
    _judge_capture(work, _captured(submission, work),
                   "The text `compile_log_of` returned does not hold JAX's records of the work.")


@prop(
    group="capture",
    points=1,
    title="each text holds its own work's records only, and JAX's option is left as it was",
    hint="Something of one call of `compile_log_of` outlived it, or reached into it. What did your function "
    "change, and did it change it back? (Part A)",
)
def test_holds_its_own_work_only(submission):
    submission.function("compile_log_of")
    first, outside = _Work(("call", "aot"), 11), _Work(("call",), 14)
    # the second work calls the outside work's program again at its signature: JAX does nothing new there
    second = _Work(("again", "trace", "call"), 16, program=outside.program, again=14)
    for option in (False, True):
        switch = Thunk(f"compile log switch {next(_WORK_NUMBERS)}", _RECIPE,
                       ((f"log_{'on' if option else 'off'}", 1, "weak"),))
        submission.run_grader(switch)
        try:
            if option:
                _captured(submission, _Work(("call",), 20))
            else:
                _captured(submission, first)
                submission.run_grader(outside.thunk)
                _judge_capture(
                    second, _captured(submission, second),
                    "A text holds more than what its own work made JAX do: records of work done before the call "
                    "began, or of work JAX would not have had to do again.", extra_only=True,
                )
            after = submission.get("jax.config.jax_log_compiles")
        finally:
            if option:
                submission.run_grader(Thunk(f"compile log switch {next(_WORK_NUMBERS)}", _RECIPE,
                                            (("log_off", 1, "weak"),)))
        if after is not option:
            raise PropertyFailure(
                "JAX's option `jax_log_compiles` is not as it was once `compile_log_of` has returned.",
                example=f"`compile_log_of(work)` with the option {'on' if option else 'off'} before the call",
                got=f"jax.config.jax_log_compiles is {after!r}", expected=repr(option),
            )


# --- Part B: compiled_programs(log_text) -----------------------------------------------------------

#: Names of the grader's functions, as JAX writes them: plain, a lambda's, and two that hold words the
#: records use (a reader that splits on them misreads them).
_NAMES = ("loss_fn", "<lambda>", "jit_update", "apply_tracing_mask", "scaled")
_STEP_WORDS = {
    "call": "`{n}(x, 0.5)`", "repeat": "`{n}(x, 0.5)` again", "trace": "`{n}.trace(x, 0.5)`",
    "lower": "`{n}.lower(x, 0.5)`", "aot": "`{n}.lower(x, 0.5).compile()`",
    "commit": "`{n}(x, 0.5)` with x committed (`jax.device_put(x, jax.devices()[0])`)",
    "grad": "`jax.grad(lambda v: jnp.sum({n}(v, 0.5)))(x)`", "clear": "`{n}.clear_cache()`",
    "static": "`{n}` jitted with its float static, called with a new value",
    "eager": "`jnp.cos(jnp.arange(len(x)) * 0.5)` eagerly",
}
_NOTES = ("INFO:train:epoch 1 finished in 2.31 sec", "step 200: loss 0.4172 (compiling took most of the first step)")
_FORM_WORDS = {
    "plain": "each record's message alone",
    "basic": "logging's basic format, `LEVEL:logger:message`",
    "absl": "absl's format, `W1208 10:21:03.412345   1234 dispatch.py:236] message`",
    "stamped": "`2026-12-08 10:21:03,412 - logger - LEVEL - message`",
}
#: Steps whose every lowering is compiled, and steps that lower or trace without compiling.
_COMPILING = ("call", "repeat", "aot", "commit", "grad", "clear", "static")
_PHASES_ONLY = ("trace", "lower")
#: Sessions every notebook meets: each kind of step, each format, and the names that trip a reader.
_EVERY_FORMAT = (
    ((("scaled", 0, "call", 3), ("scaled", 0, "repeat", 3), ("scaled", 0, "call", 5)), "plain", ()),
    ((("jit_update", 3, "call", 5), ("jit_update", 3, "commit", 5), ("jit_update", 3, "grad", 5),
      ("apply_tracing_mask", 0, "eager", 7), ("apply_tracing_mask", 0, "aot", 7)), "absl", ()),
    ((("scaled", 2, "static", 3), ("scaled", 2, "static", 4), ("scaled", 2, "clear", 3),
      ("scaled", 2, "call", 3), ("<lambda>", 1, "call", 8)), "stamped", _NOTES),
    ((("<lambda>", 2, "call", 4), ("loss_fn", 1, "aot", 6), ("loss_fn", 1, "call", 4)), "basic", _NOTES[:1]),
)
_NEVER_COMPILED = (
    ((("loss_fn", 1, "lower", 4), ("loss_fn", 1, "aot", 6), ("<lambda>", 2, "trace", 4),
      ("<lambda>", 2, "call", 4)), "basic", _NOTES[:1]),
    ((("scaled", 0, "call", 3), ("scaled", 0, "lower", 5), ("scaled", 0, "trace", 6), ("scaled", 0, "call", 6)),
     "plain", ()),
    ((("jit_update", 3, "trace", 7), ("jit_update", 3, "lower", 8), ("apply_tracing_mask", 1, "lower", 3),
      ("apply_tracing_mask", 1, "call", 5)), "absl", ()),
    # a lowering kept and compiled later, when a call meets its signature: that compile writes no
    # lowering record of its own, and another lowering of the function came between
    ((("loss_fn", 1, "lower", 5), ("loss_fn", 1, "aot", 6), ("loss_fn", 1, "call", 5)), "plain", ()),
    ((("scaled", 0, "lower", 4), ("scaled", 0, "call", 6), ("scaled", 0, "call", 4), ("<lambda>", 2, "lower", 3)),
     "stamped", _NOTES[1:]),
)


def _plans(kinds, least_phases: int):
    def usable(steps):
        # a signature only lowered is never compiled later in the session (JAX would compile the lowering
        # it kept, with no new *Compiling* record: a case this part does not ask about)
        lowered = {(name, length) for name, step, length in steps if step == "lower"}
        others = {(name, length) for name, step, length in steps if step != "lower"}
        return not lowered & others and sum(step in _PHASES_ONLY for _, step, _ in steps) >= least_phases

    return st.tuples(
        st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(kinds), st.integers(3, 9)),
                 min_size=2, max_size=6).filter(usable),
        st.sampled_from(FORMATS),
    )


def _story(plan, form: str) -> str:
    steps = "; ".join(_STEP_WORDS[step].format(n=name) + ("" if step == "clear" else f" at x float32[{length}]")
                      for name, _, step, length in plan)
    return f"the log of a session ({_FORM_WORDS[form]}): {steps}"


def _answer(submission, case):
    """The session's text, what JAX did, and the student's answer, kept for the other property of the group."""
    plan, form, notes = case
    key = ("compiled_programs", plan, form, notes)
    memo = submission.memo
    if key not in memo:
        text, did = session(plan, form, notes)
        memo[key] = (did, submission.call("compiled_programs", text))
    return memo[key]


def _same(types: str) -> str:
    """Argument types compared without spaces, the outer parentheses optional."""
    flat = "".join(types.split())
    return flat[1:-1] if flat.startswith("(") and flat.endswith(")") else flat


def _listed(got, name: str, story: str) -> list[str]:
    value = got.get(name, []) if isinstance(got, dict) else []
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise PropertyFailure(f"`compiled_programs` gave `{name}` {render.kind(value)}; it should be a list of "
                          "strings, the argument types of each program.", example=story)


def _judge_programs(submission, case) -> None:
    plan, form, _ = case
    did, got = _answer(submission, case)
    story = _story(plan, form)
    if not isinstance(got, dict):
        raise PropertyFailure(f"`compiled_programs` returned {render.kind(got)}, not a dict.", example=story)
    for name in sorted(set(did.programs) | {n for n in got if isinstance(n, str)}):
        expected = did.programs.get(name, [])
        mine = _listed(got, name, story)
        if [_same(t) for t in mine] != [_same(t) for t in expected]:
            shown = "; ".join(mine) if mine else "none"
            raise PropertyFailure(
                f"The programs listed for `{name}` are not the ones XLA compiled for it in that session.",
                example=story, got=f"{len(mine)} program(s): {shown}"[:600],
                expected=f"{len(expected)} program(s): " + ("; ".join(expected) if expected else "none"),
            )


def _search(submission, explicit, kinds, least_phases: int) -> None:
    submission.function("compiled_programs")
    cases = list(explicit)
    drawn.rng(submission.notebook_memo).shuffle(cases)
    for case in cases:
        _judge_programs(submission, case)

    def check(example):
        steps, form = example
        plan = tuple((name, _NAMES.index(name), step, length) for name, step, length in steps)
        _judge_programs(submission, (plan, form, ()))

    first_failure(_plans(kinds, least_phases), check, settings(TRACES, max_examples=5))


@prop(
    group="programs",
    points=1,
    title="`compiled_programs` lists each function's programs, on logs of sessions the notebook never shows, in "
    "four handlers' formats",
    hint="Your list differs from the programs JAX compiled in that session. Which of its steps made JAX compile, "
    "and what did the log write for each? (Part B)",
)
def test_lists_the_compiled_programs(submission):
    """Input classes the notebook promises (the calls of `compiled_programs`):

    - a message alone on its line: ``log_text.startswith("Finished tracing ")``
    - a line behind a handler's prefix: ``"WARNING:jax._src.dispatch:Finished" in log_text``
    - a lambda's records: ``"jit(<lambda>)" in log_text``
    - a line of another logger: ``"INFO:train:" in log_text``
    """
    _search(submission, _EVERY_FORMAT, _COMPILING, 0)


@prop(
    group="programs",
    points=3,
    title="`compiled_programs` lists what XLA compiled, not what JAX only traced or lowered, each with the types "
    "of the lowering it compiled",
    hint="Your list differs from the programs XLA compiled in that session. Run its steps yourself with the log "
    "on, one at a time and then in that order: what does each write, and which earlier record does each "
    "compile belong to? (Part B)",
)
def test_compiled_lowerings_only(submission):
    """Input classes the notebook promises (the calls of `compiled_programs`):

    - a program lowered and never compiled: ``log_text.count("Compiling jit(") > log_text.count("XLA compilation")``
    - a lowering compiled later, after another: ``log_text.split("XLA compilation")[0].count("Compiling jit(") >= 2``
    """
    _search(submission, _NEVER_COMPILED, _COMPILING + _PHASES_ONLY, 1)
