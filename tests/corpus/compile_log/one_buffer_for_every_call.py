"""One handler installed once, writing into one buffer for the whole session: each text holds every earlier work's records too (the first call's as well, once anything ran with the option on before it)."""
import io
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"captures_the_work", "holds_its_own_work_only"}
SCORE = 4


# %%
_LOG = io.StringIO()
_HANDLER = logging.StreamHandler(_LOG)
logging.getLogger("jax").addHandler(_HANDLER)


def compile_log_of(work):
    with jax.log_compiles(True):
        work()
    return _LOG.getvalue()


# %%
_TRACED = re.compile(r"Finished tracing (.+?) for jit in \S+ sec")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")


def compile_counts(log_text):
    counts = {}
    for line in log_text.splitlines():
        for which, pattern in enumerate((_TRACED, _COMPILED)):
            found = pattern.search(line)
            if found:
                traces, compiles = counts.get(found.group(1), (0, 0))
                counts[found.group(1)] = (traces + (which == 0), compiles + (which == 1))
    return counts
