"""Shared set-up of the course's tests.

Hypothesis keeps its example database and caches in a temporary folder, never
in ``.hypothesis/`` of the repository (the graders use Hypothesis, and Jupyter
kernels started by nbgrader inherit the environment variable).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

REPO = Path(__file__).resolve().parent.parent

# Found as the course finds them: a folder of source/ holding its notebook. The tests
# hold release/, the property modules and the samples to this list.
COURSE_ASSIGNMENTS = tuple(sorted(p.parent.name for p in (REPO / "source").glob("*/*.ipynb") if p.stem == p.parent.name))

_hypothesis_home = tempfile.mkdtemp(prefix="course-tests-hypothesis-")
atexit.register(shutil.rmtree, _hypothesis_home, ignore_errors=True)
set_hypothesis_home_dir(_hypothesis_home)
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _hypothesis_home


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: runs nbgrader apps and Jupyter kernels (tens of seconds; run by default)"
    )
    # A suite started in the background (`cmd &` in a script ignores SIGINT) would hand the ignored Ctrl-C
    # on to every command it starts, and the tests that press Ctrl-C on a command would see it do
    # nothing: each process of the suite (each xdist worker too) starts its commands as a terminal would.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: Modules that share something one process at a time may hold, each set run in one worker of
#: pytest-xdist, one module after another: the plain user's accounts and the environment made in its
#: home (tests/test_rootless.py ``plain_environment``), and the demo's course (``demo_run`` below).
_RUN_TOGETHER = {
    "plain-user": {"test_rootless", "test_boundary", "test_readme_workflow", "test_exchange_users",
                   "test_kernel_descriptors", "test_hostile"},
    "demo": {"test_demo", "test_cycle"},
}


def unit_of_work(nodeid: str) -> str:
    """The unit pytest-xdist hands one worker whole: a test's module, or the set of modules it shares
    something with (:data:`_RUN_TOGETHER`)."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    return next((name for name, modules in _RUN_TOGETHER.items() if module in modules), module)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: without it installed, never called
def pytest_xdist_make_scheduler(config, log):
    """Under ``-n N`` (the README's ``-n 2``), every module is one unit of work, not each test: a
    module's fixtures (a graded course, a pool of grading processes, the bodies ``side_by_side`` starts
    for the module's tests, all chosen from the whole collection) are made once, in the worker that runs
    all of its tests. The largest units go first. (xdist's own ``loadgroup`` renames node ids, which
    pytest 9.2 no longer lets a plugin do.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of_work(nodeid)

    return ByModule(config, log)


def kernel_child_alive(pid: int) -> bool:
    """Whether ``pid`` is still a process a notebook forked from its kernel (same command line:
    a kernel started afresh, or one forked from the fork server)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"ipykernel_launcher" in cmdline or b"autograder.confinement.forkserver" in cmdline


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``root``."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def plain_python() -> str | None:
    """A Python of this one's version that a plain user can run, for the tests that grade as one
    (tests/test_rootless.py, the README's workflow without root), or None. Their virtual environments
    borrow or install this environment's packages, so the version must be the same. A Python that
    pyenv installed under /root is out of a plain user's reach; ``.ci/run`` puts a copy of the test
    environment's Python in /usr/local/bin where none of this version is there."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (f"/usr/local/bin/python{version}", f"/usr/bin/python{version}", "/usr/bin/python3"):
        if not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


@contextlib.contextmanager
def side_by_side(request, bodies: dict[str, Callable[[], object]], at_once: int = 2) -> Iterator[dict[str, Future]]:
    """Run the body of each test of ``bodies`` (keyed by the test's name, ``test_x[param]`` for a
    parametrized one), ``at_once`` at a time in threads of their own, as two instructors on one machine
    run their commands: for tests that mostly wait on one nbgrader command and one kernel at a time
    (about one core of two), so two together take little more than the longer one. Only the tests this
    session runs are started; each test waits for its own future (a skip or a failure in one is that
    test's alone). A body runs nbgrader and the jail as commands of their own: nothing of this process's
    state (its working folder, environment or signal handlers) is a body's to change."""
    strays = [name for name in bodies if not callable(getattr(request.module, name.split("[")[0], None))]
    assert not strays, f"no test of {request.module.__name__} is named {strays}"
    chosen = {item.name for item in request.session.items if item.module is request.module}
    pool = ThreadPoolExecutor(at_once)
    try:
        yield {name: pool.submit(body) for name, body in bodies.items() if name in chosen}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: The assignment the README's first command is shown on, in tests/test_demo.py and tests/test_cycle.py.
DEMO_ASSIGNMENT = "loops"


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``python -m autograder demo --assignment loops`` run once, as a newcomer runs it: the process
    and its course folder (test_demo reads what it says, test_cycle holds its table to nbgrader's)."""
    course = tmp_path_factory.mktemp("demo") / "course"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--assignment", DEMO_ASSIGNMENT, "--course-dir", str(course)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )
    return proc, course
