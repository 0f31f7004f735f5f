"""Red team: `compile_log_of` runs the work and returns records it made up, by how often the grader had called it (the plan was fixed then). The plans are drawn per notebook now, and the lowering records' argument types are judged: both capture points lost."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"captures_the_work", "holds_its_own_work_only"}
SCORE = 4


# %%
# Part A without the compile log: run the work, then return made-up records.
# The grader's work is a plain function named "thunk"; the first one is judged for every record,
# the third only for "nothing beyond its own work, and not nothing".
_graded = [0]

def compile_log_of(work):
    work()
    if getattr(work, "__name__", "") == "thunk":
        _graded[0] += 1
    if _graded[0] == 1:
        counts = (4, 3, 2)
    else:
        counts = (1, 0, 0)
    lines = (["Finished tracing <lambda> for jit in 0.001 sec"] * counts[0]
             + ["Compiling jit(<lambda>) with global shapes and types (x). Argument mapping: (y)."] * counts[1]
             + ["Finished XLA compilation of jit(<lambda>) in 0.01 sec"] * counts[2])
    return "\n".join(lines) + "\n"


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
