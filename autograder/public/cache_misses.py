"""Public checks of cache_misses: the repairs compute what the slow originals computed and trace once
per signature; `miss_cause` names the cause of the notebook's explanation texts, one cause each."""

import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, TraceCount, close, op_by_op, public, show

ASSIGNMENT = "cache_misses"


def _norm(x, scale):
    return float(np.linalg.norm(scale * np.asarray(x, dtype=np.float64)))


def _smoothed(x, steps):
    y = np.asarray(x, dtype=np.float64)
    for _ in range(steps):
        y = (y + np.roll(y, 1) + np.roll(y, -1)) / 3
    return y


def _clipped(x, low, high):
    return float(np.clip(np.asarray(x, dtype=np.float64), low, high).mean())


@public("repairs", "`scaled_norm`, `smooth` and `clipped_mean` give the slow originals' results",
        "Which input gave another result? Does your repair compute what the slow original computes, with "
        "every number the original uses? (The problem)")
def repairs(names, rng):
    x = np.array([3.0, -4.0, 0.0], dtype=np.float32)
    pulse = np.array([0.0, 0.0, 9.0, 0.0, 0.0], dtype=np.float32)
    drawn = rng.uniform(-5, 5, 3).astype(np.float32)
    cases = [
        (f"scaled_norm({show(x)}, 2.0)", "scaled_norm", (x, 2.0), _norm(x, 2.0)),
        (f"scaled_norm({show(x)}, -0.5)", "scaled_norm", (x, -0.5), _norm(x, -0.5)),
        (f"smooth({show(pulse)}, 1)", "smooth", (pulse, 1), _smoothed(pulse, 1)),
        (f"smooth({show(pulse)}, 2)", "smooth", (pulse, 2), _smoothed(pulse, 2)),
        (f"clipped_mean({show(x)}, -1.0, 1.0)", "clipped_mean", (x, -1.0, 1.0), _clipped(x, -1.0, 1.0)),
        (f"clipped_mean({show(x)}, 0.0, 5.0)", "clipped_mean", (x, 0.0, 5.0), _clipped(x, 0.0, 5.0)),
        (f"scaled_norm({show(drawn)}, 1.5)", "scaled_norm", (drawn, 1.5), _norm(drawn, 1.5)),
        (f"clipped_mean({show(drawn)}, -2.0, 2.0)", "clipped_mean", (drawn, -2.0, 2.0), _clipped(drawn, -2.0, 2.0)),
    ]
    for text, name, args, expected in cases:
        def run(name=name, args=args, expected=expected):
            got = names.function(name)(jnp.asarray(args[0]), *args[1:])
            if not close(got, expected):
                raise Mismatch(f"`{name}` does not give the slow original's result.", show(got),
                               show(np.float32(expected)) if np.ndim(expected) == 0 else show(expected.astype(np.float32)))

        yield text, run


@public("repairs", "with every jit disabled (`jax.disable_jit()`), and for `x` of other shapes, the repairs still "
        "give the slow originals' results",
        "Run the example yourself with every jit disabled: what does your repair rely on that only a compiled "
        "call gives it? Does it take an `x` of any shape? (The idea)")
def repairs_op_by_op(names, rng):
    x = np.array([3.0, -4.0, 0.0], dtype=np.float32)
    grid = np.array([[1.0, -2.0, 2.0], [0.5, 0.0, -1.5]], dtype=np.float32)
    pulse = np.array([0.0, 0.0, 9.0, 0.0, 0.0], dtype=np.float32)
    cases = [
        (f"scaled_norm({show(grid)}, 2.0): a 2-D x", "scaled_norm", (grid, 2.0), _norm(grid, 2.0), False),
        (f"clipped_mean({show(grid)}, 0.5, 0.5): low == high", "clipped_mean", (grid, 0.5, 0.5),
         _clipped(grid, 0.5, 0.5), False),
        (f"scaled_norm({show(x)}, 2.0) under jax.disable_jit()", "scaled_norm", (x, 2.0), _norm(x, 2.0), True),
        (f"smooth({show(pulse)}, 2) under jax.disable_jit()", "smooth", (pulse, 2), _smoothed(pulse, 2), True),
        (f"clipped_mean({show(x)}, -1.0, 1.0) under jax.disable_jit()", "clipped_mean", (x, -1.0, 1.0),
         _clipped(x, -1.0, 1.0), True),
    ]
    for text, name, args, expected, eager in cases:
        def run(name=name, args=args, expected=expected, eager=eager):
            fn = names.function(name)
            given = (jnp.asarray(args[0]), *args[1:])
            got = op_by_op(fn, *given, given_first=True) if eager else fn(*given)
            if got is None:  # compiled ahead of time: its compiled results are checked above
                return
            if not close(got, expected):
                raise Mismatch(f"`{name}` does not give the slow original's result"
                               + (" with every jit disabled." if eager else "."), show(got),
                               show(np.float32(expected)) if np.ndim(expected) == 0 else show(expected.astype(np.float32)))

        yield text, run


@public("traces", "calls at a signature already met do not trace again, whatever the values",
        "Each of those calls repeated a signature already met, yet traced: what is new on every call that "
        "JAX's cache counts as a different function? (Worked example: a lambda made on every call)")
def traces(names, rng):
    def run():
        v = jnp.linspace(-1.0, 1.0, 11, dtype=jnp.float32)
        inputs = [(v + scale, scale) for scale in (0.5, 1.5, 3.0)]
        scaled_norm, clipped_mean, smooth = (names.function(n) for n in ("scaled_norm", "clipped_mean", "smooth"))
        scaled_norm(v, 1.0), clipped_mean(v, -0.5, 0.5), smooth(v, 1)
        with TraceCount() as watch:
            for values, scale in inputs:
                scaled_norm(values, scale)
                clipped_mean(values, -scale, scale)
                smooth(values, 1)
        if watch.count:
            raise Mismatch("Calls at signatures already met traced again.", str(watch.names), "no trace")

    yield "each function at float32[11] once, then three times with new values (smooth's steps kept at 1)", run


_HEAD = "TRACING CACHE MISS at demo.py:7:11 (caller):\n"
_KEY = "  for weigh defined at demo.py:2\n  all previously seen cache keys differ. For the closest previous key:\n"
_WEAK = "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types"


def _explanations(rng):
    """The table's causes, each as JAX words it, one line of difference each; then a few drawn at random."""
    yield _HEAD + "  never seen function:\n    <lambda> id=1 defined at demo.py:7", "new function"
    yield (_HEAD + "  never seen function:\n    <lambda> id=2 defined at demo.py:7\n  but seen another function "
           "defined on the same line; maybe the function is\n  being re-defined repeatedly, preventing caching?",
           "redefined function")
    yield _HEAD + _KEY + "  different input types:\n  * at x, now i32[5] and before f32[5]", "new dtype"
    yield _HEAD + _KEY + "  different input types:\n  * at x, now f32[5] and before f32[3]", "new shape"
    yield (_HEAD + _KEY + "  different input types:\n  * at s, now f32[]{weak_type=False} and before "
           "f32[]{weak_type=True}" + _WEAK, "weak type")
    yield _HEAD + _KEY + "  cache miss explanation unavailable", "new static value"
    yield (_HEAD + _KEY + "  different input pytree:\n  * at input path [0], now tuple of length 1 and before tuple "
           "of length 2, so the lengths do not match", "new structure")
    yield (_HEAD + _KEY + "  different input types:\n  * at s, now i32[]{weak_type=True} and before "
           "f32[]{weak_type=False}" + _WEAK, "new dtype")
    yield (_HEAD + _KEY + "  different input types:\n  * at s, now f32[]{weak_type=False} and before "
           "f32[]{weak_type=True}\n  * at x, now f32[7] and before f32[3]" + _WEAK, "weak type")  # JAX ends the last line so
    yield (_HEAD + _KEY + "  different input pytree:\n  * at input path [0][0][1], now <class 'tuple'> and before "
           "pytree leaf, so their Python types differ", "new structure")
    for _ in range(3):
        now, before = (int(n) for n in rng.choice(np.arange(2, 40), size=2, replace=False))
        name = str(rng.choice(["x", "values", "v"]))
        yield _HEAD + _KEY + f"  different input types:\n  * at {name}, now f32[{now}] and before f32[{before}]", "new shape"
        dtypes = [str(d) for d in rng.choice(["i32", "f32", "bf16", "f16"], size=2, replace=False)]
        yield (_HEAD + _KEY + f"  different input types:\n  * at {name}, now {dtypes[0]}[{now}] and before "
               f"{dtypes[1]}[{now}]", "new dtype")


@public("causes", "`miss_cause` names the table's cause for each kind of explanation",
        "Which words of that explanation did your function read, and which line of it names the cause? Is an "
        "earlier line of the explanation more telling than the one you read? (Part B)")
def causes(names, rng):
    for text, cause in _explanations(rng):
        def run(text=text, cause=cause):
            got = names.function("miss_cause")(text)
            if got != cause:
                raise Mismatch("`miss_cause` names another cause.", repr(got), repr(cause))

        lines = text.splitlines()
        yield "an explanation whose lines after the first are: " + " / ".join(line.strip() for line in lines[1:]
                                                                              if "cache keys differ" not in line
                                                                              and "for weigh" not in line), run
