"""Can one kernel reach another, or the machine, while ``python -m autograder autograde --workers 2``
grades them side by side? And does anything a kernel leaves outlive the batch?

One small scratch course, one assignment, three students graded at once by the parallel command:

- ``a-victim``, an honest full-mark notebook, graded while
- ``b-snooper`` (``hostile.isolation.SNOOPS_NEIGHBOURS``) watches for the victim's kernel: every
  ZMQ endpoint, connection file, socket folder and judge socket it can find, subscribed to, and
  each grade cell's ``serve(..., address, token)`` read off the victim's IOPub raced to the judge
  and hung up. Had it ever won, the victim would lose that cell's points;
- ``c-prober`` tries the test's own listeners on the machine's loopback (TCP) and in ``/run`` (a
  Unix socket, where a PostgreSQL gradebook's would be), other processes' network namespaces and
  signals, then leaves files in every world-writable folder and System V and POSIX IPC objects.

The attackers print what they found into their own outputs (the autograded notebook). Scores come
from the gradebook; leftovers are looked for on the machine after the batch.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hostile.isolation import LEFTOVER, SNOOP_SAYS, connects_to_loopback, snoops_neighbours, LEAVES_FILES_AND_IPC
from hostile.model import FULL, SMM
from hostile.notebooks import build, insert_after

from autograder.confinement import kernel_manager
from autograder.tools import scratch
from autograder.tools.repository import tool_env

slow = pytest.mark.slow

ASSIGNMENT = SMM
VICTIM, SNOOPER, PROBER = "a-victim", "b-snooper", "c-prober"
#: How long the snooper watches: longer than the victim's whole grading on a loaded machine.
WATCH_SECONDS = 25


class Listener:
    """A server of the test's own that counts every connection it gets (a kernel must reach none)."""

    def __init__(self, family: int, address):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def _sysv_objects() -> set[tuple[str, str]]:
    """(kind, id) of every System V IPC object of the machine (``/proc/sysvipc``)."""
    found = set()
    for kind in ("shm", "sem", "msg"):
        rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found |= {(kind, row.split()[1]) for row in rows}
    return found


def _leftover_files() -> set[str]:
    """Files a kernel may have left, named as the prober names them, in the machine's world-writable folders."""
    folders = {*kernel_manager.world_writable(), "/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"}
    found = set()
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            found |= {os.path.join(top, name) for name in files + dirs if LEFTOVER in name}
    return found


@dataclass
class Batch:
    course: scratch.ScratchCourse
    exit_code: int
    output: str
    seconds: float
    scores: dict
    shown: dict[str, str]  # student -> the text of their autograded notebook's outputs
    tcp_accepted: int
    unix_accepted: int
    unix_socket: str
    new_sysv: set = field(default_factory=set)
    new_files: set = field(default_factory=set)
    mqueue: list = field(default_factory=list)


def _outputs(course: scratch.ScratchCourse, student: str) -> str:
    path = course.root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    if not path.is_file():
        return ""
    texts = []
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            texts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
    return "\n".join(texts)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Batch:
    if os.geteuid() != 0 or not kernel_manager.can_confine():
        pytest.skip(f"kernels are not confined here: {kernel_manager.why_not_confined() or 'not root'}")
    work = tmp_path_factory.mktemp("isolation")
    tcp = Listener(socket.AF_INET, ("127.0.0.1", 0))
    # Where a PostgreSQL gradebook's socket would be (/run/postgresql): a system folder kernels see.
    run_folder = tempfile.mkdtemp(prefix="isolation-test-", dir="/run")
    os.chmod(run_folder, 0o755)
    unix_path = os.path.join(run_folder, ".s.PGSQL.5432")
    unix = Listener(socket.AF_UNIX, unix_path)
    os.chmod(unix_path, 0o777)
    try:
        port = tcp.sock.getsockname()[1]
        notebooks = {
            VICTIM: (),
            SNOOPER: (insert_after("choose", snoops_neighbours(WATCH_SECONDS, (port,))),),
            PROBER: (insert_after("choose", connects_to_loopback((port,), (unix_path,))),
                     insert_after("choose_reduction", LEAVES_FILES_AND_IPC)),
        }
        course = scratch.prepare_course(work / "course")
        scratch.generate(course, [ASSIGNMENT])
        when = datetime.datetime.now(datetime.timezone.utc)
        for student, edits in notebooks.items():
            path = build(ASSIGNMENT, edits, work / f"{student}.ipynb")
            scratch.place_submission(course, student, ASSIGNMENT, path, when)

        sysv_before, files_before = _sysv_objects(), _leftover_files()
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--workers", "2"],
                              cwd=course.root, env=tool_env(), capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - start
        print(f"\nisolation batch: the parallel command graded {len(notebooks)} notebooks in {seconds:.0f} s")
        return Batch(
            course, proc.returncode, proc.stdout + proc.stderr, seconds, scratch.read_scores(course),
            {student: _outputs(course, student) for student in notebooks}, tcp.accepted, unix.accepted, unix_path,
            _sysv_objects() - sysv_before, _leftover_files() - files_before,
            sorted(os.listdir("/dev/mqueue")) if os.path.isdir("/dev/mqueue") else [],
        )
    finally:
        tcp.close()
        unix.close()
        shutil.rmtree(run_folder, ignore_errors=True)


def _cells(batch: Batch, student: str) -> dict[str, float]:
    return {cell.grade_id: cell.points for cell in batch.scores[student, ASSIGNMENT].cells}


def _said(batch: Batch, student: str, pattern: str) -> re.Match:
    found = re.search(pattern, batch.shown[student])
    assert found, f"{student} printed no {pattern!r}; it printed:\n{batch.shown[student][-3000:]}"
    return found


@slow
def test_every_notebook_is_graded(batch):
    assert batch.exit_code == 0, batch.output[-3000:]
    assert {student for student, _ in batch.scores} == {VICTIM, SNOOPER, PROBER}


@slow
def test_the_victim_keeps_full_points_while_a_neighbour_snoops(batch):
    assert _cells(batch, VICTIM) == FULL[ASSIGNMENT]


@slow
@pytest.mark.parametrize("student", [SNOOPER, PROBER])
def test_each_attacker_earns_its_honest_points(batch, student):
    assert _cells(batch, student) == FULL[ASSIGNMENT]


@slow
def test_the_snooper_ran_beside_the_victim(batch):
    """Not vacuous: the victim's kernel was running while the snooper looked."""
    seen = int(_said(batch, SNOOPER, SNOOP_SAYS + r" neighbour kernels seen running: (\d+)")[1])
    assert seen >= 1


@slow
def test_the_snooper_reached_no_neighbour_endpoint_and_read_nothing(batch):
    tried = int(_said(batch, SNOOPER, SNOOP_SAYS + r" endpoints tried: (\d+)")[1])
    reached = re.findall("^" + SNOOP_SAYS + r" reached (.*)$", batch.shown[SNOOPER], re.MULTILINE)
    assert tried >= 1
    # The test's own socket in /run is no neighbour's (and a gap of its own, below).
    assert [r for r in reached if batch.unix_socket not in r] == []
    _said(batch, SNOOPER, SNOOP_SAYS + r" neighbour cell sources read: 0 sessions taken: 0")
    _said(batch, SNOOPER, SNOOP_SAYS + r" connection files read: 0")
    for listing in ("fd", "root/tmp", "cwd", "ns"):
        _said(batch, SNOOPER, SNOOP_SAYS + rf" other processes' /proc/PID/{listing} opened: 0")


@slow
def test_no_kernel_reaches_the_machines_loopback(batch):
    assert batch.tcp_accepted == 0
    tried = re.findall(r"^loopback (\S+) port (\d+): (\w+)$", batch.shown[PROBER], re.MULTILINE)
    assert len(tried) >= 4 and not [t for t in tried if t[2] == "connected"], tried
    sockets = re.findall(r"^unix socket (\S+): (\w+)$", batch.shown[PROBER], re.MULTILINE)
    ours = os.path.realpath(batch.unix_socket)
    assert not [s for s in sockets if s[1] == "connected" and os.path.realpath(s[0]) != ours], sockets


@slow
def test_no_kernel_reaches_a_unix_socket_of_the_machine(batch):
    assert batch.unix_accepted == 0
    _said(batch, PROBER, re.escape(batch.unix_socket) + r": (?!connected)")


@slow
def test_no_kernel_enters_another_network_namespace_or_signals_root(batch):
    for found in re.finditer(r"network namespace of process (\d+): (.*)", batch.shown[PROBER]):
        assert found[2] == "open: EACCES, not entered", found[0]
    _said(batch, PROBER, r"root's processes that could be signalled: 0 of \d+")


@slow
def test_the_prober_left_files_and_ipc_objects_in_its_kernel(batch):
    """Not vacuous: the leftovers were made, in the kernel's own view."""
    written = _said(batch, PROBER, r"files left in world-writable folders: (\[.*?\])")[1]
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):  # /run/lock is not there to write in: /run is hidden
        assert repr(folder) in written
    made = _said(batch, PROBER, r"System V objects made: (.*)")[1]
    assert made.count(", 0, ") == 3, made  # ipcmk succeeded for shared memory, semaphores, queues
    _said(batch, PROBER, r"POSIX shared memory made: /?" + LEFTOVER)


@slow
def test_nothing_a_kernel_left_remains_on_the_machine(batch):
    assert batch.new_files == set()
    assert batch.new_sysv == set()
    assert not [name for name in batch.mqueue if LEFTOVER in name]


# ---------------------------------------------------------------- the judge's socket in the kernel's folder


@pytest.fixture
def short_tmp_path():
    """A folder as short as the kernels' sockets root (a socket's path holds at most 107 bytes; an
    xdist worker's tmp_path is too deep for one), removed after the test."""
    with tempfile.TemporaryDirectory(prefix="judge-mode-", dir="/tmp") as folder:
        yield Path(folder)


def test_the_judge_changes_no_mode_by_a_path_in_the_kernels_folder(short_tmp_path):
    """The kernel's user owns its folder and can swap whatever the judge makes there for a link to
    a file of root's, between two calls (a kernel spinning on its folder once won 1 in 2000 grade
    cells that way, making any file 0666). So the judge makes its socket and gives it its mode in a
    folder of its own, and only renames it in (a rename follows no link): no call that follows a
    path may name the kernel's folder. Watched with an audit hook, as the calls are made."""
    from autograder.grading import judge

    tmp_path = short_tmp_path
    folder = tmp_path / "k-sockets"
    folder.mkdir(mode=0o700)
    watching, by_path = [True], []

    def watch(event, args):
        if watching[0] and event in ("os.chmod", "os.chown") and str(args[0]).startswith(str(folder)):
            by_path.append((event, str(args[0])))

    sys.addaudithook(watch)
    try:
        listener, address = judge._listen(str(folder))
    finally:
        watching[0] = False
    listener.close()
    path = Path(address.removeprefix("unix:"))
    assert by_path == []
    assert path.parent == folder and stat.S_ISSOCK(path.lstat().st_mode)
    assert path.lstat().st_mode & 0o777 == 0o666  # the kernel's user, not the judge's, connects
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k-sockets"]  # nothing left beside it
