"""Part A adds a logging.Filter that collects records to logging.getLogger("jax"). A logger's filters only see records logged on that very logger; records of jax._src.dispatch and jax._src.interpreters.pxla propagate to the parent's handlers, not its filters, so nothing is collected and the text is empty (0/2, the self-check shows it).

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work', 'holds_its_own_work_only'}
SCORE = 4
TEACHER = {'test_capture': 0, 'test_programs': 4}


# %%
class Collector(logging.Filter):
    def __init__(self):
        super().__init__()
        self.lines = []

    def filter(self, record):
        self.lines.append(record.getMessage())
        return True


def compile_log_of(work):
    collector = Collector()
    jax_logger = logging.getLogger("jax")
    jax_logger.addFilter(collector)
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", previous)
        jax_logger.removeFilter(collector)
    return "\n".join(collector.lines)


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
