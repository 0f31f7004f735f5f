"""Run a group of properties against a submission and report, as one grade cell does."""

from __future__ import annotations

import sys

from autograder.grading import feedback as _feedback
from autograder.grading import reach
from autograder.grading.integrity import tampered
from autograder.grading.limits import PropertyTimeout
from autograder.grading.registry import properties_of
from autograder.grading.results import GroupReport, PropertyFailure, PropertyResult
from autograder.grading.submission import Submission


def run_group(assignment: str, group: str, submission) -> GroupReport:
    """Run every property of ``group``; each is caught on its own so one failure hides no other.

    ``submission`` says how (a :class:`Submission` here, a judge's
    :class:`~autograder.grading.judge.RemoteSubmission` for a kernel elsewhere): its ``quiet``,
    ``time_limit`` and ``tampered``; its ``evidence``, where it has one (the judge's), names what
    of the kernel's own word each property used.

    A notebook that reaches into the grader (:mod:`autograder.grading.reach`, noted in the
    notebook's memo before it ran) keeps the points of properties judged on returned values alone;
    a property that passed on the kernel's own word is withheld, and the cell says why."""
    evidence = getattr(submission, "evidence", None)
    with submission.quiet():  # importing the property module (hypothesis, JAX) may warn too
        chosen = properties_of(assignment, group)
        from autograder.kit import precision

        precision.measured()  # once per process, here: before any property watches JAX's events
        outcomes = [] if submission.tampered() else [_measured(prop, submission, evidence) for prop in chosen]
        if submission.tampered():  # before the group, or done by student code the properties called
            outcomes = [(_tampering(submission.tampered()), frozenset())] * len(chosen)
    findings = reach.findings_of(getattr(submission, "notebook_memo", None))
    results = tuple(_result(p, f, used, findings) for p, (f, used) in zip(chosen, outcomes))
    return GroupReport(assignment, group, results, notice=reach.sentence(findings) if findings else "")


def _measured(prop, submission, evidence) -> tuple[PropertyFailure | None, frozenset]:
    """The property's failure (None if it holds), and the kernel's evidence it used."""
    if evidence is not None:
        evidence.clear()
    failure = _run_one(prop, submission)
    return failure, frozenset(evidence or ())


def _result(prop, failure, used: frozenset, findings) -> PropertyResult:
    if failure is None and used and findings:
        return PropertyResult(prop, passed=False, failure=_withheld(used), evidence=used, withheld=True)
    return PropertyResult(prop, passed=failure is None, failure=failure, evidence=used)


#: How a withheld check's problem starts (the class report looks for it).
WITHHELD = "Withheld: "


def _withheld(used: frozenset) -> PropertyFailure:
    return PropertyFailure(
        f"{WITHHELD}this check passed on what the notebook's own kernel reported ({', '.join(sorted(used))}), "
        "not on values it returned, and the notebook reaches into the grader (see the note above), so its points "
        "are held back until the instructor has reviewed the notebook."
    )


#: In a kernel, what properties note for the notebook's later grade cells (Submission.notebook_memo).
_NOTEBOOK_MEMO: dict = {}


def grade(assignment: str, group: str, namespace: dict) -> float:
    """The call a hidden test region makes: print feedback, return the points earned.

    This is the cell run as it is, properties and student code in one process: an instructor's
    own Jupyter, the course check. Under autograde no kernel runs it: nbgrader's process judges the
    cell (:mod:`autograder.grading.judge`) and the kernel only serves calls.
    """
    submission = Submission(namespace)
    submission.notebook_memo = _NOTEBOOK_MEMO  # a kernel runs one notebook: its grade cells share this
    report = run_group(assignment, group, submission)
    _show(report)
    # Checked again here: a patched report class could claim points its results lack.
    earned = 0.0 if tampered() else report.earned
    return earned


def _show(report: GroupReport) -> None:
    """In a kernel, one display output holding the text and its HTML (feedback pages show
    the HTML, which wraps long lines inside the output box); elsewhere, the text printed."""
    text = _feedback.render(report)
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "display_pub"):
        print(text)
        return
    shell.display_pub.publish({"text/plain": text, "text/html": _feedback.render_html(report)}, metadata={})


def _run_one(prop, submission) -> PropertyFailure | None:
    try:
        with submission.time_limit():
            prop.run(submission)
    except PropertyTimeout as timeout:
        return PropertyFailure(
            f"Time limit: the check {timeout}, still waiting for the notebook's code. "
            "Look for a loop that never ends or work that grows with every call."
        )
    except MemoryError:
        return PropertyFailure("Memory limit: the notebook's code ran out of the memory a kernel may use.")
    except RecursionError:
        return PropertyFailure("The notebook's code recursed without end (RecursionError).")
    except Exception as error:  # one property's crash must not stop the others
        return as_failure(error)
    return None


def _tampering(replaced: list[str]) -> PropertyFailure:
    names = ", ".join(f"`{name}`" for name in replaced[:6])
    return PropertyFailure(
        f"Tampering: the notebook replaced objects the grader relies on ({names}), "
        "so this check cannot be trusted and scores zero. Grading code must not be patched."
    )


def as_failure(error: BaseException) -> PropertyFailure:
    """Find the student-facing failure inside whatever hypothesis or JAX raised (else say what stopped the check)."""
    found = _find_failure(error)
    if found is not None:
        return found
    return PropertyFailure(
        f"The check stopped with {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        .rstrip(": ")
        + ". This usually means a function returned something of an unexpected kind."
    )


def _find_failure(error: BaseException | None) -> PropertyFailure | None:
    seen = set()
    stack = [error]
    while stack:
        current = stack.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, PropertyFailure):
            return current
        stack.extend(getattr(current, "exceptions", ()))
        stack.extend([current.__cause__, current.__context__])
    return None
