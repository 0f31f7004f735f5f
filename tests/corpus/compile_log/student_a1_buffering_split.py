"""A logging.handlers.BufferingHandler (capacity large enough never to flush) on the root logger plus a saved-and-restored jax.config value;

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 2, 'test_programs': 4}


# %%
import logging.handlers


def compile_log_of(work):
    buf = logging.handlers.BufferingHandler(capacity=10**9)
    buf.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(filename)s:%(lineno)d %(message)s"))
    logging.getLogger().addHandler(buf)
    before = jax.config.jax_log_compiles
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", before)
        logging.getLogger().removeHandler(buf)
    text = "".join(buf.format(r) + "\n" for r in buf.buffer)
    buf.buffer.clear()
    return text


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
