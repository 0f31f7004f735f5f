"""What a grading kernel can see and do, asked from inside a real one.

nbgrader's own Execute preprocessor, as this course configures it (ConfinedExecute),
runs small notebooks in a scratch course; their cells report what they find, in a
kernel forked from the fork server and in one started afresh. Fast (a few
kernels); tests/test_hostile.py does the same through whole autograde batches.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, kernel_child_alive
from hostile.corpus import OUTLIVES_KERNEL
from jupyter_core.paths import jupyter_runtime_dir
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from autograder.confinement import jail as _jail
from autograder.confinement import kernel_manager
from autograder.confinement.preprocessors import ConfinedExecute


_kernels = {"fork_server": True}


@pytest.fixture(autouse=True, params=["forked", "fresh"])
def kernels(request):
    """Every question asked of a kernel forked from the fork server and of one started afresh."""
    _kernels["fork_server"] = request.param == "forked"
    yield request.param


def _course(tmp_path: Path) -> tuple[Config, Path]:
    root = tmp_path / "course"
    folder = root / "autograded" / "ann" / "demo"
    folder.mkdir(parents=True)
    (folder / "data.txt").write_text("the student's own file\n")
    (root / "gradebook.db").write_text("not for students\n")
    (root / "source" / "demo").mkdir(parents=True)
    (root / "source" / "demo" / "demo.ipynb").write_text("solutions\n")
    config = Config()
    config.CourseDirectory.root = str(root)
    config.Exchange.root = str(tmp_path / "exchange")
    config.Execute.extra_arguments = [
        "--HistoryManager.hist_file=:memory:", "--IPKernelApp.exec_lines=['import autograder.confinement.sandbox']",
    ]
    config.Execute.timeout = 60
    config.ConfinedKernelManager.fork_server = _kernels["fork_server"]
    return config, folder


def _run(tmp_path: Path, *sources: str, budget: float | None = None) -> tuple[list[str], Path]:
    config, folder = _course(tmp_path)
    if budget is not None:
        config.ConfinedExecute.notebook_timeout = budget
    nb = new_notebook(cells=[new_code_cell(source) for source in sources])
    ConfinedExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    shown = []
    for cell in nb.cells:
        texts = [o.get("text", "") for o in cell.outputs if o.output_type == "stream"]
        texts += [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
        shown.append("".join(texts))
    return shown, folder


def test_this_machine_can_confine_kernels():
    """The other tests here would say little otherwise (CI runs on a machine like this one)."""
    assert kernel_manager.why_not_confined() is None


LOOK_AROUND = '''
import json, os, autograder
course = os.path.abspath("../../..")
print(json.dumps({
    "uid": os.getuid(),
    "capabilities": open("/proc/self/status").read().split("CapEff:")[1].split()[0],
    "own files": sorted(os.listdir(".")),
    "course": sorted(os.listdir(course)),
    "grader files": sorted(os.listdir(os.path.dirname(autograder.__file__))),
    "repository source": os.path.exists(os.path.join(os.path.dirname(os.path.dirname(autograder.__file__)), "source")),
    "home": sorted(os.listdir(os.path.expanduser("~"))),
}))
'''


def test_a_grading_kernel_starts_with_the_course_flags_and_computes(tmp_path):
    """The flags of autograder/grading/compiler.py reach the real kernel and XLA accepts them."""
    from autograder.grading import compiler

    [shown], _ = _run(tmp_path, "import os, jax, jax.numpy as jnp\n"
                                "print(os.environ['XLA_FLAGS'], float(jax.jit(jnp.sum)(jnp.arange(4.0))))")
    flags, total = shown.rsplit(" ", 1)
    assert set(compiler.XLA_FLAGS) <= set(flags.split()) and total.strip() == "6.0", shown


#: Set in nbgrader's environment as a JupyterHub, a database and a cloud set theirs.
INSTRUCTORS_SECRETS = {"JUPYTERHUB_API_TOKEN": "hub-7c1e", "PGPASSWORD": "pg-52aa", "AWS_SECRET_ACCESS_KEY": "aws-90d3"}

READ_ENVIRONMENTS = """
import glob, json, os, sys
seen = {"os.environ": dict(os.environ), "sitecustomize": getattr(sys.modules.get("sitecustomize"), "__file__", None)}
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        seen[path] = open(path, "rb").read().decode(errors="replace")
    except OSError:
        pass
print(json.dumps(seen))
"""


def test_nothing_of_the_instructors_environment_reaches_a_kernel(tmp_path, monkeypatch):
    """A kernel's environment is the course's short list, the kernelspec's own and the names the
    instructor adds: no token or password of nbgrader's environment is in it, in the kernel's
    ``os.environ`` or in any ``/proc/*/environ`` it can read (a forked kernel's is its server's)."""
    for name, value in INSTRUCTORS_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COURSE_SETTING", "kept because named")
    monkeypatch.setenv("LC_SECRET", INSTRUCTORS_SECRETS["PGPASSWORD"])  # a locale's prefix, no locale's name
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}/absent::relative")
    config, folder = _course(tmp_path)
    config.ConfinedKernelManager.kernel_environment_names = ["COURSE_*"]
    nb = new_notebook(cells=[new_code_cell(READ_ENVIRONMENTS)])
    ConfinedExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    [out] = [o.text for o in nb.cells[0].outputs if o.output_type == "stream"]
    seen = json.loads(out)
    everything = json.dumps(seen)
    assert not [name for name, value in INSTRUCTORS_SECRETS.items() if value in everything], everything[:3000]
    assert seen["os.environ"]["COURSE_SETTING"] == "kept because named"
    assert seen["os.environ"]["PYTHONPATH"] == f"{tmp_path}/absent", "an empty or relative entry is the student's folder"
    assert "NBGRADER_EXECUTION" not in seen["os.environ"] or seen["os.environ"]["NBGRADER_EXECUTION"] == "autograde"
    # Of nbgrader's own variables, only these (not those the kernel's imports or its jail set):
    instructors = {name for name, value in seen["os.environ"].items() if os.environ.get(name) == value} - _set_by_imports() - {
        "PYTHONSAFEPATH", _jail.UID_ENV}
    assert instructors <= {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "XLA_FLAGS", "PYTHONPATH", "COURSE_SETTING",
                           "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME"}, \
        sorted(instructors)


def _set_by_imports() -> set[str]:
    """The variables a Python sets itself as it imports a kernel's modules (ipykernel, IPython, JAX)."""
    probe = ("import json, os\nbefore = set(os.environ)\nimport ipykernel.ipkernel, IPython, jax, jax.numpy\n"
             "jax.numpy.zeros(1)\nprint(json.dumps(sorted(set(os.environ) - before)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env={})
    return set(json.loads(done.stdout))


def test_a_students_sitecustomize_runs_nowhere(tmp_path, monkeypatch):
    """With an empty PYTHONPATH entry (``export PYTHONPATH=/x:$PYTHONPATH`` with it unset), Python
    puts the working folder on sys.path, and ``site`` imports a ``sitecustomize.py`` found there
    before anything else: started in the student's folder, the kernel's launcher (outside the jail,
    as nbgrader's user) would run the student's file. It runs nowhere: not in the launcher, not in
    the kernel before the sandbox has confined it."""
    escaped = tmp_path / "escaped"  # /tmp is private in the jail: only a process outside it writes here
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}/absent:")
    config, folder = _course(tmp_path)
    (folder / "sitecustomize.py").write_text(f"open({str(escaped)!r}, 'a').write('ran outside the jail')\n")
    nb = new_notebook(cells=[new_code_cell(READ_ENVIRONMENTS)])
    ConfinedExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    [out] = [o.text for o in nb.cells[0].outputs if o.output_type == "stream"]
    assert not escaped.exists(), escaped.read_text()
    assert json.loads(out)["sitecustomize"] is None


def test_a_kernel_sees_only_its_own_folder_as_a_user_of_its_own(tmp_path):
    [shown], _ = _run(tmp_path, LOOK_AROUND)
    seen = json.loads(shown)
    assert seen["uid"] >= _jail.UID_BASE and int(seen["capabilities"], 16) == 0
    assert seen["own files"] == ["data.txt"]
    assert seen["course"] == ["autograded"]  # no gradebook.db, no source/
    assert seen["grader files"] == []  # hidden once loaded
    assert seen["repository source"] is False
    assert set(seen["home"]) <= _put_back_in_home() | {".ipython"}  # IPython's own, made by the kernel


def _put_back_in_home() -> set[str]:
    """The first folder, under home, of each path the jail puts back (Python, the connection file,
    the compile cache where one is lent)."""
    from autograder.grading import compile_cache

    home = Path.home().resolve()
    connection = os.path.join(jupyter_runtime_dir(), "kernel.json")
    kept = map(Path, kernel_manager.kept_paths(connection, compile_cache.kernel_folder()))
    return {path.relative_to(home).parts[0] for path in kept if path.is_relative_to(home)}


def test_a_course_on_sys_path_stays_hidden(tmp_path, monkeypatch):
    """The jail puts back what Python imports from; a folder there that holds the course must not
    bring the course back (tests run nbgrader with the repository on PYTHONPATH)."""
    monkeypatch.syspath_prepend(str(tmp_path / "course"))
    [shown], _ = _run(tmp_path, LOOK_AROUND)
    assert json.loads(shown)["course"] == ["autograded"]


def test_writes_stay_in_the_kernel_and_the_course_is_out_of_reach(tmp_path):
    shown, folder = _run(tmp_path, '''
open("scratch.txt", "w").write("written by the notebook")
print(open("scratch.txt").read())
for path in ("../../../gradebook.db", "../../../source/demo/planted.txt", "/usr/lib/planted.txt"):
    try:
        open(path, "w").write("x")
    except OSError as error:
        print(type(error).__name__, error.errno)
''')
    assert shown[0].splitlines() == ["written by the notebook", "PermissionError 13", "FileNotFoundError 2",
                                     "PermissionError 13"]
    assert sorted(p.name for p in folder.iterdir()) == ["data.txt"]
    root = folder.parents[2]
    assert (root / "gradebook.db").read_text() == "not for students\n"
    assert sorted(p.name for p in (root / "source" / "demo").iterdir()) == ["demo.ipynb"]


FILL_THE_SOCKETS_FOLDER = '''
import os
from ipykernel.kernelapp import IPKernelApp
folder = os.path.dirname(IPKernelApp.instance().ip)
print(sorted(name.rsplit("-", 1)[0] for name in os.listdir(folder)))
for make in (lambda: open(os.path.join(folder, "filler"), "w").write("x" * 4096),
             lambda: os.mkdir(os.path.join(folder, "deep")),
             lambda: os.chmod(folder, 0o777)):
    try:
        make()
        print("made")
    except OSError as error:
        print(type(error).__name__, error.errno)
'''


def test_a_kernel_cannot_fill_its_sockets_folder_and_still_meets_its_judge(tmp_path):
    """The folder of the kernel's ZMQ sockets lies on the machine's disk, outside the kernel's
    tmpfs: once its sockets are bound it is read-only to the kernel, which still talks to
    nbgrader there, and to each grade cell's judge (a socket renamed in afterwards)."""
    shown, _ = _run(tmp_path, FILL_THE_SOCKETS_FOLDER, 'print("still answering")')
    assert shown[0].splitlines() == ["['kernel', 'kernel', 'kernel', 'kernel', 'kernel']",
                                     "OSError 30", "OSError 30", "OSError 30"], shown[0]
    assert shown[1] == "still answering\n"


def test_outputs_past_their_bytes_are_left_out_and_the_notebook_goes_on(tmp_path):
    """nbgrader holds every output in memory and writes it into the autograded notebook: one line
    of 12 MiB is past the limit of an output; the next cells run, and an error keeps its name."""
    shown, _ = _run(tmp_path, '''
from IPython.display import display
for i in range(3):
    display({"text/plain": str(i) * (12 << 20)}, raw=True)
print("after the flood")
''', 'print("next cell")', 'raise ValueError("v" * (12 << 20))')
    assert shown[0] == ("[autograder: an output of 12.0 MiB was left out here, past the limit of 8 MiB an output "
                        "(and any more such outputs of this cell)]\nafter the flood\n"), shown[0][:300]
    assert shown[1] == "next cell\n"
    assert shown[2].startswith("ValueError: vvv") and shown[2].endswith("[autograder: cut]") and len(shown[2]) < 3000


def test_pieces_of_a_stream_join_as_jupyter_shows_them(tmp_path):
    """The kernel sends what a cell prints in pieces, cut where its flush timer falls: a flush forced
    between the two words of one line (as a loaded machine's timer does) still gives one output, and
    pieces of another stream, or a display between them, keep them apart in their order."""
    config, folder = _course(tmp_path)
    nb = new_notebook(cells=[new_code_cell(
        "import sys, time\nfrom IPython.display import display\n"
        "print('compile', end=''); sys.stdout.flush(); time.sleep(0.3); print(' cache'); sys.stdout.flush()\n"
        "print('two', file=sys.stderr); sys.stderr.flush(); time.sleep(0.3); print('three'); sys.stdout.flush()\n"
        "time.sleep(0.3); display({'text/plain': 'shown'}, raw=True); print('four')")])
    ConfinedExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    outputs = [(o.output_type, o.get("name"), o.get("text", o.get("data", {}).get("text/plain")))
               for o in nb.cells[0].outputs]
    assert outputs == [("stream", "stdout", "compile cache\n"), ("stream", "stderr", "two\n"),
                       ("stream", "stdout", "three\n"), ("display_data", None, "shown"),
                       ("stream", "stdout", "four\n")], outputs


def test_a_dead_kernel_costs_only_the_cells_it_did_not_finish(tmp_path):
    shown, _ = _run(tmp_path, 'print("first")', "import os\nos._exit(7)", 'print("never")')
    assert shown[0] == "first\n"
    assert shown[1] == ("KernelDied: The kernel died while this cell ran (exit code 7); "
                        "the cells after it did not run.")
    assert shown[2] == "KernelDied: Not run: the kernel died in an earlier cell (exit code 7)."


#: A cell that sleeps and cannot be interrupted (SIGINT ignored): only stopping the kernel ends it.
_STALLS = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('stalling')\ntime.sleep(8)"


def test_a_notebook_of_stalling_cells_ends_within_its_budget(tmp_path):
    """Five cells of 8 s each, with a budget of 12 s: the second runs out of it, the kernel is
    stopped, the rest are not run; the finished cell keeps its output."""
    started = time.monotonic()
    shown, _ = _run(tmp_path, 'print("first")', *[_STALLS] * 5, 'print("never")', budget=12)
    seconds = time.monotonic() - started
    assert shown[0] == "first\n"
    assert shown[1].startswith("stalling\n") and "NotebookTimeout" not in shown[1]
    assert "The notebook's time budget of 12 s ran out while this cell ran" in shown[2]
    assert shown[3:] == ["NotebookTimeout: Not run: the notebook's time budget of 12 s ran out in an earlier cell."] * 4
    assert seconds < 12 + 15, f"the notebook took {seconds:.0f} s against a budget of 12 s"


def test_nothing_a_notebook_starts_outlives_it(tmp_path):
    [shown], _ = _run(tmp_path, OUTLIVES_KERNEL)  # a daemon in a session of its own
    pid = int(re.search(r"started a process of its own: (\d+)", shown)[1])
    try:
        deadline = time.monotonic() + 5
        while kernel_child_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not kernel_child_alive(pid), "the notebook's daemon still runs after grading"
    finally:
        if kernel_child_alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_client_that_subscribed_too_late_for_its_idle_asks_again(tmp_path):
    """The kernel's ``idle`` for a request, published before the client's IOPub subscription reached
    it, is lost; the kernel's welcome to the subscription says so, and the request asked again is
    heard through."""
    from jupyter_core.utils import run_sync

    config, folder = _course(tmp_path)
    manager = kernel_manager.ConfinedKernelManager(config=config)
    run_sync(manager.start_kernel)(cwd=str(folder))
    late = manager.client()
    try:
        late.start_channels(iopub=False)  # the shell alone: nothing the kernel publishes reaches it
        late.kernel_info()
        reply = run_sync(late.shell_channel.get_msg)(timeout=60)
        assert reply["msg_type"] == "kernel_info_reply"
        time.sleep(0.5)  # the kernel publishes its idle a moment after the reply: long done by now
        late.iopub_channel.start()  # subscribes now, after the kernel published its idle
        assert not run_sync(late._idle_after)(reply), "an idle published before the subscription was heard"
        assert late.welcomed, "the kernel's welcome to the subscription went unheard"
        run_sync(late.wait_for_ready)(timeout=60)  # asked again, answered, and its idle heard
    finally:
        late.stop_channels()
        run_sync(manager.shutdown_kernel)(now=True)


def test_hidden_paths_name_the_course_the_exchange_home_and_repository(tmp_path):
    config, _ = _course(tmp_path)
    hidden = kernel_manager.hidden_paths(config)
    for path in (tmp_path / "course", tmp_path / "exchange", Path.home(), REPO):
        assert os.path.realpath(path) in hidden


def test_leftovers_are_found_by_their_user_even_without_a_cgroup():
    """A process forked by the kernel after it changed user, outside any cgroup of the kernel's."""
    kernel_pid = 3_999_999  # no such kernel: only the user id ties the child to it
    child = os.fork()
    if child == 0:
        os.setresuid(*[_jail.kernel_uid(kernel_pid)] * 3)
        time.sleep(60)
        os._exit(0)
    try:
        deadline = time.monotonic() + 5
        while child not in kernel_manager.members(kernel_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child in kernel_manager.members(kernel_pid)
        assert kernel_manager.kill_leftovers(kernel_pid) >= 1
        assert os.waitpid(child, 0)[1] == signal.SIGKILL
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)


def test_a_grading_package_handed_in_beside_the_notebook_is_never_imported(tmp_path):
    """A kernel started afresh imports the sandbox by name before any cell: an `autograder/` in
    the notebook's folder would run in its place, still as root, were that folder on its path."""
    config, folder = _course(tmp_path)
    (folder / "autograder" / "confinement").mkdir(parents=True)
    (folder / "autograder" / "__init__.py").write_text("print('the handed-in package was imported')\n")
    (folder / "autograder" / "confinement" / "__init__.py").write_text("")
    (folder / "autograder" / "confinement" / "sandbox.py").write_text("print('the handed-in sandbox ran')\n")
    nb = new_notebook(cells=[new_code_cell("import os, autograder\nprint(os.getuid(), autograder.__file__)")])
    ConfinedExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    [output] = nb.cells[0].outputs
    uid, imported = output.text.split()
    assert int(uid) >= _jail.UID_BASE
    assert not imported.startswith(str(folder))


def test_a_kernel_holds_no_property_module(tmp_path):
    """Reference answers and expected values live only in the judge's process: a kernel never
    imported a property module, and cannot import one (the package's files are hidden)."""
    probe = ('import importlib, json, sys\n'
             'loaded = sorted(m for m in sys.modules if m.startswith("autograder.properties."))\n'
             'try:\n    importlib.import_module("autograder.properties.test_loops")\n    imported = "imported"\n'
             'except ImportError as error:\n    imported = type(error).__name__\n'
             'print(json.dumps([loaded, imported]))')
    [shown], _ = _run(tmp_path, probe)
    loaded, imported = json.loads(shown)
    assert loaded == [] and imported == "ModuleNotFoundError"
