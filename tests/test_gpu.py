"""The same grades on a GPU, checked where JAX can use one (skipped, with the reason, elsewhere).

Students do these notebooks on whatever JAX gives them, often a GPU, and the course is graded on a
CPU. Where this machine has a GPU, every corpus submission is graded on it, in a process of its own
as the corpus tests grade on the CPU, and must fail exactly the properties and earn exactly the
points it declares; and every claim of the notebooks holds there, except the sentences that say they
hold on a CPU (``device="cpu"`` in ``tests/test_claims.py``: XLA's CPU rewrites a division into a
multiplication by the reciprocal, and a product by a boolean mask into a selection).

``COURSE_GPU_PLATFORM`` names the JAX platform to hold these to (default ``cuda``); ``cpu`` runs the
same checks on the CPU, which shows the checks themselves work on a machine without a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

PLATFORM = os.environ.get("COURSE_GPU_PLATFORM", "cuda")


def _device(platform: str) -> str:
    """The kind of the first device of ``platform`` JAX finds here ("" where there is none)."""
    probe = ("import jax\ntry:\n    print(jax.devices(%r)[0].device_kind)\nexcept RuntimeError:\n    print('')\n"
             % platform)
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    return done.stdout.strip() if done.returncode == 0 else ""


DEVICE = _device(PLATFORM)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not DEVICE, reason=f"JAX finds no {PLATFORM} device on this machine: there is no GPU to grade on here")]

#: Grades every corpus file on the platform and prints, as JSON, each file whose verdict is not the one
#: it declares (the corpus tests' own grading, tests/test_graders.py's grade_file).
_GRADE = """
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
from test_graders import grade_file
wrong = {}
for path in sorted(Path(sys.argv[1], "tests", "corpus").glob(sys.argv[2])):
    verdict = grade_file(str(path))
    declared = verdict.declared
    if set(verdict.failed) != set(declared["FAILS"]) or sum(verdict.earned.values()) != declared["SCORE"]:
        wrong[f"{path.parent.name}/{path.stem}"] = {"failed": sorted(verdict.failed),
                                                    "declared": sorted(declared["FAILS"])}
print("@@gpu@@" + json.dumps(wrong))
"""


def grade_on(platform: str, pattern: str = "*/*.py") -> dict:
    env = {**os.environ, "JAX_PLATFORMS": platform}
    done = subprocess.run([sys.executable, "-c", _GRADE, str(REPO), pattern], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=3600)
    assert "@@gpu@@" in done.stdout, done.stderr[-4000:]
    return json.loads(done.stdout.split("@@gpu@@", 1)[1])


def test_every_corpus_file_earns_on_the_gpu_what_it_declares():
    assert grade_on(PLATFORM) == {}, f"graded on {DEVICE}"


def test_the_claims_hold_on_the_gpu():
    env = {**os.environ, "COURSE_CLAIMS_PLATFORM": PLATFORM}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_claims.py"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=3600)
    assert done.returncode == 0, f"on {DEVICE}:\n{done.stdout[-6000:]}"
