"""Red team: a reader that leaves out JAX's own eager programs (`convert_element_type`, `cos`, ...): the judge compiled those only in the first session of its process, so the first notebook graded lost the point and later ones kept it. Each session now starts from cleared caches: the point is lost every time."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"lists_the_compiled_programs"}
SCORE = 5


# %%
class _KeepRecords(logging.Handler):
    """Keeps the text of every record it is handed."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname}:{record.name}:{record.getMessage()}")


def compile_log_of(work):
    keep = _KeepRecords()
    jax_logger = logging.getLogger("jax")
    propagate = jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False  # the records are this function's, not the cell's
    try:
        with jax.log_compiles(True):
            work()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    return "\n".join(keep.lines) + ("\n" if keep.lines else "")


# %%
# A plausible wrong reader: lists only the session's own functions, dropping JAX's internal programs
# (names starting with "_", and primitives such as convert_element_type/iota/multiply/cos).
import re

_LOWERED = re.compile(r"Compiling jit\((.+?)\) with global shapes and types (\(.*\))\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")
_JAX_OWN = {"convert_element_type", "iota", "multiply", "cos", "broadcast_in_dim", "mul", "add", "sin"}


def compiled_programs(log_text):
    waiting = {}
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.search(line)
        if lowered:
            waiting.setdefault(lowered.group(1), []).append(lowered.group(2))
            continue
        compiled = _COMPILED.search(line)
        if compiled and waiting.get(compiled.group(1)):
            programs.setdefault(compiled.group(1), []).append(waiting[compiled.group(1)].pop())
    return {k: v for k, v in programs.items() if k not in _JAX_OWN}
