"""Public checks of ledger_extension: the ledger's rows, their traced flags, the sixteen row, signature_of.

The ledger is a list the graded cells read too: these checks add a few rows of their own (an int32
matrix, a random float32 vector, lengths 5, 5 and 7), each labelled as what it is. The notebook's
first three rows are checked where they are (a ledger built without them skips those examples).
"""

import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, TraceCount, public, show

ASSIGNMENT = "ledger_extension"


_FIRST = (("first call", 140.0), ("new values", 204.0), ("new scale", 280.0))


def _rows(names):
    rows = names["call_rows"]
    if not isinstance(rows, list):
        raise Mismatch(f"`call_rows` should be a list, but it is a {type(rows).__name__}.")
    return rows


def _has_first_rows(names):
    """Whether the ledger starts with the notebook's three worked rows (labelled as the notebook labels them)."""
    rows = names["call_rows"]
    return isinstance(rows, list) and [row.get("label") for row in rows[:3] if isinstance(row, dict)] == [
        label for label, _ in _FIRST]


def _row(names, index):
    return _rows(names)[index]


@public("rows", "each row records the call's shape (a tuple), dtype (a string) and result (a float)",
        "Compare Got with Expected: which field of the row is missing, or of another type? (The ledger you "
        "will extend)")
def rows(names, rng):
    for index, (label, result) in enumerate(_FIRST if _has_first_rows(names) else ()):
        def run(index=index, label=label, result=result):
            row = _row(names, index)
            got = {key: row.get(key) for key in ("label", "shape", "dtype", "result", "static")}
            expected = {"label": label, "shape": (8,), "dtype": "float32", "result": result, "static": {}}
            for key, want in expected.items():
                if type(got[key]) is not type(want) or got[key] != want:
                    raise Mismatch(f"The row's {key!r} is not what the call was.", show(got[key]), repr(want))

        yield f"call_rows[{index}], the {label!r} row of float32[8]", run

    def matrix():
        rows = names["call_rows"]
        before = len(rows)
        returned = names.function("observed_call")("int32 matrix", jnp.arange(6, dtype=jnp.int32).reshape(2, 3), 2.0)
        if len(rows) != before + 1:
            raise Mismatch("`observed_call` should append exactly one row.", f"{len(rows) - before} new rows", "1")
        row = rows[-1]
        got = (row.get("shape"), row.get("dtype"), row.get("result"), returned)
        if got != ((2, 3), "int32", 110.0, 110.0):
            raise Mismatch("The int32 matrix row does not record the call.", f"shape, dtype, result, returned = {got}",
                           "((2, 3), 'int32', 110.0, 110.0)")

    yield "observed_call('int32 matrix', int32[2, 3] [[0, 1, 2], [3, 4, 5]], 2.0)", matrix

    values, scale = rng.uniform(-3, 3, 5).astype(np.float32), float(rng.uniform(0.5, 2.0))

    def vector():
        returned = names.function("observed_call")("self-check vector", jnp.asarray(values), scale)
        row = _rows(names)[-1]
        expected = float(jnp.asarray(scale, dtype=jnp.float32) * jnp.sum(jnp.asarray(values) ** 2))
        got = (row.get("shape"), row.get("dtype"))
        if got != ((5,), "float32") or type(row.get("result")) is not float:
            raise Mismatch("The row does not record the call's shape, dtype and a float result.",
                           f"shape, dtype, result = {got + (row.get('result'),)}", "((5,), 'float32', a float)")
        if abs(row["result"] - expected) > 1e-4 * max(1.0, abs(expected)) or returned != row["result"]:
            raise Mismatch("The row's result (or the returned value) is not the call's result.",
                           f"row {row['result']!r}, returned {returned!r}", repr(expected))

    yield f"observed_call('self-check vector', {show(values)}, {scale:.4g})", vector

    ints = jnp.array([1, 2, 3], dtype=jnp.int32)
    for given, how, expected in ((3, "3 (a Python int)", 42.0), (np.float32(0.5), "np.float32(0.5)", 7.0),
                                 (jnp.float32(2.0), "jnp.float32(2.0) (a float32 array)", 28.0)):
        def kinds(given=given, how=how, expected=expected):
            returned = names.function("observed_call")(f"scale {how}", ints, given)
            row = _rows(names)[-1]
            got = (row.get("shape"), row.get("dtype"), row.get("result"))
            if got != ((3,), "int32", expected) or type(row.get("result")) is not float or type(returned) is not float:
                raise Mismatch("The row does not record the call, or its result (or the returned value) is not a "
                               "Python float.", f"shape, dtype, result = {got}, returned {returned!r}",
                               f"((3,), 'int32', {expected!r}), returned {expected!r}")

        yield f"observed_call('scale {how}', int32[3] [1, 2, 3], {how})", kinds


@public("traces", "the first rows' traced flags, and fresh calls' flags and counts, agree with JAX's own trace events",
        "Your traced flag disagrees with JAX's own trace event for that call: is your flag observed during "
        "the call, or guessed from its arguments? (Worked example: a counter inside the function)")
def traced(names, rng):
    def first_rows():
        first, new_values, new_scale = (_row(names, i) for i in range(3))
        for row in (first, new_values, new_scale):
            if not isinstance(row.get("traced"), (bool, np.bool_)):
                raise Mismatch(f"The {row.get('label')!r} row's traced should be a bool.", show(row.get("traced")))
        flags = [bool(row["traced"]) for row in (first, new_values, new_scale)]
        if flags != [True, False, False]:
            raise Mismatch("The first three rows' traced flags are not what JAX did.", str(flags), "[True, False, False]")

    if _has_first_rows(names):
        yield "the first three rows: first call, new values, new scale", first_rows
    for length in (5, 5, 7):
        def fresh(length=length):
            x = jnp.ones(length, dtype=jnp.float32)
            with TraceCount() as watch:
                names.function("observed_call")(f"fresh length {length}", x, 0.5)
            row = names["call_rows"][-1]
            jax_traced = "scaled_square_sum" in watch.names
            if bool(row.get("traced")) != jax_traced:
                raise Mismatch("The row's traced flag is not what JAX did.", f"traced={row.get('traced')}",
                               f"traced={jax_traced}")
            count = names["trace_log"]["count"]
            if row.get("trace_count") != count:
                raise Mismatch("The row's trace_count is not trace_log's count after the call.",
                               repr(row.get("trace_count")), repr(count))

        yield f"observed_call('fresh length {length}', float32[{length}] ones, 0.5)", fresh

    def observed(label, x, scale, before=None):
        def run():
            if before is not None:
                before(names["compiled_square_sum"])
            with TraceCount() as watch:
                names.function("observed_call")(label, x, scale)
            row = names["call_rows"][-1]
            jax_traced = "scaled_square_sum" in watch.names
            if not isinstance(row.get("traced"), (bool, np.bool_)) or bool(row["traced"]) != jax_traced:
                raise Mismatch("The row's traced flag is not what JAX did.", f"traced={row.get('traced')}",
                               f"traced={jax_traced}")

        return run

    x6 = jnp.full(6, 0.5, dtype=jnp.float32)
    yield ("`compiled_square_sum.trace(float32[6], 0.5)` (traced, not compiled), then "
           "observed_call('after .trace', float32[6], 0.5)"), observed(
        "after .trace", x6, 0.5, before=lambda f: f.trace(x6, 0.5))
    yield ("`compiled_square_sum.clear_cache()`, then observed_call('after clear_cache', float32[6], 0.5), a shape "
           "met before"), observed("after clear_cache", x6, 0.5, before=lambda f: f.clear_cache())
    yield ("observed_call('scale float32 array', float32[6], jnp.float32(0.5)) after the Python float 0.5"), observed(
        "scale float32 array", x6, jnp.float32(0.5))


@public("sixteen", "a row labelled 'new length sixteen' records float32[16] and its result",
        "Is there one row with that label, recorded by the ledger for a float32 array of sixteen values? "
        "(Part B)")
def sixteen(names, rng):
    def run():
        found = [row for row in names["call_rows"] if row.get("label") == "new length sixteen"]
        if not found:
            raise Mismatch("No row is labelled 'new length sixteen'.")
        row = found[0]
        got = (row.get("shape"), row.get("dtype"), row.get("result"))
        if got != ((16,), "float32", 1240.0):
            raise Mismatch("The sixteen row does not record the call.", f"shape, dtype, result = {got}",
                           "((16,), 'float32', 1240.0)")

    yield "the row labelled 'new length sixteen'", run


def _calls(rng):
    x3 = jnp.arange(3.0)
    yield "x float32[3], scale 1.0, power 2; then new values of x and scale", ((x3, 1.0), {"power": 2}), (
        (x3 + 1.0, 5.0), {"power": 2}), True
    yield "x float32[3]; then x float32[4] (a new shape)", ((x3, 1.0), {"power": 2}), (
        (jnp.arange(4.0), 1.0), {"power": 2}), False
    for _ in range(2):
        n = int(rng.integers(2, 6))
        a, b = (jnp.asarray(rng.uniform(-2, 2, n).astype(np.float32)) for _ in range(2))
        yield f"x float32[{n}], random values; then other random values, same shape", ((a, 0.5), {"power": 3}), (
            (b, 2.0), {"power": 3}), True


def _traced_again(first, second):
    """Whether the second call traced, made right after the first, on a fresh jit of the notebook's computation."""
    import jax

    def powered_sum(x, scale, power):
        return sum(jnp.sum(scale * leaf ** power) for leaf in jax.tree.leaves(x))

    compiled = jax.jit(powered_sum, static_argnames=("power",))
    compiled(*first[0], **first[1])
    with TraceCount() as watch:
        compiled(*second[0], **second[1])
    return "powered_sum" in watch.names


def _kinds():
    """The notebook's questions, each a pair of calls that differ in one way; JAX answers each."""
    x3 = jnp.arange(3.0)
    two = ((x3, 2.0), {"power": 2})
    yield "scale 2 (an int), then 2.0", ((x3, 2), {"power": 2}), two
    yield "scale 2.0, then np.float32(2.0)", two, ((x3, np.float32(2.0)), {"power": 2})
    yield "scale 2.0, then jnp.array(2.0)", two, ((x3, jnp.array(2.0)), {"power": 2})
    yield "scale by position, then by keyword", two, ((x3,), {"scale": 2.0, "power": 2})
    yield "x a tuple of two float32[3], then a list of them", (((x3, x3), 1.0), {"power": 1}), (([x3, x3], 1.0),
                                                                                            {"power": 1})
    yield "power 2, then power 3", two, ((x3, 2.0), {"power": 3})
    yield "x float32[3], then int32[3]", two, ((jnp.arange(3, dtype=jnp.int32), 2.0), {"power": 2})
    yield "x a dict of two float32[2, 2], then new values", (({"a": jnp.ones((2, 2)), "b": jnp.zeros((2, 2))}, 1.5),
                                                             {"power": 1}), (({"a": jnp.zeros((2, 2)),
                                                                              "b": jnp.ones((2, 2))}, 0.5), {"power": 1})


@public("signature", "`signature_of` agrees with JAX on the notebook's questions: int or float scale, NumPy or JAX "
        "scalar, keyword or position, tuple or list, a new power, a new dtype",
        "For this pair of calls JAX's answer (a new trace or not) and your signatures' (equal or not) differ: "
        "what changed between the two calls, and does your signature hold it? (Part C)")
def kinds(names, rng):
    for text, first, second in _kinds():
        def run(first=first, second=second):
            signature_of = names.function("signature_of")
            a, b = signature_of(*first), signature_of(*second)
            traced = _traced_again(first, second)
            if (a == b) == traced:
                raise Mismatch("JAX " + ("traced again, so the signatures should differ." if traced else
                                         "reused the program, so the signatures should be equal."),
                               f"equal = {a == b}", f"equal = {not traced}")

        yield text, run


@public("signature", "`signature_of` is hashable, stable, equal for new values and different for a new shape",
        "Which difference between the two calls (see Example) does your signature record that JAX's cache "
        "ignores, or ignore that it records? (Part C)")
def signature(names, rng):
    for text, first, second, same in _calls(rng):
        def run(first=first, second=second, same=same):
            signature_of = names.function("signature_of")
            a = signature_of(*first)
            try:
                hash(a)
            except TypeError:
                raise Mismatch(f"`signature_of` returned a {type(a).__name__}, which is not hashable.") from None
            if signature_of(*first) != a:
                raise Mismatch("The same call gave two different signatures.")
            b = signature_of(*second)
            if (a == b) != same:
                raise Mismatch("JAX " + ("reused the program, so the signatures should be equal." if same else
                                         "traced again, so the signatures should differ."),
                               f"equal = {a == b}", f"equal = {same}")

        yield text, run
