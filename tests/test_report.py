"""Does ``python -m autograder report`` tell the truth about a class?

One real course per module, graded by plain nbgrader (generate_assignment, then
autograde of notebooks placed in submitted/, as ``nbgrader autograde --create``
takes them): the three samples of branch_repair, one student who patches
``numpy.testing`` (tampering) and one whose kernel dies in an answer cell.
The report's figures are checked against numbers computed here independently:
scores through nbgrader's own Gradebook objects, pass counts from the feedback
text with a separate, simpler parse of the notebooks read by nbformat.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

from autograder.grading.registry import properties_of
from autograder.tools import cli
from autograder.tools import report as class_report
from autograder.tools import scratch

A = "branch_repair"
SAMPLES = REPO / "tests" / "samples" / A
TAMPER = "h-tamper"
SEGFAULT = "h-segfault"

slow = pytest.mark.slow


def _edited(cell_id: str, append: str = "", insert_after: str = "") -> nbformat.NotebookNode:
    """The correct sample with code appended to an answer cell, or a new cell after a (locked) one."""
    nb = copy.deepcopy(nbformat.read(SAMPLES / "correct.ipynb", as_version=4))
    [index] = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id]
    if append:
        nb.cells[index].source += "\n\n" + append
    if insert_after:
        nb.cells.insert(index + 1, nbformat.v4.new_code_cell(insert_after))
    return nb


def _submit(course: scratch.ScratchCourse, student: str, nb) -> None:
    if not isinstance(nb, Path):
        path = course.root.parent / f"{student}.ipynb"
        nbformat.write(nb, path)
        nb = path
    scratch.place_submission(course, student, A, nb)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> scratch.ScratchCourse:
    course = scratch.prepare_course(tmp_path_factory.mktemp("report") / "course")
    scratch.generate(course, [A])
    for kind in ("correct", "partial", "empty"):
        _submit(course, f"sample-{kind}", SAMPLES / f"{kind}.ipynb")
    _submit(course, TAMPER, _edited("imports", insert_after="np.testing.assert_allclose = lambda *args, **kwargs: None"))
    _submit(course, SEGFAULT, _edited("repaired_branch", "import ctypes\nctypes.string_at(0)  # read address zero"))
    scratch.nbgrader(course, ["autograde", A], course.root)
    return course


def copy_course(course: scratch.ScratchCourse, dest: Path) -> Path:
    """A copy of the graded course whose config points at the copy."""
    shutil.copytree(course.root, dest, ignore=shutil.ignore_patterns("reports"))
    config = dest / "nbgrader_config.py"
    config.write_text(config.read_text().replace(repr(str(course.root)), repr(str(dest))))
    return dest


# ---------------------------------------------------------------- independent figures


def gradebook_scores(root: Path) -> dict[str, float]:
    """Automatic points per student, through nbgrader's Gradebook objects."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment(A).submissions:
            total = 0.0
            for nb in sub.notebooks:
                answers = {c.name for c in nb.notebook.solution_cells}
                total += sum(g.auto_score for g in nb.grades if g.cell_type == "code" and g.name not in answers)
            scores[sub.student.id] = total
    return scores


def feedback_passes(root: Path) -> tuple[Counter, set[str]]:
    """Passing students per property name, from every PASS line the notebooks printed; and the students."""
    name_of = {p.title: p.name for p in properties_of(A)}
    passes: Counter = Counter()
    students = set()
    for path in sorted((root / "autograded").glob(f"*/{A}/{A}.ipynb")):
        students.add(path.parts[-3])
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                printed = out.get("text", "") or out.get("data", {}).get("text/plain", "")
                for line in printed.splitlines():
                    m = re.match(r"\s+PASS\s+(.+) \(\d+ of \d+\)$", line)
                    if m:
                        passes[name_of[m[1]]] += 1
    return passes, students


@pytest.fixture(scope="module")
def built(course) -> class_report.ClassReport:
    report = class_report.build(A, course.root)
    class_report.write(report, course.root)
    return report


# ---------------------------------------------------------------- the figures


@slow
def test_histogram_data_are_the_gradebook_scores(course, built):
    expected = gradebook_scores(course.root)
    assert set(expected) == {"sample-correct", "sample-partial", "sample-empty", TAMPER, SEGFAULT}
    assert built.scores == expected
    assert built.histogram() == dict(sorted(Counter(expected.values()).items()))
    assert built.mean_score == pytest.approx(sum(expected.values()) / len(expected))
    assert expected["sample-correct"] == built.max_score == 6
    assert expected["sample-empty"] == expected[TAMPER] == 0
    assert 0 < expected["sample-partial"] < 6


@slow
def test_pass_counts_agree_with_the_feedback_text(course, built):
    passes, students = feedback_passes(course.root)
    assert {p.name: len(p.passed) for p in built.properties} == {p.name: passes[p.name] for p in properties_of(A)}
    for p in built.properties:
        assert p.students == len(students) == 5
        assert p.pass_rate == pytest.approx(passes[p.name] / len(students))


@slow
def test_failing_counts_are_everyone_who_did_not_pass(course, built):
    passes, students = feedback_passes(course.root)
    expected = {name: len(students) - passes[name] for name in passes | {p.name: 0 for p in properties_of(A)}}
    assert built.failing_counts() == {n: k for n, k in expected.items() if k}
    # the dead kernel left the repair and traces groups without feedback
    by_name = {p.name: p for p in built.properties}
    for p in properties_of(A):
        assert (SEGFAULT in by_name[p.name].ungraded) == (p.group in ("repair", "traces"))


@slow
def test_properties_are_ordered_hardest_first(built):
    rates = [p.pass_rate for p in built.properties]
    assert rates == sorted(rates)
    assert [p.name for p in built.hardest()] == [p.name for p in built.properties[:3]]


@slow
def test_failing_property_shows_grouped_problems_and_the_shortest_example(course, built):
    by_name = {p.name: p for p in built.properties}
    tampered = [p for p in built.properties if any(f.student == TAMPER for f in p.failures)]
    assert {p.name for p in tampered} == {p.name for p in properties_of(A)}
    for p in tampered:
        counts = {key: n for key, n, _ in p.problems(top=100)}
        assert sum(counts.values()) == len(p.failures)
        assert any(key.startswith("Tampering: the notebook replaced objects") for key in counts)
        examples = [f.example for f in p.failures if f.example]
        if examples:
            assert len(p.minimal_example.example) == min(map(len, examples))
    assert by_name  # every property is there


def test_similar_sentences_group_together():
    a = "`repaired` returned 15.25 for float32[3] [-1.5, 2.0, 3.0] at 0x7f3a2c"
    b = "`repaired` returned 3 for float32[8] [1e-3, nan, -inf, 4, 5, 6, 7, 8] at 0xdeadbeef"
    assert class_report.normalise(a) == class_report.normalise(b)
    assert class_report.normalise("float32 and int8") == "float32 and int8"


@slow
def test_students_hitting_limits_or_tampering_are_flagged(built):
    kinds = {(f.student, f.kind) for f in built.flags}
    assert (TAMPER, class_report.TAMPERING) in kinds
    assert (SEGFAULT, class_report.DEAD_KERNEL) in kinds
    assert {f.student for f in built.flags} == {TAMPER, SEGFAULT}
    [died] = [f for f in built.flags if f.student == SEGFAULT and f.where == "repaired_branch"]
    assert "The kernel died while this cell ran" in died.detail


@slow
def test_the_page_holds_both_charts_and_one_row_per_property(course, built):
    page = (course.root / "reports" / f"{A}.html").read_text()
    assert built.path == course.root / "reports" / f"{A}.html"
    assert page.count("<svg") == 2 and 'id="histogram"' in page and 'id="pass-rates"' in page
    rows = re.findall(r'<tr class="property" data-property="([^"]+)"', page)
    assert sorted(rows) == sorted(p.name for p in properties_of(A))
    for p in properties_of(A):
        assert class_report._e(p.hint) in page
    # self-contained: nothing to fetch when viewed, nothing to run
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import""", page), "the page loads something"
    assert "<script" not in page and "<img" not in page


@slow
def test_command_prints_the_summary_and_the_page(course, built):
    proc = subprocess.run([sys.executable, "-m", "autograder", "report", A], cwd=course.root,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{A}: 5 students, mean {built.mean_score:.2f} of 6 automatic points" in proc.stdout
    assert ("Answers graded by hand are worth 2 more points, not counted above: none of 5 graded so far."
            in proc.stdout.splitlines())
    hardest = built.hardest()
    for p in hardest:
        assert f"{p.group} / {p.name} ({len(p.passed)} of 5)" in proc.stdout
    assert f"report: {course.root / 'reports' / (A + '.html')}" in proc.stdout
    assert "Traceback" not in proc.stderr


def hand_graded(root: Path) -> dict[str, tuple[float, float, int]]:
    """Per student: the points given by hand so far, what the hand-graded answers are worth, and how many of
    them are not graded yet, through nbgrader's Gradebook objects."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment(A).submissions:
            grades = [g for nb in sub.notebooks for g in nb.grades
                      if g.cell_type != "code" or g.name in {c.name for c in nb.notebook.solution_cells}]
            out[sub.student.id] = (sum(g.manual_score or 0 for g in grades), sum(g.max_score for g in grades),
                                   sum(g.manual_score is None for g in grades))
    return out


@slow
def test_hand_graded_points_are_apart_from_the_automatic_ones(course, built, tmp_path):
    """The histogram, the mean and the scores are automatic points; the answers graded by hand are shown
    apart, as not graded yet, and once a grader gives them points, as given, the automatic ones unchanged."""
    expected = hand_graded(course.root)
    assert set(expected.values()) == {(0, 2, 1)}, expected  # one written answer of 2 points, not graded yet
    assert built.hand_max == 2 and built.hand_graded() == []
    assert {sid: s.hand_shown() for sid, s in built.students.items()} == {
        sid: "-/2 (not graded yet)" for sid in expected}
    page = (course.root / "reports" / f"{A}.html").read_text()
    assert "Answers graded by hand are worth 2 more points, not counted above: none of 5 graded so far." in page
    assert "<th>automatic points</th><th>graded by hand</th>" in page
    assert page.count("<td>-/2 (not graded yet)</td>") == 5

    root = copy_course(course, tmp_path / "c")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:  # as formgrader saves a grade
        grade = gb.find_grade("pause_and_reason", A, A, "sample-correct")
        grade.manual_score = 1.5
        gb.db.commit()
    assert hand_graded(root)["sample-correct"] == (1.5, 2, 0)
    report = class_report.build(A, root)
    assert report.students["sample-correct"].hand_shown() == "1.5/2"
    assert report.students["sample-partial"].hand_shown() == "-/2 (not graded yet)"
    assert report.hand_graded() == ["sample-correct"]
    assert report.scores == built.scores and report.mean_score == built.mean_score  # automatic points alone
    page = class_report.render_html(report)
    assert "1 of 5 graded so far" in page and "<td>1.5/2</td>" in page


@slow
def test_submissions_refused_at_the_boundary_are_listed(course, built, tmp_path, capsys):
    """What the boundary wrote in a student's autograded folder is listed, per student, escaped on the page."""
    from autograder.confinement.boundary import RECORD, write_record

    assert built.refused == {}
    assert '<h2 id="refused">Submissions refused at the boundary (0)</h2>' in (
        course.root / "reports" / f"{A}.html").read_text()
    root = copy_course(course, tmp_path / "c")
    sentences = ["submission refused: notes.txt is a symbolic link",
                 "submission refused: <b>zero</b>.txt is a device (character device)"]
    write_record(str(root / "autograded" / "sample-partial" / A), sentences)
    (root / "autograded" / TAMPER / A / RECORD).write_text("submission refused: big.bin is over 20.0 MiB\n",
                                                           encoding="utf-8")
    report = class_report.build(A, root)
    assert report.refused == {TAMPER: ["submission refused: big.bin is over 20.0 MiB"], "sample-partial": sentences}
    assert report.scores == built.scores  # a refusal changes no score the gradebook holds
    page = class_report.render_html(report)
    assert '<h2 id="refused">Submissions refused at the boundary (2)</h2>' in page
    rows = re.findall(r'<tr class="refused"><td>([^<]*)</td><td>(.*?)</td></tr>', page)
    assert rows == [(TAMPER, "submission refused: big.bin is over 20.0 MiB"),
                    ("sample-partial", "submission refused: notes.txt is a symbolic link<br>submission refused: "
                                       "&lt;b&gt;zero&lt;/b&gt;.txt is a device (character device)")]
    assert "<b>zero" not in page
    assert cli.main(["report", A, "--course-dir", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("submissions refused at the boundary (2 students):")
    assert out[at + 1:at + 4] == [f"  {TAMPER}: submission refused: big.bin is over 20.0 MiB",
                                  f"  sample-partial: {sentences[0]}", f"  sample-partial: {sentences[1]}"]


# ---------------------------------------------------------------- bad input


@slow
def test_hostile_text_is_escaped(course, tmp_path):
    root = copy_course(course, tmp_path / "c")
    path = root / "autograded" / "sample-partial" / A / f"{A}.ipynb"
    nb = json.loads(path.read_text())
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if out.get("output_type") == "display_data" and "FAIL" in "".join(data.get("text/plain", "")):
                text = "".join(data["text/plain"])
                data["text/plain"] = re.sub(r"(Problem:\s+)", r"\1" + evil.replace("\\", r"\\"), text, count=1)
    path.write_text(json.dumps(nb))
    report = class_report.build(A, root)
    page = class_report.render_html(report)
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


@slow
def test_students_graded_by_a_kernel_on_another_jax_are_named(course, tmp_path):
    root = copy_course(course, tmp_path / "c")
    path = root / "autograded" / "sample-partial" / A / f"{A}.ipynb"
    nb = json.loads(path.read_text())
    import jax
    import jaxlib

    ours = f"jax {jax.__version__}, jaxlib {jaxlib.__version__}"
    note = (f"  NOTE  Graded by a kernel with jax 0.0.1, jaxlib 0.0.2, while the grader runs {ours}: "
            "what the code traced and compiled was observed on another JAX than the checks were written for, so a "
            "grade may differ from one on the grader's.\n")
    noted = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(data.get("text/plain", ""))
            if out.get("output_type") == "display_data" and text.startswith(f"{A} / "):
                header, rest = text.split("\n", 1)
                data["text/plain"] = header + "\n" + note + rest
                noted += 1
    assert noted
    path.write_text(json.dumps(nb))
    problems = [p for p in class_report.build(A, root).problems if "another" in p or "0.0.1" in p]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"graded by a kernel with jax 0.0.1, jaxlib 0.0.2, not the grader's {ours} "
                                  "(the kernelspec's Python is not nbgrader's): sample-partial; ")


@slow
def test_a_notebook_that_is_not_json_is_named_and_the_rest_reported(course, built, tmp_path):
    root = copy_course(course, tmp_path / "c")
    bad = root / "autograded" / "sample-partial" / A / f"{A}.ipynb"
    bad.write_bytes(bad.read_bytes()[:300])
    report = class_report.build(A, root)
    assert any(str(bad) in p and "is not a JSON notebook" in p for p in report.problems)
    assert report.scores == built.scores  # the gradebook still scores everyone
    for p, q in zip(sorted(report.properties, key=lambda p: p.name), sorted(built.properties, key=lambda p: p.name)):
        assert p.students == q.students - 1
        assert set(p.passed) == set(q.passed) - {"sample-partial"}


@slow
def test_without_a_gradebook_scores_come_from_the_feedback(course, built, tmp_path, capsys):
    root = copy_course(course, tmp_path / "c")
    (root / "gradebook.db").unlink()
    assert cli.main(["report", A, "--course-dir", str(root)]) == 0
    out, err = capsys.readouterr()
    assert f"no gradebook at {root / 'gradebook.db'}" in err
    assert f"{A}: 5 students" in out
    assert not (root / "gradebook.db").exists()  # not created by looking
    report = class_report.build(A, root)
    assert not report.gradebook_read
    # the feedback headers add up to what the gradebook holds (judged, honest cells)
    assert report.scores == built.scores
    assert (root / "reports" / f"{A}.html").is_file()


@slow
def test_an_unknown_assignment_is_named(course, capsys):
    assert cli.main(["report", "nope", "--course-dir", str(course.root)]) == 1
    err = capsys.readouterr().err
    assert "unknown assignment 'nope'" in err and A in err


@slow
def test_all_reports_every_graded_assignment(course, built, capsys):
    assert cli.main(["report", "--all", "--course-dir", str(course.root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{A}: 5 students") and out.count("report: ") == 1


def test_a_folder_that_is_not_a_course_is_refused(tmp_path):
    with pytest.raises(class_report.ToolError, match="has no nbgrader_config.py"):
        class_report.build(A, tmp_path)


# ---------------------------------------------------------------- limits, in the code's own words


def _failing(prop, raised: BaseException):
    """The failure grading reports when a property's run raises ``raised``."""
    from dataclasses import replace

    from autograder.grading import grade
    from autograder.grading.submission import Submission

    def run(_submission):
        raise raised

    return grade._run_one(replace(prop, run=run), Submission({}))  # its time limits are the submission's


def test_limits_and_tampering_sentences_of_the_grader_are_flagged(tmp_path):
    from autograder.grading import feedback, grade
    from autograder.grading.limits import PropertyTimeout
    from autograder.grading.results import GroupReport, PropertyResult

    repair = [p for p in properties_of(A) if p.group == "repair"]
    failures = [_failing(repair[0], PropertyTimeout("used up its 15 s of CPU time")),
                _failing(repair[1], MemoryError())]
    text = feedback.render(GroupReport(A, "repair", tuple(
        PropertyResult(p, passed=False, failure=f) for p, f in zip(repair, failures))))
    traces = [p for p in properties_of(A) if p.group == "traces"]
    tampered = feedback.render(GroupReport(A, "traces", tuple(
        PropertyResult(p, passed=False, failure=grade._tampering(["jax.jit"])) for p in traces)))

    def cell(group, outputs):
        return {"cell_type": "code", "execution_count": 1, "source": f'grade("{A}", "{group}", globals())',
                "metadata": {"nbgrader": {"grade": True, "solution": False, "grade_id": f"test_{group}"}},
                "outputs": outputs}

    nb = {"cells": [
        cell("failure", [{"output_type": "error", "ename": "CellTimeoutError", "evalue": "", "traceback": []}]),
        cell("repair", [{"output_type": "stream", "name": "stdout", "text": text.splitlines(True)}]),
        cell("traces", [{"output_type": "stream", "name": "stdout", "text": tampered}]),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / f"{A}.ipynb"
    path.write_text(json.dumps(nb))
    problems = []
    collector = class_report._Collector(A, problems)
    assert collector.notebook("ann", path) == 0
    kinds = {f.kind: f for f in collector.flags}
    assert set(kinds) == {class_report.TIME_LIMIT, class_report.MEMORY_LIMIT, class_report.TAMPERING}
    assert kinds[class_report.MEMORY_LIMIT].where == repair[1].title
    assert problems == ["ann: grade cell test_failure (failure) gave no feedback (CellTimeoutError)"]
    stats = {p.name: p for p in collector.properties.values()}
    assert stats[repair[0].name].failures[0].problem == failures[0].problem
    assert [p.name for p in collector.properties.values() if p.ungraded] == [
        p.name for p in properties_of(A) if p.group == "failure"]


def test_the_autograde_summary_names_the_jax_that_graded(monkeypatch):
    """`nbgrader autograde` ends by saying which JAX graded, and says so loudly when it is not the
    version the course pins (the explanations and events the notebooks teach change between releases)."""
    import importlib.metadata

    from autograder.tools.versions import graded_with

    pinned = dict(r.split("==") for r in importlib.metadata.requires("jax-tracing-course") if r.startswith("jax"))
    assert graded_with() == (f"Graded with jax {pinned['jax']}, jaxlib {pinned['jaxlib']}: "
                             "the version the course is verified on")
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.99.0" if name == "jax" else real(name))
    line = graded_with()
    assert line.startswith("Graded with jax 0.99.0") and f"NOT the version the course is verified on (jax {pinned['jax']})" in line
