"""Attaches its StringIO handler to the logger named "jax._src.dispatch" only (the name it saw in a printed log), so
the "Compiling jit(...) with global shapes and types" records, written by jax._src.interpreters.pxla, never reach
the text (Part A 1/2: records missing; option and later calls fine). Part B is correct (4/4).

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
def compile_log_of(work):
    sink = io.StringIO()
    handler = logging.StreamHandler(sink)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    dispatch_logger = logging.getLogger("jax._src.dispatch")
    dispatch_logger.addHandler(handler)
    with jax.log_compiles(True):
        try:
            work()
        finally:
            dispatch_logger.removeHandler(handler)
    return sink.getvalue()


# %%
import re
from collections import defaultdict

LOWER_RE = re.compile(r"Compiling jit\((?P<fn>.+?)\) with global shapes and types (?P<avals>.+?)\. Argument mapping:")
COMPILE_RE = re.compile(r"Finished XLA compilation of jit\((?P<fn>.+)\) in \d")


def compiled_programs(log_text):
    uncompiled = defaultdict(list)
    lowered_last = {}
    programs = defaultdict(list)
    for line in log_text.splitlines():
        if (m := LOWER_RE.search(line)):
            uncompiled[m["fn"]].append(m["avals"])
            lowered_last[m["fn"]] = m["avals"]
        elif (m := COMPILE_RE.search(line)):
            fn = m["fn"]
            if uncompiled[fn]:
                programs[fn].append(uncompiled[fn].pop())
            elif fn in lowered_last:
                programs[fn].append(lowered_last[fn])
    return dict(programs)
