"""Start a grading kernel in a private view of the machine, as a user of its own.

nbgrader's process (:mod:`autograder.confinement.kernel_manager`) runs this file in place of the
kernel's command, as ``python jail.py --cwd DIR --hide P --keep P --private P --sockets DIR -- KERNEL...``; a kernel
forked from the fork server (:mod:`autograder.confinement.forkserver`) calls :func:`enter`
itself, with the same arguments. Still root and still single-threaded, it:

- joins a ``pids`` cgroup of its own, capped at :data:`PROCESSES` (a fork bomb
  stops there, and nbgrader kills what is left in it after the notebook);
- enters a network namespace of its own (a loopback device of its own and nothing
  else: no port of the machine, of nbgrader or of another kernel is reachable) and an
  IPC namespace of its own (System V IPC and POSIX message queues, gone with it);
- enters a mount namespace of its own, where each ``--hide`` folder (the course
  with its gradebook, source/ and every submission; the exchange; root's home; the
  course repository) is an empty folder, and ``/tmp``, ``/var/tmp``, ``/dev/shm`` and
  each ``--private`` folder (every world-writable folder of the machine, found by
  :func:`autograder.confinement.kernel_manager.world_writable`) are private and small;
  only each ``--keep`` path (Python, its packages, the grading package, the kernel's
  connection file) is put back, read-only, unless it holds a hidden folder (the
  course's root on ``sys.path``, say);
- binds the ``--sockets`` folder (nbgrader's, made for this kernel alone) back, owned
  by the kernel's user: the kernel's ZMQ sockets and the judge's socket are files there,
  and no other kernel sees it;
- puts the notebook's own folder back as an overlay: the kernel sees the student's
  files and may write beside them, but what it writes vanishes with the kernel;
- hides every terminal (:func:`hide_terminals`: ``/dev/pts`` an empty tmpfs, ``/dev/tty``,
  ``/dev/console``, ``/dev/ptmx``, the consoles and serial lines covered by a file no one may
  open), so the kernel can open no terminal of the instructor's, nor make one;
- gives the kernel an IPython folder of its own in its private ``/tmp`` (:data:`devices.IPYTHON_DIR`);
- and runs the kernel, in a session of its own (no controlling terminal), with an explicit
  descriptor table (:func:`devices.keep_only_descriptors`: its three streams, nbgrader's ``/dev/null``
  and pipe, and nothing else, whatever its number); the kernel then drops to :func:`kernel_uid`
  once the sandbox has loaded and hidden the grader (:mod:`autograder.confinement.sandbox`).

Nothing here imports the rest of the package: it runs before the kernel's Python.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import sys
from pathlib import Path

if __package__:  # imported as part of the package (the fork server)
    from autograder.confinement import devices
else:  # run as a script (``python jail.py``, maybe with no folder of its own on sys.path): the file beside it
    import importlib.util as _util

    _spec = _util.spec_from_file_location("devices", os.path.join(os.path.dirname(os.path.abspath(__file__)), "devices.py"))
    devices = _util.module_from_spec(_spec)
    _spec.loader.exec_module(devices)

PROCESSES = 256  # threads count too: XLA's pools need a few dozen
UID_BASE = 1_000_000  # kernel_uid(pid): no account has it, no other kernel shares it
UID_ENV = "AUTOGRADER_KERNEL_UID"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
SCRATCH = {"/tmp": "512m", "/var/tmp": "64m", "/dev/shm": "64m"}
#: Size of the tmpfs over each other world-writable folder (``--private``): ``/run/lock`` and the like.
PRIVATE_SIZE = "16m"

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18)
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def kernel_uid(pid: int) -> int:
    return UID_BASE + pid


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None) -> None:
    if _libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def empty(target: str, size: str = "1m", mode: str = "755", read_only: bool = False) -> None:
    """Cover ``target`` with a fresh, empty tmpfs."""
    flags = _MS_NOSUID | _MS_NODEV | (_MS_RDONLY if read_only else 0)
    mount("autograder", target, "tmpfs", flags, f"size={size},mode={mode}")


def seal(folder: str) -> None:
    """Make the bind mount ``folder`` read-only in this view: the kernel's sockets folder, once
    its sockets are bound (it lies on the machine's disk, outside every tmpfs of the kernel's).
    Connecting to a socket there still works; making files or folders there no longer does."""
    mount(None, folder, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _bind(source: str, target: str, read_only: bool) -> None:
    mount(source, target, None, _MS_BIND | _MS_REC)
    if read_only:
        mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)


def _umount_detached(target: str) -> None:
    if _libc.umount2(_bytes(target), _MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"umount {target}: {os.strerror(errno)}")


# --- terminals and descriptors (userns.py has the same, as it imports nothing of this file) ----------

def hide_terminals(scratch: str = "/tmp") -> int:
    """In this (private) mount namespace: ``/dev/pts`` an empty read-only tmpfs, and each other
    terminal device (:func:`devices.terminals`) covered by an empty file of mode 000 owned by root, which
    the kernel (no longer root when any cell runs) cannot open. That file lies on a tmpfs made in
    ``scratch`` (the private ``/tmp``) and detached again: nothing of it is left to see. How many
    devices were covered."""
    found = devices.terminals()
    if os.path.isdir(devices.PTS) and not os.path.islink(devices.PTS):
        empty(devices.PTS, size="4k", mode="755", read_only=True)
    if not found:
        return 0
    holder = os.path.join(scratch, ".autograder-no-terminal")
    os.mkdir(holder, 0o700)
    empty(holder, size="4k", mode="700")
    void = os.path.join(holder, "terminal")
    os.close(os.open(void, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0))
    os.chmod(void, 0)
    for device in found:
        mount(void, device, None, _MS_BIND)
    _umount_detached(holder)
    os.rmdir(holder)
    return len(found)


def own_session() -> None:
    """A session of this process's own, so it has no controlling terminal (nbgrader's kernel
    launcher already made it one: then nothing to do)."""
    if os.getsid(0) != os.getpid():
        os.setsid()


def pids_groups(pid: int) -> list[Path]:
    """Where the ``pids`` cgroup of the kernel ``pid`` lies, under each hierarchy tried."""
    return [root / "autograder-kernels" / str(pid) for root in CGROUP_ROOTS]


def join_pids_cgroup(pid: int, member: int | None = None) -> Path | None:
    """A fresh ``pids`` cgroup (v1 or v2) named for ``pid``, capped at PROCESSES, with
    ``member`` (``pid`` itself unless given) in it."""
    for group in pids_groups(pid):
        if not (group.parent.parent / "cgroup.procs").exists():
            continue
        try:
            group.parent.mkdir(exist_ok=True)
            for stale in group.parent.iterdir():  # of kernels gone without nbgrader's side removing them
                with contextlib.suppress(OSError):
                    stale.rmdir()  # refused while a process is still in it
            group.mkdir(exist_ok=True)
            (group / "pids.max").write_text(str(PROCESSES))
            (group / "cgroup.procs").write_text(str(pid if member is None else member))
            return group
        except OSError:
            continue
    return None


def _overlay_of_cwd(cwd: str) -> str:
    """The working folder as an overlay on a scratch tmpfs, owned by the kernel's user."""
    layers = "/tmp/.autograder-notebook"
    os.mkdir(layers, 0o700)
    empty(layers, size=SCRATCH["/tmp"], mode="700")
    for name in ("upper", "work", "merged"):
        os.mkdir(f"{layers}/{name}")
    mount("overlay", f"{layers}/merged", "overlay", _MS_NOSUID | _MS_NODEV,
          f"lowerdir={cwd},upperdir={layers}/upper,workdir={layers}/work")
    return f"{layers}/merged"


def _unshare(flags: int, names: str) -> None:
    if _libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare({names}): {os.strerror(errno)}")


def _private_mount_namespace() -> None:
    """A mount namespace of this process's own, whose mounts no other process sees."""
    _unshare(_CLONE_NEWNS, "CLONE_NEWNS")
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)


def _private_network_and_ipc() -> None:
    """A network namespace of this process's own (its own loopback, brought up, and no other
    device: nothing of the machine's loopback, nbgrader's or another kernel's, is reachable) and
    an IPC namespace of its own (System V shared memory, semaphores and message queues, POSIX
    message queues: the kernel sees only its own, and they are destroyed with it)."""
    _unshare(_CLONE_NEWNET | _CLONE_NEWIPC, "CLONE_NEWNET | CLONE_NEWIPC")
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | _IFF_UP))


def enter(cwd: str, hide: list[str], keep: list[str], owner: int | None = None,
          private: list[str] = (), sockets: str | None = None) -> int:
    """Build the kernel's view of the machine (see the module doc); return its user id.

    ``owner`` is the pid nbgrader knows the kernel by, which names the kernel's
    user and cgroup: this process's own, unless a fork server
    (:mod:`autograder.confinement.forkserver`) made it for a launcher of that pid.
    ``private`` are world-writable folders made private as ``/tmp`` is; ``sockets`` is the
    folder nbgrader made for this kernel's sockets, put back writable and given to its user.
    On return the process holds its three streams and no other descriptor, and ``IPYTHONDIR``
    names :data:`devices.IPYTHON_DIR`."""
    owner = os.getpid() if owner is None else owner
    uid = kernel_uid(owner)
    join_pids_cgroup(owner, member=os.getpid())
    _private_network_and_ipc()
    _private_mount_namespace()

    scratch = {**{folder: PRIVATE_SIZE for folder in private}, **SCRATCH}
    hidden = [*hide, *scratch]
    keep = [path for path in set(keep) if os.path.exists(path) and not any(_within(h, path) for h in hidden)]
    kept = {path: os.open(path, os.O_PATH) for path in keep}
    cwd_fd = os.open(cwd, os.O_PATH | os.O_DIRECTORY)
    sockets_fd = None
    if sockets is not None:
        os.chown(sockets, uid, uid)  # the kernel binds there, before and after it gives up root
        os.chmod(sockets, 0o700)
        sockets_fd = os.open(sockets, os.O_PATH | os.O_DIRECTORY)
    for folder, size in sorted(scratch.items(), key=lambda item: len(item[0])):
        # first: the overlay's layers live in the private /tmp
        if os.path.isdir(folder) and not os.path.islink(folder):
            empty(folder, size=size, mode="1777")
    if os.path.isdir(devices.MQUEUE):  # POSIX message queues: this IPC namespace's own
        mount("mqueue", devices.MQUEUE, "mqueue", _MS_NOSUID | _MS_NODEV)
    merged = _overlay_of_cwd(f"/proc/self/fd/{cwd_fd}")
    os.chown(merged, uid, uid)
    for folder in sorted(set(hide), key=len):
        if os.path.isdir(folder) and folder not in scratch:
            empty(folder, read_only=False)

    for path, fd in sorted(kept.items(), key=lambda item: len(item[0])):
        if os.path.exists(path):
            continue  # never hidden, or inside a path put back already
        _mountpoint(path, directory=os.path.isdir(f"/proc/self/fd/{fd}"))
        _bind(f"/proc/self/fd/{fd}", path, read_only=True)
    if sockets_fd is not None:
        _mountpoint(sockets, directory=True)
        _bind(f"/proc/self/fd/{sockets_fd}", sockets, read_only=False)
        os.close(sockets_fd)
    if not os.path.isdir(cwd):
        _mountpoint(cwd, directory=True)
    _bind(merged, cwd, read_only=False)
    hide_terminals()
    os.chdir(cwd)
    for fd in (*kept.values(), cwd_fd):
        os.close(fd)
    os.environ["IPYTHONDIR"] = devices.IPYTHON_DIR
    devices.keep_only_descriptors()
    return uid


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it: a kept folder must not bring a hidden one back."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _mountpoint(path: str, directory: bool) -> None:
    """Make ``path`` in the (tmpfs) folder that hides it, to mount on."""
    os.makedirs(path if directory else os.path.dirname(path), exist_ok=True)
    if not directory:
        Path(path).touch()


def probe() -> None:
    """Exit 0 if this machine lets the jail work (root, mount namespaces, tmpfs), else say why."""
    try:
        if os.geteuid() != 0:
            raise OSError(1, "not running as root")
        _private_network_and_ipc()
        _private_mount_namespace()
        empty("/tmp", mode="1777")
        hide_terminals()
    except OSError as error:
        print(error.strerror or error, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """``--cwd DIR --hide P --keep P --private P --sockets DIR -- KERNEL...``: the namespace, with
    the kernel's command as ``kernel``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--keep", action="append", default=[])
    parser.add_argument("--private", action="append", default=[])
    parser.add_argument("--sockets")
    parser.add_argument("kernel", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    args.kernel = args.kernel[1:] if args.kernel[:1] == ["--"] else args.kernel
    args.cwd = os.path.abspath(args.cwd)
    return args


def main(argv: list[str]) -> None:
    if argv == ["--probe"]:
        probe()
    args = parse_arguments(argv)
    kernel = args.kernel
    try:
        uid = enter(args.cwd, args.hide, args.keep, private=args.private, sockets=args.sockets)
    except OSError as error:  # nothing started yet: say why, and let nbgrader report a dead kernel
        print(f"autograder: cannot confine the grading kernel: {error}", file=sys.stderr)
        sys.exit(70)
    os.environ[UID_ENV] = str(uid)
    try:
        own_session()
    except OSError as error:
        print(f"autograder: cannot confine the grading kernel: {error}", file=sys.stderr)
        sys.exit(70)
    os.execv(kernel[0], kernel)


if __name__ == "__main__":
    main(sys.argv[1:])
