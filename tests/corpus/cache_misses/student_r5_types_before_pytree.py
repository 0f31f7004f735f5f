"""Student "types_before_pytree" (Part A correct, Part B mistake). Part A: packs the changing numbers
into a dict pytree of parameters (`{"scale": scale}`, `{"low": low, "high": high}`) handed to
module-level jitted functions -- the leaves are traced, the keys are fixed, so the structure never
changes and nothing retraces; `steps` is static. Part B: tries to be general: if the text contains
"now <type> and before <type>" anywhere, compares those types first, and only falls back to the
headers otherwise. But a *different input pytree* line can also read `now f32[3] and before i32[5]`
(a leaf where there was another leaf of another kind), and the table says pytree -> "new
structure" whatever its lines say; this student answers "new dtype". Caught by the self-check.
"""

TEACHER = {'test_repairs': 3, 'test_traces': 2, 'test_causes': 1}

WHY = {'test_causes': "it parses 'now T and before T' types before looking at the header, so a 'different input "
                "pytree' explanation whose line shows types is named by dtype/shape instead of 'new "
                "structure'."}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 7
REVIEW = "The teacher judged by the self-check's pytree example, which was made up (JAX writes Python types on a pytree line, never now f32[3] and before i32[5]; the example is now one JAX wrote): on every explanation JAX really gives, this miss_cause is right."


# %% cell 1
import functools

import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "The wording of the cache-miss explanations (`jax_explain_cache_misses`) that this notebook reads may differ from what the text shows, and so may trace and compile counts.")


# %% cell 3
class TraceWatch:
    """Collect the names of the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace (a jitted
    function traced inside another trace emits none). The
    event is not proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, emits it again while JAX reuses the jaxpr it kept. Eager operations emit one too (JAX runs each as a small jitted function of its
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


# %% cell 6
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


# %% cell 8
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


# %% cell 10
total_times = jax.jit(lambda v, factor: jnp.sum(factor * v))  # built once, at top level


def doubled_total_fixed(x):
    return total_times(x, 2.0)


texts = explanations_during(lambda: [doubled_total_fixed(x) for _ in range(3)])
print(len(texts), "explanation(s):")
for text in texts:
    print(text, end="\n\n")


# %% cell 12
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


# %% cell 15
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


# %% cell 17
@jax.jit
def _norm_p(x, p):
    return jnp.sqrt(jnp.sum((p["scale"] * x) ** 2))


@jax.jit
def _clip_p(x, p):
    return jnp.mean(jnp.clip(x, p["low"], p["high"]))


_smooth_p = jax.jit(_smooth_steps, static_argnames="steps")


def scaled_norm(x, scale):
    return _norm_p(x, {"scale": scale})


def smooth(x, steps):
    return _smooth_p(x, steps=steps)


def clipped_mean(x, low, high):
    return _clip_p(x, {"low": low, "high": high})


# %% cell 23
import re

_PAIR = re.compile(r"now ([a-z]+\d*)\[([^\]]*)\]\S* and before ([a-z]+\d*)\[([^\]]*)\]")


def miss_cause(explanation):
    """The cause of one tracing-cache miss, from the explanation text JAX logged."""
    m = _PAIR.search(explanation)          # the first "now T and before T" in the text
    if m:
        if m.group(1) != m.group(3):
            return "new dtype"
        if m.group(2) != m.group(4):
            return "new shape"
        return "weak type"
    if "never seen function" in explanation:
        if "re-defined repeatedly" in explanation:
            return "redefined function"
        return "new function"
    if "pytree" in explanation:
        return "new structure"
    return "new static value"
