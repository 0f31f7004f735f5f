"""A literal reading (colleague's code first, then only what each self-check's words asked) repaired Parts A, B, D and E, and left Part C as the colleague's unrolled loop because neither the notebook nor its hint shows a loop whose program does not grow with n_steps.

The literal student of docs/literal-student.md (2026-12-07): it saw only release/, started from the colleague's
code and changed only what each self-check's printed words asked. It answered the questions of Parts A, B, D and
E from the notebook's own definitions (a cache keyed on the function and the signature; zero rows add nothing to
a squared error); Part C, where the notebook shows no staged loop, it left as the unrolled one."""


# %%
# Provided by the notebook (cell `imports`, and the parts of cell `slow_script` the answers use).
import functools

import jax
import jax.numpy as jnp
import numpy as np

BATCH = 8


def loss(theta, x, y):
    """Mean squared error of the linear model x @ theta against y."""
    return jnp.mean((x @ theta - y) ** 2)


@jax.jit
def _batch_squared_error(theta, xb, yb):
    return jnp.sum((xb @ theta - yb) ** 2)


@jax.jit
def _step(theta, x, y, lr):
    return theta - lr * jax.grad(loss)(theta, x, y)



FAILS = {"smooth_program_is_flat"}
SCORE = 9
MESSAGE = r"grows with the step count"

# %%
# Part A: make_scaler
@jax.jit
def _scaled_tanh(v, scale):
    """tanh(v * scale), element by element: one function for every scale, the scale an argument."""
    return jnp.tanh(v * scale)


def make_scaler(scale):
    """A function of x: tanh(x * scale), element by element. Every scaler calls the same compiled function."""
    return lambda x: _scaled_tanh(x, scale)


# %%
# Provided by the notebook (cell `scale_rows`).
def scale_rows(x, scale):
    """How the script uses your scalers: one per scale, called on x."""
    return make_scaler(scale)(x)


# %%
# Part B: sgd_step
@functools.partial(jax.jit, static_argnames=("clip",))
def sgd_step(theta, x, y, lr, clip):
    """One gradient step on the loss; with clip=True the gradient is first scaled down to a norm of at most 1."""
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient


# %%
# Part C: smooth (the colleague's code, unchanged: its self-check still fails, see ACCOUNT.md)
@functools.partial(jax.jit, static_argnames=("n_steps",))
def smooth(x, n_steps):
    """n_steps times: every element becomes the mean of itself and its left neighbour (wrapping around)."""
    for _ in range(n_steps):
        x = 0.5 * (x + jnp.roll(x, 1))
    return x


# %%
# Part D: dataset_loss
def dataset_loss(theta, x, y):
    """The loss over a whole dataset (NumPy arrays from the loader), summed batch by batch.

    Every batch is given BATCH rows, so no call meets a new shape: the last, short batch is filled
    up with rows of zeros, whose squared error (0 @ theta - 0) ** 2 is 0 and adds nothing."""
    total = 0.0
    for start in range(0, x.shape[0], BATCH):
        xb = np.zeros((BATCH, x.shape[1]), dtype=x.dtype)
        yb = np.zeros((BATCH,), dtype=y.dtype)
        rows = min(BATCH, x.shape[0] - start)
        xb[:rows] = x[start:start + rows]
        yb[:rows] = y[start:start + rows]
        total = total + _batch_squared_error(theta, xb, yb)
    return total / x.shape[0]


# %%
# Part E: train
def train(theta, batches, lr):
    """One step per batch; the loss at each batch, before its step, as one 1-D array in batch order.

    The losses are kept as JAX arrays (no float()), so nothing here needs their numbers."""
    losses = []
    for x, y in batches:
        losses.append(loss(theta, x, y))
        theta = _step(theta, x, y, lr)
    return theta, jnp.array(losses)
