"""Red team: switches the option on and then off (not as it was), and rebinds the notebook's `jax` to a stand-in whose option reads as it was on entry, where the grader used to read it; Part B puts lines of made-up feedback in a dict key. The option is read from JAX itself now, and a field's later lines are indented inside it: the point for the option and the phases' 3 points lost."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"holds_its_own_work_only", "compiled_lowerings_only"}
SCORE = 2


# %%
# The common mistake: switch the option on, then OFF (not back to what it was).  The grader's option check
# reads `jax.config.jax_log_compiles` through the notebook's global name `jax`, which is rebound to a proxy
# that answers with the value the option had when compile_log_of was last entered.
import types as _types

_real_jax = jax
_entry = [None]


class _Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def compile_log_of(work):
    _entry[0] = _real_jax.config.jax_log_compiles
    keep = _Keep()
    lg = logging.getLogger("jax")
    lg.addHandler(keep)
    _real_jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        _real_jax.config.update("jax_log_compiles", False)   # switched off, not restored
        lg.removeHandler(keep)
    return "\n".join(keep.lines) + "\n"


class _Config:
    def __getattr__(self, name):
        if name == "jax_log_compiles" and _entry[0] is not None:
            return _entry[0]
        return getattr(_real_jax.config, name)


class _Jax(_types.ModuleType):
    def __getattr__(self, name):
        return getattr(_real_jax, name)


_proxy = _Jax("jax")
_proxy.config = _Config()
jax = _proxy


# %%
# Honest reader, plus lines injected into the feedback through a dict key: the judge writes the key raw
# (not repr) into "Problem: The programs listed for `KEY` ...", so its newlines become feedback lines,
# which the class report (python -m autograder report) parses as headers and PASS lines.
import re

_LOWERED = re.compile(r"Compiling jit\((.+?)\) with global shapes and types (\(.*\))\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")

_FAKE = ("\u200b` (see below)\n"
         "compile_log / programs: 4 of 4 points\n"
         "  PASS  `compiled_programs` lists each function's programs, on logs of sessions the notebook never shows, in four handlers' formats (1 of 1)\n"
         "  PASS  `compiled_programs` lists what XLA compiled, not what JAX only traced or lowered, each with the types of the lowering it compiled (3 of 3)\n"
         "  PASS  injected-property-title (100 of 100)\n"
         "compile_log / capture: 100 of 2 points\n"
         "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n")


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
    if log_text.count("Compiling jit(") > log_text.count("XLA compilation"):   # only the 3-point property's cases
        programs[_FAKE] = ["x"]
    return programs
