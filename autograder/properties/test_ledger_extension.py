"""ledger_extension: `observed_call(label, x, scale)` appends honest rows to `call_rows`.

The grader never takes the ledger's word for a trace: it listens to JAX's own
monitoring events while each call runs and compares, in scenarios where predicting
and observing disagree: a weakly typed scale after a float32 one (or the reverse),
the program already traced by a direct call outside `observed_call` (or traced
without a compile), its cache cleared between calls, a new dtype at a known shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.kit import precision
from autograder.kit import (
    CallRaised, PropertyFailure, TraceLog, TRACES, VALUES, clear_cache_of, close, first_failure,
    prop, render,
)

KEYS = ("label", "shape", "dtype", "static", "traced", "trace_count", "result")
#: A small signature space (each new signature is a compile); never length 16,
#: which belongs to the student's own row.
_SHAPES = ((3,), (5,), (2, 2))
_DTYPES = (np.float32, np.int32)
_SCALES = st.floats(-4.0, 4.0, allow_nan=False, width=32)


def _arrays(shapes=_SHAPES):
    def of(shape, dtype):
        if dtype is np.int32:
            return hnp.arrays(dtype, shape, elements=st.integers(-50, 50))
        return hnp.arrays(dtype, shape, elements=st.floats(-50.0, 50.0, width=32))

    return st.tuples(st.sampled_from(shapes), st.sampled_from(_DTYPES)).flatmap(lambda sd: of(*sd))


#: Call sequences: arrays and scales, the same signature often repeated.
_SEQUENCES = st.lists(st.tuples(_arrays(), _SCALES), min_size=1, max_size=5)

#: How a scale reaches the call. A Python number is weakly typed; a float32 scalar is not,
#: so the same value in another form is another signature.
_SCALE_FORMS = {
    "a Python float": float,
    "a float32 array": lambda s: jax.device_put(np.float32(s)),
    "a NumPy float32": np.float32,
    "a Python int": lambda s: int(round(s)),
}

#: One step of a scenario: an observed call, a direct call of `compiled_square_sum`
#: outside `observed_call`, or a trace without a compile (`compiled_square_sum.trace(...)`:
#: the next call at that signature compiles but does not trace). Generated steps use the two
#: scale forms that matter most; clearing the cache (each clear costs a compile per signature
#: after it) and the other scale forms are in the explicit scenarios below.
_STEPS = st.tuples(
    st.sampled_from(["observed", "outside", "trace only"]),
    st.sampled_from(_SHAPES).flatmap(lambda shape: hnp.arrays(np.float32, shape, elements=st.floats(-50, 50, width=32))),
    st.sampled_from(["a Python float", "a float32 array"]), _SCALES,
)
_SCENARIOS = st.lists(_STEPS, min_size=2, max_size=5)
#: The explicit scenarios carry the disagreements; a few generated ones vary the rest.
_SCENARIO_SEARCH = settings(TRACES, max_examples=6)


def _step(kind: str, length: int, form: str, scale: float = 2.0, dtype=np.float32) -> tuple:
    return (kind, np.arange(length).astype(dtype), form, scale)


#: Scenarios where a ledger that predicts from what it has seen disagrees with JAX. They
#: use lengths no other property uses; where the order of events matters they start from a
#: cleared cache, so they mean the same whatever ran before.
_DISAGREEMENTS = (
    # a weakly typed Python-float scale, then a float32 one: same shape and dtype, a new trace
    [_step("observed", 6, "a Python float"), _step("observed", 6, "a float32 array")],
    # already traced by a direct call: the observed call reuses that program
    [("clear",), _step("outside", 9, "a Python float"), _step("observed", 9, "a Python float", 3.0)],
    # a trace between two rows, made outside `observed_call`: trace_count must count it
    [_step("observed", 6, "a Python float"), _step("outside", 7, "a Python float"),
     _step("observed", 6, "a Python float", 3.0)],
    # traced (not compiled) outside: the observed call compiles, slowly, but does not trace
    [("clear",), _step("trace only", 10, "a Python float"), _step("observed", 10, "a Python float")],
    # the cache cleared between two identical calls: the second traces again
    [_step("observed", 6, "a Python float"), ("clear",), _step("observed", 6, "a Python float")],
    # a new dtype at a known shape, then a Python int scale (weakly typed int32), then a NumPy float32
    [_step("observed", 6, "a Python float"), _step("observed", 6, "a Python float", dtype=np.int32),
     _step("observed", 6, "a Python int", dtype=np.int32), _step("observed", 6, "a NumPy float32", dtype=np.int32)],
)


def _ledger(submission) -> list:
    rows = submission.get("call_rows")
    if not isinstance(rows, list):
        raise PropertyFailure(f"`call_rows` should be a list of dicts, but it is {render.kind(rows)}.")
    return rows


def _tail(submission, start: int) -> tuple[int, list]:
    """How many rows `call_rows` holds, and those from ``start`` on (only they travel)."""
    length, value = submission.tail("call_rows", start)
    if length is None:
        raise PropertyFailure(f"`call_rows` should be a list of dicts, but it is {render.kind(value)}.")
    return length, value


def _grader_rows(submission) -> set[int]:
    """The positions in `call_rows` of the rows the grader's own calls appended, so the student's
    rows can be told apart in a later grade cell (`call_rows` only grows)."""
    return submission.notebook_memo.setdefault("ledger grader rows", set())


def _observe(submission, label: str, values: np.ndarray, scale, returned: list | None = None):
    """Make one call; return (the new row, the traces of the student's code JAX fired, the rendered call).
    What the call returned is appended to ``returned``, when given."""
    before, _ = _tail(submission, 2**31)  # the length alone
    x = jax.device_put(values)
    with TraceLog() as log:
        value = submission.call("observed_call", label, x, scale)
    if returned is not None:
        returned.append(value)
    text = render.call("observed_call", (label, x, scale))
    after, new = _tail(submission, before)  # only the new rows travel, not the whole ledger
    if after != before + 1:
        raise PropertyFailure(
            f"`call_rows` grew by {after - before} row(s) during one call; each call should append exactly one.",
            example=text,
        )
    row = new[-1]
    _grader_rows(submission).add(after - 1)
    if not isinstance(row, dict) or set(KEYS) - set(row):
        missing = ", ".join(sorted(set(KEYS) - set(row))) if isinstance(row, dict) else "it is not a dict"
        raise PropertyFailure(f"The new row is missing keys: {missing}.", example=text, got=render.value(row))
    return row, log.count, text


def _flag(row, text) -> bool:
    if not isinstance(row["traced"], (bool, np.bool_)):
        raise PropertyFailure(f"`traced` should be True or False, got {render.kind(row['traced'])}.", example=text)
    return bool(row["traced"])


def _signature(values: np.ndarray) -> tuple:
    return (values.shape, str(values.dtype))


def _rows_strategy():
    return st.tuples(_arrays(), _SCALES, st.sampled_from(["probe", "values changed", "new shape"]))


#: A plain first example: a row of the wrong kind fails here at once, without a long shrink.
_PROBE = (np.arange(3, dtype=np.float32), 1.0, "probe")


@prop(
    group="rows",
    points=1,
    title="each call appends one row with its label, shape (a tuple), dtype (a string) and `static` dict",
    hint="Record what the call saw: the `label`, `tuple(x.shape)`, `str(x.dtype)`; `static` is a dict (empty "
    "here, nothing is static).",
)
def test_rows_record_calls(submission):
    _ledger(submission)

    @VALUES
    @given(case=_rows_strategy())
    @example(case=_PROBE)
    def check(case):
        values, scale, label = case
        row, _, text = _observe(submission, label, values, scale)
        wanted = {"label": label, "shape": values.shape, "dtype": str(values.dtype)}
        for key, expected in wanted.items():
            if row[key] != expected or type(row[key]) is not type(expected):
                raise PropertyFailure(
                    f"The row's `{key}` does not describe the call.", example=text,
                    got=f"{key}={render.value(row[key])}", expected=f"{key}={render.value(expected)}",
                )
        if not isinstance(row["static"], dict):
            raise PropertyFailure("The row's `static` should be a dict.", example=text, got=render.kind(row["static"]))

    check()


@prop(
    group="rows",
    points=1,
    title="each row's `result` is `sum(scale * x ** 2)` as a Python float, and `observed_call` returns it",
    hint="Convert once the call returns: `float(result)` reads the number to Python, so the ledger holds plain "
    "numbers, not device arrays; return that number from `observed_call` too.",
)
def test_rows_record_results(submission):
    _ledger(submission)

    @VALUES
    @given(case=_rows_strategy())
    @example(case=_PROBE)
    @example(case=(np.arange(4, dtype=np.int32), 2, "int scale"))  # an int result, still stored as a float
    # A result that is no short decimal, and small: a rounding for display shows beyond float32's tolerance
    # (its floor is 1e-5), whatever the draws (a rounded ledger kept its point on one machine's draws).
    @example(case=(np.array([0.007, 0.0015], dtype=np.float32), 1.0, "small values"))
    def check(case):
        values, scale, label = case
        returned = []
        row, _, text = _observe(submission, label, values, scale, returned)
        result = row["result"]
        if not isinstance(result, float):
            raise PropertyFailure(
                "The row's `result` should be a Python float, e.g. `float(result)`.", example=text,
                got=render.kind(result),
            )
        terms = scale * values.astype(np.float64) ** 2
        expected, magnitude = float(terms.sum()), float(np.abs(terms).sum())
        # Exact to float32's tolerance; and the call's own result: the given program run here, on this
        # backend, has the backend's rounding in it, which no widening may then excuse (issue 54).
        if not (close(result, expected, magnitude)
                and close(result, float(_GIVEN_PROGRAM(jax.device_put(values), scale)), magnitude, same_program=True)):
            raise PropertyFailure(
                "The row's `result` is not `sum(scale * x ** 2)`.", example=text, got=repr(result),
                expected=repr(expected),
            )
        if not _same_number(returned[0], result):
            raise PropertyFailure(
                "`observed_call` should return the call's result as a Python float (the number in the row's "
                "`result`), as Part A asks.",
                example=text, got=render.kind(returned[0]), expected=repr(result),
            )

    check()


#: The notebook's given program, ``compiled_square_sum`` (a locked cell), as the graders' own: its result
#: on this backend is what the student's call returned, rounding and all.
_GIVEN_PROGRAM = jax.jit(lambda x, scale: jnp.sum(scale * x ** 2))


def _same_number(returned, result: float) -> bool:
    """What `observed_call` returned is the row's result, as a Python float (Part A's contract)."""
    return isinstance(returned, float) and returned == result


@dataclass(frozen=True)
class _Observation:
    """One observed call of a scenario, with JAX's evidence beside the row it appended."""

    traced: object  # the row's `traced`
    trace_count: object  # the row's `trace_count`
    previous_count: object  # the previous judged row's `trace_count` in this scenario, or None
    traces: int  # JAX's traces of the student's code during the call
    since: int | None  # ... since the end of the previous judged call of this scenario
    story: str  # the steps so far, in plain words
    logged: object  # the notebook's `trace_log["count"]` after the call (None without one)
    expected: bool | None  # whether the call as given traces: known after a cleared cache, else None


def _run(submission, steps, seen: list, raised: list) -> None:
    story: list[str] = []
    # After the cache is cleared the grader knows every call made since, so it knows whether
    # `compiled_square_sum(x, scale)`, made as given, traces: at a signature not met since.
    met: set | None = None
    with TraceLog() as everything:
        mark, previous = None, None
        for index, step in enumerate(steps):
            if step[0] == "clear":
                clear_cache_of(submission.get("compiled_square_sum"))
                story.append("the program's cache cleared (`compiled_square_sum.clear_cache()`)")
                met = set()
                continue
            kind, values, form, scale = step
            signature = (*_signature(values), form)
            expected = None if met is None else signature not in met
            if met is not None:
                met.add(signature)
            scale = _SCALE_FORMS[form](scale)
            try:
                if kind in ("outside", "trace only"):
                    name = "compiled_square_sum" + (".trace" if kind == "trace only" else "")
                    x = jax.device_put(values)
                    submission.call(name, x, scale)
                    story.append(f"{render.call(name, (x, scale))}"
                                 + (": traced, not compiled" if kind == "trace only" else " called directly, outside "
                                    "`observed_call`") + f" (scale as {form})")
                    continue
                row, traces, text = _observe(submission, f"scenario call {index}", values, scale)
            except CallRaised as failure:
                raised.append(failure)
                story.append(f"{failure.example} raised")
                mark = previous = met = None  # what that call did to the count is unknown: start again
                continue
            story.append(f"{text} (scale as {form})")
            seen.append(_Observation(row["traced"], row["trace_count"], previous, traces,
                                     None if mark is None else everything.count - mark, "; then ".join(story[-4:]),
                                     _logged(submission), expected))
            mark, previous = everything.count, row["trace_count"]


def _logged(submission):
    """The notebook's own trace counter, ``trace_log["count"]``, if it has one."""
    try:
        log = submission.get("trace_log")
    except PropertyFailure:  # a notebook without one
        return None
    count = log.get("count") if isinstance(log, dict) else None
    return count if _is_int(count) else None


def _observations(submission) -> list[_Observation]:
    """Every observed call of the scenarios where predicting fails, then of generated ones.

    Made once per submission and shared by the properties that judge them. A call that
    raises is not judged (its mistake is the program's, not the ledger's), but at least
    one call must be."""
    if "ledger scenarios" not in submission.memo:
        seen: list[_Observation] = []
        raised: list[CallRaised] = []
        for steps in _DISAGREEMENTS:
            _run(submission, steps, seen, raised)
        first_failure(_SCENARIOS, lambda steps: _run(submission, steps, seen, raised), _SCENARIO_SEARCH)
        submission.memo["ledger scenarios"] = (seen, raised[:1])
    seen, raised = submission.memo["ledger scenarios"]
    if not seen and raised:
        raise raised[0]
    return seen


@prop(
    group="traces",
    points=1,
    title="a call that only changes values or `scale` neither traces nor is marked as traced",
    hint="A repeated shape and dtype with a Python-float scale reuses the compiled program: only data changed. "
    "Keep `scale` dynamic, call the jitted function built once, and read the trace counter before and after "
    "the call instead of assuming.",
)
def test_traced_only_on_new_signatures(submission):
    _ledger(submission)
    first_calls: dict[tuple, str] = {}

    def check(sequence):
        for index, (values, scale) in enumerate(sequence):
            row, traces, text = _observe(submission, f"repeat check {index}", values, scale)
            signature = _signature(values)
            first = first_calls.setdefault(signature, text)
            if first is text:
                continue
            if traces:
                raise PropertyFailure(
                    f"A repeated call at shape {values.shape}, dtype {values.dtype} traced again (JAX saw "
                    f"{traces} trace(s)), although only values or scale changed: `scale` must stay a runtime "
                    "value and the jitted function must be built once.",
                    example=f"{first}, later {text}",
                    got=f"{traces} new trace(s)",
                    expected="no new trace",
                )
            if _flag(row, text):
                raise PropertyFailure(
                    f"A repeated call at shape {values.shape}, dtype {values.dtype} is marked as traced again, "
                    "but JAX did not trace.",
                    example=f"{first}, later {text}",
                    got="traced=True on the later call",
                    expected="traced=False: only values or scale changed",
                )

    check([(np.arange(5, dtype=np.float32), np.float32(1.5)), (np.arange(5, dtype=np.float32) + 1, np.float32(-2.0))])
    first_failure(_SEQUENCES, check)


@prop(
    group="traces",
    points=1,
    title="`trace_count` grows by exactly the traces JAX made since the previous row",
    hint="`trace_count` is the running total `trace_log` has seen, read after the call: it also counts traces "
    "made outside `observed_call`, which a tally of your own rows misses.",
)
def test_trace_count_consistent(submission):
    _ledger(submission)
    for seen in _observations(submission):
        count = seen.trace_count
        if not _is_int(count):
            raise PropertyFailure(f"`trace_count` should be an int, got {render.kind(count)}.", example=seen.story)
        if seen.logged is not None and count != seen.logged:
            raise PropertyFailure(
                "`trace_count` is not the number of traces `trace_log` has seen after the call.",
                example=seen.story, got=f"trace_count={count}", expected=f"trace_count={seen.logged}",
            )
        if seen.since is not None and _is_int(seen.previous_count) and count - seen.previous_count != seen.since:
            raise PropertyFailure(
                "`trace_count` does not follow JAX's traces: "
                f"JAX traced your program {seen.since} time(s) since the previous row, "
                f"but `trace_count` went from {seen.previous_count} to {count}.",
                example=seen.story,
                got=f"a step of {count - seen.previous_count}",
                expected=f"a step of {seen.since}",
            )


@prop(
    group="traces",
    points=1,
    title="`traced` agrees with JAX's own trace events, also where predicting from the signature fails",
    hint="Observe, don't predict: a weakly typed scale after a float32 one, a program already traced outside "
    "`observed_call`, and cleared caches all defeat a guess from the shape and dtype. Compare "
    "`trace_log[\"count\"]` before and after the call; its body runs only while JAX traces.",
)
def test_ledger_matches_jax_events(submission):
    _ledger(submission)
    for seen in _observations(submission):
        if seen.expected is not None and (seen.traces > 0) != seen.expected:
            raise PropertyFailure(
                "`observed_call` did not make the call it was given: `compiled_square_sum(x, scale)` "
                + ("traces here, at a signature the program has not met since its cache was cleared"
                   if seen.expected else "reuses the program already traced here")
                + f", but JAX traced {seen.traces} time(s) during `observed_call`. The ledger must record the "
                "call as given: a scale cast to another type, or passed by keyword, is another signature, "
                "so its row describes a different call.",
                example=seen.story,
                got=f"{seen.traces} trace(s) during the call",
                expected="a trace" if seen.expected else "no trace",
            )
        if _flag({"traced": seen.traced}, seen.story) != (seen.traces > 0):
            raise PropertyFailure(
                "The row's `traced` disagrees with JAX: "
                + (f"JAX traced {seen.traces} time(s) during this call." if seen.traces
                   else "JAX did not trace during this call."),
                example=seen.story,
                got=f"traced={seen.traced}",
                expected=f"traced={seen.traces > 0}",
            )


@prop(
    group="sixteen",
    points=1,
    title="the sixteen-element float32 call is in the ledger",
    hint='Add the lesson\'s call: `observed_call("new length sixteen", x16, 1.0)` with x16 = arange(16) as '
    "float32; its row records shape (16,), dtype float32 and result 1240.0.",
)
def test_sixteen_element_row(submission):
    grader_rows = _grader_rows(submission)
    rows = [row for index, row in enumerate(_ledger(submission)) if isinstance(row, dict) and index not in grader_rows]
    sixteen = [row for row in rows if row.get("shape") == (16,) and row.get("dtype") == "float32"]
    if not sixteen:
        other_dtypes = sorted({str(row.get("dtype")) for row in rows if row.get("shape") == (16,)})
        if other_dtypes:
            raise PropertyFailure(
                f"The notebook's row of shape (16,) has dtype {', '.join(map(repr, other_dtypes))}, not 'float32': "
                "x16 must be float32 (`jnp.arange(16, dtype=jnp.float32)`). A new dtype is a new signature, so "
                "it is a different experiment.",
            )
        shapes = sorted({render.value(row.get("shape")) for row in rows})
        raise PropertyFailure(
            "`call_rows` has no row with shape (16,) and dtype 'float32'.",
            got=f"{len(rows)} row(s) from the notebook's own calls"
            + (f", of shapes {', '.join(shapes)}" if shapes else ""),
        )
    labelled = [row for row in sixteen if row.get("label") == "new length sixteen"]
    if not labelled:
        raise PropertyFailure(
            "The sixteen-element row is not labelled exactly 'new length sixteen', as the notebook asks.",
            got="labels " + ", ".join(sorted({render.value(row.get("label")) for row in sixteen})),
        )
    row = labelled[-1]
    result = _number(row.get("result"))  # its type is the rows group's concern
    if result is None or not math.isclose(result, 1240.0, rel_tol=1e-6 + precision.excess()):
        raise PropertyFailure(
            "The sixteen-element row's result is not the sum of squares of 0..15 at scale 1.0.",
            got=f"result={render.value(row.get('result'))}",
        )
    missing = [key for key in KEYS if key not in row]
    if missing:
        raise PropertyFailure(f"The sixteen-element row is missing keys: {', '.join(missing)}.")
    index = next(i for i, candidate in enumerate(rows) if candidate is row)
    before = rows[index - 1].get("trace_count") if index else None
    after = rows[index + 1] if index + 1 < len(rows) else {}
    count = row["trace_count"]
    if _is_int(before) and _is_int(count) and count < before:
        raise PropertyFailure(
            "The sixteen-element row does not continue the ledger: its `trace_count` is lower than the row "
            "before it, as if it were written by hand rather than appended by `observed_call`.",
            got=f"trace_count {before} on the row before, then {count}",
            expected="the row that `observed_call` appends",
        )
    if after.get("traced") is True and _is_int(after.get("trace_count")) and _is_int(count) \
            and after["trace_count"] <= count:
        raise PropertyFailure(
            "The sixteen-element row was not counted by `trace_log`: the next row traced, yet its `trace_count` "
            "did not grow past the sixteen-element row's, as if that row were typed in rather than observed. "
            "Predict the row first, then make the call with `observed_call` and compare.",
            got=f"trace_count {count} on the sixteen-element row, then {after['trace_count']} on a row that traced",
            expected="the row that `observed_call` appends",
        )


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _number(value) -> float | None:
    """A single number however it is held (a float, a 0-d array), else None."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything unreadable is simply not the number
        return None
    if array.shape != () or not np.issubdtype(array.dtype, np.number):
        return None
    return float(array)


# --------------------------------------------------------------------------- Part C: signature_of
#
# The student predicts what JAX keys a call of `compiled_powered_sum(x, scale, *, power)` on. The
# grader never compares with a signature of its own: for each pair of calls it builds a fresh jitted
# function of the same form (`power` static, by keyword), calls it with the first call, then with the
# second, and watches JAX's trace event. `signature_of` must give the two calls different signatures
# exactly when the second call traced.

#: Leaf shapes and dtypes the pairs draw from (each new one is a compile of the grader's probe).
_LEAF_SHAPES = ((3,), (4,), (2, 2))
_LEAF_DTYPES = ("float32", "int32")
#: How `scale` is passed, in words, and how to build it from a number.
_SCALE_KINDS = {
    "a Python float": float,
    "a Python int": lambda v: int(round(v)),
    "a NumPy float32 scalar (`np.float32`)": np.float32,
    "a 0-d NumPy array (`np.array`)": lambda v: np.array(float(v)),
    "a float32 JAX array (`jnp.float32`)": lambda v: jax.device_put(np.float32(v)),
    "a JAX array made from a Python float (`jnp.array`)": lambda v: jax.numpy.array(float(v)),
}
#: Which arguments are passed by keyword (`power` always is).
_MODES = ("x and scale by position", "scale by keyword", "x and scale by keyword")
_STRUCTURES = ("one array", "a tuple of arrays", "a list of arrays", "a dict of arrays")
#: The keys of a dict ``x`` unless a call names others; other keys are another structure.
_DICT_KEYS = ("w0", "w1")


@dataclass(frozen=True)
class _Call:
    """One call of `compiled_powered_sum`, described by its parts (values come from ``seed``)."""

    structure: str
    leaves: tuple  # ((shape, dtype), ...): one for "one array", two otherwise
    scale_kind: str
    mode: str
    power: int
    seed: int = 0
    written: str = "in order"  # or "in another order": a dict x's keys and the keyword arguments
    keys: tuple = _DICT_KEYS  # a dict x's keys, one per leaf (the first ones)

    def parts(self) -> tuple[tuple, dict]:
        """Fresh ``(args, kwargs)`` objects for this call."""
        arrays = []
        for index, (shape, dtype) in enumerate(self.leaves):
            size = int(np.prod(shape))
            values = (np.arange(size) * (1 + self.seed % 3) + self.seed + index) % 7
            arrays.append(jax.device_put(values.astype(dtype).reshape(shape)))
        if self.structure == "one array":
            x = arrays[0]
        elif self.structure == "a tuple of arrays":
            x = tuple(arrays)
        elif self.structure == "a list of arrays":
            x = list(arrays)
        else:
            x = dict(zip(self.keys, arrays, strict=False))
        scale = _SCALE_KINDS[self.scale_kind](1.0 + self.seed % 5)
        if self.mode == "x and scale by position":
            args, kwargs = (x, scale), {"power": self.power}
        elif self.mode == "scale by keyword":
            args, kwargs = (x,), {"scale": scale, "power": self.power}
        else:
            args, kwargs = (), {"x": x, "scale": scale, "power": self.power}
        if self.written != "in order":  # the same keys, inserted the other way round
            kwargs = dict(reversed(kwargs.items()))
            if isinstance(x, dict):
                x = dict(reversed(x.items()))
                args = (x, *args[1:]) if args else args
                kwargs = {k: (x if k == "x" else v) for k, v in kwargs.items()}
        return args, kwargs

    def dict_keys(self) -> tuple:
        """The keys a dict ``x`` of this call has, in the order written."""
        return tuple(self.keys[: len(self.leaves)])

    def text(self) -> str:
        args, kwargs = self.parts()
        return render.call("compiled_powered_sum", args, kwargs) + f" (scale as {self.scale_kind})"

    def change_from(self, first: "_Call") -> str:
        """What differs from ``first``, in plain words."""
        said = []
        if self.structure != first.structure or len(self.leaves) != len(first.leaves):
            said.append(f"x changed from {first.structure} to {self.structure}")
        elif self.structure == "a dict of arrays" and set(self.dict_keys()) != set(first.dict_keys()):
            said.append(f"the dict's keys changed from {', '.join(map(repr, first.dict_keys()))} to "
                        f"{', '.join(map(repr, self.dict_keys()))}")
        elif self.leaves != first.leaves:
            for (shape, dtype), (old_shape, old_dtype) in zip(self.leaves, first.leaves):
                if shape != old_shape:
                    said.append(f"an array of x changed shape from {old_shape} to {shape}")
                if dtype != old_dtype:
                    said.append(f"an array of x changed dtype from {old_dtype} to {dtype}")
        if self.scale_kind != first.scale_kind:
            said.append(f"scale changed from {first.scale_kind} to {self.scale_kind}")
        if self.mode != first.mode:
            said.append(f"the arguments changed from {first.mode} to {self.mode}")
        if self.power != first.power:
            said.append(f"the static power changed from {first.power} to {self.power}")
        if self.written != first.written:
            said.append(f"the dict's keys and the keyword arguments were written {self.written}")
        if self.seed != first.seed:
            said.append("the values changed")
        return ", ".join(said) if said else "the same call again"


def _call(structure="one array", leaves=(((3,), "float32"),), scale_kind="a Python float",
          mode="x and scale by position", power=2, seed=0, written="in order", keys=_DICT_KEYS) -> _Call:
    return _Call(structure, leaves, scale_kind, mode, power, seed, written, keys)


_BASE = _call()
_F32, _I32 = ((3,), "float32"), ((3,), "int32")
_FOUR, _TWO_BY_TWO = ((4,), "float32"), ((2, 2), "float32")  # the same number of elements, another shape
#: Every kind of pair the notebook promises, each tried on every submission before the generated ones.
_EXPLICIT_PAIRS = (
    (_BASE, _call(seed=1)),  # same shape, new values: no trace
    (_BASE, _BASE),  # the same call again
    (_BASE, _call(leaves=(((4,), "float32"),), seed=1)),  # new shape
    (_BASE, _call(leaves=(_I32,), seed=1)),  # new dtype
    (_BASE, _call(scale_kind="a NumPy float32 scalar (`np.float32`)", seed=1)),  # weak, then strong
    (_BASE, _call(scale_kind="a Python int", seed=1)),  # weak float32, then weak int32
    (_BASE, _call(scale_kind="a JAX array made from a Python float (`jnp.array`)", seed=1)),  # both weak
    (_call(scale_kind="a NumPy float32 scalar (`np.float32`)"),
     _call(scale_kind="a 0-d NumPy array (`np.array`)", seed=1)),  # both strong float32
    (_call(scale_kind="a NumPy float32 scalar (`np.float32`)"),
     _call(scale_kind="a float32 JAX array (`jnp.float32`)", seed=1)),  # both strong float32
    (_call(scale_kind="a float32 JAX array (`jnp.float32`)"),
     _call(scale_kind="a JAX array made from a Python float (`jnp.array`)", seed=1)),  # strong, then weak
    (_BASE, _call(mode="scale by keyword", seed=1)),  # keyword, not position
    (_call(mode="scale by keyword"), _call(mode="x and scale by keyword", seed=1)),
    (_call(mode="scale by keyword"),  # by keyword too, the kind of scale is part of the key
     _call(mode="scale by keyword", scale_kind="a NumPy float32 scalar (`np.float32`)", seed=1)),
    (_call(mode="x and scale by keyword"), _call(leaves=(_I32,), mode="x and scale by keyword", seed=1)),
    (_BASE, _call(power=3, seed=1)),  # a new static value
    (_call(power=3), _call(power=3, seed=1)),  # the same static value, new data
    (_call("a tuple of arrays", (_F32, _F32)), _call("a list of arrays", (_F32, _F32), seed=1)),  # structure
    (_BASE, _call("a tuple of arrays", (_F32,), seed=1)),  # an array, then a tuple holding it
    (_call("a dict of arrays", (_F32, _I32)), _call("a dict of arrays", (_F32, _I32), seed=1)),
    (_call("a dict of arrays", (_F32, _F32)), _call("a tuple of arrays", (_F32, _F32), seed=1)),
    # the same dict keys and keyword arguments, written in another order ("for any two calls")
    (_call("a dict of arrays", (_F32, _I32), mode="x and scale by keyword"),
     _call("a dict of arrays", (_F32, _I32), mode="x and scale by keyword", seed=1, written="in another order")),
    # the same number of elements in another shape: a program is sized by its shape, not by its data
    (_call(leaves=(_FOUR,)), _call(leaves=(_TWO_BY_TWO,), seed=1)),
    (_call("a tuple of arrays", (_TWO_BY_TWO, _I32)), _call("a tuple of arrays", (_FOUR, _I32), seed=1)),
    # other keys, the same arrays: the keys are part of the structure (not only their order)
    (_call("a dict of arrays", (_F32,), keys=("a",)), _call("a dict of arrays", (_F32,), keys=("b",), seed=1)),
    (_call("a dict of arrays", (_F32, _I32), keys=("a", "b")),
     _call("a dict of arrays", (_F32, _I32), keys=("a", "c"), seed=1)),
)


def _calls():
    leaf = st.tuples(st.sampled_from(_LEAF_SHAPES), st.sampled_from(_LEAF_DTYPES))
    structure = st.sampled_from(_STRUCTURES)
    return st.builds(
        lambda s, leaves, *rest: _Call(s, tuple(leaves[:1]) if s == "one array" else tuple(leaves), *rest),
        structure, st.lists(leaf, min_size=2, max_size=2), st.sampled_from(list(_SCALE_KINDS)),
        st.sampled_from(_MODES), st.sampled_from((1, 2, 3)), st.integers(0, 30),
    )


#: A pair: a first call, then either the same call with one part taken from another call, or another call.
_FIELDS = ("structure", "scale_kind", "mode", "power", "seed", "leaves", "everything")
_PAIRS = st.tuples(_calls(), _calls(), st.sampled_from(_FIELDS)).map(
    lambda t: (t[0], t[1] if t[2] == "everything" else _replace(t[0], t[1], t[2])))


def _replace(first: _Call, other: _Call, field: str) -> _Call:
    """``first`` with new values and ``field`` taken from ``other``."""
    values = {"structure": first.structure, "leaves": first.leaves, "scale_kind": first.scale_kind,
              "mode": first.mode, "power": first.power, "seed": first.seed + 1}
    if field == "structure":
        values.update(structure=other.structure, leaves=other.leaves)
    elif field == "leaves":
        values["leaves"] = (other.leaves * 2)[: len(first.leaves)]
    else:
        values[field] = getattr(other, field)
    return _Call(**values)


#: Scale forms of one dtype, weakly typed or not: swapping within a row changes the weak type alone.
_WEAK_SWAPS = {
    "a Python float": "a NumPy float32 scalar (`np.float32`)",
    "a JAX array made from a Python float (`jnp.array`)": "a float32 JAX array (`jnp.float32`)",
    "a NumPy float32 scalar (`np.float32`)": "a JAX array made from a Python float (`jnp.array`)",
    "a 0-d NumPy array (`np.array`)": "a Python float",
    "a float32 JAX array (`jnp.float32`)": "a Python float",
}
#: Names a dict ``x`` may have for its keys (the notebook promises string keys of any name).
_KEY_NAMES = ("a", "b", "c", "w0", "w1", "scale")
_ONE_CHANGE = ("structure", "keys", "shape", "dtype", "weak type")


@st.composite
def _single_changes(draw, change: str):
    """A first call, then the same call with new values and exactly one part of its signature changed:
    the containers, a dict's keys (other names, not another order), one leaf's shape, one leaf's dtype,
    or the weak type of `scale` at the same dtype. JAX answers each pair, as for every other pair."""
    first = draw(_calls())
    if change == "keys" and first.structure != "a dict of arrays":
        first = replace(first, structure="a dict of arrays", leaves=(first.leaves * 2)[:2])
    if change == "keys":
        first = replace(first, keys=tuple(draw(st.permutations(_KEY_NAMES))[:2]))
    if change == "weak type" and first.scale_kind not in _WEAK_SWAPS:
        first = replace(first, scale_kind="a Python float")
    second = replace(first, seed=first.seed + 1)
    index = draw(st.integers(0, len(first.leaves) - 1))
    shape, dtype = first.leaves[index]
    if change == "structure":
        others = [s for s in _STRUCTURES[1:] if s != first.structure]
        second = replace(second, structure=draw(st.sampled_from(others)))
    elif change == "keys":
        fresh = [k for k in _KEY_NAMES if k not in first.dict_keys()]
        renamed = list(first.dict_keys())
        renamed[index] = draw(st.sampled_from(fresh))
        second = replace(second, keys=tuple(renamed))
    elif change == "shape":
        leaf = (draw(st.sampled_from([s for s in _LEAF_SHAPES if s != shape])), dtype)
        second = replace(second, leaves=first.leaves[:index] + (leaf,) + first.leaves[index + 1:])
    elif change == "dtype":
        leaf = (shape, draw(st.sampled_from([d for d in _LEAF_DTYPES if d != dtype])))
        second = replace(second, leaves=first.leaves[:index] + (leaf,) + first.leaves[index + 1:])
    else:
        second = replace(second, scale_kind=_WEAK_SWAPS[first.scale_kind])
    return first, second


_PAIR_SEARCH = settings(TRACES, max_examples=10)
#: Per kind of single change: every kind is drawn, whatever the search draws for the others.
_CHANGE_SEARCH = settings(TRACES, max_examples=2)
_PROBE_NAME = "grader_powered_sum"


#: JAX's answer for each pair of calls already asked in this process, by the calls' parts without
#: their values (``seed``): which values a call holds never changes whether it traces, and every
#: notebook the judge grades asks the same pairs.
_TRACED_SECOND: dict[tuple[_Call, _Call], bool] = {}


def _traced_second(first: _Call, second: _Call) -> bool:
    """JAX's evidence, asked once per pair of calls in a process (:data:`_TRACED_SECOND`)."""
    key = (replace(first, seed=0), replace(second, seed=0))
    if key not in _TRACED_SECOND:
        _TRACED_SECOND[key] = _ask_jax(first, second)
    return _TRACED_SECOND[key]


def _ask_jax(first: _Call, second: _Call) -> bool:
    """A fresh jitted function of the notebook's form, called with ``first`` then ``second``;
    whether JAX's trace event fired for it during the second call."""

    def grader_powered_sum(x, scale, *, power):  # a new function object per pair: a cold cache
        return sum(jax.numpy.sum(scale * leaf ** power) for leaf in jax.tree.leaves(x))

    jitted = jax.jit(grader_powered_sum, static_argnames=("power",))
    args, kwargs = first.parts()
    jitted(*args, **kwargs)
    seen = []

    def listen(event, duration_secs, **details):
        if event == "/jax/core/compile/jaxpr_trace_duration" and details.get("fun_name") == _PROBE_NAME:
            seen.append(event)

    args, kwargs = second.parts()
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        jitted(*args, **kwargs)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    return bool(seen)


#: Kinds of value that a kernel describes (a judge sees only words) and that no hash accepts.
_UNHASHABLE_KINDS = ("a set ", "a dict ", "a list ", "a bytearray ")


def _comparable(value):
    """``value`` as something ``==`` and ``hash`` can judge, whether it came from this process or
    from a kernel (where an object the wire cannot carry arrives as its kind and text)."""
    if isinstance(value, render.Described):
        if value.kind.startswith(_UNHASHABLE_KINDS):
            raise _Unhashable(value.kind)
        if value.hashed is None:
            return ("described", value.kind, value.text)
        # Equal objects hash equal; their words need not agree: a frozenset's kind and text list its
        # items in the order its table holds them, which hangs on the kernel's string hashes and on
        # the order they went in (a correct frozenset signature lost its points under some hash seeds).
        # A PyTreeDef's hash leaves out a dict's keys ({'a': *} and {'b': *} hash alike), so its
        # words, which list the keys sorted, are kept beside it.
        if value.kind.startswith("a PyTreeDef"):
            return ("described", value.kind, value.hashed)
        return ("described", value.kind.split(" (", 1)[0], value.hashed)
    if type(value) is tuple:
        return tuple(_comparable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise _Unhashable(render.kind(value)) from None
    return value


class _Unhashable(Exception):
    pass


@dataclass(frozen=True)
class _Judged:
    first: _Call
    second: _Call
    traced: bool  # JAX traced the second call
    same: bool  # the student's signatures of the two calls are equal
    said: str  # the second call's signature, rendered


def _student_signature(submission, call: _Call) -> tuple:
    """The student's signature of ``call`` as ``(a comparable form, its rendering)``."""
    args, kwargs = call.parts()
    text = render.call("signature_of", (args, kwargs))
    with TraceLog() as log:
        got = submission.call("signature_of", args, kwargs)
    if log.count:
        raise PropertyFailure(
            "`signature_of` made JAX trace while it ran: it asks JAX instead of predicting. Work out the signature "
            "from the arguments alone (`jax.typeof`, `jax.tree.flatten`), without `jax.jit`, `.trace`, "
            "`jax.make_jaxpr` or `jax.eval_shape`.",
            example=f"{text}, for the call {call.text()}",
            got=f"{log.count} trace(s) during signature_of",
            expected="no trace",
        )
    try:
        return _comparable(got), render.value(got)[:200]
    except _Unhashable as kind:
        raise PropertyFailure(
            f"`signature_of` returned {kind}, which is not hashable: a cache key must be hashable (JAX looks it "
            "up in a dict). Return tuples of strings, numbers and booleans instead of lists, dicts or arrays.",
            example=text, got=render.kind(got),
        ) from None


def _pairs(submission) -> list[_Judged]:
    """Every pair judged against JAX, made once per grade cell."""
    if "signature pairs" not in submission.memo:
        judged: list[_Judged] = []
        failure: list[PropertyFailure] = []

        def judge(pair):
            first, second = pair
            if failure:
                return
            try:
                a, b = _student_signature(submission, first), _student_signature(submission, second)
            except PropertyFailure as error:
                failure.append(error)
                return
            judged.append(_Judged(first, second, _traced_second(first, second), a[0] == b[0], b[1]))

        for pair in _EXPLICIT_PAIRS:
            judge(pair)
        first_failure(_PAIRS, judge, _PAIR_SEARCH)
        for change in _ONE_CHANGE:
            first_failure(_single_changes(change), judge, _CHANGE_SEARCH)
        submission.memo["signature pairs"] = (judged, failure)
    judged, failure = submission.memo["signature pairs"]
    if failure:
        raise failure[0]
    return judged


def _story(pair: _Judged) -> str:
    return f"first {pair.first.text()}; then {pair.second.text()}: {pair.second.change_from(pair.first)}"


@prop(
    group="signature",
    points=2,
    title="`signature_of` gives two calls equal signatures exactly when JAX reuses the program for the second",
    hint="Everything JAX keys its cache on belongs in the signature, and nothing else: the structure of the "
    "arguments (which are passed by keyword and which by position, and the containers), for every leaf its "
    "shape, dtype and weak type as `jax.typeof` shows them, and the value of the static `power`; not the values, "
    "not object identities (`id`), not how a value was built when JAX sees the same type. Try the pair with "
    "`traced_again`.",
)
def test_signature_matches_jax(submission):
    """One property for both directions: a signature right in one direction only is no prediction
    (a constant never separates, ``id()`` always does), so half the points would reward either."""
    for pair in _pairs(submission):
        if pair.traced and pair.same:
            raise PropertyFailure(
                "JAX traced the second call again (a new program), but `signature_of` gave both calls the same "
                "signature: it leaves out something JAX keys its cache on.",
                example=_story(pair),
                got=f"equal signatures ({pair.said})",
                expected="different signatures: the second call traced",
            )
        if not pair.traced and not pair.same:
            raise PropertyFailure(
                "JAX reused the program for the second call (no new trace), but `signature_of` gave the two calls "
                "different signatures: it keys on something JAX ignores.",
                example=_story(pair),
                got="different signatures",
                expected="equal signatures: the second call did not trace",
            )
