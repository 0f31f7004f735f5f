"""Calls jax.clear_caches() before the work "so that every compilation shows up": a work that reuses a program
compiled before the call now retraces and recompiles it, so the text holds records of work done before the call
began and misreports what the work cost (Part A 1/2: capture and option are right, the contract across calls is
not). Part B is correct (4/4).

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
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    jax.clear_caches()                 # fresh start: nothing cached from earlier cells
    try:
        with jax.log_compiles(True):
            work()
    finally:
        logger.removeHandler(handler)
    return text.getvalue()


# %%
import re

LINE = re.compile(r"(?:Compiling jit\((?P<lname>.*?)\) with global shapes and types (?P<types>.*?)\. Argument mapping"
                  r"|Finished XLA compilation of jit\((?P<cname>.*)\) in )")


def compiled_programs(log_text):
    lowerings = {}
    last_types = {}
    programs = {}
    for line in log_text.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        if m.group("lname") is not None:
            lowerings.setdefault(m.group("lname"), []).append(m.group("types"))
            last_types[m.group("lname")] = m.group("types")
        elif m.group("cname") in last_types:
            name = m.group("cname")
            pending = lowerings[name]
            programs.setdefault(name, []).append(pending.pop() if pending else last_types[name])
    return programs
