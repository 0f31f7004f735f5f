"""Does ``python -m autograder bench --class`` hand in a class, not copies of the reference?

The class bench (issue 55) grades what independent students wrote: correct answers in their own
styles, their mistakes and a partial notebook, in :data:`CLASS_MIX`'s proportions. Nothing here is
timed; the bench's figures are in docs/speed.md.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from autograder import assignments
from autograder.tools import scratch
from autograder.tools.bench import courses
from autograder.tools.repository import CORPUS, declared


def _what(kind: str, assignment: str) -> str:
    if not kind.startswith("corpus:"):
        return kind
    path = CORPUS / assignment / f"{kind[len('corpus:'):]}.py"
    assert path.name.startswith("student_"), f"{path.name} is not an independent student's file"
    return "mistake" if declared(path, "FAILS") else "style"


@pytest.mark.parametrize("assignment", assignments())
def test_a_class_of_ten_is_six_styles_three_mistakes_and_a_partial_notebook(assignment):
    kinds = courses.class_kinds_for(assignment, 10)
    assert Counter(_what(k, assignment) for k in kinds) == {"style": 6, "mistake": 3, "partial": 1}


@pytest.mark.parametrize("assignment", assignments())
def test_a_class_repeats_no_answer_while_the_corpus_has_new_ones(assignment):
    styles, mistakes = courses.independent_students(assignment)
    n = 20
    kinds = [k for k in courses.class_kinds_for(assignment, n) if k != "partial"]
    for what, pool in (("style", styles), ("mistake", mistakes)):
        handed = [k for k in kinds if _what(k, assignment) == what]
        assert len(set(handed)) == min(len(handed), len(pool)), (what, handed)


def test_a_class_students_notebook_holds_their_answer_and_the_release_cells(tmp_path):
    assignment = "static_max_mode"
    kind = next(k for k in courses.class_kinds_for(assignment, 10) if k.startswith("corpus:"))
    nb = json.loads(courses.make_notebook(assignment, kind, tmp_path).read_text())
    source = (CORPUS / assignment / f"{kind[len('corpus:'):]}.py").read_text()
    answers = ["".join(c["source"]) for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    assert answers[0] == source
    assert any("grade(" not in "".join(c["source"]) and c["metadata"].get("nbgrader", {}).get("grade")
               for c in nb["cells"])


def test_an_unknown_mix_is_refused_by_name(tmp_path):
    with pytest.raises(scratch.CycleError, match="unknown mix of students 'twins'"):
        courses.build(tmp_path, ["static_max_mode"], 2, mix="twins")
