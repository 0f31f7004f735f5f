"""Red team: Part B returns a key of a million newlines, each a feedback line and an HTML line in nbgrader's process (1.5 GB at that size). A field is cut to 4000 characters and 40 lines now, and the key shown as a short literal: both Part B properties lost, and nothing more."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"lists_the_compiled_programs", "compiled_lowerings_only"}
SCORE = 2


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
# A dict key of N newlines: the judge writes it raw into "Problem: The programs listed for `KEY` ...";
# render_html makes each line a <div style=...> of ~114 bytes (2 bytes on the wire each), and neither the
# judge's report nor the feedback output it becomes has any size limit (output_bytes applies to the
# kernel's messages only).  Both Part B properties fail on it, one reply each (32 MiB wire cap each).
_BLOAT = "\n" * 1_000_000


def compiled_programs(log_text):
    return {_BLOAT: ["x"]}
