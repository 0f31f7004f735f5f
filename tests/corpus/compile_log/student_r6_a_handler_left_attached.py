"""Installs one StreamHandler on a module-level StringIO the first time it is called and leaves it on the "jax" logger,
emptying the buffer after reading it; whatever JAX logs between two calls (a session that keeps the option on) lands
in the buffer and comes back in the next call's text (Part A 1/2: records fine, but a text can hold work done before
the call began). Part B is correct (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 1, 'test_programs': 4}
REVIEW = "The grader gives 2: the leak shows only when the option is on between two calls, and the graders' own work between two calls runs with the notebook's handlers muted (the graders may not run the notebook's code there); a blind spot, named in docs/literal-student.md."


# %%
_LOG = io.StringIO()
_HANDLER = None


def compile_log_of(work):
    global _HANDLER
    if _HANDLER is None:                       # attach once, not on every call
        _HANDLER = logging.StreamHandler(_LOG)
        logging.getLogger("jax").addHandler(_HANDLER)
    before = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", before)
    text = _LOG.getvalue()
    _LOG.seek(0)
    _LOG.truncate()                            # start clean for the next call
    return text


# %%
import re

_PROGRAM_RE = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping")
_DONE_RE = re.compile(r"Finished XLA compilation of jit\((.*)\) in ")


def compiled_programs(log_text):
    waiting, newest, compiled = {}, {}, {}
    for line in log_text.splitlines():
        hit = _PROGRAM_RE.search(line)
        if hit:
            name, types = hit.groups()
            waiting.setdefault(name, []).append(types)
            newest[name] = types
            continue
        hit = _DONE_RE.search(line)
        if hit and hit.group(1) in newest:
            name = hit.group(1)
            compiled.setdefault(name, []).append(waiting[name].pop() if waiting[name] else newest[name])
    return compiled
