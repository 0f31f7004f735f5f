"""compile_log: turn JAX's compile log on for one piece of work, keep it as text, and read it.

Part A (`compile_log_of(work)`) is judged by running work of the grader's (a thunk of steps on a
program the notebook never saw) inside the student's function, and reading the text it returns for
that program's records, against the steps the grader chose. Part B (`compile_counts(log_text)`) is
judged on JAX's own log of sessions the grader runs in its own process, on functions and steps the
notebook never shows, written by handlers of several formats; the expected counts come from JAX's
monitoring events during the session, never from reading the text.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from autograder.kit import PropertyFailure, TRACES, drawn, first_failure, prop, render
from autograder.kit.compile_log import FORMATS, session, phases_of
from autograder.kit.handed import Thunk
from hypothesis import settings

# --- Part A: compile_log_of(work) -----------------------------------------------------------------

#: The grader's program for the work (two arguments, so JAX names it `<lambda>`).
_RECIPE = ((("ops", 3),), 2)
_PROGRAM = "<lambda>"
#: A new program for every work, so that none meets another's cache.
_WORK_NUMBERS = itertools.count(1)
#: What each kind of step does to a program met nowhere else: (traces, compiles).
_PHASES = {"call": (1, 1), "trace": (1, 0), "lower": (1, 0), "aot": (1, 1)}
_SAID = {"call": "called", "trace": "`.trace`d", "lower": "`.lower`ed", "aot": "`.lower(...).compile()`d"}


class _Work:
    """A thunk of steps on a fresh program of the grader's, each at a length no other step uses."""

    def __init__(self, kinds: tuple[str, ...], first_length: int):
        self.kinds = kinds
        self.lengths = tuple(range(first_length, first_length + len(kinds)))
        self.thunk = Thunk(f"compile log work {next(_WORK_NUMBERS)}", _RECIPE,
                           tuple((kind, length, "weak") for kind, length in zip(kinds, self.lengths)))
        self.expected = tuple(map(sum, zip(*(_PHASES[k] for k in kinds))))

    def words(self) -> str:
        steps = ", ".join(f"{_SAID[k]} at θ float32[{n}]" for k, n in zip(self.kinds, self.lengths))
        return f"a work that makes a new jitted function of the grader's and has it {steps}"


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


def _judge_capture(work: _Work, text: str, problem: str) -> None:
    got = phases_of(text, _PROGRAM)
    if got != work.expected:
        traces, compiles = work.expected
        raise PropertyFailure(
            problem,
            example=work.words(),
            got=f"{got[0]} record(s) of a trace and {got[1]} of an XLA compilation of that function",
            expected=f"{traces} and {compiles}, JAX's records of what the work made it do",
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
    hint="Something of one call of `compile_log_of` outlived it. What did your function change, and did it "
    "change it back? (Part A)",
)
def test_holds_its_own_work_only(submission):
    submission.function("compile_log_of")
    first, outside, second = _Work(("call", "aot"), 11), _Work(("call",), 14), _Work(("trace", "call"), 16)
    for option in (False, True):
        switch = Thunk(f"compile log switch {next(_WORK_NUMBERS)}", _RECIPE, ((f"log_{'on' if option else 'off'}", 1, "weak"),))
        submission.run_grader(switch)
        try:
            if option:
                _captured(submission, _Work(("call",), 20))
            else:
                _captured(submission, first)
                submission.run_grader(outside.thunk)
                _judge_capture(
                    second, _captured(submission, second),
                    "A second call's text holds more than its own work: records of work done before it began.",
                )
            after = submission.get("jax.config.jax_log_compiles")
        finally:
            if option:
                submission.run_grader(Thunk(f"compile log switch {next(_WORK_NUMBERS)}", _RECIPE, (("log_off", 1, "weak"),)))
        if after is not option:
            raise PropertyFailure(
                "JAX's option `jax_log_compiles` is not as it was once `compile_log_of` has returned.",
                example=f"`compile_log_of(work)` with the option {'on' if option else 'off'} before the call",
                got=f"jax.config.jax_log_compiles is {after!r}", expected=repr(option),
            )


# --- Part B: compile_counts(log_text) ---------------------------------------------------------------

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
#: Sessions every notebook meets: each kind of step, each format, and the names that trip a reader.
_EXPLICIT = (
    ((("scaled", 0, "call", 3), ("scaled", 0, "repeat", 3), ("scaled", 0, "call", 5)), "plain", ()),
    ((("loss_fn", 1, "lower", 4), ("loss_fn", 1, "aot", 6), ("<lambda>", 2, "trace", 4),
      ("<lambda>", 2, "call", 4)), "basic", _NOTES[:1]),
    ((("jit_update", 3, "call", 5), ("jit_update", 3, "commit", 5), ("jit_update", 3, "grad", 5),
      ("apply_tracing_mask", 0, "eager", 7), ("apply_tracing_mask", 0, "call", 7)), "absl", ()),
    ((("scaled", 2, "static", 3), ("scaled", 2, "static", 4), ("scaled", 2, "clear", 3),
      ("scaled", 2, "call", 3), ("<lambda>", 1, "lower", 8)), "stamped", _NOTES),
)
_PLANS = st.tuples(
    st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(("call", "repeat", "trace", "lower", "aot", "commit",
                                                                 "grad", "clear", "static")),
                       st.integers(3, 9)), min_size=2, max_size=6),
    st.sampled_from(FORMATS),
)


def _story(plan, form: str) -> str:
    steps = "; ".join(_STEP_WORDS[step].format(n=name) + ("" if step == "clear" else f" at x float32[{length}]")
                      for name, _, step, length in plan)
    return f"the log of a session ({_FORM_WORDS[form]}): {steps}"


def _sessions(submission, case):
    """The session's text, its counts from JAX's events, and the student's answer, kept for the other
    property of the group (the same cases, the same text)."""
    plan, form, notes = case
    key = ("compile_counts", plan, form, notes)
    memo = submission.memo
    if key not in memo:
        text, counts = session(plan, form, notes)
        memo[key] = (text, counts, submission.call("compile_counts", text))
    return memo[key]


def _pair(got, name: str, story: str) -> tuple[int, int] | None:
    value = got.get(name) if isinstance(got, dict) else None
    if value is None:
        return None
    if (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return int(value[0]), int(value[1])
    raise PropertyFailure(f"`compile_counts` gave `{name}` {render.kind(value)}; it should be a pair of ints, "
                          "(traces, compiles).", example=story)


def _judge_counts(submission, case, which: int) -> None:
    plan, form, _ = case
    text, counts, got = _sessions(submission, case)
    story = _story(plan, form)
    if not isinstance(got, dict):
        raise PropertyFailure(f"`compile_counts` returned {render.kind(got)}, not a dict.", example=story)
    what = ("traces", "compiles")[which]
    for name in sorted(counts.names()):
        pair = _pair(got, name, story)
        truth = counts.of(name)[which]
        mine = 0 if pair is None else pair[which]
        if mine != truth:
            said = "JAX traced it" if which == 0 else "XLA compiled a program for it"
            raise PropertyFailure(
                f"The count of {what} of `{name}` is wrong.", example=story,
                got=f"{mine} (`{name}` {'missing' if pair is None else 'counted ' + repr(pair)})",
                expected=f"{truth}: {said} {truth} time(s) in that session",
            )
    for name in sorted(set(got) - counts.names()):
        pair = _pair(got, name, story) if isinstance(name, str) else None
        if pair is not None and pair[which]:
            raise PropertyFailure(
                f"`compile_counts` counts {what} of `{name}`, a name JAX's records never gave one to.",
                example=story, got=f"{name!r}: {pair}", expected=f"no {what} for that name",
            )


def _search(submission, which: int) -> None:
    submission.function("compile_counts")
    cases = list(_EXPLICIT)
    drawn.rng(submission.notebook_memo).shuffle(cases)
    for plan, form, notes in cases:
        _judge_counts(submission, (tuple((n, b % 4, s, k) for n, b, s, k in plan), form, notes), which)

    def check(example):
        steps, form = example
        plan = tuple((name, _NAMES.index(name), step, length) for name, step, length in steps)
        _judge_counts(submission, (plan, form, ()), which)

    first_failure(_PLANS, check, settings(TRACES, max_examples=5))


@prop(
    group="counts",
    points=2,
    title="`compile_counts` gives each function's number of traces, on logs of sessions the notebook never shows",
    hint="Which of the session's steps made JAX trace that function, and what did JAX write when it did? Try the "
    "step yourself with the log on. (Part B)",
)
def test_counts_traces(submission):
    """Input classes the notebook promises (the calls of `compile_counts`):

    - a message alone on its line: ``log_text.startswith("Finished tracing ")``
    - a line behind a handler's prefix: ``"WARNING:jax._src.dispatch:Finished" in log_text``
    - a lambda's records: ``"jit(<lambda>)" in log_text``
    - a line of another logger: ``"INFO:train:" in log_text``
    """
    _search(submission, 0)


@prop(
    group="counts",
    points=2,
    title="`compile_counts` gives each function's number of XLA compilations, on logs of sessions the notebook "
    "never shows",
    hint="Which of the session's steps made XLA compile a program for that function? Run each kind of step "
    "yourself with the log on, `.trace`, `.lower` and `.compile` among them: which record does only a "
    "compilation write? (Part B)",
)
def test_counts_compiles(submission):
    """Input classes the notebook promises (the calls of `compile_counts`):

    - a program lowered and never compiled: ``log_text.count("Compiling jit(") > log_text.count("XLA compilation")``
    - a compile with no trace before it: ``log_text.count("XLA compilation") > log_text.count("Finished tracing")``
    """
    _search(submission, 1)
