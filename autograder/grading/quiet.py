"""Keep a property run from writing to the cell's stderr.

nbgrader gives a test cell zero points if anything reaches stderr, so warnings,
log records and stray prints raised while the grader calls student code must not
escape: a correct answer must never lose points to JAX or hypothesis noise.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import warnings


@contextlib.contextmanager
def quiet():
    """Swallow Python-level stdout/stderr, warnings and logging, and fd 2 output."""
    sink = io.StringIO()
    previous_disable = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("ignore")
        with _fd2_to_devnull():
            try:
                yield
            finally:
                logging.disable(previous_disable)


@contextlib.contextmanager
def _fd2_to_devnull():
    """Route C-level writes on file descriptor 2 (XLA's own logging) to /dev/null."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        sys.__stderr__ and sys.__stderr__.flush()
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)
