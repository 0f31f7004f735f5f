"""``python -m autograder demo``: the bundled sample submissions (correct, partial,
empty) of every assignment through a full nbgrader cycle in a scratch course, and
their grades as a table."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable, Mapping

from autograder.tools import report
from autograder.tools.report import ClassReport
from autograder.tools.repository import SAMPLE_KINDS, SAMPLES
from autograder.tools.scratch import (
    CycleResult, Steps, Student, available_assignments, check_assignments, run_cycle,
)
from autograder.tools.words import counted


def sample_students(
    assignments: Iterable[str],
    kinds: Iterable[str] = SAMPLE_KINDS,
    samples_dir: Path = SAMPLES,
) -> list[Student]:
    """One student per sample kind, ``sample-<kind>``, handing in tests/samples/<a>/<kind>.ipynb."""
    return [
        Student(f"sample-{kind}", {a: samples_dir / a / f"{kind}.ipynb" for a in assignments})
        for kind in kinds
    ]


#: Said under the table.
TABLE_NOTE = ("by hand: the written answers (Pause and reason), graded in formgrader; "
              "grades.csv counts one not graded yet as 0")


def format_table(result: CycleResult, students: Iterable[str], assignments: Iterable[str],
                 reports: Mapping[str, ClassReport] | None = None) -> str:
    """One row per assignment and student: the automatic points and, apart, the points graded by hand
    (from each assignment's class report: ``-/2 (not graded yet)``); ``-`` where nothing was graded."""
    rows = [["assignment", "student", "automatic", "by hand"]]
    for a in assignments:
        for sid in students:
            s = result.scores.get((sid, a))
            graded = reports[a].students.get(sid) if reports and a in reports else None
            rows.append([a, sid, f"{s.points:g}/{s.max_points:g}" if s else "-",
                         (graded.hand_shown() if graded else "") or "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def demo(
    course_dir: Path | None = None, assignments: Iterable[str] | None = None, workers: int | None = None,
    db_url: str | None = None,
) -> CycleResult:
    """The README's quickstart: grade the bundled sample submissions through the parallel
    command, saying each step as it goes, then print the table and where everything is."""
    assignments = list(assignments) if assignments else available_assignments()
    assignments = check_assignments(assignments)
    students = sample_students(assignments)
    steps = Steps(sys.stdout)
    steps.say(f"demo: {counted(len(students), 'sample student')} x {counted(len(assignments), 'assignment')} "
              f"({', '.join(assignments)})")
    result = run_cycle(course_dir, students, assignments, steps=steps, workers=workers or os.cpu_count() or 1,
                       db_url=db_url)
    with steps.step("class report"):
        reports = {a: report.build(a, result.course.root) for a in assignments}
        pages = [report.write(r, result.course.root) for r in reports.values()]
    print()
    print(format_table(result, [s.student_id for s in students], assignments, reports))
    print(TABLE_NOTE)
    print(f"\nfeedback HTML: {result.course.feedback_dir}")
    print(f"grades CSV:    {result.course.grades_csv}")
    print(f"class report:  {pages[0].parent} ({', '.join(p.name for p in pages)})")
    for problem in result.problems:
        print(f"\nproblem: {problem}", file=sys.stderr)
    steps.say(f"demo: done in {steps.elapsed():.0f} s")
    return result
