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
    handler that existed before (the kernel's own, one bound to the cell's stderr) drops them, but
    for the notebook's own within :func:`heard`."""
    sink = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("ignore")
        with _fd2_to_devnull(), _handlers_muted():
            yield


def _drop(record) -> bool:
    return False


def _installed() -> dict:
    """Every handler of every logger there is now, by id."""
    loggers = [logging.root] + [lg for lg in list(logging.root.manager.loggerDict.values())
                                if isinstance(lg, logging.Logger)]
    return {id(h): h for lg in loggers for h in list(lg.handlers)}


@contextlib.contextmanager
def heard():
    """While the block runs (a call of the notebook's own code, inside :func:`quiet`), the notebook's
    own handlers hear the records again: those of a class the notebook defined that are no stream
    handler. They do only what the notebook's code does, which runs in the call anyway; muted, an
    honest `diagnose` reading JAX's compile log through a handler installed when its cell ran heard
    nothing (the red team's `diagnoses-with-an-earlier-handler`). A stream handler stays muted: made
    in an earlier cell, its stream is that cell's stderr; but not one that writes into a plain
    ``io.StringIO`` (a text kept in memory, which reaches no output): muted, a notebook that adds such
    a handler on every call and never removes one wrote each record once under grading and several
    times in class. Only within the student's call: a handler
    that raises then fails that call, as it does in the notebook, and never the serving code's own
    work with JAX around it (decoding arguments, running a thunk of the grader's)."""
    own = [h for h in _installed().values() if _drop in h.filters and _the_notebooks_own(h)]
    for handler in own:
        handler.removeFilter(_drop)
    try:
        yield
    finally:
        for handler in own:
            handler.addFilter(_drop)


def _the_notebooks_own(handler) -> bool:
    """A handler the notebook made that writes nowhere but where its code reads: one of a class the
    notebook defined that is no stream handler, or a stream handler on a plain ``io.StringIO`` (the
    exact class: a subclass could write anywhere)."""
    if isinstance(handler, logging.StreamHandler):
        return type(getattr(handler, "stream", None)) is io.StringIO
    return type(handler).__module__ == "__main__"


@contextlib.contextmanager
def _handlers_muted():
    """Every log handler installed now drops every record until the block ends."""
    muted = _installed()
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
