"""Part E takes a *Compiling* message for a trace: any compile message says "traces", so a loop
that only compiles a program traced before (a committed θ, a call after `.trace`) is called a tracing loop."""
import jax
import jax.numpy as jnp

FAILS = {"diagnose_hears_waiting", "diagnose_tells_traces_from_compiles"}
SCORE = 10
MESSAGE = r"A compile is not a trace"


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


EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "traces", "/jax/core/compile/backend_compile_duration": "compiles"}


def phase_row(label, thunk):
    counts = {"traces": 0, "compiles": 0}

    def listen(event, duration, **details):
        if event in EVENTS:
            counts[EVENTS[event]] += 1

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        thunk()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    return {"label": label, "traced": counts["traces"] > 0, "compiled": counts["compiles"] > 0, **counts}


import logging


def _log_of(loop):
    messages = []

    class Keep(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    jax_logger = logging.getLogger("jax")
    keep, propagate = Keep(), jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False
    try:
        with jax.log_compiles(True):
            loop()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    return messages


def diagnose(loop):
    messages = _log_of(loop)
    if any(m.startswith(("Finished tracing", "Compiling")) for m in messages):
        return "traces"
    return "waits"
