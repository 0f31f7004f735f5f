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
    """Swallow Python-level stdout/stderr, warnings and the log handlers already installed, and fd 2
    output.

    Logging itself stays on: a handler the student's code adds while it runs (to read JAX's
    compile log, say) receives its records, and writes nowhere but where that code sends them. Every
    handler that existed before (the kernel's own, one bound to the cell's stderr) drops them."""
    sink = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("ignore")
        with _fd2_to_devnull(), _handlers_muted():
            yield


def _drop(record) -> bool:
    return False


@contextlib.contextmanager
def _handlers_muted():
    """Every log handler installed now drops every record until the block ends."""
    loggers = [logging.root] + [lg for lg in list(logging.root.manager.loggerDict.values())
                                if isinstance(lg, logging.Logger)]
    muted = {id(h): h for lg in loggers for h in list(lg.handlers)}
    if logging.lastResort is not None:
        muted[id(logging.lastResort)] = logging.lastResort
    for handler in muted.values():
        handler.addFilter(_drop)
    try:
        yield
    finally:
        for handler in muted.values():
            handler.removeFilter(_drop)


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
