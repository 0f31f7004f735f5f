"""The fourth literal student (docs/literal-student.md, 2026-12-07): it saw only release/ (after the
hints of Parts A and B became questions), passed every self-check on its first run and earns every
automatic point. It put the colleague's body under one top-level jit and handed out a
`functools.partial` per scale (A), took `lr` out of `static_argnames` (B), chose `lax.fori_loop` with
`n_steps` still static (C; the notebook names no staged loop: the helper said it knew the API), padded
the last batch with zero rows in NumPy (D), and stacked the losses without `float` (E).
By issue 52's rule none of the five parts is shown to be a decision."""

FAILS = set()
SCORE = 10
MESSAGE = r""


# %% cell 1 [imports]
import functools

import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace events, and JAX's error messages may differ from what the text describes.")


# %% cell 3 [tools]
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, named after the
    function traced (a jitted function traced inside another trace emits none). Eager
    operations emit one as well, because JAX runs each as a small jitted function of its
    own (``multiply``, ``_reduce_sum``, ``_pad``...), but only the first time an operation
    meets a signature: a repeat at a signature already met emits nothing. So build inputs
    before the block, call only the function you are studying inside it, and read ``names``.
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


def count_equations(closed_jaxpr):
    """Every equation of a jaxpr (what ``jax.make_jaxpr(f)(*args)`` returns), counting those
    inside the jaxprs its equations hold (a jitted call, a loop's body, a branch)."""
    total = 0
    pending = [closed_jaxpr.jaxpr]
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


# %% cell 7 [slow_script]
BATCH = 8


def loss(theta, x, y):
    """Mean squared error of the linear model x @ theta against y."""
    return jnp.mean((x @ theta - y) ** 2)


def make_scaler_slow(scale):
    """A compiled function of x: tanh(x * scale), element by element. The script makes one per scale."""
    return jax.jit(lambda v: jnp.tanh(v * scale))


def scale_rows_slow(x, scale):
    return make_scaler_slow(scale)(x)


@functools.partial(jax.jit, static_argnames=("lr", "clip"))
def sgd_step_slow(theta, x, y, lr, clip):
    """One gradient step on the loss; with clip=True the gradient is first scaled down to a norm of at most 1."""
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient


@functools.partial(jax.jit, static_argnames=("n_steps",))
def smooth_slow(x, n_steps):
    """n_steps times: every element becomes the mean of itself and its left neighbour (wrapping around)."""
    for _ in range(n_steps):
        x = 0.5 * (x + jnp.roll(x, 1))
    return x


@jax.jit
def _batch_squared_error(theta, xb, yb):
    return jnp.sum((xb @ theta - yb) ** 2)


def dataset_loss_slow(theta, x, y):
    """The loss over a whole dataset (NumPy arrays from the loader), summed batch by batch."""
    total = 0.0
    for start in range(0, x.shape[0], BATCH):
        total = total + _batch_squared_error(theta, x[start:start + BATCH], y[start:start + BATCH])
    return total / x.shape[0]


@jax.jit
def _step(theta, x, y, lr):
    return theta - lr * jax.grad(loss)(theta, x, y)


def train_slow(theta, batches, lr):
    """One step per batch; the loss at each batch, before its step, in a list."""
    losses = []
    for x, y in batches:
        losses.append(float(loss(theta, x, y)))
        theta = _step(theta, x, y, lr)
    return theta, losses


# %% cell 11 [make_scaler]
@jax.jit
def _scale(v, scale):
    return jnp.tanh(v * scale)


def make_scaler(scale):
    """A function of x: tanh(x * scale). One jitted function for every scale; the scale is an argument."""
    return functools.partial(_scale, scale=scale)


# %% cell 12 [scale_rows]
def scale_rows(x, scale):
    """How the script uses your scalers: one per scale, called on x."""
    return make_scaler(scale)(x)


# %% cell 16 [sgd_step]
@functools.partial(jax.jit, static_argnames=("clip",))
def sgd_step(theta, x, y, lr, clip):
    """One gradient step on the loss; with clip=True the gradient is first scaled down to a norm of at most 1."""
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient


# %% cell 20 [smooth]
@functools.partial(jax.jit, static_argnames=("n_steps",))
def smooth(x, n_steps):
    """n_steps times: every element becomes the mean of itself and its left neighbour (wrapping around)."""
    def body(i, x):
        return 0.5 * (x + jnp.roll(x, 1))
    return jax.lax.fori_loop(0, n_steps, body, x)


# %% cell 24 [dataset_loss]
def dataset_loss(theta, x, y):
    """The loss over a whole dataset, summed batch by batch; every batch has BATCH rows (the last one padded with zero rows)."""
    total = 0.0
    for start in range(0, x.shape[0], BATCH):
        xb = x[start:start + BATCH]
        yb = y[start:start + BATCH]
        missing = BATCH - xb.shape[0]
        if missing:
            xb = np.pad(xb, ((0, missing), (0, 0)))
            yb = np.pad(yb, (0, missing))
        total = total + _batch_squared_error(theta, xb, yb)
    return total / x.shape[0]


# %% cell 28 [train]
def train(theta, batches, lr):
    """One step per batch; the loss at each batch, before its step, as one 1-D array."""
    losses = []
    for x, y in batches:
        losses.append(loss(theta, x, y))
        theta = _step(theta, x, y, lr)
    return theta, jnp.stack(losses)
