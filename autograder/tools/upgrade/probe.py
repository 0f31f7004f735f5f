"""The upgrade check's probe, run with the new environment's Python from the course's checkout:
the claims test, and every corpus file graded as the grading kernels compile. It writes what it
found as JSON and judges nothing itself (:mod:`autograder.tools.upgrade.compare` does).

    python -m autograder.tools.upgrade.probe --json OUT [--assignment A ...] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from pathlib import Path

from autograder.grading import compiler
from autograder.tools.repository import CORPUS, REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.tools.upgrade.probe")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--assignment", action="append", dest="assignments")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    assignments = args.assignments or sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    found = {
        "python": platform.python_version(),
        "jax": version("jax"),
        "jaxlib": version("jaxlib"),
        "assignments": assignments,
        "flags": {"course": list(compiler.XLA_FLAGS), "known": list(compiler.known_flags())},
        "claims": claims(assignments if args.assignments else None),
        "corpus": corpus(sorted(f for a in assignments for f in (CORPUS / a).glob("*.py")), args.workers),
    }
    args.json.write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    return 0


class _Outcomes:
    """A pytest plugin that keeps each test's outcome and, for a failure, its assertion's lines."""

    def __init__(self):
        self.found: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and (report.when != "setup" or report.passed):
            return  # a setup that passed is followed by its call; a teardown says nothing of the claim
        entry = {"outcome": report.outcome}
        if report.failed:
            said = [line[1:].strip() for line in report.longreprtext.splitlines() if line.startswith("E ")]
            entry["message"] = " ".join(said)[:600] or report.longreprtext.strip().splitlines()[-1][:600]
        self.found[report.nodeid] = entry


def claims(assignments: list[str] | None) -> dict[str, dict]:
    """The claims test's outcome, per test (a claim's test names its assignment and sentence)."""
    import pytest

    outcomes = _Outcomes()
    selection = ["-k", " or ".join(assignments)] if assignments else []
    pytest.main([str(REPO_ROOT / "tests" / "test_claims.py"), "-q", "-p", "no:cacheprovider", *selection],
                plugins=[outcomes])
    return outcomes.found


def corpus(files: list[Path], workers: int) -> dict[str, dict]:
    """Every corpus file graded (``tests/test_graders.py``'s ``grade_file``, with the grading
    kernels' XLA flags), beside what it declares."""
    import test_graders

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=test_graders._as_kernels_compile) as pool:
        verdicts = pool.map(test_graders.grade_file, map(str, files))
        return {f"{path.parent.name}/{path.stem}": _entry(verdict) for path, verdict in zip(files, verdicts)}


def _entry(verdict) -> dict:
    declared = verdict.declared
    entry = {
        "failed": sorted(verdict.failed), "declared_fails": sorted(declared.get("FAILS", ())),
        "earned": verdict.earned, "score": sum(verdict.earned.values()), "declared_score": declared.get("SCORE"),
    }
    if "MESSAGE" in declared:
        entry["message_shown"] = bool(re.search(declared["MESSAGE"], verdict.text))
    if "TEACHER" in declared:
        entry["teacher"] = {cell: float(points) for cell, points in declared["TEACHER"].items()}
        entry["review"] = "REVIEW" in declared
    entry["feedback"] = verdict.text if set(verdict.failed) != set(entry["declared_fails"]) else ""
    return entry


if __name__ == "__main__":
    sys.exit(main())
