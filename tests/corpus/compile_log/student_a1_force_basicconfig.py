"""Part A calls logging.basicConfig(stream=buffer, force=True) on every call: each call gets its records, and the option is restored, but force=True removes every handler the root logger had (the user's or a grader's) and leaves its own StreamHandler on a dead StringIO after returning, so all later log output vanishes. The contract is met; the damage to logging beyond the call costs half a point (1.5/2).

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 1.5, 'test_programs': 4}
REVIEW = "The grader gives 2: the contract says nothing of other handlers; a teacher took half a point for wiping the root logger's."



# %%
def compile_log_of(work):
    buffer = io.StringIO()
    logging.basicConfig(stream=buffer, format="%(asctime)s %(levelname)s %(message)s", force=True)
    before = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", before)
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
