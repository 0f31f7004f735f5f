"""Grading as an instructor who is not root: the rootless jail (autograder/confinement/userns.py).

A plain user (``plain-instructor``, made here when this runs as root; skipped where it cannot
be) grades with a virtual environment of a system Python (``conftest.plain_python``: Debian's, or
the copy ``.ci/run`` puts in /usr/local/bin) that has this working tree installed (editable, in the user's home), as an instructor without root would. One
assignment (``static_max_mode``), two students: ``alice`` hands in the correct sample with a
secret in it; ``mallory`` hands in the same code plus a cell that tries to read alice's
notebook, append to ``gradebook.db`` and ``course_config.py``, write into alice's
``autograded/`` folder and leave a process running that writes the gradebook later. Each must
earn exactly what the honest code earns, and nothing outside the kernel's own folder may change.

The kernelspec is the one ``python -m ipykernel install --user`` writes
(``python -Xfrozen_modules=off -m ipykernel_launcher``): kernels must still be forked. Then
mallory is graded again with kernels started afresh (``fork_server = False``).

Secure by default (as this process's user, with the jails taken away by
``AUTOGRADER_JAILS=none``): ``nbgrader autograde`` stops before grading anyone, naming why and
how to proceed; with ``allow_unconfined`` it grades and says so as it starts and as it ends.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO, plain_python, side_by_side

A = "static_max_mode"
#: Neither name holds "autograder": a hostile notebook that names its course folder would then
#: spell the grading package's name, and grading/reach.py would flag it for that.
PLAIN = "plain-instructor"
SECRET = "SECRET-OF-ALICE-7f3a"
LINGER = "MARKER-LINGER-5c1d"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="the jails need Linux")]


# ---------------------------------------------------------------- the plain user and their Python


def linux_user(name: str, why: str = "to grade as") -> pwd.struct_passwd:
    """The account ``name``, made with a home when missing (skipped where that cannot be done)."""
    if os.geteuid() != 0:
        pytest.skip(f"making a user {why} needs root")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    made = subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make the user {name}: {made.stderr.strip()}")
    return pwd.getpwnam(name)


def plain_user() -> pwd.struct_passwd:
    return linux_user(PLAIN)


def as_user(user: pwd.struct_passwd | None, argv: list[str], cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``argv`` as ``user`` (None: this process's user) with a clean environment."""
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    if user is not None:
        base.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name)
        argv = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", user.pw_name, "--", *argv]
    else:
        base.update(HOME=os.environ.get("HOME", "/root"))
    base.update(env or {})
    return subprocess.run(argv, cwd=cwd, env=base, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def working_tree_files() -> list[str]:
    """The repository's files as they are now (committed or not, as git would list them)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (REPO / name).is_file()]


_PLAIN_LOCK = threading.Lock()


def plain_environment():
    """(the user, their folder for these tests, the venv's bin folder): the working tree copied into
    the user's home and installed, editable, in a venv of Debian's Python (kept between runs while
    ``pyproject.toml`` is unchanged: installing takes a minute). Made once a session, under a lock:
    tests that run side by side (tests/conftest.py side_by_side) share it."""
    with _PLAIN_LOCK:
        return _make_plain_environment()


@functools.lru_cache(maxsize=1)
def _make_plain_environment():
    user = plain_user()
    system_python = plain_python()
    if system_python is None:
        pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} a plain user can run "
                    "(.ci/run puts one in /usr/local/bin)")
    base = Path(user.pw_dir) / "grading-tests"
    src = base / "src"
    shutil.rmtree(src, ignore_errors=True)
    for name in working_tree_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    venv = base / "venv"
    stamp = hashlib.sha256((REPO / "pyproject.toml").read_bytes() + system_python.encode()).hexdigest()
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(base)], check=True)
    if not (venv / ".installed").is_file() or (venv / ".installed").read_text() != stamp:
        shutil.rmtree(venv, ignore_errors=True)
        for step in ([system_python, "-m", "venv", str(venv)],
                     [str(venv / "bin" / "pip"), "install", "--quiet", "-e", str(src)]):
            done = as_user(user, step, base, timeout=1200)
            assert done.returncode == 0, done.stderr[-4000:]
        (venv / ".installed").write_text(stamp)
    else:  # the editable install's finder names src/: the copy above is what imports
        pass
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(base)], check=True)
    return user, base, venv / "bin"


# ---------------------------------------------------------------- a course


def make_course(where: Path, submissions: dict[str, dict]) -> Path:
    """A course folder as an instructor lays it out: the shim, the course's configuration, the
    assignment's source, and each student's submitted notebook."""
    course = where / "course"
    shutil.rmtree(course, ignore_errors=True)
    shutil.copytree(REPO / "source" / A, course / "source" / A)
    shutil.copy(REPO / "course_config.py", course / "course_config.py")
    (course / "nbgrader_config.py").write_text(
        f'c = get_config()\nload_subconfig("course_config.py")\nc.CourseDirectory.root = {str(course)!r}\n'
        f'c.Exchange.root = {str(where / "exchange")!r}\n')
    for sid, nb in submissions.items():
        folder = course / "submitted" / sid / A
        folder.mkdir(parents=True)
        (folder / f"{A}.ipynb").write_text(json.dumps(nb))
    return course


def sample(name: str) -> dict:
    return json.loads((REPO / "tests" / "samples" / A / f"{name}.ipynb").read_text())


def honest() -> dict:
    nb = sample("correct")
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": f"my notes: {SECRET}"})
    return nb


def hostile(course: Path) -> dict:
    """The correct code, then one cell of attacks on everything outside the kernel's folder."""
    code = f'''
import glob, os, subprocess, sys
COURSE = {str(course)!r}
found = 0
for path in glob.glob(COURSE + "/submitted/*/*/*.ipynb") + glob.glob(COURSE + "/autograded/*/*/*.ipynb"):
    try:
        found += {SECRET[:10]!r} + {SECRET[10:]!r} in open(path).read()
    except OSError:
        pass
print("STOLEN", found)
from ipykernel.kernelapp import IPKernelApp
SOCKETS = os.path.dirname(IPKernelApp.instance().ip)  # on the machine's disk: filling it would fill that
for target, text in [(SOCKETS + "/filler", "x" * 4096),
                     (COURSE + "/gradebook.db", "garbage"),
                     (COURSE + "/course_config.py", "\\nraise SystemExit('owned')\\n"),
                     (COURSE + "/autograded/alice/{A}/planted.txt", "planted")]:
    try:
        with open(target, "a") as f:
            f.write(text)
        print("WROTE", target)
    except OSError as error:
        print("REFUSED", target, type(error).__name__)
seen = dict(os.environ)
for proc in glob.glob("/proc/[0-9]*/environ"):
    try:
        seen[proc] = open(proc, "rb").read().decode(errors="replace")
    except OSError:
        pass
print("ENVIRONMENT", seen)
later = ("import sys, time\\ntime.sleep(4)\\n"
         "open(sys.argv[1], 'a').write('late garbage')\\ntime.sleep(600)")
subprocess.Popen([sys.executable, "-c", later, COURSE + "/gradebook.db", {LINGER!r}], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''
    nb = sample("correct")
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": code, "outputs": [], "execution_count": None})
    return nb


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(A)}


def max_score(course: Path) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return gb.find_assignment(A).max_code_score  # the autograded part: written answers are read by hand


def lingering() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if LINGER.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                pass
    return found


def check_nothing_changed(course: Path, config_digest: str, alice_autograded: dict[str, str] | None) -> None:
    time.sleep(5)  # the lingering process would have written by now
    assert lingering() == [], "a process of the hostile notebook outlived its kernel"
    assert digest(course / "course_config.py") == config_digest
    assert b"garbage" not in (course / "gradebook.db").read_bytes()
    alice = course / "autograded" / "alice" / A
    assert not (alice / "planted.txt").exists()
    if alice_autograded is not None:
        assert folder_digest(alice) == alice_autograded
    nb = json.loads((course / "autograded" / "mallory" / A / f"{A}.ipynb").read_text())
    out = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", ()))
    assert "STOLEN 0" in out and "REFUSED" in out and "WROTE" not in out and SECRET not in out, out[-3000:]
    assert "ENVIRONMENT" in out and INSTRUCTORS_SECRET not in out, out[-3000:]
    assert not (course / "escaped.txt").exists(), (course / "escaped.txt").read_text()


#: In the instructor's environment as a JupyterHub's token is: no kernel may see it.
INSTRUCTORS_SECRET = "hub-token-5be1d9"
#: What mallory hands in beside her notebook: Python imports a ``sitecustomize`` it finds on sys.path
#: as it starts, so in a launcher started in her folder with an empty PYTHONPATH entry, it would run
#: as the instructor, outside any jail, and write into the course.
SITECUSTOMIZE = """
import os
for folder in ("/proc/self/cwd/../../..", os.environ.get("COURSE_UNDER_TEST", "")):
    try:
        with open(os.path.join(folder, "escaped.txt"), "a") as f:
            f.write(f"sitecustomize ran as {os.getuid()} in {os.getcwd()}\\n")
    except OSError:
        pass
"""


# ---------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """The plain user's grading beside the root's without a jail (tests/conftest.py side_by_side)."""
    with side_by_side(request, {
        "test_a_plain_user_grades_confined": _a_plain_user_grades_confined,
        "test_grading_stops_without_a_jail_unless_unconfined_is_asked_for":
            lambda: _grading_stops_without_a_jail(tmp_path_factory.mktemp("no-jail")),
    }) as started:
        yield started


def test_a_plain_user_grades_confined(request, runs):
    runs[request.node.name].result()


def test_grading_stops_without_a_jail_unless_unconfined_is_asked_for(request, runs):
    """With no jail to be had, nothing is graded and the command says why and what to do; with
    ``allow_unconfined`` it grades, saying so as it starts and as it ends."""
    runs[request.node.name].result()


def _a_plain_user_grades_confined():
    user, base, bin_ = plain_environment()
    env = {"PATH": f"{bin_}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(bin_.parent)}
    kernelspec = as_user(user, [str(bin_ / "python"), "-m", "ipykernel", "install", "--user"], base, env)
    assert kernelspec.returncode == 0, kernelspec.stderr
    argv = json.loads((Path(user.pw_dir) / ".local/share/jupyter/kernels/python3/kernel.json").read_text())["argv"]
    assert "-Xfrozen_modules=off" in argv, argv  # the form the fork server must accept

    course = make_course(base, {"alice": honest(), "mallory": {}})
    (course / "submitted" / "mallory" / A / f"{A}.ipynb").write_text(json.dumps(hostile(course)))
    (course / "submitted" / "mallory" / A / "sitecustomize.py").write_text(SITECUSTOMIZE)
    # The instructor's environment: a secret, and the common PYTHONPATH=/x:$PYTHONPATH with it unset.
    env = {**env, "JUPYTERHUB_API_TOKEN": INSTRUCTORS_SECRET, "PGPASSWORD": INSTRUCTORS_SECRET,
           "PYTHONPATH": f"{base}/nothing-here:", "COURSE_UNDER_TEST": str(course)}
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(course)], check=True)
    config_digest = digest(course / "course_config.py")

    began = time.monotonic()
    for step in (["nbgrader", "generate_assignment", A, "--force"], ["nbgrader", "autograde", A]):
        done = as_user(user, step, course, env)
        assert done.returncode == 0, (step, done.stderr[-6000:])
    log = done.stderr
    print(f"plain user, forked kernels: autograde of 2 in {time.monotonic() - began:.1f} s (with generate)")
    assert "grading kernels start in the rootless jail" in log, log[-4000:]
    assert "forked from a fork server" in log, log[-4000:]
    assert "UNCONFINED" not in log
    got = scores(course)
    # Mallory's code is alice's: no more (its reach into the course's folder may cost the points that
    # rest on its kernel's word, grading/reach.py).
    assert got["alice"] == max_score(course) and got["mallory"] <= got["alice"], got
    alice_autograded = folder_digest(course / "autograded" / "alice" / A)
    check_nothing_changed(course, config_digest, alice_autograded)

    # Mallory again, each kernel started afresh through the rootless jail.
    done = as_user(user, ["nbgrader", "autograde", A, "--student", "mallory", "--force",
                          "--ConfinedKernelManager.fork_server=False"], course, env)
    assert done.returncode == 0, done.stderr[-6000:]
    assert "rootless jail" in done.stderr and "started afresh" in done.stderr, done.stderr[-4000:]
    assert scores(course) == got
    check_nothing_changed(course, config_digest, alice_autograded)


def _grading_stops_without_a_jail(tmp_path: Path) -> None:
    course = make_course(tmp_path, {"alice": sample("correct")})
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "AUTOGRADER_JAILS": "none"}
    done = as_user(None, ["nbgrader", "generate_assignment", A, "--force"], course, env)
    assert done.returncode == 0, done.stderr[-4000:]

    refused = as_user(None, ["nbgrader", "autograde", A], course, env)
    assert refused.returncode != 0
    assert "grading stopped before any notebook ran" in refused.stderr, refused.stderr[-4000:]
    assert "AUTOGRADER_JAILS=none" in refused.stderr
    assert "c.ConfinedKernelManager.allow_unconfined = True" in refused.stderr
    copied = course / "autograded" / "alice" / A / f"{A}.ipynb"  # nbgrader copies it before the kernel starts
    assert not copied.exists() or not any(c.get("outputs") for c in json.loads(copied.read_text())["cells"])
    assert scores(course).get("alice") in (None, 0)

    assert "--force" in refused.stderr
    allowed = as_user(None, ["nbgrader", "autograde", A, "--force", "--ConfinedKernelManager.allow_unconfined=True"],
                      course, env)
    assert allowed.returncode == 0, allowed.stderr[-4000:]
    notices = [line for line in allowed.stderr.splitlines() if line.startswith("autograder: WARNING: grading kernels run UNCONFINED")]
    assert len(notices) >= 2, allowed.stderr[-4000:]  # as grading starts (and in the log), and at the end
    assert allowed.stderr.rstrip().splitlines()[-1].startswith("autograder: WARNING"), allowed.stderr[-2000:]
    assert scores(course)["alice"] > 0

    # The parallel command stops the same way before starting any student, and with the setting
    # in the course's configuration it says so on its screen as it starts and as it ends.
    parallel = [sys.executable, "-m", "autograder", "autograde", A, "--workers", "2", "--force"]
    graded_before = copied.stat().st_mtime_ns
    refused = as_user(None, parallel, course, env)
    assert refused.returncode != 0
    assert "grading stopped before any notebook ran" in refused.stdout + refused.stderr, refused.stdout[-4000:]
    assert copied.stat().st_mtime_ns == graded_before  # --force, and still not graded again
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.ConfinedKernelManager.allow_unconfined = True\n")
    allowed = as_user(None, parallel, course, env)
    assert allowed.returncode == 0, allowed.stdout[-4000:] + allowed.stderr[-4000:]
    screen = allowed.stdout.splitlines()
    warned = [i for i, line in enumerate(screen) if "grading kernels run UNCONFINED" in line]
    assert len(warned) == 2 and warned[0] == 0 and warned[1] == len(screen) - 2, screen  # first, and before the summary
    assert scores(course)["alice"] > 0
