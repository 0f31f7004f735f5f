"""``python -m autograder mutants``: grade every mutant of the reference and say which survive.

Each mutant is the source notebook with one solution cell changed (:mod:`.build`), graded in a
fresh process (:mod:`.child`) by the assignment's property module, as a student's notebook would
be: XLA compiles with the grading kernels' flags (:mod:`autograder.grading.compiler`). A mutant is killed when it earns less than the reference. A survivor that is not declared
equivalent (:mod:`.record`) is a blind spot of the grader: the run prints its diff and exits 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.grading import compiler
from autograder.tools.errors import ToolError
from autograder.tools.mutants import build, record

#: Seconds a mutant's grading may take; a mutant that hangs is killed (a timed-out grade cell scores 0).
TIME_LIMIT = 240.0


def grade(assignment: str, cells, time_limit: float = TIME_LIMIT) -> dict:
    """``{"earned", "failed"}``, or ``{"earned": None, "outcome": why}`` when the process failed."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as scratch:
        out = Path(scratch) / "result.json"
        try:
            done = subprocess.run(
                [sys.executable, "-m", "autograder.tools.mutants.child", str(out)],
                input=json.dumps({"assignment": assignment, "cells": cells}), text=True,
                capture_output=True, timeout=time_limit, cwd=scratch,
                env=compiler.kernel_environment({**os.environ, "PYTHONHASHSEED": "0"}),
            )
        except subprocess.TimeoutExpired:
            return {"earned": None, "outcome": f"took over {time_limit:.0f} s"}
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
            return {"earned": None, "outcome": f"the grading process ended with {done.returncode}: {tail}"}
        return json.loads(out.read_text())


def run(assignments: list[str], root: Path, workers: int | None = None, only: set[str] | None = None,
        write: bool = True, out=sys.stdout) -> int:
    """Grade the mutants of each assignment; print the counts and the survivors. 1 if any survivor
    is undeclared."""
    workers = workers or os.cpu_count() or 1
    undeclared_total = 0
    for assignment in assignments:
        undeclared_total += _one(assignment, root, workers, only, write, out)
    return 1 if undeclared_total else 0


def _one(assignment: str, root: Path, workers: int, only, write: bool, out) -> int:
    notebook = root / "source" / assignment / f"{assignment}.ipynb"
    if not notebook.is_file():
        raise ToolError(f"mutants: no source notebook {notebook}")
    started = time.monotonic()
    # Taken before anything is graded: a file changed during the run leaves the record stale.
    graded_what = record.fingerprint(root, assignment)
    declared = record.equivalents(root, assignment)
    ref = build.reference(notebook, assignment)
    if not ref.solutions:
        raise ToolError(f"mutants: {notebook} has no solution region (### BEGIN SOLUTION ... ### END SOLUTION)")
    baseline = grade(assignment, ref.cells)
    from autograder import group_points

    full = sum(group_points(assignment).values())
    if baseline.get("earned") != full:
        raise ToolError(f"mutants: the reference of {assignment} itself earns {baseline.get('earned')} of {full} "
                        f"({baseline.get('outcome') or ', '.join(baseline.get('failed', []))}); fix it first")
    found = build.mutants(ref, only)
    print(f"{assignment}: {len(found)} mutants of the reference ({full:g} points), {workers} at a time", file=out,
          flush=True)
    with ThreadPoolExecutor(workers) as pool:
        graded = list(pool.map(lambda m: grade(assignment, m.cells), found))
    kills, counts, survivors, killed = Counter(), Counter(), [], {}
    for mutant, result in zip(found, graded):
        key = (mutant.family, mutant.operator)
        counts[key] += 1
        if result["earned"] is None or result["earned"] < full:
            kills[key] += 1
            killed[mutant.id] = {"what": mutant.what, "failed": result.get("failed") or [result["outcome"]]}
        else:
            survivors.append(mutant)
    _print(assignment, counts, kills, survivors, declared, time.monotonic() - started, out)
    if write and not only:
        record.write(root, assignment, {
            "assignment": assignment,
            "fingerprint": graded_what,
            "seconds": round(time.monotonic() - started, 1),
            "operators": {f"{family}/{op}": {"mutants": counts[(family, op)], "killed": kills[(family, op)]}
                          for family, op in sorted(counts)},
            "killed": killed,
            "survivors": [{"id": m.id, "what": m.what, "line": m.line, "diff": m.diff} for m in survivors],
        })
    return sum(1 for m in survivors if m.id not in declared)


def _print(assignment, counts, kills, survivors, declared, seconds, out) -> None:
    print(f"{'family/operator':<36}{'mutants':>8}{'killed':>8}", file=out)
    for family, op in sorted(counts):
        print(f"{family + '/' + op:<36}{counts[(family, op)]:>8}{kills[(family, op)]:>8}", file=out)
    total, killed = sum(counts.values()), sum(kills.values())
    print(f"{'all':<36}{total:>8}{killed:>8}   ({seconds:.0f} s)", file=out)
    for mutant in survivors:
        reason = declared.get(mutant.id)
        if reason:
            print(f"  equivalent {mutant.id}: {mutant.what}; {reason}", file=out)
        else:
            print(f"\nSURVIVES {mutant.id}: {mutant.what} (line {mutant.line}) keeps every point\n{mutant.diff}",
                  file=out)
    undeclared = [m for m in survivors if m.id not in declared]
    verdict = (f"{len(undeclared)} undeclared survivor(s): a property should fail for each, or declare it in "
               f"autograder/properties/{assignment}.equivalent.toml") if undeclared else "every mutant killed or declared"
    print(f"{assignment}: {verdict}\n", file=out, flush=True)
