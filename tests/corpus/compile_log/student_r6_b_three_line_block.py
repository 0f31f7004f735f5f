"""Part A is right (StringIO handler on "jax", option restored in finally). Part B assumes one program's records sit
on consecutive lines: a "Compiling" line counts when the line two below is "Finished XLA compilation"; a `.lower()`
compiled later (by `.compile()` or a call after other work) or a line of another logger in between is missed (Part B
2/4: programs missing on such sessions; a lowering never compiled is correctly left out). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'compiled_lowerings_only', 'lists_the_compiled_programs'}
SCORE = 2
TEACHER = {'test_capture': 2, 'test_programs': 1}
REVIEW = 'The grader gives 0: besides lowerings compiled later (the second property), a line of another logger between a lowering and its compile breaks the block (the first), which the teacher did not try.'


# %%
def compile_log_of(work):
    memory = io.StringIO()
    h = logging.StreamHandler(memory)
    h.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    log = logging.getLogger("jax")
    old_value = jax.config.jax_log_compiles
    log.addHandler(h)
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", old_value)
        log.removeHandler(h)
    return memory.getvalue()


# %%
import re


def compiled_programs(log_text):
    lines = log_text.splitlines()
    programs = {}
    for i, line in enumerate(lines):
        m = re.search(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping", line)
        if not m:
            continue
        # Compiling -> MLIR conversion -> XLA compilation: one program is three records in a row
        if i + 2 < len(lines) and f"Finished XLA compilation of jit({m.group(1)})" in lines[i + 2]:
            programs.setdefault(m.group(1), []).append(m.group(2))
    return programs
