"""The README's instructor workflow, run as written, in a fresh clone of the repository.

The commands come from the README itself: every fenced ``bash`` block of the "Instructor
workflow" section (before its first subsection), and the "Student workflow" section's block
for the students. Nothing here repeats them. The clone holds only committed files, as a new
instructor's would (``release/`` included, which is why the workflow needs ``--force``).

Set-up an instructor's machine has anyway: an exchange folder, named to nbgrader in a
Jupyter configuration folder of its own (``JUPYTER_CONFIG_DIR``), never in the clone. Three
students fetch and submit with the README's student commands (``--student`` added: they all
share this account, see :mod:`autograder.tools.scratch`), each handing in one of
``tests/samples/<assignment>/``. Then the checks: every grade cell's points in the gradebook
equal what the sample earns graded in this process, ``release/`` is byte-identical to the
commit, each student has feedback HTML, and the exported CSV lists each student's score.

How a command runs (as which user, with which Python and environment) is :class:`Runner`'s
business alone: the root variant runs as this process's user, with a virtual environment that
sees the clone's ``autograder`` first and this environment's packages; the plain-user variant
makes a user and a virtual environment of Debian's ``/usr/bin/python3`` with the clone
installed, and is skipped where a plain user cannot grade yet.
"""

from __future__ import annotations

import csv
import os
import pwd
import re
import shlex
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO

A = "static_max_mode"  # the assignment the README's workflow names
STUDENTS = {"alice": "correct", "bob": "partial", "carol": "empty"}
FENCE = re.compile(r"^(```|~~~)\s*(\S*)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


# ---------------------------------------------------------------- the README, parsed


def section_blocks(markdown: str, heading: str, language: str = "bash") -> list[str]:
    """The fenced ``language`` blocks of the section titled ``heading``, before any of its
    subsections. Headings inside fences are code, not headings."""
    blocks: list[str] = []
    inside = False
    fence: tuple[str, str] | None = None
    body: list[str] = []
    for line in markdown.splitlines():
        if fence is not None:
            if line.strip() == fence[0]:
                if inside and fence[1] == language:
                    blocks.append("\n".join(body))
                fence, body = None, []
            else:
                body.append(line)
            continue
        match = FENCE.match(line)
        if match:
            fence = (match[1], match[2])
            continue
        match = HEADING.match(line)
        if match:
            if inside:
                break
            inside = match[2] == heading
    assert blocks, f"no ```{language} block under the README heading {heading!r}"
    return blocks


def commands(blocks: list[str]) -> list[list[str]]:
    """Each non-comment line of the blocks, split as the shell splits it (comments dropped)."""
    found = []
    for block in blocks:
        for line in block.splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                found.append(argv)
    return found


def readme_commands(clone: Path) -> tuple[list[list[str]], list[list[str]]]:
    text = (clone / "README.md").read_text(encoding="utf-8")
    return (commands(section_blocks(text, "Instructor workflow")),
            commands(section_blocks(text, "Student workflow")))


def test_the_readme_workflow_is_found():
    """The parsing itself, on the working README: the cycle, in nbgrader's order."""
    instructor, student = readme_commands(REPO)
    verbs = [argv[1] for argv in instructor]
    assert all(argv[0] == "nbgrader" for argv in instructor), instructor
    assert verbs == ["generate_assignment", "release_assignment", "collect", "autograde",
                     "generate_feedback", "export"], verbs
    assert [argv[1] for argv in student] == ["fetch_assignment", "submit"], student


# ---------------------------------------------------------------- how a command runs


@dataclass
class Runner:
    """Runs a command as ``user`` (None: this process's user) with ``venv``'s programs first on
    PATH and ``env`` added; every command of the test goes through :meth:`run`."""

    venv: Path
    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    log: list[str] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        env["PATH"] = f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        env["VIRTUAL_ENV"] = str(self.venv)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            env.update(HOME=entry.pw_dir, USER=self.user, LOGNAME=self.user)
        env.update(self.env)
        return env

    def run(self, argv: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
        env = self.environment()
        full = [shutil.which(argv[0], path=env["PATH"]) or argv[0], *argv[1:]]
        if self.user is not None:
            full = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", self.user, "--", *full]
        proc = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        self.log.append(f"$ (cd {cwd} && {shlex.join(full)})  -> {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc

    def check(self, argv: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
        proc = self.run(argv, cwd, timeout)
        assert proc.returncode == 0, self.log[-1][-6000:]
        return proc


def root_venv(where: Path, clone: Path) -> Path:
    """A virtual environment of this test's Python in which ``autograder`` is the clone's (a path
    entry, as an editable install makes) and every other package is this environment's."""
    venv = where / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    (purelib / "course-clone.pth").write_text(f"{clone}\n" + "".join(f"{p}\n" for p in site.getsitepackages()))
    _nbgrader_script(venv, Path(sys.prefix))
    return venv


def _nbgrader_script(venv: Path, packages_prefix: Path) -> None:
    """The ``nbgrader`` program of ``venv``, and the data files of the environment whose packages it
    uses (nbconvert's templates, which generate_feedback needs, live in ``share/jupyter``)."""
    script = venv / "bin" / "nbgrader"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom nbgrader.apps.nbgraderapp import main\nsys.exit(main())\n")
    script.chmod(0o755)
    (venv / "share").symlink_to(packages_prefix / "share")


# ---------------------------------------------------------------- the workflow


@dataclass
class Workflow:
    clone: Path
    runner: Runner
    exchange: Path
    students: Path


def clone_repository(where: Path) -> Path:
    """A fresh clone, with the working tree's changes committed in it (in the clone only): what
    the README's instructor gets once this working tree is committed."""
    clone = where / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    from test_rootless import working_tree_files

    for name in working_tree_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, clone / name)
    for step in (["git", "add", "--all"],
                 ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "--quiet",
                  "--allow-empty", "-m", "the working tree"]):
        subprocess.run(step, cwd=clone, check=True, capture_output=True)
    return clone


def exchange_config(where: Path) -> tuple[Path, Path]:
    """An exchange everyone may write, named in a Jupyter configuration folder of its own."""
    exchange = where / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    config = where / "jupyter-config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    return exchange, config


def run_the_workflow(flow: Workflow) -> None:
    instructor, student = readme_commands(flow.clone)
    for argv in instructor:
        if argv[1] == "collect":  # the students' turn: between the release and the collect
            for sid, sample in STUDENTS.items():
                home = flow.students / sid
                home.mkdir(parents=True)
                if flow.runner.user is not None:  # the student's own folder, as theirs would be
                    shutil.chown(flow.students, flow.runner.user, flow.runner.user)
                    shutil.chown(home, flow.runner.user, flow.runner.user)
                for step in student:
                    if step[1] == "submit":
                        shutil.copy(REPO / "tests" / "samples" / A / f"{sample}.ipynb", home / A / f"{A}.ipynb")
                        step = [*step, "--student", sid]
                    flow.runner.check(step, home)
        flow.runner.check(argv, flow.clone)


def expected_points(sample: Path) -> dict[str, float]:
    """What each grade cell of ``sample`` earns, graded in this process (``test_<group>``)."""
    from autograder import from_notebook, group_points, run_group

    submission = from_notebook(sample)
    return {f"test_{group}": run_group(A, group, submission).earned for group in group_points(A)}


def check_results(flow: Workflow) -> None:
    from nbgrader.api import Gradebook

    log = "\n".join(flow.runner.log)[-8000:]
    status = subprocess.run(["git", "-c", f"safe.directory={flow.clone}",  # the plain user's clone, read by root
                             "status", "--porcelain", "--untracked-files=no"], cwd=flow.clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", f"generate_assignment --force changed committed files:\n{status}"

    with Gradebook(f"sqlite:///{flow.clone / 'gradebook.db'}") as gb:
        scores = {}
        for sid in STUDENTS:
            nb = gb.find_submission_notebook(A, A, sid)
            scores[sid] = {g.cell.name: g.auto_score for g in nb.grades if g.cell.name.startswith("test_")}
    full = None
    for sid, sample in STUDENTS.items():
        deserved = expected_points(REPO / "tests" / "samples" / A / f"{sample}.ipynb")
        assert scores[sid] == deserved, (sid, sample, scores[sid], deserved, log)
        full = sum(deserved.values()) if sample == "correct" else full
        feedback = flow.clone / "feedback" / sid / A / f"{A}.html"
        assert feedback.is_file(), (feedback, log)
    assert full and sum(scores["alice"].values()) == full
    assert 0 < sum(scores["bob"].values()) < full and sum(scores["carol"].values()) == 0

    with open(flow.clone / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f) if row["assignment"] == A}
    assert set(rows) == set(STUDENTS), rows
    for sid in STUDENTS:
        assert float(rows[sid]["score"]) == sum(scores[sid].values()), rows[sid]


@pytest.mark.slow
def test_the_readme_instructor_workflow_as_root(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the root variant runs as root (the grading jail needs it)")
    clone = clone_repository(tmp_path)
    exchange, config = exchange_config(tmp_path)
    venv = root_venv(tmp_path, clone)
    # This environment's programs (alembic, which nbgrader runs) after the clone's venv, as an
    # activated venv of the README's would have them.
    runner = Runner(venv, env={"JUPYTER_CONFIG_DIR": str(config),
                               "PATH": f"{venv / 'bin'}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"})
    flow = Workflow(clone, runner, exchange, tmp_path / "students")
    run_the_workflow(flow)
    check_results(flow)


def plain_venv(where: Path, clone: Path, packages: Path) -> Path:
    """A virtual environment of Debian's Python for the plain user in which ``autograder`` is the
    clone's and every other package is the plain user's test environment's (``packages``)."""
    venv = where / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = next((venv / "lib").glob("python3*/site-packages"))
    (purelib / "course-clone.pth").write_text(f"{clone}\n{packages}\n")
    _nbgrader_script(venv, packages.parents[2])  # <prefix>/lib/python3.X/site-packages
    return venv


@pytest.mark.slow
def test_the_readme_instructor_workflow_as_a_plain_user():
    """The same workflow as an instructor without root: the rootless jail grades."""
    from test_rootless import plain_environment

    user, base, bin_ = plain_environment()
    where = base / "readme-workflow"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    clone = clone_repository(where)
    exchange, config = exchange_config(where)
    packages = next((bin_.parent / "lib").glob("python3*/site-packages"))
    venv = plain_venv(where, clone, packages)
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(where)], check=True)
    # The test environment's programs (alembic, which nbgrader runs) after the clone's venv.
    runner = Runner(venv, env={"JUPYTER_CONFIG_DIR": str(config),
                               "PATH": f"{venv / 'bin'}:{bin_}:/usr/local/bin:/usr/bin:/bin"}, user=user.pw_name)
    flow = Workflow(clone, runner, exchange, where / "students")
    run_the_workflow(flow)
    assert any("grading kernels start in the rootless jail" in entry for entry in runner.log), runner.log[-1][-3000:]
    check_results(flow)
