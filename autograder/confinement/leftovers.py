"""Private temporary folders that do not outlive their process by long.

A process removes its folders when it exits, but a process killed outright runs no exit handler:
a grading process whose Dask worker died (``PR_SET_PDEATHSIG``), a command killed with SIGKILL or
by the OOM killer. Each folder's name says which process made it, and the next process that makes
one of the same kind removes those whose maker is gone and that have not changed for
:data:`STALE_SECONDS` (a second guard: a process of another PID namespace sharing the folder's
parent would look gone).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
import time

#: Seconds a folder of a process that is gone stays untouched before another process removes it.
STALE_SECONDS = 3600.0


def private_folder(kind: str, parent: str | None = None) -> str:
    """A new folder (0700) named ``autograder-KIND-PID-XXXXXXXX`` in ``parent`` (the temporary
    folder by default), removed when this process exits; stale ones of the same kind go first."""
    parent = parent or tempfile.gettempdir()
    remove_stale(kind, parent)
    folder = tempfile.mkdtemp(prefix=f"autograder-{kind}-{os.getpid()}-", dir=parent)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def remove_stale(kind: str, parent: str, now: float | None = None) -> list[str]:
    """Remove this user's ``kind`` folders in ``parent`` whose maker is gone and that have not
    changed for :data:`STALE_SECONDS`; the folders removed."""
    named = re.compile(rf"autograder-{re.escape(kind)}-(\d+)-[\w]+")
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        made_by = named.fullmatch(entry.name)
        if made_by is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
                or now - info.st_mtime < STALE_SECONDS or _running(int(made_by[1]))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
