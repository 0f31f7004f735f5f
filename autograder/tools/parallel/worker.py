"""One autograde worker: a long-lived process that grades one student at a time
with nbgrader's own ``NbGraderAPI.autograde``, so Python and nbgrader start once
per worker instead of once per student.

Started by :mod:`autograder.tools.parallel.run` as ``python -m autograder.tools.parallel.worker``
in the course root, where it loads ``nbgrader_config.py`` exactly as
``nbgrader autograde`` does. Protocol, one JSON object per line: tasks
``{"assignment", "student", "force"}`` on stdin; a ``{"ready": ...}`` line, then
one result per task, on the file descriptor that was stdout when it started
(stdout itself is pointed at stderr, so nothing nbgrader or Jupyter prints can
corrupt a result line). End of stdin ends the worker.

SIGINT stops the student in progress the way Ctrl-C stops ``nbgrader
autograde``: nbgrader removes that student's half-written output, and the
worker reports ``"interrupted"`` and exits. If the process that started the
worker disappears, the worker kills itself at once; its kernel follows (ipykernel
exits when its parent changes), and the half-written student is found and
regraded by the next run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from urllib.parse import parse_qsl, urlsplit

#: Seconds a gradebook write waits for another writer before SQLite gives up.
BUSY_TIMEOUT = 120
#: Extra attempts for a student whose grading still met a locked gradebook.
LOCKED_RETRIES = 3

_interrupted = threading.Event()


def with_busy_timeout(db_url: str, seconds: float = BUSY_TIMEOUT) -> str:
    """A SQLite URL with a busy timeout (pysqlite's ``?timeout=``); other URLs unchanged."""
    parts = urlsplit(db_url)
    if not parts.scheme.startswith("sqlite") or "timeout" in dict(parse_qsl(parts.query)):
        return db_url
    return f"{db_url}{'&' if parts.query else '?'}timeout={seconds:g}"


def open_api():
    """nbgrader's API, configured from the working folder as ``nbgrader autograde`` would be."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.apps.autogradeapp import AutogradeApp

    app = AutogradeApp()
    app.initialize([])
    app.coursedir.db_url = with_busy_timeout(app.coursedir.db_url)
    return NbGraderAPI(coursedir=app.coursedir, parent=app)


def grade_one(api, assignment: str, student: str, force: bool) -> dict:
    """Autograde one student; return the outcome and, when graded, the gradebook's points."""
    start = time.monotonic()
    for attempt in range(LOCKED_RETRIES + 1):
        result = api.autograde(assignment, student, force=force, create=True)
        log = (result.get("log") or "") + (result.get("error") or "")
        if result["success"] or _interrupted.is_set() or "database is locked" not in log or attempt == LOCKED_RETRIES:
            break
        force = True  # nbgrader removed the failed output; grade it again from scratch
        time.sleep(0.5 + attempt)
    outcome = {
        "student": student,
        "success": bool(result["success"]),
        "interrupted": _interrupted.is_set(),
        "seconds": time.monotonic() - start,
        "log": log,
    }
    if result["success"]:
        outcome.update(points_of(api.coursedir.db_url, assignment, student))
    else:
        outcome["error"] = gist(log)
    return outcome


def points_of(db_url: str, assignment: str, student: str) -> dict:
    """Automatic points of the autograder tests (code grade cells that are not answers)."""
    from nbgrader.api import Gradebook

    from autograder.tools.gradebook import automatic_points

    with Gradebook(db_url) as gb:
        earned, possible = automatic_points(gb, assignment, student)
        return {"points": earned, "max_points": possible}


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b(: .*)?$")


def gist(log: str) -> str:
    """The one line that says why nbgrader could not grade a student."""
    lines = [line.strip() for line in log.splitlines()]
    named = [line for line in lines if _EXCEPTION_LINE.match(line) and "NbGraderException" not in line]
    if named:
        text = named[-1]
    else:
        errors = [line for line in lines if line.startswith("[ERROR]")]
        text = errors[0].removeprefix("[ERROR]").strip() if errors else (lines[-1] if lines else "no output")
    return text if len(text) <= 300 else text[:297] + "..."


def _watch_parent() -> None:
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _on_sigint(signum, frame):
    _interrupted.set()
    raise KeyboardInterrupt


def main() -> int:
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    _watch_parent()
    signal.signal(signal.SIGINT, _on_sigint)

    def send(message: dict) -> None:
        results.write(json.dumps(message) + "\n")

    try:
        api = open_api()
    except (Exception, SystemExit) as error:
        send({"ready": False, "error": f"{type(error).__name__}: {error}"})
        return 1
    send({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        send(grade_one(api, task["assignment"], task["student"], task.get("force", True)))
        if _interrupted.is_set():
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
