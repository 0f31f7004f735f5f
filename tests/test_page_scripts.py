"""Does a student's script run on any page, and can it change a grade? In a real browser.

One scratch course, one assignment (``static_max_mode``), plain nbgrader. Two students hand in
the same hostile notebook (``tests/hostile/pages.py``): a "Pause and reason" answer holding a
``<script>``, an ``<img onerror>`` and an ``<svg onload>``, and a code cell that displays
``HTML('<script>...')``, ``Javascript(...)``, an SVG and markdown with the same script. The
script names the page ``INJECTED`` and, on formgrader's grading page, reads the ``_xsrf``
cookie and ``PUT``s 99 points on every grade of the submission on screen.

After a real ``nbgrader autograde`` (which runs ``SanitiseStudentContent``) and
``generate_feedback``, headless Chromium opens:

- the feedback page: the script does not run;
- the grading page in a real formgrader served with the course's ``jupyter_server_config.py``
  (the per-page content-security policy): the script does not run, the gradebook is unchanged,
  and formgrader's own inline scripts do run (they remove the ``data-link`` attributes);
- the control student's grading page, whose autograded notebook is put back unsanitised: with
  the policy the script still does not run (the policy alone holds); in a formgrader without
  the policy it runs and changes the grades (so the checks above have teeth).
"""

from __future__ import annotations

import copy
import re
import urllib.request
from pathlib import Path

import chromium
import nbformat
import pytest
from conftest import REPO
from hostile.notebooks import build, index_of
from hostile.pages import ANSWER_WITH_SCRIPT, BUILD, ENTRIES, MARK, RAW_OUTPUTS
from nbconvert import HTMLExporter
from test_formgrader import Server
from test_hostile import html_text

from autograder.grading.feedback import html_of
from autograder.tools import scratch

ASSIGNMENT = "static_max_mode"
STUDENT = "h-injects-script"
CONTROL = "h-injects-script-unsanitised"  # the same notebook, its autograded copy put back raw
slow = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> str:
    found = chromium.find_or_install()
    if not found:
        pytest.skip("no chromium: apt-get install -y chromium")
    return found


def _autograded(course: scratch.ScratchCourse, student: str):
    return course.root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def _unsanitised(nb):
    """The autograded notebook as it would be without the sanitiser: the raw answer, the raw outputs."""
    raw = copy.deepcopy(nb)
    raw.cells[index_of(raw, "pause_and_reason")].source = ANSWER_WITH_SCRIPT
    display = next(c for c in raw.cells if c.cell_type == "code" and "display(Javascript(payload))" in c.source)
    display.outputs = [nbformat.from_dict(o) for o in RAW_OUTPUTS]
    return raw


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> scratch.ScratchCourse:
    work = tmp_path_factory.mktemp("page-scripts")
    notebook = build(ASSIGNMENT, BUILD, work / f"{ASSIGNMENT}.ipynb")
    course = scratch.prepare_course(work / "course")
    scratch.generate(course, [ASSIGNMENT])
    for student in (STUDENT, CONTROL):
        scratch.place_submission(course, student, ASSIGNMENT, notebook)
    scratch.nbgrader(course, ["autograde", ASSIGNMENT], course.root)
    scratch.nbgrader(course, ["generate_feedback", ASSIGNMENT], course.root)
    path = _autograded(course, CONTROL)
    nbformat.write(_unsanitised(nbformat.read(path, as_version=4)), path)
    return course


def grades(course: scratch.ScratchCourse) -> dict:
    """Every grade of both students: (student, cell) -> (auto, manual, extra credit)."""
    with course.model().gradebook() as gb:
        return {(student, g.name): (g.auto_score, g.manual_score, g.extra_credit)
                for student in (STUDENT, CONTROL)
                for g in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).grades}


def grading_page(server: Server, student: str) -> str:
    submissions = server.request("GET", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    [found] = [s for s in submissions if s["student"] == student]
    return f"{server.base}/formgrader/submissions/{found['id']}?token={server.token}"


def title(dom: str) -> str:
    found = re.search(r"<title>(.*?)</title>", dom, re.S)
    return found.group(1).strip() if found else ""


@slow
def test_the_hostile_notebook_earns_its_honest_points_and_waits_for_a_grader(course):
    assert scratch.read_scores(course)[STUDENT, ASSIGNMENT].points == 8
    before = grades(course)
    assert before[STUDENT, "pause_and_reason"] == (None, None, None)


@slow
def test_the_autograded_notebook_shows_the_answer_as_text_and_drops_the_javascript(course):
    nb = nbformat.read(_autograded(course, STUDENT), as_version=4)
    answer = nb.cells[index_of(nb, "pause_and_reason")].source
    assert answer.startswith("*[autograder: this text held raw HTML") and ANSWER_WITH_SCRIPT in answer
    mimes = {m for c in nb.cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})}
    assert "application/javascript" not in mimes and "text/html" in mimes
    boxes = [o.data for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if o.get("data", {}).get("text/plain", "").startswith(f"{ASSIGNMENT} / ")]
    # The grader's own feedback boxes, byte for byte as the judge wrote them.
    assert len(boxes) == 4 and all(d["text/html"] == html_of(d["text/plain"]) for d in boxes)


@slow
def test_the_script_runs_on_an_unsanitised_feedback_page(course, browser, tmp_path):
    """The control: the same notebook, unsanitised, rendered as nbconvert renders feedback: the script runs."""
    raw = nbformat.read(_autograded(course, CONTROL), as_version=4)
    page = tmp_path / "unsanitised.html"
    page.write_text(HTMLExporter(template_name="classic").from_notebook_node(raw)[0], encoding="utf-8")
    assert title(chromium.dump_dom(browser, page)) == MARK


@slow
def test_no_script_runs_on_the_feedback_page(course, browser):
    page = course.feedback_dir / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"
    dom = chromium.dump_dom(browser, page)
    assert title(dom) != MARK and "this text held raw HTML" in dom
    for entry in ENTRIES:  # what the hostile batch looks for on each entry's own page
        assert re.search(entry.feedback, html_text(page)), entry.name


@pytest.fixture(scope="module")
def guarded(course, tmp_path_factory):
    """formgrader as the README starts it: with the course's jupyter_server_config.py."""
    running = Server(course.root, tmp_path_factory.mktemp("guarded"), config=REPO / "jupyter_server_config.py")
    try:
        yield running
    finally:
        running.stop()


@slow
def test_formgrader_pages_carry_the_policy(course, guarded):
    log = Path(guarded.log.name).read_text()
    assert "formgrader pages are served with a per-page content-security policy" in log, log[-3000:]
    request = urllib.request.Request(grading_page(guarded, STUDENT))
    with guarded.opener.open(request, timeout=30) as response:
        policy = response.headers["Content-Security-Policy"]
    assert "script-src " in policy and "'unsafe-inline'" not in policy and "'sha256-" in policy, policy


@slow
def test_formgraders_own_scripts_all_run_under_the_policy(course, guarded, browser):
    """On the sanitised submission's grading page the browser refuses nothing: every script
    formgrader's page holds is allowed (its files, its inline scripts by hash, its two handlers)."""
    def refused(student: str) -> list[str]:
        proc = chromium._run(browser, "--enable-logging=stderr", "--v=0", "--dump-dom", grading_page(guarded, student))
        assert "<html" in proc.stdout.lower(), proc.stderr[-2000:]
        return [line for line in proc.stderr.splitlines() if "Content Security Policy" in line]

    assert not refused(STUDENT), refused(STUDENT)[:3]
    assert refused(CONTROL), "the unsanitised page's scripts were not reported refused: the check proves nothing"


@slow
@pytest.mark.parametrize("student", [STUDENT, CONTROL], ids=["sanitised", "unsanitised-policy-alone"])
def test_no_script_runs_in_formgrader_and_no_grade_changes(course, guarded, browser, student):
    before = grades(course)
    dom = chromium.dump_dom_url(browser, grading_page(guarded, student))
    assert "Student's answer" in dom and "choose" in dom  # the page was drawn
    assert "data-link=" not in dom, "formgrader's own inline script did not run under the policy"
    assert title(dom) != MARK, "the student's script ran in formgrader"
    assert grades(course) == before


@slow
def test_without_the_policy_the_unsanitised_script_runs_and_changes_grades(course, browser, tmp_path):
    """The control in formgrader: no policy, the unsanitised notebook: the attack of the review works."""
    server = Server(course.root, tmp_path)
    try:
        before = grades(course)
        dom = chromium.dump_dom_url(browser, grading_page(server, CONTROL))
    finally:
        server.stop()
    assert title(dom) == MARK
    after = grades(course)
    changed = {key for key in after if after[key] != before[key]}
    assert changed and all(student == CONTROL for student, _ in changed), changed
