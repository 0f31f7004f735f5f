"""One mutant graded in a fresh process: ``python -m autograder.tools.mutants.child RESULT`` reads
``{"assignment", "cells"}`` as JSON on stdin, runs the cells as a kernel would, grades every group
with the property module, and writes ``{"earned", "failed"}`` as JSON to RESULT.

A fresh process per mutant, as a fresh kernel per student: JAX's caches start empty, XLA compiles with
the kernels' flags (the parent sets them), and a mutant that hangs or crashes the interpreter costs
only itself.
"""

from __future__ import annotations

import json
import sys


def main(result_path: str) -> int:
    request = json.load(sys.stdin)
    from autograder import group_points, run_group
    from autograder.grading.submission import from_cells

    assignment = request["assignment"]
    submission = from_cells([tuple(cell) for cell in request["cells"]], f"{assignment} (mutant)")
    earned, failed = 0.0, []
    for group in group_points(assignment):
        report = run_group(assignment, group, submission)
        earned += report.earned
        failed += [f"{group}/{r.prop.name}" for r in report.results if not r.passed]
    with open(result_path, "w", encoding="utf-8") as out:
        json.dump({"earned": earned, "failed": failed}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
