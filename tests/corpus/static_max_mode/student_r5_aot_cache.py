"""Student "aot_cache": correct; takes "compile it" literally with ahead-of-time compilation.

Part A is an if/elif chain with a final ValueError. Part B keeps its own cache: `choose`
checks the mode (ValueError for anything else), then looks up (shape, dtype, mode) in a
dict and, on a miss, builds `jax.jit(choose_reduction, static_argnames="mode")
.lower(values, mode=mode).compile()` once and stores it. Each new mode, shape or dtype
traces exactly once (the `.lower`), and repeats or new values only run the stored
executable, which is what Part B says counts. Part C puts the one jitted function in a small
callable object made once (`normalise_jitted = _Normaliser()`), with mode and n_iter static
and the clip written as `y * jnp.where(peak > clip_at, clip_at / peak, 1.0)`.
"""

TEACHER = {"test_modes": 3, "test_errors": 1, "test_traces": 2, "test_sorting": 2}
WHY = {}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8

# %% cell 1
import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace and compile events, and JAX's error messages may differ from what the text describes.")

# %% cell 3
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, named after the
    function traced (a jitted function traced inside another trace emits none). The
    event is not proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, emits it again while JAX reuses the jaxpr it kept. Eager operations emit one as well, because
    JAX runs each as a small jitted function of its own (``multiply``,
    ``_reduce_sum``, ``iota``...), but only the first time an operation meets a
    signature: a repeat at a signature already met emits nothing. So build inputs
    before the block, call only the function you are studying inside it, and look
    for its name in ``names``.
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

# %% cell 6
def square_total(values):
    return jnp.sum(jnp.square(values))


three = jnp.arange(3, dtype=jnp.float32)
print(jax.make_jaxpr(square_total)(three))

# %% cell 8
jitted_square_total = jax.jit(square_total)

experiments = [
    ("first call", three),
    ("new values, same shape", three + 10.0),
    ("new shape", jnp.arange(5, dtype=jnp.float32)),
]
for label, values in experiments:
    with TraceWatch() as watch:
        result = jitted_square_total(values)
    print(f"{label:<24} shape={values.shape} dtype={values.dtype} traces={watch.count} result={float(result)}")

# %% cell 10
def power_sum(values, power):
    if power == 1:  # fine: power is a concrete Python int while tracing
        return jnp.sum(values)
    return jnp.sum(values ** power)


compiled_power_sum = jax.jit(power_sum, static_argnames=("power",))
print(jax.make_jaxpr(power_sum, static_argnums=1)(three, 1))
print(jax.make_jaxpr(power_sum, static_argnums=1)(three, 3))

doubled = three * 2.0  # built outside the block: eager operations are traced too
with TraceWatch() as watch:
    compiled_power_sum(three, power=3)
    compiled_power_sum(doubled, power=3)  # same power, new values: reused
    compiled_power_sum(three, power=1)    # new static value: a second program
print("traces:", watch.count, watch.names)

# %% cell 12
def scaled_total(values, scale):
    return jnp.sum(scale * values)


compiled_scaled_total = jax.jit(scaled_total)
strong_scale = jnp.float32(2.0)  # built outside the block
with TraceWatch() as watch:
    compiled_scaled_total(three, 2.0)           # weakly typed scale: first trace
    compiled_scaled_total(three, 5.0)           # another Python float: reused
    compiled_scaled_total(three, strong_scale)  # same number, strong float32: a new trace
print("traces:", watch.count)
print(jax.typeof(2.0), "weak:", jax.typeof(2.0).weak_type, "|", jax.typeof(strong_scale), "weak:", jax.typeof(strong_scale).weak_type)

# %% cell 14
def choose_reduction(values, mode):
    """Reduce every element of ``values`` with the reduction named by ``mode``.

    ``mode`` is configuration ("sum", "mean" or "max"), not data; any other
    value raises ValueError.
    """
    if mode == "sum":
        result = jnp.sum(values)
    elif mode == "mean":
        result = jnp.mean(values)
    elif mode == "max":
        result = jnp.max(values)
    else:
        raise ValueError(f"unknown reduction mode {mode!r}; choose 'sum', 'mean' or 'max'")
    return result

# %% cell 16
negatives = jnp.array([-4.0, -1.0, -2.0])
for mode in ("sum", "mean", "max"):
    print(mode, float(choose_reduction(negatives, mode)))

# %% cell 18
# choose: choose_reduction, compiled
_jitted_choose = jax.jit(choose_reduction, static_argnames="mode")
_executables = {}  # (shape, dtype, mode) -> compiled executable


def choose(values, mode):
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"unknown reduction mode {mode!r}; choose 'sum', 'mean' or 'max'")
    key = (values.shape, str(values.dtype), mode)
    if key not in _executables:
        # trace + compile once for this signature and mode
        _executables[key] = _jitted_choose.lower(values, mode=mode).compile()
    return _executables[key](values)

# %% cell 20
# Your prediction: how many traces will each row of the sequence below start? Replace each None.
predicted_traces = [1, 0, 1, 1]

# %% cell 21
x = jnp.array([1.0, 5.0, 3.0])
sequence = [
    ("first call", x, "sum"),
    ("new values only", x * 2.0, "sum"),
    ("new mode only", x, "max"),
    ("new shape only", jnp.arange(4.0), "max"),
]
for (label, values, mode), guess in zip(sequence, predicted_traces):
    with TraceWatch() as watch:
        out = choose(values, mode=mode)
    print(f"{label:<16} shape={values.shape} mode={mode:<4} predicted={guess} traces={watch.count} result={float(out)}")

# %% cell 31
def normalise(x, mode, n_iter, eps, clip_at):
    """Smooth ``x``, divide it by its size plus ``eps``, and scale it down to ``clip_at``."""
    y = x
    for _ in range(n_iter):  # each round averages every entry with its left neighbour
        y = 0.5 * (y + jnp.roll(y, 1))
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    if peak > clip_at:  # too large: shrink the whole vector so its largest magnitude is clip_at
        y = y * (clip_at / peak)
    return y


signal = jnp.array([3.0, -1.0, 4.0, 1.0, -5.0])
print(normalise(signal, "max", 2, 0.5, 0.6))

# %% cell 33
# normalise_jitted: normalise, compiled (the contract above)
class _Normaliser:
    """normalise with mode and n_iter as configuration, compiled once."""

    def __init__(self):
        self._compiled = jax.jit(self._body, static_argnums=(1, 2))

    @staticmethod
    def _body(x, mode, n_iter, eps, clip_at):
        y = x
        for _ in range(n_iter):
            y = 0.5 * (y + jnp.roll(y, 1))
        if mode == "l2":
            size = jnp.sqrt(jnp.sum(y * y))
        elif mode == "max":
            size = jnp.max(jnp.abs(y))
        else:
            raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
        y = y / (size + eps)
        peak = jnp.max(jnp.abs(y))
        return y * jnp.where(peak > clip_at, clip_at / peak, 1.0)

    def __call__(self, x, mode, n_iter, eps, clip_at):
        return self._compiled(x, mode, n_iter, eps, clip_at)


normalise_jitted = _Normaliser()

# %% cell 35
ledger_x = jnp.linspace(-1.0, 2.0, 6)
ledger_rows = [
    ("first call", (ledger_x, "l2", 2, 0.1, 0.5)),
    ("new x values", (ledger_x * -3.0, "l2", 2, 0.1, 0.5)),
    ("new eps", (ledger_x, "l2", 2, 0.2, 0.5)),
    ("new clip_at", (ledger_x, "l2", 2, 0.2, 0.3)),
    ("new mode", (ledger_x, "max", 2, 0.2, 0.3)),
    ("new n_iter", (ledger_x, "max", 3, 0.2, 0.3)),
    ("0-d array eps, clip_at", (ledger_x, "max", 3, jnp.float32(0.2), jnp.float32(0.3))),
    ("new array values", (ledger_x, "max", 3, jnp.float32(0.4), jnp.float32(0.1))),
]  # every input is built before the watched calls
for label, args in ledger_rows:
    with TraceWatch() as watch:
        out = normalise_jitted(*args)
    print(f"{label:<24} traces={watch.count} peak={float(jnp.max(jnp.abs(out))):.4f}")
