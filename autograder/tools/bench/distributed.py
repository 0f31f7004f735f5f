"""Notebooks per second on a Dask cluster of 1, 2 and 4 workers on this machine, side by
side with the local parallel command (the floor), all with the real graders.

    python -m autograder bench --distributed [--students N] [--cluster-workers 1,2,4] [--db-url URL]

One scratch course with N synthetic students per assignment (the main benchmark's
mix of samples and corpus faults). Every assignment is graded, with ``--force``, by:

- **floor**: ``python -m autograder autograde A --workers W`` (one fork server, forked workers);
- **cluster n**: ``python -m autograder autograde A --scheduler ADDRESS --cluster-keys DIR`` on a real
  scheduler with n worker processes (:class:`LocalCluster`, one thread each),
  started afresh for each n, before the clock starts.

Reported per run: notebooks per second as run (the command's wall time), and over
its grading alone (from the tasks' submission to the last result: without the
driver's import and plan, with each worker's nbgrader and fork server start, which only
the first assignment's run pays: a worker keeps its grading process for the next run),
and the ratio of each to the floor's. Every run must give every student the points
the floor gave. On a machine with C cores, more than C workers share the cores: the
figure for 4 workers on 2 cores shows the cost of oversubscription, not a speed-up.
"""

from __future__ import annotations

import datetime
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from autograder.tools import scratch
from autograder.tools.bench import courses as _bench_course
from autograder.tools.bench import measure
from autograder.tools.parallel.localcluster import LocalCluster


def build(root: Path, assignments: list[str], students: int, db_url: str | None) -> scratch.ScratchCourse:
    course = scratch.prepare_course(root / "course", db_url=db_url)
    scratch.generate(course, assignments)
    when = datetime.datetime.now(datetime.timezone.utc)
    ids = [f"bench-{i + 1:03d}" for i in range(students)]
    for a in assignments:
        for sid, kind in zip(ids, _bench_course.kinds_for(a, students), strict=True):
            notebook = _bench_course.make_notebook(a, kind, root / "notebooks")
            scratch.place_submission(course, sid, a, notebook, when)
    return course


def _grade(course: scratch.ScratchCourse, assignments: list[str], extra: list[str], env: dict, log: Path,
           work: Path, name: str) -> dict:
    """Grade every assignment with ``extra`` arguments; seconds as run and grading, and the scores."""
    seconds = grading = 0.0
    notebooks = 0
    failed = []
    for a in assignments:
        out = work / f"{name}-{a}.json"
        cmd = [sys.executable, "-m", "autograder", "autograde", a, "--force", "--json", str(out), *extra]
        measured = measure.run_measured(cmd, course.root, env, log)
        batch = json.loads(out.read_text())
        seconds += measured.seconds
        grading += batch["grading_seconds"] or 0.0
        notebooks += sum(o["status"] != "skipped" for o in batch["outcomes"])
        failed += [f"{a}/{o['student_id']}" for o in batch["outcomes"] if o["status"] != "graded"]
    return {"seconds": seconds, "grading_seconds": grading, "notebooks": notebooks, "not_graded": failed,
            "notebooks_per_second": notebooks / seconds, "grading_notebooks_per_second": notebooks / grading,
            "scores": {f"{sid}/{a}": s.points for (sid, a), s in scratch.read_scores(course).items()}}


def run_distributed(
    students: int = 8,
    worker_counts: tuple[int, ...] = (1, 2, 4),
    floor_workers: int = 2,
    assignments: list[str] | None = None,
    json_path: Path | None = None,
    work_dir: Path | None = None,
    db_url: str | None = None,
    out: TextIO | None = None,
) -> dict:
    out = out or sys.stdout
    if students < 1 or not worker_counts or min(worker_counts) < 1:
        raise scratch.CycleError("bench: --students and every --cluster-workers count must be at least 1")
    assignments = scratch.check_assignments(assignments or scratch.available_assignments())
    work = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="jax-tracing-bench-distributed-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "bench.log"
    started = time.perf_counter()

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    say(f"building a scratch course in {work}: {students} students x {len(assignments)} assignments"
        + (" (gradebook: the --db-url database)" if db_url else ""))
    course = build(work, assignments, students, db_url)
    env = _bench_course.tool_env()
    runs = {}
    say(f"  floor: the local parallel command, --workers {floor_workers}")
    runs["floor"] = _grade(course, assignments, ["--workers", str(floor_workers)], env, log, work, "floor")
    for n in worker_counts:
        say(f"  cluster of {n} worker{'s' if n != 1 else ''}: starting the scheduler and workers")
        with LocalCluster(work / f"dask-{n}", workers=n) as cluster:
            runs[f"cluster_{n}"] = _grade(course, assignments, cluster.driver_args, env, log, work,
                                          f"cluster-{n}")
    reference = runs["floor"]["scores"]
    figures = {
        "machine": measure.machine(),
        "command": "python -m autograder bench --distributed " + " ".join(
            [f"--students {students}", f"--cluster-workers {','.join(map(str, worker_counts))}"]
            + (["--db-url URL"] if db_url else [])),
        "gradebook": "postgresql" if db_url and db_url.startswith("postgresql") else "sqlite",
        "students": students,
        "assignments": assignments,
        "floor_workers": floor_workers,
        "runs": {name: {k: v for k, v in run.items() if k != "scores"} for name, run in runs.items()},
        "grades_identical": all(run["scores"] == reference for run in runs.values()),
        "grade_differences": sorted({key for run in runs.values() for key in run["scores"]
                                     if run["scores"].get(key) != reference.get(key)}),
        "work_dir": str(work),
        "bench_seconds": round(time.perf_counter() - started, 1),
    }
    for name, run in figures["runs"].items():
        run["over_floor"] = run["notebooks_per_second"] / runs["floor"]["notebooks_per_second"]
        run["grading_over_floor"] = run["grading_notebooks_per_second"] / runs["floor"]["grading_notebooks_per_second"]
    return measure.publish(figures, report(figures), json_path, say)


def report(f: dict) -> str:
    m = f["machine"]
    lines = [
        f"distributed autograde: {f['students']} students x {len(f['assignments'])} assignments, real graders, "
        f"gradebook {f['gradebook']}",
        f"machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, commit {m.get('commit')}; {f['command']}",
        "",
        f"{'run':<22}{'notebooks':>10}{'seconds':>9}{'nb/s':>7}{'/floor':>8}{'grading nb/s':>14}{'/floor':>8}",
    ]
    for name, run in f["runs"].items():
        label = f"floor (--workers {f['floor_workers']})" if name == "floor" else \
            f"cluster, {name.split('_')[1]} worker{'s' if name != 'cluster_1' else ''}"
        lines.append(f"{label:<22}{run['notebooks']:>10}{run['seconds']:>9.1f}{run['notebooks_per_second']:>7.2f}"
                     f"{run['over_floor']:>8.2f}{run['grading_notebooks_per_second']:>14.2f}"
                     f"{run['grading_over_floor']:>8.2f}")
        if run["not_graded"]:
            lines.append(f"    not graded: {', '.join(run['not_graded'])}")
    lines.append("")
    lines.append("grades identical in every run: " + ("yes" if f["grades_identical"] else
                                                     f"NO: {', '.join(f['grade_differences'])}"))
    return "\n".join(lines)
