"""Are the feedback pages legible in a real browser?

Plain nbgrader (generate, autograde, generate_feedback: ``tests/graded_course.py``)
grades the partial sample of one assignment, which passes some properties and fails
others; its feedback page is then opened in headless Chromium at 1100 pixels wide:

- ``--dump-dom``: the page as the browser built it holds every grade cell's output,
  its PASS and FAIL lines, each failing property's hint whole;
- measured in the layout: a copy of the page with a small script
  (``tests/chromium.py``, ``MEASURE_SCRIPT``) that, after load, compares the right
  edge of every line of text in an output area with the area's own right edge (and
  ``scrollWidth`` with ``clientWidth``) and writes the verdict into the DOM, which
  ``--dump-dom`` carries out; no failure line may reach past its box;
- ``--screenshot``: the PNG is not blank (many colours, a fair share of ink).

Chromium is the Debian ``chromium`` package: installed with apt-get when missing and
the tests run as root, else these tests are skipped, saying why.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from conftest import REPO

import chromium
import graded_course
from autograder.confinement.preprocessors import REMOVED, grader_lines, scrub_html
from autograder.grading.feedback import render, render_html
from autograder.grading.registry import properties_of
from autograder.grading.results import GroupReport, PropertyFailure, PropertyResult
from autograder.tools import scratch

ASSIGNMENT = "branch_repair"  # its partial sample fails a property with a long problem and hint
STUDENT = "sample-partial"
slow = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> str:
    found = chromium.find_or_install()
    if not found:
        pytest.skip("no chromium: install the Debian package `chromium` (apt-get install -y chromium); "
                    "these tests install it themselves only when run as root")
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> scratch.ScratchCourse:
    notebook = REPO / "tests" / "samples" / ASSIGNMENT / "partial.ipynb"
    return graded_course.autograded(tmp_path_factory.mktemp("pages") / "course", ASSIGNMENT, STUDENT, notebook)


@pytest.fixture(scope="module")
def page(course) -> Path:
    return course.feedback_dir / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"


@pytest.fixture(scope="module")
def feedback_texts(course) -> list[str]:
    """The text/plain of each graded cell's feedback output, from the autograded notebook."""
    nb = json.loads((course.root / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    texts = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            plain = "".join(output.get("data", {}).get("text/plain", ""))
            if output["output_type"] == "display_data" and f"{ASSIGNMENT} / " in plain:
                texts.append(plain)
    return texts


def failing_properties(texts: list[str]):
    titles = {m.group(1) for t in texts for m in re.finditer(r"^  FAIL  (.*) \(0 of [\d.]+\)$", t, re.M)}
    return [p for p in properties_of(ASSIGNMENT) if p.title in titles]


def visible_text(dom: str) -> str:
    dom = re.sub(r"<(style|script)\b.*?</\1>", "", dom, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", dom))


# ---------------------------------------------------------------- without a browser


def _report(hint: str, problem: str = "A problem " * 30) -> GroupReport:
    from autograder.grading.results import Property
    passing = Property("a", "g", 1.0, "passes <always> & more", "", None)
    failing = Property("b", "g", 2.0, "fails", hint, None)
    failure = PropertyFailure(problem, example="f(x)", got="1", expected="2")
    return GroupReport("demo", "g", (PropertyResult(passing, True), PropertyResult(failing, False, failure)))


def test_the_html_holds_the_text_line_for_line():
    report = _report("A hint " * 40)
    lines = render_html(report).split("\n")[1:-1]
    assert [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines] == render(report).split("\n")
    hint = next(line for line in lines if "Hint:" in line)
    assert "padding-left:18ch;text-indent:-18ch" in hint  # wrapped rows continue under the text


def test_grader_source_is_scrubbed_from_the_html_too():
    """A line of grader source in the feedback (say, from a traceback a property quotes) goes,
    as it goes from the text: ``scrub_html`` reads each line's text, without tags and entities."""
    line = next(line for line in sorted(grader_lines()) if "<" in line or "&" in line or '"' in line)
    scrubbed = scrub_html(render_html(_report("hint", problem="Traceback:\n" + line)))
    assert html.escape(REMOVED) in scrubbed
    assert line not in visible_text(scrubbed)


# ---------------------------------------------------------------- in Chromium


@slow
def test_the_page_shows_every_grade_cell_with_its_pass_and_fail_lines(browser, page, feedback_texts):
    assert len(feedback_texts) == 3, "branch_repair has three graded cells, each with one feedback output"
    text = visible_text(chromium.dump_dom(browser, page))
    for feedback in feedback_texts:
        for line in feedback.splitlines():
            assert line.strip() in text, f"the page lacks the feedback line {line!r}"
    assert re.search(r"^\s*PASS\s", text, re.M) and re.search(r"^\s*FAIL\s", text, re.M)


@slow
def test_each_hint_of_a_failing_property_is_on_the_page_whole(browser, page, feedback_texts):
    failing = failing_properties(feedback_texts)
    assert failing, "the partial sample should fail some property"
    text = re.sub(r"\s+", " ", visible_text(chromium.dump_dom(browser, page)))
    for prop in failing:
        assert re.sub(r"\s+", " ", prop.hint) in text, f"the hint of {prop.name} is not whole on the page"


@slow
def test_no_feedback_line_reaches_past_its_output_box(browser, page, tmp_path):
    measured = chromium.measure(browser, page, tmp_path)
    assert measured["width"] == chromium.WIDTH
    boxes = [a for a in measured["areas"] if f"{ASSIGNMENT} / " in a["text"]]
    assert len(boxes) == 3, [a["text"][:80] for a in measured["areas"]]
    lines = [line for box in boxes for line in box["lines"]]
    assert any("FAIL" in line["text"] for line in lines), "no FAIL line was measured"
    cut = [line["text"][:100] for line in lines if line["overflows"]]
    assert not cut, f"lines reach past their output box at {chromium.WIDTH} px: {cut}"
    assert not [b["text"][:60] for b in boxes if b["scrolls"]], "an output box scrolls sideways"
    # The check has teeth only if some line is longer than the box: those must wrap.
    assert any(line["rows"] > 1 for line in lines), "no feedback line needed wrapping; the measure proves little"


@slow
def test_a_screenshot_of_the_page_is_not_blank(browser, page, tmp_path):
    png = chromium.screenshot(browser, page, tmp_path / "feedback.png", height=1400)
    summary = chromium.png_summary(png)
    assert (summary["width"], summary["height"]) == (chromium.WIDTH, 1400)
    assert summary["colours"] > 20, summary  # text, panels, syntax colours: not one flat colour
    assert 0.02 < summary["not_white"] < 0.9, summary
