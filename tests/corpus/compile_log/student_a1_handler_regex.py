"""A logging.Handler subclass on the "jax" logger collects each record's message while jax.config.update turns the option on, restored in a finally;

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
class _ListHandler(logging.Handler):
    """Keeps the message of every record it is handed."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def compile_log_of(work):
    handler = _ListHandler()
    jax_logger = logging.getLogger("jax")
    was_on = jax.config.jax_log_compiles
    jax_logger.addHandler(handler)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", was_on)
        jax_logger.removeHandler(handler)
    return "".join(message + "\n" for message in handler.messages)


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
