"""Autograde workers: long-lived processes that each grade one student at a time
with nbgrader's own ``NbGraderAPI.autograde``, so Python and nbgrader start once per
run instead of once per student.

    python -m autograder.tools.parallel.worker --channels R:W[,R:W...]
    python -m autograder.tools.parallel.worker --discard ASSIGNMENT STUDENT...

Started by :mod:`autograder.tools.parallel.run` in the course root, where it loads
``nbgrader_config.py`` exactly as ``nbgrader autograde`` does. The process imports
nbgrader once and then forks itself, one worker per channel (a pair of pipe
descriptors the coordinator made: tasks in, results out), before any of them has
opened a gradebook or started a kernel. Protocol, one JSON object per line: a
``{"ready": ...}`` line from each worker, then one reply per request. The first
worker also answers ``{"plan": ...}``: which students to grade and which are done
already (:func:`autograder.tools.parallel.state.plan`), so the coordinator itself never
imports nbgrader (nor does a Dask driver: a worker's grading process answers its plan).
Standard output is pointed at standard error, so nothing nbgrader or Jupyter prints can
corrupt a reply; the end of a worker's channel ends it.

SIGINT stops the student in progress the way Ctrl-C stops ``nbgrader
autograde``: nbgrader removes that student's half-written output, and the
worker reports ``"interrupted"`` and exits. If the process that started the
worker disappears, the worker is killed at once (``PR_SET_PDEATHSIG``, with a watch
of its parent as fallback); its kernel follows (ipykernel exits when its parent
changes, a forked kernel's monitor kills it when its client goes), and the
half-written student is found and regraded by the next run. Each grading holds the
student's lock (:func:`autograder.tools.parallel.state.student_lock`), so no two
workers, on one machine or several, grade the same student at once. The forked
workers are children of the first: they end with it, and it waits for them, so
their CPU time is counted.

A request may name its ``"run"``. A process that serves several runs (a Dask worker's,
:mod:`autograder.tools.parallel.cluster`, kept between one assignment's run and the next)
reads the course's configuration again at the first request of each later run (its plan, or
its first student), as a new ``nbgrader autograde`` would; its imports and its fork server are
kept.

``--discard`` removes half-written gradings of students whose worker was killed
mid-grading (:func:`autograder.tools.parallel.state.discard_partial`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import logging
import os
import re
import resource
import signal
import sys
import threading
import time

from autograder.tools.course import Course, with_busy_timeout

#: Extra attempts for a student whose grading still met a locked gradebook.
LOCKED_RETRIES = 3

_interrupted = threading.Event()


#: The gradebook's URL when the command line gave one (``--db-url``). An environment
#: variable, not an argument: any process may read another's command line, a kernel too.
DB_URL_ENV = "AUTOGRADER_DB_URL"


def open_api(db_url: str | None):
    """nbgrader's API, configured from the working folder as ``nbgrader autograde`` would be,
    with the gradebook ``db_url`` if given (the command line's, :data:`DB_URL_ENV`)."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.apps.autogradeapp import AutogradeApp

    from autograder.grading import judge

    app = AutogradeApp(raise_config_file_errors=True)  # nbgrader's default: log it, go on without the rest
    app.initialize([])
    app.coursedir.db_url = with_busy_timeout(db_url or app.coursedir.db_url)
    judge.preload()  # before this process forks its workers
    return NbGraderAPI(coursedir=app.coursedir, parent=app)


def grade(api, request: dict) -> dict:
    """Answer one grading request, holding the student's lock (:func:`state.student_lock`).

    A request with an ``"expect"`` (the :func:`state.graded_mark` its run planned with) may
    be a second attempt of one task: if the student's grading is no longer what the run saw,
    another attempt of the run graded it, and its points are the reply, graded once."""
    from autograder.tools.errors import ParallelError
    from autograder.tools.parallel import state

    assignment, student = request["assignment"], request["student"]
    course = Course(api.coursedir)
    start = time.monotonic()
    try:
        with state.student_lock(course, assignment, student):
            if "expect" in request:
                with course.gradebook() as gb:
                    mark = state.graded_mark(course, gb, assignment, student)
                if mark is not None and mark != request["expect"]:
                    return {"student": student, "success": True, "interrupted": False, "already": True,
                            "seconds": time.monotonic() - start, "log": "",
                            **points_of(course, assignment, student), "cpu_seconds": _cpu()}
            return grade_one(api, assignment, student, request.get("force", True))
    except ParallelError as error:
        return {"student": student, "success": False, "interrupted": False, "seconds": time.monotonic() - start,
                "log": str(error), "error": str(error), "cpu_seconds": _cpu()}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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
        outcome.update(points_of(Course(api.coursedir), assignment, student))
    else:
        outcome["error"] = gist(log)
    if _interrupted.is_set():
        outcome["complete"] = _keep_only_complete(api, assignment, student)
    outcome["cpu_seconds"] = _cpu()
    return outcome


def _keep_only_complete(api, assignment: str, student: str) -> bool:
    """After an interrupt: remove the student's grading unless it is complete; whether it is."""
    from autograder.tools.parallel import state

    course = Course(api.coursedir)
    state.discard_partial(course, assignment, student)
    with course.gradebook() as gb:
        return state.is_complete(course, gb, assignment, student)


def points_of(course: Course, assignment: str, student: str) -> dict:
    """Automatic points of the autograder tests (code grade cells that are not answers)."""
    from autograder.tools.gradebook import automatic_points

    with course.gradebook() as gb:
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


#: prctl(2)'s option: the signal this process gets when the thread that started it ends.
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Be killed the moment the process that started this one dies (a Dask worker SIGKILLed,
    say), so that no grading outlives it; :func:`_watch_parent` is the slower fallback.

    Linux ties the signal to the *thread* that forked: a cluster task starts its grader
    from a worker thread that lives as long as the worker (:mod:`autograder.tools.parallel.cluster`)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _watch_parent(parent: int) -> None:
    """Kill this process once ``parent`` is no longer its parent."""
    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _on_sigint(signum, frame):
    _interrupted.set()
    raise KeyboardInterrupt


def _channels(text: str) -> list[tuple[int, int]]:
    try:
        pairs = [tuple(int(fd) for fd in pair.split(":")) for pair in text.split(",")]
    except ValueError:
        pairs = []
    if not pairs or any(len(pair) != 2 for pair in pairs):
        raise SystemExit(f"worker: --channels wants R:W[,R:W...], not {text!r}")
    return pairs


def _fork_workers(channels: list[tuple[int, int]]) -> tuple[tuple[int, int], list[int]]:
    """One process per channel: this one takes the first; (its channel, the other workers' pids)."""
    children = []
    for index, channel in enumerate(channels[1:], start=1):
        pid = os.fork()
        if pid == 0:
            _die_with_parent()  # the setting is cleared in a fork's child
            for other in channels[:index] + channels[index + 1:]:
                for fd in other:
                    os.close(fd)
            return channel, []
        children.append(pid)
        for fd in channel:
            os.close(fd)
    return channels[0], children


def _take_db_url() -> str | None:
    """The gradebook named by :data:`DB_URL_ENV`, taken out of the environment: no kernel inherits it."""
    return os.environ.pop(DB_URL_ENV, None)


def serve(api, tasks, results, kernels: dict, reopen=None) -> int:
    """Answer requests on ``tasks`` until it closes; 130 after an interrupt, 1 when a later run
    finds the course's configuration broken. ``reopen`` gives the API afresh for a later run."""
    def send(message: dict) -> None:
        results.write(json.dumps(message) + "\n")

    send({"ready": True, "pid": os.getpid(), **kernels})
    run = None
    for line in tasks:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("run") != run:
            if run is not None and reopen is not None:
                try:
                    api = reopen()
                except (Exception, SystemExit) as error:  # noqa: BLE001 - the course's config, as the next run finds it
                    send({"student": request.get("student"), "success": False, "interrupted": False, "ended": True,
                          "seconds": 0.0, "error": f"autograde: nbgrader could not load the course's configuration "
                                                   f"again: {type(error).__name__}: {error}", "cpu_seconds": _cpu()})
                    return 1
            run = request.get("run")
        if "plan" in request:
            send(plan(api, **request["plan"]))
            continue
        send(grade(api, request))
        if _interrupted.is_set():
            return 130
    return 0


def plan(api, assignment: str, students: list[str] | None, force: bool, create: bool = False,
         remote: list[str] = ()) -> dict:
    """The coordinator's first question (a Dask driver's too), answered here, where nbgrader is
    loaded: :func:`state.plan`'s answer, and whether the course lets kernels run unconfined.
    With ``create``, every student to grade is then added to the gradebook before any grading
    (:meth:`Course.add_students` says why). A SQLite
    gradebook is refused, unread, when workers run on ``remote`` machines."""
    from autograder.tools.errors import ParallelError
    from autograder.tools.parallel import state

    course = Course(api.coursedir)
    refusal = state.sqlite_refusal(course.db_url, list(remote))
    if refusal:
        return {"error": refusal}
    try:
        planned = state.plan(course, assignment, students, force)
        if create:
            course.add_students(planned["marks"])
        return {"plan": planned, "allow_unconfined": _allow_unconfined(api)}
    except ParallelError as error:
        return {"error": str(error)}
    except Exception as error:  # noqa: BLE001 - whatever the course's folders hold, the coordinator is told why
        return {"error": f"autograde: reading the course to plan failed: {type(error).__name__}: {error}"}


def _kernels(api) -> dict:
    """How this course's kernels start here, for the coordinator's screen: ``fork_server`` (whether
    they come from one, else one started for us is idle) and what
    :func:`~autograder.confinement.kernel_manager.confinement_on_screen` says of their jail."""
    from traitlets.utils.importstring import import_item

    from autograder.confinement import kernel_manager
    from autograder.confinement.preprocessors import ConfinedExecute

    preprocessors = api.config.get("Autograde", {}).get("autograde_preprocessors", [])
    # A class, or its import path as nbconvert takes it (course_config.py names ConfinedExecute so).
    preprocessors = [import_item(p) if isinstance(p, str) else p for p in preprocessors]
    confined = any(isinstance(p, type) and issubclass(p, ConfinedExecute) for p in preprocessors)
    settings = api.config.get("ConfinedKernelManager", {})
    forks = confined and bool(settings.get("fork_server", True)) and kernel_manager.can_confine()
    return {"fork_server": forks, **kernel_manager.confinement_on_screen(_allow_unconfined(api))}


def _allow_unconfined(api) -> bool:
    """``c.ConfinedKernelManager.allow_unconfined``, as the course's configuration says."""
    return bool(api.config.get("ConfinedKernelManager", {}).get("allow_unconfined", False))


def discard(assignment: str, students: list[str]) -> int:
    from autograder.tools.parallel import state

    course = Course(open_api(_take_db_url()).coursedir)
    for student in students:
        state.discard_partial(course, assignment, student)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--discard"] and len(argv) > 2:
        return discard(argv[1], argv[2:])
    if len(argv) != 2 or argv[0] != "--channels":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    started_by = os.getppid()
    _die_with_parent()
    channels = _channels(argv[1])
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, _on_sigint)
    db_url = _take_db_url()
    try:
        api = open_api(db_url)
    except (Exception, SystemExit) as error:
        for _, out in channels:
            os.write(out, (json.dumps({"ready": False, "error": f"{type(error).__name__}: {error}"}) + "\n").encode())
        return 1
    kernels = _kernels(api)  # asked once: the jail's probe is cached for every fork
    first = os.getpid()
    (tasks, results), children = _fork_workers(channels)  # before any thread, gradebook or kernel
    _watch_parent(started_by if os.getpid() == first else first)
    with os.fdopen(tasks, "r") as task_lines, os.fdopen(results, "w", buffering=1) as result_lines:
        try:
            code = serve(api, task_lines, result_lines, kernels, reopen=lambda: open_api(db_url))
        except KeyboardInterrupt:  # Ctrl-C while waiting for a task
            code = 130
    for child in children:  # so that their CPU time reaches the coordinator's
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child, 0)
    # Every reply is written and every gradebook write committed: run the exit handlers (a fork
    # server of this worker's own is closed by one) and leave without tearing down nbgrader's
    # modules, which only keeps the coordinator waiting.
    atexit._run_exitfuncs()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
