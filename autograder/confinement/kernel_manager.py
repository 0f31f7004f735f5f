"""The kernel manager nbgrader grades with: every kernel confined, nothing left behind.

In nbgrader's process. :class:`ConfinedKernelManager` starts each kernel through
:mod:`autograder.confinement.jail` (a private view of the machine, a cgroup, a user of its
own) and, when the kernel is gone, kills whatever the notebook started that is
still running (processes of that user, members of that cgroup), so a daemon a
notebook forks cannot outlive its grading. Its client (:class:`ReadyKernelClient`)
starts executing as soon as the kernel has answered.

Kernels are forks of a server that imported ipykernel, JAX and the graders once
(:mod:`autograder.confinement.forkserver`; nbgrader runs its client,
:mod:`autograder.confinement.forkclient`, as the kernel's process). The same jail is
built in each fork. Where the server cannot start, or with
``c.ConfinedKernelManager.fork_server = False``, each kernel is started afresh through
the jail instead, with a line in nbgrader's log saying why.

A confined kernel has a network namespace of its own, so nbgrader reaches it over ZMQ
``ipc://`` sockets (``transport = "ipc"``), files in a folder made for that kernel alone
(:func:`sockets_folder`: under a folder of this process's in ``/tmp``, which every kernel's
private ``/tmp`` hides, and bound back into that one kernel's view, owned by its user); the
judge's socket for each grade cell is a file there too
(:class:`autograder.grading.judge.Session`). The folder goes with the kernel.

Which jail (:func:`jail_mode`, asked once per process): as root, :mod:`~autograder.confinement.jail`;
without root (an instructor on a shared server or a laptop), the rootless jail
:mod:`~autograder.confinement.userns`, the same view built in user, mount, pid, network and IPC
namespaces of the instructor's own; both for kernels started afresh and forked ones. nbgrader's
log says once how kernels start and why (:meth:`ConfinedKernelManager.announce`).

What a kernel holds of nbgrader's: no terminal, nor any descriptor but those it is given. Every
kernel, confined or not, forked or fresh, starts with ``/dev/null`` as its standard input and,
as its standard output and error, a pipe of this process's own (:class:`KernelStreams`), never
nbgrader's own streams (a terminal, when run in one: ipykernel keeps copies of the streams it
started with, and a cell could write to that terminal and read what the instructor types). What
arrives on that pipe (a kernel that cannot start says why there) goes into nbgrader's log, each
line with its control characters escaped, at most :data:`STREAM_LINES` lines per kernel. Both
jails close every other descriptor, give the kernel a session of its own (no controlling
terminal), and hide every terminal device from it.

Where neither can work (not Linux, no user namespaces), no kernel starts: the first one stops the
command (:class:`ConfinementUnavailable`), before any notebook is graded, with the reason and
what to do. Only with ``c.ConfinedKernelManager.allow_unconfined = True`` do kernels then start
as nbgrader starts them (ZMQ on loopback TCP; the sandbox applies the limits it can), and the
command says so on screen as it starts grading and as it ends.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import shutil
import signal
import tempfile
import subprocess
import sys
import re
import threading
import time
from pathlib import Path

from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async
from nbgrader.coursedir import CourseDirectory
from traitlets import Bool, DottedObjectName, List, Type, Unicode

from autograder.confinement import environment, forkserver
from autograder.confinement import jail as _jail
from autograder.confinement import userns as _userns
from autograder.confinement import copies
from autograder.grading import backend, compile_cache, compiler
from autograder.confinement.leftovers import private_folder


_JAIL = Path(_jail.__file__).resolve()
_USERNS = Path(_userns.__file__).resolve()
SAFE_PATH = "PYTHONSAFEPATH"
_FORKCLIENT = Path(forkserver.forkclient.__file__).resolve()
_server: forkserver.Server | forkserver.Attached | None = None  # the fork server, once started or attached
_no_server: str | None = None  # why there is none, once it failed
_server_started_for: dict[str, str] | None = None  # the kernels' environment (:func:`_server_env`) it serves
_announced = False  # whether this process said how its kernels start


#: The two jails, by :func:`jail_mode`'s names.
ROOT, ROOTLESS = "root", "rootless"
#: Which jails to try, in nbgrader's environment: ``root,rootless`` (the default), one of them, or
#: ``none``. It can only take jails away (the tests use it to grade as if no jail could be built);
#: without ``allow_unconfined`` a command with no jail left still stops.
JAILS_ENV = "AUTOGRADER_JAILS"


def _probe(script: Path) -> str | None:
    probe = subprocess.run([sys.executable, str(script), "--probe"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return probe.stderr.strip() or f"exit code {probe.returncode}"
    return None


@functools.lru_cache(maxsize=1)
def _jails() -> tuple[str | None, str]:
    """(the jail kernels start in here, or None; why each one that cannot be used cannot)."""
    if sys.platform != "linux":
        return None, f"the jail needs Linux, not {sys.platform}"
    reasons = []
    wanted = {name.strip() for name in os.environ.get(JAILS_ENV, f"{ROOT},{ROOTLESS}").split(",")}
    if wanted.isdisjoint({ROOT, ROOTLESS}):
        return None, f"{JAILS_ENV}={os.environ.get(JAILS_ENV)} names no jail"
    if os.geteuid() == 0 and ROOT in wanted:
        why = _probe(_JAIL)
        if why is None:
            world_writable()  # now, once: a process that forks grading workers after asking walks for them all
            return ROOT, ""
        reasons.append(f"the root jail: {why}")
    why = _probe(_USERNS) if ROOTLESS in wanted else f"not tried ({JAILS_ENV})"
    if why is None:
        world_writable()
        return ROOTLESS, "; ".join(reasons)
    reasons.append(f"the rootless jail (user namespaces): {why}")
    return None, "; ".join(reasons)


def jail_mode() -> str | None:
    """:data:`ROOT` (nbgrader runs as root: :mod:`~autograder.confinement.jail`), :data:`ROOTLESS`
    (:mod:`~autograder.confinement.userns`) or None (neither works here). Asked once per process."""
    return _jails()[0]


def why_not_confined() -> str | None:
    """None if kernels can start in a jail here, else the reason (asked once per process)."""
    mode, why = _jails()
    return None if mode else why


def can_confine() -> bool:
    return why_not_confined() is None


class ConfinementUnavailable(SystemExit):
    """No jail can be built here and unconfined grading was not asked for: the command stops.

    A SystemExit, so that nbgrader's per-notebook ``except Exception`` does not swallow it and go
    on to the next student: the first kernel's start ends the command, before any grading."""


def refusal(why: str) -> str:
    """What the command says when it stops for want of a jail: why, and how to proceed."""
    return (
        f"autograder: grading stopped before any notebook ran: grading kernels cannot be confined here ({why}). "
        "An unconfined notebook can read other students' work and the solutions, rewrite the gradebook and the "
        "course's files, and leave processes running. To proceed, grade on Linux with unprivileged user namespaces "
        "(as a plain user: sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 or "
        "kernel.apparmor_restrict_unprivileged_userns=0 where those exist) or as root; or, only for notebooks you "
        "trust, grade unconfined by adding to nbgrader_config.py:  "
        "c.ConfinedKernelManager.allow_unconfined = True . Then run the command again with --force: nbgrader "
        "copied the first submission into autograded/ before it stopped, and skips it otherwise."
    )


def jail_description(mode: str) -> str:
    """Which jail kernels start in, and why that one, in words for a log or a screen."""
    if mode == ROOT:
        return "the root jail (autograder/confinement/jail.py: nbgrader runs as root)"
    return ("the rootless jail (autograder/confinement/userns.py: user, mount, pid, network and IPC "
            "namespaces, as nbgrader does not run as root)")


def confinement_on_screen(allow_unconfined: bool) -> dict[str, str]:
    """What a command grading through worker processes says of their kernels, asked where those
    kernels run: ``{"refusal": ...}`` when no jail can be built and unconfined grading was not
    allowed (the command stops), ``{"unconfined": ...}`` when it was (said at start and end),
    else ``{"jail": ...}``."""
    mode = jail_mode()
    if mode is not None:
        return {"jail": jail_description(mode)}
    why = why_not_confined()
    return {"unconfined": unconfined_notice(why)} if allow_unconfined else {"refusal": refusal(why)}


def unconfined_notice(why: str | None) -> str:
    """The line every command grading unconfined prints as it starts grading and as it ends."""
    return (f"autograder: WARNING: grading kernels run UNCONFINED ({why}; "
            "c.ConfinedKernelManager.allow_unconfined = True): a notebook can read and change anything "
            "nbgrader's user can, other students' work and the gradebook included")


#: The operating system's top-level folders (programs, libraries, configuration, devices), which a
#: kernel may read; every other top-level folder is hidden from it but for the paths kept.
SYSTEM_FOLDERS = frozenset({
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "sys", "tmp", "usr", "var",
})


def outside_the_system() -> list[str]:
    """Every top-level folder that is not the operating system's: homes, ``/srv``, ``/opt``,
    ``/mnt``, a checkout under a folder of its own. Hidden whole, whatever they hold (a copy of the
    grading package that no path names, say), with the kept paths inside put back."""
    return sorted(entry.path for entry in os.scandir("/")
                  if entry.is_dir(follow_symlinks=False) and entry.name not in SYSTEM_FOLDERS)


#: Mounts never walked for world-writable folders: the kernel's views of processes and devices
#: are not files anyone leaves behind (and /proc, /sys are not disks).
_NOT_WALKED = ("/proc", "/sys")


def _mounts() -> list[tuple[str, list[str]]]:
    """Each mount of this process's view: its mount point and its options (``/proc/self/mountinfo``)."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
        for line in table:
            fields = line.split(" - ", 1)[0].split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])  # \040 is a space
            found.append((point, fields[5].split(",")))
    return found


@functools.lru_cache(maxsize=1)
def world_writable() -> tuple[str, ...]:
    """Every folder of the machine anyone may write in (``o+w``: ``/tmp``, ``/var/tmp``,
    ``/run/lock``, ``/dev/shm``, a spool, an exchange's inbound...), the outermost of each tree.

    Found, not listed: every writable mount of ``/proc/self/mountinfo`` but ``/proc`` and ``/sys``
    is walked (never into another mount, nor into a folder every kernel has hidden anyway: the
    top-level folders outside the system's, this home). The jail puts a fresh tmpfs over each
    (``--private``), so a file one kernel leaves there is gone with it, and no two kernels share
    one. Walked once per process (a second or so); a process that forks grading workers after
    :func:`why_not_confined` walked it for all of them."""
    pruned = {*_NOT_WALKED, *outside_the_system(), str(Path.home())}
    found: set[str] = set()

    def covered(path: str) -> bool:
        return any(_jail._within(path, folder) for folder in pruned)

    for point, options in _mounts():
        if "ro" in options or covered(point):
            continue
        try:
            top = os.stat(point)
        except OSError:
            continue
        if top.st_mode & 0o002:
            found.add(point)
            continue
        stack = [point]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False) or entry.path in pruned:
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_dev != top.st_dev:
                    continue  # another mount: walked as its own
                if info.st_mode & 0o002:
                    found.add(entry.path)  # what lies inside is under the tmpfs over it
                else:
                    stack.append(entry.path)
    return tuple(sorted(path for path in found if not any(path != other and _jail._within(path, other)
                                                          for other in found)))


def private_paths(hide: list[str]) -> list[str]:
    """The world-writable folders a kernel gets a private tmpfs over: all but those inside a
    folder it has hidden already (and :data:`~autograder.confinement.jail.SCRATCH`, always private)."""
    return [path for path in world_writable()
            if path not in _jail.SCRATCH and not any(_jail._within(path, folder) for folder in hide)]


#: Where this process makes each confined kernel's folder of sockets: (its pid, the folder).
_sockets_root: tuple[int, str] | None = None
#: The base of that folder: ``/tmp`` is private in every kernel, so no kernel sees what is made here.
SOCKETS_BASE = "/tmp"


def _sockets_root_folder() -> str:
    """This process's folder of kernels' sockets (0700, root's), made on first use, removed at exit
    (or, should this process be killed, by a later one: :mod:`autograder.confinement.leftovers`). A worker
    forked from the process that made one makes its own."""
    global _sockets_root
    if _sockets_root is None or _sockets_root[0] != os.getpid():
        _sockets_root = (os.getpid(), private_folder("kernels", SOCKETS_BASE))
    return _sockets_root[1]


def sockets_folder() -> str:
    """A fresh folder for one kernel's sockets (its ZMQ ones, each grade cell's judge), in
    :func:`_sockets_root_folder`; the jail gives it to the kernel's user and binds it back."""
    return tempfile.mkdtemp(prefix="k-", dir=_sockets_root_folder())


#: System folders a kernel must not see: where the machine's services keep their sockets (a
#: PostgreSQL gradebook's, D-Bus, the instructor's session bus and agents). A network namespace of
#: the kernel's own does not cover a socket bound to a file.
SOCKET_FOLDERS = ("/run",)


def hidden_paths(config) -> list[str]:
    """What a kernel must not see: every top-level folder outside the system's; the system's
    :data:`SOCKET_FOLDERS`; the course, the exchange and this home wherever they are; every copy
    of the grading package but the one the kernel imports, and every repository around a copy."""
    hide = [*outside_the_system(), *SOCKET_FOLDERS, str(Path.home())]
    course_root = None
    with contextlib.suppress(Exception):
        course_root = CourseDirectory(config=config).root
        hide.append(course_root)
    exchange = config.get("Exchange", {}).get("root") if config else None
    if not exchange:  # nbgrader's own default
        from nbgrader.exchange.default.exchange import Exchange

        exchange = Exchange.class_traits()["root"].default()
    hide.append(str(exchange))
    hide.extend(copies.to_hide(course_root))
    return [os.path.realpath(path) for path in hide]


def kept_paths(connection_file: str, compiled: str | None = None) -> list[str]:
    """What a kernel needs to start and to grade: Python, its packages, the grading package it
    imports (:func:`~autograder.confinement.copies.kernel_copy`), its connection file, and the
    compile cache it reads (``compiled``, :func:`~autograder.grading.compile_cache.kernel_folder`)."""
    keep = {sys.base_prefix, sys.prefix, sys.exec_prefix, str(copies.kernel_copy()), connection_file}
    if compiled is not None:
        keep.add(compiled)
    here = os.getcwd()
    keep.update(p for p in sys.path if p and os.path.abspath(p) != here and os.path.exists(p))
    return sorted(os.path.realpath(path) for path in keep)


def _environment_of(python: str) -> tuple[str, str]:
    """An interpreter's identity: the program it runs and its virtual environment (two venvs of
    one Python resolve to the same program, but import different packages)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    venv = root if os.path.isfile(os.path.join(root, "pyvenv.cfg")) else ""
    return os.path.realpath(python), venv


def _is_this_python(program: str, env: dict[str, str] | None = None) -> bool:
    """Whether ``program`` (a path, or a name such as ``python3`` looked up on the kernel's PATH)
    is this process's interpreter, in this process's environment."""
    if os.sep not in program:
        found = shutil.which(program, path=(env or os.environ).get("PATH"))
        if found is None:
            return False
        program = found
    return _environment_of(program) == _environment_of(sys.executable)


def why_not_forkable(cmd: list[str], env: dict[str, str] | None = None) -> str | None:
    """None if the fork server can run the kernel's command (this Python's ipykernel, as a
    kernelspec of ipykernel's wheel or of ``python -m ipykernel install`` says it), else why."""
    if len(cmd) < 3 or forkserver.kernel_arguments(cmd) is None:
        return (f"the kernelspec's command is not 'python [-Xfrozen_modules=off] -m ipykernel_launcher': "
                f"{' '.join(cmd[:4])}")
    if not _is_this_python(cmd[0], env):
        return f"the kernelspec's Python ({cmd[0]}) is not nbgrader's ({sys.executable})"
    return None


def _forkable(cmd: list[str], env: dict[str, str] | None = None) -> bool:
    """Whether the kernel's command is this Python's ipykernel, which the fork server runs."""
    return why_not_forkable(cmd, env) is None


def members(pid: int) -> set[int]:
    """Processes a kernel left: those of its user, and those still in its cgroup."""
    uid = str(_jail.kernel_uid(pid))
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, StopIteration):
                # The real uid, from status: the owner of /proc/<pid> is the effective uid, and
                # root's for a process the kernel made non-dumpable.
                status = (entry / "status").read_text()
                if next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1] == uid:
                    found.add(int(entry.name))
    for group in _jail.pids_groups(pid):
        with contextlib.suppress(OSError):
            found.update(int(p) for p in (group / "cgroup.procs").read_text().split())
    found.discard(os.getpid())
    return found


def pauses(longest: float):
    """How long to wait before looking again whether a killed process has gone: 1 ms, then twice as
    long each time, never longer than ``longest``. A killed process is gone once its parent has
    reaped it, a few milliseconds later (a fixed wait of 50 or 100 ms was most of a notebook's
    kernel shutdown)."""
    pause = 0.001
    while True:
        yield pause
        pause = min(2 * pause, longest)


def kill_leftovers(pid: int) -> int:
    """SIGKILL everything ``pid``'s notebook left running, then drop its cgroup; how many were killed."""
    killed, deadline = 0, time.monotonic() + 1.0
    for attempt, pause in enumerate(pauses(0.05)):  # again until none is left: a process may fork while we look
        alive = members(pid)
        if not alive or (attempt >= 20 and time.monotonic() > deadline):  # a second, 20 looks at least
            break
        for member in alive:
            with contextlib.suppress(OSError):
                os.kill(member, signal.SIGKILL)
                killed += 1
        time.sleep(pause)
    for group in _jail.pids_groups(pid):
        with contextlib.suppress(OSError):
            group.rmdir()
    return killed


def _server_env(env: dict[str, str]) -> dict[str, str]:
    """What of a kernel's environment its fork server imported with: all but what each kernel gets
    on its own (the compile cache's folder, which a kernel reads at its start)."""
    return {k: v for k, v in env.items() if k != compile_cache.FOLDER_ENV}


def fork_server(cmd: list[str], env: dict[str, str], log):
    """The fork server for kernels of command ``cmd``: the one named in
    :data:`~autograder.confinement.forkserver.SHARED_ENV` (the parallel command's), else this
    process's own, started on first use; None (said once in the log) if it cannot serve them."""
    global _server, _no_server, _server_started_for
    if _no_server is None and not _forkable(cmd, env):
        _no_server = why_not_forkable(cmd, env)
        log.warning("autograder: no fork server (%s); kernels start afresh through the jail", _no_server)
    if _server is not None and not _server.running():
        _no_server, _server = _server.ended(), None
        log.warning("autograder: %s; kernels start afresh through the jail from now on", _no_server)
    if isinstance(_server, forkserver.Server) and _server_started_for != _server_env(env):
        # Another run's kernels (a kept Dask grading process, its kernelspec changed since): what the
        # server imported was set up with the first run's environment (JAX reads its flags on import).
        log.info("autograder: the kernels' environment changed; a new fork server starts")
        _server.close()
        _server = None
    if _server is None and _no_server is None:
        shared = os.environ.get(forkserver.SHARED_ENV)
        try:
            _server = forkserver.Attached(shared) if shared else forkserver.Server(env)
            _server_started_for = _server_env(env)
        except (OSError, RuntimeError) as error:
            _no_server = str(error)
            log.warning("autograder: no fork server (%s); kernels start afresh through the jail", error)
    return _server


#: Lines of one kernel's own standard output and error (what it writes outside any cell: a
#: kernel that cannot start says why there) that reach nbgrader's log; the rest are counted.
STREAM_LINES = 100
#: Characters of one such line that are shown.
STREAM_LINE_CHARS = 2000


def printable(text: str) -> str:
    """``text`` with every character that is not printable (escape sequences, carriage returns,
    bidirectional overrides) written as its escape: nothing a kernel writes moves the cursor,
    retitles the instructor's terminal or rewrites a line already shown."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class KernelStreams:
    """The standard output and error of one kernel: a pipe of nbgrader's process, read by a
    thread that puts each line into nbgrader's log (:func:`printable`, at most
    :data:`STREAM_LINES` lines); always read to its end, so a kernel never blocks writing."""

    def __init__(self, log):
        self.log = log
        self.read_end, self.write_end = os.pipe()  # both close-on-exec: Popen puts write_end on 1 and 2
        self.thread = threading.Thread(target=self._relay, name="autograder-kernel-streams", daemon=True)
        self.thread.start()

    def launched(self) -> None:
        """The kernel has its copy: this process's goes, so the pipe ends when the kernel's side does."""
        if self.write_end is not None:
            os.close(self.write_end)
            self.write_end = None

    def close(self, wait: float = 1.0) -> None:
        self.launched()
        self.thread.join(wait)

    def _relay(self) -> None:
        counts = {"shown": 0, "cut": 0}

        def say(line: bytes) -> None:
            if counts["shown"] >= STREAM_LINES:
                counts["cut"] += 1
                return
            counts["shown"] += 1
            text = printable(line.decode("utf-8", "backslashreplace"))
            if len(text) > STREAM_LINE_CHARS:
                text = f"{text[:STREAM_LINE_CHARS]} ... ({len(text) - STREAM_LINE_CHARS} more characters)"
            self.log.warning("autograder: the grading kernel wrote: %s", text)

        pending = b""
        try:
            while chunk := os.read(self.read_end, 65536):
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > 4 * STREAM_LINE_CHARS:  # a line without end: shown (cut short) as one
                    lines.append(pending)
                    pending = b""
                for line in lines:
                    say(line)
            if pending:
                say(pending)
        except OSError:
            pass
        finally:
            os.close(self.read_end)
        if counts["cut"]:
            self.log.warning("autograder: the grading kernel wrote %d more lines, not shown", counts["cut"])


class ReadyKernelClient(AsyncKernelClient):
    """The kernel client nbgrader executes with, ready as soon as the kernel has answered.

    jupyter_client's ``wait_for_ready`` asks for ``kernel_info`` and, once answered, reads
    IOPub until it has been quiet for 0.2 s: a fifth of a second of nothing per notebook,
    half of a forked kernel's start. This one stops at the kernel's ``idle`` for the request
    it answered, which shows IOPub connected as well; a request whose ``idle`` is not heard
    within 0.2 s is asked again, as there. Whatever arrives later belongs to no cell: nbclient
    reads only the messages of its own requests.

    An ``idle`` published before this client's IOPub subscription reached the kernel is lost
    (ZeroMQ drops what a publisher sends before a subscriber joins): two of seven further forked
    kernels of one serial run here waited out the 0.2 s for it. ipykernel 7 says when a
    subscription arrives (an ``iopub_welcome``, JEP 65). Heard before the ``idle``, it leaves
    0.02 s for an ``idle`` published since (the reply is already here), then the request is asked
    again, its ``idle`` now sure to be heard. A kernel without welcomes waits the 0.2 s, as before.
    """

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await ensure_async(self.shell_channel.get_msg(timeout=1))
            except Empty:
                reply = None
            if reply and reply["msg_type"] == "kernel_info_reply" and await self._idle_after(reply):
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    #: Whether the kernel said it heard this client subscribe to IOPub (ipykernel 7 does).
    welcomed = False

    wait_for_ready = _async_wait_for_ready  # jupyter_client binds the name to its own at class creation

    async def _idle_after(self, reply: dict) -> bool:
        request, wait = reply["parent_header"].get("msg_id"), 0.2
        while True:
            try:
                message = await ensure_async(self.iopub_channel.get_msg(timeout=wait))
            except Empty:
                return False
            if (message["msg_type"] == "status" and message["content"].get("execution_state") == "idle"
                    and message["parent_header"].get("msg_id") == request):
                return True
            if message["msg_type"] == "iopub_welcome":  # subscribed only now: an idle published before is lost,
                self.welcomed, wait = True, 0.02        # one published after is moments away (its reply is here)


class ConfinedKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernels start inside :mod:`autograder.confinement.jail`,
    compiling as :mod:`autograder.grading.compiler` says."""

    fork_server = Bool(True, config=True, help="Fork kernels from a server that imported their modules once.")
    compile_cache = Bool(True, config=True, help=(
        "Let confined kernels read the programs the reference compiled (autograder/grading/compile_cache.py), "
        "read-only."))
    allow_unconfined = Bool(False, config=True, help=(
        "Grade with kernels unconfined where no jail can be built (not Linux, no user namespaces). "
        "Off by default: the command then stops before grading anyone. A notebook graded unconfined "
        "can read and change everything nbgrader's user can."))
    kernel_environment_names = List(Unicode(), config=True, help=(
        "Names of nbgrader's environment variables kernels keep, beside PATH, HOME, the language "
        "and the course's own (autograder/confinement/environment.py); NAME* keeps every name "
        "beginning NAME. Nothing else of the instructor's environment reaches a student's notebook."))
    jax_platforms = Unicode(backend.DEFAULT, config=True, help=(
        "Where grading computes: JAX_PLATFORMS for every grading kernel ('cpu', the default, whatever "
        "accelerator the host has; 'tpu', 'cuda', ...: that accelerator, the host's CPU listed after it for "
        "host callbacks; '' leaves JAX its own choice). The judge "
        "computes its expected values on the same platform and takes its tolerances from that platform's "
        "float32 precision (autograder/grading/backend.py, docs/accelerators.md)."))
    client_class = DottedObjectName(f"{__name__}.ReadyKernelClient", config=True)
    client_factory = Type(ReadyKernelClient, klass=AsyncKernelClient, config=True)
    #: The confined kernel's folder of sockets (:func:`sockets_folder`); None for a kernel unconfined.
    private_folder: str | None = None
    #: The running kernel's standard output and error (:class:`KernelStreams`).
    streams: KernelStreams | None = None
    #: The kernel (its client's process id) whose leftovers were killed last.
    _leftovers_killed: int | None = None

    async def _async_pre_start_kernel(self, **kw):
        self._leftovers_killed = None
        if not can_confine() and not self.allow_unconfined:
            message = refusal(why_not_confined())
            self.log.error(message)
            raise ConfinementUnavailable(message)
        if can_confine():
            # The kernel has no network of nbgrader's: its channels are sockets in its own folder.
            self._remove_private_folder()
            self.private_folder = sockets_folder()
            self.transport = "ipc"
            self.ip = os.path.join(self.private_folder, "kernel")
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        spec_env = self.kernel_spec.env if self.kernel_spec is not None else {}
        kw["env"] = compiler.kernel_environment(environment.kernel_environment(
            kw.get("env") or dict(os.environ), spec_env, self.kernel_environment_names))
        # Where the kernel computes, the course's choice; the judge in this process computes there too.
        kw["env"] = backend.kernel_env(kw["env"], self.jax_platforms)
        backend.choose(self.jax_platforms, self.log)
        kw["env"].pop(forkserver.SHARED_ENV, None)  # where the server listens is nothing for a kernel
        kw["env"].pop(compile_cache.FOLDER_ENV, None)  # set below, for a confined kernel alone
        # Nothing is imported from the notebook's folder, not even the sandbox: an `autograder/`
        # handed in beside the notebook would otherwise run in its place, as root. Python then puts
        # no working folder on sys.path, and IPython adds none (sys.flags.safe_path).
        kw["env"][SAFE_PATH] = "1"
        if not can_confine():
            self.announce(None, None)
            return cmd, self._given_streams(kw)
        cwd = kw.get("cwd") or os.getcwd()
        # The launcher starts outside the jail, as nbgrader's user: in the student's folder, an
        # empty entry of PYTHONPATH or a script's own folder on sys.path would import their files
        # there. It starts in / and isolated (-I -S: no environment variable, site or working
        # folder reaches its sys.path); the jail moves into the student's folder once built.
        kw["cwd"] = "/"
        hidden = hidden_paths(self.config)
        hide = [arg for path in hidden for arg in ("--hide", path)]
        cache = compile_cache.kernel_folder(self.log) if self.compile_cache else None
        if cache is not None:  # bound back read-only, as every kept path; only a confined kernel reads it
            kw["env"][compile_cache.FOLDER_ENV] = cache
        keep = [arg for path in kept_paths(self.connection_file, cache) for arg in ("--keep", path)]
        private = [arg for path in private_paths(hidden) for arg in ("--private", path)]
        jail_arguments = ["--cwd", str(cwd), *hide, *keep, *private, "--sockets", self.private_folder, "--", *cmd]
        server = fork_server(cmd, kw["env"], self.log) if self.fork_server else None
        if jail_mode() == ROOTLESS and os.geteuid() == 0:
            server = None  # root whose root jail failed: a fork server as root would build that one
        self.announce(cmd, server)
        if server is not None:
            launcher = [sys.executable, "-I", "-S", str(_FORKCLIENT), "--socket", server.path]
        else:
            launcher = [sys.executable, "-I", "-S", str(_JAIL if jail_mode() == ROOT else _USERNS)]
        return [*launcher, *jail_arguments], self._given_streams(kw)

    def _given_streams(self, kw: dict) -> dict:
        """Nothing of nbgrader's own streams (its terminal, when run in one): ``/dev/null`` as the
        kernel's input, a pipe of ours (:class:`KernelStreams`) as its output and error. Popen
        closes every other descriptor of nbgrader's; the jail closes anything else."""
        self._close_streams()
        self.streams = KernelStreams(self.log)
        return {**kw, "stdin": subprocess.DEVNULL, "stdout": self.streams.write_end, "stderr": self.streams.write_end}

    def announce(self, cmd: list[str] | None, server) -> None:
        """Say once per process, in nbgrader's log, how grading kernels start and why; when they run
        unconfined, on screen as well, now and as the process ends."""
        global _announced
        if _announced:
            return
        _announced = True
        mode = jail_mode()
        if mode is None:
            notice = unconfined_notice(why_not_confined())
            self.log.warning(notice)
            print(notice, file=sys.stderr, flush=True)
            atexit.register(print, notice, file=sys.stderr, flush=True)
            return
        where = jail_description(mode)
        if server is not None:
            how = "forked from a fork server that imported ipykernel, JAX and the graders once"
        elif not self.fork_server:
            how = "started afresh (c.ConfinedKernelManager.fork_server = False)"
        else:
            how = f"started afresh ({_no_server or 'root whose root jail failed: no fork server'})"
        self.log.info("autograder: grading kernels start in %s, %s; the kernelspec runs: %s",
                      where, how, " ".join(cmd or []))

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            if self.streams is not None:
                self.streams.launched()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        pid = getattr(self.provisioner, "pid", None)
        await super()._async_cleanup_resources(restart=restart)
        if pid and pid != self._leftovers_killed and can_confine():  # nbclient cleans up after a shutdown too
            kill_leftovers(pid)
            self._leftovers_killed = pid
        self._remove_private_folder()
        self._close_streams()

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Until the kill's process has gone. jupyter_client looks every ``pollinterval`` (0.1 s),
        so every notebook's kernel, killed once its last cell ran, cost a tenth of a second of
        nothing; this looks again after each of :func:`pauses`."""
        for pause in pauses(pollinterval):
            if not await self._async_is_alive():
                return
            await asyncio.sleep(pause)

    # What nbclient calls alone once the kernel has died (it shuts down only a live one). jupyter_client's
    # AsyncKernelManager binds this name to its own base's coroutine, which would skip the lines above:
    # whatever a dead kernel left running would live on, writing into nbgrader's log.
    cleanup_resources = _async_cleanup_resources

    def _close_streams(self) -> None:
        """Hear the last of the kernel's streams (its processes are gone: the pipe has ended)."""
        if self.streams is not None:
            self.streams.close()
            self.streams = None

    def _remove_private_folder(self) -> None:
        if self.private_folder is not None:
            shutil.rmtree(self.private_folder, ignore_errors=True)
            self.private_folder = None

    def exit_description(self) -> str:
        """How the kernel ended, in words ('exit code 3', 'killed by SIGSEGV'), if it has."""
        process = getattr(self.provisioner, "process", None)
        code = process.poll() if process is not None else None
        if code is None:
            return "it stopped answering"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"
