"""Collects records with a logging.Filter placed on a handler whose emit does nothing (the filter keeps the record and returns False), attached to the "jax" logger; it also lowers the "jax" logger's level to WARNING for the call if something set it higher, and restores everything.

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
class KeepRecords(logging.Filter):
    def __init__(self):
        super().__init__()
        self.lines = []

    def filter(self, record):
        self.lines.append(f"[{record.levelname}] {record.name}: {record.getMessage()}")
        return False  # kept here; the handler itself writes nothing


class Quiet(logging.Handler):
    def emit(self, record):
        pass


def compile_log_of(work):
    keeper = KeepRecords()
    sink = Quiet()
    sink.addFilter(keeper)
    jax_logger = logging.getLogger("jax")
    old_level = jax_logger.level
    old_option = bool(jax.config.jax_log_compiles)
    if jax_logger.getEffectiveLevel() > logging.WARNING:
        jax_logger.setLevel(logging.WARNING)
    jax_logger.addHandler(sink)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", old_option)
        jax_logger.removeHandler(sink)
        jax_logger.setLevel(old_level)
    return "\n".join(keeper.lines) + ("\n" if keeper.lines else "")


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
