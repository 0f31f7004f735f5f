"""The jail without root: the same view of the machine, built in a user namespace.

When nbgrader does not run as root, :mod:`autograder.confinement.jail` cannot mount anything,
make a cgroup or give the kernel a user of its own. Linux lets a plain user do most of it inside
a *user namespace* of their own (``unshare(CLONE_NEWUSER)``), where the process holds every
capability over the namespaces it creates and none over the machine. :func:`enter` mirrors
:func:`autograder.confinement.jail.enter` (same arguments, called by the same two callers: this
file's :func:`main` for a kernel started afresh, the fork server's forked child for a forked
one) and builds, in the single-threaded caller:

- a user namespace whose root is the instructor's user id, in which the kernel keeps no
  capability (:func:`drop_privileges`, before any thread exists); when ``/etc/subgid`` grants
  the instructor a range and ``newgidmap`` is installed, the groups are mapped with one
  subordinate group, which leaves ``setgroups`` allowed, and the instructor's supplementary
  groups are dropped; without them the kernel keeps those groups (a plain user cannot drop
  them: dropping a group can open a file that group is denied);
- a mount namespace with the root jail's view: each ``--hide`` folder an empty tmpfs, each
  ``--keep`` path put back read-only, the notebook's folder an overlay (or, where overlayfs
  refuses, a copy in a tmpfs), ``/tmp``, ``/var/tmp`` and ``/dev/shm`` private (``/run`` is among
  the hidden folders for both jails: the instructor's session bus and agents live there too, and
  a kernel of the instructor's own user id could talk to them), and every other mount read-only;
- a pid namespace with a fresh ``/proc``: no process of nbgrader's is visible, and the kernel is
  the only child of the namespace's init, so every process a notebook starts dies with it;
- a network namespace (only a loopback device of its own, down until the kernel brings it up)
  and an IPC namespace (System V IPC and POSIX message queues of its own);
- ``user.max_user_namespaces`` 0 inside, so the kernel cannot make a user namespace of its own
  and regain capabilities in it; ``RLIMIT_NPROC``, counted per user *per user namespace* since
  Linux 5.14, so per kernel;
- no terminal: ``/dev/pts`` an empty tmpfs and every other terminal device covered by a file no
  one may open (:func:`hide_terminals`, as the root jail's): the kernel runs as the instructor's
  user id outside, which owns the instructor's own terminals; the kernel has a session of its
  own (no controlling terminal) and an explicit descriptor table (:func:`devices.keep_only_descriptors`:
  nbgrader's ``/dev/null`` and pipe as its streams, its channel to init, nothing else);
- an IPython folder in the private ``/tmp`` (:data:`devices.IPYTHON_DIR`): the instructor's home is
  hidden and read-only, where IPython would warn, on nbgrader's screen, that it cannot write.

The grader's own files must stay readable until the kernel has loaded them, and a kernel with
no capability cannot mount over them: the sandbox asks init for that (:func:`hide`), once.

Three processes come out of it. The caller (the pid nbgrader or the fork server's monitor knows)
stays outside the pid namespace, passes signals on and ends as the kernel ends (its exit code,
or killed by the same signal); the namespace's init (pid 1) passes them on again and leaves as
soon as the kernel ends, which kills whatever else is left in the namespace; :func:`enter`
returns only in the kernel (pid 2). If the caller is killed, init dies with it
(``PR_SET_PDEATHSIG``), and everything in the namespace with init. The kernel's parent is pid 1,
so ipykernel must not poll for its parent (``JPY_PARENT_PID`` is set to 1, which turns that off).

Nothing here imports the rest of the package: it runs before the kernel's Python.

**Own code, not bubblewrap.** Debian's ``bwrap`` builds much the same view (and was tried
against the same attacks), and a well-kept tool would be preferred where it fits. It does
not fit the fork server: a forked kernel is a child of the fork server that already holds
ipykernel, JAX and the graders in memory, and it must build its jail *in that process*
(``unshare`` then carry on), which is what makes forking worth it. ``bwrap`` only runs a new
program (``execve``) inside the sandbox it builds, so every forked kernel would have to start
Python again: the fork server's gain (about half of each kernel's start) would be gone. Using
``bwrap`` for kernels started afresh only and this file for forked ones would give two jails to
keep equal, and the root jail is own code already, built the same way. So this file builds it,
with the same arguments as the root jail; ``bwrap`` is not needed on the machine. It also gives
what ``bwrap`` 0.8 (Debian 12) lacks here: an overlay over the notebook's folder, and a channel
for the sandbox to hide the grader's files after they are loaded.
"""

from __future__ import annotations

import argparse
import ctypes
import errno as _errno
import os
import pwd
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys

if __package__:  # imported as part of the package (the fork server)
    from autograder.confinement import devices
else:  # run as a script (``python userns.py``, maybe with no folder of its own on sys.path): the file beside it
    import importlib.util as _util

    _spec = _util.spec_from_file_location("devices", os.path.join(os.path.dirname(os.path.abspath(__file__)), "devices.py"))
    devices = _util.module_from_spec(_spec)
    _spec.loader.exec_module(devices)

PROCESSES = 256  # as jail.PROCESSES: threads count too
MEMORY_BYTES = 6 * 2**30  # as sandbox.MEMORY_BYTES
FILE_BYTES = 256 * 2**20  # as sandbox.FILE_BYTES
SCRATCH = {"/tmp": "512m", "/var/tmp": "64m", "/dev/shm": "64m"}
#: Size of the tmpfs over each other world-writable folder (``--private``), as the root jail's.
PRIVATE_SIZE = "16m"
#: Set in the kernel's environment by :func:`enter`: how its groups were mapped (``newgidmap``: the
#: instructor's supplementary groups dropped; ``deny``: kept, as a plain user cannot drop them).
ROOTLESS_ENV = "AUTOGRADER_ROOTLESS"
#: In the kernel's environment until :func:`hide` has used it: its channel to the namespace's init.
HIDE_ENV = "AUTOGRADER_ROOTLESS_HIDE"
LAYERS = "/tmp/.autograder-notebook"
_MNT_DETACH = 2

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC = 0x40000000, 0x08000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID = 0x1, 0x2
_AT_EMPTY_PATH, _AT_RECURSIVE = 0x1000, 0x8000
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (the generic table)
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_SECUREBITS = 1, 4, 24, 28
_PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
#: SECBIT_NOROOT and SECBIT_NO_CAP_AMBIENT_RAISE, each with its lock: exec as uid 0 grants nothing.
_SECUREBITS = 0x1 | 0x2 | 0x40 | 0x80
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None) -> None:
    _check(_libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)), f"mount {target}")


def empty(target: str, size: str = "1m", mode: str = "755") -> None:
    """Cover ``target`` with a fresh, empty tmpfs."""
    mount("autograder", target, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},mode={mode}")


def set_mount_attributes(path: str, set_: int = 0, clear: int = 0, recursive: bool = False) -> None:
    """``mount_setattr``: change only these flags of the mount at ``path`` (a remount would have
    to repeat every flag the namespace inherited locked, nodev and atime among them)."""
    attr = _MountAttr(set_, clear, 0, 0)
    flags = _AT_RECURSIVE if recursive else 0
    result = _libc.syscall(_SYS_MOUNT_SETATTR, -100, _bytes(path), flags, ctypes.byref(attr), ctypes.sizeof(attr))
    _check(0 if result == 0 else -1, f"mount_setattr {path}")


def _bind(source: str, target: str, read_only: bool) -> None:
    mount(source, target, None, _MS_BIND | _MS_REC)
    if read_only:
        set_mount_attributes(target, _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, recursive=True)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _mountpoint(path: str, directory: bool) -> None:
    os.makedirs(path if directory else os.path.dirname(path), exist_ok=True)
    if not directory:
        open(path, "a").close()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


# --- terminals and descriptors (as jail.py's: this file imports nothing of it) ---------------------

def hide_terminals(scratch: str = "/tmp") -> int:
    """In this mount namespace (as root of the user namespace): ``/dev/pts`` an empty tmpfs, and
    each other terminal device covered by an empty file of mode 000, on a tmpfs made in
    ``scratch`` and detached again. The caller makes the mounts read-only (:func:`build_view`
    does, recursively, once the view is built): the kernel, the file's owner in its namespace with
    no capability, can then neither open nor ``chmod`` it. How many devices were covered."""
    found = devices.terminals()
    if os.path.isdir(devices.PTS) and not os.path.islink(devices.PTS):
        empty(devices.PTS, size="4k", mode="755")
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
    _check(_libc.umount2(_bytes(holder), _MNT_DETACH), f"umount {holder}")
    os.rmdir(holder)
    return len(found)


def kept_descriptors() -> list[int]:
    """What a kernel of this jail keeps beside its streams: its channel to init, until used."""
    channel = os.environ.get(HIDE_ENV, "")
    return [int(channel)] if channel.isdigit() else []


# --- user ids ---------------------------------------------------------------------------------

def subordinate(kind: str, uid: int) -> tuple[int, int] | None:
    """The first range ``/etc/sub{kind}`` grants the user ``uid`` (by name or number): (start, count)."""
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = None
    try:
        with open(f"/etc/sub{kind}") as grants:
            for line in grants:
                who, _, rest = line.strip().partition(":")
                start, _, count = rest.partition(":")
                if who in (name, str(uid)) and start.isdigit() and count.isdigit() and int(count) >= 1:
                    return int(start), int(count)
    except OSError:
        pass
    return None


def gid_plan(owner: int) -> list[str] | None:
    """``newgidmap``'s arguments after the pid: the instructor's group as 0 and one subordinate
    group (picked by ``owner``) as 1. Only a map that holds a subordinate group leaves
    ``setgroups`` allowed, and only then can the kernel drop the instructor's supplementary
    groups; None without ``/etc/subgid`` or ``newgidmap``."""
    gids = subordinate("gid", os.getuid())
    tool = shutil.which("newgidmap", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if not (gids and tool):
        return None
    return [tool, "0", str(os.getgid()), "1", "1", str(gids[0] + owner % gids[1]), "1"]


def _map_by_helper(plan: list[str]) -> tuple[int, int]:
    """Fork, before ``unshare``, a helper left outside the new user namespace that maps its
    groups (the setuid ``newgidmap`` writes another process's map); (its pid, its go pipe)."""
    go_read, go_write = os.pipe()
    helper = os.fork()
    if helper == 0:
        code = 1
        try:
            os.close(go_write)
            target = os.read(go_read, 32).decode()
            if target:
                code = subprocess.run([plan[0], target, *plan[1:]], stdin=subprocess.DEVNULL,
                                      capture_output=True, check=False).returncode
        finally:
            os._exit(1 if code else 0)
    os.close(go_read)
    return helper, go_write


#: How the last :func:`_map_ids` mapped groups: ``newgidmap`` (supplementary groups dropped) or ``deny``.
GROUPS = {"how": None}


def _map_ids(owner: int) -> None:
    """Enter the new namespaces as root of the user namespace (the instructor's ids as 0)."""
    plan = gid_plan(owner)
    helper = go = None
    if plan is not None:
        helper, go = _map_by_helper(plan)
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(_libc.unshare(NAMESPACES), "unshare(user, mount, pid, network, ipc)")
    except OSError:
        if helper is not None:
            os.close(go)
            os.waitpid(helper, 0)
        raise
    mapped = False
    if helper is not None:
        os.write(go, str(os.getpid()).encode())
        os.close(go)
        _, status = os.waitpid(helper, 0)
        mapped = os.waitstatus_to_exitcode(status) == 0  # else (a range newgidmap refuses) map it below
    if not mapped:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    if mapped:
        os.setgroups([])  # the instructor's supplementary groups: a socket or file they open stays shut
    GROUPS["how"] = "newgidmap" if mapped else "deny"


# --- the view -----------------------------------------------------------------------------------

def _overlay_of_cwd(cwd: str, uid: int) -> tuple[str, str]:
    """The working folder as an overlay on a scratch tmpfs, else a copy there; (merged, how)."""
    os.mkdir(LAYERS, 0o700)
    empty(LAYERS, size=SCRATCH["/tmp"], mode="700")
    for name in ("upper", "work", "merged"):
        os.mkdir(f"{LAYERS}/{name}")
    merged = f"{LAYERS}/merged"
    try:
        mount("overlay", merged, "overlay", _MS_NOSUID | _MS_NODEV,
              f"lowerdir={cwd},upperdir={LAYERS}/upper,workdir={LAYERS}/work")
        how = "overlay"
    except OSError:  # an older kernel, or a lower filesystem overlayfs refuses in a user namespace
        shutil.copytree(cwd, merged, symlinks=True, dirs_exist_ok=True)
        how = "copy"
    os.chown(merged, uid, uid)
    return merged, how


def build_view(cwd: str, hide: list[str], keep: list[str], uid: int, writable: list[str] = (),
               private: list[str] = ()) -> str:
    """In a mount namespace of our own (as root of the user namespace): the root jail's view,
    read-only but for the notebook's folder, the scratch folders (``/tmp`` and the like, and each
    ``private`` one: a world-writable folder of the machine) and ``writable``; how the
    notebook's folder is given (``overlay`` or ``copy``)."""
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    scratch = {**{folder: PRIVATE_SIZE for folder in private
                  if not any(_within(folder, h) for h in hide)}, **SCRATCH}
    hidden = [*hide, *scratch]
    keep = [path for path in set(keep) if os.path.exists(path) and not any(_within(h, path) for h in hidden)]
    writable = [path for path in writable if os.path.exists(path)]
    kept = {path: os.open(path, os.O_PATH) for path in {*keep, *writable}}
    cwd_fd = os.open(cwd, os.O_PATH | os.O_DIRECTORY)
    for folder, size in sorted(scratch.items(), key=lambda item: len(item[0])):
        if os.path.isdir(folder) and not os.path.islink(folder):
            empty(folder, size=size, mode="1777")
    merged, how = _overlay_of_cwd(f"/proc/self/fd/{cwd_fd}", uid)
    for folder in sorted(set(hide), key=len):
        if folder not in scratch and os.path.isdir(folder) and not os.path.islink(folder):
            empty(folder)
    for path, fd in sorted(kept.items(), key=lambda item: len(item[0])):
        if os.path.exists(path) and path not in writable:
            continue  # never hidden, or inside a path put back already
        directory = os.path.isdir(f"/proc/self/fd/{fd}")
        if not os.path.exists(path):
            _mountpoint(path, directory=directory)
        _bind(f"/proc/self/fd/{fd}", path, read_only=path not in writable)
    if not os.path.isdir(cwd):
        _mountpoint(cwd, directory=True)
    _bind(merged, cwd, read_only=False)
    hide_terminals()
    for fd in (*kept.values(), cwd_fd):
        os.close(fd)
    # Everything read-only (what a plain user may write elsewhere, a kernel of their id could), then
    # writable again only what is the kernel's own.
    set_mount_attributes("/", _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, recursive=True)
    for path in (*(s for s in scratch if os.path.isdir(s) and not os.path.islink(s)), LAYERS, merged, cwd,
                 *writable):
        set_mount_attributes(path, clear=_MOUNT_ATTR_RDONLY)
    if os.path.isdir("/dev/mqueue"):  # the IPC namespace's own message queues, not the machine's
        mount("mqueue", "/dev/mqueue", "mqueue", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    os.chdir(cwd)
    return how


# --- privileges -----------------------------------------------------------------------------------

def drop_privileges() -> None:
    """No capability left and none to regain, in this (single-threaded) process: the bounding
    set emptied, securebits locked (exec as uid 0 grants nothing), ambient and capset zero,
    no_new_privs. Capabilities are per thread, so this runs before any thread exists."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        _check(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap} from the bounding set")
    _check(_libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0), "lock securebits")
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    with open("/proc/self/status") as status:
        left = status.read().split("CapEff:")[1].split()[0]
    if int(left, 16):
        raise OSError(_errno.EPERM, f"capabilities left after dropping them: {left}")


def hide(path: str, seal: str | None = None) -> None:
    """In the kernel (the sandbox calls it once the grader is loaded): have the namespace's init,
    which alone kept its capabilities, cover ``path`` with an empty read-only tmpfs and make the
    folder ``seal`` (the kernel's sockets folder, its sockets bound) read-only; then init drops
    them too. Once only: the channel to init closes here."""
    fd = int(os.environ.pop(HIDE_ENV))
    with socket.socket(fileno=fd) as channel:
        channel.sendall(os.fsencode(os.path.realpath(path)) + b"\n" + os.fsencode(seal or "") + b"\n")
        said = channel.makefile("rb").readline().decode().strip()
    if said != "hidden":
        raise OSError(_errno.EPERM, f"the jail's init could not hide {path}: {said or 'no answer'}")


def _limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (value, value))


# --- the three processes ------------------------------------------------------------------------

def _relay(target: int):
    def forward(signum, _frame):
        try:
            os.kill(target, signum)
        except OSError:
            pass
    return forward


def _wait_as_caller(init: int, status_read: int) -> None:
    """Outside the pid namespace: pass signals to init, and end as the kernel ended."""
    for signum in FORWARDED:
        signal.signal(signum, _relay(init))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    parent = os.getppid()
    ended = os.pidfd_open(init)
    status = None
    while True:
        ready, _, _ = select.select([ended, status_read], [], [], 1.0)
        if status_read in ready:
            said = os.read(status_read, 64).decode().strip()
            if said.lstrip("-").isdigit():
                status = int(said)
        if ended in ready:
            break
        if os.getppid() != parent:  # whoever started us is gone: so is the kernel
            os.kill(init, signal.SIGKILL)
    os.waitpid(init, 0)
    if status is None:
        os._exit(70)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: die by the same one, as a kernel started afresh would
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def _serve_one_hiding(channel: socket.socket) -> None:
    """In init: the kernel's one request (:func:`hide`), or its end of the channel closing."""
    with channel:
        lines = channel.makefile("rb")
        request, seal = (lines.readline().decode().strip() for _ in range(2))
        if not request:
            return
        try:
            mount("autograder", request, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_RDONLY, "size=4k,mode=755")
            if seal:
                set_mount_attributes(seal, _MOUNT_ATTR_RDONLY)
            channel.sendall(b"hidden\n")
        except OSError as error:
            channel.sendall(f"{error}\n".encode())


def _be_init(caller_alive: int, status_write: int) -> None:
    """Pid 1 of the namespace: a fresh ``/proc``, then the kernel as its only child. Returns in
    the kernel only; init itself hides the grader when the kernel asks, drops every capability,
    passes signals on and leaves as soon as the kernel has ended."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([caller_alive], [], [], 0)[0]:  # the caller died before the line above
        os._exit(70)
    # A session of its own: jupyter_client interrupts a kernel by signalling its process group,
    # which would reach init and the kernel directly as well as through the caller's relay.
    os.setsid()
    mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    ours, theirs = socket.socketpair()
    kernel = os.fork()
    if kernel == 0:
        for fd in (status_write, caller_alive, ours.fileno()):
            os.close(fd)
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.setsid()  # the kernel's own session, as a kernel of the root jail has: no controlling terminal
        theirs.set_inheritable(True)
        os.environ[HIDE_ENV] = str(theirs.detach())
        return
    os.close(caller_alive)
    theirs.close()
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    for signum in FORWARDED:
        signal.signal(signum, _relay(kernel))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    try:
        _serve_one_hiding(ours)
    except OSError:
        pass
    drop_privileges()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)  # every orphan of the namespace is ours to reap
        except ChildProcessError:
            os._exit(70)
        if pid == kernel:
            os.write(status_write, str(status).encode())
            os._exit(0)  # and the kernel takes every process it left with it


def _loopback_up() -> None:
    """Bring up the network namespace's own loopback, as the root jail does (nothing else is in it)."""
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | _IFF_UP))


def enter(cwd: str, hide: list[str], keep: list[str], owner: int | None = None,
          private: list[str] = (), sockets: str | None = None, writable: list[str] = ()) -> int:
    """Build the rootless view (see the module doc); return, in the kernel only, 0: its user id
    inside the namespace (the instructor's outside), with no capability. Call it single-threaded.

    The arguments are the root jail's (:func:`autograder.confinement.jail.enter`): ``owner`` is
    the pid nbgrader knows the kernel by (this process's own unless a fork server made it): it
    picks the subordinate group; ``private`` are world-writable folders made private as ``/tmp``
    is; ``sockets`` is the folder nbgrader made for this kernel's ZMQ ``ipc://`` sockets and its
    judge's, put back writable (it is the instructor's, 0700: the kernel's user outside). Other
    ``writable`` paths are put back writable too."""
    owner = os.getpid() if owner is None else owner
    writable = [*writable, *([sockets] if sockets else [])]
    if sockets:
        os.chmod(sockets, 0o700)
    cwd = os.path.abspath(cwd)
    handlers = {signum: signal.getsignal(signum) for signum in FORWARDED}
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)  # until there is someone to pass them to
    try:
        _map_ids(owner)
        with open("/proc/sys/user/max_user_namespaces", "w") as sysctl:
            sysctl.write("0")  # no user namespace inside this one: no capability to regain there
        _loopback_up()
        build_view(cwd, hide, keep, 0, list(writable), list(private))  # last: it makes /proc/sys read-only
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
        raise
    _limit(resource.RLIMIT_FSIZE, FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    alive_read, alive_write = os.pipe()
    status_read, status_write = os.pipe()
    init = os.fork()
    if init != 0:
        os.close(alive_read)
        os.close(status_write)
        _wait_as_caller(init, status_read)  # never returns
    os.close(alive_write)
    os.close(status_read)
    _be_init(alive_read, status_write)  # returns in the kernel only
    drop_privileges()
    for signum, handler in handlers.items():
        signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    os.environ["JPY_PARENT_PID"] = "1"  # ipykernel's parent poller would take pid 1 for an orphaning
    os.environ[ROOTLESS_ENV] = GROUPS["how"] or ""
    os.environ["IPYTHONDIR"] = devices.IPYTHON_DIR
    devices.keep_only_descriptors(kept_descriptors())
    _limit(resource.RLIMIT_AS, MEMORY_BYTES)
    _limit(resource.RLIMIT_NPROC, PROCESSES)
    return 0


def probe() -> None:
    """Exit 0 if a rootless jail can be built here (every namespace, the id maps, tmpfs, an
    overlay, mount_setattr, a fresh /proc), else say why on stderr and exit 1."""
    child = os.fork()
    if child == 0:
        try:
            _map_ids(os.getpid())
            _loopback_up()
            mount(None, "/", None, _MS_REC | _MS_PRIVATE)
            empty("/tmp", mode="1777")
            os.mkdir("/tmp/lower")
            _, how = _overlay_of_cwd("/tmp/lower", 0)
            hide_terminals()
            print(how, flush=True)
            with open("/proc/sys/user/max_user_namespaces", "w") as sysctl:
                sysctl.write("0")
            set_mount_attributes("/", _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, recursive=True)
            init = os.fork()
            if init == 0:
                try:
                    mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
                except OSError as error:
                    print(error.strerror if error.strerror and ":" in error.strerror else error, file=sys.stderr)
                    os._exit(1)
                os._exit(0)
            _, status = os.waitpid(init, 0)
            os._exit(os.waitstatus_to_exitcode(status))
        except OSError as error:
            print(error.strerror or error, file=sys.stderr, flush=True)
            os._exit(1)
        except BaseException as error:  # noqa: BLE001 - say it, whatever it is
            print(error, file=sys.stderr, flush=True)
            os._exit(1)
    _, status = os.waitpid(child, 0)
    sys.exit(0 if os.waitstatus_to_exitcode(status) == 0 else 1)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """``--cwd DIR --hide P --keep P --private P --sockets DIR [--writable P] -- KERNEL...`` (the root
    jail's, plus --writable)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--keep", action="append", default=[])
    parser.add_argument("--private", action="append", default=[])
    parser.add_argument("--sockets")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("kernel", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    args.kernel = args.kernel[1:] if args.kernel[:1] == ["--"] else args.kernel
    args.cwd = os.path.abspath(args.cwd)
    return args


def main(argv: list[str]) -> None:
    if argv == ["--probe"]:
        probe()
    args = parse_arguments(argv)
    try:
        enter(args.cwd, args.hide, args.keep, private=args.private, sockets=args.sockets, writable=args.writable)
    except OSError as error:  # nothing started yet: say why, and let nbgrader report a dead kernel
        print(f"autograder: cannot confine the grading kernel without root: {error}", file=sys.stderr)
        sys.exit(70)
    try:
        os.execv(args.kernel[0], args.kernel)
    except OSError as error:
        print(f"autograder: cannot start the kernel {args.kernel[0]}: {error}", file=sys.stderr)
        os._exit(70)


if __name__ == "__main__":
    main(sys.argv[1:])
