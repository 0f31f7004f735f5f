"""Every answer is the colleague's slow function under the new name: right values, none of the contracts."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

BATCH = 8


def loss(theta, x, y):
    return jnp.mean((x @ theta - y) ** 2)

FAILS = {"scalers_reuse_one_program", "sgd_step_values", "sgd_step_schedule_reuses_its_program", "smooth_program_is_flat", "dataset_loss_traces_nothing_new", "train_values", "train_reads_nothing"}
SCORE = 3
MESSAGE = r"traced again"


# %%
def make_scaler(scale):
    return jax.jit(lambda v: jnp.tanh(v * scale))


# %%
def scale_rows(x, scale):
    return make_scaler(scale)(x)


# %%
@functools.partial(jax.jit, static_argnames=("lr", "clip"))
def sgd_step(theta, x, y, lr, clip):
    gradient = jax.grad(loss)(theta, x, y)
    if clip:
        gradient = gradient / jnp.maximum(1.0, jnp.linalg.norm(gradient))
    return theta - lr * gradient


# %%
@functools.partial(jax.jit, static_argnames=("n_steps",))
def smooth(x, n_steps):
    for _ in range(n_steps):
        x = 0.5 * (x + jnp.roll(x, 1))
    return x


# %%
@jax.jit
def _batch_squared_error(theta, xb, yb):
    return jnp.sum((xb @ theta - yb) ** 2)


def dataset_loss(theta, x, y):
    total = 0.0
    for start in range(0, x.shape[0], BATCH):
        total = total + _batch_squared_error(theta, x[start:start + BATCH], y[start:start + BATCH])
    return total / x.shape[0]


# %%
@jax.jit
def _step(theta, x, y, lr):
    return theta - lr * jax.grad(loss)(theta, x, y)


def train(theta, batches, lr):
    losses = []
    for x, y in batches:
        losses.append(float(loss(theta, x, y)))
        theta = _step(theta, x, y, lr)
    return theta, losses
