"""Literal student (run 2, on the release with compiled_programs): Part A turns jax_log_compiles on around work() and catches the warnings on a handler added to the root logger, restoring the option and removing the handler afterwards; Part B reads each "Finished XLA compilation of jit(NAME)" record as one compiled program whose argument types come from that name's latest "Compiling jit(NAME) with global shapes and types (...)" record.

Written by a literal-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"compiled_lowerings_only"}
SCORE = 3


# %%
def compile_log_of(work):
    """Call work() once with jax_log_compiles on; return the records it wrote, one per line."""
    was_on = jax.config.jax_log_compiles
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.NOTSET)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", was_on)
        root.removeHandler(handler)
        handler.flush()
    return stream.getvalue()


# %%
import re

_COMPILING = re.compile(
    r"Compiling jit\((?P<name>.*?)\) with global shapes and types (?P<types>\(.*?\))\. Argument mapping:"
)
_FINISHED_XLA = re.compile(r"Finished XLA compilation of jit\((?P<name>.*?)\) in ")


def compiled_programs(log_text):
    """Map each function name to the argument types of each program XLA compiled for it, in order.

    A program counts when the log records "Finished XLA compilation of jit(NAME)"; its argument
    types are those of the latest "Compiling jit(NAME) with global shapes and types ..." record.
    """
    programs = {}
    pending = {}  # name -> argument types of its latest "Compiling" record
    for line in log_text.splitlines():
        m = _COMPILING.search(line)
        if m:
            pending[m.group("name")] = m.group("types")
            continue
        m = _FINISHED_XLA.search(line)
        if m:
            name = m.group("name")
            if name in pending:
                programs.setdefault(name, []).append(pending.pop(name))
    return programs
