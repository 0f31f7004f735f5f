"""The last batch padded with zeros, the padded rows counted in the mean."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

BATCH = 8


def loss(theta, x, y):
    return jnp.mean((x @ theta - y) ** 2)

FAILS = {"dataset_loss_values"}
SCORE = 9
MESSAGE = r"mean squared error over the"


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
@jax.jit
def smooth(x, n_steps):
    return jax.lax.fori_loop(0, n_steps, lambda i, v: 0.5 * (v + jnp.roll(v, 1)), x)


# %%
@jax.jit
def _batch_sum(theta, xb, yb):
    return jnp.sum((xb @ theta - yb) ** 2)


def dataset_loss(theta, x, y):
    x, y = np.asarray(x), np.asarray(y)
    rows = x.shape[0]
    padded = -(-rows // BATCH) * BATCH
    x = np.pad(x, ((0, padded - rows), (0, 0)))
    y = np.pad(y, (0, padded - rows))
    total = 0.0
    for start in range(0, padded, BATCH):
        total = total + _batch_sum(theta, x[start:start + BATCH], y[start:start + BATCH])
    return total / padded


# %%
@jax.jit
def train(theta, batches, lr):
    losses = []
    for x, y in batches:
        losses.append(loss(theta, x, y))
        theta = theta - lr * jax.grad(loss)(theta, x, y)
    return theta, jnp.stack(losses)
