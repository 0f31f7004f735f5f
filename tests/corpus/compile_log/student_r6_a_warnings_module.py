"""Reads "written as warnings" as Python's warnings module and records them with warnings.catch_warnings(record=True);
JAX writes through logging, so the text is always empty (Part A 1/2: no records, though the option is restored and no
earlier work leaks in). Never having seen a real log, Part B lists every "Compiling" record as a compiled program,
so a `.lower()` that XLA never compiled is listed too and a lowering compiled after a later program comes out
in lowering order, not compile order (Part B 1/4: 1 for sessions of calls, 0 for "nothing never compiled").

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work', 'compiled_lowerings_only', 'holds_its_own_work_only'}
SCORE = 1
TEACHER = {'test_capture': 1, 'test_programs': 1}
REVIEW = 'The grader gives 0 for Part A: an empty text cannot show that it holds its own work only, and another teacher gave the same mistake 0 (student_a1_py_warnings); this one gave the point for the option left as it was.'


# %%
import warnings


def compile_log_of(work):
    old = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            work()
    finally:
        jax.config.update("jax_log_compiles", old)
    return "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)


# %%
import re


def compiled_programs(log_text):
    programs = {}
    for m in re.finditer(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping", log_text):
        programs.setdefault(m.group(1), []).append(m.group(2))
    return programs
