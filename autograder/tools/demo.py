"""``python -m autograder demo``: the bundled sample submissions (correct, partial,
empty) of every assignment through a full nbgrader cycle in a scratch course, and
their grades as a table."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable

from autograder.tools.repository import SAMPLE_KINDS, SAMPLES
from autograder.tools.scratch import (
    CycleResult, Steps, Student, available_assignments, check_assignments, run_cycle,
)


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


def format_table(result: CycleResult, students: Iterable[str], assignments: Iterable[str]) -> str:
    """Student x assignment grid of ``points/max`` automatic points."""
    assignments = list(assignments)
    rows = [["student", *assignments]]
    for sid in students:
        row = [sid]
        for a in assignments:
            s = result.scores.get((sid, a))
            row.append(f"{s.points:g}/{s.max_points:g}" if s else "-")
        rows.append(row)
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
    steps.say(f"demo: {len(students)} sample students x {len(assignments)} assignments ({', '.join(assignments)})")
    result = run_cycle(course_dir, students, assignments, steps=steps, workers=workers or os.cpu_count() or 1,
                       db_url=db_url)
    print()
    print(format_table(result, [s.student_id for s in students], assignments))
    print(f"\nfeedback HTML: {result.course.feedback_dir}")
    print(f"grades CSV:    {result.course.grades_csv}")
    with steps.step("class report"):
        from autograder.tools import report

        pages = [report.write(report.build(a, result.course.root), result.course.root) for a in assignments]
    print(f"class report:  {pages[0].parent} ({', '.join(p.name for p in pages)})")
    for problem in result.problems:
        print(f"\nproblem: {problem}", file=sys.stderr)
    steps.say(f"demo: done in {steps.elapsed():.0f} s")
    return result
