"""No copy of the grading package is readable from a kernel, in the layouts instructors use.

nbgrader puts its working folder (the course root) first on ``sys.path``, so its process
may import one copy of the package while a kernel imports another: a course folder that is
a copy of the repository, with the package installed from somewhere else, once let a
notebook print every module of the course folder's copy. Each layout here is built for real:
copies of this repository, a virtual environment with the package installed editable or
not (its other packages are this environment's), plain nbgrader run by that environment's
Python from the course root, a kernel it starts. The notebook walks every copy the layout
holds and every folder on its ``sys.path``, and names each grader file it can read.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, side_by_side

from autograder.confinement import kernel_manager
from autograder.confinement.preprocessors import REMOVED, grader_lines
from autograder.tools import scratch

pytestmark = pytest.mark.slow

ASSIGNMENT = "static_max_mode"
FULL = {"test_modes": 3.0, "test_errors": 1.0, "test_traces": 2.0, "test_sorting": 2.0}
#: What the probing notebook gets: the evidence-based checks withheld (errors, traces, and Part C's values,
#: which a program staged in the kernel also judges).
FLAGGED = {**FULL, "test_errors": 0.0, "test_traces": 0.0, "test_sorting": 0.0}
_SKIP = shutil.ignore_patterns(".venv", ".git", "__pycache__", "build", "*.egg-info", "gradebook.db")

#: The notebook's extra cell: every grader file it can open under the folders it is given and
#: under its own sys.path, and the text of one, which feedback would then show.
PROBE = '''
import json, os, sys
found = []
for root in {roots!r} + [p for p in sys.path if p]:
    for folder, _, files in os.walk(root):
        if "/autograder/" in folder + "/":
            for name in files:
                if name.endswith(".py"):
                    try:
                        with open(os.path.join(folder, name)) as file:
                            text = file.read()
                    except OSError:
                        continue
                    found.append(os.path.join(folder, name))
print("readable grader files:", json.dumps(sorted(set(found))))
for path in sorted(set(found))[:1]:
    print(open(path).read())
'''


def _copy_of_repository(where: Path) -> Path:
    shutil.copytree(REPO, where, ignore=_SKIP)
    return where


def _environment(where: Path, install: Path, editable: bool) -> Path:
    """A virtual environment with the course package installed from ``install``, and this
    environment's packages (JAX, nbgrader...) through a path file; its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "course-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         *(["-e"] if editable else []), str(install)],
        check=True, capture_output=True, cwd=where,
    )
    return python


def _nbgrader(python: Path, course_root: Path, *args: str) -> None:
    # The layout's own Python decides what is imported: no PYTHONPATH (scratch.tool_env sets one).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PATH": f"{python.parent}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
           + os.environ.get("PATH", ""), "JUPYTER_PATH": str(Path(sys.prefix, "share", "jupyter"))}
    proc = subprocess.run([str(python), "-m", "nbgrader", *args], cwd=course_root, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _grade_probe(python: Path, course_root: Path, roots: list[Path], fresh_kernels: bool = False) -> dict:
    """Autograde the correct sample with the probe cell, give feedback; what the kernel could
    read, the scores, and the feedback's text."""
    if fresh_kernels:
        with open(course_root / "nbgrader_config.py", "a") as config:
            config.write("c.ConfinedKernelManager.fork_server = False\n")
    notebook = json.loads((REPO / "tests" / "samples" / ASSIGNMENT / "correct.ipynb").read_text())
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": PROBE.format(roots=[str(r) for r in roots])})
    submitted = course_root / "submitted" / "ann" / ASSIGNMENT
    submitted.mkdir(parents=True)
    (submitted / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook))
    _nbgrader(python, course_root, "generate_assignment", ASSIGNMENT, "--force")
    _nbgrader(python, course_root, "autograde", ASSIGNMENT, "--create")
    _nbgrader(python, course_root, "generate_feedback", ASSIGNMENT)
    graded = json.loads((course_root / "autograded" / "ann" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    texts = ["".join(o.get("text", "")) for cell in graded["cells"] for o in cell.get("outputs", [])]
    [said] = [t for t in texts if t.startswith("readable grader files:")]
    scores = {
        cell["metadata"]["nbgrader"]["grade_id"]: float("".join(o["data"]["text/plain"]))
        for cell in graded["cells"] if cell["metadata"].get("nbgrader", {}).get("grade")
        for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"
    }
    feedback = (course_root / "feedback" / "ann" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    own = {line.strip() for cell in graded["cells"] for line in "".join(cell["source"]).splitlines()}
    return {"readable": json.loads(said.splitlines()[0].split(":", 1)[1]), "scores": scores, "feedback": feedback,
            "own lines": own}


def _shows_grader_source(feedback: str, own_lines: set[str]) -> list[str]:
    """Lines of the feedback page (tags dropped) that are lines of the grader and not of the
    notebook's own cells (``import jax.numpy as jnp`` is both), or the scrubber's mark."""
    known = grader_lines() - own_lines
    lines = (html.unescape(re.sub(r"<[^>]*>", "", line)).strip() for line in feedback.splitlines())
    return [line for line in lines if line in known or REMOVED in line]


def _assert_sealed_off(result: dict) -> None:
    assert result["readable"] == []
    # The kernel still imported its own copy and graded with it: the values' points are kept. The
    # probe names the grader's folders, so the notebook is flagged for reaching into the grader
    # (grading/reach.py) and the points resting on its kernel's own reports are withheld.
    assert result["scores"] == FLAGGED
    assert "Reaches into the grader" in result["feedback"]
    assert _shows_grader_source(result["feedback"], result["own lines"]) == []


def _outside_tmp(folders: list[Path]) -> Path:
    """A folder outside /tmp (the jail gives each kernel a private /tmp of its own, which would hide
    a layout there whatever else the jail does), noted in ``folders`` for removal."""
    base = "/srv" if os.access("/srv", os.W_OK) else "/var/lib"
    folder = Path(tempfile.mkdtemp(prefix="autograder-layout-", dir=base))
    folder.chmod(0o755)  # as an instructor's folders are: mkdtemp's 0700 alone would keep every kernel out
    folders.append(folder)
    return folder


def _installed_editable(where: Path) -> None:
    repo = _copy_of_repository(where / "course")
    python = _environment(where / "venv", repo, editable=True)
    _assert_sealed_off(_grade_probe(python, repo, [repo, where / "venv"]))


def _installed_not_editable(where: Path, kernels: str) -> None:
    repo = _copy_of_repository(where / "course")
    python = _environment(where / "venv", repo, editable=False)
    _assert_sealed_off(_grade_probe(python, repo, [repo, where / "venv"], fresh_kernels=kernels == "fresh"))


def _another_checkout_installed_editable(where: Path) -> None:
    repo = _copy_of_repository(where / "course")
    checkout = _copy_of_repository(where / "checkout")
    python = _environment(where / "venv", checkout, editable=True)
    _assert_sealed_off(_grade_probe(python, repo, [repo, checkout, where / "venv"]))


def _course_elsewhere(where: Path) -> None:
    checkout = _copy_of_repository(where / "checkout")
    python = _environment(where / "venv", checkout, editable=True)
    course = scratch.prepare_course(where / "course", repo_root=checkout)
    _assert_sealed_off(_grade_probe(python, course.root, [course.root, checkout, where / "venv"]))


def _everything_under_tmp(where: Path) -> None:
    checkout = _copy_of_repository(where / "checkout")
    python = _environment(where / "venv", checkout, editable=False)
    course = scratch.prepare_course(where / "course", repo_root=checkout)
    _assert_sealed_off(_grade_probe(python, course.root, [course.root, checkout, where / "venv", REPO]))


@pytest.fixture(scope="module")
def layouts(request, tmp_path_factory):
    """Every layout graded, two side by side (tests/conftest.py side_by_side): each is three nbgrader
    commands on one notebook, mostly one core."""
    folders: list[Path] = []
    bodies = {
        "test_course_root_is_the_repository_installed_editable": lambda: _installed_editable(_outside_tmp(folders)),
        **{f"test_course_root_is_the_repository_installed_not_editable[{kernels}]":
           (lambda kernels=kernels: _installed_not_editable(_outside_tmp(folders), kernels))
           for kernels in ("forked", "fresh")},
        "test_course_root_is_a_repository_with_another_checkout_installed_editable":
            lambda: _another_checkout_installed_editable(_outside_tmp(folders)),
        "test_course_elsewhere": lambda: _course_elsewhere(_outside_tmp(folders)),
        "test_everything_under_tmp": lambda: _everything_under_tmp(tmp_path_factory.mktemp("under-tmp")),
    }
    try:
        with side_by_side(request, bodies) as runs:
            yield runs
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def test_course_root_is_the_repository_installed_editable(request, layouts):
    layouts[request.node.name].result()


@pytest.mark.parametrize("kernels", ["forked", "fresh"])
def test_course_root_is_the_repository_installed_not_editable(request, layouts, kernels):
    """The layout that leaked: nbgrader imported the course folder's copy, the kernel site-packages'."""
    layouts[request.node.name].result()


def test_course_root_is_a_repository_with_another_checkout_installed_editable(request, layouts):
    layouts[request.node.name].result()


def test_course_elsewhere(request, layouts):
    layouts[request.node.name].result()


def test_everything_under_tmp(request, layouts):
    layouts[request.node.name].result()


def test_every_copy_but_the_kernels_is_hidden_with_its_repository(tmp_path, monkeypatch):
    """In this process: a copy on sys.path and one in the course root are hidden, with the
    repositories around them; the copy a kernel imports is kept, not hidden."""
    stray = _copy_of_repository(tmp_path / "stray")
    course = tmp_path / "course"
    shutil.copytree(REPO / "autograder", course / "autograder", ignore=_SKIP)
    monkeypatch.syspath_prepend(str(stray))
    config = scratch.prepare_course(tmp_path / "scratch").root
    from traitlets.config import Config

    settings = Config()
    settings.CourseDirectory.root = str(course)
    hidden = kernel_manager.hidden_paths(settings)
    kernels_copy = kernel_manager.copies.kernel_copy()
    assert str(stray / "autograder") in hidden and str(stray) in hidden
    assert str(course / "autograder") in hidden
    assert str(kernels_copy) not in hidden
    assert str(kernels_copy) in kernel_manager.kept_paths(str(config / "kernel.json"))
