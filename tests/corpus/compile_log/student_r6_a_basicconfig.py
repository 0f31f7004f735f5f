"""Points the root logger at a fresh StringIO with logging.basicConfig(stream=...): basicConfig does nothing once
the root logger has a handler, so only the first call in an unconfigured process gets records, every later call (or
any session that configured logging first) gets an empty text, and the first buffer stays attached for good (Part A
1/2: records not kept; the option is restored and no earlier work leaks into a text). Part B is correct (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'holds_its_own_work_only'}
SCORE = 5
TEACHER = {'test_capture': 1, 'test_programs': 4}


# %%
def compile_log_of(work):
    log = io.StringIO()
    logging.basicConfig(stream=log, level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    was = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", was)
    return log.getvalue()


# %%
import re


def compiled_programs(log_text):
    lowered = []   # [name, types, compiled] per lowering record
    programs = {}
    for line in log_text.splitlines():
        m = re.search(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping", line)
        if m:
            lowered.append([m.group(1), m.group(2), False])
            continue
        m = re.search(r"Finished XLA compilation of jit\((.*)\) in [\d.]+ sec", line)
        if not m:
            continue
        name = m.group(1)
        mine = [low for low in lowered if low[0] == name]
        if not mine:
            continue
        not_yet = [low for low in mine if not low[2]]
        low = not_yet[-1] if not_yet else mine[-1]
        low[2] = True
        programs.setdefault(name, []).append(low[1])
    return programs
