"""One handler installed once, writing into one buffer for the whole session: every text after the first holds the earlier works' records too."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"holds_its_own_work_only"}
SCORE = 5


# %%
_LOG = io.StringIO()
_HANDLER = logging.StreamHandler(_LOG)
logging.getLogger("jax").addHandler(_HANDLER)


def compile_log_of(work):
    with jax.log_compiles(True):
        work()
    return _LOG.getvalue()


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
