"""nbgrader preprocessors of this course, named in ``course_config.py``.

:class:`ScrubGraderSource` runs in nbgrader's own process right after the
notebook executes, so nothing a student's code does in the kernel can skip it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

_PACKAGE = Path(__file__).resolve().parent
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: What tracebacks and listings put before a source line: arrows, line numbers.
_PREFIX = re.compile(r"^[\s\-=>|]*\d*[\s|:]*")
_SHORTEST = 16  # shorter lines (``return None``, ``)``) say nothing about the grader
REMOVED = "[line removed: it belongs to the hidden grader]"


@lru_cache(maxsize=1)
def grader_lines() -> frozenset[str]:
    """Every distinctive line of the grading package's source."""
    lines = set()
    for path in _PACKAGE.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) >= _SHORTEST:
                lines.add(line)
    return frozenset(lines)


def scrub(text: str) -> str:
    """Replace each line of ``text`` that shows a line of grader source."""
    known = grader_lines()
    out = []
    for line in text.split("\n"):
        plain = _ANSI.sub("", line).strip()
        if plain in known or _PREFIX.sub("", plain, count=1).strip() in known:
            out.append(REMOVED)
        else:
            out.append(line)
    return "\n".join(out)


def _scrub_value(value):
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrub_value(v) for v in value]
    return value


class ScrubGraderSource(NbGraderPreprocessor):
    """Remove grader source from every output, whoever printed it (feedback shows outputs)."""

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = _scrub_value(output.text)
            if "data" in output:
                for mime, value in output.data.items():
                    if mime.startswith("text/"):
                        output.data[mime] = _scrub_value(value)
            if "traceback" in output:
                output.traceback = _scrub_value(output.traceback)
            if "evalue" in output:
                output.evalue = _scrub_value(output.evalue)
        return cell, resources
