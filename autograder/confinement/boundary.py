"""The submission boundary: what a student hands in is read only as regular files.

nbgrader does work for a student before any kernel exists, in its own process, as the
instructor: ``collect`` copies the exchange's ``inbound/`` folder with ``shutil.copytree``,
``autograde`` copies every file beside the notebook with ``shutil.copy`` and opens the notebook by
path, ``generate_feedback`` copies the autograded folder again. All of them follow links and read
devices until their end. This module is the one place a submission is read from: every entry is
looked at with ``lstat`` (through the folder's descriptor, never by a path that could change
under it) and opened with ``O_NOFOLLOW``, and only a real folder or a regular file with one link,
within the course's sizes, is copied. Anything else is refused, named, and not read at all:

- a symbolic link (to a classmate's notebook, the gradebook, ``/proc/self/environ``);
- a device, a named pipe or a socket (``/dev/ptmx`` never ends, ``/dev/zero`` fills the disk);
- a regular file with more than one hard link (another name for a file somebody else owns);
- a file over :attr:`SubmissionBoundary.max_file_bytes`, or one that would take the submission
  over :attr:`SubmissionBoundary.max_submission_bytes` (a sparse file counts at its apparent size);
- a name holding control characters (shown escaped, never raw);
- a folder nested deeper than :data:`MAX_DEPTH`, or entries past :data:`MAX_ENTRIES`.

:func:`copy_submission` copies what passes into a folder of the course's and says what it
refused; :mod:`autograder.confinement.converters` puts it in front of nbgrader's collect,
autograde and feedback. Each refusal is written, one sentence a line, to :data:`RECORD` in the
copy, so it travels with the submission to ``autograded/`` and the student's ``feedback/``, and the
class report reads it there.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from dataclasses import dataclass

from traitlets import Int
from traitlets.config import LoggingConfigurable

#: The course's note of what it refused, beside the notebook. A student's file of that name is refused.
RECORD = "submission-refused.txt"
#: Folders within folders a submission may hold, and entries in all.
MAX_DEPTH = 8
MAX_ENTRIES = 1000
_CHUNK = 1 << 20
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MiB = 1 << 20


class SubmissionBoundary(LoggingConfigurable):
    """The sizes a submission may have (``c.SubmissionBoundary.max_file_bytes = ...``)."""

    max_file_bytes = Int(
        20 * _MiB, config=True,
        help="The largest file a submission may hold, notebook included, in bytes (apparent size).",
    )
    max_submission_bytes = Int(
        50 * _MiB, config=True, help="The most bytes a submission may hold in all, in bytes (apparent size).",
    )


@dataclass(frozen=True)
class Refusal:
    """One entry of a submission that was not copied, and why."""

    path: str  #: relative to the submission's folder, as :func:`shown`
    why: str  #: the rest of the sentence: "is a symbolic link"

    def sentence(self) -> str:
        return f"submission refused: {self.path} {self.why}"


def shown(name: str) -> str:
    """``name`` safe to print in a log, a page or a CSV: every character that is not printable
    (control characters, bytes that were not UTF-8) as its escape."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in name)


def _size(n: int) -> str:
    return f"{n / _MiB:.1f} MiB" if n >= _MiB else f"{n} bytes"


def _kind(mode: int) -> str | None:
    """Why an entry of this mode is refused; None for a folder or a regular file."""
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if stat.S_ISCHR(mode):
        return "is a character device"
    if stat.S_ISBLK(mode):
        return "is a block device"
    if stat.S_ISFIFO(mode):
        return "is a named pipe"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


class _Copy:
    """One submission being copied: the budget it has left and what it refused."""

    def __init__(self, limits: SubmissionBoundary, ignore: list[str], reserved: tuple[str, ...]):
        self.limits = limits
        self.ignore = ignore
        self.reserved = reserved
        self.total = 0
        self.entries = 0
        self.refused: list[Refusal] = []
        self.copied: list[str] = []

    def refuse(self, path: str, why: str) -> None:
        self.refused.append(Refusal(shown(path), why))

    def folder(self, src_fd: int, dest: str, rel: str, depth: int) -> None:
        os.makedirs(dest, mode=0o755, exist_ok=True)
        for name in sorted(os.listdir(src_fd)):
            path = f"{rel}/{name}" if rel else name
            if any(fnmatch.fnmatch(name, pattern) for pattern in self.ignore):
                continue  # nbgrader would skip it too: nothing of it is read
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.refuse(path, f"is past the {MAX_ENTRIES} entries a submission may hold")
                continue
            if not name.isprintable():
                self.refuse(path, "has a name with control characters")
                continue
            if not rel and name in self.reserved:
                self.refuse(path, "has a name the course keeps for its own notes")
                continue
            try:
                st = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
            except OSError as error:
                self.refuse(path, f"could not be read ({error.strerror})")
                continue
            why = _kind(st.st_mode)
            if why:
                self.refuse(path, why)
            elif stat.S_ISDIR(st.st_mode):
                if depth >= MAX_DEPTH:
                    self.refuse(path, f"is a folder deeper than the {MAX_DEPTH} a submission may hold")
                    continue
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=src_fd)
                except OSError as error:
                    self.refuse(path, f"could not be read ({error.strerror})")
                    continue
                try:
                    self.folder(fd, os.path.join(dest, name), path, depth + 1)
                finally:
                    os.close(fd)
            else:
                self.file(src_fd, name, os.path.join(dest, name), path)

    def file(self, src_fd: int, name: str, dest: str, path: str) -> None:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=src_fd)
        except OSError as error:
            self.refuse(path, "is a symbolic link" if error.errno == errno.ELOOP
                        else f"could not be read ({error.strerror})")
            return
        try:
            st = os.fstat(fd)
            why = _kind(st.st_mode)  # what was opened, whatever the name pointed to a moment before
            if why:
                self.refuse(path, why)
                return
            if st.st_nlink != 1:
                self.refuse(path, f"has {st.st_nlink} hard links (only a file of its own is read)")
                return
            cap = self.limits.max_file_bytes
            if st.st_size > cap:
                self.refuse(path, f"is {_size(st.st_size)}, over the course's {_size(cap)} per file")
                return
            if self.total + st.st_size > self.limits.max_submission_bytes:
                self.refuse(path, f"would take the submission over the course's "
                                  f"{_size(self.limits.max_submission_bytes)} in all")
                return
            data = bytearray()
            while len(data) <= st.st_size:  # a file growing as it is read stops here
                chunk = os.read(fd, min(_CHUNK, st.st_size + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
            if len(data) != st.st_size:
                self.refuse(path, "changed while it was read")
                return
        finally:
            os.close(fd)
        self.total += len(data)
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(out, "wb") as f:
            f.write(data)
        self.copied.append(path)


def copy_submission(src: str, dest: str, limits: SubmissionBoundary, ignore: list[str] = (),
                    reserved: tuple[str, ...] = (RECORD,)) -> list[Refusal]:
    """Copy the submission folder ``src`` into ``dest`` (which must not exist), entry by entry as
    the module says; return what was refused. ``src`` itself must be a real folder: if it is
    not, nothing is copied, ``dest`` is made empty and the one refusal names the folder."""
    copy = _Copy(limits, list(ignore), reserved)
    try:
        fd = os.open(src, _DIR_FLAGS)
    except OSError as error:
        os.makedirs(dest, mode=0o755)
        try:
            why = _kind(os.lstat(src).st_mode) or f"could not be read ({error.strerror})"
        except OSError:
            why = "could not be read"
        return [Refusal(shown(os.path.basename(src.rstrip("/"))) + "/", f"(the submission's folder) {why}")]
    try:
        if os.path.exists(dest):
            raise FileExistsError(errno.EEXIST, "the boundary copies into a new folder only", dest)
        copy.folder(fd, dest, "", 0)
    finally:
        os.close(fd)
    return copy.refused


def read_record(folder: str) -> list[str]:
    """The refusals already noted in ``folder``'s :data:`RECORD` (read through the boundary:
    a record that is not a regular file of its own says nothing)."""
    try:
        fd = os.open(os.path.join(folder, RECORD), _READ_FLAGS)
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return []
        text = os.read(fd, 64 * 1024).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return [shown(line) for line in text.splitlines() if line.strip()]


def write_record(folder: str, lines: list[str]) -> None:
    """Note ``lines`` (each a refusal's sentence) in ``folder``'s :data:`RECORD`."""
    if lines:
        with open(os.path.join(folder, RECORD), "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))


def read_timestamp_text(folder: str) -> str | None:
    """``folder``'s ``timestamp.txt`` as nbgrader would read it, through the boundary: None when
    it is absent or not a small regular file of its own."""
    try:
        fd = os.open(os.path.join(folder, "timestamp.txt"), _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > 4096:
            return None
        return os.read(fd, 4096).decode("utf-8", "replace").strip() or None
    finally:
        os.close(fd)


def is_regular_file(path: str) -> bool:
    """Whether ``path`` is itself a regular file (a link to one is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
