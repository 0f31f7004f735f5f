"""Listens for trace events only and copies `traced` into `compiled`: tracing is taken for compiling."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'ledger_compiled_column'}
SCORE = 11
MESSAGE = r"compiled=False, compiles=0"


@jax.jit
def sgd_step(theta, x, y, lr):
    residual = x @ theta - y
    loss = jnp.mean(residual ** 2)
    gradient = (2.0 / x.shape[0]) * (x.T @ residual)
    return theta - lr * gradient, loss


def train_reading_every_step(theta, batches, lr, read):
    losses = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        losses.append(read(loss))
    return theta, losses


def train_reading_once(theta, batches, lr, read):
    device_losses = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        device_losses.append(loss)
    return theta, read(jnp.stack(device_losses)).tolist()


def phase_row(label, thunk):
    names = []

    def listen(event, duration, **details):
        if event == "/jax/core/compile/jaxpr_trace_duration":
            names.append(details.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        thunk()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    traced = len(names) > 0
    return {"label": label, "traced": traced, "compiled": traced, "traces": len(names), "compiles": len(names)}


# %% Part E, answered as the reference does (the same in every file that is not about Part E)
import logging as _logging


def diagnose(loop):
    messages = []

    class _Keep(_logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    jax_logger = _logging.getLogger("jax")
    keep, propagate = _Keep(), jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False
    try:
        with jax.log_compiles(True):
            loop()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    if any(message.startswith("Finished tracing") for message in messages):
        return "traces"
    if any(message.startswith("Finished XLA compilation") for message in messages):
        return "compiles"
    return "waits"
