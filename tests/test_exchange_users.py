"""The exchange between students, with real Linux users: nobody lists, reads or changes another's work.

Two students (``exchange-ann`` and ``exchange-ben``, made with ``useradd`` when missing) hand in
``static_max_mode`` through a real exchange with real nbgrader commands, each as their own user,
with the one line the instructor's ``release_assignment`` prints in their nbgrader configuration
(autograder/confinement/exchange.py). The instructor is root in one variant and ``plain-instructor``
(tests/test_rootless.py's user) in the other: then the instructor reads the submissions only through
``inbound/``'s group. Each student's submission holds a file with a secret of theirs.

As each student, knowing the other's folder and page by name (the test tells them), every one of
these fails: list ``inbound/`` or ``feedback/``; list, read, write, rename, delete, chmod or add to
the other's submission folder or any file in it; read, write, rename, delete or chmod the other's
feedback page; make a folder at the exchange's top or rename the course's folder; change the file
students load. Each student can read their own. nbgrader's own submit (a student without the line)
is refused with nbgrader's message rather than handing in a folder anyone may change. The
instructor collects both submissions whole; each student fetches their own feedback.

The feedback pages are written as ``nbgrader generate_feedback`` leaves them (the page, beside
``timestamp.txt`` and ``submission_secret.txt`` copied from the submission) rather than by grading:
this test is about the exchange; tests/test_readme_workflow.py runs the real cycle.
"""

from __future__ import annotations

import datetime
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, side_by_side

A = "static_max_mode"
COURSE_ID = "jax-tracing"
STUDENTS = ("exchange-ann", "exchange-ben")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="Linux users and modes")]


def user(name: str) -> pwd.struct_passwd:
    from test_rootless import linux_user

    return linux_user(name, "to hand in as")


def run_as(who: pwd.struct_passwd | None, argv: list[str], cwd: Path, home: Path, path: str,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """``argv`` as ``who`` (None: this process's user, root), with ``home`` as its home."""
    env = {"PATH": path, "LANG": "C.UTF-8", "HOME": str(home)}
    if who is not None:  # runuser sets HOME to the user's own: env sets it back
        env.update(USER=who.pw_name, LOGNAME=who.pw_name)
        argv = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", who.pw_name, "--", "/usr/bin/env",
                f"HOME={home}", *argv]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


#: Run as a student by Debian's Python: each attempt, and what came of it ("ok" or the errno's name).
PROBE = r"""
import errno, json, os, sys
def attempt(op, path, other=None):
    try:
        if op == "listdir": os.listdir(path)
        elif op == "read":
            with open(path, "rb") as f: f.read(1)
        elif op == "append":
            with open(path, "ab") as f: f.write(b"x")
        elif op == "create":
            with open(path, "xb") as f: f.write(b"x")
        elif op == "mkdir": os.mkdir(path)
        elif op == "rename": os.rename(path, other)
        elif op == "unlink": os.unlink(path)
        elif op == "rmdir": os.rmdir(path)
        elif op == "chmod": os.chmod(path, 0o777)
        else: raise ValueError(op)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps([[op, *args, attempt(op, *args)] for op, *args in json.loads(sys.argv[1])]))
"""


def probe(who: pwd.struct_passwd, attempts: list[list[str]], home: Path) -> list[list[str]]:
    done = run_as(who, ["/usr/bin/python3", "-c", PROBE, json.dumps(attempts)], home, home, "/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def against_a_folder(folder: Path) -> list[list[str]]:
    """Everything a classmate might try on a submission folder, knowing its name."""
    tries = [["listdir", str(folder)], ["rename", str(folder), f"{folder}-taken"], ["rmdir", str(folder)],
             ["chmod", str(folder)], ["mkdir", str(folder / "planted")], ["create", str(folder / "planted.txt")]]
    for name in (f"{A}.ipynb", "answer.txt", "submission_secret.txt", "timestamp.txt"):
        path = folder / name
        tries += [["read", str(path)], ["append", str(path)], ["unlink", str(path)], ["chmod", str(path)],
                  ["rename", str(path), f"{path}-taken"]]
    return tries


def against_a_page(page: Path) -> list[list[str]]:
    return [["read", str(page)], ["append", str(page)], ["unlink", str(page)], ["chmod", str(page)],
            ["rename", str(page), f"{page}-taken"]]


def all_refused(results: list[list[str]]) -> list[list[str]]:
    """The attempts that succeeded (none may)."""
    return [r for r in results if r[-1] == "ok"]


@pytest.fixture(scope="module")
def students():
    return [user(name) for name in STUDENTS]


INSTRUCTORS = ("root", "plain user")


@pytest.fixture(scope="module")
def exchanges(request, students):
    """Each instructor's exchange side by side (tests/conftest.py side_by_side): every folder, home
    and exchange is the run's own."""
    with side_by_side(request, {f"test_no_student_reaches_another_in_the_exchange[{instructor}]":
                                (lambda instructor=instructor: _no_student_reaches_another(instructor, students))
                                for instructor in INSTRUCTORS}) as runs:
        yield runs


@pytest.mark.parametrize("instructor", INSTRUCTORS)
def test_no_student_reaches_another_in_the_exchange(request, exchanges, instructor):
    exchanges[request.node.name].result()


def _no_student_reaches_another(instructor, students):
    if instructor == "root":
        teacher, nbgrader_bin = None, Path(sys.executable).parent
    else:
        from test_rootless import plain_environment

        teacher, _, nbgrader_bin = plain_environment()
    from test_rootless import plain_environment

    _, _, student_bin = plain_environment()  # Debian's Python with nbgrader, which every user can run
    where = Path(tempfile.mkdtemp(prefix="exchange-users-", dir="/tmp"))
    try:
        where.chmod(0o755)
        _the_exchange_holds(where, teacher, nbgrader_bin, students, student_bin)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _the_exchange_holds(where, teacher, nbgrader_bin, students, student_bin):
    # The exchange in the instructor's home, as the README's line for an instructor without root has it.
    teacher_home = where / "teacher-home"
    course, exchange = where / "course", teacher_home / "nbgrader-exchange"
    (course / "release").mkdir(parents=True)
    shutil.copytree(REPO / "release" / A, course / "release" / A)
    shutil.copy(REPO / "course_config.py", course / "course_config.py")
    (course / "nbgrader_config.py").write_text(
        f'c = get_config()\nload_subconfig("course_config.py")\nc.CourseDirectory.root = {str(course)!r}\n'
        f'c.Exchange.root = {str(exchange)!r}\n')
    teacher_home.mkdir(mode=0o755)
    if teacher is not None:
        subprocess.run(["chown", "-R", f"{teacher.pw_uid}:{teacher.pw_gid}", str(course), str(teacher_home)], check=True)
    teacher_path = f"{nbgrader_bin}:/usr/local/bin:/usr/bin:/bin"

    def instructor(*args: str) -> str:
        done = run_as(teacher, ["nbgrader", *args], course, teacher_home, teacher_path)
        assert done.returncode == 0, (args, done.stderr[-4000:])
        return done.stderr

    log = instructor("release_assignment", A, "--force")
    published = exchange / COURSE_ID / "course_exchange.py"
    command = next(line.strip() for line in log.splitlines() if "load_subconfig(" in line)
    assert str(published) in command, command

    homes, secrets_ = {}, {}
    path = f"{student_bin}:/usr/bin:/bin"
    for who in students:
        home = homes[who.pw_name] = where / f"home-{who.pw_name}"
        home.mkdir()
        shutil.chown(home, who.pw_uid, who.pw_gid)
        home.chmod(0o700)

        def student(*argv: str, who=who, home=home) -> subprocess.CompletedProcess:
            return run_as(who, list(argv), home, home, path)

        if who == students[0]:  # nbgrader's own classes, without the course's line: refused, not open to all
            fetched = student("nbgrader", "fetch_assignment", A, "--course", COURSE_ID, f"--Exchange.root={exchange}")
            assert fetched.returncode != 0 and "Unwritable directory" in fetched.stderr, fetched.stderr[-3000:]

        assert student("bash", "-c", command).returncode == 0
        for step in (["fetch_assignment", A, "--course", COURSE_ID], None, ["submit", A, "--course", COURSE_ID]):
            if step is None:  # the student's work: a file with a secret of theirs beside the notebook
                secrets_[who.pw_name] = f"SECRET-OF-{who.pw_name}-{os.urandom(4).hex()}"
                done = student("bash", "-c", f"echo {secrets_[who.pw_name]} > {A}/answer.txt")
            else:
                done = student("nbgrader", *step)
            assert done.returncode == 0, (step, done.stderr[-3000:])

    inbound = exchange / COURSE_ID / "inbound"
    folders = {who.pw_name: next(inbound.glob(f"{who.pw_name}+{A}+*")) for who in students}
    for who in students:
        mine, theirs = folders[who.pw_name], next(f for n, f in folders.items() if n != who.pw_name)
        results = probe(who, [["listdir", str(inbound)], *against_a_folder(theirs),
                              ["mkdir", str(exchange / "planted")],
                              ["rename", str(exchange / COURSE_ID), str(exchange / "taken")],
                              ["append", str(published)], ["create", str(exchange / COURSE_ID / "outbound" / "x")]],
                        homes[who.pw_name])
        assert all_refused(results) == [], (who.pw_name, all_refused(results))
        own = probe(who, [["listdir", str(mine)], ["read", str(mine / "answer.txt")]], homes[who.pw_name])
        assert all(r[-1] == "ok" for r in own), own
        assert (mine / "answer.txt").read_text().strip() == secrets_[who.pw_name]

    # ben hands in as ann, later than ann did: nbgrader's collect takes the newest folder named for
    # ann, whoever made it, and only warns; the course's does not collect it (autograder/confinement/converters.py).
    ann, ben = students
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    spoof = inbound / f"{ann.pw_name}+{A}+{later:%Y-%m-%d %H:%M:%S.%f} UTC+spoof"
    made = run_as(ben, ["bash", "-c", f"mkdir '{spoof}' && echo SPOOFED > '{spoof}/answer.txt' && "
                                      f"cp {A}/{A}.ipynb '{spoof}/'"], homes[ben.pw_name], homes[ben.pw_name], path)
    assert made.returncode == 0, made.stderr
    collected = instructor("collect", A)
    assert f"claims to be {ann.pw_name}'s but belongs to {ben.pw_name}" in collected, collected[-3000:]
    for name, secret in secrets_.items():
        assert (course / "submitted" / name / A / "answer.txt").read_text().strip() == secret
        assert (course / "submitted" / name / A / f"{A}.ipynb").is_file()

    # What generate_feedback leaves, then the real release and fetch.
    for name in secrets_:
        folder = course / "feedback" / name / A
        folder.mkdir(parents=True)
        for kept in ("timestamp.txt", "submission_secret.txt"):
            shutil.copy(course / "submitted" / name / A / kept, folder / kept)
        (folder / f"{A}.html").write_text(f"<html>feedback for {secrets_[name]}</html>")
    if teacher is not None:
        subprocess.run(["chown", "-R", f"{teacher.pw_uid}:{teacher.pw_gid}", str(course)], check=True)
    instructor("release_feedback", A)
    feedback = exchange / COURSE_ID / "feedback"
    pages = {}
    for page in feedback.iterdir():
        owner = next(name for name, secret in secrets_.items() if secret in page.read_text())
        pages[owner] = page
    assert set(pages) == set(secrets_), sorted(feedback.iterdir())
    for who in students:
        home = homes[who.pw_name]
        theirs = next(p for n, p in pages.items() if n != who.pw_name)
        results = probe(who, [["listdir", str(feedback)], *against_a_page(theirs)], home)
        assert all_refused(results) == [], (who.pw_name, all_refused(results))
        done = run_as(who, ["nbgrader", "fetch_feedback", A, "--course", COURSE_ID], home, home, path)
        assert done.returncode == 0, done.stderr[-3000:]
        fetched = list((home / A / "feedback").glob(f"*/{A}.html"))
        assert len(fetched) == 1 and secrets_[who.pw_name] in fetched[0].read_text(), fetched
