"""Start a grading kernel in a private view of the machine, as a user of its own.

nbgrader's process (:mod:`autograder.confinement.kernel_manager`) runs this file in place of the
kernel's command, as ``python jail.py --cwd DIR --hide P --keep P -- KERNEL...``; a kernel
forked from the fork server (:mod:`autograder.confinement.forkserver`) calls :func:`enter`
itself, with the same arguments. Still root and still single-threaded, it:

- joins a ``pids`` cgroup of its own, capped at :data:`PROCESSES` (a fork bomb
  stops there, and nbgrader kills what is left in it after the notebook);
- enters a mount namespace of its own, where each ``--hide`` folder (the course
  with its gradebook, source/ and every submission; the exchange; root's home; the
  course repository) is an empty folder, and ``/tmp``, ``/var/tmp`` and ``/dev/shm``
  are private and small; only each ``--keep`` path (Python, its packages, the
  grading package, the kernel's connection file) is put back, read-only, unless
  it holds a hidden folder (the course's root on ``sys.path``, say);
- puts the notebook's own folder back as an overlay: the kernel sees the student's
  files and may write beside them, but what it writes vanishes with the kernel;
- and runs the kernel, which then drops to :func:`kernel_uid` once the sandbox
  has loaded and hidden the grader (:mod:`autograder.confinement.sandbox`).

Nothing here imports the rest of the package: it runs before the kernel's Python.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import sys
from pathlib import Path

PROCESSES = 256  # threads count too: XLA's pools need a few dozen
UID_BASE = 1_000_000  # kernel_uid(pid): no account has it, no other kernel shares it
UID_ENV = "AUTOGRADER_KERNEL_UID"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
SCRATCH = {"/tmp": "512m", "/var/tmp": "64m", "/dev/shm": "64m"}

_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18)
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


def _bind(source: str, target: str, read_only: bool) -> None:
    mount(source, target, None, _MS_BIND | _MS_REC)
    if read_only:
        mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)


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


def _private_mount_namespace() -> None:
    """A mount namespace of this process's own, whose mounts no other process sees."""
    if _libc.unshare(_CLONE_NEWNS) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare(CLONE_NEWNS): {os.strerror(errno)}")
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)


def enter(cwd: str, hide: list[str], keep: list[str], owner: int | None = None) -> int:
    """Build the kernel's view of the machine (see the module doc); return its user id.

    ``owner`` is the pid nbgrader knows the kernel by, which names the kernel's
    user and cgroup: this process's own, unless a fork server
    (:mod:`autograder.confinement.forkserver`) made it for a launcher of that pid."""
    owner = os.getpid() if owner is None else owner
    uid = kernel_uid(owner)
    join_pids_cgroup(owner, member=os.getpid())
    _private_mount_namespace()

    hidden = [*hide, *SCRATCH]
    keep = [path for path in set(keep) if os.path.exists(path) and not any(_within(h, path) for h in hidden)]
    kept = {path: os.open(path, os.O_PATH) for path in keep}
    cwd_fd = os.open(cwd, os.O_PATH | os.O_DIRECTORY)
    for scratch, size in SCRATCH.items():  # first: the overlay's layers live in the private /tmp
        if os.path.isdir(scratch):
            empty(scratch, size=size, mode="1777")
    merged = _overlay_of_cwd(f"/proc/self/fd/{cwd_fd}")
    os.chown(merged, uid, uid)
    for folder in sorted(set(hide), key=len):
        if os.path.isdir(folder) and folder not in SCRATCH:
            empty(folder, read_only=False)

    for path, fd in sorted(kept.items(), key=lambda item: len(item[0])):
        if os.path.exists(path):
            continue  # never hidden, or inside a path put back already
        _mountpoint(path, directory=os.path.isdir(f"/proc/self/fd/{fd}"))
        _bind(f"/proc/self/fd/{fd}", path, read_only=True)
    if not os.path.isdir(cwd):
        _mountpoint(cwd, directory=True)
    _bind(merged, cwd, read_only=False)
    os.chdir(cwd)
    for fd in (*kept.values(), cwd_fd):
        os.close(fd)
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
        _private_mount_namespace()
        empty("/tmp", mode="1777")
    except OSError as error:
        print(error.strerror or error, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """``--cwd DIR --hide P --keep P -- KERNEL...``: the namespace, with the kernel's command as ``kernel``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--keep", action="append", default=[])
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
        uid = enter(args.cwd, args.hide, args.keep)
    except OSError as error:  # nothing started yet: say why, and let nbgrader report a dead kernel
        print(f"autograder: cannot confine the grading kernel: {error}", file=sys.stderr)
        sys.exit(70)
    os.environ[UID_ENV] = str(uid)
    os.execv(kernel[0], kernel)


if __name__ == "__main__":
    main(sys.argv[1:])
