"""The README's instructor workflow, run as written, twice in a row, in one fresh clone.

The commands come from the README itself: every fenced ``bash`` block of the "Instructor
workflow" section (before its first subsection), the "Without root" section's line naming the
exchange, and the "Student workflow" section's block for the students. Nothing here repeats them.
The clone holds only committed files, as a new instructor's would (``release/`` included, which is
why the workflow needs ``--force``).

The exchange is set exactly as the README tells the instructor, in a home of their own made
fresh for the test (a new account's): as root, nbgrader's default ``/usr/local/share/nbgrader/
exchange`` (each command runs in a mount namespace of its own where an empty folder of the test's
is bound at ``/usr/local/share/nbgrader``, so the machine's real exchange, if any, is never seen
or touched); as a plain user, the "Without root" line, run in the user's shell. The students
(three, sharing the instructor's account with ``--student``, see :mod:`autograder.tools.scratch`)
add the line that ``release_assignment`` printed (as root, the README's own line verbatim; as a
plain user the same line for that user's exchange) and run the README's student commands.

Round one: alice, bob and carol hand in ``tests/samples/<assignment>/`` correct, partial and
empty. Round two, the block again on the same clone and exchange: bob hands in the correct sample.
After each round: every command exited 0 and logged no error; every grade cell's points in the
gradebook equal what the student's latest sample earns graded in this process; ``release/`` is
byte-identical to the commit; each student has feedback HTML and fetched the page of their latest
submission; the exported CSV lists each score; and nbgrader warned about no read-only cell's
checksum but those of grade cells holding hidden tests (a student who edits a locked cell is still
named; the samples leave every locked cell as released).

How a command runs (as which user, with which Python and environment) is :class:`Runner`'s
business alone: the root variant runs as this process's user, with a virtual environment that
sees the clone's ``autograder`` first and this environment's packages; the plain-user variant
makes a user and a virtual environment of a system Python (``conftest.plain_python``) with the
clone installed, and is skipped where a plain user cannot grade yet.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import os
import re
import shlex
import shutil
import site
import subprocess
import sys
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO, side_by_side

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


def lines(blocks: list[str]) -> list[str]:
    """Each line of the blocks that is not blank or a comment."""
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def commands(blocks: list[str]) -> list[list[str]]:
    """Each non-comment line of the blocks, split as the shell splits it (comments dropped)."""
    return [argv for argv in (shlex.split(line, comments=True) for line in lines(blocks)) if argv]


@dataclass
class Readme:
    instructor: list[list[str]]  # the instructor's nbgrader commands
    exchange_line: str  # "Without root": the line that names the exchange
    student_setup: str  # "Student workflow": the once-only line (for root's default exchange)
    student: list[list[str]]  # the students' nbgrader commands


def read_readme(clone: Path) -> Readme:
    text = (clone / "README.md").read_text(encoding="utf-8")
    student = lines(section_blocks(text, "Student workflow"))
    naming = [line for line in lines(section_blocks(text, "Without root")) if "Exchange.root" in line]
    assert len(naming) == 1, naming
    setup = [line for line in student if not line.startswith("nbgrader ")]
    assert len(setup) == 1, setup
    return Readme(commands(section_blocks(text, "Instructor workflow")), naming[0], setup[0],
                  [shlex.split(line, comments=True) for line in student if line.startswith("nbgrader ")])


#: Where root's students load the course's exchange from: nbgrader's default exchange.
DEFAULT_PARENT = Path("/usr/local/share/nbgrader")
DEFAULT_PUBLISHED = DEFAULT_PARENT / "exchange" / "jax-tracing" / "course_exchange.py"


def test_the_readme_workflow_is_found():
    """The parsing itself, on the working README: the cycle, in nbgrader's order, and the students'
    line as the course's release prints it for nbgrader's default exchange."""
    from autograder.confinement.exchange import student_command

    readme = read_readme(REPO)
    verbs = [argv[1] for argv in readme.instructor]
    assert all(argv[0] == "nbgrader" for argv in readme.instructor), readme.instructor
    assert verbs == ["generate_assignment", "release_assignment", "collect", "autograde",
                     "generate_feedback", "release_feedback", "export"], verbs
    assert [argv[1] for argv in readme.student] == ["fetch_assignment", "submit", "fetch_feedback"], readme.student
    assert readme.student_setup == student_command(str(DEFAULT_PUBLISHED)), readme.student_setup
    assert readme.exchange_line.startswith("mkdir -p ~/.jupyter && echo "), readme.exchange_line


def test_the_checksum_warning_is_recognised():
    """:data:`CHECKSUM_CHANGED` matches nbgrader's own message, formatted from its source."""
    import nbgrader.preprocessors.overwritecells as overwritecells

    text = Path(overwritecells.__file__).read_text(encoding="utf-8")
    template = re.search(r'"(Attribute \'%s\' for cell %s has changed![^"]*)"', text)
    assert template, "nbgrader's message about a changed cell is not where it was"
    message = template[1] % ("checksum", "trace_watch", "abc", "def")
    assert CHECKSUM_CHANGED.search(message)[1] == "trace_watch"


# ---------------------------------------------------------------- how a command runs


@dataclass
class Runner:
    """Runs a command as ``user`` (None: this process's user) with ``venv``'s programs first on
    PATH, ``home`` as its home and ``env`` added, inside ``prefix`` (a command that runs the rest);
    every command of the test goes through :meth:`run`."""

    venv: Path
    home: Path
    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    prefix: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not k.startswith("JUPYTER")}
        env["PATH"] = f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        env["VIRTUAL_ENV"] = str(self.venv)
        env["HOME"] = str(self.home)
        if self.user is not None:
            env.update(USER=self.user, LOGNAME=self.user)
        env.update(self.env)
        return env

    def run(self, argv: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
        env = self.environment()
        full = [shutil.which(argv[0], path=env["PATH"]) or argv[0], *argv[1:]]
        if self.user is not None:  # runuser sets HOME to the user's own: env sets it back
            full = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", self.user, "--",
                    "/usr/bin/env", f"HOME={self.home}", *full]
        full = [*self.prefix, *full]
        proc = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        self.log.append(f"$ (cd {cwd} && {shlex.join(full)})  -> {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc

    def check(self, argv: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
        proc = self.run(argv, cwd, timeout)
        assert proc.returncode == 0, self.log[-1][-6000:]
        errors = [line for line in (proc.stdout + proc.stderr).splitlines() if ERROR.search(line)]
        assert not errors, (errors, self.log[-1][-6000:])
        return proc

    def shell(self, line: str, cwd: Path) -> subprocess.CompletedProcess:
        """A line of the README that is shell, not one command, in the user's shell."""
        return self.check(["bash", "-c", line], cwd)


#: An error or worse in an nbgrader log ("[AutogradeApp | ERROR] ...").
ERROR = re.compile(r"^\[\w+ \| (ERROR|CRITICAL)\]")
#: nbgrader's warning that a read-only cell was changed (nbgrader/preprocessors/overwritecells.py).
CHECKSUM_CHANGED = re.compile(r"Attribute 'checksum' for cell (\S+) has changed")


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

#: Who hands in which sample of tests/samples/<assignment>/, round by round.
ROUNDS = ({"alice": "correct", "bob": "partial", "carol": "empty"},
          {"bob": "correct"})  # the same block again: bob hands in again, improved


@dataclass
class Workflow:
    clone: Path
    runner: Runner
    students: Path
    readme: Readme
    student_line: str = ""  # what release_assignment printed for the students
    handed_in: dict[str, str] = field(default_factory=dict)  # each student's latest sample


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


def run_a_round(flow: Workflow, handing_in: dict[str, str]) -> dict[str, str]:
    """The README's instructor block once, the students' turn where it says; each command's output
    by its nbgrader verb."""
    logs: dict[str, str] = {}
    for argv in flow.readme.instructor:
        if argv[1] == "collect":  # the students' turn: between the release and the collect
            hand_in(flow, handing_in)
        proc = flow.runner.check(argv, flow.clone)
        logs[argv[1]] = proc.stdout + proc.stderr
        if argv[1] == "release_assignment":
            printed = [line.strip() for line in logs[argv[1]].splitlines() if "load_subconfig(" in line]
            assert len(printed) == 1, logs[argv[1]]
            flow.student_line = printed[0]
        if argv[1] == "release_feedback":
            fetch_feedback(flow)
    return logs


def hand_in(flow: Workflow, handing_in: dict[str, str]) -> None:
    user = flow.runner.user
    if not flow.handed_in:  # once: the line the instructor handed out
        flow.runner.shell(flow.student_line, flow.runner.home)
    fetch, submit = (next(argv for argv in flow.readme.student if argv[1] == verb)
                     for verb in ("fetch_assignment", "submit"))
    for sid, sample in handing_in.items():
        home = flow.students / sid
        if not home.is_dir():
            home.mkdir(parents=True)
            if user is not None:  # the student's own folder, as theirs would be
                shutil.chown(flow.students, user, user)
                shutil.chown(home, user, user)
            flow.runner.check(fetch, home)
        shutil.copy(REPO / "tests" / "samples" / A / f"{sample}.ipynb", home / A / f"{A}.ipynb")
        flow.runner.check([*submit, "--student", sid], home)
        flow.handed_in[sid] = sample


def fetch_feedback(flow: Workflow) -> None:
    fetch = next(argv for argv in flow.readme.student if argv[1] == "fetch_feedback")
    for sid in flow.handed_in:
        flow.runner.check([*fetch, "--student", sid], flow.students / sid)


@functools.cache
def expected_points(sample: Path) -> dict[str, float]:
    """What each grade cell of ``sample`` earns, graded in this process (``test_<group>``), once: in
    the main thread, before the two workflows start (JAX's events and the quiet output are the whole
    process's, so two gradings at once would see each other's)."""
    from autograder import from_notebook, group_points, run_group

    submission = from_notebook(sample)
    return {f"test_{group}": run_group(A, group, submission).earned for group in group_points(A)}


def hidden_test_cells() -> set[str]:
    """The grade cells whose source holds hidden tests: a submission lacks them, so nbgrader may
    warn that their checksum changed."""
    nb = json.loads((REPO / "source" / A / f"{A}.ipynb").read_text(encoding="utf-8"))
    return {cell["metadata"]["nbgrader"]["grade_id"] for cell in nb["cells"]
            if "BEGIN HIDDEN TESTS" in "".join(cell["source"]) and cell["metadata"].get("nbgrader", {}).get("grade")}


def check_results(flow: Workflow, logs: dict[str, str]) -> None:
    from nbgrader.api import Gradebook

    log = "\n".join(flow.runner.log)[-8000:]
    status = subprocess.run(["git", "-c", f"safe.directory={flow.clone}",  # the plain user's clone, read by root
                             "status", "--porcelain", "--untracked-files=no"], cwd=flow.clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", f"generate_assignment --force changed committed files:\n{status}"

    changed = set(CHECKSUM_CHANGED.findall(logs["autograde"])) - hidden_test_cells()
    assert not changed, (f"nbgrader says a read-only cell was changed: {sorted(changed)}", logs["autograde"][-6000:])

    with Gradebook(f"sqlite:///{flow.clone / 'gradebook.db'}") as gb:
        scores = {}
        for sid in flow.handed_in:
            nb = gb.find_submission_notebook(A, A, sid)
            scores[sid] = {g.cell.name: g.auto_score for g in nb.grades if g.cell.name.startswith("test_")}
    full = None
    for sid, sample in flow.handed_in.items():
        deserved = expected_points(REPO / "tests" / "samples" / A / f"{sample}.ipynb")
        assert scores[sid] == deserved, (sid, sample, scores[sid], deserved, log)
        full = sum(deserved.values()) if sample == "correct" else full
        feedback = flow.clone / "feedback" / sid / A / f"{A}.html"
        assert feedback.is_file(), (feedback, log)
        submitted = (flow.clone / "submitted" / sid / A / "timestamp.txt").read_text().strip()
        fetched = flow.students / sid / A / "feedback" / submitted / f"{A}.html"
        assert fetched.is_file(), (fetched, log)
    for sid, sample in flow.handed_in.items():
        total = sum(scores[sid].values())
        assert total == full if sample == "correct" else (0 < total < full if sample == "partial" else total == 0)

    with open(flow.clone / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f) if row["assignment"] == A}
    assert set(rows) == set(flow.handed_in), rows
    for sid in flow.handed_in:
        assert float(rows[sid]["score"]) == sum(scores[sid].values()), rows[sid]


def run_twice(flow: Workflow) -> list[dict[str, str]]:
    """Both rounds, each checked; the logs of each."""
    rounds = []
    for handing_in in ROUNDS:
        logs = run_a_round(flow, handing_in)
        check_results(flow, logs)
        rounds.append(logs)
    second = rounds[1]
    for sid in ROUNDS[0]:
        if sid not in ROUNDS[1]:  # handed in once: collected once, graded once
            assert re.search(rf"No newer submission to collect: {sid}\b", second["collect"]), second["collect"][-3000:]
    return rounds


@pytest.fixture(scope="module")
def workflows(request, tmp_path_factory) -> dict[str, Future]:
    """Both variants side by side (tests/conftest.py side_by_side), as two instructors on one machine
    would run them: each is one nbgrader command at a time, mostly on one core."""
    for sample in STUDENTS.values():
        expected_points(REPO / "tests" / "samples" / A / f"{sample}.ipynb")
    with side_by_side(request, {
        "test_the_readme_instructor_workflow_as_root": lambda: _as_root(tmp_path_factory.mktemp("readme-root")),
        "test_the_readme_instructor_workflow_as_a_plain_user": _as_a_plain_user,
    }) as runs:
        yield runs


@pytest.mark.slow
def test_the_readme_instructor_workflow_as_root(request, workflows):
    workflows[request.node.name].result()


@pytest.mark.slow
def test_the_readme_instructor_workflow_as_a_plain_user(request, workflows):
    """The same workflow as an instructor without root: the exchange named by the README's line,
    and the rootless jail grades."""
    workflows[request.node.name].result()


def _as_root(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the root variant runs as root (the grading jail needs it)")
    clone = clone_repository(tmp_path)
    venv = root_venv(tmp_path, clone)
    home = tmp_path / "home"
    home.mkdir()
    # nbgrader's default exchange, in a mount namespace per command: the test's empty folder at
    # /usr/local/share/nbgrader, whatever the machine holds there (an empty folder is made for the
    # mount where there is none, and removed after).
    private = tmp_path / "usr-local-share-nbgrader"
    private.mkdir(mode=0o755)
    made = not DEFAULT_PARENT.exists()
    try:
        DEFAULT_PARENT.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        pytest.skip(f"no folder {DEFAULT_PARENT} to bind the test's exchange at: {error}")
    prefix = [shutil.which("unshare") or "/usr/bin/unshare", "--mount", "--propagation", "private", "--",
              "/bin/sh", "-c", f'mount --bind "$0" {DEFAULT_PARENT} && exec "$@"', str(private)]
    tried = subprocess.run([*prefix, "true"], capture_output=True, text=True)
    if tried.returncode != 0:
        if made:
            DEFAULT_PARENT.rmdir()
        pytest.skip(f"no mount namespace to give the default exchange a private folder: {tried.stderr.strip()}")
    # This environment's programs (alembic, which nbgrader runs) after the clone's venv, as an
    # activated venv of the README's would have them.
    runner = Runner(venv, home, env={"PATH": f"{venv / 'bin'}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"},
                    prefix=prefix)
    flow = Workflow(clone, runner, tmp_path / "students", read_readme(clone))
    try:
        run_twice(flow)
    finally:
        if made:
            with contextlib.suppress(OSError):
                DEFAULT_PARENT.rmdir()
    assert flow.student_line == flow.readme.student_setup  # the README's line, verbatim
    assert (private / "exchange" / "jax-tracing" / "course_exchange.py").is_file()


def plain_venv(where: Path, clone: Path, packages: Path) -> Path:
    """A virtual environment of a system Python for the plain user in which ``autograder`` is the
    clone's and every other package is the plain user's test environment's (``packages``)."""
    from conftest import plain_python

    venv = where / "venv"
    subprocess.run([plain_python(), "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = next((venv / "lib").glob("python3*/site-packages"))
    (purelib / "course-clone.pth").write_text(f"{clone}\n{packages}\n")
    _nbgrader_script(venv, packages.parents[2])  # <prefix>/lib/python3.X/site-packages
    return venv


def _as_a_plain_user() -> None:
    from autograder.confinement.exchange import student_command
    from test_rootless import plain_environment

    user, base, bin_ = plain_environment()
    where = base / "readme-workflow"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    clone = clone_repository(where)
    packages = next((bin_.parent / "lib").glob("python3*/site-packages"))
    venv = plain_venv(where, clone, packages)
    home = where / "home"
    home.mkdir()
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(where)], check=True)
    # The test environment's programs (alembic, which nbgrader runs) after the clone's venv.
    runner = Runner(venv, home, env={"PATH": f"{venv / 'bin'}:{bin_}:/usr/local/bin:/usr/bin:/bin"}, user=user.pw_name)
    flow = Workflow(clone, runner, where / "students", read_readme(clone))
    runner.shell(flow.readme.exchange_line, home)  # "Without root": the instructor names the exchange
    run_twice(flow)
    assert any("grading kernels start in the rootless jail" in entry for entry in runner.log), runner.log[-1][-3000:]
    published = home / "nbgrader-exchange" / "jax-tracing" / "course_exchange.py"
    assert published.is_file()
    assert flow.student_line == student_command(str(published))
    assert flow.student_line == flow.readme.student_setup.replace(str(DEFAULT_PUBLISHED), str(published))
