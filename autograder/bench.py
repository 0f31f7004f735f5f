"""How much the hidden graders add to plain nbgrader, and what grading in parallel gains.

    python -m autograder bench [--students N] [--workers W] [--json PATH]

Builds three scratch courses (see :mod:`autograder._bench_course`) with N
synthetic students per assignment, a mix of correct and faulty submissions, and
autogrades the same submissions three ways, one assignment at a time and in a
rotating order so a noisy machine burdens none of them more than the others:

- **a, the floor**: ``nbgrader autograde`` of the course whose grade cells lost
  their hidden regions: nbgrader, a kernel per notebook and the notebook's own cells;
- **b, serial**: ``nbgrader autograde`` with the real graders;
- **c, parallel**: ``python -m autograder autograde --workers W`` with the real graders.

Seconds per notebook are given two ways: *as run* (wall time over notebooks, so
each command's start-up is shared by only N notebooks) and *steady* (start-up
taken out: what each further notebook costs, i.e. what a class of hundreds
sees). The targets are read on the steady figures: b/a at most 1.3, and c at
least 1.8 times faster than b with two workers on two cores.

Then every distinct submission is graded once more in a fresh process, property
by property (:mod:`autograder._bench_probe`), counting JAX traces and compiles
and hypothesis examples. Figures are printed and written as JSON.
"""

from __future__ import annotations

import datetime
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO

from . import _bench_course, _bench_measure, cycle

MODES = ("floor", "serial", "parallel")
LABEL = {"floor": "a floor", "serial": "b serial", "parallel": "c parallel"}
TARGET_RATIO = 1.3
TARGET_SPEEDUP = 1.8


def run_bench(
    students: int = 4,
    workers: int = 2,
    assignments: list[str] | None = None,
    json_path: Path | None = None,
    work_dir: Path | None = None,
    out: TextIO | None = None,
) -> dict:
    """Build, grade three ways, probe the properties; print the figures and return them."""
    out = out or sys.stdout
    if students < 1 or workers < 1:
        raise cycle.CycleError(f"bench: --students and --workers must be at least 1 (got {students}, {workers})")
    assignments = cycle.check_assignments(assignments or cycle.available_assignments())
    work = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="jax-tracing-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "bench.log"
    say = _Say(out)
    started = time.perf_counter()
    machine = _bench_measure.machine()  # the load average now: other programs running skew every figure

    say(f"building 3 scratch courses in {work}: {students} students x {len(assignments)} assignments")
    courses = _bench_course.build(work, assignments, students)
    env = _bench_course.tool_env()
    roots = {"floor": courses.floor.root, "serial": courses.serial.root, "parallel": courses.parallel.root}

    runs: dict[str, dict[str, dict]] = {a: {} for a in assignments}
    for r, a in enumerate(assignments):
        order = MODES[r % 3:] + MODES[: r % 3]
        for mode in order:
            runs[a][mode] = _grade(mode, a, roots[mode], workers, env, log, work)
        say(f"  {a}: " + ", ".join(f"{LABEL[m]} {runs[a][m]['seconds']:.1f} s" for m in MODES))

    # What a command costs before its first notebook: nbgrader with every student already graded.
    startup = {
        mode: _bench_measure.run_measured(_command(mode, assignments[0], workers, None), roots[mode], env, log).seconds
        for mode in ("floor", "serial")
    }
    identical, differences = _compare_grades(courses)

    say(f"probing {len(courses.notebooks)} distinct submissions property by property ({workers} at a time)")
    probes = _probe_all(courses, workers, env)

    figures = _figures(courses, assignments, runs, startup, probes, students, workers)
    machine["load_average_after"] = _bench_measure.machine()["load_average"]
    figures.update({
        "machine": machine,
        "grades_identical": identical,
        "grade_differences": differences,
        "work_dir": str(work),
        "log": str(log),
        "bench_seconds": round(time.perf_counter() - started, 1),
    })
    say("")
    say(report(figures))
    if json_path:
        Path(json_path).write_text(json.dumps(figures, indent=2) + "\n")
        say(f"\nfigures written to {json_path}")
    return figures


class _Say:
    def __init__(self, out: TextIO):
        self.out = out

    def __call__(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


def _command(mode: str, assignment: str, workers: int, json_out: Path | None) -> list[str]:
    if mode == "parallel":
        cmd = [sys.executable, "-m", "autograder", "autograde", assignment, "--workers", str(workers)]
        return cmd + (["--json", str(json_out)] if json_out else [])
    return [sys.executable, "-m", "nbgrader", "autograde", assignment]


def _grade(mode: str, assignment: str, root: Path, workers: int, env: dict, log: Path, work: Path) -> dict:
    json_out = work / f"parallel-{assignment}.json" if mode == "parallel" else None
    measured = _bench_measure.run_measured(_command(mode, assignment, workers, json_out), root, env, log)
    run = measured.as_dict()
    if json_out and json_out.exists():
        batch = json.loads(json_out.read_text())
        run["grading_seconds"] = batch["grading_seconds"]
        run["startup_seconds"] = batch["startup_seconds"]
        run["outcomes"] = {o["student_id"]: o["status"] for o in batch["outcomes"]}
    return run


def _compare_grades(courses) -> tuple[bool, list[str]]:
    serial, parallel = cycle.read_scores(courses.serial), cycle.read_scores(courses.parallel)
    differences = [
        f"{sid}/{a}: serial {serial.get((sid, a))}, parallel {parallel.get((sid, a))}"
        for sid, a in sorted(set(serial) | set(parallel))
        if serial.get((sid, a)) != parallel.get((sid, a))
    ]
    return not differences, differences


def _probe_all(courses, workers: int, env: dict) -> dict[tuple[str, str], dict]:
    def probe(key):
        assignment, kind = key
        proc = subprocess.run(
            [sys.executable, "-m", "autograder._bench_probe", assignment, str(courses.notebooks[key])],
            capture_output=True, text=True, env=env, cwd=courses.root, stdin=subprocess.DEVNULL,
        )
        if proc.returncode:
            raise cycle.CycleError(f"bench: probing {assignment}/{kind} failed:\n{proc.stderr[-2000:]}")
        return key, json.loads(proc.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(probe, sorted(courses.notebooks)))


# ---------------------------------------------------------------- figures


def _figures(courses, assignments, runs, startup, probes, students, workers) -> dict:
    per_assignment = {}
    totals = {m: {"seconds": 0.0, "steady_seconds": 0.0, "cpu_seconds": 0.0} for m in MODES}
    for a in assignments:
        row = {"students": {sid: kind for (sid, aa), kind in sorted(courses.kinds.items()) if aa == a}}
        for mode in MODES:
            run = dict(runs[a][mode])
            steady = run["grading_seconds"] if mode == "parallel" else max(run["seconds"] - startup[mode], 0.0)
            run["per_notebook"] = run["seconds"] / students
            run["steady_per_notebook"] = steady / students
            run["cpu_per_notebook"] = run["cpu_seconds"] / students
            totals[mode]["seconds"] += run["seconds"]
            totals[mode]["cpu_seconds"] += run["cpu_seconds"]
            totals[mode]["steady_seconds"] += steady
            row[mode] = run
        row.update(_ratios(row["floor"], row["serial"], row["parallel"]))
        per_assignment[a] = row
    n = students * len(assignments)
    overall = {}
    for mode in MODES:
        overall[mode] = {
            "per_notebook": totals[mode]["seconds"] / n,
            "steady_per_notebook": totals[mode]["steady_seconds"] / n,
            "cpu_per_notebook": totals[mode]["cpu_seconds"] / n,
            "peak_tree_mb": max(per_assignment[a][mode]["peak_tree_mb"] or 0 for a in assignments) or None,
            "peak_process_mb": max(per_assignment[a][mode]["peak_process_mb"] or 0 for a in assignments) or None,
        }
    overall.update(_ratios(overall["floor"], overall["serial"], overall["parallel"]))
    properties = _property_figures(probes)
    return {
        "command": f"python -m autograder bench --students {students} --workers {workers}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "students_per_assignment": students,
        "workers": workers,
        "notebooks_per_mode": n,
        "startup_seconds": {"nbgrader autograde": round(statistics.mean(startup.values()), 2)},
        "assignments": per_assignment,
        "overall": overall,
        "properties": properties,
        "targets": {
            "b_over_a_at_most": TARGET_RATIO,
            "b_over_a_met": overall["b_over_a_steady"] <= TARGET_RATIO,
            "speedup_at_least": TARGET_SPEEDUP,
            "speedup_met": overall["speedup_steady"] >= TARGET_SPEEDUP,
        },
    }


def _ratios(floor: dict, serial: dict, parallel: dict) -> dict:
    return {
        "b_over_a": serial["per_notebook"] / floor["per_notebook"],
        "b_over_a_steady": serial["steady_per_notebook"] / floor["steady_per_notebook"],
        "b_over_a_cpu": serial["cpu_per_notebook"] / floor["cpu_per_notebook"],
        "speedup": serial["per_notebook"] / parallel["per_notebook"],
        "speedup_steady": serial["steady_per_notebook"] / parallel["steady_per_notebook"],
    }


def _property_figures(probes: dict) -> dict:
    """Per assignment: one-off costs, and per property mean/max over the distinct submissions."""
    by_assignment: dict[str, list[dict]] = {}
    for (assignment, _kind), report in sorted(probes.items()):
        by_assignment.setdefault(assignment, []).append(report)
    figures = {}
    for assignment, reports in by_assignment.items():
        one_off = {
            key: statistics.mean(r[key] for r in reports)
            for key in ("import_jax_seconds", "import_hypothesis_autograder_seconds",
                        "run_notebook_cells_seconds", "import_property_module_seconds")
        }
        props = {}
        for prop in (p["property"] for p in reports[0]["properties"]):
            rows = [p for r in reports for p in r["properties"] if p["property"] == prop]
            props[prop] = {
                "group": rows[0]["group"],
                **{f"{k}_mean": statistics.mean(p[k] for p in rows) for k in ("seconds", "compile_seconds")},
                **{f"{k}_{f.__name__}": f(p[k] for p in rows) for k in ("traces", "compiles", "examples", "programs")
                   for f in (min, max)},
            }
        figures[assignment] = {
            "submissions": len(reports),
            **one_off,
            "properties_seconds_mean": statistics.mean(sum(p["seconds"] for p in r["properties"]) for r in reports),
            "properties": props,
        }
    return figures


def report(f: dict) -> str:
    """The figures as the text the command prints."""
    m = f["machine"]
    lines = [
        f"{f['command']}   ({f['date']})",
        f"machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_gb')} GB; Python {m.get('python')}, "
        f"jax {m.get('jax')}, nbgrader {m.get('nbgrader')}, hypothesis {m.get('hypothesis')}",
        f"code: {m.get('commit')}; load average {m.get('load_average')} before, {m.get('load_average_after')} after"
        + ("  (other programs were running: figures are skewed)" if (m.get("load_average") or 0) > 0.5 else ""),
        f"{f['students_per_assignment']} students x {len(f['assignments'])} assignments = "
        f"{f['notebooks_per_mode']} notebooks per mode; c with {f['workers']} workers; "
        f"nbgrader autograde start-up {f['startup_seconds']['nbgrader autograde']:.1f} s per command",
        "",
        "seconds per notebook     a floor   b serial  c parallel   b/a   c speed-up",
    ]
    rows = [(a, f["assignments"][a]) for a in f["assignments"]] + [("all", f["overall"])]
    for name, row in rows:
        for kind, suffix in (("", "as run"), ("steady_", "steady"), ("cpu_", "CPU s")):
            ratio = {"": "b_over_a", "steady_": "b_over_a_steady", "cpu_": "b_over_a_cpu"}[kind]
            speedup = {"": f"{row['speedup']:>6.2f}", "steady_": f"{row['speedup_steady']:>6.2f}", "cpu_": "     -"}[kind]
            lines.append(
                f"  {name + ' (' + suffix + ')':<24}"
                + "".join(f"{row[mode][kind + 'per_notebook']:>9.2f} " for mode in MODES)
                + f"  {row[ratio]:>5.2f}  {speedup}"
            )
    o = f["overall"]
    lines += [
        "",
        "peak memory (MB)         " + "".join(f"{LABEL[mode]:>13}" for mode in MODES),
        "  whole process tree     " + "".join(f"{_mb(o[mode]['peak_tree_mb']):>13}" for mode in MODES),
        "  largest process        " + "".join(f"{_mb(o[mode]['peak_process_mb']):>13}" for mode in MODES),
        "",
        f"grades: parallel {'==' if f['grades_identical'] else '!='} serial"
        + ("" if f["grades_identical"] else ": " + "; ".join(f["grade_differences"])),
        "",
        "per property, over each assignment's distinct submissions (fresh process each):",
        "  assignment / property                     seconds  compile s  traces   compiles  examples",
    ]
    for a, pa in f["properties"].items():
        lines.append(
            f"  {a}: import jax {pa['import_jax_seconds']:.2f} s, hypothesis+autograder "
            f"{pa['import_hypothesis_autograder_seconds']:.2f} s, property module {pa['import_property_module_seconds']:.2f} s, "
            f"notebook cells {pa['run_notebook_cells_seconds']:.2f} s, all properties {pa['properties_seconds_mean']:.2f} s"
        )
        for name, p in pa["properties"].items():
            lines.append(
                f"    {name:<40}{p['seconds_mean']:>7.2f}  {p['compile_seconds_mean']:>8.2f}  "
                f"{_span(p, 'traces'):>7}  {_span(p, 'compiles'):>8}  {_span(p, 'examples'):>8}"
            )
    t = f["targets"]
    lines += [
        "",
        f"targets (steady): b/a <= {t['b_over_a_at_most']}: {'met' if t['b_over_a_met'] else 'NOT met'} "
        f"({o['b_over_a_steady']:.2f});  speed-up >= {t['speedup_at_least']}: "
        f"{'met' if t['speedup_met'] else 'NOT met'} ({o['speedup_steady']:.2f})",
        f"courses and nbgrader output: {f['work_dir']}",
    ]
    return "\n".join(lines)


def _span(p: dict, key: str) -> str:
    low, high = p[f"{key}_min"], p[f"{key}_max"]
    return f"{low}" if low == high else f"{low}-{high}"


def _mb(value) -> str:
    return "n/a" if value is None else f"{value:.0f}"

