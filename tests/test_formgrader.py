"""Can an instructor grade the "Pause and reason" answers by hand in nbgrader's formgrader?

After plain nbgrader has generated the assignment and autograded one sample
submission (``tests/graded_course.py``), a real Jupyter server with nbgrader's formgrader extension is started
in the course folder, on 127.0.0.1 only, at a free port, with a random token. The
test then does what the formgrader page does when a grader types a score and a
comment: it calls the same REST endpoints
(``nbgrader/server_extensions/formgrader/apihandlers.py``)::

    GET /formgrader/api/submitted_notebooks/<assignment>/<notebook>   the submission's id
    GET /formgrader/api/grades?submission_id=ID                       its grades (ids, names)
    PUT /formgrader/api/grade/<grade id>     {"manual_score": ..., "extra_credit": ...}
    GET /formgrader/api/comments?submission_id=ID
    PUT /formgrader/api/comment/<comment id> {"manual_comment": ...}

with the token and the ``_xsrf`` cookie the page sends. The score and comment must
then be in the gradebook (nbgrader's own ``Gradebook`` API) and in ``nbgrader
export``'s CSV. The server is stopped at the end; every wait is bounded.
"""

from __future__ import annotations

import http.cookiejar
import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import chromium
import graded_course
import pytest
from conftest import REPO
from nbgrader.api import Gradebook

from autograder.tools import scratch
from autograder.tools.repository import tool_env

ASSIGNMENT = "branch_repair"
STUDENT = "sample-correct"
MANUAL_CELL = "pause_and_reason"  # the "Pause and reason" answer, a markdown cell graded by hand
SCORE = 1.5
COMMENT = "Right about the retrace per gain; say also why a static float is hashed by value."
STARTUP_SECONDS = 90
slow = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A ``jupyter server`` in the course folder and an HTTP client that talks to it as the page does."""

    def __init__(self, root: Path, work: Path, config: Path | None = None):
        """``config``: a jupyter_server_config.py to start with (it names the extensions), else
        formgrader's extension alone, named on the command line (which would replace the file's)."""
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        env = tool_env()
        for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR"):
            env[name] = str(work / name.lower())
        self.log = (work / "server.log").open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "jupyter_server",
                "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}", "--ServerApp.open_browser=False",
                f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
                f"--config={config}" if config else "--ServerApp.jpserver_extensions=nbgrader.server_extensions.formgrader=True",
            ],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self._wait_until_up(work / "server.log")

    def _wait_until_up(self, log: Path) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter server exited ({self.proc.returncode}):\n{log.read_text()[-3000:]}")
            try:
                self.request("GET", "/formgrader/api/status")
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        raise RuntimeError(f"jupyter server did not answer in {STARTUP_SECONDS} s:\n{log.read_text()[-3000:]}")

    def _xsrf(self) -> str | None:
        for handler in self.opener.handlers:
            jar = getattr(handler, "cookiejar", None)
            if jar is not None:
                return next((c.value for c in jar if c.name == "_xsrf"), None)
        return None

    def request(self, method: str, path: str, body: dict | None = None, raw: bool = False):
        headers = {"Authorization": f"token {self.token}"}
        if method != "GET" and self._xsrf():
            headers["X-XSRFToken"] = self._xsrf()
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with self.opener.open(request, timeout=30) as response:
            payload = response.read().decode()
        return payload if raw else json.loads(payload)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> scratch.ScratchCourse:
    notebook = REPO / "tests" / "samples" / ASSIGNMENT / "correct.ipynb"
    return graded_course.autograded(tmp_path_factory.mktemp("formgrader") / "course", ASSIGNMENT, STUDENT, notebook)


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    running = Server(course.root, tmp_path_factory.mktemp("jupyter"))
    try:
        yield running
    finally:
        running.stop()
        assert running.proc.poll() is not None, "the jupyter server is still running"


def gradebook(course: scratch.ScratchCourse) -> Gradebook:
    return Gradebook(f"sqlite:///{course.root / 'gradebook.db'}")


@slow
def test_the_answer_waits_for_a_grader_after_autograde(course):
    with gradebook(course) as gb:
        grade = gb.find_grade(MANUAL_CELL, ASSIGNMENT, ASSIGNMENT, STUDENT)
        assert grade.auto_score is None and grade.manual_score is None and grade.needs_manual_grade
        assert grade.max_score == 2


@slow
def test_a_grader_scores_and_comments_the_answer_through_the_formgrader_api(course, server):
    # The page the grader opens is served (token in the header, as the page's own calls send it).
    [submission] = server.request("GET", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    assert submission["student"] == STUDENT and submission["needs_manual_grade"]
    page = server.request("GET", f"/formgrader/submissions/{submission['id']}", raw=True)
    assert MANUAL_CELL in page and "Student's answer" in page
    assert server._xsrf(), "the formgrader page sets no _xsrf cookie"

    grades = {g["name"]: g for g in server.request("GET", f"/formgrader/api/grades?submission_id={submission['id']}")}
    updated = server.request("PUT", f"/formgrader/api/grade/{grades[MANUAL_CELL]['id']}",
                             {"manual_score": SCORE, "extra_credit": None})
    assert updated["manual_score"] == SCORE and not updated["needs_manual_grade"]

    comments = {c["name"]: c for c in server.request("GET", f"/formgrader/api/comments?submission_id={submission['id']}")}
    said = server.request("PUT", f"/formgrader/api/comment/{comments[MANUAL_CELL]['id']}", {"manual_comment": COMMENT})
    assert said["manual_comment"] == COMMENT

    [after] = server.request("GET", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    assert not after["needs_manual_grade"]


@slow
def test_the_score_and_comment_reach_the_gradebook_and_the_export(course, server):
    auto = scratch.read_scores(course)[STUDENT, ASSIGNMENT].points
    assert auto == 6  # every automatic point of the correct sample
    with gradebook(course) as gb:
        grade = gb.find_grade(MANUAL_CELL, ASSIGNMENT, ASSIGNMENT, STUDENT)
        assert grade.manual_score == SCORE and grade.score == SCORE and not grade.needs_manual_grade
        assert gb.find_comment(MANUAL_CELL, ASSIGNMENT, ASSIGNMENT, STUDENT).comment == COMMENT
        assert gb.find_submission(ASSIGNMENT, STUDENT).score == auto + SCORE
    scratch.nbgrader(course, ["export", "--to", str(course.grades_csv)], course.root)
    [row] = [r for r in scratch.read_grades_csv(course) if r["student_id"] == STUDENT]
    assert float(row["score"]) == auto + SCORE
    assert float(row["max_score"]) == auto + 2  # the sample's automatic points are all of them


@slow
def test_the_server_listens_on_loopback_only_and_wants_the_token(server):
    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None  # an unauthenticated GET is sent to the login page: see where, do not follow

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.build_opener(Stay).open(f"{server.base}/formgrader/api/status", timeout=10)
    assert refused.value.code in (401, 403) or (
        refused.value.code == 302 and "/login" in refused.value.headers["Location"]
    ), (refused.value.code, dict(refused.value.headers))
    with pytest.raises(urllib.error.HTTPError) as wrong:
        request = urllib.request.Request(f"{server.base}/formgrader/api/grade/x", data=b"{}", method="PUT",
                                         headers={"Authorization": "token not-the-token"})
        urllib.request.build_opener(Stay).open(request, timeout=10)
    assert wrong.value.code in (401, 403), wrong.value.code
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    ours = [line.split()[1] for line in listening if line.split()[1].endswith(f":{server.port:04X}")]
    assert ours and all(address.startswith("0100007F:") for address in ours), ours


@slow
def test_the_grading_page_shows_the_feedback_in_a_browser(course, server, tmp_path):
    """The page a grader works in, in headless Chromium (skipped without it): served, drawn, the
    grade cells' feedback inside their boxes, the answer's score box there."""
    binary = chromium.find_or_install()
    if not binary:
        pytest.skip("no chromium: apt-get install -y chromium")
    [submission] = server.request("GET", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    url = f"{server.base}/formgrader/submissions/{submission['id']}?token={server.token}"
    dom = chromium.dump_dom_url(binary, url)
    assert f"{ASSIGNMENT} / repair: 3 of 3 points" in dom and "PASS" in dom
    assert 'class="autograder-feedback"' in dom
    summary = chromium.png_summary(chromium.screenshot_url(binary, url, tmp_path / "formgrader.png", height=1400))
    assert summary["colours"] > 20 and 0.02 < summary["not_white"] < 0.9, summary
