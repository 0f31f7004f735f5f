"""What a parallel autograde shows while it runs: a line per student as it finishes,
and on a terminal a bar with the elapsed time and the time left."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Outcome:
    """How one student's autograde ended in this run."""

    student_id: str
    status: str  # "graded", "skipped", "failed" or "interrupted"
    points: float | None = None
    max_points: float | None = None
    seconds: float = 0.0
    error: str = ""

    @classmethod
    def skipped(cls, done: dict) -> "Outcome":
        """A student the plan found fully graded already (:func:`state.plan`'s ``done``)."""
        return cls(done["student_id"], "skipped", done["points"], done["max_points"])

    @classmethod
    def of_reply(cls, student: str, reply: dict) -> "Outcome":
        """The outcome a worker's reply to one grading request tells (``worker.grade``)."""
        if reply.get("interrupted") and not reply.get("complete"):
            return cls(student, "interrupted", seconds=reply["seconds"])  # the worker removed its output
        if reply["success"]:
            return cls(student, "graded", reply["points"], reply["max_points"], reply["seconds"])
        return cls(student, "failed", seconds=reply["seconds"], error=reply.get("error", "see nbgrader's log"))

    def describe(self) -> str:
        if self.status == "graded":
            return f"{self._points()}  ({self.seconds:.1f} s)"
        if self.status == "skipped":
            return f"skipped: already graded, {self._points()}"
        if self.status == "failed":
            return f"FAILED: {self.error}"
        return "interrupted: not graded; the next run grades it"

    def _points(self) -> str:
        return f"{self.points:g}/{self.max_points:g} automatic points"


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Prints outcomes as they come; redraws a bar in place when ``out`` is a terminal."""

    WIDTH = 24

    def __init__(self, out: TextIO, total: int, todo: int, workers: int, start: float | None = None):
        self.out = out
        self.total = total  # students in the assignment
        self.todo = todo  # of them, to grade in this run
        self.workers = workers
        self.done = 0  # finished in this run (graded, failed or interrupted)
        self.count = 0  # lines printed, skipped included
        self.start = time.monotonic() if start is None else start
        self.grading_since: float | None = None  # when the first student went to a worker
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self._bar_shown = False
        self._width = max(len(str(total)), 1)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float | None:
        """Seconds left at the rate seen since grading began; None before the first student finishes."""
        if not self.done:
            return None
        grading = time.monotonic() - (self.grading_since or self.start)
        return grading / self.done * (self.todo - self.done)

    def report(self, outcome: Outcome, name_width: int = 0) -> None:
        if outcome.status != "skipped":
            self.done += 1
        self.count += 1
        line = f"[{self.count:>{self._width}}/{self.total}] {outcome.student_id:<{name_width}}  {outcome.describe()}"
        self._clear()
        self.out.write(line + "\n")
        self.out.flush()
        self.tick()

    def tick(self) -> None:
        """Redraw the bar (terminals only)."""
        if not self.tty or not self.todo:
            return
        filled = round(self.WIDTH * self.done / self.todo)
        left = self.left()
        bar = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.todo} to grade"
            f"  elapsed {clock(self.elapsed())}  left {'~' + clock(left) if left is not None else '?'}"
            f"  ({self.workers} worker{'s' if self.workers != 1 else ''})"
        )
        self.out.write("\r\x1b[2K" + bar)
        self.out.flush()
        self._bar_shown = True

    def close(self) -> None:
        self._clear()
        self.out.flush()

    def _clear(self) -> None:
        if self._bar_shown:
            self.out.write("\r\x1b[2K")
            self._bar_shown = False
