"""Part A is right (a Handler subclass keeping formatted records, option restored by jax.log_compiles). Part B credits
each "Finished XLA compilation of jit(f)" to the latest "Compiling jit(f)" record before it, never marking a lowering
as used: after `f.lower(a)`, `f(b)`, `f(a)` it lists b twice instead of b then a (Part B 2/4: wrong on sessions where an
earlier lowering is compiled later; a lowering never compiled is correctly left out). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'compiled_lowerings_only'}
SCORE = 3
TEACHER = {'test_capture': 2, 'test_programs': 1}


# %%
class RecordBuffer(logging.Handler):
    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("%(levelname)-8s %(name)s | %(message)s"))
        self.text = []

    def emit(self, record):
        self.text.append(self.format(record))


def compile_log_of(work):
    buffer = RecordBuffer()
    logging.getLogger("jax").addHandler(buffer)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        logging.getLogger("jax").removeHandler(buffer)
    return "\n".join(buffer.text)


# %%
import re

_LOWERED = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.*)\) in ")


def compiled_programs(log_text):
    current = {}          # function name -> types of its latest lowering
    programs = {}
    for line in log_text.splitlines():
        m = _LOWERED.search(line)
        if m:
            current[m.group(1)] = m.group(2)
        m = _COMPILED.search(line)
        if m and m.group(1) in current:
            programs.setdefault(m.group(1), []).append(current[m.group(1)])
    return programs
