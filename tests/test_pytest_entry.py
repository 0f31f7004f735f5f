"""Can an instructor grade one submission from a shell with plain pytest?"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(module: str, submission: Path, tmp_path: Path):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
         str(ROOT / "autograder" / "properties" / f"test_{module}.py"), "--submission", str(submission)],
        capture_output=True, text=True, cwd=tmp_path,
    )


def test_correct_notebook_passes_every_property(tmp_path):
    run = _pytest("branch_repair", ROOT / "tests" / "samples" / "branch_repair" / "correct.ipynb", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout


def test_wrong_submission_fails_with_the_feedback_sentence(tmp_path):
    run = _pytest("branch_repair", ROOT / "tests" / "corpus" / "branch_repair" / "greater_equal.py", tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 3 passed" in run.stdout
    assert "treats a gain of exactly 1.0 as above the threshold" in run.stdout
