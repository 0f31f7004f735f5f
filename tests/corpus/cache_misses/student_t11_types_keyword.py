"""Part B mistake treating some "different input pytree" lines as type changes: miss_cause tests for the word
"types" before it tests for "different input pytree", so a pytree explanation whose line says "...now <class
'dict'> and before <class 'tuple'>, so their Python types differ" goes down the types branch; the dtype parse
compares "<class 'dict'>" with "<class 'tuple'>, so their..." and answers "new dtype". Pytree lines about
lengths or numbers of children (the self-check's example, keyword calls) are still right, so all self-check cells
pass. Part A correct (static steps via static_argnums); written answer complete."""

# The teacher's split of each graded cell (decide it yourself from what the notebook says each graded cell checks):
TEACHER = {'test_repairs': 3, 'test_traces': 2, 'test_causes': 1.71}
WHY = {'test_causes': "the 'new structure' row fails for pytree changes of container type (tuple -> dict -> list), which the word 'types' sends down the dtype branch: 2/7 lost."}
MANUAL = {'pause_and_reason': 2}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'names_argument_misses'}
SCORE = 6
REVIEW = "The teacher split Part B's two points by row of the table; the graders give one point per property, and this submission loses exactly the property that names its mistake: `names_argument_misses`."

# %% cell 1 [imports]
import functools

import jax
import jax.numpy as jnp
import numpy as np

# %% cell 3 [trace_watch]
class TraceWatch:
    """Collect the names of the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, turning a
    Python function into a jaxpr of its own (a jitted function traced inside another
    trace emits none). Eager operations emit one too (JAX runs each as a small jitted function of its
    own), but only the first time an operation meets a signature: a repeat at a
    signature already met emits nothing. So build inputs before the block and call
    only the function you study in it.
    """

    EVENT = "/jax/core/compile/jaxpr_trace_duration"

    def __init__(self):
        self.names = []
        self._listener = self._record

    def _record(self, event, duration_secs, **details):
        if event == self.EVENT:
            self.names.append(details.get("fun_name", "?"))

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def __exit__(self, *exc_info):
        jax.monitoring.unregister_event_duration_listener(self._listener)
        return False

    @property
    def count(self):
        """How many traces started inside the block."""
        return len(self.names)

# %% cell 6 [no grade_id]
import logging

_JAX_EXPLAINER = logging.getLogger("jax._src.interpreters.partial_eval")  # where JAX logs the misses


def explanations_during(thunk):
    """Run thunk() with cache-miss explanations on; return the explanation texts, in order."""
    texts = []

    class Keep(logging.Handler):
        def emit(self, record):
            texts.append(record.getMessage())

    keep, propagate = Keep(), _JAX_EXPLAINER.propagate
    _JAX_EXPLAINER.addHandler(keep)
    _JAX_EXPLAINER.propagate = False  # keep them out of the cell's stderr
    try:
        with jax.explain_cache_misses(True):
            thunk()
    finally:
        _JAX_EXPLAINER.removeHandler(keep)
        _JAX_EXPLAINER.propagate = propagate
    return texts


def doubled_total(x):
    return jax.jit(lambda v: jnp.sum(2.0 * v))(x)  # a new lambda on every call


x = jnp.arange(4.0)
for text in explanations_during(lambda: [doubled_total(x) for _ in range(3)]):
    print(text, end="\n\n")

# %% cell 8 [no grade_id]
@jax.jit
def total_of(v):
    return jnp.sum(v)


@jax.jit
def largest_of(v):
    return jnp.max(v)


def summarise(x):
    results = []
    for f in (total_of, largest_of):
        results.append(f(x))  # one call site, two functions, each built once
    return results


for text in explanations_during(lambda: summarise(x)):
    print(text, end="\n\n")

# %% cell 10 [no grade_id]
total_times = jax.jit(lambda v, factor: jnp.sum(factor * v))  # built once, at top level


def doubled_total_fixed(x):
    return total_times(x, 2.0)


texts = explanations_during(lambda: [doubled_total_fixed(x) for _ in range(3)])
print(len(texts), "explanation(s):")
for text in texts:
    print(text, end="\n\n")

# %% cell 12 [no grade_id]
@functools.partial(jax.jit, static_argnames=("k",))
def weigh(x, s, k=1):
    return jnp.sum(x * s) * k


def steps():
    weigh(jnp.ones(3), 2.0, k=1)                      # first call
    weigh(jnp.ones(3), 2.0, k=2)                      # a new static value
    weigh(jnp.ones(3, dtype=jnp.int32), 2.0, k=2)     # a new dtype
    weigh(jnp.ones(5), 2.0, k=2)                      # a new shape
    weigh(jnp.ones(5), jnp.float32(2.0), k=2)         # s: a float32 array after a Python float
    weigh(jnp.ones(5), s=2.0, k=2)                    # s passed by keyword


for text in explanations_during(steps):
    print(text, end="\n\n")

# %% cell 15 [slow_functions]
def scaled_norm_slow(x, scale):
    """sqrt(sum((scale * x) ** 2)) over every element of x; scale is a number."""
    return jax.jit(lambda v: jnp.sqrt(jnp.sum((scale * v) ** 2)))(x)


def _smooth_steps(x, steps):
    for _ in range(steps):  # a Python loop: unrolled `steps` times while tracing
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


def smooth_slow(x, steps):
    """`steps` rounds of: each element becomes the mean of itself and its two neighbours (wrapping)."""
    return jax.jit(functools.partial(_smooth_steps, steps=steps))(x)


def clipped_mean_slow(x, low, high):
    """The mean of x after clipping every element into [low, high] (low <= high)."""
    def inner(v):
        return jnp.mean(jnp.clip(v, low, high))
    return jax.jit(inner)(x)

# %% cell 17 [repairs]
def _norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


scaled_norm = jax.jit(_norm)
smooth = jax.jit(_smooth_steps, static_argnums=(1,))


def _clipmean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))


clipped_mean = jax.jit(_clipmean)

# %% cell 18 [check_repairs]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
x = jnp.array([3.0, -4.0, 0.0], dtype=jnp.float32)
for scale in (2.0, -0.5):
    got, want = float(scaled_norm(x, scale)), float(scaled_norm_slow(x, scale))
    assert abs(got - want) < 1e-5 * abs(want) + 1e-6, f"scaled_norm(x, {scale}) = {got}, the original gives {want}"
pulse = jnp.array([0.0, 0.0, 9.0, 0.0, 0.0], dtype=jnp.float32)
for steps in (1, 2):
    got, want = np.asarray(smooth(pulse, steps)), np.asarray(smooth_slow(pulse, steps))
    assert got.shape == want.shape and np.allclose(got, want, atol=1e-5), f"smooth(pulse, {steps}) = {got}, expected {want}"
for low, high in ((-1.0, 1.0), (0.0, 5.0)):
    got, want = float(clipped_mean(x, low, high)), float(clipped_mean_slow(x, low, high))
    assert abs(got - want) < 1e-5, f"clipped_mean(x, {low}, {high}) = {got}, the original gives {want}"

# %% cell 20 [check_traces]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
v = jnp.linspace(-1.0, 1.0, 11, dtype=jnp.float32)
inputs = [(v + scale, scale) for scale in (0.5, 1.5, 3.0)]  # built before the block: eager work traces too
scaled_norm(v, 1.0), clipped_mean(v, -0.5, 0.5), smooth(v, 1)  # the first call at each signature may trace
with TraceWatch() as watch:
    for values, scale in inputs:
        scaled_norm(values, scale)
        clipped_mean(values, -scale, scale)
        smooth(values, 1)
assert watch.count == 0, f"calls at signatures already met traced again: {watch.names}"

# %% cell 23 [miss_cause]
def miss_cause(explanation):
    """The cause of one tracing-cache miss, from the explanation text JAX logged."""
    if "never seen function" in explanation:
        if "re-defined repeatedly" in explanation:
            return "redefined function"
        return "new function"
    if "unavailable" in explanation:
        return "new static value"
    if "types" in explanation:
        start = explanation.index("* at")
        line = explanation[start:].splitlines()[0].split("https")[0]
        now, before = line.split("now ")[1].split(" and before ")
        if now.split("[")[0] != before.split("[")[0]:
            return "new dtype"
        if now.split("]")[0] != before.split("]")[0]:
            return "new shape"
        return "weak type"
    if "pytree" in explanation:
        return "new structure"
    return "other"

# %% cell 24 [check_causes]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
_head = "TRACING CACHE MISS at demo.py:7:11 (caller):\n"
_key = "  for weigh defined at demo.py:2\n  all previously seen cache keys differ. For the closest previous key:\n"
_examples = {
    _head + "  never seen function:\n    <lambda> id=1 defined at demo.py:7": "new function",
    _head + "  never seen function:\n    <lambda> id=2 defined at demo.py:7\n  but seen another function defined on the "
    "same line; maybe the function is\n  being re-defined repeatedly, preventing caching?": "redefined function",
    _head + _key + "  different input types:\n  * at x, now f32[5] and before f32[3]": "new shape",
    _head + _key + "  different input types:\n  * at x, now i32[5] and before f32[5]": "new dtype",
    _head + _key + "  different input types:\n  * at s, now f32[]{weak_type=False} and before f32[]{weak_type=True}"
    "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types": "weak type",
    _head + _key + "  different input types:\n  * at s, now i32[]{weak_type=True} and before f32[]{weak_type=False}"
    "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types": "new dtype",
    _head + _key + "  cache miss explanation unavailable": "new static value",
    _head + _key + "  different input pytree:\n  * at input path [0], now tuple of length 1 and before tuple of length 2, "
    "so the lengths do not match": "new structure",
}
for text, cause in _examples.items():
    got = miss_cause(text)
    assert got == cause, f"miss_cause returned {got!r} for:\n{text}\nexpected {cause!r}"
# and on what JAX really logs here:
_live = explanations_during(lambda: [doubled_total(x) for _ in range(2)])
assert [miss_cause(t) for t in _live][-1] == "redefined function", [miss_cause(t) for t in _live]

# %% markdown 27 [pause_and_reason]
# No. Marking lr static does stop the fresh partial (the step is jitted once), but lr is data, not
# part of the program: every new lr value is a new cache key, so with a learning-rate schedule it
# still traces and compiles every time lr changes. Before either fix, jax_explain_cache_misses
# shows "never seen function" for step on every iteration, and from the second iteration on the
# remark that another function was defined on the same line (re-defined repeatedly). With lr
# static (jit built once at top level) the first call says "never seen function", and every new lr
# value then gives "cache miss explanation unavailable" (JAX 0.12 does not list static values); a
# constant lr gives nothing more. With lr an ordinary argument only the first call misses ("never
# seen function") and new lr values never miss, as long as lr keeps its type (always a Python
# float, say). I would pass lr as an ordinary argument: one trace and one compile for the whole
# training loop.
