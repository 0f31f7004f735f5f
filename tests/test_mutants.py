"""``python -m autograder mutants``: mistakes written into the reference, graded for real, and what
``check`` makes of the run.

The course's own records (``autograder/properties/<a>.mutants.json``) are held by
``tests/test_check.py`` (the course passes every rule: no stale record, no undeclared survivor);
here, the command itself, on a copy of one assignment."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

from autograder.tools.check import check
from autograder.tools.mutants import build

A = "static_max_mode"

#: The course's misconception operators (issue 26), each writing the mistake into some reference.
MISCONCEPTIONS = {
    "drop_jit", "jit_inner_only", "rejit_every_call", "make_static", "python_loop", "keyword_argument",
    "host_read_in_loop", "map_eagerly", "drop_recursion", "dedupe_repeats", "normalise_input", "python_branch",
    "baked_argument", "forget_leaf_part", "forget_dict_keys",
}


def test_every_misconception_operator_finds_a_place_in_the_course():
    found = {}
    for notebook in sorted((REPO / "source").glob("*/*.ipynb")):
        for mutant in build.mutants(build.reference(notebook, notebook.parent.name)):
            found.setdefault(mutant.operator, []).append(mutant)
            ast.parse("\n".join(source for _, source in mutant.cells if "BEGIN SOLUTION" not in source))
    assert MISCONCEPTIONS <= set(found), sorted(MISCONCEPTIONS - set(found))
    # Each mutant changes its own cell only, and only there.
    for mutants in found.values():
        for mutant in mutants:
            assert mutant.diff.count("(reference)") == 1 and mutant.diff.count("\n-") + mutant.diff.count("\n+") > 0


def test_a_baked_argument_is_what_a_global_read_while_tracing_gives():
    """The operator's mutant behaves as the student's mistake does: under jit, a second call at the
    same shapes reuses the first value of the baked argument; a new shape traces and bakes anew;
    run eagerly, a plain def's argument is read as given."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from autograder.tools.mutants.misconceptions import BakedArgument

    space: dict = {}
    exec(BakedArgument.helpers, space)
    scaled = space["_mutant_baked"]("scale")(lambda x, scale: x * scale)
    assert float(scaled(jnp.ones(()), 2.0)) == 2.0
    assert float(scaled(jnp.ones(()), 5.0)) == 2.0  # the first value, baked in
    assert float(scaled(jnp.ones(3), 5.0)[0]) == 5.0  # a new shape traces again and bakes the new value

    def plain(x, scale):
        scale = space["_mutant_first_seen"]("scale", scale)
        return x * scale
    jitted = jax.jit(plain)
    assert float(jitted(jnp.ones(()), np.float32(2.0))) == 2.0
    assert float(jitted(jnp.ones(()), np.float32(7.0))) == 2.0
    assert float(plain(jnp.ones(()), np.float32(7.0))) == 7.0  # eagerly, nothing is baked


def test_a_python_loop_below_a_threshold_makes_the_bound_static():
    loops = build.reference(REPO / "source" / "loops" / "loops.ipynb", "loops")
    below = next(m for m in build.mutants(loops, {"python_loop"}) if "below" in m.what)
    assert "static_argnames=('steps',)" in below.diff and "_mutant_python_fori_below(0, steps" in below.diff


@pytest.fixture
def course(tmp_path) -> Path:
    """One assignment's notebook and property module, with a line added to its reference that
    no grader can see: a name nothing reads. The solution of ``normalise_jitted`` is made given
    code (its markers taken out): the command mutates the two other answers alone, 23 mutants
    where the whole notebook would have 53 (the course's own records, whole, are tests/test_check.py's)."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "source" / A, root / "source" / A)
    (root / "autograder" / "properties").mkdir(parents=True)
    shutil.copy(REPO / "autograder" / "properties" / f"test_{A}.py", root / "autograder" / "properties")
    _edit(root, "normalise_jitted", lambda text: re.sub(r"^### (BEGIN|END) SOLUTION\n?", "", text, flags=re.M))
    _edit(root, "choose", lambda text: text.replace("### END SOLUTION", "spare = 'max'\n### END SOLUTION"))
    return root


def _edit(root: Path, grade_id: str, change) -> None:
    path = root / "source" / A / f"{A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    changed = change(cell.source)
    assert changed != cell.source, f"the test's edit of {grade_id} changed nothing"
    cell.source = changed
    nbformat.write(nb, path)


def _mutant_problems(root: Path) -> list[str]:
    return [str(p) for p in check(root, regenerate=False) if "mutant" in str(p) or "equivalent" in str(p)]


def test_a_survivor_fails_the_run_and_the_check_until_it_is_declared(course):
    """The whole assignment's mutants, graded by its real property module in fresh processes: the
    course's misconceptions are killed, the dead line's mutant survives, and the run says so."""
    proc = subprocess.run([sys.executable, "-m", "autograder", "mutants", A, "--repo", str(course)],
                          capture_output=True, text=True, timeout=900)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "SURVIVES choose/constant#1: the string `'max'` becomes `''`" in out, out
    assert "-spare = 'max'" in out and "+spare = ''" in out  # the survivor's diff
    assert out.count("SURVIVES") == 1, out
    record = json.loads((course / "autograder" / "properties" / f"{A}.mutants.json").read_text())
    ops = record["operators"]
    for op in ("normalise_input", "refusal", "drop_jit", "make_static", "rejit_every_call"):
        assert ops[f"{'generic' if op == 'refusal' else 'misconception'}/{op}"]["killed"] >= 1, (op, ops)
    normalised = [k for k, v in record["killed"].items() if k.startswith("choose_reduction/normalise_input")]
    assert normalised and all(any(f.startswith("errors/") for f in record["killed"][k]["failed"]) for k in normalised)

    assert _mutant_problems(course) == [
        f"autograder/properties/{A}.mutants.json: mutant choose/constant#1 (the string `'max'` becomes `''`, line 4) "
        f"keeps every point; make a property fail for it, or declare it in autograder/properties/{A}.equivalent.toml "
        "with the reason it is the same program"
    ]
    equivalent = course / "autograder" / "properties" / f"{A}.equivalent.toml"
    equivalent.write_text('"choose/constant#1" = "`spare` is read by nothing"\n')
    assert _mutant_problems(course) == []

    equivalent.write_text('"choose/constant#1" = "`spare` is read by nothing"\n"choose/drop_jit#0" = "it is not"\n')
    assert _mutant_problems(course) == [
        f"autograder/properties/{A}.equivalent.toml: choose/drop_jit#0 is declared equivalent but is killed now; "
        "remove the line"
    ]
    equivalent.write_text('"choose/constant#1" = ""\n')
    assert "give each equivalent mutant a one-line reason" in _mutant_problems(course)[0]

    _edit(course, "choose", lambda text: text.replace("spare = 'max'", "spare = 'sum'"))
    assert _mutant_problems(course) == [
        f"autograder/properties/{A}.mutants.json: stale: the notebook's code, the property module, autograder/kit "
        f"or the operators changed since the mutants were graded; run python -m autograder mutants {A}"
    ]


def test_an_assignment_never_mutated_is_a_problem(course):
    assert _mutant_problems(course) == [
        f"autograder/properties/{A}.mutants.json: no mutants record: nobody has measured what this grader kills; "
        f"run python -m autograder mutants {A}"
    ]
