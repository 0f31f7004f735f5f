"""A fork server for grading kernels: everything imported once, a fresh fork per kernel.

    python -m autograder.confinement.forkserver SOCKET     # started by the kernel manager

A fresh grading kernel spends most of its start-up importing ipykernel, JAX,
hypothesis and the graders. The kernel manager
(:mod:`autograder.confinement.kernel_manager`) starts this process once per
nbgrader process, as nbgrader's user (root, or the instructor without root) and outside any
jail. It imports all of that once,
without starting JAX's backend or any thread, says ``ready`` on its standard
output, and then, for each kernel a client (:mod:`autograder.confinement.forkclient`)
asks for, forks:

- a *monitor*, which forks the kernel, tells the client its pid and, when it
  ends, its exit code; if the client goes away first (nbgrader killed it), the
  monitor kills the kernel;
- the *kernel*, single-threaded as the jail needs. It takes a session of its own (no
  controlling terminal), the client's streams (nbgrader's ``/dev/null`` and pipe; a terminal
  among them becomes ``/dev/null``) and environment, closes every other descriptor, draws new random
  seeds, builds the jail (:func:`autograder.confinement.jail.enter`, keyed to the
  client's pid, whose user and cgroup nbgrader cleans up after; its own network,
  IPC and mount namespaces, as a kernel started afresh gets; without root, the
  rootless jail, :func:`autograder.confinement.userns.enter`, which returns in a
  grandchild, pid 2 of a pid namespace of its own, while the child waits for it),
  and runs IPKernelApp, whose first line imports the sandbox as in any grading kernel.

Each kernel is a new fork of the server, never reused, so nothing of one
notebook reaches another; nothing a kernel does reaches the server. The socket
lies in a folder only its user may enter, only a client of that user is served
(``SO_PEERCRED``), and a kernel's private ``/tmp`` cannot see it (nor, rootless, can a
kernel reach the server's process: it is outside the kernel's pid namespace). The server exits
when its standard input closes: nbgrader's process is gone.

The parallel command (:mod:`autograder.tools.parallel.run`) starts one server for all
its workers instead (:class:`Server` with ``wait=False``) and names it to them in
``AUTOGRADER_FORK_SERVER``; their kernel managers attach to it (:class:`Attached`).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from autograder.confinement import devices, forkclient, jail, userns

#: Modules a grading kernel imports before its first cell (never a property module: the judge is outside),
#: and those JAX imports only on its first lowering: MLIR's dialects, and SciPy's LAPACK, which JAX
#: loads before lowering a call of an exported program (a grader's handed step): 0.1 s of every
#: such kernel's CPU, found with a sampling profile. Then what IPython imports as a kernel's shell
#: starts (its completer, history, storemagic, pdb) and the modules of the sandbox's imports (never
#: the sandbox itself: importing it seals the process). None starts a thread (BLAS's are off here).
#: Not ipykernel's debugger (debugpy and pydevd, 50 ms of every kernel): preloaded, the notebooks
#: ran 8-18% longer in five of six side-by-side runs (`nbgrader autograde padded_masking`, 8
#: students) and 16% shorter in the sixth, for a reason not found; each kernel imports it, as a
#: fresh one does.
PRELOAD = (
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "IPython",
    "numpy", "jax", "jax.numpy", "hypothesis", "hypothesis.extra.numpy",
    "jaxlib.mlir.dialects.builtin", "jaxlib.mlir.dialects.mhlo", "scipy.linalg",
    "autograder.grading.grade", "autograder.grading.integrity", "autograder.grading.registry",
    "autograder.grading.serve", "autograder.kit",
    "IPython.core.debugger", "IPython.core.completerlib", "IPython.core.oinspect", "IPython.core.logger",
    "IPython.extensions.storemagic", "sqlite3", "tornado.queues", "tornado.platform.asyncio",
    "faulthandler", "importlib.readers", "importlib.resources.readers", "autograder.grading.compile_cache",
)
#: How the kernel's command starts ipykernel, after the interpreter and its options: the one
#: command this server runs.
KERNEL_MODULE = ["-m", "ipykernel_launcher"]
#: Interpreter options a kernelspec may carry before ``-m`` that a fork of this server honours as
#: they are: ``python -m ipykernel install`` (ipykernel 7) writes ``-Xfrozen_modules=off`` (it only
#: lets a debugger step into the standard library's frozen modules); ``-u`` and ``-B`` change
#: nothing a kernel does (ipykernel replaces the standard streams; the packages are read-only).
#: Any other option (``-O``, ``-E``, ``-I``, ``-W``...) changes how the kernel runs: a kernelspec
#: with one starts afresh.
HARMLESS_OPTIONS = frozenset({"-u", "-B", "-Xfrozen_modules=off", "-Xfrozen_modules=on"})


def kernel_arguments(cmd: list[str]) -> list[str] | None:
    """ipykernel's own arguments (``-f FILE``...) if ``cmd`` is ``PYTHON [OPTIONS] -m
    ipykernel_launcher ARGS`` with only :data:`HARMLESS_OPTIONS` (``-X frozen_modules=...``
    split in two as well), else None: then a fork of this server is not what ``cmd`` starts."""
    i = 1
    while i < len(cmd) and cmd[i] != KERNEL_MODULE[0]:
        if cmd[i] in HARMLESS_OPTIONS:
            i += 1
        elif cmd[i] == "-X" and i + 1 < len(cmd) and f"-X{cmd[i + 1]}" in HARMLESS_OPTIONS:
            i += 2
        else:
            return None
    if cmd[i:i + 2] != KERNEL_MODULE:
        return None
    return cmd[i + 2:]


#: Names a running server to the kernel managers of other processes: ``PID:SOCKET``.
SHARED_ENV = "AUTOGRADER_FORK_SERVER"
#: Beside the socket, when the server could not start: why.
FAILED_FILE = "failed"
#: The name of the folder a server's socket is made in, one folder a server.
FOLDER_PREFIX = "autograder-forkserver-"

#: Environment variables the imports set for themselves (JAX sets a few): a fresh kernel has them too.
_set_by_imports: dict[str, str] = {}


def preload() -> None:
    """Import what a kernel needs, then check the process is still fit to fork a jail from."""
    before = dict(os.environ)
    for name in PRELOAD:
        importlib.import_module(name)
    from autograder.kit import settings

    shutil.rmtree(settings.HOME, ignore_errors=True)  # each kernel makes it in its own /tmp
    _set_by_imports.update({k: v for k, v in os.environ.items() if k not in before})
    problems = why_not_forkable()
    if problems:
        raise RuntimeError("; ".join(problems))


def why_not_forkable() -> list[str]:
    """What would make a fork of this process unsound: threads, a started JAX backend, the sandbox."""
    problems = []
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1 or threading.active_count() != 1:
        problems.append(f"{threads} threads are running (a fork keeps only one)")
    from jax._src import xla_bridge

    if getattr(xla_bridge, "_backends", None):
        problems.append("JAX's backend has started")
    if "autograder.confinement.sandbox" in sys.modules:
        problems.append("the sandbox has run")
    return problems


def serve(path: str) -> None:
    """Answer clients on ``path`` until standard input closes; then wait for the monitors.

    Every monitor is waited for, as it ends, so that its kernel's CPU time reaches
    nbgrader's process (``getrusage``) as a fresh kernel's would."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    os.chmod(path + ".new", 0o600)
    listener.listen(16)
    os.rename(path + ".new", path)  # the socket appears only once it listens: then it is ready
    child_ended, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup descriptor hears of it
    print("ready", flush=True)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())  # nobody reads the pipe from here on: let nothing fill it
    os.close(null)
    while True:
        ready, _, _ = select.select([listener, sys.stdin, child_ended], [], [])
        if child_ended in ready:
            os.read(child_ended, 4096)
            _reap(block=False)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            _reap(block=True)
            return
        if listener in ready:
            conn, _ = listener.accept()
            _accept(listener, conn, close=(child_ended, wake))


def _reap(block: bool) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _accept(listener: socket.socket, conn: socket.socket, close: tuple[int, ...]) -> None:
    fds: list[int] = []
    try:
        pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        request, fds = forkclient.receive(conn, max_fds=3)
        if uid != os.getuid() or not request or request.get("pid") != pid or len(fds) != 3:
            forkclient.send(conn, {"error": "refused: not a request of this server's user with its three streams"})
            return
        if os.fork() == 0:  # the monitor
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                listener.close()
                for fd in (sys.stdin.fileno(), *close):
                    os.close(fd)
                _monitor(conn, request, fds)
            finally:
                os._exit(0)
    except (OSError, ValueError) as error:
        print(f"autograder fork server: a request failed: {error}", file=sys.stderr, flush=True)
    finally:
        for fd in fds:
            os.close(fd)
        conn.close()


def _monitor(conn: socket.socket, request: dict, fds: list[int]) -> None:
    kernel = os.fork()
    if kernel == 0:
        code = forkclient.NO_KERNEL
        try:
            code = _run_kernel(request, fds, monitor=os.getppid())
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            _exit_like_python(code)
    for fd in fds:
        os.close(fd)
    fds.clear()
    try:
        forkclient.send(conn, {"kernel": kernel})
        ended = os.pidfd_open(kernel)
        while True:
            ready, _, _ = select.select([conn, ended], [], [])
            if ended in ready:
                _, status = os.waitpid(kernel, 0)
                with contextlib.suppress(OSError):
                    forkclient.send(conn, {"exit_code": os.waitstatus_to_exitcode(status)})
                return
            if not conn.recv(1):
                break
    except OSError:
        pass
    os.kill(kernel, signal.SIGKILL)  # the client is gone (nbgrader killed it, or it died): so must the kernel be
    os.waitpid(kernel, 0)


def _run_kernel(request: dict, fds: list[int], monitor: int) -> int:
    """In the kernel's process: become what ``python -m ipykernel_launcher`` in the jail would be."""
    os.setsid()
    # The dispositions a fresh start would have: what nbgrader ignored stays ignored across exec (under
    # `nohup`, SIGHUP), the rest at their defaults, and Python's KeyboardInterrupt for a SIGINT not ignored.
    ignored = {int(s) for s in request.get("ignored", ())}
    for signum in forkclient.INHERITED_DISPOSITIONS:
        default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        signal.signal(signum, signal.SIG_IGN if signum in ignored else default)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    # The server's socket, the monitor's, anything inherited closed; a terminal among the client's
    # streams (nbgrader gives /dev/null and its own pipe) replaced by /dev/null. The jail does it
    # again once built, keeping only what the kernel needs (rootless: its channel to init).
    devices.keep_only_descriptors()
    os.environ.clear()
    os.environ.update({**_set_by_imports, **request["env"]})
    os.environ["JPY_PARENT_PID"] = str(monitor)  # the kernel exits if its parent does
    _reseed()
    _follow_jax_environment()

    arguments = jail.parse_arguments(request["argv"])
    kernel_argv = kernel_arguments(arguments.kernel)
    if kernel_argv is None:
        raise RuntimeError(f"not an ipykernel command: {arguments.kernel!r}")
    if os.geteuid() == 0:
        uid = jail.enter(arguments.cwd, arguments.hide, arguments.keep, owner=request["pid"],
                         private=arguments.private, sockets=arguments.sockets)
        os.environ[jail.UID_ENV] = str(uid)
    else:  # returns in the kernel only, pid 2 of a pid namespace whose init is its parent
        userns.enter(arguments.cwd, arguments.hide, arguments.keep, owner=request["pid"],
                     private=arguments.private, sockets=arguments.sockets)
        monitor = 1  # the kernel's parent is the namespace's init: ipykernel must not poll for it

    from autograder.kit import settings

    os.makedirs(settings.HOME, mode=0o700, exist_ok=True)
    from jax._src import pretty_printer

    pretty_printer.CAN_USE_COLOR = True  # what JAX decides when first imported inside a Jupyter kernel
    from ipykernel import kernelapp

    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *kernel_argv]
    os.environ["JPY_PARENT_PID"] = str(monitor)
    # IPKernelApp read JPY_PARENT_PID when the server imported it: name the parent now.
    kernelapp.IPKernelApp.launch_instance(argv=kernel_argv, parent_handle=monitor)
    return 0


#: JAX settings read from the environment when JAX is imported (so by the server, with its own
#: environment): a kernel takes them from its own, where the course chose its platform
#: (autograder/grading/backend.py) and an instructor may have kept a precision.
_JAX_ENVIRONMENT = ("jax_platforms", "jax_default_matmul_precision")


def _follow_jax_environment() -> None:
    """JAX's settings of :data:`_JAX_ENVIRONMENT` as this kernel's environment says, not as the server's
    did when it imported JAX (no backend has started here: :func:`why_not_forkable`)."""
    import jax

    for name in _JAX_ENVIRONMENT:
        jax.config.update(name, os.environ.get(name.upper()) or None)


def _reseed() -> None:
    """Every fork starts with the server's random state: give each kernel its own, as a fresh one has."""
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def _exit_like_python(code: int) -> None:
    """What leaving the interpreter does (atexit, flushed streams), then leave this fork only."""
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(code)


def command(path: str) -> list[str]:
    """How a fork server listening on ``path`` is started."""
    return [sys.executable, "-m", "autograder.confinement.forkserver", path]


def environment(env: dict[str, str]) -> dict[str, str]:
    """A fork server's environment, from its kernels': no BLAS threads in a process that forks."""
    return {**env, "OPENBLAS_NUM_THREADS": "1"}


#: Seconds a server may take to import everything before it counts as failed.
READY_SECONDS = 120.0


class Server:
    """The handle of the process that started a fork server: started once, asked whether it
    still runs, closed at exit.

    With ``wait=False`` it returns at once, and the server gets ready while its starter
    does other work (the parallel command starts its workers meanwhile); :attr:`shared`
    names it to other processes."""

    def __init__(self, env: dict[str, str], wait: bool = True):
        self.folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)  # 0700: root's alone
        self.path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen(
            command(self.path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/",
            start_new_session=True, env=environment(env),
        )
        atexit.register(self.close)
        if wait:
            self.wait_ready()

    @property
    def shared(self) -> str:
        """The value of :data:`SHARED_ENV` that lets another process's kernel manager attach."""
        return f"{self.process.pid}:{self.path}"

    def wait_ready(self) -> None:
        ready, _, _ = select.select([self.process.stdout], [], [], READY_SECONDS)
        said = self.process.stdout.readline().strip() if ready else f"not ready after {READY_SECONDS:.0f} s"
        if said != "ready":
            self.close()
            raise RuntimeError(said or f"it exited with code {self.process.wait()}")

    def running(self) -> bool:
        return self.process.poll() is None

    def ended(self) -> str:
        return f"the fork server exited with code {self.process.returncode}"

    def close(self) -> None:
        if self.process.poll() is None and not os.path.exists(self.path):
            self.process.kill()  # still importing: it has made no kernel to wait for
            self.process.wait()
        if self.process.poll() is None:
            self.process.stdin.close()  # the server's signal to leave
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class Attached:
    """A kernel manager's handle on a server another process started (:data:`SHARED_ENV`)."""

    def __init__(self, shared: str):
        pid, _, self.path = shared.partition(":")
        if not pid.isdigit() or not os.path.isabs(self.path):
            raise RuntimeError(f"{SHARED_ENV} is not PID:SOCKET: {shared!r}")
        self.pid = int(pid)
        failed = os.path.join(os.path.dirname(self.path), FAILED_FILE)
        deadline = time.monotonic() + READY_SECONDS
        while not os.path.exists(self.path):  # it appears once the server listens
            if os.path.exists(failed):
                with open(failed) as reason:
                    raise RuntimeError(reason.read().strip())
            if not self._alive():
                raise RuntimeError(self.ended())
            if time.monotonic() > deadline:
                raise RuntimeError(f"the shared fork server was not ready after {READY_SECONDS:.0f} s")
            time.sleep(0.05)

    def running(self) -> bool:
        return self._alive() and os.path.exists(self.path)

    def _alive(self) -> bool:
        """Whether the server's process runs (a zombie does not: its starter has not waited for it yet)."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
        except (OSError, IndexError):
            return False

    def ended(self) -> str:
        return f"the shared fork server (pid {self.pid}) is gone"

    def close(self) -> None:
        """Nothing to do: the process that started the server closes it."""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m autograder.confinement.forkserver SOCKET", file=sys.stderr)
        return 2
    if sys.path and sys.path[0] in ("", os.getcwd()):  # what -m put there: no kernel imports from it
        del sys.path[0]
    os.chdir("/")
    try:
        preload()
    except Exception as error:  # the kernel manager falls back to the jail, and logs this line
        print(f"cannot fork kernels: {error}", flush=True)
        with contextlib.suppress(OSError), open(os.path.join(os.path.dirname(argv[0]), FAILED_FILE), "w") as said:
            said.write(f"cannot fork kernels: {error}\n")  # for the kernel managers attached to it
        return 1
    serve(argv[0])
    # Its starter closed it, or died (killed: no exit handler of its ran): the socket's folder,
    # made by the starter for this server alone, goes with the server either way.
    folder = os.path.dirname(argv[0])
    if os.path.basename(folder).startswith(FOLDER_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)
    # Every monitor has been waited for: nothing is left to do, and tearing down the 1,200
    # modules this process imported would keep whoever waits for it waiting for nothing.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
