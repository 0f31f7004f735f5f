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
- a folder nested deeper than :data:`MAX_DEPTH`, or entries past :data:`MAX_ENTRIES`;
- a notebook over :attr:`SubmissionBoundary.max_notebook_bytes`, or of more than
  :data:`NOTEBOOK_VALUES` JSON values once parsed (:func:`notebook_problem`);
- a ``timestamp.txt`` that does not hold a time in the form nbgrader writes (:func:`readable_time`).

:func:`copy_submission` copies what passes into a folder of the course's and says what it
refused; :mod:`autograder.confinement.converters` puts it in front of nbgrader's collect,
autograde and feedback. Each refusal is written, one sentence a line, to :data:`RECORD` in the
copy, so it travels with the submission to ``autograded/`` and the student's ``feedback/``, and the
class report reads it there.
"""

from __future__ import annotations

import datetime
import errno
import fnmatch
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field

from traitlets import Int
from traitlets.config import LoggingConfigurable

from autograder.confinement.student_ids import usable_student_id  # noqa: F401 - the boundary's word on ids

#: The course's note of what it refused, beside the notebook. A student's file of that name is refused.
RECORD = "submission-refused.txt"
#: Folders within folders a submission may hold, and entries in all.
MAX_DEPTH = 8
MAX_ENTRIES = 1000
#: Lines of refusals a record keeps (then one line says how many more there were).
RECORD_LINES = 50
#: JSON values a notebook may hold once parsed. A course notebook with its outputs holds a few
#: thousand; nbgrader's own process parses it, validates it and copies it several times, so a file
#: under the size cap made of many tiny values costs gigabytes there.
NOTEBOOK_VALUES = 500_000
_CHUNK = 1 << 20
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MiB = 1 << 20


class SubmissionBoundary(LoggingConfigurable):
    """The sizes a submission may have (``c.SubmissionBoundary.max_file_bytes = ...``)."""

    # Defaults: nbgrader's own limits for collect (CourseDirectory.max_file_size and max_dir_size,
    # 100000 kilobytes each), which it reads with a size a device reports as 0.
    max_file_bytes = Int(
        100_000_000, config=True,
        help="The largest file a submission may hold, notebook included, in bytes (apparent size).",
    )
    max_submission_bytes = Int(
        100_000_000, config=True, help="The most bytes a submission may hold in all, in bytes (apparent size).",
    )
    max_notebook_bytes = Int(
        32_000_000, config=True,
        help="The largest notebook, in bytes: nbgrader's process holds it parsed several times over (about 13 bytes "
             "of memory a byte at worst), in each worker.",
    )


@dataclass(frozen=True)
class Refusal:
    """One entry of a submission that was not copied, and why."""

    path: str  #: relative to the submission's folder, as :func:`shown`
    why: str  #: the rest of the sentence: "is a symbolic link"

    def sentence(self) -> str:
        return f"submission refused: {self.path} {self.why}"


def shown(name: str) -> str:
    """``name`` safe to print in a log: every character that is not printable (control characters,
    bytes that were not UTF-8) as its escape. Markup stays markup: a page or a comment rendered as
    markdown escapes it again (:func:`autograder.confinement.sanitise.literal_markdown`)."""
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

    def __init__(self, limits: SubmissionBoundary, ignore: list[str], reserved: tuple[str, ...], one_link: bool,
                 first: tuple[str, ...] = ()):
        self.limits = limits
        self.first = first
        self.ignore = ignore
        self.reserved = reserved
        self.one_link = one_link
        self.total = 0
        self.entries = 0
        self.refused: list[Refusal] = []
        self.copied: list[str] = []
        self.latest_change = 0.0

    def refuse(self, path: str, why: str) -> None:
        self.refused.append(Refusal(shown(path), why))

    def folder(self, src_fd: int, dest: str, rel: str, depth: int) -> None:
        os.makedirs(dest, mode=0o755, exist_ok=True)
        self.latest_change = max(self.latest_change, os.fstat(src_fd).st_ctime)
        try:
            names = sorted(os.listdir(src_fd))
        except OSError as error:
            self.refuse(rel or ".", f"could not be listed ({error.strerror})")
            return
        if not rel:  # the submission's own notebooks within the entries it may hold, and their refusals first
            names.sort(key=lambda name: name not in self.first)
        for name in names:
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
            # What was opened, whatever the name was a moment before (a folder swapped in included).
            why = _kind(st.st_mode) or (None if stat.S_ISREG(st.st_mode) else "changed while it was read")
            if why:
                self.refuse(path, why)
                return
            self.latest_change = max(self.latest_change, st.st_ctime)
            if self.one_link and st.st_nlink != 1:
                self.refuse(path, f"has {st.st_nlink} hard links (only a file of its own is read)")
                return
            cap = self.limits.max_file_bytes
            if "/" not in path and path.endswith(".ipynb"):
                cap = min(cap, self.limits.max_notebook_bytes)
            if st.st_size > cap:
                kind = "notebook" if cap < self.limits.max_file_bytes else "file"
                self.refuse(path, f"is {_size(st.st_size)}, over the course's {_size(cap)} per {kind}")
                return
            if self.total + st.st_size > self.limits.max_submission_bytes:
                self.refuse(path, f"would take the submission over the course's "
                                  f"{_size(self.limits.max_submission_bytes)} in all")
                return
            data = bytearray()
            try:
                while len(data) <= st.st_size:  # a file growing as it is read stops here
                    chunk = os.read(fd, min(_CHUNK, st.st_size + 1 - len(data)))
                    if not chunk:
                        break
                    data += chunk
            except OSError as error:
                self.refuse(path, f"could not be read ({error.strerror})")
                return
            if len(data) != st.st_size:
                self.refuse(path, "changed while it was read")
                return
        finally:
            os.close(fd)
        if path == "timestamp.txt" and readable_time(bytes(data).decode("utf-8", "replace")) is None:
            self.refuse(path, "does not hold a time nbgrader can read")
            return
        if "/" not in path and path.endswith(".ipynb"):
            why = notebook_problem(bytes(data))
            if why:
                self.refuse(path, why)
                return
        self.total += len(data)
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(out, "wb") as f:
            f.write(data)
        self.copied.append(path)


@dataclass
class Copied:
    """What :func:`copy_submission` did: what it refused, and when the submission last changed."""

    refused: list[Refusal] = field(default_factory=list)
    #: The latest status change (``st_ctime``) of the folders and files it read: a time no student can set.
    latest_change: float = 0.0

    def sentences(self) -> list[str]:
        return [r.sentence() for r in self.refused]


def copy_submission(src: str, dest: str, limits: SubmissionBoundary, ignore: list[str] = (),
                    reserved: tuple[str, ...] = (RECORD,), one_link: bool = True,
                    first: tuple[str, ...] = ()) -> Copied:
    """Copy the submission folder ``src`` into ``dest`` (which must not exist), entry by entry as
    the module says; the names in ``first`` (the assignment's notebooks, ``timestamp.txt``) before any
    other entry at the top, so that no crowd of files beside them takes their place among the
    :data:`MAX_ENTRIES` or their refusal's place in the record. ``src`` itself must be a real
    folder: if it is not, nothing is copied, ``dest`` is made empty and the one refusal names the
    folder. ``one_link=False`` accepts files
    with other names too: for the course's own folders (``submitted/`` after a collect, which a
    backup made with hard links may share), never for the exchange, where students write."""
    copy = _Copy(limits, list(ignore), reserved, one_link, tuple(first))
    try:
        fd = os.open(src, _DIR_FLAGS)
    except OSError as error:
        os.makedirs(dest, mode=0o755)
        try:
            why = _kind(os.lstat(src).st_mode) or f"could not be read ({error.strerror})"
        except OSError:
            why = "could not be read"
        return Copied([Refusal(shown(os.path.basename(src.rstrip("/"))) + "/", f"(the submission's folder) {why}")])
    try:
        if os.path.exists(dest):
            raise FileExistsError(errno.EEXIST, "the boundary copies into a new folder only", dest)
        copy.folder(fd, dest, "", 0)
    finally:
        os.close(fd)
    return Copied(copy.refused, copy.latest_change)


#: The times nbgrader writes (``2026-12-04 18:00:00.123456 UTC``), with a numeric offset or none.
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?( ?(UTC|Z|[+-]\d{2}:?\d{2}))?\Z")


def canonical_time(when: datetime.datetime) -> str:
    """``when`` (naive, in UTC) as nbgrader's submit writes a timestamp."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def readable_time(text: str | None) -> datetime.datetime | None:
    """The time in ``text`` as nbgrader reads a timestamp (``parse_utc``: naive, in UTC), or None when nbgrader
    could not read it or it is not a time a submission can have (before 2000, or tomorrow)."""
    from nbgrader.utils import parse_utc

    if not text or not _TIME.match(text.strip()):
        return None  # parse_utc would read much more: a zone naming a file is opened and read
    try:
        when = parse_utc(text.strip())  # naive, in UTC, as nbgrader compares times
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        if datetime.datetime(2000, 1, 1) <= when <= now + datetime.timedelta(days=1):
            return when
    except Exception:  # noqa: BLE001 - dateutil raises ValueError, OverflowError, its ParserError...
        pass
    return None


_NOTEBOOK_CHECK = f"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
try:
    value = json.loads(sys.stdin.buffer.read())
except (ValueError, RecursionError):
    print("ok")  # not JSON: nbgrader says so itself, for this notebook alone
    sys.exit()
count, stack = 0, [value]
while stack:
    item = stack.pop()
    count += 1
    if count > {NOTEBOOK_VALUES}:
        print("too-many")
        sys.exit()
    if isinstance(item, dict):
        stack.extend(item.values())
    elif isinstance(item, list):
        stack.extend(item)
print("ok")
"""


def notebook_problem(data: bytes) -> str | None:
    """Why nbgrader's process should not parse the notebook ``data``; None when it may. Parsed in a
    process of its own, within 1 GiB and 60 s, so a notebook built to swell costs only that."""
    if data.count(b"{") + data.count(b"[") + data.count(b",") < NOTEBOOK_VALUES // 2:
        return None  # fewer separators than values it could hold: no need to look closer
    try:
        said = subprocess.run([sys.executable, "-I", "-S", "-c", _NOTEBOOK_CHECK], input=data, capture_output=True,
                              timeout=60).stdout.decode().strip()
    except subprocess.TimeoutExpired:
        said = "too-slow"
    if said == "ok":
        return None
    if said == "too-many":
        return f"is a notebook of more than {NOTEBOOK_VALUES:,} values once parsed (the course reads at most that)"
    return "is a notebook the course could not parse within 1 GiB and 60 s"


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
        text = os.read(fd, 256 * 1024).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return [shown(line) for line in text.splitlines() if line.strip()][:RECORD_LINES + 1]  # as write_record keeps them


_MORE = re.compile(r"submission refused: (\d+) more entries, each for a reason above\Z")


def kept(lines: list[str], limit: int = RECORD_LINES) -> list[str]:
    """The first ``limit`` of ``lines``, and one line saying how many more there were (a count
    already among ``lines``, from a record kept before, is carried on)."""
    counted = [int(m[1]) for m in map(_MORE.match, lines) if m]
    lines = [line for line in lines if not _MORE.match(line)]
    more = sum(counted) + max(0, len(lines) - limit)
    return [*lines[:limit], *([f"submission refused: {more} more entries, each for a reason above"] if more else [])]


def write_record(folder: str, lines: list[str]) -> None:
    """Note ``lines`` (each a refusal's sentence; at most :data:`RECORD_LINES` kept) in
    ``folder``'s :data:`RECORD`."""
    if lines:
        with open(os.path.join(folder, RECORD), "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in kept(lines)))


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
