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

Where confinement cannot work (not Linux, not root, no mount namespaces), kernels
start as nbgrader starts them, with a warning in nbgrader's log; the sandbox still
applies the limits it can.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async
from nbgrader.coursedir import CourseDirectory
from traitlets import Bool, DottedObjectName, Type

from autograder.confinement import forkserver
from autograder.confinement import jail as _jail
from autograder.confinement import copies
from autograder.grading import compiler


_JAIL = Path(_jail.__file__).resolve()
SAFE_PATH = "PYTHONSAFEPATH"
_FORKCLIENT = Path(forkserver.forkclient.__file__).resolve()
_server: forkserver.Server | forkserver.Attached | None = None  # the fork server, once started or attached
_no_server: str | None = None  # why there is none, once it failed


@functools.lru_cache(maxsize=1)
def why_not_confined() -> str | None:
    """None if kernels can start in the jail here, else the reason (asked once per process)."""
    if sys.platform != "linux":
        return f"the jail needs Linux, not {sys.platform}"
    probe = subprocess.run([sys.executable, str(_JAIL), "--probe"], capture_output=True, text=True, check=False)
    return None if probe.returncode == 0 else probe.stderr.strip() or f"exit code {probe.returncode}"


def can_confine() -> bool:
    return why_not_confined() is None


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


def hidden_paths(config) -> list[str]:
    """What a kernel must not see: every top-level folder outside the system's; the course,
    the exchange and this home wherever they are; every copy of the grading package but the one
    the kernel imports, and every repository around a copy."""
    hide = [*outside_the_system(), str(Path.home())]
    course_root = None
    with contextlib.suppress(Exception):
        course_root = CourseDirectory(config=config).root
        hide.append(course_root)
    exchange = config.get("Exchange", {}).get("root") if config else None
    hide.append(str(exchange or "/srv/nbgrader/exchange"))
    hide.extend(copies.to_hide(course_root))
    return [os.path.realpath(path) for path in hide]


def kept_paths(connection_file: str) -> list[str]:
    """What a kernel needs to start and to grade: Python, its packages, the grading package it
    imports (:func:`~autograder.confinement.copies.kernel_copy`), its connection file."""
    keep = {sys.base_prefix, sys.prefix, sys.exec_prefix, str(copies.kernel_copy()), connection_file}
    here = os.getcwd()
    keep.update(p for p in sys.path if p and os.path.abspath(p) != here and os.path.exists(p))
    return sorted(os.path.realpath(path) for path in keep)


def _forkable(cmd: list[str]) -> bool:
    """Whether the kernel's command is this Python's ipykernel, which the fork server runs."""
    return (len(cmd) > 3 and cmd[1:3] == forkserver.KERNEL_MODULE
            and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable))


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


def kill_leftovers(pid: int) -> int:
    """SIGKILL everything ``pid``'s notebook left running, then drop its cgroup; how many were killed."""
    killed = 0
    for _ in range(20):  # a process may fork while we look
        alive = members(pid)
        if not alive:
            break
        for member in alive:
            with contextlib.suppress(OSError):
                os.kill(member, signal.SIGKILL)
                killed += 1
        time.sleep(0.05)
    for group in _jail.pids_groups(pid):
        with contextlib.suppress(OSError):
            group.rmdir()
    return killed


def fork_server(cmd: list[str], env: dict[str, str], log):
    """The fork server for kernels of command ``cmd``: the one named in
    :data:`~autograder.confinement.forkserver.SHARED_ENV` (the parallel command's), else this
    process's own, started on first use; None (said once in the log) if it cannot serve them."""
    global _server, _no_server
    if _no_server is None and not _forkable(cmd):
        _no_server = f"the kernel's command is not this Python's ipykernel: {' '.join(cmd[:3])}"
        log.warning("autograder: no fork server (%s); kernels start afresh through the jail", _no_server)
    if _server is not None and not _server.running():
        _no_server, _server = _server.ended(), None
        log.warning("autograder: %s; kernels start afresh through the jail from now on", _no_server)
    if _server is None and _no_server is None:
        shared = os.environ.get(forkserver.SHARED_ENV)
        try:
            _server = forkserver.Attached(shared) if shared else forkserver.Server(env)
        except (OSError, RuntimeError) as error:
            _no_server = str(error)
            log.warning("autograder: no fork server (%s); kernels start afresh through the jail", error)
    return _server


class ReadyKernelClient(AsyncKernelClient):
    """The kernel client nbgrader executes with, ready as soon as the kernel has answered.

    jupyter_client's ``wait_for_ready`` asks for ``kernel_info`` and, once answered, reads
    IOPub until it has been quiet for 0.2 s: a fifth of a second of nothing per notebook,
    half of a forked kernel's start. This one stops at the kernel's ``idle`` for the request
    it answered, which shows IOPub connected as well; a request whose ``idle`` is not heard
    within 0.2 s is asked again, as there. Whatever arrives later belongs to no cell: nbclient
    reads only the messages of its own requests.
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

    wait_for_ready = _async_wait_for_ready  # jupyter_client binds the name to its own at class creation

    async def _idle_after(self, reply: dict) -> bool:
        request = reply["parent_header"].get("msg_id")
        while True:
            try:
                message = await ensure_async(self.iopub_channel.get_msg(timeout=0.2))
            except Empty:
                return False
            if (message["msg_type"] == "status" and message["content"].get("execution_state") == "idle"
                    and message["parent_header"].get("msg_id") == request):
                return True


class ConfinedKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernels start inside :mod:`autograder.confinement.jail`,
    compiling as :mod:`autograder.grading.compiler` says."""

    fork_server = Bool(True, config=True, help="Fork kernels from a server that imported their modules once.")
    client_class = DottedObjectName(f"{__name__}.ReadyKernelClient", config=True)
    client_factory = Type(ReadyKernelClient, klass=AsyncKernelClient, config=True)

    async def _async_pre_start_kernel(self, **kw):
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        kw["env"] = compiler.kernel_environment(kw.get("env") or dict(os.environ))
        kw["env"].pop(forkserver.SHARED_ENV, None)  # where the server listens is nothing for a kernel
        # Nothing is imported from the notebook's folder, not even the sandbox: an `autograder/`
        # handed in beside the notebook would otherwise run in its place, as root. Python then puts
        # no working folder on sys.path, and IPython adds none (sys.flags.safe_path).
        kw["env"][SAFE_PATH] = "1"
        if not can_confine():
            self.log.warning("autograder: grading kernels run unconfined: %s", why_not_confined())
            return cmd, kw
        cwd = kw.get("cwd") or os.getcwd()
        hide = [arg for path in hidden_paths(self.config) for arg in ("--hide", path)]
        keep = [arg for path in kept_paths(self.connection_file) for arg in ("--keep", path)]
        jail_arguments = ["--cwd", str(cwd), *hide, *keep, "--", *cmd]
        server = fork_server(cmd, kw["env"], self.log) if self.fork_server else None
        if server is not None:
            return [sys.executable, "-I", "-S", str(_FORKCLIENT), "--socket", server.path, *jail_arguments], kw
        return [sys.executable, str(_JAIL), *jail_arguments], kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        pid = getattr(self.provisioner, "pid", None)
        await super()._async_cleanup_resources(restart=restart)
        if pid and can_confine():
            kill_leftovers(pid)

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
