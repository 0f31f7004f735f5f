"""Its own logging.Handler keeps `record.msg` instead of the formatted message, so the "Compiling %s with global
shapes and types %s..." records lose the function name and argument types JAX passes as arguments (Part A 1/2: the
text does not hold the records as JAX wrote them; option and later calls are fine). Part B is correct (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work'}
SCORE = 5
TEACHER = {'test_capture': 1, 'test_programs': 4}


# %%
class ListHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(str(record.msg))


def compile_log_of(work):
    handler = ListHandler()
    logging.getLogger("jax").addHandler(handler)
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", previous)
        logging.getLogger("jax").removeHandler(handler)
    return "\n".join(handler.lines)


# %%
def compiled_programs(log_text):
    pending = {}
    seen = {}
    out = {}
    for line in log_text.splitlines():
        if "Compiling jit(" in line and "with global shapes and types" in line:
            message = line[line.index("Compiling jit("):]
            name = message[len("Compiling jit("):message.index(") with global shapes and types")]
            types = message.split("with global shapes and types ", 1)[1].split(". Argument mapping:")[0]
            pending.setdefault(name, []).append(types)
            seen[name] = types
        elif "Finished XLA compilation of jit(" in line:
            message = line[line.index("Finished XLA compilation of jit("):]
            name = message[len("Finished XLA compilation of jit("):message.rindex(") in ")]
            if pending.get(name):
                out.setdefault(name, []).append(pending[name].pop())
            elif name in seen:
                out.setdefault(name, []).append(seen[name])
    return out
