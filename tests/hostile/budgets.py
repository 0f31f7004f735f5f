"""Hostile entries: Notebooks that hold a worker: many slow cells, and replies that would swell the judge's memory."""

from __future__ import annotations

from .model import SMM, Hostile, points, zero
from .notebooks import insert_after

#: Seconds the hostile batch gives each notebook in all (``ConfinedExecute.notebook_timeout``, set by
#: tests/test_hostile.py): more than the slowest honest entry needs (one property to its 40 s limit,
#: then the rest, about 20 s on a loaded machine).
NOTEBOOK_SECONDS = 80

#: A cell that waits, and ignores the interrupt nbgrader sends at a cell's time limit: each such cell
#: stays under the per-cell limit, so only the notebook's budget bounds how long they hold a worker.
STALLS = '''
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(45)  # four of these: three minutes of a worker, for nothing
'''

#: `choose_reduction` right, but its first call writes a 30 MB line of `{}`s straight into the judge's
#: socket (found among the kernel's descriptors by its peer's name), ahead of the serving code's reply.
#: Parsed, such a line took nbgrader's process from 323 to 1854 MiB.
SWELLS_THE_JUDGE = '''
import os, socket, stat

_swelled = []


def _swell_the_judge():
    for fd in range(3, 256):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            peer = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if peer.family == socket.AF_UNIX and "judge-" in str(peer.getpeername()):
                peer.sendall(b"[" + b"{}," * 10_000_000 + b"{}]\\n")
                _swelled.append(fd)
        except OSError:
            pass
        finally:
            peer.close()  # the copy; the serving code's own descriptor stays open


_honest_choose_reduction = choose_reduction


def choose_reduction(values, mode):
    if not _swelled:
        _swell_the_judge()
    return _honest_choose_reduction(values, mode)
'''

ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # Every answer right, behind four stalling cells: past the budget the kernel is stopped and the
        # answers never run (without the budget: 6 of 6, after three minutes).
        "stalls-in-many-cells", SMM, tuple(insert_after("imports", STALLS) for _ in range(4)),
        zero(SMM), feedback=r"NotebookTimeout: (The notebook's time budget of \d+ s ran out while this cell ran"
                            r"|Not run: the notebook's time budget of \d+ s ran out)",
    ),
    Hostile(
        # The judge refuses the line unparsed (wire.MAX_VALUES) and hangs up: the group whose check made the
        # first call fails; the later groups, served honestly, keep their points.
        "swells-the-judge", SMM, (insert_after("choose_reduction", SWELLS_THE_JUDGE),),
        points(SMM, test_modes=0), feedback=r"kernel stopped answering the grader",
    ),
)
