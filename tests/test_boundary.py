"""The submission boundary (autograder/confinement/boundary.py): what a student hands in is read
only as regular files of its own, before nbgrader copies anything.

First the copy itself, entry by entry. Then the attacks of issue 35 through real nbgrader, as root
and as a plain user, through ``collect`` + ``autograde`` + ``generate_feedback`` and through the
parallel command: three students hand in through the exchange's ``inbound/`` folder, as
``nbgrader submit`` leaves it. ``victim`` hands in the correct sample. ``copycat`` hands in a link
to the victim's notebook. ``mallory`` hands in the correct sample beside links to the reference
notebook (hidden tests and solutions), the gradebook, ``/proc/self/environ``, ``/dev/ptmx`` (read
to its end, never ends) and ``/dev/zero`` (fills the disk), a named pipe, a hard link to the
reference, a sparse file of 200 MiB, a name with a newline, and a ``timestamp.txt`` that is a link
to ``/dev/ptmx``. The batch must end within its budget, the victim earn full points, the copycat
none, mallory the honest code's points, and no target's bytes reach any folder the students get
back (``submitted/``, ``autograded/``, ``feedback/``).
"""

from __future__ import annotations

import copy
import csv
import datetime
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, side_by_side
from test_student_text import _Elements

from autograder.confinement.boundary import RECORD, SubmissionBoundary, copy_submission

A = "static_max_mode"
#: Bytes of each link's target that must never reach a student's folder.
MARKERS = {
    "reference": b"### BEGIN SOLUTION",  # the reference notebook: solutions and hidden tests
    "gradebook": b"SQLite format 3",
    "environment": b"PATH=/",
}
#: A dangling link's name that is markup: refused, and named in every comment of the submission.
XSS_NAME = "<img src=x onerror=document.title='pwned'>"
#: A student id that adds a row's worth of columns to nbgrader's unquoted CSV.
FORGED_ID = "victim,,,,10.0,0.0,10.0,10.0"
BUDGET = 300  # seconds for the whole batch: generous for three notebooks, far below a hang


# ---------------------------------------------------------------- the copy, entry by entry


def limits(file_bytes=1 << 20, submission_bytes=3 << 20) -> SubmissionBoundary:
    return SubmissionBoundary(max_file_bytes=file_bytes, max_submission_bytes=submission_bytes)


def refused(src: Path, dest: Path, **kw) -> dict[str, str]:
    return {r.path: r.why for r in copy_submission(str(src), str(dest), kw.pop("limits", limits()), **kw).refused}


def test_regular_files_and_folders_are_copied_byte_for_byte(tmp_path):
    src = tmp_path / "in"
    (src / "data" / "deep").mkdir(parents=True)
    (src / "a.ipynb").write_bytes(b'{"cells": []}')
    (src / "data" / "deep" / "x.csv").write_bytes(bytes(range(256)))
    assert refused(src, tmp_path / "out") == {}
    assert (tmp_path / "out" / "a.ipynb").read_bytes() == b'{"cells": []}'
    assert (tmp_path / "out" / "data" / "deep" / "x.csv").read_bytes() == bytes(range(256))


def test_every_kind_of_entry_that_is_not_a_file_of_its_own_is_refused(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor only")
    (src / "ok.txt").write_text("mine")
    os.symlink(secret, src / "link.txt")
    os.symlink(tmp_path, src / "linked-folder")
    os.symlink("/dev/zero", src / "zero.txt")
    os.mkfifo(src / "pipe")
    os.link(secret, src / "hard.txt")
    (src / "bad\nname.txt").write_text("x")
    (src / RECORD).write_text("submission refused: nothing, honestly")
    got = refused(src, tmp_path / "out")
    assert got == {
        "link.txt": "is a symbolic link",
        "linked-folder": "is a symbolic link",
        "zero.txt": "is a symbolic link",
        "pipe": "is a named pipe",
        "hard.txt": "has 2 hard links (only a file of its own is read)",
        "bad\\nname.txt": "has a name with control characters",
        RECORD: "has a name the course keeps for its own notes",
    }, got
    assert sorted(os.listdir(tmp_path / "out")) == ["ok.txt"]


def test_a_device_node_is_refused_without_reading_it(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    src = tmp_path / "in"
    src.mkdir()
    os.mknod(src / "ptmx", 0o666 | stat.S_IFCHR, os.makedev(5, 2))  # /dev/ptmx: a read never ends
    began = time.monotonic()
    assert refused(src, tmp_path / "out") == {"ptmx": "is a character device"}
    assert time.monotonic() - began < 5


def test_sizes_count_at_their_apparent_size(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    with open(src / "sparse.bin", "wb") as f:
        f.truncate(2 << 20)  # no block written: 2 MiB all the same
    for name in ("one", "two", "three", "four"):
        (src / name).write_bytes(b"x" * (900 << 10))
    got = refused(src, tmp_path / "out", limits=limits(1 << 20, 3 << 20))
    assert got["sparse.bin"] == "is 2.0 MiB, over the course's 1.0 MiB per file", got
    over = [name for name, why in got.items() if why.startswith("would take the submission over")]
    assert len(over) == 1 and len(os.listdir(tmp_path / "out")) == 3, got


def test_the_submission_folder_itself_must_be_a_folder(tmp_path):
    target = tmp_path / "victim"
    target.mkdir()
    (target / "a.ipynb").write_text("the victim's work")
    os.symlink(target, tmp_path / "copycat")
    got = copy_submission(str(tmp_path / "copycat"), str(tmp_path / "out"), limits())
    assert got.sentences() == [
        "submission refused: copycat/ (the submission's folder) is a symbolic link"]
    assert os.listdir(tmp_path / "out") == []


def test_a_hard_link_is_read_in_the_course_own_folders(tmp_path):
    """``submitted/`` after a collect is the course's: a backup made with hard links must not
    cost anyone their notebook; in the exchange, where students write, the rule holds."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.ipynb").write_text("{}")
    os.link(src / "a.ipynb", tmp_path / "backup.ipynb")
    assert refused(src, tmp_path / "exchange-copy") == {"a.ipynb": "has 2 hard links (only a file of its own is read)"}
    assert refused(src, tmp_path / "course-copy", one_link=False) == {}


def test_a_folder_put_where_a_file_was_is_refused(tmp_path):
    """What was opened decides, not what the name was a moment before (a race in inbound/)."""
    from autograder.confinement.boundary import _Copy

    (tmp_path / "was-a-file").mkdir()
    copy = _Copy(limits(), [], (), True)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        copy.file(fd, "was-a-file", str(tmp_path / "copy"), "was-a-file")
    finally:
        os.close(fd)
    assert [r.sentence() for r in copy.refused] == ["submission refused: was-a-file changed while it was read"]


def test_a_timestamp_nbgrader_cannot_read_is_refused(tmp_path):
    for text in ("garbage", "9999-12-31 23:59:59 -1400", "1970-01-01 00:00:00 UTC", "2026-01-01 10:00:00 UTC"):
        src = tmp_path / f"in-{len(os.listdir(tmp_path))}"
        src.mkdir()
        (src / "timestamp.txt").write_text(text)
        got = refused(src, tmp_path / f"out-{src.name}")
        expected = {} if text.startswith("2026") else {"timestamp.txt": "does not hold a time nbgrader can read"}
        assert got == expected, (text, got)


def test_a_notebook_that_swells_when_parsed_is_refused_unparsed(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "swells.ipynb").write_text('{"cells": [' + ",".join(["[]"] * 600_000) + "]}")  # 1.2 MB, 600k values
    (src / "honest.ipynb").write_bytes((REPO / "tests" / "samples" / A / "correct.ipynb").read_bytes())
    got = refused(src, tmp_path / "out", limits=limits(8 << 20, 16 << 20))
    assert got == {"swells.ipynb": "is a notebook of more than 500,000 values once parsed (the course reads at most that)"}, got


def test_a_record_keeps_fifty_refusals_and_counts_the_rest(tmp_path):
    from autograder.confinement.boundary import read_record, write_record

    write_record(str(tmp_path), [f"submission refused: f{i} is a symbolic link" for i in range(120)])
    lines = read_record(str(tmp_path))
    assert len(lines) == 51 and lines[49] == "submission refused: f49 is a symbolic link"
    assert lines[50] == "submission refused: 70 more entries, each for a reason above"


# ---------------------------------------------------------------- real nbgrader


def _inbound(exchange: Path, course_id: str, student: str) -> Path:
    stamp = datetime.datetime.now(datetime.timezone.utc)
    folder = exchange / course_id / "inbound" / f"{student}+{A}+{stamp:%Y-%m-%d %H:%M:%S.%f} UTC+{os.urandom(4).hex()}"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text(f"{stamp:%Y-%m-%d %H:%M:%S.%f} UTC")
    return folder


def hand_in_the_attacks(course_root: Path, exchange: Path, course_id: str) -> None:
    """The three students' inbound folders, as nbgrader submit leaves them (plus the attacks)."""
    correct = REPO / "tests" / "samples" / A / "correct.ipynb"
    victim = _inbound(exchange, course_id, "victim")
    shutil.copyfile(correct, victim / f"{A}.ipynb")
    copycat = _inbound(exchange, course_id, "copycat")
    os.symlink(victim / f"{A}.ipynb", copycat / f"{A}.ipynb")
    mallory = _inbound(exchange, course_id, "mallory")
    shutil.copyfile(correct, mallory / f"{A}.ipynb")
    reference = course_root / "source" / A / f"{A}.ipynb"
    os.symlink(reference, mallory / "notes.txt")
    os.symlink(course_root / "gradebook.db", mallory / "grades.txt")
    os.symlink("/proc/self/environ", mallory / "env.txt")
    os.symlink("/dev/ptmx", mallory / "terminal.txt")
    os.symlink("/dev/zero", mallory / "zero.txt")
    os.mkfifo(mallory / "pipe")
    os.link(reference, mallory / "hard-link.txt")
    with open(mallory / "sparse.bin", "wb") as f:
        f.truncate(200 << 20)
    (mallory / "line\nbreak.txt").write_text("x")
    (mallory / "timestamp.txt").unlink()
    os.symlink("/dev/ptmx", mallory / "timestamp.txt")
    stamp = _inbound(exchange, course_id, "stamp")  # nbgrader's own collect stops for everyone on it
    shutil.copyfile(correct, stamp / f"{A}.ipynb")
    (stamp / "timestamp.txt").write_text("garbage")
    nameless = exchange / course_id / "inbound" / f"nameless+{A}+garbage+abcd"  # so does nbgrader's collect
    nameless.mkdir()
    shutil.copyfile(correct, nameless / f"{A}.ipynb")
    when = datetime.datetime.now(datetime.timezone.utc)
    os.symlink("/nonexistent", exchange / course_id / "inbound" / f"ghost+{A}+{when:%Y-%m-%d %H:%M:%S.%f} UTC+x")
    everyone = _inbound(exchange, course_id, "*")  # nbgrader's globs would grade every classmate in its turn
    shutil.copyfile(correct, everyone / f"{A}.ipynb")
    # Issue 51. A refused name that is markup, for the feedback page's comments.
    os.symlink("/nonexistent", mallory / XSS_NAME)
    # Marks nbgrader stops the whole autograde on (copied-cell sorts before the victim), and a stamp
    # two days older than the files.
    copied = _inbound(exchange, course_id, "copied-cell")
    nb = nbformat.read(correct, as_version=4)
    graded = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    nb.cells.append(copy.deepcopy(graded))
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")).metadata.nbgrader["schema_version"] = 4
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade": False}}))
    nbformat.write(nb, copied / f"{A}.ipynb")
    early = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2)
    (copied / "timestamp.txt").write_text(f"{early:%Y-%m-%d %H:%M:%S.%f} UTC")
    # Ids a CSV splits, or that look like the victim's.
    for forged in (FORGED_ID, "vіctim"):  # the second with a Cyrillic і
        shutil.copyfile(correct, _inbound(exchange, course_id, forged) / f"{A}.ipynb")


def check_the_batch(course_root: Path, log: str) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}") as gb:
        full = gb.find_assignment(A).max_code_score
        got = {s: gb.find_submission(A, s).code_score for s in ("victim", "copycat", "mallory", "stamp", "copied-cell")}
        assert {s.student.id for s in gb.assignment_submissions(A)} == set(got), "the nameless folder was collected"
        flagged = {s: all(nb.flagged for nb in gb.find_submission(A, s).notebooks) for s in got}
        comments = "\n".join(c.auto_comment or "" for nb in gb.find_submission(A, "copycat").notebooks
                             for c in nb.comments)
    assert got == {"victim": full, "copycat": 0, "mallory": full, "stamp": full, "copied-cell": full}, (got, log[-6000:])
    assert flagged == {"victim": False, "copycat": True, "mallory": True, "stamp": True, "copied-cell": True}, flagged
    refused_ids = [line for line in log.splitlines() if "Not collected: " in line and "names no student" in line]
    assert [n for n in (FORGED_ID, "vіctim") if not any(f"{n}+{A}+" in line for line in refused_ids)] == [], refused_ids
    marks = (course_root / "feedback" / "copied-cell" / A / RECORD).read_text()
    for line in ("submission flagged: timestamp.txt says", "shares grade id", "schema version 4", "schema version 0"):
        assert line in marks, marks
    assert "Not collected: the inbound folder nameless+" in log, log[-3000:]
    assert "Not collected: the inbound entry ghost+" in log and "Not collected: *+" in log, log[-3000:]
    assert "timestamp.txt does not hold a time nbgrader can read" in (course_root / "feedback" / "stamp" / A / RECORD).read_text()
    assert (course_root / "submitted" / "stamp" / A / "timestamp.txt").read_text().endswith(" UTC")
    assert not list(course_root.glob(".graded-submissions-*")), "a private copy was left behind"
    assert f"submission refused: {A}.ipynb is a symbolic link" in _rendered_text(comments), comments

    for step in ("submitted", "autograded", "feedback"):
        for student in ("copycat", "mallory"):
            folder = course_root / step / student / A
            assert folder.is_dir(), (folder, log[-4000:])
            for path in folder.rglob("*"):
                assert not path.is_symlink() and (path.is_dir() or path.is_file()), path
                if path.is_file():
                    data = path.read_bytes()
                    assert not any(m in data for m in MARKERS.values()), (path, [k for k, m in MARKERS.items() if m in data])
    record = (course_root / "feedback" / "mallory" / A / RECORD).read_text()
    for line in ("notes.txt is a symbolic link", "grades.txt is a symbolic link", "env.txt is a symbolic link",
                 "terminal.txt is a symbolic link", "zero.txt is a symbolic link", "pipe is a named pipe",
                 "hard-link.txt has 2 hard links", "sparse.bin is 200.0 MiB", "line\\nbreak.txt has a name with control",
                 "timestamp.txt is a symbolic link"):
        assert f"submission refused: {line}" in record, record
    page = (course_root / "feedback" / "mallory" / A / f"{A}.html").read_text()
    elements = _Elements()
    elements.feed(page)
    assert not [tag for tag in elements.tags if any(name.startswith("on") for name, _ in tag[1])], "a live handler"
    assert f"{XSS_NAME} is a symbolic link" in elements.text, "the refused name is not shown as its text"
    page = (course_root / "feedback" / "copycat" / A / f"{A}.html").read_text()
    assert "Your notebook was not graded" in page and f"{A}.ipynb is a symbolic link" in page
    assert "Some of what you handed in was not read" in (course_root / "feedback" / "mallory" / A / f"{A}.html").read_text()


def _rendered_text(markdown: str) -> str:
    """``markdown`` as the feedback page renders a comment, its tags dropped."""
    from nbconvert.filters.markdown import markdown2html

    elements = _Elements()
    elements.feed(markdown2html(markdown))
    return elements.text


def run(argv, cwd, user=None, env=None, timeout=BUDGET):
    from test_rootless import as_user

    began = time.monotonic()
    done = as_user(user, argv, cwd, env, timeout=timeout)
    return done, time.monotonic() - began


# Each path once per kind of user, within the CI budget: nbgrader's own autograde as root (the root
# jail) and the parallel command as a plain user (the rootless jail, two kernels side by side);
# BOUNDARY_WAYS=all adds the other two (both passed before this split).
_ALL_WAYS = os.environ.get("BOUNDARY_WAYS") == "all"


_AS_ROOT = ["nbgrader", "parallel"] if _ALL_WAYS else ["nbgrader"]
_AS_A_PLAIN_USER = ["nbgrader", "parallel"] if _ALL_WAYS else ["parallel"]


@pytest.fixture(scope="module")
def attacks(request, tmp_path_factory):
    """Every way's batch side by side (tests/conftest.py side_by_side): nbgrader as root mostly waits
    on one kernel, beside the plain user's two."""
    bodies = {f"test_the_attacks_through_real_nbgrader_as_root[{how}]":
              (lambda how=how: _attacks_as_root(tmp_path_factory.mktemp(f"boundary-root-{how}"), how))
              for how in _AS_ROOT}
    bodies.update({f"test_the_attacks_through_real_nbgrader_as_a_plain_user[{how}]":
                   (lambda how=how: _attacks_as_a_plain_user(how)) for how in _AS_A_PLAIN_USER})
    with side_by_side(request, bodies) as runs:
        yield runs


@pytest.mark.slow
@pytest.mark.parametrize("how", _AS_ROOT)
def test_the_attacks_through_real_nbgrader_as_root(request, attacks, how):
    attacks[request.node.name].result()


@pytest.mark.slow
@pytest.mark.parametrize("how", _AS_A_PLAIN_USER)
def test_the_attacks_through_real_nbgrader_as_a_plain_user(request, attacks, how):
    attacks[request.node.name].result()


def _attacks_as_root(tmp_path: Path, how: str) -> None:
    from autograder.tools import scratch

    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [A])
    hand_in_the_attacks(course.root, course.exchange, scratch.course_id())
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"}
    steps = [[sys.executable, "-m", "nbgrader", "collect", A]]
    steps += ([[sys.executable, "-m", "nbgrader", "autograde", A]] if how == "nbgrader" else
              [[sys.executable, "-m", "autograder", "autograde", A, "--workers", "2"]])
    steps += [[sys.executable, "-m", "nbgrader", "generate_feedback", A], [sys.executable, "-m", "nbgrader", "export"]]
    log = ""
    for argv in steps:
        done, seconds = run(argv, course.root, env=env)
        log += done.stdout + done.stderr
        assert done.returncode == 0, (argv, log[-6000:])
        print(f"{how}: {argv[3]} in {seconds:.1f} s")
    if how == "nbgrader":
        assert f"Autograded {A}: 5 students" in log, log[-3000:]
        assert "at the boundary: copied-cell, copycat, mallory, stamp" in log, log[-3000:]
    backup = tmp_path / "backup.ipynb"  # a backup made with hard links (cp -al) costs no one their notebook
    os.link(course.root / "submitted" / "victim" / A / f"{A}.ipynb", backup)
    done, _ = run([sys.executable, "-m", "nbgrader", "autograde", A, "--force", "--student", "victim"], course.root, env=env)
    assert done.returncode == 0 and "refused" not in done.stderr, done.stderr[-3000:]
    check_the_batch(course.root, log)
    with open(course.root / "grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert {len(row) for row in rows} == {11} and sorted(row[3] for row in rows[1:]) == [
        "copied-cell", "copycat", "mallory", "stamp", "victim"], rows


def _attacks_as_a_plain_user(how: str) -> None:
    from test_rootless import plain_environment

    user, base, bin_ = plain_environment()
    where = base / f"boundary-{how}"
    shutil.rmtree(where, ignore_errors=True)
    root = where / "course"
    shutil.copytree(REPO / "source" / A, root / "source" / A)
    shutil.copy(REPO / "course_config.py", root / "course_config.py")
    exchange = where / "exchange"
    (root / "nbgrader_config.py").write_text(
        f'c = get_config()\nload_subconfig("course_config.py")\nc.CourseDirectory.root = {str(root)!r}\n'
        f'c.Exchange.root = {str(exchange)!r}\nc.ExchangeCollect.check_owner = False\n')
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(where)], check=True)
    env = {"PATH": f"{bin_}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(bin_.parent)}
    done, _ = run([str(bin_ / "nbgrader"), "generate_assignment", A, "--force"], root, user, env)
    assert done.returncode == 0, done.stderr[-4000:]
    hand_in_the_attacks(root, exchange, "jax-tracing")
    subprocess.run(["chown", "-R", "--no-dereference", f"{user.pw_uid}:{user.pw_gid}", str(where)], check=True)
    grade = ([str(bin_ / "nbgrader"), "autograde", A] if how == "nbgrader" else
             [str(bin_ / "python"), "-m", "autograder", "autograde", A, "--workers", "2"])
    log = ""
    for argv in ([str(bin_ / "nbgrader"), "collect", A], grade, [str(bin_ / "nbgrader"), "generate_feedback", A]):
        done, seconds = run(argv, root, user, env)
        log += done.stdout + done.stderr
        assert done.returncode == 0, (argv, log[-6000:])
        print(f"plain user, {how}: {' '.join(argv[1:3])} in {seconds:.1f} s")
    assert "rootless jail" in log, log[-3000:]
    check_the_batch(root, log)


def test_a_killed_run_leaves_no_copy_for_long(tmp_path):
    """A private copy whose lock nobody holds (its run was killed) is removed by the next run; one
    whose run lives (the lock held, here by this very process) or that is being made is kept."""
    import fcntl

    from autograder.confinement.converters import _LOCK, STAGE_PREFIX, _remove_stale_stages

    for name in ("killed", "alive", "being-made"):
        (tmp_path / f"{STAGE_PREFIX}{name}").mkdir()
    for name in ("killed", "alive"):
        (tmp_path / f"{STAGE_PREFIX}{name}" / _LOCK).touch()
    held = os.open(tmp_path / f"{STAGE_PREFIX}alive" / _LOCK, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        _remove_stale_stages(str(tmp_path))
    finally:
        os.close(held)
    assert sorted(os.listdir(tmp_path)) == [f"{STAGE_PREFIX}alive", f"{STAGE_PREFIX}being-made"]


def test_what_a_student_controls_cannot_reach_further(tmp_path):
    """The second red-team pass: a timestamp whose zone names a file is not read at all; a student id
    that nbgrader's globs read as a pattern is refused; a count already in a record is carried on."""
    from autograder.confinement.boundary import kept, readable_time, usable_student_id

    assert readable_time("2026-01-01 10:00:00 /proc/kmsg") is None  # dateutil would open and read it
    assert readable_time("2026-01-01 10:00:00.5 UTC") is not None
    assert [usable_student_id(s) for s in ("alice", "*", "a?", "[ab]", ".hidden", "a/b")] == [True] + [False] * 5
    twice = kept(kept([f"submission refused: f{i} is a symbolic link" for i in range(60)]) + ["submission refused: x"])
    assert twice[-1] == "submission refused: 11 more entries, each for a reason above", twice[-2:]
