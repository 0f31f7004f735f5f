"""``python -m autograder``: the instructor commands (see :mod:`autograder.tools.cli`).

A command that returns leaves as soon as every exit handler has run (fork servers closed,
temporary folders removed; its threads were joined before them): the interpreter's teardown
of the modules it loaded (nbgrader, SQLAlchemy, Dask) would take 0.3 s more, measured on the
Dask driver, and free nothing that outlives the process. The handler that leaves is registered
before the command imports anything, so it runs last; logging's, registered when this package
was imported, is run by it. An error or Ctrl-C leaves the usual way.
"""

import atexit
import os
import sys

_returned: list[int] = []


def _leave() -> None:
    if not _returned:
        return
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader went away
            pass
    os._exit(_returned[0])


atexit.register(_leave)

from autograder.tools import stdout  # noqa: E402

stdout.install()  # a reader that goes away (`| head -1`) stops no grading

from autograder.tools.cli import main  # noqa: E402  (after the handler, which must run last)

result = main()
_returned.append(0 if result is None else result if isinstance(result, int) else 1)  # as sys.exit reads it
sys.exit(result)
