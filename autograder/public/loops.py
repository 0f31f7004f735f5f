"""Public checks of loops: the rolled loop, equation counts, one jitted map, the heaviest line."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from autograder.public.runner import Mismatch, TraceCount, close, public, show

ASSIGNMENT = "loops"


def _loop(x, steps):
    """The notebook's loop, x -> 0.5 * x + sin(x), in NumPy."""
    x = np.asarray(x, dtype=np.float64)
    for _ in range(steps):
        x = 0.5 * x + np.sin(x)
    return x


def _one_level(closed):
    """Equations directly inside the top-level equations (enough here; Part B counts everything)."""
    return sum(len(sub.jaxpr.eqns) for eqn in closed.jaxpr.eqns for sub in [eqn.params.get("jaxpr")] if sub)


@public("rolled", "`rolled` gives the loop's result at 0, 1, 3 and 30 steps, as float32 of x's shape (any shape)",
        "Which step count gave another result? Does your loop take the step that many times, zero included, "
        "keeping x's shape and dtype? (The two slow functions)")
def rolled_values(names, rng):
    x = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    cases = [(x, steps) for steps in (0, 1, 3, 30)]
    cases += [(np.array([[0.25, -1.0], [3.0, 0.0]], dtype=np.float32), 4), (np.array(1.5, dtype=np.float32), 2)]
    cases += [(rng.uniform(-2, 2, 3).astype(np.float32), int(rng.integers(2, 12)))]
    for values, steps in cases:
        def run(values=values, steps=steps):
            got = names.function("rolled")(jnp.asarray(values), steps)
            if np.shape(got) != values.shape or np.asarray(got).dtype != np.float32:
                raise Mismatch("`rolled` should return float32 of x's shape.", show(got), f"float32{list(values.shape)}")
            if not close(got, _loop(values, steps)):
                raise Mismatch("`rolled` does not give the loop's result.", show(got),
                               show(_loop(values, steps).astype(np.float32)))

        yield f"rolled({show(values)}, {steps})", run


@public("rolled", "`rolled`'s jaxpr does not grow with the step count",
        "The program grew with the step count: what does tracing a Python loop leave in the jaxpr for every "
        "turn? (Worked example: the jaxpr of the unrolled loop at 3 and at 30 steps)")
def rolled_does_not_grow(names, rng):
    def run():
        rolled = names.function("rolled")
        x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
        few = _one_level(jax.make_jaxpr(lambda v: rolled(v, 3))(x))
        many = _one_level(jax.make_jaxpr(lambda v: rolled(v, 30))(x))
        if many > few:
            raise Mismatch("The jaxpr grows with the steps.", f"{few} equations at 3 steps, {many} at 30",
                           "no more at 30 than at 3")

    yield "jax.make_jaxpr(lambda v: rolled(v, 3)) and (v, 30), equations inside the jit", run

    def staged_loop():
        rolled = names.function("rolled")
        x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
        loops = []

        def visit(jaxpr):
            for eqn in jaxpr.eqns:
                if eqn.primitive.name in ("scan", "while"):
                    loops.append(eqn)
                held = [v for p in eqn.params.values() for v in (p if isinstance(p, (tuple, list)) else (p,))]
                for item in held:
                    inner = getattr(item, "jaxpr", item)
                    if hasattr(inner, "eqns"):
                        visit(inner)

        visit(jax.make_jaxpr(lambda v: rolled(v, 40))(x).jaxpr)
        if not loops:
            raise Mismatch("At 40 steps the jaxpr holds no `scan` or `while` equation: the loop was not staged.",
                           "no scan or while", "a scan or while equation")
        unrolls = [eqn.params.get("unroll", 1) for eqn in loops if eqn.primitive.name == "scan"]
        if any(u is True or (not isinstance(u, bool) and isinstance(u, int) and u >= 40) for u in unrolls):
            raise Mismatch("At 40 steps the scan unrolls the whole loop (`unroll=True` or 40 and more).",
                           f"unroll={unrolls}", "a fixed unroll below 40")

    yield "jax.make_jaxpr(lambda v: rolled(v, 40))(float32[3]): a scan or while equation, not fully unrolled", staged_loop


@functools.partial(jax.jit, static_argnames="steps")
def _unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


@public("counting", "`count_equations` counts the lesson's small functions right, nested jit equations included",
        "Print the example's jaxpr: where do the equations of a nested jit or loop body live, and did your "
        "count reach them? (Part B)")
def counts(names, rng):
    x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
    cases = [
        ("lambda v: v", lambda v: v, (x,), 0),
        ("lambda v: jnp.sin(v) * 2.0", lambda v: jnp.sin(v) * 2.0, (x,), 2),
        ("lambda v, w: jax.jit(jnp.cos)(v + w)", lambda v, w: jax.jit(jnp.cos)(v + w), (x, x), 3),
        ("the notebook's `unrolled` at 3 steps (one jit equation holding 9)", lambda v: _unrolled(v, 3), (x,), 10),
        ("a `lax.scan` of 4 steps whose body is sin then * 2.0 (1 + 2)",
         lambda v: lax.scan(lambda c, _: (jnp.sin(c) * 2.0, None), v, None, length=4)[0], (x,), 3),
        ("a `lax.while_loop` whose cond holds 1 equation and whose body holds 2 (1 + 1 + 2)",
         lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, v))[1], (x,), 4),
        ("a `lax.cond` after 4 equations, its two branches holding 1 and 2 (5 + 1 + 2)",
         lambda v: lax.cond(v[0] > 0.0, jnp.sin, lambda w: jnp.cos(w) * 2.0, v), (x,), 8),
    ]
    for text, fn, args, expected in cases:
        def run(fn=fn, args=args, expected=expected):
            got = names.function("count_equations")(fn, *args)
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                raise Mismatch("`count_equations` should return a Python int.", f"{type(got).__name__} {got!r}", "int")
            if got != expected:
                raise Mismatch("`count_equations` gives another count.", repr(got), repr(expected))

        yield f"count_equations({text}, float32[3])", run


def _quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@public("pytree", "`quantise_jitted` gives eager `quantise`'s tree, as one jitted call",
        "Where does your tree differ from the expected one: structure, dtypes or values? And how many "
        "programs does one call of your function run? (Part C)")
def quantised(names, rng):
    trees = [{"w": jnp.array([[0.26, -0.74], [1.6, 2.4]]), "b": [jnp.array([0.1, -0.3, 0.9])]}]
    trees += [{"a": jnp.asarray(rng.uniform(-3, 3, (2, 3)).astype(np.float32)),
               "c": (jnp.asarray(rng.uniform(-3, 3, 4).astype(np.float32)),)}]
    trees += [[jnp.array([0.25, 0.75, -0.25, 1.25, -0.75], dtype=jnp.float32)]]  # exact halves of the scale
    for tree, scale in ((trees[0], 0.5), (trees[1], 0.25), (trees[2], 0.5)):
        def run(tree=tree, scale=scale):
            got = names.function("quantise_jitted")(tree, scale)
            want = _quantise(tree, scale)
            if jax.tree.structure(got) != jax.tree.structure(want):
                raise Mismatch("The tree changed its structure.", str(jax.tree.structure(got)),
                               str(jax.tree.structure(want)))
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                if not close(g, w, rtol=0, atol=1e-6):
                    raise Mismatch("A leaf differs from eager `quantise`'s.", show(g), show(w))

        yield f"quantise_jitted({jax.tree.map(show, tree)}, {scale})", run

    def one_call():
        staged = jax.make_jaxpr(names.function("quantise_jitted"))(trees[0], 0.5)
        primitives = [eqn.primitive.name for eqn in staged.jaxpr.eqns]
        jits = [name for name in primitives if name in ("jit", "pjit")]
        if len(jits) != 1 or "round" in primitives:
            raise Mismatch("`jax.make_jaxpr(quantise_jitted)` should show the whole map inside one jit equation.",
                           str(primitives), "one jit equation, and no `round` outside it")

    yield "jax.make_jaxpr(quantise_jitted)(the first tree, 0.5)", one_call

    def new_scale():
        quantise_jitted = names.function("quantise_jitted")
        tree = {"p": jnp.ones((3, 2), jnp.float32), "q": (jnp.arange(5.0, dtype=jnp.float32),)}
        quantise_jitted(tree, 0.5)
        with TraceCount() as watch:
            for scale in (0.25, 2.0, 0.1):
                quantise_jitted(tree, scale)
        if watch.count:
            raise Mismatch("A new `scale` traced again: `scale` should stay a runtime argument.", str(watch.names),
                           "no trace")

    yield "quantise_jitted on one tree at scale 0.5, then at 0.25, 2.0 and 0.1", new_scale


def _many_short_turns(v):
    for _ in range(10):
        v = jnp.sin(v)  # one equation a turn
    for _ in range(2):
        v = jnp.cos(v) * 2.0 + 1.0  # three equations a turn
    return v


def _one_long_line(v):
    v = lax.fori_loop(0, 1000, lambda i, w: jnp.sin(w) * 2.0, v)
    return jnp.tanh(jnp.cos(v) + 1.0) * 0.5 - v


@public("attribution", "`heaviest_line` names the line that made the most equations, as a Python int",
        "Which line did you name, and which made more equations? Which source line does each equation carry, "
        "nested ones included? (Part D)")
def heaviest(names, rng):
    x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
    first = _many_short_turns.__code__.co_firstlineno
    long_first = _one_long_line.__code__.co_firstlineno
    cases = [
        (_many_short_turns, first + 2, f"a function whose line {first + 2} makes 10 equations, line {first + 4} 6"),
        (_one_long_line, long_first + 2, f"a function whose line {long_first + 2} makes 5 equations, "
                                         f"line {long_first + 1} 3 (inside a fori_loop)"),
    ]
    for fn, expected, text in cases:
        def run(fn=fn, expected=expected):
            got = names.function("heaviest_line")(fn, x)
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                raise Mismatch("`heaviest_line` should return a Python int.", f"{type(got).__name__} {got!r}", "int")
            if got != expected:
                raise Mismatch("`heaviest_line` names another line.", repr(got), repr(expected))

        yield text, run
