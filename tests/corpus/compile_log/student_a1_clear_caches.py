"""Part A reads "none of work done before the call" as "clear JAX's caches first" and calls jax.clear_caches() before the work: the text then shows traces and compiles the work would never have made (a function compiled earlier is compiled again), so it no longer tells what the work did, and it slows every later call. Capture and option restore are otherwise right (1/2).

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
class RecordList(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def compile_log_of(work):
    jax.clear_caches()  # start clean so nothing from earlier work is reused or shown
    keep = RecordList()
    logger = logging.getLogger("jax")
    logger.addHandler(keep)
    old = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", old)
        logger.removeHandler(keep)
    return "\n".join(f"{r.levelname} {r.getMessage()}" for r in keep.records)


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
