"""Part A is right (a logging.Handler subclass on the "jax" logger, option through jax.log_compiles). Part B removes a
prefix only of logging's basic "LEVEL:logger:" form and then needs each message at the start of the line, so logs
written with a time, a file name or any other format give nothing (Part B 2/4: its pairing of lowerings with
compilations is right and lists nothing uncompiled, but most handler formats are not read). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'lists_the_compiled_programs'}
SCORE = 5
TEACHER = {'test_capture': 2, 'test_programs': 3}


# %%
class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.out = io.StringIO()

    def emit(self, record):
        self.out.write(f"{record.levelname}:{record.name}:{record.getMessage()}\n")


def compile_log_of(work):
    collect = _Collect()
    jax_logger = logging.getLogger("jax")
    jax_logger.addHandler(collect)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        jax_logger.removeHandler(collect)
    return collect.out.getvalue()


# %%
import re

_PREFIX = re.compile(r"^[A-Z]+:[\w.]+:")     # e.g. "WARNING:jax._src.dispatch:"


def compiled_programs(log_text):
    pending, newest, programs = {}, {}, {}
    for raw in log_text.splitlines():
        msg = _PREFIX.sub("", raw, count=1)
        if msg.startswith("Compiling jit("):
            name, _, rest = msg[len("Compiling jit("):].partition(") with global shapes and types ")
            types = rest.partition(". Argument mapping")[0]
            pending.setdefault(name, []).append(types)
            newest[name] = types
        elif msg.startswith("Finished XLA compilation of jit("):
            name = msg[len("Finished XLA compilation of jit("):].rpartition(") in ")[0]
            if name in newest:
                programs.setdefault(name, []).append(pending[name].pop() if pending[name] else newest[name])
    return programs
