"""A course as nbgrader's configuration in its folder describes it: where its students' submissions
and graded notebooks lie, and its gradebook.

The one model of a course that the course's commands read it through: the parallel command and
its Dask path (:mod:`autograder.tools.parallel`), the class report (:mod:`autograder.tools.report`),
the line ``nbgrader autograde`` ends with (:mod:`autograder.tools.summary`), and the scratch courses
of the demo, the bench and the tests (:mod:`autograder.tools.scratch`). Which of a notebook's grades
are automatic points is :func:`autograder.tools.gradebook.is_automatic_grade`.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import threading
from contextlib import chdir
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from autograder.confinement.boundary import usable_student_id
from autograder.tools.errors import ToolError

#: Seconds a SQLite writer waits for another's lock before nbgrader sees "database is locked".
BUSY_TIMEOUT = 120


def with_busy_timeout(db_url: str, seconds: float = BUSY_TIMEOUT) -> str:
    """A SQLite URL with a busy timeout (pysqlite's ``?timeout=``); other URLs unchanged."""
    parts = urlsplit(db_url)
    if not parts.scheme.startswith("sqlite") or "timeout" in dict(parse_qsl(parts.query)):
        return db_url
    return f"{db_url}{'&' if parts.query else '?'}timeout={seconds:g}"


@dataclass(frozen=True)
class Course:
    """A course: nbgrader's ``CourseDirectory`` as its configuration made it, and the gradebook a
    command line named."""

    coursedir: object  # nbgrader.coursedir.CourseDirectory
    #: The gradebook where it is not the one the configuration names (a command line's --db-url).
    gradebook_url: str | None = None

    @property
    def root(self) -> Path:
        return Path(self.coursedir.root)

    @property
    def course_id(self) -> str:
        return self.coursedir.course_id

    @property
    def db_url(self) -> str:
        """The gradebook's SQLAlchemy URL; a SQLite file's waits for another writer's lock."""
        return with_busy_timeout(self.gradebook_url or self.coursedir.db_url)

    def using(self, db_url: str | None) -> Course:
        """This course with the gradebook at ``db_url`` (None: the configuration's)."""
        return dataclasses.replace(self, gradebook_url=db_url) if db_url else self

    def gradebook(self):
        from nbgrader.api import Gradebook

        return Gradebook(self.db_url, self.course_id)

    def add_students(self, students) -> None:
        """Every one of ``students`` in the gradebook, made now where missing: two processes that grade
        the same new student at once would both create them, and one would fail that student (a
        unique violation), so whatever grades students side by side adds them first."""
        with self.gradebook() as gb:
            for student in sorted(set(students)):
                gb.update_or_create_student(student)

    def folder(self, step: str, student: str, assignment: str) -> Path:
        """A student's folder of an assignment at ``step`` (``submitted``, ``autograded``, ``feedback``)."""
        return Path(self.coursedir.format_path(getattr(self.coursedir, f"{step}_directory"), student, assignment))

    def submitted(self, student: str, assignment: str) -> Path:
        return self.folder("submitted", student, assignment)

    def autograded(self, student: str, assignment: str) -> Path:
        return self.folder("autograded", student, assignment)

    def pattern(self, step: str, assignment: str = "*") -> str:
        """Every student's folder of ``assignment`` at ``step``, as a glob."""
        return str(self.folder(step, "*", assignment))

    def students(self, step: str, assignment: str) -> dict[str, Path]:
        """The students with a folder of ``assignment`` at ``step``, found as ``nbgrader autograde``
        finds submissions (ids nbgrader is told to exclude, and ids no student could have, left out),
        in order of their ids."""
        one = self.coursedir.format_path(getattr(self.coursedir, f"{step}_directory"), "(?P<student_id>[^/]+)",
                                         re.escape(assignment), escape=True)
        regexp = re.compile(one + "$")
        excluded = set(filter(None, self.coursedir.student_id_exclude.split(",")))
        found = {}
        for path in glob.glob(self.pattern(step, assignment)):
            m = regexp.match(path)
            if m and os.path.isdir(path) and m["student_id"] not in excluded and usable_student_id(m["student_id"]):
                found[m["student_id"]] = Path(path)
        return dict(sorted(found.items()))

    def assignments(self, step: str) -> set[str]:
        """The assignments any student has a folder of at ``step``."""
        return {Path(path).name for path in glob.glob(self.pattern(step)) if os.path.isdir(path)}


_LOADING = threading.Lock()


def load(course_dir: Path, command: str = "autograde", require_config: bool = False) -> Course:
    """The course in ``course_dir``, its configuration read as ``nbgrader autograde`` run there reads
    it. Raises :class:`ToolError`, naming ``command``, when there is no such folder, when
    ``require_config`` and it holds no ``nbgrader_config.py``, or when nbgrader cannot read the
    configuration."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    course_dir = Path(course_dir).resolve()
    if not course_dir.is_dir():
        raise ToolError(f"{command}: course folder {course_dir} does not exist")
    if require_config and not (course_dir / "nbgrader_config.py").is_file():
        raise ToolError(f"{command}: {course_dir} has no nbgrader_config.py; run the command in the course folder "
                        "or give it with --course-dir")
    try:
        with _LOADING, chdir(course_dir):  # nbgrader reads the working folder's config, and roots the course there
            app = AutogradeApp(raise_config_file_errors=True)  # nbgrader's default: log it, go on without the rest
            app.initialize([])
            coursedir = app.coursedir
            coursedir.root  # noqa: B018 - the default is the working folder: resolve it while we are there
    except Exception as error:  # noqa: BLE001 - a broken config: said in one line
        raise ToolError(f"{command}: nbgrader could not read the course's configuration in {course_dir}: "
                        f"{type(error).__name__}: {error}") from None
    return Course(coursedir)
