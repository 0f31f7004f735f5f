"""Saw the records printed in red under the cell and captures them with contextlib.redirect_stderr: that only works
while no logging handler is configured (Python's last-resort handler then prints to the current sys.stderr); in a
session whose logging has a handler (basicConfig, JAX's own jax_logging_level handler) the text stays empty (Part A
1/2: records not reliably kept; option and later calls fine). Part B is correct (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work', 'holds_its_own_work_only'}
SCORE = 4
TEACHER = {'test_capture': 1, 'test_programs': 4}
REVIEW = 'The grader gives 0: a grading kernel, like many applications, has log handlers installed, the very case the docstring says this answer breaks on; the teacher gave the point for the contract across calls.'


# %%
import contextlib


def compile_log_of(work):
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured), jax.log_compiles(True):
        work()
    return captured.getvalue()


# %%
import re

PAT_LOWER = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (\(.*?\))\. Argument mapping: ")
PAT_XLA = re.compile(r"Finished XLA compilation of jit\((.*)\) in ")


def compiled_programs(log_text):
    stack = []                      # (name, types) of lowerings, in order
    used = set()                    # indexes into stack already compiled
    programs = {}
    for line in log_text.splitlines():
        low = PAT_LOWER.search(line)
        if low:
            stack.append((low.group(1), low.group(2)))
            continue
        xla = PAT_XLA.search(line)
        if not xla:
            continue
        name = xla.group(1)
        candidates = [i for i, (n, _) in enumerate(stack) if n == name]
        if not candidates:
            continue
        fresh = [i for i in candidates if i not in used]
        i = fresh[-1] if fresh else candidates[-1]
        used.add(i)
        programs.setdefault(name, []).append(stack[i][1])
    return programs
