"""Standard output whose reader may leave before the command ends.

``python -m autograder autograde ... | head -1`` closes the pipe after one line; the next write
raised ``BrokenPipeError`` from the progress line and stopped the grading midway, its traceback
on the terminal. A grading run, a mutants run or a bench is worth more than its output: once the
reader is gone, the command's output goes to ``/dev/null`` (file descriptor 1 pointed there, so
what Python had buffered goes too), one line on stderr says so, and the command goes on to its
usual end and exit code.
"""

from __future__ import annotations

import os
import sys

#: Said once on stderr when the reader goes.
GONE = "autograder: the reader of this command's output went away; the command goes on, its output dropped"


class Stdout:
    """``stream`` (sys.stdout), writing to /dev/null once its reader has gone."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._went()
            return self._stream.write(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._went()
            self._stream.flush()

    def _went(self) -> None:
        if self.gone:
            return
        self.gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)
        try:
            print(GONE, file=sys.stderr, flush=True)
        except OSError:  # stderr's reader gone too
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def install() -> None:
    """Make ``sys.stdout`` a :class:`Stdout`, once."""
    if not isinstance(sys.stdout, Stdout) and sys.stdout is not None:
        sys.stdout = Stdout(sys.stdout)
