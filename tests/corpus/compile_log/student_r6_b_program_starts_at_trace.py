"""Part A is right (a list-keeping Handler on "jax", option saved and restored). Part B
reads a program as the chain "Finished tracing f" -> "Compiling jit(f)" -> "Finished XLA compilation of jit(f)", so a
program compiled without a new trace is dropped: a committed array, eager operations under jax.grad/vmap, a lowering
compiled later (Part B 2/4: missing programs; it never lists a lowering XLA did not compile). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'compiled_lowerings_only', 'lists_the_compiled_programs'}
SCORE = 2
TEACHER = {'test_capture': 2, 'test_programs': 3}
REVIEW = 'The grader gives 0: besides the compiles with no trace record of their own (the first property), it misses a lowering that a later call compiled (the second), which the teacher did not try.'


# %%
class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append("%s %s" % (record.name, record.getMessage()))


def compile_log_of(work):
    catcher = _Lines()
    target = logging.getLogger("jax")
    target.addHandler(catcher)
    before = jax.config.jax_log_compiles
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", before)
        target.removeHandler(catcher)
    return "\n".join(catcher.lines) + "\n"


# %%
import re

TRACED = re.compile(r"Finished tracing (.*) for jit in ")
LOWERED = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping")
COMPILED = re.compile(r"Finished XLA compilation of jit\((.*)\) in ")


def compiled_programs(log_text):
    programs = {}
    current = None                 # the program being built: [name, types]
    for line in log_text.splitlines():
        if (m := TRACED.search(line)):
            current = [m.group(1), None]          # trace -> lower -> compile
        elif (m := LOWERED.search(line)):
            if current and current[0] == m.group(1):
                current[1] = m.group(2)
        elif (m := COMPILED.search(line)):
            if current and current[0] == m.group(1) and current[1] is not None:
                programs.setdefault(current[0], []).append(current[1])
                current = None
    return programs
