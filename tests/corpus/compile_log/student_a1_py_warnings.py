"""Part A reads "as warnings" as Python warnings and records them with warnings.catch_warnings(record=True); JAX's compile log goes through the logging module, not the warnings module, so the text is always empty (the self-check says so). The option is restored, but a capture that holds no records earns nothing (0/2).

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
import warnings


def compile_log_of(work):
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            work()
    finally:
        jax.config.update("jax_log_compiles", previous)
    return "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)


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
