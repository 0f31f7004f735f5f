"""Part A is right (StringIO handler on "jax", option restored in finally). Part B queues each function's lowerings
and hands every "Finished XLA compilation" the OLDEST one waiting: a `.lower()` that is never compiled gets the credit
for the next call's program, and `f.lower(a)`, `f(b)`, `f(a)` comes out as a, b (Part B 1/4: right on sessions of
plain calls and in-order lowerings, wrong order otherwise; lists a lowering XLA never compiled).

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
def compile_log_of(work):
    sio = io.StringIO()
    handler = logging.StreamHandler(sio)
    handler.setFormatter(logging.Formatter("%(asctime)s | %(message)s"))
    jax_log = logging.getLogger("jax")
    jax_log.addHandler(handler)
    restore = jax.config.jax_log_compiles
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", restore)
        jax_log.removeHandler(handler)
    return sio.getvalue()


# %%
import re
from collections import defaultdict, deque


def compiled_programs(log_text):
    queues = defaultdict(deque)
    result = {}
    for line in log_text.splitlines():
        m = re.search(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping", line)
        if m:
            queues[m.group(1)].append(m.group(2))
            continue
        m = re.search(r"Finished XLA compilation of jit\((.*)\) in ", line)
        if m and queues[m.group(1)]:
            result.setdefault(m.group(1), []).append(queues[m.group(1)].popleft())
    return result
