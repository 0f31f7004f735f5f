r"""Priya Raman: WRONG. miss_cause finds the first line matching `* at (\w+), now ...`. An indexed path such as `t[0]` does not match `\w+`, so the regex skips it and reads a later argument (or, with none, answers 'new structure'): missing the indexed path form."""

# Teacher's split per graded cell:
#   test_repairs (3): 1 point per function (scaled_norm, smooth, clipped_mean) whose results match the slow
#                     original for every input the table allows (any shape of x), compiled and under disable_jit.
#   test_traces  (2): 1 point: data (scale, low, high) never traces again, whatever the shape of x;
#                     1 point: a signature already met never traces again, a new `steps` at most once.
#   test_causes  (2): 1 point: the input-type causes (new dtype / new shape / weak type) read from the FIRST
#                     listed line, on every form JAX really prints (indexed paths, several lines, trailing link);
#                     1 point: the function causes and the pytree causes (new/redefined function, static/structure).

TEACHER = {'test_repairs': 3, 'test_traces': 2, 'test_causes': 1}
WHY = {'test_causes': 'indexed argument paths (t[0]) are skipped: reads the wrong line or returns new structure'}


# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'names_argument_misses'}
SCORE = 6

# %% cell 1 [imports]
import functools

import jax
import jax.numpy as jnp
import numpy as np

# %% cell 3 [trace_watch]
class TraceWatch:
    """Collect the names of the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a jaxpr.
    Eager operations emit one too (JAX runs each as a small jitted function of its
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

# %% cell 6 [given]
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

# %% cell 8 [given]
total_times = jax.jit(lambda v, factor: jnp.sum(factor * v))  # built once, at top level


def doubled_total_fixed(x):
    return total_times(x, 2.0)


texts = explanations_during(lambda: [doubled_total_fixed(x) for _ in range(3)])
print(len(texts), "explanation(s):")
for text in texts:
    print(text, end="\n\n")

# %% cell 10 [given]
@functools.partial(jax.jit, static_argnames=("k",))
def weigh(x, s, k=1):
    return jnp.sum(x * s) * k


def steps():
    weigh(jnp.ones(3), 2.0, k=1)                      # first call
    weigh(jnp.ones(3, dtype=jnp.int32), 2.0, k=1)     # a new dtype
    weigh(jnp.ones(5), 2.0, k=1)                      # a new shape
    weigh(jnp.ones(5), jnp.float32(2.0), k=1)         # s: a float32 array after a Python float
    weigh(jnp.ones(5), 2.0, k=2)                      # a new static value
    weigh(jnp.ones(5), s=2.0, k=2)                    # s passed by keyword


for text in explanations_during(steps):
    print(text, end="\n\n")

# %% cell 13 [slow_functions]
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

# %% cell 15 [repairs]
@jax.jit
def _scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


@functools.partial(jax.jit, static_argnames=("steps",))
def _smooth(x, steps):
    return _smooth_steps(x, steps)


@jax.jit
def _clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))


def scaled_norm(x, scale):
    return _scaled_norm(x, scale)


def smooth(x, steps):
    return _smooth(x, steps=steps)  # steps decides how far the loop unrolls: static


def clipped_mean(x, low, high):
    return _clipped_mean(x, low, high)

# %% cell 16 [check_repairs]
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

# %% cell 18 [check_traces]
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

# %% cell 21 [miss_cause]
import re

_DIFF = re.compile(r"\* at (\w+), now (\w+)\[([^\]]*)\]\S* and before (\w+)\[([^\]]*)\]")


def miss_cause(explanation):
    """The cause of one tracing-cache miss, from the explanation text JAX logged."""
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    text = " ".join(explanation.split())
    if "never seen function" in text:
        return "redefined function" if "re-defined repeatedly" in text else "new function"
    if "different input pytree" in text:
        first = re.search(r"\* at input path (.*)", explanation).group(1)
        return "new static value" if "Static(" in first else "new structure"
    m = _DIFF.search(explanation)  # the first argument listed
    if m is None:
        return "new structure"
    _, dt_now, sh_now, dt_before, sh_before = m.groups()
    if dt_now != dt_before:
        return "new dtype"
    if sh_now != sh_before:
        return "new shape"
    return "weak type"

# %% cell 22 [check_causes]
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
    "https://docs.jax.dev/en/latest/type_promotion.html#weak-types": "weak type",
    _head + _key + "  different input types:\n  * at s, now i32[]{weak_type=True} and before f32[]{weak_type=False}"
    "https://docs.jax.dev/en/latest/type_promotion.html#weak-types": "new dtype",
    _head + _key + "  different input pytree:\n  * at input path [1]['k'], now <class 'jax._src.tree_util.Static'> with "
    "pytree metadata Static(val=2) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=1), "
    "so the pytree node metadata does not match": "new static value",
    _head + _key + "  different input pytree:\n  * at input path [0], now tuple of length 1 and before tuple of length 2, "
    "so the lengths do not match": "new structure",
}
for text, cause in _examples.items():
    got = miss_cause(text)
    assert got == cause, f"miss_cause returned {got!r} for:\n{text}\nexpected {cause!r}"
# and on what JAX really logs here:
_live = explanations_during(lambda: [doubled_total(x) for _ in range(2)])
assert [miss_cause(t) for t in _live][-1] == "redefined function", [miss_cause(t) for t in _live]
