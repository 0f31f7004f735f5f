"""Does the course grade the same on a PostgreSQL gradebook as on nbgrader's SQLite file?

One real PostgreSQL server (:mod:`postgres`), three scratch courses with the same
submissions (the samples, faulty and hostile notebooks of ``test_parallel``):
``sqlite`` graded by plain ``nbgrader autograde`` into ``gradebook.db``; ``serial``
graded the same way into a PostgreSQL database its ``nbgrader_config.py`` names;
``parallel`` graded by the parallel command with ``--db-url`` into another, its
configuration naming SQLite. Every score must be the same. And a kernel that knows
where the server listens still cannot get in: the password is in the course's
configuration, which no kernel sees.
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import postgres
import pytest
import test_confinement as confinement
from test_parallel import ASSIGNMENT, CANNOT_GRADE, submissions

from autograder.tools import scratch

slow = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    folder = Path(tempfile.mkdtemp(prefix="autograder-postgres-"))  # the postgres user must reach it
    running = postgres.Server(folder)
    yield running
    running.stop()
    shutil.rmtree(folder, ignore_errors=True)


PROBE = "probe-environment"  # a correct notebook whose last cell names environment variables holding the password


def _with_last_cell(notebook: Path, out: Path, source: str) -> Path:
    nb = json.loads(notebook.read_text())
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None})
    out.write_text(json.dumps(nb))
    return out


def _last_output(course: scratch.ScratchCourse, student: str) -> str:
    nb = json.loads((course.root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    texts = (o.get("text", "") for o in nb["cells"][-1]["outputs"])
    return "".join(t if isinstance(t, str) else "".join(t) for t in texts)


@dataclass
class Graded:
    sqlite: scratch.ScratchCourse
    serial: scratch.ScratchCourse
    parallel: scratch.ScratchCourse
    parallel_output: str
    parallel_code: int


@pytest.fixture(scope="module")
def graded(server, tmp_path_factory) -> Graded:
    work = tmp_path_factory.mktemp("gradebooks")
    handed_in = submissions(work / "notebooks")
    probe = f"import os\nprint(sorted(k for k, v in os.environ.items() if 'AUTOGRADER_DB' in k or {server.password!r} in v))\n"
    handed_in[PROBE] = _with_last_cell(handed_in["sample-correct"], work / "notebooks" / "probe.ipynb", probe)
    when = datetime.datetime.now(datetime.timezone.utc)
    sqlite = scratch.prepare_course(work / "sqlite")
    serial = scratch.prepare_course(work / "serial", db_url=server.database("serial"))
    parallel_url = server.database("parallel")
    parallel = scratch.prepare_course(work / "parallel")  # its configuration names SQLite
    for course in (sqlite, serial):
        scratch.generate(course, [ASSIGNMENT])
    # The parallel course's assignment goes into the database the command line names.
    scratch.nbgrader(parallel, ["generate_assignment", ASSIGNMENT, f"--db={parallel_url}"], parallel.root)
    for course in (sqlite, serial, parallel):
        for sid, notebook in handed_in.items():
            scratch.place_submission(course, sid, ASSIGNMENT, notebook, when)
    with ThreadPoolExecutor(2) as pool:  # the two gradebooks side by side, each its own nbgrader command
        list(pool.map(lambda course: scratch.nbgrader(course, ["autograde", ASSIGNMENT], course.root, check=False),
                      (sqlite, serial)))  # one submission cannot be graded
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--workers", "2", "--db-url", parallel_url],
        cwd=parallel.root, capture_output=True, text=True,
    )
    return Graded(sqlite, serial, scratch.ScratchCourse(parallel.root, parallel_url), proc.stdout + proc.stderr,
                  proc.returncode)


@slow
def test_nbgrader_on_postgresql_gives_the_scores_it_gives_on_sqlite(graded):
    on_sqlite, on_postgres = scratch.read_scores(graded.sqlite), scratch.read_scores(graded.serial)
    assert on_postgres == on_sqlite
    assert len({s.points for s in on_sqlite.values()}) >= 3, on_sqlite  # not a vacuous comparison
    assert set(CANNOT_GRADE) & {sid for sid, _ in on_sqlite} == set()


@slow
def test_the_parallel_command_grades_into_the_gradebook_its_command_line_names(graded):
    assert graded.parallel_code == 1, graded.parallel_output  # the unreadable notebook fails alone
    assert scratch.read_scores(graded.parallel) == scratch.read_scores(graded.sqlite)
    assert not (graded.parallel.root / "gradebook.db").exists()  # the configured one was never made


@slow
def test_no_kernel_is_told_where_the_gradebook_is(graded):
    for course in (graded.serial, graded.parallel):
        assert _last_output(course, PROBE) == "[]\n"


def test_a_kernel_that_knows_where_the_server_listens_cannot_get_in(server, tmp_path):
    knock = f'''
import psycopg2
try:
    psycopg2.connect(host="127.0.0.1", port={server.port}, user="postgres", dbname="serial", connect_timeout=5)
    print("connected")
except psycopg2.OperationalError as error:
    print("asked for a password" if "password" in str(error) else "unreachable")
'''
    shown, _ = confinement._run(tmp_path, knock)
    assert shown == ["unreachable\n"], shown  # a network namespace of its own: not even the server's door
