"""Counts in the instructor commands' sentences: ``1 student``, ``3 students``."""

from __future__ import annotations


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun that goes with it: ``counted(1, "student")`` is ``1 student``,
    ``counted(3, "student")`` is ``3 students`` (``plural`` where adding an s is wrong)."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"
