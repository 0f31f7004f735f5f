"""Keeps the records in a logging.handlers.BufferingHandler attached to the "jax" logger (formatting them once the
work is over) and restores the option with a small context manager of its own; reads the log with a tracker class
that strips whatever prefix a handler added, remembers every lowering per function name and credits each "Finished
XLA compilation" to the newest lowering of that name not yet compiled. Correct.

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 2, 'test_programs': 4}


# %%
import contextlib
import logging.handlers


@contextlib.contextmanager
def _option(name, value):
    old = getattr(jax.config, name)
    jax.config.update(name, value)
    try:
        yield
    finally:
        jax.config.update(name, old)


def compile_log_of(work):
    keep = logging.handlers.BufferingHandler(capacity=10**9)
    keep.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("jax").addHandler(keep)
    try:
        with _option("jax_log_compiles", True):
            work()
    finally:
        logging.getLogger("jax").removeHandler(keep)
    text = "".join(keep.format(record) + "\n" for record in keep.buffer)
    keep.close()
    return text


# %%
class ProgramTracker:
    LOWERED = "Compiling jit("
    COMPILED = "Finished XLA compilation of jit("

    def __init__(self):
        self.lowered = {}       # name -> list of [types, times compiled]
        self.programs = {}

    @staticmethod
    def message(line, marker):
        at = line.find(marker)
        return None if at < 0 else line[at:]

    def feed(self, line):
        msg = self.message(line, self.LOWERED)
        if msg is not None and " with global shapes and types " in msg:
            head, types_and_rest = msg.split(" with global shapes and types ", 1)
            name = head[len(self.LOWERED):-1]
            types = types_and_rest.split(". Argument mapping:", 1)[0]
            self.lowered.setdefault(name, []).append([types, 0])
            return
        msg = self.message(line, self.COMPILED)
        if msg is None:
            return
        name = msg[len(self.COMPILED):].rsplit(") in ", 1)[0]
        entries = self.lowered.get(name, [])
        waiting = [entry for entry in entries if entry[1] == 0]
        chosen = waiting[-1] if waiting else (entries[-1] if entries else None)
        if chosen is not None:
            chosen[1] += 1
            self.programs.setdefault(name, []).append(chosen[0])


def compiled_programs(log_text):
    tracker = ProgramTracker()
    for line in log_text.splitlines():
        tracker.feed(line)
    return tracker.programs
