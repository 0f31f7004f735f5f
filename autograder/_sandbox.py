"""Confine a grading kernel before any student code runs.

``course_config.py`` makes nbgrader start every autograde kernel with
``--IPKernelApp.exec_lines=['import autograder._sandbox']``, so this module runs
first in the kernel and:

- drops the notebook's own folder from ``sys.path``, so files handed in beside the
  notebook cannot replace the modules grading imports;
- caps the kernel's address space, file sizes and core dumps (``resource``), so a
  memory bomb ends in ``MemoryError`` in that kernel and one file cannot fill a disk;
- caps the number of processes and threads the kernel and its children may hold,
  with a Linux ``pids`` cgroup where one can be created (a fork bomb stops there),
  else with ``RLIMIT_NPROC`` (which does not bind root);
- imports what grading needs and records the genuine grading objects
  (:mod:`autograder._integrity`), so later patching by the notebook is reported;
- takes the key nbgrader issued for sealing this notebook's results
  (:mod:`autograder._seal`) before any student code can read it.

It does not change the kernel's user: where Python itself lives in a private home
(as on these machines), an unprivileged kernel could not import the standard library.

A kernel that cannot apply a limit keeps going without it: this module never
stops a notebook from being graded.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
from pathlib import Path

MEMORY_BYTES = 6 * 2**30
FILE_BYTES = 256 * 2**20
PROCESSES = 256  # threads count too: XLA's pools need a few dozen


def _limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _cap_processes() -> None:
    """Put this kernel in a fresh ``pids`` cgroup (cgroup v1 or v2) capped at PROCESSES."""
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
        if not (root / "cgroup.procs").exists():
            continue
        parent = root / "autograder-kernels"
        try:
            parent.mkdir(exist_ok=True)
            for stale in parent.iterdir():  # groups of kernels that have exited
                if stale.is_dir():
                    with contextlib.suppress(OSError):
                        stale.rmdir()
            group = parent / str(os.getpid())
            group.mkdir(exist_ok=True)
            (group / "pids.max").write_text(str(PROCESSES))
            (group / "cgroup.procs").write_text(str(os.getpid()))
            return
        except OSError:
            continue
    _limit(resource.RLIMIT_NPROC, PROCESSES)


def _forget_working_folder() -> None:
    """Import nothing from the notebook's folder: files handed in next to a notebook
    (a ``hypothesis/`` package, say) must not stand in for the real modules."""
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != here]


def confine() -> None:
    _forget_working_folder()
    _limit(resource.RLIMIT_AS, MEMORY_BYTES)
    _limit(resource.RLIMIT_FSIZE, FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    _cap_processes()
    # Import what grading uses now, before the notebook can touch it.
    from . import _grade, _integrity, _registry, _seal

    for assignment in _registry.ASSIGNMENTS:
        _registry.properties(assignment)
    _grade._sealer = _seal.install(_grade.grade.__code__)
    _integrity.record_baseline()


confine()
