"""Public checks of static_max_mode: the notebook's tables of modes, errors and static arguments."""

import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, TraceCount, close, public, show

ASSIGNMENT = "static_max_mode"

_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max}


def _data(rng):
    fixed = [[1.0, 5.0, 3.0], [-4.0, -1.0, -2.0], [[2.0, -7.0], [0.5, 3.0]]]
    for data in fixed:
        yield np.array(data, dtype=np.float32)
    yield np.array([[3, -1], [2, 7]], dtype=np.int32)  # integers: the mean is still the exact mean, 2.75
    for shape in ((3,), (2, 2)):  # the fixed examples' shapes: new values, no new program
        yield rng.uniform(-10, 10, shape).astype(np.float32)


@public("modes", "`choose_reduction` and `choose` give NumPy's sum, mean and max of all the elements",
        "Which mode and which data gave another number? Does your reduction cover every element, whatever the "
        "shape? (Part A)")
def modes(names, rng):
    for data in _data(rng):
        for mode, reference in _REDUCE.items():
            for label in ("choose_reduction", "choose"):
                text = f"{label}({show(data)}, mode={mode!r})"

                def run(label=label, data=data, mode=mode, reference=reference):
                    fn = names.function(label)
                    got = fn(jnp.asarray(data), mode) if label == "choose_reduction" else fn(jnp.asarray(data), mode=mode)
                    expected = float(reference(data.astype(np.float64)))
                    if np.shape(got) != ():
                        raise Mismatch(f"`{label}` should reduce to a single number.", show(got), "shape ()")
                    if not close(got, expected):
                        raise Mismatch(f"`{label}` does not give NumPy's {mode}.", show(got), repr(expected))

                yield text, run


@public("errors", "a mode the notebook does not list (a typo, another word, None, a number) is refused with ValueError "
        "by both functions",
        "What did your functions do with a mode the notebook does not list, and what does Part A promise for "
        "one? (Part A)")
def errors(names, rng):
    values = jnp.array([1.0, 2.0, 3.0])
    for bad in ("typo", "Max", "min", None, 3):
        for label in ("choose_reduction", "choose"):
            def run(label=label, bad=bad):
                fn = names.function(label)
                try:
                    got = fn(values, bad) if label == "choose_reduction" else fn(values, mode=bad)
                except ValueError:
                    return
                raise Mismatch(f"`{label}` accepted the unknown mode {bad!r}.", show(got), "ValueError")

            yield f"{label}(float32[3] [1.0, 2.0, 3.0], mode={bad!r})", run


@public("traces", "`choose` traces once per (shape, mode) and never again for new values",
        "`choose` traced again for new values, or could not take a string mode: which argument picks the "
        "program, and how does `jax.jit` learn that? (Worked example: values, shapes and a static power)")
def traces(names, rng):
    base = jnp.linspace(-3.0, 3.0, 7, dtype=jnp.float32)
    later = [base + 1.5, base * -2.0, jnp.asarray(rng.uniform(-5, 5, 7).astype(np.float32))]

    def run():
        choose = names.function("choose")
        for mode in _REDUCE:
            choose(base, mode=mode)
        with TraceCount() as watch:
            for values in later:
                for mode in _REDUCE:
                    choose(values, mode=mode)
        if watch.count:
            raise Mismatch("Calls that changed only the values traced again.", f"{watch.count} new trace(s)", "none")

    yield "choose at float32[7] for each mode, then three new sets of values of the same shape", run


def _normalise(x, mode, n_iter, eps, clip_at):
    """The notebook's `normalise`, in NumPy."""
    y = np.asarray(x, dtype=np.float64)
    for _ in range(n_iter):
        y = 0.5 * (y + np.roll(y, 1))
    size = np.linalg.norm(y) if mode == "l2" else np.abs(y).max()
    y = y / (size + eps)
    peak = np.max(np.abs(y))
    if peak > clip_at:
        y = y * (clip_at / peak)
    return y


@public("sorting", "`normalise_jitted` gives `normalise`'s values, and a call that changes only numbers it computes "
        "with reuses its program",
        "New values of an argument traced again, or gave another result: which arguments decide the program's "
        "structure, and which are only numbers it computes with? (Part C)")
def sorting(names, rng):
    x = np.array([2.0, -1.0, 0.5, 3.0, -4.0, 1.0, 0.0], dtype=np.float32)
    cases = [(x, "l2", 1, 0.1, 0.3), (x, "max", 0, 0.5, 0.9), (-x, "max", 3, 0.05, 0.2), (x, "l2", 2, 0.1, 5.0)]
    cases += [(rng.uniform(-3, 3, 7).astype(np.float32), "l2", 2, float(rng.uniform(0.01, 1)),
               float(rng.uniform(0.05, 1)))]
    for args in cases:
        def run(args=args):
            got = names.function("normalise_jitted")(jnp.asarray(args[0]), *args[1:])
            expected = _normalise(*args)
            if not close(got, expected, rtol=1e-4, atol=1e-5):
                raise Mismatch("`normalise_jitted` does not give `normalise`'s values.", show(got),
                               show(expected.astype(np.float32)))

        yield f"normalise_jitted({show(args[0])}, {args[1]!r}, {args[2]}, {args[3]:g}, {args[4]:g})", run

    for args in cases[:2]:
        def as_arrays(args=args):
            got = names.function("normalise_jitted")(jnp.asarray(args[0]), args[1], args[2], jnp.float32(args[3]),
                                                     jnp.float32(args[4]))
            expected = _normalise(*args)
            if not close(got, expected, rtol=1e-4, atol=1e-5):
                raise Mismatch("With `eps` and `clip_at` as 0-d float32 arrays, `normalise_jitted` does not give "
                               "`normalise`'s values.", show(got), show(expected.astype(np.float32)))

        yield (f"normalise_jitted({show(args[0])}, {args[1]!r}, {args[2]}, jnp.float32({args[3]:g}), "
               f"jnp.float32({args[4]:g})): eps and clip_at as 0-d float32 arrays"), as_arrays

    def no_retrace():
        fn = names.function("normalise_jitted")
        values = jnp.asarray(x)
        fn(values, "l2", 1, 0.1, 0.3)
        with TraceCount() as watch:
            for eps, clip_at in ((0.3, 0.2), (0.05, 0.8), (1.0, 0.1)):
                fn(values, "l2", 1, eps, clip_at)
        if watch.count:
            raise Mismatch("New `eps` and `clip_at` values traced again.", f"{watch.count} new trace(s)", "none")

    yield "normalise_jitted(x, 'l2', 1, eps, clip_at) for three new (eps, clip_at) pairs", no_retrace
