"""Part A captures sys.stderr with contextlib.redirect_stderr, since the records showed up on stderr. That works only while no handler is configured anywhere, so that logging falls back to its last-resort handler, which writes to the current sys.stderr; once the root or "jax" logger has a handler (basicConfig, a training setup, a grader's handler) the records go elsewhere and the text is empty. It also sweeps in everything else printed to stderr. Option restored (1/2);

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work', 'holds_its_own_work_only'}
SCORE = 4
TEACHER = {'test_capture': 1, 'test_programs': 4}
REVIEW = 'The grader gives 0: a grading kernel, like many applications, has log handlers installed, the very case the docstring says this answer breaks on; a teacher gave the point for the contract across calls.'



# %%
import contextlib


def compile_log_of(work):
    captured = io.StringIO()
    was = jax.config.jax_log_compiles
    try:
        jax.config.update("jax_log_compiles", True)
        with contextlib.redirect_stderr(captured):
            work()
    finally:
        jax.config.update("jax_log_compiles", was)
    return captured.getvalue()


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
