"""Hostile entries of compile_log: what the red team of 2026-12-08 got through, and what holds it now.

Each goes through a real ``nbgrader autograde`` (and the pages), where what it attacked lives:

- ``reads-the-thunk-closure``: Part A reads the grader's work (its program's name, steps and lengths) from
  the handed function's closure, ``__closure__`` spelled in bytes the reach scan cannot fold, and writes
  the records those steps would make, the right argument types included, with the log never on. It kept
  both capture points; its ``cell_contents`` is flagged now, and the capture points, which rest on the
  kernel's word of how often the work ran, are withheld;
- ``injects-feedback-lines``: Part B returns a dict key holding lines of made-up feedback
  (``compile_log / programs: 4 of 4 points``, ``  PASS  ...``), which the judge wrote raw into a
  ``Problem:`` line: the page showed green PASS lines, and the class report counted them. A key is shown as
  a short literal now, and every field's later lines are indented inside it;
- ``bloats-the-feedback``: Part B returns a key of a million newlines: each a feedback line and an HTML
  line in nbgrader's process (1.5 GB, a 282 MB autograded notebook). A field is cut to 4000 characters and
  40 lines now.

The other attacks of that review are corpus files (``tests/corpus/compile_log/redteam_*.py``), graded
in-process: a capture made up from a fixed plan or from JAX's monitoring events, the notebook's ``jax``
rebound to read the option wrongly, and a reader whose grade depended on the judge's earlier sessions.
"""

from __future__ import annotations

from .forging import FLAGGED
from .model import CL, Hostile, points
from .notebooks import replace

READS_THE_THUNK_CLOSURE = """# Read the grader's work from the handed function's closure (the attribute's name built from bytes, which the
# reach scan cannot fold), then write the records its steps make, with the right argument types, without ever
# turning the compile log on.  (A text for a later work holds only its last step's records: the grader then
# judges only "nothing beyond its own work, and not nothing".)
_HIDDEN = bytes([95, 95, 99, 108, 111, 115, 117, 114, 101, 95, 95]).decode()
_seen = []


def _steps_of(work):
    for cell in getattr(work, _HIDDEN, None) or ():
        inner = cell.cell_contents
        actions = getattr(inner, "actions", None)
        if actions is not None:
            return inner.program, [tuple(a) for a in actions]
    return None, []


def _records(kind, length, form):
    lr = "ShapedArray(float32[], weak_type=True)" if form == "weak" else "ShapedArray(float32[])"
    out = ["Finished tracing <lambda> for jit in 0.000400000 sec"]
    if kind in ("call", "lower", "aot"):
        out += [f"Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[{length}]), {lr}). "
                "Argument mapping: (UnspecifiedValue, UnspecifiedValue).",
                "Finished jaxpr to MLIR module conversion jit(<lambda>) in 0.001000000 sec"]
    if kind in ("call", "aot"):
        out.append("Finished XLA compilation of jit(<lambda>) in 0.020000000 sec")
    return out


def compile_log_of(work):
    program, actions = _steps_of(work)
    work()
    if program is None:
        return ""
    _seen.append((program, actions))
    chosen = actions if len(_seen) == 1 else actions[-1:]
    return "\\n".join(line for a in chosen for line in _records(*a)) + "\\n"
"""

SHOWS_WHAT_IT_PEEKED = """# Show in the feedback what the closure held (through a dict key, as in attack_fakejax).
def compiled_programs(log_text):
    return {" peeked:\\n" + "\\n".join(f"{p}: {a}" for p, a in _seen): ["x"]}
"""

INJECTS_FEEDBACK_LINES = """# Honest reader, plus lines injected into the feedback through a dict key: the judge writes the key raw
# (not repr) into "Problem: The programs listed for `KEY` ...", so its newlines become feedback lines,
# which the class report (python -m autograder report) parses as headers and PASS lines.
import re

_LOWERED = re.compile(r"Compiling jit\\((.+?)\\) with global shapes and types (\\(.*\\))\\. Argument mapping")
_COMPILED = re.compile(r"Finished XLA compilation of jit\\((.+)\\) in \\S+ sec")

_FAKE = ("\\u200b` (see below)\\n"
         "compile_log / programs: 4 of 4 points\\n"
         "  PASS  `compiled_programs` lists each function's programs, on logs of sessions the notebook never shows, in four handlers' formats (1 of 1)\\n"
         "  PASS  `compiled_programs` lists what XLA compiled, not what JAX only traced or lowered, each with the types of the lowering it compiled (3 of 3)\\n"
         "  PASS  injected-property-title (100 of 100)\\n"
         "compile_log / capture: 100 of 2 points\\n"
         "\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n")


def compiled_programs(log_text):
    waiting = {}
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.search(line)
        if lowered:
            waiting.setdefault(lowered.group(1), []).append(lowered.group(2))
            continue
        compiled = _COMPILED.search(line)
        if compiled and waiting.get(compiled.group(1)):
            programs.setdefault(compiled.group(1), []).append(waiting[compiled.group(1)].pop())
    if log_text.count("Compiling jit(") > log_text.count("XLA compilation"):   # only the 3-point property's cases
        programs[_FAKE] = ["x"]
    return programs
"""

BLOATS_THE_FEEDBACK = """# A dict key of N newlines: the judge writes it raw into "Problem: The programs listed for `KEY` ...";
# render_html makes each line a <div style=...> of ~114 bytes (2 bytes on the wire each), and neither the
# judge's report nor the feedback output it becomes has any size limit (output_bytes applies to the
# kernel's messages only).  Both Part B properties fail on it, one reply each (32 MiB wire cap each).
_BLOAT = "\\n" * 1_000_000


def compiled_programs(log_text):
    return {_BLOAT: ["x"]}
"""

ENTRIES: tuple[Hostile, ...] = (
    Hostile("reads-the-thunk-closure", CL,
            (replace("compile_log_of", READS_THE_THUNK_CLOSURE), replace("compiled_programs", SHOWS_WHAT_IT_PEEKED)),
            points(CL, test_capture=0, test_programs=0), feedback=FLAGGED + r".*`\.cell_contents`"),
    Hostile("injects-feedback-lines", CL, (replace("compiled_programs", INJECTS_FEEDBACK_LINES),),
            points(CL, test_programs=1),
            feedback=r"Problem:  The programs listed for '\\u200b` \(see below\)\\ncompile_log / programs"),
    Hostile("bloats-the-feedback", CL, (replace("compiled_programs", BLOATS_THE_FEEDBACK),),
            points(CL, test_programs=0), feedback=r"Problem:  The programs listed for '\\n\\n\\n"),
)
