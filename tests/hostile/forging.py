"""Hostile entries: Notebooks that reach into the grading package to forge the kernel's evidence, or reuse what the judge handed over.

Evidence the kernel reports (what a call raised, trace and compile events, host reads, thunk
counts, staged programs, the tamper report) stays forgeable by code in the kernel; a notebook
that reaches for the grader's objects is flagged before it runs (autograder.grading.reach), and
every check that passed on such evidence is withheld (its points are 0 until the instructor
restores them). Values are still the notebook's own work: those checks keep their points.
"""

from __future__ import annotations

import nbformat

from .model import HS, PM, SMM, Hostile, points, zero
from .notebooks import index_of, insert_after, stub

#: The sentence every grade cell of a flagged notebook shows (autograder.grading.reach.sentence).
FLAGGED = r"NOTE\s+Reaches into the grader: the notebook refers to the grading code or the interpreter around it"

#: The red team's generic cell: find the serving agent among the interpreter's objects, by a name
#: built from character codes, and rewrite every reply it sends while a grading call is on the
#: stack: what a call raised becomes the ValueError a check wants, the tamper report empty.
REWRITES_REPLIES_THROUGH_GC = '''
import gc

_name = "".join(map(chr, (65, 103, 101, 110, 116)))           # the serving agent's class
_method = "".join(map(chr, (97, 110, 115, 119, 101, 114)))     # its one method
_agent = next(o for o in gc.get_objects() if isinstance(o, type) and o.__name__ == _name)
_original = getattr(_agent, _method)


def _rewritten(self, request):
    reply = _original(self, request)
    if "raised" in reply:
        reply["raised"]["types"] = [["builtins", "ValueError"], ["builtins", "Exception"]]
    if "tampered" in reply:
        reply["tampered"] = []
    return reply


setattr(_agent, _method, _rewritten)
'''

#: Correct values and nothing else, plus a cell that tells grading calls from the notebook's own
#: run by the serving module's frames on the stack, reached through names folded from pieces.
TELLS_GRADING_BY_FRAMES = '''
_sys = __import__("sy" + "s")
_frame = getattr(_sys, "_get" + "frame")


def grading_now() -> bool:
    """True while the grader's serving code is on the stack."""
    frame = _frame(1)
    while frame is not None:
        if "se" + "rve" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


print("graded right now:", grading_now())
'''


def _pastes_a_seen_step(data: bytes) -> bytes:
    """The host_sync notebook resubmitted with `sgd_step` pasted from what one grading run handed its
    trainers (that run's compiled substitute, as bytes), and the trainers left as they were."""
    from autograder.kit.handed import Compiled
    from autograder.properties.test_host_sync import _step_avals, _Substitute

    import base64

    program = base64.b64decode(Compiled(_Substitute.draw().step(), *_step_avals()).serialized())
    nb = nbformat.reads(data.decode(), as_version=4)
    nb.cells[index_of(nb, "sgd_step")].source = (
        "from jax import export\n\n"
        "# the step the grader handed my trainers last time, pasted as it was\n"
        f"_program = export.deserialize(bytearray({bytes(program)!r}))\n"
        "\n\n@jax.jit\ndef sgd_step(theta, x, y, lr):\n    return _program.call(theta, x, y, lr)\n"
    )
    return nbformat.writes(nb).encode()


ENTRIES: tuple[Hostile, ...] = (
    Hostile(
        # Without the flag: the stubbed pad_batch's NotImplementedError reported as ValueError earns the
        # overflow check (1 point), as falsifies-kernel-evidence did. With it: withheld.
        "rewrites-replies-through-gc", PM,
        stub("pad_batch", "masked_objective") + (insert_after("imports", REWRITES_REPLIES_THROUGH_GC),),
        points(PM, test_padding=0, test_objective=0, test_traces=0), feedback=FLAGGED + r".*cell \d+: `import gc`",  # Part C, judged by its values, keeps its points
    ),
    Hostile(
        # Right values, and a cell that only looks at the stack: the checks that rest on the kernel's
        # word (the errors, the traces, and Part C's values, which a program staged in the kernel also
        # judges: issue 53's host-decision check) are withheld; Part A's values keep their points.
        "tells-grading-by-frames", SMM,
        (insert_after("choose", TELLS_GRADING_BY_FRAMES),),
        points(SMM, test_errors=0, test_traces=0, test_sorting=0),
        feedback=FLAGGED + r".*`__import__\(\.\.\.\)`",
    ),
    Hostile(
        # The step one run handed the trainers, pasted as the notebook's `sgd_step`: it is not the lesson's
        # step (the grader draws a new one for every notebook), so both step checks fail; the trainers,
        # honest, keep theirs; the pasted program is jitted, so the step's trace check holds.
        "pastes-a-seen-step", HS, _pastes_a_seen_step,
        points(HS, test_step=0), feedback=r"host_sync / step: 0 of 2 points",
    ),
)
