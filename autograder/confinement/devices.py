"""The kernel's descriptors and terminals, the same in both jails (:mod:`jail`, :mod:`userns`).

Standard library only: the jails run as scripts (``python jail.py``), before the grading package
is anything a kernel may import, and load this module from their own folder.
"""

from __future__ import annotations

import contextlib
import os
import stat

#: The kernel's IPython folder, in its private ``/tmp`` (the home the kernel is given is hidden:
#: an empty folder it may not write in, or none at all).
IPYTHON_DIR = "/tmp/.ipython"
#: The pseudo-terminals' folder: an empty tmpfs in the kernel's view.
PTS = "/dev/pts"
MQUEUE = "/dev/mqueue"
#: Major numbers of terminal devices, whatever ``/proc/tty/drivers`` adds: BSD ptys (2, 3),
#: virtual consoles and serial lines (4), ``/dev/tty``, ``/dev/console`` and ``/dev/ptmx`` (5), the
#: consoles' screens (``/dev/vcs*``, 7), Unix98 pty masters and slaves (128-143).
TERMINAL_MAJORS = frozenset({2, 3, 4, 5, 7, *range(128, 144)})
#: Folders of ``/dev`` never searched for terminals: hidden whole, or private scratch.
_NOT_SEARCHED = (PTS, "/dev/shm", MQUEUE)


def terminal_majors() -> frozenset[int]:
    """:data:`TERMINAL_MAJORS` and every major ``/proc/tty/drivers`` names (USB serial lines,
    hypervisor consoles...): each is a terminal driver's, whatever the minor."""
    majors = set(TERMINAL_MAJORS)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        with open("/proc/tty/drivers", encoding="ascii") as drivers:
            for line in drivers:
                fields = line.split()
                if len(fields) >= 4 and fields[2].isdigit():
                    majors.add(int(fields[2]))
    return frozenset(majors)


def terminals(dev: str = "/dev") -> list[str]:
    """Every terminal device file under ``dev`` (symbolic links not followed; ``/dev/pts``,
    ``/dev/shm`` and ``/dev/mqueue`` not searched)."""
    majors, found, stack = terminal_majors(), [], [dev]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and entry.path not in _NOT_SEARCHED:
                stack.append(entry.path)
            elif stat.S_ISCHR(info.st_mode) and os.major(info.st_rdev) in majors:
                found.append(entry.path)
    return sorted(found)


def harmless_stream(fd: int) -> bool:
    """Whether descriptor ``fd`` may stay one of the kernel's streams: a pipe or socket (nbgrader's
    own), or ``/dev/null``; not a terminal, a file of the instructor's, or closed."""
    try:
        info = os.fstat(fd)
    except OSError:
        return False
    if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
        return True
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev


def keep_only_descriptors(keep: tuple[int, ...] | list[int] = ()) -> None:
    """The kernel's descriptor table made explicit: its streams 0, 1 and 2 as nbgrader gave them
    (``/dev/null`` and the kernel manager's pipe), but ``/dev/null`` in place of any that is a
    terminal, another file, or closed; every other descriptor closed, whatever its number, but
    those in ``keep``."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        if not harmless_stream(fd):
            null = os.open(os.devnull, flags)  # lands on fd itself if fd was closed
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    start = 3
    for fd in sorted({fd for fd in keep if fd >= 3}):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))
