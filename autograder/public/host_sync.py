"""Public checks of host_sync: one SGD step, the two trainers' reads, a dynamic lr, the ledger, diagnose."""

import jax
import jax.numpy as jnp
import numpy as np

from autograder.public.runner import PARTS, Mismatch, TraceCount, close, public, show

ASSIGNMENT = "host_sync"
PARTS.update({"step": ("`sgd_step`", "Part A"),
              "reads": ("`train_reading_every_step` and `train_reading_once`", "Part B")})


def _step(theta, x, y, lr):
    """The notebook's step in NumPy: the loss before the update, the gradient of the batch mean."""
    theta, x, y = (np.asarray(a, dtype=np.float64) for a in (theta, x, y))
    residual = x @ theta - y
    return theta - lr * (2.0 / len(y)) * (x.T @ residual), float(np.mean(residual ** 2))


@public("step", "`sgd_step` returns the updated theta and the loss before the update, as a device scalar",
        "Compare Got and Expected: is the loss the one before the update, is it a device value, and does "
        "theta move against the gradient by `lr`? (Part A)")
def step(names, rng):
    cases = [(np.zeros(2), np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 0.0]), 0.5),
             (np.array([0.5, 0.0]), np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 0.0]), 0.5)]
    cases += [(rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 4), 0.1)]
    for theta, x, y, lr in cases:
        def run(theta=theta, x=x, y=y, lr=lr):
            args = [jnp.asarray(a, dtype=jnp.float32) for a in (theta, x, y)]
            new_theta, loss = names.function("sgd_step")(*args, lr)
            want_theta, want_loss = _step(theta, x, y, lr)
            if not isinstance(loss, jax.Array) or loss.shape != ():
                raise Mismatch("The loss should stay on the device, as a 0-d jax.Array.", show(loss), "float32[]")
            if not close(loss, want_loss):
                raise Mismatch("The loss is not the mean squared error before the update.", show(loss), repr(want_loss))
            if not close(new_theta, want_theta, products=True):
                raise Mismatch("The updated theta is not one gradient step.", show(new_theta),
                               show(want_theta.astype(np.float32)))

        yield f"sgd_step({', '.join(show(np.asarray(a, dtype=np.float32)) for a in (theta, x, y))}, {lr})", run


@public("step", "`sgd_step` is jitted: one call of it is one jitted program, nothing outside it",
        "Part of one step ran outside one jitted program: which of your step's operations run eagerly, one at "
        "a time? (A timing boundary)")
def jitted(names, rng):
    def run():
        sgd_step = names.function("sgd_step")
        theta, x, y = jnp.zeros(3), jnp.ones((4, 3)), jnp.ones(4)
        staged = jax.make_jaxpr(lambda t, a, b: sgd_step(t, a, b, 0.1))(theta, x, y)
        kinds = [eqn.primitive.name for eqn in staged.jaxpr.eqns]
        programs = [k for k in kinds if k in ("jit", "pjit")]
        outside = [k for k in kinds if k not in ("jit", "pjit", "convert_element_type")]
        if not programs:
            raise Mismatch("`sgd_step` is not jitted: each of its operations runs on its own.",
                           f"operations {kinds}", "one jit equation")
        if outside or len(programs) > 1:
            raise Mismatch("`sgd_step` is not one jitted program: part of it runs outside its jit, or it makes "
                           "several jitted calls.", f"operations {kinds}", "one jit equation, nothing outside it")

    yield "jax.make_jaxpr(lambda t, x, y: sgd_step(t, x, y, 0.1))(float32[3], float32[4, 3], float32[4])", run


class _CountingRead:
    """The notebook's `CountingRead`: a host value (float for a scalar) and a count of the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, value):
        self.calls += 1
        host = np.asarray(value)
        return float(host) if host.ndim == 0 else host


def _batches(seed, steps=5):
    draw = np.random.default_rng(seed).uniform
    return [(draw(-1, 1, (4, 3)).astype(np.float32), draw(-1, 1, 4).astype(np.float32)) for _ in range(steps)]


@public("reads", "both trainers give the same losses, a list of floats, reading once a step and once in all",
        "How often did each trainer call `read`, and with what? What does Part B allow each trainer to read, "
        "and when? (Part B)",
        uses=("step",))
def reads(names, rng):
    for steps in (1, 5):
        def run(steps=steps):
            batches = _batches(0, steps)
            every, once = _CountingRead(), _CountingRead()
            theta_a, losses_a = names.function("train_reading_every_step")(jnp.zeros(3), batches, 0.1, every)
            theta_b, losses_b = names.function("train_reading_once")(jnp.zeros(3), batches, 0.1, once)
            for label, losses in (("train_reading_every_step", losses_a), ("train_reading_once", losses_b)):
                if not (isinstance(losses, list) and len(losses) == steps and all(type(v) is float for v in losses)):
                    raise Mismatch(f"`{label}` should return a list of {steps} Python floats.", show(losses))
            if every.calls != steps:
                raise Mismatch("`train_reading_every_step` should read once a step.", f"{every.calls} reads",
                               f"{steps} reads")
            if once.calls != 1:
                raise Mismatch("`train_reading_once` should read once in all.", f"{once.calls} reads", "1 read")
            if not (close(losses_a, losses_b, products=True) and close(theta_a, theta_b, products=True)):
                raise Mismatch("The trainers disagree.", show(losses_b), show(losses_a))
            if not close(losses_a[0], float(np.mean(batches[0][1].astype(np.float64) ** 2))):
                raise Mismatch("The first loss should be the loss at theta = 0.", repr(losses_a[0]))

        yield f"both trainers from theta = zeros(3), lr 0.1, {steps} batch(es) of float32[4, 3] and float32[4]", run


def _placeholder_read(value):
    """`read` in a run where the values are not known yet: zeros of the value's shape."""
    if isinstance(value, (list, tuple)):
        return np.zeros(len(value), np.float32)
    return 0.0 if np.shape(value) == () else np.zeros(np.shape(value), np.float32)


#: Conversions a tracer does not refuse, in the words of the notebook's list of hidden waits.
_WAITS = {"__format__": "an f-string or `format`", "__str__": "`print`/`str`", "__repr__": "`print`/`repr`",
          "__array__": "`jax.device_get`/`np.asarray`", "block_until_ready": "`.block_until_ready()`"}


class _Waits:
    """Inside ``with``: the conversions of a device array the trainer makes outside the `read` handed to it."""

    def __init__(self):
        self.seen, self.depth, self.saved = [], 0, {}

    def read(self, value):
        self.depth += 1
        try:
            return _CountingRead()(jnp.stack(value) if isinstance(value, (list, tuple)) else value)
        finally:
            self.depth -= 1

    def __enter__(self):
        try:
            from jax._src.array import ArrayImpl
        except ImportError:  # another JAX: the traced run alone watches
            return self
        self.cls = ArrayImpl
        for method in _WAITS:
            original = ArrayImpl.__dict__.get(method)
            if original is None:
                continue
            self.saved[method] = original

            def watched(*args, _method=method, _original=original, **kwargs):
                if self.depth == 0:
                    self.seen.append(_method)
                self.depth += 1
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.depth -= 1

            setattr(ArrayImpl, method, watched)
        return self

    def __exit__(self, *exc_info):
        for method, original in self.saved.items():
            setattr(self.cls, method, original)
        return False


@public("reads", "the trainers bring nothing to Python outside `read`: no `float`, `print`, f-string, "
        "`np.asarray`, `.item()`, `.tolist()`, `if` or `.block_until_ready()` on a device value",
        "The problem line names the conversion found: where in your loop does a device value become a Python "
        "value, and does the loop need it there? (The idea)",
        uses=("step",))
def hidden_waits(names, rng):
    for label in ("train_reading_every_step", "train_reading_once"):
        def traced(label=label):
            batches = _batches(2, 3)
            trainer = names.function(label)
            try:
                jax.make_jaxpr(lambda theta: trainer(theta, batches, 0.1, _placeholder_read)[0])(jnp.zeros(3))
            except Exception as error:
                message = " ".join(str(error).split())[:160]
                raise Mismatch(f"`{label}` needs a value computed in the loop as a Python value outside `read`: "
                               "a hidden wait for the device.", f"{type(error).__name__}: {message}",
                               "only `read` converts") from None

        def watched(label=label):
            batches = _batches(3, 3)
            with _Waits() as waits:
                names.function(label)(jnp.zeros(3), batches, 0.1, waits.read)
            if waits.seen:
                spoken = sorted({_WAITS[m] for m in waits.seen})
                raise Mismatch(f"`{label}` converts or waits for a device value outside `read`: a hidden wait.",
                               f"{len(waits.seen)} time(s): {', '.join(spoken)}", "none")

        where = "θ traced (no value known), so converting a loss or θ in the loop stops it"
        yield f"{label}(zeros(3), 3 batches, 0.1, read) run with {where}", traced
        yield f"{label}(zeros(3), 3 batches, 0.1, read), watching print, f-strings, device_get and blocking", watched


_EAGER = ("stack", "concatenate", "broadcast_in_dim", "expand_dims")


@public("traces", "new data and a new learning rate reuse `sgd_step`'s program, in the step and the trainers",
        "Something traced again for new data or a new learning rate: what did JAX see as new, the signature "
        "or the function itself? (Part C)",
        uses=("step", "reads"))
def traces(names, rng):
    def run():
        batches = _batches(1)
        sgd_step = names.function("sgd_step")
        sgd_step(jnp.zeros(3), *batches[0], 0.1)
        with TraceCount() as watch:
            for lr in (0.1, 0.05, 0.2):
                sgd_step(jnp.ones(3), *batches[1], lr)
            names.function("train_reading_every_step")(jnp.zeros(3), batches, 0.3, _CountingRead())
            names.function("train_reading_once")(jnp.zeros(3), batches, 0.3, _CountingRead())
        traced = [name for name in watch.names if name not in _EAGER]
        if traced:
            raise Mismatch("New learning rates or data traced again.", str(traced), "no trace")

    yield "sgd_step at lr 0.1, 0.05 and 0.2 on new data, then both trainers at lr 0.3", run


@public("ledger", "`phase_row` tells a trace from a compile on the lesson's three phases",
        "Your row disagrees with what JAX did while the thunk ran: is your answer observed during the call, "
        "or decided from something else? (Watching the phases)")
def ledger(names, rng):
    def run():
        def shrink(v, rate):  # a new function each run, so nothing of it is cached yet
            return v - rate * v

        shrinker = jax.jit(shrink)
        v4, v3, v5 = jnp.arange(4.0), jnp.arange(3.0), jnp.arange(5.0)
        phases = [("trace only", lambda: shrinker.trace(v4, 0.5), (True, False)),
                  ("call after trace", lambda: shrinker(v4, 0.5), (False, True)),
                  ("cached call, new rate", lambda: shrinker(v4, 0.25), (False, False)),
                  ("lower only, a new shape", lambda: shrinker.lower(v3, 0.5), (True, False)),
                  ("lower and compile after a trace", lambda: shrinker.lower(v5, 0.5).compile(), (False, True))]
        for label, thunk, (traced, compiled) in phases:
            if label.endswith("after a trace"):
                shrinker.trace(v5, 0.5)  # outside the thunk: the trace at shape 5 is cached
            row = names.function("phase_row")(label, thunk)
            if not isinstance(row, dict) or not {"label", "traced", "compiled", "traces", "compiles"} <= set(row):
                raise Mismatch(f"The row for {label!r} lacks a key.", show(row),
                               "keys label, traced, compiled, traces, compiles")
            if (bool(row["traced"]), bool(row["compiled"])) != (traced, compiled):
                raise Mismatch(f"The {label!r} row's traced and compiled columns are not what JAX did.",
                               f"traced={row['traced']}, compiled={row['compiled']}",
                               f"traced={traced}, compiled={compiled}")

    yield ("a fresh jit of v - rate * v: .trace(v4, 0.5), then a call, then a call with a new rate, then "
           ".lower(v3, 0.5), then .lower(v5, 0.5).compile() after .trace(v5, 0.5)"), run


@public("diagnosis", "`diagnose` says \"traces\", \"waits\" and \"compiles\" for the lesson's three loops, and "
        "\"waits\" for a loop that only lowers",
        "Run the example's loop yourself with the compile log on: which messages does each repeat print, and "
        "what does each message mean? (JAX's own compile log)")
def diagnosis(names, rng):
    def fresh():
        def tiny_step(theta, lr):
            return theta - lr * jnp.sin(theta)

        return jax.jit(tiny_step), jnp.linspace(0.5, 1.0, 4)

    def traces_each_step():
        _, theta4 = fresh()

        def loop():
            for _ in range(2):
                jax.jit(lambda v: v * 2.0)(theta4)  # a new function every step

        got = names.function("diagnose")(loop)
        if got != "traces":
            raise Mismatch("A new lambda jitted each step traces each step.", repr(got), repr("traces"))

    def waits():
        tiny, theta4 = fresh()
        tiny(theta4, 0.1)

        def loop():
            for _ in range(2):
                float(np.asarray(tiny(theta4, 0.1))[0])

        got = names.function("diagnose")(loop)
        if got != "waits":
            raise Mismatch("A compiled step, read each time, neither traces nor compiles.", repr(got), repr("waits"))

    def compiles():
        tiny, _ = fresh()
        nine = jnp.ones(9)
        tiny.trace(nine, 0.1)
        got = names.function("diagnose")(lambda: tiny(nine, 0.1))
        if got != "compiles":
            raise Mismatch("The call compiles a program traced before, and traces nothing.", repr(got), repr("compiles"))

    def lowers():
        tiny, _ = fresh()
        nine = jnp.ones(9)
        tiny.trace(nine, 0.1)

        def loop():
            for _ in range(2):
                tiny.lower(nine, 0.1)

        got = names.function("diagnose")(loop)
        if got != "waits":
            raise Mismatch("Lowering a program traced before logs *Compiling* but compiles nothing, and traces "
                           "nothing.", repr(got), repr("waits"))

    yield "a loop that jits a new lambda at each of 2 steps", traces_each_step
    yield "a loop that calls a compiled step twice and reads each result", waits
    yield "a call of a jitted function at a shape it was traced at (`.trace`) but never compiled", compiles
    yield "a loop that only lowers (`.lower`) a program traced earlier, twice", lowers
