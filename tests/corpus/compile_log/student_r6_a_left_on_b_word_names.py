"""Turns jax_log_compiles on and leaves it on ("more logging never hurts"), so the option is not as it was after the
call (Part A 1/2: records kept, contract across calls broken). Part B matches names with `jit\\((\\w+)\\)`, so
`<lambda>` and `<unnamed function>` (a jitted callable object) are never matched and their programs are missing
(Part B 2/4: wrong programs on such sessions; pairing of lowerings with compilations is right, nothing uncompiled
listed). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'holds_its_own_work_only', 'lists_the_compiled_programs'}
SCORE = 4
TEACHER = {'test_capture': 1, 'test_programs': 3}


# %%
def compile_log_of(work):
    jax.config.update("jax_log_compiles", True)
    buf = io.StringIO()
    h = logging.StreamHandler(buf)
    logging.getLogger("jax").addHandler(h)
    try:
        work()
    finally:
        logging.getLogger("jax").removeHandler(h)
    return buf.getvalue()


# %%
import re


def compiled_programs(log_text):
    lowered = {}
    latest = {}
    result = {}
    for line in log_text.splitlines():
        m = re.search(r"Compiling jit\((\w+)\) with global shapes and types (.*)\. Argument mapping", line)
        if m:
            lowered.setdefault(m.group(1), []).append(m.group(2))
            latest[m.group(1)] = m.group(2)
            continue
        m = re.search(r"Finished XLA compilation of jit\((\w+)\)", line)
        if m and m.group(1) in latest:
            fn = m.group(1)
            result.setdefault(fn, []).append(lowered[fn].pop() if lowered[fn] else latest[fn])
    return result
