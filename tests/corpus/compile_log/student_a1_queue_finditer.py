"""A logging.handlers.QueueHandler into a SimpleQueue, set up and torn down with contextlib.ExitStack callbacks, drained after the work;

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
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
import logging.handlers
import queue


def compile_log_of(work):
    q = queue.SimpleQueue()
    handler = logging.handlers.QueueHandler(q)
    target = logging.getLogger("jax")
    with contextlib.ExitStack() as stack:
        target.addHandler(handler)
        stack.callback(target.removeHandler, handler)
        previous = jax.config.jax_log_compiles
        stack.callback(jax.config.update, "jax_log_compiles", previous)
        jax.config.update("jax_log_compiles", True)
        work()
    out = []
    while not q.empty():
        record = q.get()
        out.append(f"{record.levelname}:{record.name}:{record.getMessage()}\n")
    return "".join(out)


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
