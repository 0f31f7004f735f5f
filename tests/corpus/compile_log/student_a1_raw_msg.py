"""Part A keeps record.msg instead of record.getMessage(). The trace and XLA-compilation records arrive already formatted, but the "Compiling %s with global shapes and types %s. Argument mapping: %s." record keeps its arguments apart, so that record appears in the text without the function or its shapes. Every record is there, in order, one per line, but one kind is empty of content (1.5/2).

Part A written by an independent-student helper that saw only the first release notebook, whose Part B asked for counts; Part B here is the reference's."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'captures_the_work'}
SCORE = 5
TEACHER = {'test_capture': 1.5, 'test_programs': 4}
REVIEW = "The grader gives 1: the lowering records lose their function's name; a teacher gave half of the first point for the records that kept theirs."



# %%
class MessageKeeper(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(str(record.msg))


def compile_log_of(work):
    keeper = MessageKeeper()
    logging.getLogger().addHandler(keeper)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        logging.getLogger().removeHandler(keeper)
    return "\n".join(keeper.messages) + "\n"


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
