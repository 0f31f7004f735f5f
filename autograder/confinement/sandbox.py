"""Confine a grading kernel before any student code runs.

``course_config.py`` makes nbgrader start every autograde kernel with
``--IPKernelApp.exec_lines=['import autograder.confinement.sandbox']``, so this module runs
first in the kernel and:

- drops the notebook's own folder from ``sys.path``, so files handed in beside the
  notebook cannot replace the modules grading imports;
- puts a stand-in for the notebooks' ``selfcheck`` module, which runs no check while grading;
- caps the kernel's address space, file sizes and core dumps (``resource``), so a
  memory bomb ends in ``MemoryError`` in that kernel and one file cannot fill a disk;
- caps the number of processes and threads the kernel and its children may hold,
  with a Linux ``pids`` cgroup (made by :mod:`autograder.confinement.jail` when nbgrader started
  the kernel through it, else here), else with ``RLIMIT_NPROC``;
- imports what serving the judge needs (:mod:`autograder.grading.serve`; no property module,
  the properties run outside the kernel) and records the genuine grading objects
  (:mod:`autograder.grading.integrity`), so later patching by the notebook is reported;
- in a kernel the jail started: hides the grading package's files (they are loaded
  now), makes its sockets folder read-only (its sockets are bound: the folder is on the
  machine's disk, and nothing else may be written there) and gives up root for the user the jail chose, in every thread, so the
  notebook cannot undo any of the above, see the course, or keep privileges; in a
  kernel the rootless jail started (:mod:`autograder.confinement.userns`, which has
  dropped every capability already), has the jail's init hide them.

A kernel that cannot apply a limit keeps going without it, with one exception: a
kernel the jail started that cannot give up root exits before any student cell
runs (nbgrader then reports the notebook as not graded, with the reason in its
log), since as root it could undo its confinement.
"""

from __future__ import annotations

import ctypes
import linecache
import os
import resource
import sys
import time

from autograder.confinement import jail as _jail
from autograder.confinement import userns as _userns
from autograder.confinement import PACKAGE_ROOT
from autograder.confinement.jail import PROCESSES

MEMORY_BYTES = 6 * 2**30
#: Seconds the sandbox waits for the heartbeat's socket before it seals the sockets folder.
HEARTBEAT_BIND_SECONDS = 5
FILE_BYTES = 256 * 2**20
_PR_SET_NO_NEW_PRIVS = 38


def _limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _cap_processes() -> None:
    """Unless the jail did (it runs as root, before the kernel): a ``pids`` cgroup of the
    kernel's own, else ``RLIMIT_NPROC`` (per user, so it binds once the kernel drops root)."""
    if _jail.UID_ENV not in os.environ and _jail.join_pids_cgroup(os.getpid()) is None:
        _limit(resource.RLIMIT_NPROC, PROCESSES)


def _forget_working_folder() -> None:
    """Import nothing from the notebook's folder: files handed in next to a notebook
    (a ``hypothesis/`` package, say) must not stand in for the real modules."""
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != here]


def _self_check_stands_aside() -> None:
    """Each graded part's check cell runs ``from selfcheck import self_check`` (the public checks
    released beside the notebook, ``autograder/public/``). A grading kernel imports nothing from the
    notebook's folder, so the name is the course's own stand-in here: it runs no check (the grade
    cells below do) and says so in one line, where the student's copy would run, or be missing."""
    import types

    stand_in = types.ModuleType("selfcheck", "The self-check's stand-in while nbgrader grades.")

    def self_check(part, namespace=None):
        print(f"Self-check {part}: not run while nbgrader grades; the graded cell below checks this part.")

    stand_in.self_check = self_check
    sys.modules["selfcheck"] = stand_in


def confine() -> None:
    _forget_working_folder()
    _self_check_stands_aside()
    _limit(resource.RLIMIT_AS, MEMORY_BYTES)
    _limit(resource.RLIMIT_FSIZE, FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    _cap_processes()
    # Import what serving the judge uses now, before the notebook can touch it (never a property
    # module: the properties run outside the kernel, autograder/grading/judge.py).
    import autograder  # noqa: F401 - the package's names, in the tamper baseline
    from autograder.grading import compile_cache

    compile_cache.read_only()  # the reference's programs, where nbgrader lent the folder (confined kernels only)
    from autograder.grading import integrity as _integrity
    from autograder.grading import serve  # noqa: F401 - answers the judge's requests
    _integrity.record_baseline()
    if _jail.UID_ENV in os.environ:
        try:
            _become_the_kernels_user(int(os.environ[_jail.UID_ENV]))
        except (OSError, ValueError) as error:
            # Still root, in a view of the machine it could now undo: stop before any student cell.
            print(f"autograder: the grading kernel cannot give up root: {error}", file=sys.stderr)
            os._exit(70)
    elif _userns.HIDE_ENV in os.environ:  # the rootless jail: it has no capability left to hide them itself
        try:
            _userns.hide(str(PACKAGE_ROOT), seal=_sockets_folder())
            linecache.clearcache()
        except (OSError, ValueError) as error:
            print(f"autograder: the grading kernel cannot hide the grader's files: {error}", file=sys.stderr)
            os._exit(70)


def _sockets_folder() -> str | None:
    """The folder of this kernel's ZMQ ``ipc://`` sockets (nbgrader made it for this kernel
    alone), once every one of them is bound (the heartbeat binds in a thread of its own); None
    for a kernel on TCP (run unconfined) or outside ipykernel."""
    from ipykernel.kernelapp import IPKernelApp

    if not IPKernelApp.initialized() or IPKernelApp.instance().transport != "ipc":
        return None
    app = IPKernelApp.instance()
    heartbeat = getattr(app, "heartbeat", None)
    deadline = time.monotonic() + HEARTBEAT_BIND_SECONDS
    while heartbeat is not None and not os.path.exists(f"{heartbeat.ip}-{heartbeat.port}"):
        if time.monotonic() > deadline:
            break  # sealed all the same: a heartbeat that cannot bind only makes nbgrader wait
        time.sleep(0.01)
    return os.path.dirname(app.ip)


def _become_the_kernels_user(uid: int) -> None:
    """Hide the grader's files, then give up root for good (every thread: glibc's setxid)."""
    from autograder.kit import settings
    package = str(PACKAGE_ROOT)
    _jail.empty(package, read_only=True)
    sockets = _sockets_folder()
    if sockets is not None:
        _jail.seal(sockets)
    linecache.clearcache()
    for folder, _, files in os.walk(settings.HOME):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.chown(name, uid, uid)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _limit(resource.RLIMIT_NPROC, PROCESSES)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


confine()
