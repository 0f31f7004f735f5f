"""Public checks of repair_clinic: each repair still computes what the slow code computed, and behaves
as its contract says across calls. A failure says what was observed and asks; it never names a cure."""

import jax
import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, TraceCount, close, public, show

ASSIGNMENT = "repair_clinic"
BATCH = 8


def _equations(closed):
    """Every equation of a jaxpr, those inside the jaxprs its equations hold included."""
    total = 0
    pending = [closed.jaxpr]
    while pending:
        jaxpr = pending.pop()
        total += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for param in eqn.params.values():
                for item in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(item, "jaxpr", item)
                    if hasattr(inner, "eqns"):
                        pending.append(inner)
    return total


def _no_new_traces(what, calls):
    with TraceCount() as watch:
        for call in calls:
            call()
    if watch.count:
        raise Mismatch(f"{what} traced again.", f"{watch.count} new trace(s): {', '.join(watch.names[:4])}", "none")


@public("scale", "`scale_rows` (your scalers) gives tanh(x * scale) for 1-D and 2-D arrays, scales as floats "
        "and 0-d arrays", "Which element differs, and what does the slow scaler compute there? (Part A)")
def scale_values(names, rng):
    cases = [(np.array([-1.0, 0.0, 0.5, 2.0], np.float32), 1.5), (np.array([[1.0, -3.0], [0.25, 2.0]], np.float32), -2.0)]
    cases += [(rng.uniform(-3, 3, 5).astype(np.float32), float(rng.uniform(-2, 2)))]
    for x, scale in cases:
        for given, how in ((scale, repr(scale)), (jnp.float32(scale), f"float32[] {scale!r}")):
            def run(x=x, scale=scale, given=given):
                got = names.function("scale_rows")(jnp.asarray(x), given)
                expected = np.tanh(x.astype(np.float64) * np.float32(scale))
                if np.shape(got) != x.shape or not close(got, expected):
                    raise Mismatch("`scale_rows` does not give the slow scaler's values.", show(got),
                                   show(expected.astype(np.float32)))

            yield f"scale_rows({show(x)}, {how})", run


@public("scale", "calls of `scale_rows` with new values and new scales, at shapes it has met, trace nothing",
        "These calls traced again although their shapes repeat. What was new to JAX each time? (Part A)")
def scale_traces(names, rng):
    def run():
        scale_rows = names.function("scale_rows")
        x = jnp.linspace(-1.0, 1.0, 6, dtype=jnp.float32)
        scale_rows(x, 0.5)
        scale_rows(x, jnp.float32(0.5))
        inputs = [(x + s, s) for s in (1.5, -2.0, 3.0)] + [(x, jnp.float32(s)) for s in (1.5, -2.0)]
        _no_new_traces("Calling `scale_rows` with new scales at a shape it had met",
                       [lambda a=a: scale_rows(*a) for a in inputs])

    yield "scale_rows(float32[6], s) for s = 1.5, -2.0, 3.0 after one call at 0.5", run


def _step(theta, x, y, lr, clip):
    t, a, b = (np.asarray(v, np.float64) for v in (theta, x, y))
    gradient = 2.0 * a.T @ (a @ t - b) / a.shape[0]
    if clip:
        gradient = gradient / max(1.0, float(np.linalg.norm(gradient)))
    return t - np.float32(lr) * gradient


@public("step", "`sgd_step` takes the slow version's step, clipped and not, rates as floats and 0-d arrays",
        "Which component of theta differs, and with clipping on or off? Compare with what `sgd_step_slow` "
        "gives for the same call. (Part B)")
def step_values(names, rng):
    theta = np.array([0.5, -1.0, 2.0], np.float32)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    y = rng.normal(size=4).astype(np.float32)
    for lr in (0.1, 0.0):
        for clip in (False, True):
            for given, how in ((lr, repr(lr)), (jnp.float32(lr), f"float32[] {lr!r}")):
                def run(lr=lr, clip=clip, given=given):
                    got = names.function("sgd_step")(jnp.asarray(theta), jnp.asarray(x), jnp.asarray(y), given, clip)
                    expected = _step(theta, x, y, lr, clip)
                    if np.shape(got) != (3,) or not close(got, expected, products=True):
                        raise Mismatch("`sgd_step` does not take the slow version's step.", show(got),
                                       show(expected.astype(np.float32)))

                yield f"sgd_step({show(theta)}, float32[4,3], float32[4], {how}, {clip})", run


@public("step", "a learning-rate schedule (a new rate each call) traces `sgd_step` no more",
        "Each new rate made JAX trace again, although no shape changed. What did JAX see as new? (Part B)")
def step_schedule(names, rng):
    def run():
        sgd_step = names.function("sgd_step")
        theta, x, y = jnp.ones(3), jnp.ones((6, 3)), jnp.zeros(6)
        sgd_step(theta, x, y, 0.1, True)
        sgd_step(theta, x, y, jnp.float32(0.1), True)
        rates = [0.09, 0.081, 0.0729] + [jnp.float32(r) for r in (0.05, 0.02)]
        _no_new_traces("A schedule of new rates at the same shapes and clip",
                       [lambda r=r: sgd_step(theta, x, y, r, True) for r in rates])

    yield "sgd_step(float32[3], float32[6,3], float32[6], lr, True) for a decaying lr after one call at 0.1", run


def _smoothed(x, steps):
    v = np.asarray(x, np.float64)
    for _ in range(steps):
        v = 0.5 * (v + np.roll(v, 1))
    return v


@public("smooth", "`smooth` gives the slow version's result at 0, 1, 5 and 30 steps",
        "Which step count differs? Does your version take that many steps, zero included? (Part C)")
def smooth_values(names, rng):
    x = np.array([4.0, 0.0, -2.0, 1.0, 0.5], np.float32)
    for steps in (0, 1, 5, 30):
        def run(steps=steps):
            got = names.function("smooth")(jnp.asarray(x), steps)
            if np.shape(got) != x.shape or not close(got, _smoothed(x, steps)):
                raise Mismatch("`smooth` does not give the slow version's result.", show(got),
                               show(_smoothed(x, steps).astype(np.float32)))

        yield f"smooth({show(x)}, {steps})", run


@public("smooth", "`smooth`'s program is the same size at 3 and at 30 steps",
        "The program got longer with the step count. Print both jaxprs: what appears once per step? (Part C)")
def smooth_size(names, rng):
    def run():
        smooth = names.function("smooth")
        x = jnp.array([4.0, 0.0, -2.0, 1.0, 0.5], jnp.float32)
        few = _equations(jax.make_jaxpr(smooth, static_argnums=1)(x, 3))
        many = _equations(jax.make_jaxpr(smooth, static_argnums=1)(x, 30))
        if many != few:
            raise Mismatch("The program's size depends on the step count.",
                           f"{few} equations at 3 steps, {many} at 30", "the same at both")

    yield "jax.make_jaxpr(smooth, static_argnums=1)(x, 3) and (x, 30), every equation counted", run


def _dataset(rng, rows):
    return rng.normal(size=(rows, 3)).astype(np.float32), rng.normal(size=rows).astype(np.float32)


@public("dataset", "`dataset_loss` gives the mean squared error over all rows for 16, 13, 5 and 1 rows",
        "How many rows does the example have, and how many does your mean count? (Part D)")
def dataset_values(names, rng):
    theta = np.array([0.5, -1.0, 2.0], np.float32)
    for rows in (16, 13, 5, 1):
        x, y = _dataset(rng, rows)
        def run(x=x, y=y):
            got = names.function("dataset_loss")(jnp.asarray(theta), x, y)
            expected = float(np.mean((x.astype(np.float64) @ theta - y) ** 2))
            if np.shape(got) != () or not close(got, expected, products=True):
                raise Mismatch("`dataset_loss` is not the slow version's mean.", show(got), repr(expected))

        yield f"dataset_loss({show(theta)}, x float32[{rows},3], y float32[{rows}])", run


@public("dataset", "after datasets of 16, 13 and 21 rows, one of 10 rows and one of 27 trace nothing",
        "JAX traced something new for a dataset of a new length. Which names did the trace count list, and "
        "what about those calls was new to JAX? (Part D)")
def dataset_traces(names, rng):
    def run():
        dataset_loss = names.function("dataset_loss")
        theta = jnp.array([0.5, -1.0, 2.0], jnp.float32)
        for rows in (16, 13, 21):
            dataset_loss(theta, *_dataset(rng, rows))
        later = [_dataset(rng, rows) for rows in (10, 27)]
        _no_new_traces("A dataset of a new length", [lambda d=d: dataset_loss(theta, *d) for d in later])

    yield "dataset_loss on 16, 13 and 21 rows, then on 10 and 27 rows", run


def _trained(theta, batches, lr):
    t = np.asarray(theta, np.float64)
    losses = []
    for x, y in batches:
        a, b = np.asarray(x, np.float64), np.asarray(y, np.float64)
        losses.append(np.mean((a @ t - b) ** 2))
        t = t - np.float32(lr) * 2.0 * a.T @ (a @ t - b) / a.shape[0]
    return t, np.array(losses)


def _batches(rng, count):
    return [(jnp.asarray(rng.normal(size=(BATCH, 3)).astype(np.float32)),
             jnp.asarray(rng.normal(size=BATCH).astype(np.float32))) for _ in range(count)]


@public("train", "`train` returns the final theta and the losses, in batch order, as arrays",
        "Which of the two differs, and from which batch on? (Part E)")
def train_values(names, rng):
    theta = np.array([0.5, -1.0, 2.0], np.float32)
    for count in (3, 1):
        batches = _batches(rng, count)
        def run(batches=batches, count=count):
            got = names.function("train")(jnp.asarray(theta), batches, 0.1)
            expected_theta, expected_losses = _trained(theta, batches, 0.1)
            if not isinstance(got, tuple) or len(got) != 2:
                raise Mismatch("`train` should return a pair.", show(got), "(theta, losses)")
            if np.shape(got[1]) != (count,) or not close(got[1], expected_losses, products=True):
                raise Mismatch("The losses differ.", show(got[1]), show(expected_losses.astype(np.float32)))
            if np.shape(got[0]) != (3,) or not close(got[0], expected_theta, products=True):
                raise Mismatch("The final theta differs.", show(got[0]), show(expected_theta.astype(np.float32)))

        yield f"train({show(theta)}, {count} batch(es) of float32[8,3] and float32[8], 0.1)", run


@public("train", "`train` runs with theta traced: it never needs a concrete value of what it computes",
        "Something in `train` needed the concrete number of a value the loop computed, which means waiting "
        "for the device to compute it. Which line, and who needs that number, and when? (Part E)")
def train_reads(names, rng):
    def run():
        train = names.function("train")
        batches = _batches(rng, 3)
        try:
            jax.make_jaxpr(lambda t: train(t, batches, 0.1))(jnp.array([0.5, -1.0, 2.0], jnp.float32))
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                jax.errors.TracerIntegerConversionError) as error:
            raise Mismatch(f"With theta traced, `train` raised {type(error).__name__}.", type(error).__name__,
                           "no concrete value needed") from None

    yield "jax.make_jaxpr(lambda t: train(t, 3 batches, 0.1))(float32[3])", run
