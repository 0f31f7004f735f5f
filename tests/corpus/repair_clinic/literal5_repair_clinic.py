"""The fifth literal student (docs/literal-student.md, 2026-12-07, after seven parts were reworded to
state their contract and no cure): it saw only release/, passed every self-check on its first run and
earns every automatic point. Part B: `lr` taken out of `static_argnames` (the contract and the paragraph on cache keys); C: `lax.fori_loop`
from another notebook of the course."""

FAILS = set()
SCORE = 10


# %% cell 1
import functools

import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace events, and JAX's error messages may differ from what the text describes.")

# %% cell 3
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

# %% cell 5
@jax.jit
def cube_sum(v):
    return jnp.sum(v ** 3)


v3 = jnp.arange(3.0)
with TraceWatch() as watch:
    cube_sum(v3)
    cube_sum(v3 + 1.0)
print(watch.count, watch.names)  # the addition building the second input traced too: build inputs first
with TraceWatch() as watch:
    cube_sum(v3 * 2.0)
print(watch.count, watch.names)
print(count_equations(jax.make_jaxpr(cube_sum)(v3)))

# %% cell 7
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

# %% cell 9
rng = np.random.default_rng(0)
theta0 = jnp.array([0.5, -1.0, 2.0], dtype=jnp.float32)
x_demo = rng.normal(size=(21, 3)).astype(np.float32)
y_demo = rng.normal(size=21).astype(np.float32)
batches_demo = [(jnp.asarray(x_demo[i:i + BATCH]), jnp.asarray(y_demo[i:i + BATCH])) for i in (0, 8)]
print(scale_rows_slow(jnp.arange(3.0), 2.0), sgd_step_slow(theta0, x_demo[:8], y_demo[:8], 0.1, True))
print(smooth_slow(jnp.array([4.0, 0.0, 0.0, 0.0]), 2), dataset_loss_slow(theta0, x_demo, y_demo))
print(train_slow(theta0, batches_demo, 0.1))

# %% cell 11
_scale_tanh = jax.jit(lambda v, s: jnp.tanh(v * s))  # built once, at top level


def make_scaler(scale):
    """A function of x: tanh(x * scale); the scale is passed to one long-lived jitted function."""
    return functools.partial(_scale_tanh, s=scale)

# %% cell 12
def scale_rows(x, scale):
    """How the script uses your scalers: one per scale, called on x."""
    return make_scaler(scale)(x)

# %% cell 16
@functools.partial(jax.jit, static_argnames=("clip",))
def sgd_step(theta, x, y, lr, clip):
    """One gradient step on the loss; with clip=True the gradient is first scaled down to a norm of at most 1."""
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient

# %% cell 20
def _smooth_body(i, x):
    return 0.5 * (x + jnp.roll(x, 1))


def smooth(x, n_steps):
    """n_steps times: every element becomes the mean of itself and its left neighbour (wrapping around)."""
    return jax.lax.fori_loop(0, n_steps, _smooth_body, x)

# %% cell 24
def dataset_loss(theta, x, y):
    """The loss over a whole dataset (NumPy arrays from the loader), summed batch by batch."""
    n = x.shape[0]
    padded = -(-n // BATCH) * BATCH
    x_pad = np.zeros((padded, x.shape[1]), dtype=np.float32)
    y_pad = np.zeros((padded,), dtype=np.float32)
    x_pad[:n] = x
    y_pad[:n] = y  # zero rows add (0 @ theta - 0) ** 2 = 0 to the sum
    total = 0.0
    for start in range(0, padded, BATCH):
        total = total + _batch_squared_error(theta, x_pad[start:start + BATCH], y_pad[start:start + BATCH])
    return total / n

# %% cell 28
def train(theta, batches, lr):
    """One step per batch; the loss at each batch, before its step, kept on the device."""
    losses = []
    for x, y in batches:
        losses.append(loss(theta, x, y))
        theta = _step(theta, x, y, lr)
    return theta, jnp.stack(losses)
