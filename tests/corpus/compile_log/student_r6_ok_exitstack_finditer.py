"""Uses contextlib.ExitStack to set the option (config.update, undone by a callback), attach a prefixed
StreamHandler to the "jax" logger and, if a session had quieted that logger above WARNING, lower it for the work
only; reads the log with one re.finditer over the whole text, keeping a per-name stack of lowerings that the
"Finished XLA compilation" records consume. Correct.

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 2, 'test_programs': 4}


# %%
import contextlib


def compile_log_of(work):
    out = io.StringIO()
    with contextlib.ExitStack() as undo:
        logger = logging.getLogger("jax")
        handler = logging.StreamHandler(out)
        handler.setFormatter(logging.Formatter("[%(name)s %(levelname)s] %(message)s"))
        logger.addHandler(handler)
        undo.callback(logger.removeHandler, handler)

        if logger.getEffectiveLevel() > logging.WARNING:     # JAX writes these records as warnings
            undo.callback(logger.setLevel, logger.level)
            logger.setLevel(logging.WARNING)

        before = jax.config.jax_log_compiles
        undo.callback(jax.config.update, "jax_log_compiles", before)
        jax.config.update("jax_log_compiles", True)

        work()
    return out.getvalue()


# %%
import re

RECORD = re.compile(
    r"Compiling jit\((?P<lowered>.*?)\) with global shapes and types (?P<types>.*?)\. Argument mapping: .*$"
    r"|Finished XLA compilation of jit\((?P<compiled>.*)\) in \S+ sec\s*$",
    re.MULTILINE,
)


def compiled_programs(log_text):
    stacks, latest, found = {}, {}, {}
    for m in RECORD.finditer(log_text):
        if m["lowered"] is not None:
            stacks.setdefault(m["lowered"], []).append(m["types"])
            latest[m["lowered"]] = m["types"]
        else:
            name = m["compiled"]
            if stacks.get(name):
                found.setdefault(name, []).append(stacks[name].pop())
            elif name in latest:           # the same lowered module compiled once more
                found.setdefault(name, []).append(latest[name])
    return found
