"""``python -m autograder upgrade-check``: a throwaway environment with another JAX, the claims
and the corpus run there, and a report of what no longer holds.

Checked here with the pinned JAX itself (the new environment borrows this one's packages, so
nothing is downloaded): a real environment is built and probed, and everything holds, as CI
says it does. That the report names what changes is checked on that real probe's findings with
the changes another JAX makes put in: a claim that fails, a corpus file whose mistake a property
no longer catches, a flag XLA does not know.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from autograder.tools.upgrade import compare

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENT = "branch_repair"  # the smallest corpus


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    work = tmp_path_factory.mktemp("upgrade")
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "upgrade-check", "--jax", version("jax"), "--assignment", ASSIGNMENT,
         "--work-dir", str(work / "check"), "--json", str(work / "found.json")],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    found = json.loads((work / "found.json").read_text()) if (work / "found.json").is_file() else {}
    return done, found, work / "check"


def test_the_pinned_jax_checked_in_a_new_environment_holds_everything(checked):
    done, found, work = checked
    assert done.returncode == 0, done.stdout + done.stderr
    corpus = sorted(p.stem for p in (REPO / "tests" / "corpus" / ASSIGNMENT).glob("*.py"))
    assert sorted(name.split("/", 1)[1] for name in found["corpus"]) == corpus
    claims = [name for name in found["claims"] if "test_claim_holds" in name]
    assert claims and all(f"[{ASSIGNMENT}: " in name for name in claims)
    assert f"Corpus: {len(corpus)} of {len(corpus)} files earn what they declare." in done.stdout
    assert f"Claims: {len(found['claims'])} of {len(found['claims'])} tests hold." in done.stdout
    assert "Everything the course holds on its pin holds here too." in done.stdout
    # It ran in the environment it built, with that environment's own Python, and installed nothing new there.
    assert (work / "env" / "bin" / "python").exists() and found["jax"] == version("jax")
    assert f"Requirement already satisfied: jax=={version('jax')}" in (work / "pip.log").read_text()


def test_what_another_jax_changes_is_named_per_claim_file_and_property(checked):
    _, found, _ = checked
    changed = copy.deepcopy(found)
    claim = next(name for name in changed["claims"] if "test_claim_holds" in name)
    changed["claims"][claim] = {"outcome": "failed", "message": "AssertionError: got 'x', expected 'y'"}
    wrong = next(name for name, entry in sorted(changed["corpus"].items()) if entry["declared_fails"])
    caught = changed["corpus"][wrong]["declared_fails"][0]
    changed["corpus"][wrong]["failed"].remove(caught)  # the mistake now slips past that property
    changed["flags"]["known"] = changed["flags"]["course"][1:]  # that XLA does not know the first flag
    lines, holds = compare.report(changed)
    text = "\n".join(lines)
    assert not holds
    assert claim.split("::", 1)[1] in text and "got 'x', expected 'y'" in text
    assert f"{wrong}: passes {caught}, which its mistake should fail" in text
    assert f"{ASSIGNMENT} / {caught}: passes a file it should fail (1 file)" in text
    assert f"does not know {changed['flags']['course'][0]}" in text
    assert compare.report(found)[1]  # and the unchanged findings hold


def test_an_unknown_python_or_assignment_is_named(tmp_path):
    for extra, said in ((["--python", "python9.9"], "no Python 'python9.9' here"),
                        (["--assignment", "no_such_one"], "no assignment 'no_such_one'")):
        done = subprocess.run([sys.executable, "-m", "autograder", "upgrade-check", "--jax", "0.0.1",
                               "--work-dir", str(tmp_path / "w"), *extra], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 1 and said in done.stderr, done.stderr


def test_another_jax_gets_the_ml_dtypes_it_asks_for_and_the_course_keeps_its_other_pins():
    """ml_dtypes is held below 0.7 for speed alone: a JAX under check that needs a newer one gets it."""
    import tomllib

    from autograder.tools.upgrade import environment

    wanted = environment.requirements("0.99.0")
    names = [r.split("=")[0].split("<")[0].split(">")[0].strip() for r in wanted]
    assert wanted[:2] == ["jax==0.99.0", "jaxlib==0.99.0"]
    assert "ml_dtypes" not in names and names.count("jax") == names.count("jaxlib") == 1
    project = tomllib.loads(Path(environment.REPO_ROOT, "pyproject.toml").read_text())["project"]
    assert "ml_dtypes>=0.5,<0.7" in project["dependencies"]  # the bound this test is about is there
    assert [r for r in project["dependencies"] if r.startswith("hypothesis")][0] in wanted
