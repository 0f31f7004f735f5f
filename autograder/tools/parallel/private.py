"""Files of the instructor's alone: the parallel command's locks, and the keys of a Dask cluster.

A path another local user can guess, in a folder that user can write (``/tmp``, an exchange),
is theirs to take first: a lock file there that they hold with ``flock`` stops every later run,
and a link planted at its name turns an ``open(path, "w")`` into the truncation of whatever it
points at (red team, issue 51: ``gradebook.db``). So the command keeps such files in a folder
only the instructor can write or read (:func:`private_folder`; for the locks, :data:`FOLDER`
beside the gradebook in the course folder, which is the instructor's), and opens each one
without following a link and without truncating it (:func:`open_owned`), refusing anything
that is not a regular file of the instructor's, with the problem and the fix named.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from autograder.tools.errors import ParallelError

#: The instructor's private folder in the course folder: the parallel command's locks.
FOLDER = ".autograde"


class PrivateFileError(ParallelError):
    """A file or folder that should be the instructor's alone is not (another user's, a link,
    readable or writable by others): the command stops rather than use it."""


def _owner_and_mode(info: os.stat_result) -> str:
    return f"owned by uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o}"


def private_folder(path: Path, make: bool = True) -> Path:
    """``path``, a folder that only this user can enter, read or write (with ``make``, made, mode
    0700, where missing). Raises :class:`PrivateFileError` when it is a link, not a folder, another
    user's, or open to the group or others."""
    path = Path(path)
    try:
        if make:
            path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    except OSError as error:
        raise PrivateFileError(f"autograde: cannot make the private folder {path}: {error.strerror}") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        try:  # another user's folder cannot be opened (0700): say whose it is, not "a link, or a file"
            info = os.lstat(path)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid != os.geteuid():
            _refuse_unless_private(path, info, "folder")
        raise PrivateFileError(
            f"autograde: {path} should be a folder of yours alone, and is not one ({error.strerror}: a link, or "
            "a file); remove it and run the command again") from None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    _refuse_unless_private(path, info, "folder")
    return path


def _refuse_unless_private(path: Path, info: os.stat_result, kind: str) -> None:
    if info.st_uid != os.geteuid():
        raise PrivateFileError(
            f"autograde: the {kind} {path} is not yours ({_owner_and_mode(info)}; you are uid {os.geteuid()}): "
            "another user made it, and could hold or replace what it holds; remove it (or move it aside) and run the "
            "command again" + (" (where several accounts grade one course, the parallel command runs as the account "
                               "that made it)" if kind == "folder" else ""))
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise PrivateFileError(
            f"autograde: the {kind} {path} is open to other users ({_owner_and_mode(info)}); "
            f"make it yours alone (chmod go= {path}) and run the command again")


def open_owned(folder: Path, name: str) -> int:
    """A descriptor, read and write, of the regular file ``name`` in ``folder``, created (mode
    0600) where missing: never through a link (``O_NOFOLLOW``), never truncated, refused
    (:class:`PrivateFileError`) unless it is a regular file of this user's with no other name
    (a hard link to the gradebook planted there would be the gradebook)."""
    path = Path(folder) / name
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        # Through the folder's own descriptor: a folder swapped for a link, or for another user's,
        # after the caller looked at it (a group-writable course) is refused here.
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise PrivateFileError(f"autograde: cannot open the folder {folder} ({error.strerror}: a link is "
                               "refused); remove it and run the command again") from None
    try:
        owner = os.fstat(folder_fd).st_uid
        if owner != os.geteuid():
            raise PrivateFileError(f"autograde: the folder {folder} is not yours (owned by uid {owner}; you are "
                                   f"uid {os.geteuid()}): another user made it; move it aside and run the command again")
        fd = os.open(name, flags, 0o600, dir_fd=folder_fd)
    except OSError as error:
        raise PrivateFileError(
            f"autograde: cannot open {path} ({error.strerror}: a link planted at its name is refused); "
            "remove it and run the command again") from None
    finally:
        os.close(folder_fd)
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_uid != os.geteuid():
        problem = f"is not yours ({_owner_and_mode(info)}; you are uid {os.geteuid()})"
    elif info.st_nlink != 1:
        problem = f"has {info.st_nlink} names (a hard link to another file)"
    if problem:
        os.close(fd)
        raise PrivateFileError(f"autograde: {path} {problem}; it was left untouched: remove it and run the "
                               "command again")
    return fd


def check_private_file(path: Path) -> Path:
    """``path``, once it is known to be a regular file (not a link) of this user's that no one
    else may read (a key); :class:`PrivateFileError` otherwise."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as error:
        raise PrivateFileError(f"autograde: cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise PrivateFileError(f"autograde: {path} should be a regular file, and is a link or something else; "
                               "make it a file and run the command again")
    _refuse_unless_private(path, info, "file")
    return path
