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

import secrets

from hypothesis import settings
from hypothesis import strategies as st

from autograder.kit import PropertyFailure, TRACES, drawn, first_failure, prop, render
from autograder.kit.compile_log import FORMATS, lowered_types_of, phases_of, session
from autograder.kit.handed import Thunk

# --- Part A: compile_log_of(work) -----------------------------------------------------------------

#: The grader's program for the work (two arguments, so JAX names it `<lambda>`).
_RECIPE = ((("ops", 3),), 2)
_PROGRAM = "<lambda>"
#: What each kind of step does to a program at a signature met nowhere else: (traces, lowerings, compiles).
_PHASES = {"call": (1, 1, 1), "trace": (1, 0, 0), "lower": (1, 1, 0), "aot": (1, 1, 1), "again": (0, 0, 0)}
_SAID = {"call": "called", "trace": "`.trace`d", "lower": "`.lower`ed", "aot": "`.lower(...).compile()`d",
         "again": "called again"}


def _program_name() -> str:
    """A thunk program's name in the kernel: new every time, and saying nothing of how many came before."""
    return f"compile log work {secrets.token_hex(6)}"


def _types(length: int, form: str) -> str:
    """The argument types JAX's lowering record writes for a thunk's step: θ, then the learning rate."""
    return f"(ShapedArray(float32[{length}]), ShapedArray(float32[]{', weak_type=True' if form == 'weak' else ''}))"


class _Work:
    """A thunk of steps on a program of the grader's (a fresh one, or ``program``'s), each at a length no
    other step uses but ``"again"``, a call at a signature the program has met (JAX does nothing new)."""

    def __init__(self, kinds, lengths, forms, program: str | None = None):
        self.kinds, self.lengths, self.forms = tuple(kinds), tuple(lengths), tuple(forms)
        self.program = program or _program_name()
        self.thunk = Thunk(self.program, _RECIPE, tuple(("call" if kind == "again" else kind, length, form)
                                                        for kind, length, form in zip(kinds, lengths, forms)))
        self.expected = tuple(map(sum, zip(*(_PHASES[k] for k in kinds))))
        self.lowered = [_types(n, f) for k, n, f in zip(kinds, lengths, forms) if _PHASES[k][1]]

    @classmethod
    def drawn(cls, rng, kinds, lengths: list[int], program: str | None = None) -> "_Work":
        """Steps of the given kinds at lengths taken from ``lengths`` (each used once), rates drawn."""
        return cls(kinds, [lengths.pop() for _ in kinds], [rng.choice(("weak", "strong")) for _ in kinds], program)

    def words(self) -> str:
        steps = ", ".join(f"{_SAID[k]} at θ float32[{n}] (the rate {'a Python float' if f == 'weak' else 'float32[]'})"
                          for k, n, f in zip(self.kinds, self.lengths, self.forms))
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


def _judge_capture(work: _Work, text: str, problem: str, lowerings_optional: bool = False) -> None:
    """The text's records of the work's program against the work's steps: traces, lowerings (with their
    argument types, in order) and compiles; ``lowerings_optional`` for a property about records that do
    not belong, where a capture that misses lowering records, or writes records on one line, is the
    other property's concern."""
    got = phases_of(text, _PROGRAM, by_line=not lowerings_optional)
    types = lowered_types_of(text, _PROGRAM, by_line=not lowerings_optional)
    if lowerings_optional and not types:
        got, types = (got[0], work.expected[1], got[2]), work.lowered
    if got != work.expected or types != work.lowered:
        raise PropertyFailure(
            problem,
            example=work.words(),
            got="records of {} trace(s), {} lowering(s) and {} XLA compilation(s) of that function".format(*got)
            + ("" if types == work.lowered or got[1] != work.expected[1] else ", the lowerings' argument types not "
               "the ones the steps used"),
            expected="{}, {} and {}: JAX's records of what the work made it do".format(*work.expected),
        )


def _option(submission) -> bool | None:
    """JAX's option `jax_log_compiles` where the notebook's code runs, read from JAX itself."""
    reading = Thunk(_program_name(), _RECIPE, (("log_read", 1, "weak"),))
    submission.run_grader(reading)
    return reading.log_option


def _switch(submission, on: bool) -> None:
    submission.run_grader(Thunk(_program_name(), _RECIPE, ((f"log_{'on' if on else 'off'}", 1, "weak"),)))


@prop(
    group="capture",
    points=1,
    title="`compile_log_of(work)` returns what JAX's compile log wrote while the work ran",
    hint="Your text does not hold the records JAX writes for what the work did. Is JAX writing its compile log "
    "while the work runs, and does every record it writes reach your text, whole? (Part A)",
)
def test_captures_the_work(submission):
    submission.function("compile_log_of")
    rng = drawn.rng(submission.notebook_memo)
    kinds = ["call", "trace", "lower", "aot"] + [rng.choice(("call", "trace", "lower", "aot"))
                                                 for _ in range(rng.randrange(3))]
    rng.shuffle(kinds)
    work = _Work.drawn(rng, kinds, rng.sample(range(3, 48), len(kinds)))
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
    rng = drawn.rng(submission.notebook_memo)
    lengths = rng.sample(range(3, 48), 8)
    for option in (True, False):  # on first: an option left on where the work ran is read after the off
        _switch(submission, option)
        try:
            if option:
                work = _Work.drawn(rng, ("call",), lengths)
                _judge_capture(work, _captured(submission, work), "With the option on before the call, the text "
                               "does not hold the work's records, or holds more.", lowerings_optional=True)
            else:
                _captured(submission, _Work.drawn(rng, ("call", "aot"), lengths))
                outside = _Work.drawn(rng, ("call",), lengths)
                submission.run_grader(outside.thunk)
                # the second work calls the outside work's program again at its signature (JAX does nothing
                # new there), then steps of its own
                second = _Work(("again", "trace", "call"), (outside.lengths[0], lengths.pop(), lengths.pop()),
                               (outside.forms[0], "weak", "strong"), program=outside.program)
                _judge_capture(
                    second, _captured(submission, second),
                    "A text holds more than what its own work made JAX do: records of work done before the call "
                    "began, or of work JAX would not have had to do again.", lowerings_optional=True,
                )
            after = _option(submission)
        finally:
            if option:
                _switch(submission, False)
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
#: Part B's second property is about a lowering told from a compile alone: messages alone on their lines,
#: plain names, no two programs of one function with the same types, no compile without a trace of its
#: own signature (what the first property judges stays out of it).
_NEVER_COMPILED = (
    ((("loss_fn", 1, "lower", 4), ("loss_fn", 1, "aot", 6), ("scaled", 2, "trace", 4),
      ("scaled", 2, "call", 5)), "plain", ()),
    ((("scaled", 0, "call", 3), ("scaled", 0, "lower", 5), ("scaled", 0, "trace", 7), ("scaled", 0, "call", 6)),
     "plain", ()),
    ((("jit_update", 3, "trace", 7), ("jit_update", 3, "lower", 8), ("apply_tracing_mask", 1, "lower", 3),
      ("apply_tracing_mask", 1, "call", 5)), "plain", ()),
    # a lowering kept and compiled later, when a call meets its signature: that compile writes no
    # lowering record of its own, and another lowering of the function came between
    ((("loss_fn", 1, "lower", 5), ("loss_fn", 1, "aot", 6), ("loss_fn", 1, "call", 5)), "plain", ()),
    ((("scaled", 0, "lower", 4), ("scaled", 0, "call", 6), ("scaled", 0, "call", 4), ("jit_update", 2, "lower", 3)),
     "plain", ()),
)
_PLAIN_NAMES = tuple(name for name in _NAMES if name != "<lambda>")


def _plans(kinds, names, forms, least_phases: int, distinct: bool):
    def usable(steps):
        # a signature only lowered is never compiled later in the session (JAX would compile the lowering
        # it kept, with no new *Compiling* record: the explicit sessions hold that case, never with two
        # lowerings waiting, when the log could not tell which one was compiled)
        lowered = {(name, length) for name, step, length in steps if step == "lower"}
        others = {(name, length) for name, step, length in steps if step != "lower"}
        pairs = [(name, length) for name, _, length in steps]
        return (not lowered & others and sum(step in _PHASES_ONLY for _, step, _ in steps) >= least_phases
                and (not distinct or len(set(pairs)) == len(pairs)))

    return st.tuples(
        st.lists(st.tuples(st.sampled_from(names), st.sampled_from(kinds), st.integers(3, 9)),
                 min_size=2, max_size=6).filter(usable),
        st.sampled_from(forms),
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
        text, programs = session(plan, form, notes)
        memo[key] = (programs, submission.call("compiled_programs", text))
    return memo[key]


def _same(types: str) -> str:
    """Argument types compared without spaces, the outer parentheses optional."""
    flat = "".join(types.split())
    return flat[1:-1] if flat.startswith("(") and flat.endswith(")") else flat


def _shown(name) -> str:
    """A name from the student's answer, as a short Python literal: whatever it holds stays on one line."""
    text = name if isinstance(name, str) else render.kind(name)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _listed(got, name: str, story: str) -> list[str]:
    value = got.get(name, []) if isinstance(got, dict) else []
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise PropertyFailure(f"`compiled_programs` gave {_shown(name)} {render.kind(value)}; it should be a list of "
                          "strings, the argument types of each program.", example=story)


def _judge_programs(submission, case) -> None:
    plan, form, _ = case
    programs, got = _answer(submission, case)
    story = _story(plan, form)
    if not isinstance(got, dict):
        raise PropertyFailure(f"`compiled_programs` returned {render.kind(got)}, not a dict.", example=story)
    for name in sorted(set(programs) | {n for n in got if isinstance(n, str)}):
        expected = programs.get(name, [])
        mine = _listed(got, name, story)
        if [_same(t) for t in mine] != [_same(t) for t in expected]:
            shown = "; ".join(t if len(t) <= 200 else t[:197] + "..." for t in mine[:12]) if mine else "none"
            raise PropertyFailure(
                f"The programs listed for {_shown(name)} are not the ones XLA compiled for it in that session.",
                example=story, got=f"{len(mine)} program(s): {shown}"[:600],
                expected=f"{len(expected)} program(s): " + ("; ".join(expected) if expected else "none"),
            )


def _search(submission, explicit, plans) -> None:
    submission.function("compiled_programs")
    cases = list(explicit)
    drawn.rng(submission.notebook_memo).shuffle(cases)
    for case in cases:
        _judge_programs(submission, case)

    def check(example):
        steps, form = example
        plan = tuple((name, _NAMES.index(name), step, length) for name, step, length in steps)
        _judge_programs(submission, (plan, form, ()))

    first_failure(plans, check, settings(TRACES, max_examples=5))


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
    _search(submission, _EVERY_FORMAT, _plans(_COMPILING, _NAMES, FORMATS, 0, distinct=False))


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
    _search(submission, _NEVER_COMPILED,
            _plans(("call", "aot") + _PHASES_ONLY, _PLAIN_NAMES, ("plain",), 1, distinct=True))
