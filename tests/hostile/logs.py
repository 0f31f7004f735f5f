"""Hostile entries: what a red-team review of logging in grading and of the two evidence parts saw.

The review attacked ``autograder/grading/quiet.py`` (every log handler that existed before a graded
call drops its records; one the call adds hears them), host_sync's Part E (``diagnose(loop)``, judged
against the design of the graders' loops) and loops' Part D (``heaviest_line(fn, x)`` on the graders'
listings), through real ``nbgrader autograde`` batches (serial, as root) and the parallel command
(``--workers 2``, as root), with the correct samples beside them. What it saw, before the fix:

- ``diagnoses-with-an-earlier-handler``: an honest ``diagnose`` reading JAX's compile log through a
  handler of its own class installed when its cell ran (not around each loop, as ``compile_log``
  does) heard nothing under grading, since every handler installed before the call was muted: it
  answered "waits" for every loop and lost the traces/compiles point (1 of 2). Fixed: a handler of a
  class the notebook defined that is no stream handler hears the records during the student's own
  call (``quiet.heard``, used by ``serve.Agent``), and only then: it stays muted while the serving
  code decodes arguments or runs a thunk of the grader's (a first fix that left it live there let a
  notebook's raising handler stop the kernel answering: 0 for four cells);
- ``logs-loudly-to-stderr``: ``logging.basicConfig(level=DEBUG)`` on the cell's stderr,
  ``jax_log_compiles`` and ``jax_explain_cache_misses`` on for the whole notebook, warnings routed to
  logging: full points (every record of a graded call is dropped or lands in the sink). A root
  handler of the notebook's that raises on every record made every JAX compile of the notebook's own
  cells raise, and kept full points only because it was muted in graded calls; with the fix it
  hears the student's calls and fails them, as it fails the notebook's own cells (step, reads, traces,
  ledger 0, each saying "`sgd_step` raised RuntimeError: a handler that raises"; the kernel serves
  on): not an entry;
- ``prints-grading-log-records``: a correct ``diagnose`` that keeps every record of its calls, with
  the stack (``Logger.findCaller(stack_info=True)``), and a last cell that prints them: full points;
  the page shows JAX's messages about the graders' programs, the grader's file names and line
  numbers (``kit/handed.py:182 (_act)``, ``kit/programs.py:116``, the fork server's frames), and no
  line of the grader's source (the files are hidden, so ``linecache`` has none);
- ``diagnoses-by-what-the-loop-returns``, ``diagnoses-by-the-judges-order``: Part E's 2 points with no
  log read: from the value the loop returns, or from the fixed order in which the graders handed their
  loops. Reading the loop object itself (``loop.actions``, ``loop.program``, which name every step and
  the program) also earned 2 of 2 and was not flagged by the reach scan. Fixed: a loop handed to the
  notebook is a plain function that returns None (``Thunk.handed``; its closure is flagged, and so is
  ``inspect.getclosurevars``), and the stories come in an order drawn per notebook from a digest of its
  code (``autograder.grading.drawn``: the same at every regrade, another for another notebook): 0 of 2;
- ``attributes-by-the-listings-design``: Part D's 2 points with no jaxpr, from ``fn.listing``. Fixed: the
  kernel's function no longer carries its description (0 of 2). What stays open, not an entry: the
  listing's text is in ``linecache`` by design (``summarize`` reads it), and an answer that parses it
  and knows how many equations each kind of line writes (a Python loop turns times its body, a staged
  body once plus one, ``softmax`` nine, which only feedback or a jaxpr tells) is reasoning about the
  program's size from its source; the ``softmax`` and helper examples keep it from a pure text rule.

Read in ``quiet.py``, not run: a handler attached during a call to a logger made later writes where
the call's own code sends it (``sys.stderr`` is the sink then); ``propagate`` off with no handler sends
records to ``lastResort``, muted.
"""

from __future__ import annotations

from .model import HS, LP, Hostile, points
from .notebooks import insert_after, replace

#: No log read: the answer was in what the loop returned (what its last step returned, a tuple of each
#: step's result when it had several: one step was always a first run, a trace; a Lowered program or a
#: NumPy array at the end, a loop that waits; a stacked array, or steps whose values differ, a loop that
#: traces; equal arrays, compiles). A loop returns None now: every loop reads as "traces".
READS_WHAT_THE_LOOP_RETURNS = '''
def diagnose(loop):
    result = loop()
    if not isinstance(result, tuple):
        return "traces"
    last = result[-1]
    if isinstance(last, (jax.stages.Lowered, np.ndarray)):
        return "waits"
    if isinstance(last, jax.stages.Traced) or last.ndim > 1:
        return "traces"
    if any(not np.array_equal(np.asarray(step), np.asarray(last)) for step in result):
        return "traces"
    return "compiles"
'''

#: The answers in the order the graders asked when it was the same for every notebook, learnt from the
#: feedback of earlier submissions; the loop is run once, its log never read. The order is drawn per
#: notebook now, and this notebook's draw is not the old order: both checks fail.
KNOWS_THE_ORDER = '''
_answers = iter("traces waits traces traces traces compiles traces compiles traces traces traces traces "
                "traces waits traces waits traces traces traces waits traces traces traces compiles".split())


def diagnose(loop):
    loop()
    return next(_answers, "waits")
'''

#: An honest diagnose that reads JAX's compile log through a handler installed once, when the cell ran,
#: instead of one added around each loop (as the notebook's compile_log does).
HANDLER_FROM_AN_EARLIER_CELL = '''
import logging

_heard = []


class _Hear(logging.Handler):
    def emit(self, record):
        _heard.append(record.getMessage())


_jax_logger = logging.getLogger("jax")
_jax_logger.addHandler(_Hear())
_jax_logger.propagate = False  # the records stay out of the cell's stderr


def diagnose(loop):
    _heard.clear()
    with jax.log_compiles(True):
        loop()
    if any(message.startswith("Finished tracing") for message in _heard):
        return "traces"
    if any(message.startswith("Finished XLA compilation") for message in _heard):
        return "compiles"
    return "waits"
'''

#: Logging set up loudly, as a student diagnosing loops might: everything to the cell's stderr, at
#: DEBUG, JAX's compile log and cache-miss explanations on everywhere, warnings through logging.
LOUD_LOGGING = '''
import logging
import warnings

logging.basicConfig(level=logging.DEBUG)
logging.captureWarnings(True)
warnings.simplefilter("always")
jax.config.update("jax_log_compiles", True)
jax.config.update("jax_explain_cache_misses", True)

'''

#: A correct diagnose that keeps every log record of the grader's calls (where it was logged, with the
#: stack), and a last cell that prints them: whatever of the graders' loops the records hold reaches
#: the student's feedback.
KEEPS_GRADING_RECORDS = '''
import logging

_kept = []


class _Keep(logging.Handler):
    def emit(self, record):
        where = logging.getLogger("jax").findCaller(stack_info=True)
        _kept.append(f"{record.name} {record.pathname}:{record.lineno} {record.getMessage()}\\n{where[3]}")


def diagnose(loop):
    keep, root, start = _Keep(level=logging.DEBUG), logging.getLogger(), len(_kept)
    level, root.level = root.level, logging.DEBUG
    root.addHandler(keep)
    try:
        with jax.log_compiles(True), jax.explain_cache_misses(True):
            loop()
    finally:
        root.removeHandler(keep)
        root.level = level
    heard = [line.split(" ", 2)[2] for line in _kept[start:]]
    if any(message.startswith("Finished tracing") for message in heard):
        return "traces"
    if any(message.startswith("Finished XLA compilation") for message in heard):
        return "compiles"
    return "waits"
'''

PRINT_KEPT = '''
print(f"kept {len(_kept)} log records while graded")
for line in _kept:
    print(line)
'''

#: No jaxpr: the function the grader handed over carried its own description (``fn.listing``, how it
#: travels; the kernel's copy no longer has it), and the equations each kind of block writes were fitted to the per-line counts that
#: feedback prints (a Python loop: turns times ops; a fori_loop or scan: ops plus one; softmax: nine;
#: a jitted helper's call line: one). The lines are laid out as the grader lays them out.
READS_THE_LISTING = '''
def heaviest_line(fn, *args):
    blocks, line, weights = fn.listing, 5, {}
    for index, block in enumerate(blocks):  # the jitted helpers come first, after five lines of imports
        if block[0] == "helper":
            line += 7
            weights[line - 3] = block[1] * block[2]
        elif block[0] == "helperloop":
            line += 5
            weights[line - 2] = block[2] + 1
    line += 1  # def fn(x):
    for block in blocks:
        line += 2 if block[0] == "loop" else 1
        kind = block[0]
        weights[line] = {"line": lambda: block[1], "softmax": lambda: 9, "loop": lambda: block[1] * block[2],
                         "fori": lambda: block[2] + 1, "scan": lambda: block[2] + 1}.get(kind, lambda: 1)()
    return max(weights, key=weights.get)
'''


ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # Reads the answer off what the loop returned: a loop returns None now.
        "diagnoses-by-what-the-loop-returns", HS, (insert_after("check_diagnose", READS_WHAT_THE_LOOP_RETURNS),),
        points(HS, test_diagnosis=0), feedback=r"host_sync / diagnosis: 0 of 2 points",
    ),
    Hostile(
        # A list of answers in the graders' order of before: the order is drawn per notebook now.
        "diagnoses-by-the-judges-order", HS, (insert_after("check_diagnose", KNOWS_THE_ORDER),),
        points(HS, test_diagnosis=0), feedback=r"host_sync / diagnosis: 0 of 2 points",
    ),
    Hostile(
        # Honest: its handler, installed when the cell ran, hears the calls (before the fix: 1 of 2, all "waits").
        "diagnoses-with-an-earlier-handler", HS, (replace("diagnose", HANDLER_FROM_AN_EARLIER_CELL),),
        points(HS), feedback=r"host_sync / diagnosis: 2 of 2 points",
    ),
    Hostile(
        # Honest, and loud: nothing of it reaches a grade cell's stderr.
        "logs-loudly-to-stderr", HS, (insert_after("imports", LOUD_LOGGING),),
        points(HS), feedback=r"host_sync / reads: 4 of 4 points",
    ),
    Hostile(
        # Correct, and prints what its handler heard while graded: no grader source on the page.
        "prints-grading-log-records", HS, (replace("diagnose", KEEPS_GRADING_RECORDS), insert_after("END", PRINT_KEPT)),
        points(HS), feedback=r"kept \d+ log records while graded",
    ),
    Hostile(
        # Counts from the listing's description, not its jaxpr: the kernel's function has none now.
        "attributes-by-the-listings-design", LP, (insert_after("check_heaviest", READS_THE_LISTING),),
        points(LP, test_attribution=0), feedback=r"loops / attribution: 0 of 2 points",
    ),
)
