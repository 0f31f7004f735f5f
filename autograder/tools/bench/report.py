"""How long ``python -m autograder report`` takes for a big class.

    python -m autograder.tools.bench.report COURSE_DIR ASSIGNMENT [--students 300] [--work-dir DIR]

Copies the graded course ``COURSE_DIR`` (one where ``ASSIGNMENT`` has been autograded)
into a new folder and makes a synthetic class there: every autograded notebook tree
of the assignment is copied, round-robin, to N students ``synthetic-0000``... with a
gradebook submission carrying the same automatic scores. Then it times the report:
in process (``build`` + ``write``, the module's own cost) and as the command
(``python -m autograder report``, start-up included).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.tools import report
from autograder.tools.repository import tool_env


def synthetic_class(course_dir: Path, assignment: str, students: int, dest: Path) -> Path:
    from nbgrader.api import Gradebook

    course_dir = Path(course_dir).resolve()
    shutil.copytree(course_dir, dest, ignore=shutil.ignore_patterns("reports", "students", "exchange"))
    config = dest / "nbgrader_config.py"
    config.write_text(config.read_text().replace(repr(str(course_dir)), repr(str(dest))))
    autograded = dest / "autograded"
    templates = sorted(p.parent for p in autograded.glob(f"*/{assignment}"))
    if not templates:
        raise SystemExit(f"no autograded/<student>/{assignment} in {course_dir}")
    url = f"sqlite:///{dest / 'gradebook.db'}"
    with Gradebook(url) as gb:
        scores = {}
        for t in templates:
            sub = gb.find_submission(assignment, t.name)
            scores[t.name] = {(nb.name, g.name): g.auto_score for nb in sub.notebooks for g in nb.grades}
        for i in range(students):
            sid = f"synthetic-{i:04d}"
            template = templates[i % len(templates)]
            shutil.copytree(template / assignment, autograded / sid / assignment)
            gb.add_student(sid)
            sub = gb.add_submission(assignment, sid)
            for nb in sub.notebooks:
                for g in nb.grades:
                    g.auto_score = scores[template.name].get((nb.name, g.name))
        gb.db.commit()
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.tools.bench.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("course_dir", type=Path)
    parser.add_argument("assignment")
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--work-dir", type=Path, help="new folder for the synthetic course (default: a temp folder)")
    args = parser.parse_args(argv)
    dest = args.work_dir or Path(tempfile.mkdtemp(prefix="report-bench-")) / "course"
    start = time.perf_counter()
    synthetic_class(args.course_dir, args.assignment, args.students, dest.resolve())
    print(f"synthetic class in {dest}: {time.perf_counter() - start:.1f} s to build")

    start = time.perf_counter()
    built = report.build(args.assignment, dest)
    read = time.perf_counter() - start
    report.write(built, dest)
    total = time.perf_counter() - start
    print(f"in process: {len(built.students)} students, build {read:.2f} s, build + page {total:.2f} s "
          "(first run: nbgrader, the property module with JAX, matplotlib imported)")
    start = time.perf_counter()
    built = report.build(args.assignment, dest)
    read = time.perf_counter() - start
    report.write(built, dest)
    total = time.perf_counter() - start
    print(f"in process, again (imports done): build {read:.2f} s, build + page {total:.2f} s")

    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "autograder", "report", args.assignment], cwd=dest,
                          env=tool_env(), capture_output=True, text=True)
    command = time.perf_counter() - start
    print(proc.stdout.strip())
    print(f"command: `python -m autograder report {args.assignment}` in {dest}: {command:.2f} s "
          f"(exit {proc.returncode})")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
