"""JAX's compile log (the option ``jax_log_compiles``), made and read by the grader.

With the option on, JAX writes a WARNING record through Python's ``logging`` for each phase of
each program it makes (measured on 0.12; each line is quoted behind a bar, so that no line of this
file is one of JAX's: the scrubber of feedback would take it for the grader's)::

    | Finished tracing <name> for jit in <seconds> sec                     (a trace)
    | Compiling jit(<name>) with global shapes and types (...). Argument mapping: (...).
    | Finished jaxpr to MLIR module conversion jit(<name>) in <seconds> sec   (lowering)
    | Finished XLA compilation of jit(<name>) in <seconds> sec             (a compile)

*Compiling* is written when JAX lowers, before XLA has done anything: ``f.lower(x)`` writes it and
compiles nothing. A compile without a trace is common: a call after ``f.trace(x)``, a call with an
array committed to a device, a ``jax.grad`` of a function traced at that signature.

- :func:`session`: runs a session of the grader's steps in this process with the option on, and
  returns the text a logging handler of one of :data:`FORMATS` wrote, beside what JAX did: the
  argument types of each program XLA compiled, from the arguments JAX handed its *Compiling* record
  (the types object itself, never the text) and the compile event that followed it. The answer never
  comes from reading the text, so a wrong reading here cannot become the expected value.
- :func:`phases_of`: the grader's reading of a text for one function's records (traces, lowerings,
  compiles), for a property that holds the text a student captured to the steps the grader ran.

The wording is JAX's internal text, pinned with the JAX version.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

#: How a handler may have written each record: plain, logging's basic format, absl's (as a
#: TPU job's log shows them), and one with a time stamp first.
FORMATS = ("plain", "basic", "absl", "stamped")

#: The bodies of the grader's functions: ``(x, s)``, a float32 vector and a float.
BODIES = (
    lambda x, s: jnp.tanh(x * s),
    lambda x, s: jnp.sum((x - s) ** 2),
    lambda x, s: jnp.cumsum(jnp.sin(x)) * s,
    lambda x, s: x / (1.0 + jnp.abs(s * x)),
)

#: What one step of a session does to a function, at a vector of the given length.
STEPS = ("call", "repeat", "trace", "lower", "aot", "commit", "grad", "clear", "static", "eager")


def _function(program: str) -> str:
    """The function's name as a trace record gives it, from JAX's name for its program (``jit(f)``)."""
    inner = re.fullmatch(r"jit\((.*)\)", program)
    return inner.group(1) if inner else program


class _Keep(logging.Handler):
    def __init__(self, stream: list):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.stream = stream

    def emit(self, record):
        self.records.append(record)
        self.stream.append(("record", record))


def _lowering(record: logging.LogRecord):
    """``(JAX's name for the program, its argument types as the record writes them)`` of a *Compiling*
    record (JAX hands it both as arguments), or None for any other record."""
    args = record.args if isinstance(record.args, tuple) else ()
    if record.msg.startswith("Compiling %s with global shapes and types %s") and len(args) >= 2:
        return str(args[0]), "%s" % (args[1],)
    return None


def _programs(stream: list) -> dict[str, list[str]]:
    """Each function's compiled programs, as the argument types of their lowering records, in order: a
    compile event is the compile of the latest lowering of the same program not compiled yet (JAX lowers
    and then compiles, one program at a time); a lowering no compile event took was lowered only."""
    pending: dict[str, list[str]] = {}
    programs: dict[str, list[str]] = {}
    for entry in stream:
        if entry[0] == "record":
            lowered = _lowering(entry[1])
            if lowered is not None:
                pending.setdefault(lowered[0], []).append(lowered[1])
        elif pending.get(entry[1]):
            programs.setdefault(_function(entry[1]), []).append(pending[entry[1]].pop())
    return programs


def _named(name: str, body):
    def fn(x, s):
        return body(x, s)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _vector(length: int):
    return np.linspace(-1.0, 1.0, length, dtype=np.float32)


def _do(jitted, static, step: str, length: int):
    x = _vector(length)
    if step in ("call", "repeat"):
        return jitted(x, 0.5)
    if step == "trace":
        return jitted.trace(x, 0.5)
    if step == "lower":
        return jitted.lower(x, 0.5)
    if step == "aot":
        return jitted.lower(x, 0.5).compile()
    if step == "commit":
        return jitted(jax.device_put(x, jax.devices()[0]), 0.5)
    if step == "grad":
        return jax.grad(lambda v: jnp.sum(jitted(v, 0.5)))(x)
    if step == "clear":
        return jitted.clear_cache()
    if step == "static":
        return static(x, 0.25 + length / 64.0)
    return jnp.cos(jnp.arange(length, dtype=jnp.float32) * 0.5)  # "eager": JAX's own small programs


def _line(record: logging.LogRecord, form: str) -> str:
    message = record.getMessage()
    if form == "basic":
        return f"{record.levelname}:{record.name}:{message}"
    if form == "absl":
        stamp = time.strftime("%m%d %H:%M:%S", time.localtime(record.created))
        micros = int((record.created % 1) * 1_000_000)
        return (f"{record.levelname[:1]}{stamp}.{micros:06d} {record.thread % 100000:>7d} "
                f"{record.filename}:{record.lineno}] {message}")
    if form == "stamped":
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
        return f"{stamp},{int(record.msecs):03d} - {record.name} - {record.levelname} - {message}"
    return message


@contextlib.contextmanager
def _logged(stream: list):
    """JAX's records while the block runs, kept here (and in ``stream``) and passed to no other handler;
    the option on (thread-locally) and the persistent compilation cache off, whose hits would change
    the log."""
    recorder, logs_of_jax = _Keep(stream), logging.getLogger("jax")
    passed_on = logs_of_jax.propagate
    logs_of_jax.addHandler(recorder)
    logs_of_jax.propagate = False
    cache = jax.config.jax_enable_compilation_cache
    try:
        jax.config.update("jax_enable_compilation_cache", False)
        with jax.log_compiles(True):
            yield recorder.records
    finally:
        jax.config.update("jax_enable_compilation_cache", cache)
        logs_of_jax.removeHandler(recorder)
        logs_of_jax.propagate = passed_on


_LOCK = threading.Lock()


def session(plan, form: str = "plain", notes: tuple[str, ...] = ()):
    """Run ``plan`` with JAX's compile log on, and return ``(text, programs)``: the text a handler of the
    given format wrote, and each function's compiled programs (:func:`_programs`).

    ``plan`` is a sequence of ``(name, body index, step, length)``: each name is one new jitted
    function of the grader's (made at its first step, from :data:`BODIES`), and each step one of
    :data:`STEPS` at a vector of that length. ``notes`` are lines of a script's own logger, put
    between the records at even places.
    """
    if form not in FORMATS:
        raise ValueError(f"unknown format {form!r}")
    functions: dict[str, tuple] = {}
    stream: list = []  # JAX's records and compile events, in the order they came

    def listen(event, duration_secs, **details):
        name = details.get("fun_name")
        if event == COMPILE_EVENT and isinstance(name, str):
            stream.append(("compiled", name))

    with _LOCK, _logged(stream) as records:
        jax.clear_caches()  # JAX's own eager programs compile in every session, whatever ran before it
        jax.monitoring.register_event_duration_secs_listener(listen)
        try:
            for name, body, step, length in plan:
                if name not in functions:
                    fn = _named(name, BODIES[body % len(BODIES)])
                    functions[name] = (jax.jit(fn), jax.jit(fn, static_argnums=1))
                jitted, static = functions[name]
                _do(jitted, static, step, length)
        finally:
            jax.monitoring.unregister_event_duration_listener(listen)
    programs = _programs(stream)
    lines = [_line(record, form) for record in records]
    for place, note in enumerate(notes):
        at = min(len(lines), 2 * place + 1)
        lines.insert(at, note)
    return "\n".join(lines) + "\n", programs


# --- the grader's reading of a captured text, for one function ---------------------------------

_TRACED = "Finished tracing {name} for jit in "
_LOWERED = "Compiling jit({name}) with global shapes and types "
_COMPILED = "Finished XLA compilation of jit({name}) in "


def phases_of(text: str, name: str, by_line: bool = True) -> tuple[int, int, int]:
    """How many lines of the text hold a trace record, a lowering (*Compiling*) record and a compile
    record of the function ``name`` (a line holding two records counts once: records start on lines
    of their own); with ``by_line`` false, how many of each the text holds, wherever they are."""
    if not isinstance(text, str):
        return 0, 0, 0
    records = [record.format(name=name) for record in (_TRACED, _LOWERED, _COMPILED)]
    if not by_line:
        return tuple(text.count(record) for record in records)
    lines = text.splitlines()
    return tuple(sum(record in line for line in lines) for record in records)


def lowered_types_of(text: str, name: str, by_line: bool = True) -> list[str]:
    """The argument types of each lowering record of the function ``name`` in the text, in order, as the
    record writes them (``(ShapedArray(float32[3]),)``): the first on each line, or (``by_line`` false)
    every one, wherever it is."""
    if not isinstance(text, str):
        return []
    head, found = _LOWERED.format(name=name), []
    for piece in text.splitlines() if by_line else text.split(head)[1:]:
        if by_line:
            at = piece.find(head)
            if at < 0:
                continue
            piece = piece[at + len(head):]
        found.append(piece.split(". Argument mapping", 1)[0])
    return found
