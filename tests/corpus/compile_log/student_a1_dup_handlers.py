"""Part A keeps one module-level StringIO and empties it at the start of each call, but adds a new handler on every call and never removes it: on the n-th call each record is written n times. The self-check only looks for the name, so it passes; the text holds the work's records, but not once each after the first call, and handlers pile up across calls (1/2).

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'holds_its_own_work_only'}
SCORE = 5
TEACHER = {'test_capture': 1, 'test_programs': 4}


# %%
LOG_BUFFER = io.StringIO()


def compile_log_of(work):
    LOG_BUFFER.seek(0)
    LOG_BUFFER.truncate()
    handler = logging.StreamHandler(LOG_BUFFER)
    logging.getLogger("jax").addHandler(handler)
    with jax.log_compiles(True):
        work()
    return LOG_BUFFER.getvalue()


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
