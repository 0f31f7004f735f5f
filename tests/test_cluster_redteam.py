"""The red team's attacks on the grading processes a Dask worker keeps between runs
(autograder/tools/parallel/cluster.py): a hostile notebook graded in one run tries to plant
state in the kept grading process and fork server for the next; a driver that dies mid-run, a
kernelspec changed between runs and a course folder replaced at the same path must not leave
the next run graded by what the earlier one set up. (A kernel that dies leaving a process
behind, which a kept process made worse, is the hostile corpus's ``outlives-its-dying-kernel``.)

One scheduler and ONE worker process (so a second run is served by the very grading process and
fork server of the first, where it is kept), a scratch course on SQLite, ``branch_repair``.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, plain_python
from hostile import notebooks
from test_cluster import children_of, graders_of
from test_parallel import INTRUDER, as_intruder

from autograder.confinement import jail
from autograder.tools import scratch
from autograder.tools.parallel.localcluster import LocalCluster

ASSIGNMENT = "branch_repair"
IDLE = 20  # seconds the worker keeps an idle grading process
GRADED = re.compile(r"^\[\s*\d+/\d+\] (?P<student>\S+)\s+(?P<points>[\d.]+)/(?P<max>[\d.]+) automatic points")

#: Run in the hostile kernel: every plant it can think of, what happened printed as one JSON line.
PLANT = r'''
import json as _j, os as _o, signal as _s, socket as _so, sys as _sys, time as _t
_r = {"uid": _o.getuid(), "pid": _o.getpid()}
# 1. files where a later kernel or the kept processes might look
for _p in ("/tmp/rt-plant", "/dev/shm/rt-plant", "/var/tmp/rt-plant", "rt-plant",
           _o.path.join(_o.environ.get("AUTOGRADER_COMPILE_CACHE", "/nonexistent"), "rt-plant")):
    try:
        with open(_p, "w") as _f:
            _f.write("planted")
        _r[_p] = "written"
    except Exception as _e:
        _r[_p] = type(_e).__name__
# 2. the kept processes: the grading process, the fork server, the Dask worker, the scheduler
_r["kill"] = {}
for _d in _o.listdir("/proc"):
    if not _d.isdigit() or int(_d) == _o.getpid():
        continue
    try:
        _c = open(f"/proc/{_d}/cmdline", "rb").read()
    except Exception:
        continue
    if any(_k in _c for _k in (b"forkserver", b"parallel.worker", b"dask", b"distributed.cli", b"forkclient")):
        try:
            _o.kill(int(_d), _s.SIGKILL)
            _r["kill"][_d] = "KILLED"
        except Exception as _e:
            _r["kill"][_d] = type(_e).__name__
# 3. every named unix socket of the machine (the fork server's, the judges', nbgrader's ZMQ)
_r["sockets"] = {}
try:
    for _line in open("/proc/net/unix").read().splitlines()[1:]:
        _parts = _line.split()
        if len(_parts) >= 8 and _parts[7].startswith("/"):
            _x = _so.socket(_so.AF_UNIX, _so.SOCK_STREAM)
            _x.settimeout(0.2)
            try:
                _x.connect(_parts[7])
                _r["sockets"][_parts[7]] = "CONNECTED"
            except Exception as _e:
                _r["sockets"][_parts[7]] = type(_e).__name__
            finally:
                _x.close()
except Exception as _e:
    _r["sockets"] = type(_e).__name__
# 4. a daemon of its own, detached (double fork, own session), to outlive the kernel
if _o.fork() == 0:
    _o.setsid()
    if _o.fork() == 0:
        _o.execv("/bin/sleep", ["sleep", "600"])
    _o._exit(0)
_o.wait()
# 5. the environment and modules of the process it was forked from
_o.environ["AUTOGRADER_REDTEAM_PLANT"] = "1"
_sys.modules["autograder.redteam_plant"] = _sys
print("REDTEAM " + _j.dumps(_r))
'''


def hostile_notebook(path: Path) -> Path:
    return notebooks.build(ASSIGNMENT, (notebooks.append("repaired_branch", PLANT),), path)


def kernel_processes(uid: int) -> list[str]:
    """Processes of the kernel user ``uid`` (the jail's ``UID_BASE + pid``) still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        if int(re.search(r"^Uid:\s*(\d+)", status, re.MULTILINE)[1]) == uid and "zombie" not in re.search(r"^State:.*$", status, re.MULTILINE)[0]:
            found.append(f"{entry.name} uid {uid}: {(entry / 'cmdline').read_bytes()[:80]!r}")
    return found


def fork_servers_of(pid: int) -> set[int]:
    return set(children_of(pid, b"autograder.confinement.forkserver"))


def run(root: Path, cluster: LocalCluster, *args: str) -> tuple[int, list[str]]:
    proc = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, *cluster.driver_args, *args],
                          cwd=root, capture_output=True, text=True, timeout=400, check=False)
    return proc.returncode, (proc.stdout + proc.stderr).splitlines()


def points(lines: list[str]) -> dict[str, tuple[float, float]]:
    return {m["student"]: (float(m["points"]), float(m["max"])) for m in map(GRADED.match, lines) if m}


def printed(course: scratch.ScratchCourse, student: str, mark: str):
    """The JSON a notebook printed after ``mark`` on one line of a cell's output."""
    nb = json.loads((course.root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", ""))
            if f"{mark} " in text:
                return json.loads(text.split(f"{mark} ", 1)[1].splitlines()[0])
    raise AssertionError(f"the notebook of {student} printed no {mark} line")


def report_of(course: scratch.ScratchCourse, student: str) -> dict:
    return printed(course, student, "REDTEAM")


KERNELSPEC = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    """The cluster, its workers finding the kernelspec ``python3`` in a folder of the test's own
    (``JUPYTER_PATH``), a copy of the installed one that a test may change between runs."""
    jupyter = tmp_path_factory.mktemp("jupyter")
    (jupyter / "kernels" / "python3").mkdir(parents=True)
    (jupyter / "kernels" / "python3" / "kernel.json").write_text(KERNELSPEC.read_text())
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(jupyter)
    try:
        cluster = LocalCluster(tmp_path_factory.mktemp("dask"), workers=1, grader_idle_seconds=IDLE)
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH")
        else:
            os.environ["JUPYTER_PATH"] = saved
    with cluster as running:
        running.kernelspec = jupyter / "kernels" / "python3" / "kernel.json"
        yield running


@pytest.mark.slow
def test_a_hostile_notebook_plants_nothing_in_the_kept_grading_process_for_the_next_run(one_worker, tmp_path):
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    when = datetime.datetime.now(datetime.UTC)
    scratch.place_submission(course, "hostile", ASSIGNMENT, hostile_notebook(tmp_path / "hostile.ipynb"), when)

    code, lines = run(course.root, one_worker)
    assert code == 0, "\n".join(lines)
    (worker,) = one_worker.worker_pids().values()
    graders = set(graders_of(worker))
    servers = {s for g in graders for s in fork_servers_of(g)}
    assert graders and servers, "nothing kept for the next run: the test would be vacuous"
    planted = report_of(course, "hostile")
    assert "KILLED" not in planted["kill"].values(), planted["kill"]
    assert "CONNECTED" not in (planted["sockets"].values() if isinstance(planted["sockets"], dict) else ()), planted
    assert planted["uid"] >= jail.UID_BASE
    assert kernel_processes(planted["uid"]) == []  # its daemon died with its kernel

    scratch.place_submission(course, "victim", ASSIGNMENT, notebooks.SAMPLES / ASSIGNMENT / "correct.ipynb", when)
    code, lines = run(course.root, one_worker, "--student", "victim")
    assert code == 0, "\n".join(lines)
    assert set(graders_of(worker)) == graders, "the second run had another grading process"
    assert {s for g in graders for s in fork_servers_of(g)} == servers, "the fork server was replaced"
    assert points(lines) == {"victim": (6.0, 6.0)}, "\n".join(lines)
    for grader in graders | servers:
        environ = Path(f"/proc/{grader}/environ").read_bytes()
        assert b"AUTOGRADER_REDTEAM_PLANT" not in environ
    assert not any(Path(p).exists() for p in ("/tmp/rt-plant", "/dev/shm/rt-plant", "/var/tmp/rt-plant"))
    assert kernel_processes(planted["uid"]) == []


@pytest.mark.slow
def test_a_grading_process_whose_driver_died_mid_run_ends_once_idle(one_worker, tmp_path):
    """A driver killed (SIGHUP: a closed terminal, a dropped SSH session, which Python does not turn into
    an exception) never closes its run: its grading processes count as idle from their last task."""
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    scratch.place_submission(course, "s1", ASSIGNMENT, notebooks.SAMPLES / ASSIGNMENT / "correct.ipynb")
    (worker,) = one_worker.worker_pids().values()
    before = set(graders_of(worker))
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, *one_worker.driver_args],
                            cwd=course.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in proc.stdout:
        if line.startswith(b"kernels:"):
            break
    deadline = time.monotonic() + 60
    while not (course.root / "autograded" / "s1").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # until the student's grading has begun on the worker
    proc.send_signal(signal.SIGHUP)  # the instructor's terminal goes away mid-run
    proc.wait()
    started = set(graders_of(worker)) - before
    assert started, "the run started no grading process of its own"
    autograded = course.root / "autograded" / "s1" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    deadline = time.monotonic() + 120
    while not autograded.exists() and time.monotonic() < deadline:  # the task goes on without its driver
        time.sleep(0.2)
    assert autograded.exists(), "the task did not end"
    deadline = time.monotonic() + IDLE + 15  # the reaper looks every few seconds
    while started & set(graders_of(worker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = started & set(graders_of(worker))
    assert left == set(), f"grading processes {left} outlived their idle time ({IDLE} s) after the driver died"


#: Printed by a kernel: what its environment and JAX say of 64-bit mode.
X64 = ('import json as _j, os as _o, jax as _jax\n'
       'print("X64 " + _j.dumps([_o.environ.get("JAX_ENABLE_X64"), bool(_jax.config.jax_enable_x64)]))')


def x64_of(course: scratch.ScratchCourse, student: str) -> tuple:
    return tuple(printed(course, student, "X64"))


@pytest.mark.slow
def test_a_kernelspec_changed_between_runs_reaches_jax_in_the_next_runs_kernels(one_worker, tmp_path):
    """The kept fork server imported JAX with the first run's kernel environment, and JAX reads its
    JAX_* variables on import: a kernelspec's ``env`` changed between runs must start a new server."""
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    notebook = notebooks.build(ASSIGNMENT, (notebooks.insert_after("END", X64),), tmp_path / "x64.ipynb")
    scratch.place_submission(course, "first", ASSIGNMENT, notebook)
    code, lines = run(course.root, one_worker)
    assert code == 0, "\n".join(lines)
    assert x64_of(course, "first") == (None, False)
    spec = json.loads(one_worker.kernelspec.read_text())
    original = one_worker.kernelspec.read_text()
    one_worker.kernelspec.write_text(json.dumps({**spec, "env": {"JAX_ENABLE_X64": "1"}}))
    try:
        scratch.place_submission(course, "second", ASSIGNMENT, notebook)
        code, lines = run(course.root, one_worker, "--student", "second")
        assert code == 0, "\n".join(lines)
    finally:
        one_worker.kernelspec.write_text(original)
    fresh = subprocess.run([sys.executable, "-c", "import jax; print(bool(jax.config.jax_enable_x64))"],
                           env={**os.environ, "JAX_ENABLE_X64": "1"}, capture_output=True, text=True, check=False).stdout.strip()
    assert fresh == "True"  # what a kernel started afresh, or forked from a new command's fork server, has
    assert x64_of(course, "second") == ("1", True), "the kernelspec's JAX_ENABLE_X64 did not reach JAX in the next run"


@pytest.mark.slow
def test_a_course_folder_replaced_between_runs_is_the_one_graded(one_worker, tmp_path):
    """A kept grading process works in the folder it was started in. A course whose nbgrader_config.py
    names no ``CourseDirectory.root`` (nbgrader's default: the working folder; the repository's own
    shim names none), replaced by another folder at the same path between runs (restored from a
    backup, swapped by two renames), must get a new grading process, not the old folder's."""
    import shutil

    course = scratch.prepare_course(tmp_path / "course")
    config = course.root / "nbgrader_config.py"
    config.write_text("".join(line for line in config.read_text().splitlines(keepends=True)
                              if not line.startswith("c.CourseDirectory.root")))
    scratch.generate(course, [ASSIGNMENT])
    scratch.place_submission(course, "s1", ASSIGNMENT, notebooks.SAMPLES / ASSIGNMENT / "correct.ipynb")
    code, lines = run(course.root, one_worker)
    assert code == 0, "\n".join(lines)
    assert points(lines) == {"s1": (6.0, 6.0)}
    (worker,) = one_worker.worker_pids().values()
    kept = set(graders_of(worker))
    shutil.copytree(course.root, tmp_path / "course.new", symlinks=True)
    # In the new folder, s1 handed in the empty notebook instead (a resubmission restored, say).
    scratch.place_submission(scratch.ScratchCourse(tmp_path / "course.new", None), "s1", ASSIGNMENT,
                             notebooks.SAMPLES / ASSIGNMENT / "empty.ipynb")
    os.rename(course.root, tmp_path / "course.old")
    os.rename(tmp_path / "course.new", course.root)
    code, lines = run(course.root, one_worker, "--force")
    assert code == 0, "\n".join(lines)
    assert not kept & set(graders_of(worker)), "the replaced folder's grading process served the new one"
    assert points(lines) == {"s1": (0.0, 6.0)}, "the second run graded the course folder that was replaced"


#: Run by another local user against each of the cluster's ports, over plain tcp, over TLS showing no
#: certificate, and over TLS showing a certificate of an authority of its own making: on the scheduler,
#: Dask's own ``Client.run``; on a worker or a nanny, its ``run`` handler (what ``client.run`` asks of
#: it). What happened printed as one JSON line.
INTRUDE = r"""
import asyncio, json, os, ssl, sys, tempfile
from distributed import Client
from distributed.core import rpc
from distributed.protocol.pickle import dumps
from distributed.security import Security
from autograder.tools.parallel import clusterkeys

class Intruder(Security):
    def __init__(self, keys=None):
        super().__init__()
        self.keys = keys
    def get_connection_args(self, role):
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # trusts any server
        if self.keys:
            ctx.load_cert_chain(self.keys.cert, self.keys.key)
        return {"ssl_context": ctx, "require_encryption": False, "extra_conn_args": {}}

async def direct(target, security):
    args = security.get_connection_args("client") if security else {}
    async with rpc(target, connection_args=args, timeout=5) as server:
        return (await server.run(function=dumps(os.getuid)))["result"]

scheduler, *others = sys.argv[1:]
own = clusterkeys.make_keys(tempfile.mkdtemp() + "/keys")
found = {}
for address in sys.argv[1:]:
    for how, target, security in (("tcp", address.replace("tls://", "tcp://"), None),
                                  ("tls without a certificate", address, Intruder()),
                                  ("tls with its own authority", address, Intruder(own))):
        try:
            if address == scheduler:
                with Client(target, timeout=5, set_as_default=False, security=security) as client:
                    ran = sorted(set(client.run(os.getuid).values()))
            else:
                ran = asyncio.run(direct(target, security))
            found[f"{address} {how}"] = f"RAN as uid {ran}"
        except Exception as error:
            found[f"{address} {how}"] = type(error).__name__
print("INTRUDER " + json.dumps({"uid": os.getuid(), "found": found}))
"""


@pytest.mark.slow
def test_no_local_user_without_the_course_key_runs_code_on_the_cluster(one_worker):
    """Red team (issue 51): the recipe's scheduler and workers listened on 127.0.0.1 with plain tcp, and a
    plain user's ``client.run`` ran as root on the worker and the scheduler. Another local user tries
    every port of the cluster (scheduler, worker, nanny) with Dask's own client, over tcp and over TLS
    with no certificate or one of its own; none connects. The key's holder still runs the cluster."""
    python = plain_python()
    if python is None:
        pytest.skip("no Python of this version another user can run")
    with one_worker.client() as client:
        workers = client.scheduler_info(n_workers=-1)["workers"]
    ports = [one_worker.address, *workers, *(w["nanny"] for w in workers.values())]
    assert len(ports) == 3 and all(p.startswith("tls://") for p in ports), ports
    import sysconfig

    path = f"{sysconfig.get_paths()['purelib']}:{REPO}"
    intruder = as_intruder([f"PYTHONPATH={path}", python, "-c", INTRUDE, *ports])
    out, _ = intruder.communicate(timeout=240)
    line = next((line for line in out.splitlines() if line.startswith("INTRUDER ")), None)
    assert line is not None, out[-3000:]
    report = json.loads(line.split(" ", 1)[1])
    assert report["uid"] != os.geteuid() and len(report["found"]) == 9, report
    ran = {attempt: what for attempt, what in report["found"].items() if what.startswith("RAN")}
    assert ran == {}, f"{INTRUDER} ran code on the cluster: {ran}"
    with one_worker.client() as client:  # the key's holder still runs code there: the attempts were not vacuous
        assert client.run(os.geteuid) == {address: os.geteuid() for address in workers}


#: Run by another local user against each HTTP port of the cluster: what each page answered.
BROWSE = r"""
import json, sys, urllib.error, urllib.request
found = {}
for port in sys.argv[1:]:
    for page in ("/info/main/workers.html", "/info/main/logs.html", "/info/main/exceptions.html",
                 "/json/identity.json", "/health", "/metrics"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=5) as answer:
                found[f"{port}{page}"] = f"SERVED {answer.status}: {answer.read(200)!r}"
        except urllib.error.HTTPError as error:
            found[f"{port}{page}"] = f"HTTP {error.code}"
        except OSError as error:
            found[f"{port}{page}"] = type(error).__name__
print("BROWSER " + json.dumps(found))
"""


@pytest.mark.slow
def test_no_local_user_reads_the_clusters_http_pages(one_worker):
    """Red team (issue 51, second pass): ``--no-dashboard`` turns off only the dashboard. The scheduler
    still served, on every interface (0.0.0.0:8787), with no TLS or login, its workers, every task's key
    (the students being graded), its and the workers' logs, the tasks' exceptions and the workers' call
    stacks; each worker its metrics. Another local user asks every HTTP port of the cluster for them:
    nothing is served, and none of the ports listens beyond 127.0.0.1."""
    python = plain_python()
    if python is None:
        pytest.skip("no Python of this version another user can run")
    with one_worker.client() as client:
        info = client.scheduler_info(n_workers=-1)
    ports = [info["services"]["dashboard"], *(w["services"]["dashboard"] for w in info["workers"].values())]
    assert len(ports) == 2, info
    intruder = as_intruder([python, "-I", "-c", BROWSE, *map(str, ports)])
    out, _ = intruder.communicate(timeout=120)
    line = next((line for line in out.splitlines() if line.startswith("BROWSER ")), None)
    assert line is not None, out[-3000:]
    served = {page: what for page, what in json.loads(line.split(" ", 1)[1]).items() if not what.startswith("HTTP 404")}
    assert served == {}, f"{INTRUDER} read the cluster's pages: {served}"
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) in ports:
                listening.add(local.rsplit(":", 1)[0])
    assert listening and listening <= {"0100007F"}, f"the cluster's HTTP ports listen beyond 127.0.0.1: {listening}"
