"""Part A uses logging.basicConfig(stream=buffer, level=logging.WARNING) to route records into a new StringIO each call. basicConfig does nothing once the root logger has a handler, and its own first call added one, so only the first call of compile_log_of gets records; every later text is empty while the records pile into the first buffer. Option restored, so half a point;

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'holds_its_own_work_only'}
SCORE = 5
TEACHER = {'test_capture': 0.5, 'test_programs': 4}
REVIEW = 'The grader gives 1: the first text is whole, the later ones empty; a teacher gave half of the first point too.'



# %%
def compile_log_of(work):
    buffer = io.StringIO()
    logging.basicConfig(stream=buffer, level=logging.WARNING, format="%(levelname)s:%(name)s:%(message)s")
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", previous)
    return buffer.getvalue()


# %%
import re


_LOWERED = re.compile(r"Compiling jit\((.+?)\) with global shapes and types (\(.*\))\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")


def compiled_programs(log_text):
    waiting = {}  # each function's lowered programs XLA has not compiled yet, the latest last
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.search(line)
        if lowered:
            waiting.setdefault(lowered.group(1), []).append(lowered.group(2))
            continue
        compiled = _COMPILED.search(line)
        if compiled and waiting.get(compiled.group(1)):
            programs.setdefault(compiled.group(1), []).append(waiting[compiled.group(1)].pop())
    return programs
