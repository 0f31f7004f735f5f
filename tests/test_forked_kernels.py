"""Does a kernel forked from the fork server grade exactly as a kernel started afresh?

Two scratch courses, the same submissions, one ``nbgrader autograde`` each: one
with the course's default (kernels forked from
:mod:`autograder.confinement.forkserver`), one with
``c.ConfinedKernelManager.fork_server = False`` (each kernel started afresh through
the jail). Every score and every output must be the same, but for what differs
between any two kernels: pids and the user ids made from them, memory addresses,
times measured, and where a stream's text was cut into outputs. One extra notebook reports what a kernel inherits from
the process it came from (environment, signals, descriptors, limits, seeds,
threads), where a fork could differ from a fresh start. And where the server
cannot start, or dies, kernels start afresh, and nbgrader's log says why; a server
another process started (the parallel command's, shared by its workers) is used
when its environment variable names it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import graded_course
import nbformat
import pytest
import test_confinement as confinement
from conftest import COURSE_ASSIGNMENTS, REPO

#: The assignments graded both ways: the probes' (the first), and the two whose grading leans most
#: on what a kernel reports of JAX (trace, compile and host-read events; cache-miss explanations).
#: Every assignment is graded in forked kernels by tests/test_cycle.py and the hostile batches.
COMPARED = (COURSE_ASSIGNMENTS[0], "cache_misses", "host_sync")

from autograder.confinement import forkserver, kernel_manager
from autograder.tools import scratch

slow = pytest.mark.slow

#: What a kernel inherits, printed by the notebook below, one fact a line.
_INHERITED = r'''
import os, random, resource, signal, sys, threading
import numpy as np
import jax, jax.numpy as jnp
from jax._src import pretty_printer
print("forked from the server:", "autograder.confinement.forkclient" in sys.modules)

def descriptors():
    kinds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            kinds.append(os.readlink(f"/proc/self/fd/{fd}").split(":")[0])
        except OSError:  # the folder listing's own
            pass
    return sorted(set(kinds))  # which kinds, not how many: ZMQ opens sockets as it likes

facts = {
    "cwd": "/".join(os.getcwd().split("/")[-3:]),  # autograded/<student>/<assignment>
    "argv": [a for a in sys.argv[1:] if not a.endswith(".json")],
    "path": sys.path,
    "environment": sorted(k for k in os.environ if k not in ("JPY_PARENT_PID",)),
    "XLA_FLAGS": os.environ.get("XLA_FLAGS"),
    "uid is the kernel's": os.getuid() >= 1_000_000 and os.getuid() == os.geteuid(),
    "groups": os.getgroups(),
    "umask": os.umask(0o022),
    "limits": [resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE,
                                               resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE)],
    "signals": {s.name: str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD,
                                                            signal.SIGPIPE, signal.SIGHUP, signal.SIGUSR1)},
    "descriptors": descriptors(),
    "session leader": os.getsid(0) == os.getpid() or os.getsid(0) == os.getppid(),
    "python threads": sorted(t.name for t in threading.enumerate()),
    "/tmp": (sorted(n for n in os.listdir("/tmp") if n.startswith(".")), len(os.listdir("/tmp"))),
    "jax colour": pretty_printer.CAN_USE_COLOR,
    "jax devices": [str(d) for d in jax.devices()],
    "stdin is a tty": os.isatty(0),
}
for key, value in facts.items():
    print(f"{key}: {value}")
'''

#: Seeds a fork must not share: drawn by the same notebook in two kernels of one batch.
_SEEDS = "import random, numpy as np\nprint(random.random(), np.random.random())\n"

_PIDS = (
    (re.compile(r"forked from the server: (True|False)"), "forked from the server: ?"),
    (re.compile(r"ipykernel_\d+"), "ipykernel_PID"),
    (re.compile(r"\b1\d{6}\b"), "UID"),  # kernel_uid(pid): 1_000_000 + pid
    (re.compile(r"id=\d+|0x[0-9a-f]{6,}"), "ADDRESS"),
    (re.compile(r"\d+(\.\d+)? ms\b"), "TIME ms"),
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)? sec\b"), "TIME sec"),  # jax_log_compiles' durations (host_sync)
    # cache_misses writes its scenarios afresh for each notebook (names, files, sizes): its examples differ
    (re.compile(r"Example: .*?Got: ", re.DOTALL), "Example: (a scenario drawn for this notebook) Got: "),
)


def _notebooks(tmp_path: Path) -> dict[tuple[str, str], Path]:
    """(student, assignment) -> notebook: the correct and partial samples, and the probes."""
    notebooks = {}
    for assignment in COMPARED:
        for kind in ("correct", "partial"):
            notebooks[f"{kind}-student", assignment] = REPO / "tests" / "samples" / assignment / f"{kind}.ipynb"
    probe_assignment = COURSE_ASSIGNMENTS[0]
    for name, source in (("inherited", _INHERITED), ("seeds-1", _SEEDS), ("seeds-2", _SEEDS)):
        nb = nbformat.read(notebooks["correct-student", probe_assignment], as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(source))
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        notebooks[f"{name}-student", probe_assignment] = path
    return notebooks


def _grade(root: Path, notebooks: dict, forked: bool) -> scratch.ScratchCourse:
    course = scratch.prepare_course(root)
    if not forked:
        scratch.start_kernels_afresh(course)
    return graded_course.autograde_each(course, notebooks)


def _outputs(course: scratch.ScratchCourse, student: str, assignment: str, as_shown: bool = False) -> list[str]:
    """Each cell's outputs as JSON; pids and uids replaced, unless ``as_shown``."""
    nb = json.loads((course.root / "autograded" / student / assignment / f"{assignment}.ipynb").read_text())
    shown = []
    for cell in nb["cells"]:
        text = json.dumps(_joined_streams(cell.get("outputs", [])), sort_keys=True)
        for pattern, stand_in in () if as_shown else _PIDS:
            text = pattern.sub(stand_in, text)
        shown.append(text)
    return shown


def _joined_streams(outputs: list[dict]) -> list[dict]:
    """Consecutive stream outputs of one name as one (the kernel flushes a stream when it likes)."""
    joined: list[dict] = []
    for output in outputs:
        if output.get("output_type") != "stream":
            joined.append(output)
        elif joined and joined[-1].get("output_type") == "stream" and joined[-1]["name"] == output["name"]:
            joined[-1]["text"] += "".join(output["text"])
        else:
            joined.append({**output, "text": "".join(output["text"])})
    return joined


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Both courses graded as ``nohup nbgrader autograde`` runs: with SIGHUP ignored, which a kernel
    started afresh inherits through exec and a forked one must be given (the inherited notebook
    prints it). CI ran its first fresh clone under nohup, and only the fresh kernels ignored it."""
    work = tmp_path_factory.mktemp("forked")
    notebooks = _notebooks(work)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:  # the two courses side by side: each is one nbgrader command at a time
        with ThreadPoolExecutor(2) as pool:
            forked = pool.submit(_grade, work / "forked", notebooks, True)
            fresh = pool.submit(_grade, work / "fresh", notebooks, False)
            return notebooks, forked.result(), fresh.result()
    finally:
        signal.signal(signal.SIGHUP, previous)


@slow
def test_the_bench_reads_which_way_each_courses_kernels_started(graded):
    """`bench` reports a figure only for kernels that started the way its mode measures: it reads
    nbgrader's own log line, here from these two real courses."""
    from autograder.tools.bench.run import kernels_started

    _, forked, fresh = graded
    assert kernels_started(forked.log.read_text()) == {"forked from a fork server"}
    assert kernels_started(fresh.log.read_text()) == {"started afresh"}


@slow
def test_forked_and_fresh_kernels_give_the_same_scores(graded):
    notebooks, forked, fresh = graded
    scores = scratch.read_scores(forked), scratch.read_scores(fresh)
    assert set(scores[0]) == set(scores[1]) == set(notebooks)
    assert scores[0] == scores[1]
    assert all(scores[0]["correct-student", a].points == scores[0]["correct-student", a].max_points
               for a in COMPARED)


@slow
def test_forked_and_fresh_kernels_show_the_same_outputs_but_for_pids(graded):
    notebooks, forked, fresh = graded
    for student, assignment in notebooks:
        if student.startswith("seeds"):
            continue
        assert _outputs(forked, student, assignment) == _outputs(fresh, student, assignment), (student, assignment)


@slow
def test_the_default_kernels_are_forked_and_the_others_not(graded):
    _, forked, fresh = graded
    first = COURSE_ASSIGNMENTS[0]
    inherited = _outputs(forked, "inherited-student", first, as_shown=True)[0]
    assert "forked from the server: True" in inherited and "stdin is a tty: False" in inherited, inherited
    assert "'SIGHUP': '1'" in inherited and "'SIGTERM': '0'" in inherited, inherited  # SIG_IGN kept, the rest default
    assert "forked from the server: False" in _outputs(fresh, "inherited-student", first, as_shown=True)[0]


@slow
def test_forked_kernels_draw_their_own_random_seeds(graded):
    _, forked, _ = graded
    first = COURSE_ASSIGNMENTS[0]
    one, two = (_outputs(forked, f"seeds-{i}-student", first)[0] for i in (1, 2))
    assert "stdout" in one and one != two


# ---------------------------------------------------------------- when there is no fork server

_FORKED = "import sys; print('autograder.confinement.forkclient' in sys.modules)"


@pytest.fixture
def no_server_yet(monkeypatch):
    """This process's kernel manager as if it had never started a fork server."""
    monkeypatch.setattr(kernel_manager, "_server", None)
    monkeypatch.setattr(kernel_manager, "_no_server", None)
    monkeypatch.setitem(confinement._kernels, "fork_server", True)  # the course's default
    yield
    if kernel_manager._server is not None:
        kernel_manager._server.close()


def test_kernels_start_afresh_with_a_log_line_when_the_fork_server_cannot_start(
        tmp_path, monkeypatch, caplog, no_server_yet):
    def cannot_start(self, env, wait=True):
        raise RuntimeError("cannot fork kernels: a stand-in failure")

    monkeypatch.setattr(kernel_manager.forkserver.Server, "__init__", cannot_start)
    with caplog.at_level(logging.WARNING):
        shown, _ = confinement._run(tmp_path, _FORKED)
    assert shown == ["False\n"]
    assert "no fork server (cannot fork kernels: a stand-in failure); kernels start afresh" in caplog.text


def test_kernels_start_afresh_once_the_fork_server_has_died(tmp_path, caplog, no_server_yet):
    first, _ = confinement._run(tmp_path / "first", _FORKED)
    assert first == ["True\n"]
    kernel_manager._server.process.kill()
    kernel_manager._server.process.wait()
    with caplog.at_level(logging.WARNING):
        second, _ = confinement._run(tmp_path / "second", _FORKED)
    assert second == ["False\n"]
    assert "the fork server exited with code -9; kernels start afresh through the jail" in caplog.text


# ---------------------------------------------------------------- what the server imported for its kernels

def test_a_forked_kernels_first_lowerings_import_nothing_the_server_could_have(tmp_path, no_server_yet):
    """A module a kernel imports on its first lowering is imported again by every kernel: the
    server preloads them (forkserver.PRELOAD), the first jit and a call of a grader's handed
    step (an exported program, whose lowering makes JAX load SciPy's LAPACK) included."""
    import jax
    import jax.numpy as jnp

    from autograder.kit.handed import Compiled

    step = Compiled(lambda x: jnp.sin(x).sum(), jax.ShapeDtypeStruct((3,), jnp.float32)).serialized()
    source = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import jax, jax.numpy as jnp\n"
        "from autograder.kit.handed import Compiled\n"
        "jax.jit(lambda x: jnp.cos(x) * 2)(jnp.ones(3)).block_until_ready()\n"
        f"Compiled.from_serialized({step!r}, ['x'])(jnp.ones(3)).block_until_ready()\n"
        "print('forked:', 'autograder.confinement.forkclient' in sys.modules)\n"
        "print('imported:', sorted(set(sys.modules) - before))\n"
    )
    shown, _ = confinement._run(tmp_path, source)
    assert shown == ["forked: True\nimported: []\n"], shown


#: What a forked kernel imports as it starts that no server could import for it: the sandbox, whose
#: import seals the process, and the stand-in it puts in place of the notebooks' self-check module.
_A_KERNELS_OWN = {"autograder.confinement.sandbox", "selfcheck"}


def test_a_forked_kernel_starts_without_importing_what_the_server_could_have(tmp_path, no_server_yet):
    """Every module IPython imports as a kernel's shell starts comes with the fork, not imported again
    by every kernel; but ipykernel's debugger, which each kernel imports (forkserver.PRELOAD says why)."""
    from autograder.grading import compiler

    env = forkserver.environment(compiler.kernel_environment(dict(os.environ)))
    listed = subprocess.run(
        [sys.executable, "-c", "import json, runpy, sys\n"  # runpy: the server runs as `python -m`
                               "from autograder.confinement import forkserver\n"
                               "forkserver.preload()\nprint(json.dumps(sorted(sys.modules)))\n"
                               "import ipykernel.debugger\nprint(json.dumps(sorted(sys.modules)))"],
        env=env, cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    server, with_debugger = (set(json.loads(line)) for line in listed[-2:])
    shown, _ = confinement._run(tmp_path, "import json, sys\n"
                                          "print('forked:', 'autograder.confinement.forkclient' in sys.modules)\n"
                                          "print(json.dumps(sorted(sys.modules)))")
    forked, modules = shown[0].splitlines()
    assert forked == "forked: True"
    assert set(json.loads(modules)) - server == _A_KERNELS_OWN | (with_debugger - server)


# ---------------------------------------------------------------- a server another process started

_FORKED_AND_TOLD = _FORKED + f"; import os; print({forkserver.SHARED_ENV!r} in os.environ)"


def test_kernels_fork_from_the_shared_server_named_in_the_environment(tmp_path, monkeypatch, no_server_yet):
    shared = forkserver.Server(dict(os.environ), wait=False)  # as the parallel command starts it
    try:
        monkeypatch.setenv(forkserver.SHARED_ENV, shared.shared)
        shown, _ = confinement._run(tmp_path, _FORKED_AND_TOLD)
        assert shown == ["True\nFalse\n"]  # forked, and the kernel is not told where the server is
        attached = kernel_manager._server
        assert isinstance(attached, forkserver.Attached) and attached.pid == shared.process.pid
        assert attached.running()
    finally:
        shared.close()
    assert not attached.running()


def test_kernels_start_afresh_when_the_shared_server_could_not_start(tmp_path, monkeypatch, caplog, no_server_yet):
    folder = tmp_path / "server"  # what a server whose imports failed leaves beside its socket
    folder.mkdir()
    (folder / forkserver.FAILED_FILE).write_text("cannot fork kernels: a stand-in failure\n")
    monkeypatch.setenv(forkserver.SHARED_ENV, f"{os.getpid()}:{folder / 'socket'}")
    with caplog.at_level(logging.WARNING):
        shown, _ = confinement._run(tmp_path / "course", _FORKED)
    assert shown == ["False\n"]
    assert "no fork server (cannot fork kernels: a stand-in failure); kernels start afresh" in caplog.text


def test_a_shared_server_that_failed_or_died_before_it_was_ready_is_not_waited_for(tmp_path):
    (tmp_path / "jax.py").write_text("raise ImportError('a stand-in for a broken JAX')\n")
    failing = forkserver.Server({**os.environ, "PYTHONPATH": f"{tmp_path}:{REPO}"}, wait=False)
    killed = forkserver.Server(dict(os.environ), wait=False)
    killed.process.kill()  # not waited for: a zombie, as the parallel command's would be
    try:
        with pytest.raises(RuntimeError, match="^cannot fork kernels: a stand-in for a broken JAX$"):
            forkserver.Attached(failing.shared)
        with pytest.raises(RuntimeError, match=rf"the shared fork server \(pid {killed.process.pid}\) is gone"):
            forkserver.Attached(killed.shared)
    finally:
        failing.close()
        killed.close()


def test_a_server_whose_starter_is_killed_leaves_and_takes_its_socket_folder(tmp_path):
    """SIGKILL runs no exit handler of the starter's: the server itself removes the folder it listened in."""
    said = tmp_path / "said"
    starter = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time\n"
        "from autograder.confinement import forkserver\n"
        "server = forkserver.Server(dict(os.environ))\n"
        f"open({str(said)!r}, 'w').write(f'{{server.process.pid}} {{server.folder}}')\n"
        "time.sleep(600)\n"
    )], cwd=REPO)
    try:
        deadline = time.monotonic() + forkserver.READY_SECONDS
        while not said.exists() or not said.read_text():
            assert starter.poll() is None and time.monotonic() < deadline, "the starter's server never got ready"
            time.sleep(0.1)
        pid, folder = said.read_text().split(" ", 1)
        assert Path(folder, "socket").exists()
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 30
        while Path(folder).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(folder).exists(), "the killed starter's fork server left its folder"
        deadline = time.monotonic() + 10  # a zombie until whoever adopted it reaps it: not running
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(pid)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()


def _running(pid: str) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
