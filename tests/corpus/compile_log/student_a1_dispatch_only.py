"""Part A hangs its handler on logging.getLogger("jax._src.dispatch"), the logger named on the trace and compile lines it saw, so it misses the "Compiling jit(f) with global shapes ..." records, which come from jax._src.interpreters.pxla (and any other JAX module's compile records). Counts still work, but the contract asks for every record (1/2). Option restored;

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
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
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    dispatch_logger = logging.getLogger("jax._src.dispatch")
    dispatch_logger.addHandler(handler)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        dispatch_logger.removeHandler(handler)
    return stream.getvalue()


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
