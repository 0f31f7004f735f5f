"""A grading kernel holds nothing of the instructor's terminal (issue 35).

Real ``nbgrader autograde`` runs under a real pseudo-terminal that is its controlling terminal,
as when an instructor types the command, with extra descriptors open at odd numbers that nbgrader
inherits and does not know of: two copies of the terminal (41 and 44) and a file of the
instructor's (47). The notebook graded (the correct sample, with one probe cell first) reports
every descriptor its kernel holds, tries to open ``/dev/tty``, the terminal itself, ``/dev/ptmx``
and ``/dev/console``, and says whether it leads a session of its own and has a controlling
terminal; it also writes an escape sequence to every pipe it holds.

Each way a kernel starts: the root jail, forked and afresh (as root); the rootless jail, forked and
afresh (as a plain user, ``tests/test_rootless.py``'s, whose terminal the pseudo-terminal is, as a
login's would be). Every time the kernel must hold only ``/dev/null``, pipes, sockets and its own
event descriptors (no terminal, nothing of the instructor's file), open no terminal, lead its own
session without a controlling terminal, and see an empty ``/dev/pts``; the escape sequence it
wrote reaches the screen only escaped; and nbgrader's screen shows no warning of IPython's that
the kernel's home is not writable.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import test_rootless as rootless
from conftest import side_by_side

from autograder.tools.repository import tool_env

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="the jails need Linux")]

A = rootless.A
STUDENT = "probe"
#: Where the extra descriptors sit in nbgrader's process: copies of its terminal, and a file.
TERMINAL_COPIES, FILE_COPY = (41, 44), 47
MARKER = "ESCAPE-PROBE-3e1f"
#: What the probe writes to each pipe it holds: a marker inside an escape sequence that would
#: retitle the instructor's terminal window.
ESCAPE = f"\x1b]0;{MARKER}\x07"

PROBE = r'''
import json, os, sys
held = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        held[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # the listing's own descriptor, closed by now
        pass
terminals = [fd for fd in held if os.isatty(fd)]
opened = {}
for path in ("/dev/tty", TERMINAL, "/dev/ptmx", "/dev/console"):
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as error:
        opened[path] = type(error).__name__
    else:
        opened[path] = f"opened (a terminal: {os.isatty(fd)})"
        os.close(fd)
for fd, target in held.items():
    if target.startswith("pipe:") and fd not in (1, 2):
        try:
            os.write(fd, ESCAPE.encode() + b"\n")
        except OSError:
            pass
fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
# One write, newline included: ipykernel forwards what reached its capture pipes (the escapes above)
# as they come, and a print's two writes once had them land between the line and its newline.
sys.stdout.write("DESCRIPTORS " + json.dumps({
    "held": held, "terminals": terminals, "opened": opened,
    "session leader": os.getsid(0) == os.getpid(), "controlling terminal": int(fields[4]),
    "/dev/pts": sorted(os.listdir("/dev/pts")) if os.path.isdir("/dev/pts") else None,
}) + "\n")
'''

#: Runs in the process that becomes nbgrader's, as root: takes the pseudo-terminal (its standard
#: streams) as its controlling terminal, copies it to 41 and 44 and opens the file at 47, all
#: inheritable; then, for the plain user, becomes that user; then runs nbgrader.
LOGIN = r'''
import fcntl, os, pwd, sys, termios
terminal, secret, user = sys.argv[1:4]
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
for number in TERMINAL_COPIES:
    os.dup2(0, number, inheritable=True)
os.dup2(os.open(secret, os.O_RDONLY), FILE_COPY, inheritable=True)
if user:
    account = pwd.getpwnam(user)
    os.initgroups(user, account.pw_gid)
    os.setgid(account.pw_gid)
    os.setuid(account.pw_uid)
os.execvp(sys.argv[4], sys.argv[4:])
'''.replace("TERMINAL_COPIES", repr(TERMINAL_COPIES)).replace("FILE_COPY", str(FILE_COPY))

#: What a kernel may hold: its standard input, its pipes (nbgrader's, and ipykernel's own that
#: capture its output), ZMQ's sockets and event descriptors.
ALLOWED = re.compile(r"/dev/null|pipe:\[\d+\]|socket:\[\d+\]|anon_inode:\[?[a-z_]+\]?")


def probe_notebook(terminal: str) -> dict:
    nb = rootless.sample("correct")
    source = f"TERMINAL = {terminal!r}\nESCAPE = {ESCAPE!r}\n" + PROBE
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                           "execution_count": None})
    return nb


def under_a_terminal(argv: list[str], cwd: Path, env: dict[str, str], secret: Path, pair: tuple[int, int],
                     user: pwd.struct_passwd | None = None, timeout: float = 300) -> tuple[int, str]:
    """Run ``argv`` as a login would, in a session whose controlling terminal is the
    pseudo-terminal ``pair`` (master, slave; the plain user's, when ``user``), with the extra
    descriptors of :data:`LOGIN`; (its exit code, everything it wrote to the terminal)."""
    master, slave = pair
    terminal = os.ttyname(slave)
    if user is not None:
        os.chown(terminal, user.pw_uid, -1)  # a login's terminal is its user's
    process = subprocess.Popen(
        [sys.executable, "-c", LOGIN, terminal, str(secret), user.pw_name if user else "", *argv],
        stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True)
    os.close(slave)
    screen: list[bytes] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            if select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # every holder of the terminal is gone
                    return
                if not chunk:
                    return
                screen.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code = process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
        reader.join(10)
        done.set()
        reader.join(1)
        os.close(master)
    return code, b"".join(screen).decode("utf-8", "replace")


def probe_result(course: Path) -> dict:
    nb = json.loads((course / "autograded" / STUDENT / A / f"{A}.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for o in nb["cells"][0].get("outputs", ()))
    line = next((line for line in text.splitlines() if line.startswith("DESCRIPTORS ")), None)
    assert line is not None, nb["cells"][0].get("outputs")
    return json.loads(line[len("DESCRIPTORS "):])


def check(course: Path, code: int, screen: str, secret: Path, how: str) -> dict:
    assert code == 0, screen[-6000:]
    assert how in screen, screen[-4000:]
    seen = probe_result(course)
    held = {int(fd): target for fd, target in seen["held"].items()}
    strangers = {fd: target for fd, target in held.items() if not ALLOWED.fullmatch(target)}
    assert strangers == {}, f"the kernel holds descriptors it was not given: {strangers}"
    assert held[0] == "/dev/null", held
    assert not any("/dev/pts" in t or "tty" in t or str(secret) in t for t in held.values()), held
    assert seen["terminals"] == [], seen
    assert all(not result.startswith("opened") for result in seen["opened"].values()), seen["opened"]
    assert seen["session leader"] is True and seen["controlling terminal"] == 0, seen
    assert seen["/dev/pts"] == [], seen
    # What the kernel wrote on its pipes reached nbgrader's screen escaped, never as a sequence.
    assert ESCAPE not in screen and "\x1b]0;" not in screen, screen[-4000:]
    assert f"\\x1b]0;{MARKER}\\x07" in screen, screen[-4000:]
    assert "not a writable location" not in screen, screen[-4000:]
    return seen


def make_secret(where: Path, owner: pwd.struct_passwd | None = None) -> Path:
    secret = where / "instructor-notes.txt"
    secret.write_text("the instructor's own file\n")
    if owner is not None:
        os.chown(secret, owner.pw_uid, owner.pw_gid)
    return secret


@pytest.fixture(scope="module")
def jails(request, tmp_path_factory):
    """Both jails' runs side by side (tests/conftest.py side_by_side)."""
    with side_by_side(request, {
        "test_root_jail_kernels_forked_and_afresh_hold_nothing_of_the_terminal":
            lambda: _root_jail(tmp_path_factory.mktemp("root-jail")),
        "test_rootless_jail_kernels_forked_and_afresh_hold_nothing_of_the_terminal": _rootless_jail,
    }) as runs:
        yield runs


def test_root_jail_kernels_forked_and_afresh_hold_nothing_of_the_terminal(request, jails):
    jails[request.node.name].result()


def test_rootless_jail_kernels_forked_and_afresh_hold_nothing_of_the_terminal(request, jails):
    jails[request.node.name].result()


def _root_jail(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the root jail needs root")
    course = rootless.make_course(tmp_path, {})
    # As an instructor's shell has it: without pytest's variable, which makes ipykernel leave its
    # streams as they are (no copies kept of them) in the kernels it would reach.
    env = {**{k: v for k, v in tool_env().items() if not k.startswith("PYTEST_")}, "AUTOGRADER_JAILS": "root"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", A, "--force"], cwd=course,
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
    secret = make_secret(tmp_path)
    nbgrader = [sys.executable, "-m", "nbgrader", "autograde", A, "--force"]
    for how, extra in (("forked from a fork server", []),
                       ("started afresh", ["--ConfinedKernelManager.fork_server=False"])):
        pair = os.openpty()
        submitted = course / "submitted" / STUDENT / A
        submitted.mkdir(parents=True, exist_ok=True)
        (submitted / f"{A}.ipynb").write_text(json.dumps(probe_notebook(os.ttyname(pair[1]))))
        began = time.monotonic()
        code, screen = under_a_terminal([*nbgrader, *extra], course, env, secret, pair)
        print(f"root jail, {how}: {time.monotonic() - began:.1f} s")
        assert "grading kernels start in the root jail" in screen, screen[-4000:]
        check(course, code, screen, secret, how)


def _rootless_jail() -> None:
    user, base, bin_ = rootless.plain_environment()
    where = base / "descriptors"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    course = rootless.make_course(where, {})
    env = {"PATH": f"{bin_}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(bin_.parent), "LANG": "C.UTF-8",
           "HOME": user.pw_dir, "USER": user.pw_name, "LOGNAME": user.pw_name}
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(where)], check=True)
    done = rootless.as_user(user, ["nbgrader", "generate_assignment", A, "--force"], course, env)
    assert done.returncode == 0, done.stderr[-4000:]
    secret = make_secret(where, user)
    for how, extra in (("forked from a fork server", []),
                       ("started afresh", ["--ConfinedKernelManager.fork_server=False"])):
        submitted = course / "submitted" / STUDENT / A
        submitted.mkdir(parents=True, exist_ok=True)
        pair = os.openpty()
        (submitted / f"{A}.ipynb").write_text(json.dumps(probe_notebook(os.ttyname(pair[1]))))
        subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(course)], check=True)
        began = time.monotonic()
        code, screen = under_a_terminal(["nbgrader", "autograde", A, "--force", *extra], course, env, secret, pair,
                                        user)
        print(f"rootless jail, {how}: {time.monotonic() - began:.1f} s")
        assert "grading kernels start in the rootless jail" in screen, screen[-4000:]
        check(course, code, screen, secret, how)
