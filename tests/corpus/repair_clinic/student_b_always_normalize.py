"""Traced the rate but, with clip on, divided the gradient by its norm unconditionally, which scales small gradients up to norm 1.

Written by an independent-student helper that saw only the release notebook."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

BATCH = 8


def loss(theta, x, y):
    return jnp.mean((x @ theta - y) ** 2)

FAILS = {'sgd_step_values'}
SCORE = 9
TEACHER = {'test_scale': 2, 'test_step': 1, 'test_smooth': 2, 'test_dataset': 2, 'test_train': 2}


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
        gradient = gradient / jnp.linalg.norm(gradient)
    return theta - lr * gradient


# %%
@jax.jit
def smooth(x, n_steps):
    return jax.lax.fori_loop(0, n_steps, lambda i, v: 0.5 * (v + jnp.roll(v, 1)), x)


# %%
@jax.jit
def _masked_squared_error(theta, xb, yb, real):
    residual = xb @ theta - yb
    return jnp.sum(jnp.where(real, residual ** 2, 0.0))


def dataset_loss(theta, x, y):
    x, y = np.asarray(x), np.asarray(y)
    total = 0.0
    for start in range(0, x.shape[0], BATCH):
        xb, yb = x[start:start + BATCH], y[start:start + BATCH]
        rows = xb.shape[0]
        real = np.arange(BATCH) < rows
        xb = np.pad(xb, ((0, BATCH - rows), (0, 0)))
        yb = np.pad(yb, (0, BATCH - rows))
        total = total + _masked_squared_error(theta, xb, yb, real)
    return total / x.shape[0]


# %%
@jax.jit
def train(theta, batches, lr):
    losses = []
    for x, y in batches:
        losses.append(loss(theta, x, y))
        theta = theta - lr * jax.grad(loss)(theta, x, y)
    return theta, jnp.stack(losses)
