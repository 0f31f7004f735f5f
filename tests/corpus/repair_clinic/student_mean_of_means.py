"""Masks the padded rows but averages the per-batch means, which weights the short last batch wrongly.

Written by an independent-student helper that saw only the release notebook (Parts C to E kept;
its Parts A and B, written for an earlier wording of them, replaced by the reference)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

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

FAILS = {'dataset_loss_values'}
SCORE = 9
TEACHER = {'test_scale': 2, 'test_step': 2, 'test_smooth': 2, 'test_dataset': 1, 'test_train': 2}

# %%
@jax.jit
def _tanh_scaled(x, scale):
    return jnp.tanh(x * scale)


def make_scaler(scale):
    return functools.partial(_tanh_scaled, scale=scale)


# %%
def scale_rows(x, scale):
    return make_scaler(scale)(x)


# %%
@functools.partial(jax.jit, static_argnames=("clip",))
def sgd_step(theta, x, y, lr, clip):
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient


# %%
@functools.partial(jax.jit, static_argnames=("n_steps",))
def smooth(x, n_steps):
    return jax.lax.fori_loop(0, n_steps, lambda i, v: 0.5 * (v + jnp.roll(v, 1)), x)


# %%
@jax.jit
def _batch_mean(theta, xb, yb, mask):
    return jnp.sum(mask * (xb @ theta - yb) ** 2) / jnp.sum(mask)


def dataset_loss(theta, x, y):
    n = x.shape[0]
    means = []
    for start in range(0, n, BATCH):
        rows = min(BATCH, n - start)
        xb = np.zeros((BATCH, 3), np.float32)
        yb = np.zeros(BATCH, np.float32)
        mask = np.zeros(BATCH, np.float32)
        xb[:rows], yb[:rows], mask[:rows] = x[start:start + rows], y[start:start + rows], 1
        means.append(_batch_mean(theta, xb, yb, mask))
    return sum(means) / len(means)


# %%
@jax.jit
def _train_step(theta, x, y, lr):
    value, grad = jax.value_and_grad(loss)(theta, x, y)
    return theta - lr * grad, value


def train(theta, batches, lr):
    losses = []
    for x, y in batches:
        theta, value = _train_step(theta, x, y, lr)
        losses.append(value)
    return theta, jnp.stack(losses)
