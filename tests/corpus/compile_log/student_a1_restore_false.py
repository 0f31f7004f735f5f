"""Part A captures well, but afterwards turns the option off with jax.config.update("jax_log_compiles", False) instead of putting back what it found: a caller who had the log on loses it. The self-check only starts from "off", so it passes; the contract across calls fails when the option was on (1/2).

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
class _Grab(logging.Handler):
    def __init__(self):
        super().__init__()
        self.out = io.StringIO()

    def emit(self, record):
        self.out.write(self.format(record) + "\n")


def compile_log_of(work):
    grab = _Grab()
    logging.getLogger("jax").addHandler(grab)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", False)  # switch the log back off
        logging.getLogger("jax").removeHandler(grab)
    return grab.out.getvalue()


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
