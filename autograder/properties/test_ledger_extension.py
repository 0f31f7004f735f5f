"""ledger_extension: `observed_call(label, x, scale)` appends honest rows to `call_rows`.

The grader never takes the ledger's word for a trace: it listens to JAX's own
monitoring events while each call runs and compares.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder import _render
from autograder._checks import close, first_failure
from autograder._registry import prop
from autograder._results import PropertyFailure
from autograder._settings import VALUES
from autograder._traces import TraceLog

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


def _fresh(length: int) -> list:
    """A call sequence at a length no other property and no lesson call uses, so
    its first call normally meets a signature JAX has never traced; then a
    values-and-scale change, then a dtype change."""
    base = np.arange(length)
    return [(base.astype(np.float32), 1.0), (base.astype(np.float32) - 3, 2.0), (base.astype(np.int32), 1.0)]


def _ledger(submission) -> list:
    rows = submission.get("call_rows")
    if not isinstance(rows, list):
        raise PropertyFailure(f"`call_rows` should be a list of dicts, but it is {_render.kind(rows)}.")
    return rows


def _observe(submission, label: str, values: np.ndarray, scale: float):
    """Make one call; return (the new row, the trace events JAX fired, the rendered call)."""
    rows = _ledger(submission)
    before = len(rows)
    x = jax.device_put(values)
    with TraceLog() as log:
        submission.call("observed_call", label, x, scale)
    text = _render.call("observed_call", (label, x, scale))
    rows = _ledger(submission)
    if len(rows) != before + 1:
        raise PropertyFailure(
            f"`call_rows` grew by {len(rows) - before} row(s) during one call; each call should append exactly one.",
            example=text,
        )
    row = rows[-1]
    if not isinstance(row, dict) or set(KEYS) - set(row):
        missing = ", ".join(sorted(set(KEYS) - set(row))) if isinstance(row, dict) else "it is not a dict"
        raise PropertyFailure(f"The new row is missing keys: {missing}.", example=text, got=_render.value(row))
    return row, log.count, text


def _flag(row, text) -> bool:
    if not isinstance(row["traced"], (bool, np.bool_)):
        raise PropertyFailure(f"`traced` should be True or False, got {_render.kind(row['traced'])}.", example=text)
    return bool(row["traced"])


def _signature(values: np.ndarray) -> tuple:
    return (values.shape, str(values.dtype))


@prop(
    group="rows",
    points=2,
    title="each call appends one row with its label, shape, dtype and result",
    hint="Record what the call saw: `tuple(x.shape)`, `str(x.dtype)` and `float(result)` of "
    "`sum(scale * x ** 2)`; `static` is a dict (empty here, nothing is static).",
)
def test_rows_record_calls(submission):
    _ledger(submission)

    @VALUES
    @given(values=_arrays(), scale=_SCALES, label=st.sampled_from(["probe", "values changed", "new shape"]))
    @example(values=np.arange(3, dtype=np.float32), scale=1.0, label="probe")  # a row of the wrong kind fails here
    def check(values, scale, label):
        row, _, text = _observe(submission, label, values, scale)
        wanted = {"label": label, "shape": values.shape, "dtype": str(values.dtype)}
        for key, expected in wanted.items():
            if row[key] != expected or type(row[key]) is not type(expected):
                raise PropertyFailure(
                    f"The row's `{key}` does not describe the call.", example=text,
                    got=f"{key}={_render.value(row[key])}", expected=f"{key}={_render.value(expected)}",
                )
        if not isinstance(row["static"], dict):
            raise PropertyFailure("The row's `static` should be a dict.", example=text, got=_render.kind(row["static"]))
        result = row["result"]
        if not isinstance(result, float):
            raise PropertyFailure(
                "The row's `result` should be a Python float, e.g. `float(result)`.", example=text,
                got=_render.kind(result),
            )
        terms = scale * values.astype(np.float64) ** 2
        expected = float(terms.sum())
        if not close(result, expected, float(np.abs(terms).sum())):
            raise PropertyFailure(
                "The row's `result` is not `sum(scale * x ** 2)`.", example=text, got=repr(result),
                expected=repr(expected),
            )

    check()


@prop(
    group="traces",
    points=1,
    title="`traced` is true at most once per (shape, dtype) signature",
    hint="A repeated shape and dtype reuses the compiled program: only values or `scale` changed, so that "
    "call did not trace. Read the trace counter before and after the call instead of guessing.",
)
def test_traced_only_on_new_signatures(submission):
    _ledger(submission)
    traced_signatures: dict[tuple, str] = {}

    def check(sequence):
        for index, (values, scale) in enumerate(sequence):
            row, _, text = _observe(submission, f"repeat check {index}", values, scale)
            signature = _signature(values)
            if _flag(row, text):
                if signature in traced_signatures:
                    raise PropertyFailure(
                        f"A second call at shape {values.shape}, dtype {values.dtype} is marked as traced again.",
                        example=f"{traced_signatures[signature]}, later {text}",
                        got="traced=True on the later call",
                        expected="traced=False: only values or scale changed",
                    )
                traced_signatures[signature] = text

    first_failure(_SEQUENCES, check)


@prop(
    group="traces",
    points=1,
    title="`trace_count` grows by one exactly when a row says `traced`",
    hint="`trace_count` is the running total of traces: each row's count is the previous row's count, plus "
    "one if this call traced.",
)
def test_trace_count_consistent(submission):
    rows = _ledger(submission)
    previous = {"row": rows[-1] if rows else None}

    def check(sequence):
        for index, (values, scale) in enumerate(sequence):
            row, _, text = _observe(submission, f"count check {index}", values, scale)
            count = row["trace_count"]
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
                raise PropertyFailure(f"`trace_count` should be an int, got {_render.kind(count)}.", example=text)
            before = previous["row"]
            previous["row"] = row
            if before is None or not isinstance(before.get("trace_count"), (int, np.integer)):
                continue
            step = int(count) - int(before["trace_count"])
            if step != int(_flag(row, text)):
                raise PropertyFailure(
                    "`trace_count` does not match the row's `traced` flag.",
                    example=text,
                    got=f"trace_count went from {before['trace_count']} to {count} with traced={row['traced']}",
                    expected=f"a step of {int(_flag(row, text))}",
                )

    check(_fresh(6))
    first_failure(_SEQUENCES, check)


@prop(
    group="traces",
    points=1,
    title="the ledger agrees with JAX's own trace events",
    hint="Observe, don't predict: count traces with a counter incremented inside the jitted function (its body "
    "runs only while tracing), so a new dtype or shape shows up even when you did not expect it.",
)
def test_ledger_matches_jax_events(submission):
    _ledger(submission)

    def check(sequence):
        for index, (values, scale) in enumerate(sequence):
            row, traces, text = _observe(submission, f"evidence check {index}", values, scale)
            if _flag(row, text) != (traces > 0):
                raise PropertyFailure(
                    "The row's `traced` disagrees with JAX: "
                    + (f"JAX traced {traces} time(s) during this call." if traces else "JAX did not trace during this call."),
                    example=text,
                    got=f"traced={row['traced']}",
                    expected=f"traced={traces > 0}",
                )

    check(_fresh(7))
    first_failure(_SEQUENCES, check)


@prop(
    group="sixteen",
    points=1,
    title="the sixteen-element float32 call is in the ledger",
    hint='Add the lesson\'s call: `observed_call("new length sixteen", x16, 1.0)` with x16 = arange(16) as '
    "float32; its row records shape (16,), dtype float32 and result 1240.0.",
)
def test_sixteen_element_row(submission):
    rows = [row for row in _ledger(submission) if isinstance(row, dict)]
    sixteen = [row for row in rows if row.get("shape") == (16,) and row.get("dtype") == "float32"]
    if not sixteen:
        raise PropertyFailure(
            "`call_rows` has no row with shape (16,) and dtype 'float32'.",
            got=f"{len(rows)} row(s), shapes: " + ", ".join(sorted({_render.value(r.get('shape')) for r in rows})),
        )
    row = sixteen[-1]
    result = row.get("result")
    if not isinstance(result, float) or not math.isclose(result, 1240.0, rel_tol=1e-6):
        raise PropertyFailure(
            "The sixteen-element row's result is not the sum of squares of 0..15 at scale 1.0.",
            got=f"result={_render.value(result)}",
        )
    missing = [key for key in KEYS if key not in row]
    if missing:
        raise PropertyFailure(f"The sixteen-element row is missing keys: {', '.join(missing)}.")
    index = next(i for i, candidate in enumerate(rows) if candidate is row)
    if index and isinstance(row["traced"], bool) and isinstance(rows[index - 1].get("trace_count"), int):
        step = row["trace_count"] - rows[index - 1]["trace_count"] if isinstance(row["trace_count"], int) else None
        if step != int(row["traced"]):
            raise PropertyFailure(
                "The sixteen-element row does not continue the ledger: it looks written by hand, not observed.",
                got=f"trace_count {rows[index - 1]['trace_count']} on the row before, then "
                f"{_render.value(row['trace_count'])} with traced={row['traced']}",
                expected="the row that `observed_call` appends",
            )
