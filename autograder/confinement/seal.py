"""Seals: proof, checked outside the kernel, that a graded cell's points came from
the course's own ``grade``.

nbgrader scores a test cell by its output, and the kernel that produces the output
also runs the student's code. A notebook could therefore put a fake ``autograder``
in ``sys.modules`` whose ``grade`` prints full points. To stop that, nbgrader's
process (:class:`autograder.confinement.preprocessors.IssueSeal`) hands each kernel a fresh
random key in a file, which the jail (:mod:`autograder.confinement.jail`) moves into a pipe
and the sandbox reads before any student cell runs (without the jail, the sandbox
reads and deletes the file); the genuine ``grade`` appends a line sealed with that key; and
:class:`autograder.confinement.preprocessors.VerifySeals`, again in nbgrader's process,
gives zero to a graded cell without a valid seal for its own points.

Limit: the key lives in the kernel's memory. Code written to dig it out of the
grader's internals can forge a seal; that is beyond casual tampering, and stated in
the README's threat model.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import sys
from pathlib import Path

from autograder.confinement.jail import KEY_FD_ENV, KEY_FILE_ENV

_LINE = re.compile(r"^\[autograder seal (\S+) (\S+) (\S+) ([0-9a-f]{64})\]$", re.M)


def _mac(key: bytes, assignment: str, group: str, earned: str) -> str:
    return hmac.new(key, f"{assignment}|{group}|{earned}".encode(), hashlib.sha256).hexdigest()


def install(grade_code) -> object | None:
    """In the kernel, at start: take the key and return a sealer only ``grade_code`` may call."""
    key = _take_key()
    if not key:
        return None

    def seal(assignment: str, group: str, earned: float) -> str:
        if sys._getframe(1).f_code is not grade_code:
            raise PermissionError("only the course's grade() may seal a result")
        points = f"{earned:g}"
        return f"[autograder seal {assignment} {group} {points} {_mac(key, assignment, group, points)}]"

    return seal


def _take_key() -> bytes | None:
    fd, path = os.environ.pop(KEY_FD_ENV, None), os.environ.pop(KEY_FILE_ENV, None)
    try:
        if fd:
            with os.fdopen(int(fd), "rb") as pipe:
                return pipe.read()
        if path:
            key = Path(path).read_bytes()
            Path(path).unlink()
            return key
    except (OSError, ValueError):
        pass
    return None


def check(key: bytes, text: str, assignment: str, group: str, points: float) -> bool:
    """In nbgrader's process: does ``text`` hold exactly one valid seal for these points?"""
    seals = _LINE.findall(text)
    if len(seals) != 1:
        return False
    sealed_assignment, sealed_group, sealed_points, mac = seals[0]
    return (
        (sealed_assignment, sealed_group) == (assignment, group)
        and float(sealed_points) == points
        and hmac.compare_digest(mac, _mac(key, sealed_assignment, sealed_group, sealed_points))
    )


def strip(text: str) -> str:
    """The text without seal lines (students need not see them)."""
    return _LINE.sub("", text).replace("\n\n\n", "\n\n")
