"""Is grading reproducible, and does a correct answer keep every point when JAX is noisy?"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import assignments, group_points

CORPUS = Path(__file__).parent / "corpus"

_GRADE_ALL = """
import sys
from autograder import from_python, group_points, run_group
from autograder.grading.feedback import render


assignment, path = sys.argv[1], sys.argv[2]
submission = from_python(path)
for group in group_points(assignment):
    print(render(run_group(assignment, group, submission)))
"""


@pytest.mark.parametrize("wrong", ["static_max_mode/rejit_jitted_wrapper", "ledger_extension/shapes_only_prediction"])
def test_three_gradings_give_identical_feedback(wrong, tmp_path):
    """Same submission, three fresh processes: the same points and the very same words."""
    assignment = wrong.split("/")[0]
    runs = [
        subprocess.run(
            [sys.executable, "-c", _GRADE_ALL, assignment, str(CORPUS / f"{wrong}.py")],
            capture_output=True, text=True, check=True, cwd=tmp_path,
        ).stdout
        for _ in range(3)
    ]
    assert "FAIL" in runs[0]
    assert runs[0] == runs[1] == runs[2]
    assert not any(tmp_path.iterdir()), "grading wrote files into the working folder"


_NOISY = """
import logging, warnings
import jax
jax.config.update("jax_log_compiles", True)
jax.config.update("jax_explain_cache_misses", True)
logging.basicConfig(level=logging.DEBUG)
warnings.simplefilter("always")
warnings.warn("a student's own warning")
"""


def test_correct_answers_keep_full_points_with_jax_logging_on(tmp_path):
    """nbgrader zeroes a test cell that writes to stderr: the grader must keep JAX's
    compile logs, cache-miss explanations and warnings out of the grade cells."""
    cells = [nbformat.v4.new_code_cell(_NOISY)]
    expected = []
    for assignment in assignments():
        source = (CORPUS / assignment / "correct.py").read_text()
        cells.append(nbformat.v4.new_code_cell(source))
        for group, points in group_points(assignment).items():
            cells.append(nbformat.v4.new_code_cell(
                f'from autograder import grade\ngrade("{assignment}", "{group}", globals())'
            ))
            expected.append((assignment, group, points))
    notebook = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()

    noisy_setup = notebook.cells[0].outputs
    assert any(o.get("name") == "stderr" for o in noisy_setup), "the setup cell should really produce noise"
    grade_cells = [c for c in notebook.cells[1:] if c.source.startswith("from autograder")]
    assert len(grade_cells) == len(expected)
    for cell, (assignment, group, points) in zip(grade_cells, expected):
        streams = [o for o in cell.outputs if o.output_type == "stream"]
        assert all(o.name == "stdout" for o in streams), (assignment, group, cell.outputs)
        results = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert float(results[0].data["text/plain"]) == points, (assignment, group, cell.outputs)


_DRAW = """
import importlib.util, sys
from hypothesis import given, strategies as st
from autograder.kit import VALUES, float32_values

if len(sys.argv) > 1:  # a module of the student's own, full of numbers, loaded before grading
    spec = importlib.util.spec_from_file_location("students_constants", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)

seen = []

@VALUES
@given(float32_values(), st.integers(-10**6, 10**6))
def draw(x, n):
    seen.append((x.shape, x.tolist(), n))

draw()
print(repr(seen))
"""


def test_examples_do_not_depend_on_the_modules_loaded(tmp_path):
    """Hypothesis favours constants it finds in local modules' source; a grade must not
    depend on which modules a kernel (or a student) happened to load."""
    constants = tmp_path / "students_constants.py"
    constants.write_text("".join(f"C{i} = {v!r}\n" for i, v in enumerate([777777, -31337, 2.5e7, 0.125, 1e-3, 123456])))

    def examples(*argv):
        return subprocess.run([sys.executable, "-c", _DRAW, *argv], capture_output=True, text=True, check=True,
                              cwd=tmp_path).stdout

    plain, with_module = examples(), examples(str(constants))
    assert "777777" not in with_module and "-31337" not in with_module
    assert plain == with_module


_GRADE_THROUGH_THE_JUDGE = """
import contextlib, io, sys
import test_graders

with contextlib.redirect_stdout(io.StringIO()):
    verdict = test_graders.grade_file(sys.argv[1])
print(sorted(verdict.failed), verdict.earned)
"""


@pytest.mark.parametrize("seed", ["14", "99"])
def test_a_correct_answer_keeps_its_points_whatever_the_kernels_hash_seed(seed):
    """Every kernel draws its string hashes afresh, and a frozenset lists its items in an order that
    hangs on them and on the order they went in: under hash seed 99 the two calls' frozensets of this
    correct ledger answer describe themselves in different words (kind and text) while hashing equal.
    Judged through the judge, the signature property compares them by hash, and the answer keeps its
    points under either seed (under 99 it lost both points of `signature_matches_jax` before)."""
    path = CORPUS / "ledger_extension" / "student_c_correct_frozenset.py"
    done = subprocess.run([sys.executable, "-c", _GRADE_THROUGH_THE_JUDGE, str(path)], capture_output=True, text=True,
                          cwd=Path(__file__).parent, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1].startswith("[] "), done.stdout[-500:]
