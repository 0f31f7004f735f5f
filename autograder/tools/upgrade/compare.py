"""What an upgrade check's probe found, against what the course holds on its pinned JAX: every
claim true, every corpus file earning exactly what it declares (its ``FAILS``, ``SCORE`` and
``MESSAGE``, and an independent student's file its ``TEACHER``'s points unless a ``REVIEW`` says
why not), every XLA flag known. Only the differences are listed, per claim, per corpus file and
per property."""

from __future__ import annotations

import tomllib
from collections import Counter

from autograder.tools.repository import REPO_ROOT
from autograder.tools.words import counted


def pins() -> str:
    """The JAX and the Python the course is verified on, as ``pyproject.toml`` says."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pinned = [r.replace("==", " ") for r in project["dependencies"] if r.split("==")[0] in ("jax", "jaxlib")]
    return f"{', '.join(pinned)} on Python {project.get('requires-python', '(any)')}"


def report(found: dict) -> tuple[list[str], bool]:
    """The report's lines, and whether everything holds in the probed environment."""
    lines = [f"upgrade-check: Python {found['python']}, jax {found['jax']}, jaxlib {found['jaxlib']} "
             f"(the course pins {pins()}); assignments: {', '.join(found['assignments'])}"]
    lines += _flags(found["flags"])
    claim_lines, claims_hold = _claims(found["claims"])
    corpus_lines, corpus_holds = _corpus(found["corpus"])
    lines += claim_lines + corpus_lines
    holds = claims_hold and corpus_holds
    lines.append("Everything the course holds on its pin holds here too."
                 if holds else "Not everything holds here: reword what changed, or strengthen the properties, "
                 "before moving the pin (docs/upgrading.md).")
    return lines, holds


def _flags(flags: dict) -> list[str]:
    dropped = [f for f in flags["course"] if f not in flags["known"]]
    if not dropped:
        return [f"XLA flags: this XLA knows every one the grading kernels start with ({', '.join(flags['course'])})."]
    return [f"XLA flags: this XLA does not know {', '.join(dropped)}: grading kernels would start without it "
            "(autograder/grading/compiler.py leaves out a flag XLA does not know; each only makes compiles cheaper)."]


def _claims(claims: dict) -> tuple[list[str], bool]:
    failing = {name: entry for name, entry in claims.items() if entry["outcome"] != "passed"}
    if not claims:
        return ["Claims: none ran (see probe.log)."], False
    lines = [f"Claims: {len(claims) - len(failing)} of {counted(len(claims), 'test')} hold"
             + (f"; {len(failing)} do not:" if failing else ".")]
    for name, entry in sorted(failing.items()):
        lines.append(f"  {entry['outcome'].upper():<6}  {name.split('::', 1)[-1]}")
        if entry.get("message"):
            lines.append(f"          {entry['message']}")
    return lines, not failing


def _corpus(corpus: dict) -> tuple[list[str], bool]:
    changed, by_property = {}, Counter()
    for name, entry in sorted(corpus.items()):
        assignment = name.split("/", 1)[0]
        why = []
        newly_passed = sorted(set(entry["declared_fails"]) - set(entry["failed"]))
        newly_failed = sorted(set(entry["failed"]) - set(entry["declared_fails"]))
        if newly_passed:
            why.append(f"passes {', '.join(newly_passed)}, which its mistake should fail")
            by_property.update((assignment, p, "passes a file it should fail") for p in newly_passed)
        if newly_failed:
            why.append(f"fails {', '.join(newly_failed)}, which it should pass")
            by_property.update((assignment, p, "fails a file it should pass") for p in newly_failed)
        if entry["declared_score"] is not None and entry["score"] != entry["declared_score"]:
            why.append(f"earns {entry['score']:g} points, declares {entry['declared_score']:g}")
        if entry.get("message_shown") is False:
            why.append("its feedback no longer says what it declares (MESSAGE)")
        if "teacher" in entry and (entry["earned"] == entry["teacher"]) == entry["review"]:
            why.append("earns the independent teacher's points though a REVIEW says it should not"
                       if entry["review"] else f"earns {entry['earned']}, the independent teacher gave {entry['teacher']}")
        if why:
            changed[name] = why
    lines = [f"Corpus: {len(corpus) - len(changed)} of {counted(len(corpus), 'file')} earn what they declare"
             + (f"; {len(changed)} do not:" if changed else ".")]
    for name, why in changed.items():
        lines.append(f"  {name}: {'; '.join(why)}")
    if by_property:
        lines.append("Properties whose verdicts changed:")
        for (assignment, prop, how), n in sorted(by_property.items()):
            lines.append(f"  {assignment} / {prop}: {how} ({counted(n, 'file')})")
    return lines, not changed
