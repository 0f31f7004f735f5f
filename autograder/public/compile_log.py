"""Public checks of compile_log: the capture holds the work's records and leaves JAX's option as it was; the
programs listed match two short sessions JAX logged on 0.12.0.1. A failure says what was observed and asks; it never
names the way to capture or to read."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, public

ASSIGNMENT = "compile_log"
_PROBES = itertools.count(3)


def _selfcheck_probe(v, s):
    return jnp.tanh(v * s) + 1.0


def _fresh_work():
    """A work that makes a new jitted function and calls it at a length no other work used."""
    length = next(_PROBES) + 40

    def work():
        jax.jit(_selfcheck_probe)(np.linspace(0.0, 1.0, length, dtype=np.float32), 0.5)

    return work, length


def _text(names, work):
    text = names.function("compile_log_of")(work)
    if not isinstance(text, str):
        raise Mismatch("`compile_log_of` should return a string.", type(text).__name__, "str")
    return text


@public("capture", "`compile_log_of(work)` returns a text that names the function the work compiled, and the "
        "types of its arguments", "The work made JAX trace, lower and compile `_selfcheck_probe` at float32[n], and your "
        "text does not say so. Was JAX writing its compile log while the work ran, and did each record reach your "
        "text whole? (Part A)")
def capture_names_the_work(names, rng):
    def run():
        work, length = _fresh_work()
        text = _text(names, work)
        shown = text if len(text) < 160 else text[:157] + "..."
        if "_selfcheck_probe" not in text or f"float32[{length}]" not in text:
            raise Mismatch("The text does not name the function the work compiled, and its argument types.",
                           repr(shown), f"a text naming `_selfcheck_probe` and float32[{length}]")

    yield "compile_log_of(work), where work() calls a new jax.jit(_selfcheck_probe) at float32[n]", run


@public("capture", "`compile_log_of` leaves JAX's option as it was, off or on, and a second text holds only its own work",
        "Something of one call outlived it. What did your function change while the work ran, and is it as it "
        "was once your function returns? (Part A)")
def capture_leaves_things_as_found(names, rng):
    def run():
        saved = jax.config.jax_log_compiles
        try:
            for option in (False, True):
                jax.config.update("jax_log_compiles", option)
                work, _ = _fresh_work()
                _text(names, work)
                after = jax.config.jax_log_compiles
                if after != option:
                    raise Mismatch(f"With `jax_log_compiles` {'on' if option else 'off'} before the call, it changed.",
                                   f"{after!r} after the call", f"{option!r}, as before it")
                text = _text(names, lambda: None)
                if "_selfcheck_probe" in text:
                    raise Mismatch("A work that compiles nothing got a text naming the earlier work's function.",
                                   "a text naming `_selfcheck_probe`", "nothing of the earlier work")
        finally:
            jax.config.update("jax_log_compiles", saved)

    yield "compile_log_of(work), then compile_log_of(lambda: None), with the option off and then on", run


#: Two short sessions JAX 0.12.0.1 logged with `jax_log_compiles` on, as a handler wrote them, and what
#: JAX's own monitoring events said each function did while they ran.
_DOUBLE = """\
Finished tracing double for jit in 0.001671791 sec
Compiling jit(double) with global shapes and types (ShapedArray(float32[3]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
Finished jaxpr to MLIR module conversion jit(double) in 0.001947880 sec
Finished XLA compilation of jit(double) in 0.033308983 sec
Finished tracing double for jit in 0.001707315 sec
Compiling jit(double) with global shapes and types (ShapedArray(float32[5]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
Finished jaxpr to MLIR module conversion jit(double) in 0.001475334 sec
Finished XLA compilation of jit(double) in 0.031301022 sec
"""
_NORM_STEP = """\
WARNING:jax._src.dispatch:Finished tracing norm_step for jit in 0.001913548 sec
INFO:train:epoch 1 finished in 2.31 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(norm_step) with global shapes and types (ShapedArray(float32[4]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
WARNING:jax._src.dispatch:Finished jaxpr to MLIR module conversion jit(norm_step) in 0.002134562 sec
WARNING:jax._src.dispatch:Finished XLA compilation of jit(norm_step) in 0.025539160 sec
WARNING:jax._src.dispatch:Finished tracing norm_step for jit in 0.002349377 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(norm_step) with global shapes and types (ShapedArray(float32[6]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
WARNING:jax._src.dispatch:Finished jaxpr to MLIR module conversion jit(norm_step) in 0.001618862 sec
WARNING:jax._src.dispatch:Finished XLA compilation of jit(norm_step) in 0.023297787 sec
"""
_T = "(ShapedArray(float32[{}]), ShapedArray(float32[], weak_type=True))"
_SESSIONS = (
    ("the log of `double(x, 0.5)` at float32[3], again at float32[3], then at float32[5] (messages alone)",
     _DOUBLE, "double", [_T.format(3), _T.format(5)]),
    ("the log of `norm_step.trace(x, 0.5)` at float32[4], then `norm_step(x, 0.5)` at float32[4] and at "
     "float32[6] (logging's basic format, one line of another logger)", _NORM_STEP, "norm_step",
     [_T.format(4), _T.format(6)]),
)


@public("programs", "`compiled_programs` lists the programs XLA compiled in two short sessions JAX logged",
        "Your list differs from the programs JAX compiled in this session. Which step of it made which records? "
        "Run the same steps yourself, with your Part A keeping the log, and compare. (Part B)")
def programs_of_two_sessions(names, rng):
    for words, text, name, expected in _SESSIONS:
        def run(text=text, name=name, expected=expected):
            got = names.function("compiled_programs")(text)
            if not isinstance(got, dict):
                raise Mismatch("`compiled_programs` should return a dict.", type(got).__name__, "dict")
            listed = got.get(name)
            if not isinstance(listed, (list, tuple)) or ["".join(str(t).split()) for t in listed] != [
                    "".join(t.split()) for t in expected]:
                raise Mismatch(f"The programs listed for `{name}` differ.", repr(listed), repr(expected))

        yield words, run
