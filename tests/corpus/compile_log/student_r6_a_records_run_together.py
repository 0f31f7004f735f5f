"""Its Handler subclass appends each record's message to one string with no line break between them, so the records
run together on one line instead of each starting on a line of its own (Part A 1/2: the records are there but not in
the promised layout; option and later calls fine). Part B is correct (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work'}
SCORE = 5
TEACHER = {'test_capture': 1, 'test_programs': 4}


# %%
class TextHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.text = ""

    def emit(self, record):
        self.text += record.getMessage()


def compile_log_of(work):
    handler = TextHandler()
    logging.getLogger("jax").addHandler(handler)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        logging.getLogger("jax").removeHandler(handler)
    return handler.text


# %%
import re

LOWER = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping")
XLA = re.compile(r"Finished XLA compilation of jit\((.*)\) in [0-9.]+ sec")


def compiled_programs(log_text):
    todo, last, result = {}, {}, {}
    for line in log_text.splitlines():
        found = LOWER.search(line)
        if found:
            todo.setdefault(found.group(1), []).append(found.group(2))
            last[found.group(1)] = found.group(2)
            continue
        found = XLA.search(line)
        if found and found.group(1) in last:
            fn = found.group(1)
            result.setdefault(fn, []).append(todo[fn].pop() if todo[fn] else last[fn])
    return result
