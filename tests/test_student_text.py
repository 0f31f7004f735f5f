"""What a student names reaches the instructor's pages and files as text (issue 51).

A student chooses file names, folder names in ``inbound/`` (their student id) and the nbgrader
marks of their notebook's cells. Each test here is one attack of the red team's, on the function
at the boundary that stops it; ``tests/test_boundary.py`` runs them through real nbgrader.
"""

from __future__ import annotations

import copy
import csv
import html.parser
import io
import os

import nbformat
import pytest
from conftest import REPO

A = "static_max_mode"
RELEASED = REPO / "release" / A / f"{A}.ipynb"


# ---------------------------------------------------------------- a name in a comment


class _Elements(html.parser.HTMLParser):
    """A page's start tags with their attributes, and its text."""

    def __init__(self):
        super().__init__()
        self.tags, self.text = [], ""

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text += data


NAMES = [
    "<img src=x onerror=alert(document.cookie)>",
    "<script>fetch('/formgrader/api/grade/1',{method:'PUT'})</script>",
    "[click](javascript:alert(1))",
    "![x](x onerror=alert(1))",
    "`<b>` **bold** _it_ ~~gone~~ |a|b|",
    "&lt;img src=x onerror=alert(1)&gt;",
    "$<img src=x onerror=alert(1)>$",
    "a\\<b> \\x1b[31m",
    "<https://example.com> http://example.com",
    r"\(\href{http://example.invalid}{click}\) \[\class{x}{y}\] \begin{align}x\end{align}",
    "``` ``fence`` `",
    "` starts and ends `",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_refused_name_renders_as_its_own_text_in_a_comment(name):
    """``generate_feedback`` renders a comment with ``markdown2html``: the refusal's line must come
    out as one paragraph of exactly its text (a ``$`` as MathJax's escaped dollar), no element in it."""
    from nbconvert.filters.markdown import markdown2html

    from autograder.confinement.sanitise import literal_markdown

    line = f"submission refused: {name} is a symbolic link"
    page = _Elements()
    page.feed(markdown2html(literal_markdown(line)))
    assert [tag for tag, _ in page.tags] == ["p", "code"], page.tags  # MathJax skips <code>
    assert page.text.strip() == line, page.text


# ---------------------------------------------------------------- student ids


def test_an_id_a_csv_or_a_spreadsheet_would_split_or_run_is_refused():
    from autograder.confinement.boundary import usable_student_id

    refused = ["rt3mal,,,,10.0,0.0,10.0,10.0", "a;b", "a\tb", 'a"b', "a'b", "a|b", "=HYPERLINK(\"x\")",
               "+1", "-x", "@SUM(A1)", " alice", "alice ", "ａｌｉｃｅ",  # fullwidth: not NFKC
               "аlice",  # a Cyrillic а, then Latin: two scripts in one id
               "*", "a?", ".hidden", "a/b"]
    assert [s for s in refused if usable_student_id(s)] == []
    kept = ["alice", "h-rewrites-replies", "sample-correct", "jane.doe", "josé", "иван", "たなか太郎", "a-1", "x_y"]
    assert [s for s in kept if not usable_student_id(s)] == []


def test_an_id_that_is_markup_is_refused():
    """formgrader's grading page writes the id into its HTML unescaped (``formgrade_macros.html.j2``,
    ``{{ resources.student }}``; nbconvert's templates do not escape): ``<plaintext>`` ends the page for
    the grader, ``<img src=http:host>`` calls out. The page's policy stops script, not markup."""
    from autograder.confinement.boundary import usable_student_id

    assert [s for s in ("<plaintext>", "<img src=x onerror=alert(1)>", "a<b", "a>b", "a&amp;b", "&lt;b&gt;")
            if usable_student_id(s)] == []


def test_a_lookalike_of_an_existing_id_is_named():
    from autograder.confinement.student_ids import lookalike

    assert lookalike("аlісе", {"alice", "bob"}) == "alice"  # all Cyrillic look-alikes of Latin letters
    assert lookalike("αlιcε", {"alice"}) == "alice"  # Greek letters too
    assert lookalike("иван", {"ivan", "alice"}) is None  # a Cyrillic name is no disguise of a Latin one
    assert lookalike("ассе", {"acce"}) == "acce"
    assert lookalike("alice", {"аlісе"}) is None  # the ASCII id is the student
    assert lookalike("josé", {"jose"}) is None  # an accent makes another name
    assert lookalike("Alice", {"alice"}) is None  # case alone: another account, as Linux has it


def test_the_export_is_csv_that_no_field_leaves_or_runs(tmp_path):
    """nbgrader's export joins fields unquoted: an id with commas writes a row of its own."""
    from nbgrader.api import Gradebook

    from autograder.confinement.csv_export import QuotedCsvExport

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_assignment(A)
        gb.add_student("victim", first_name="=HYPERLINK(\"http://x\",\"y\")", last_name="O'Brien, Jr.")
        gb.add_student("rt3mal,,,,10.0,0.0,10.0,10.0\nstatic_max_mode,,,forged")
        QuotedCsvExport(to=str(tmp_path / "grades.csv")).export(gb)
    rows = list(csv.reader(io.StringIO((tmp_path / "grades.csv").read_text(), newline="")))
    assert len(rows) == 3 and {len(row) for row in rows} == {11}, rows
    by_id = {row[3]: row for row in rows[1:]}
    assert by_id["victim"][5] == "'=HYPERLINK(\"http://x\",\"y\")" and by_id["victim"][4] == "O'Brien, Jr.", by_id
    assert "rt3mal,,,,10.0,0.0,10.0,10.0\nstatic_max_mode,,,forged" in by_id, by_id


def test_course_config_names_the_quoted_export():
    from traitlets.config import Config, PyFileConfigLoader

    config = PyFileConfigLoader("course_config.py", path=str(REPO)).load_config()
    assert isinstance(config, Config)
    assert config.ExportApp.plugin_class == "autograder.confinement.csv_export.QuotedCsvExport"


# ---------------------------------------------------------------- nbgrader's marks on cells


def _known():
    from autograder.confinement.cell_marks import KnownCell

    nb = nbformat.read(RELEASED, as_version=4)
    return {c.metadata.nbgrader["grade_id"]: KnownCell(c.cell_type, dict(c.metadata.nbgrader))
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")}


def _first(nb, flag):
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get(flag))


def _nbgrader_validates(nb) -> bool:
    """What nbgrader runs on every notebook (DeduplicateIds, then CheckCellMetadata's validator)."""
    from nbgrader.nbgraderformat import MetadataValidator
    from nbgrader.preprocessors import DeduplicateIds

    nb = copy.deepcopy(nb)
    DeduplicateIds().preprocess(nb, {})
    try:
        MetadataValidator().validate_nb(nb)
    except Exception:  # noqa: BLE001 - SchemaTooOldError, SchemaTooNewError, ValidationError
        return False
    return True


def test_each_attack_on_the_marks_is_one_nbgrader_stops_on():
    """The attacks themselves, checked against nbgrader's own validation: the test below means something."""
    for attack in (_copied_grade_cell, _schema_four_answer, _marks_on_an_own_cell):
        assert not _nbgrader_validates(attack()), attack.__name__


def _copied_grade_cell():
    nb = nbformat.read(RELEASED, as_version=4)
    nb.cells.append(copy.deepcopy(nb.cells[_first(nb, "grade")]))  # as Jupyter copies and pastes a cell
    return nb


def _schema_four_answer():
    nb = nbformat.read(RELEASED, as_version=4)
    nb.cells[_first(nb, "solution")].metadata.nbgrader["schema_version"] = 4
    return nb


def _marks_on_an_own_cell():
    nb = nbformat.read(RELEASED, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("points = 100", metadata={"nbgrader": {"grade": False}}))
    return nb


@pytest.mark.parametrize("attack", [_copied_grade_cell, _schema_four_answer, _marks_on_an_own_cell])
def test_marks_nbgrader_stops_on_are_made_ones_it_accepts(attack):
    from autograder.confinement.cell_marks import accepted, check_marks

    nb = attack()
    changed = check_marks(nb, _known(), f"{A}.ipynb")
    assert len(changed) == 1 and changed[0].path.startswith(f"{A}.ipynb, cell "), changed
    assert _nbgrader_validates(nb) and accepted(nb, _known())


def test_no_mark_earns_a_point_the_gradebook_does_not_give():
    """Marks that make an own cell a grade cell of 100 points, and a grade cell whose points were
    raised and schema broken: the first loses its marks, the second gets the gradebook's back."""
    from autograder.confinement.cell_marks import check_marks

    nb = nbformat.read(RELEASED, as_version=4)
    graded = _first(nb, "grade")
    real = dict(nb.cells[graded].metadata.nbgrader)
    nb.cells[graded].metadata.nbgrader.update(points=100, schema_version=2)
    nb.cells.append(nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "grade_id": "free_points", "points": 100, "locked": True, "solution": False,
        "schema_version": 3}}))
    changed = check_marks(nb, _known(), f"{A}.ipynb")
    assert "nbgrader" not in nb.cells[-1].metadata and "free_points" in changed[-1].why, changed
    assert nb.cells[graded].metadata.nbgrader["points"] == real["points"], nb.cells[graded].metadata


def test_an_honest_notebook_is_left_as_it_is():
    from autograder.confinement.cell_marks import check_marks

    nb = nbformat.read(REPO / "tests" / "samples" / A / "correct.ipynb", as_version=4)
    before = copy.deepcopy(nb)
    assert check_marks(nb, _known(), f"{A}.ipynb") == [] and nb == before


# ---------------------------------------------------------------- what is copied first


def test_the_notebook_is_copied_before_a_crowd_of_files(tmp_path):
    """3,000 files in ``many/`` (sorted before the notebook's name) used to take every one of the
    1,000 entries a submission may hold: the notebook itself was refused, and its refusal cut off."""
    from autograder.confinement.boundary import MAX_ENTRIES, SubmissionBoundary, copy_submission, kept

    src = tmp_path / "in"
    (src / "many").mkdir(parents=True)
    for i in range(MAX_ENTRIES + 200):
        (src / "many" / f"{i:04}").write_text("x")
    (src / f"{A}.ipynb").write_bytes((REPO / "tests" / "samples" / A / "correct.ipynb").read_bytes())
    copied = copy_submission(str(src), str(tmp_path / "out"), SubmissionBoundary(), first=(f"{A}.ipynb",))
    assert (tmp_path / "out" / f"{A}.ipynb").is_file()
    assert not [s for s in kept(copied.sentences()) if A in s], kept(copied.sentences())[:3]
    entries = 1 + 1 + MAX_ENTRIES + 200  # the notebook, many/ and its files
    assert len(copied.refused) == entries - MAX_ENTRIES, len(copied.refused)  # the crowd's tail, past the entries


def test_a_back_dated_stamp_goes_into_the_record(tmp_path):
    """The stamp's line is the record's first, so autograde flags the notebook and says why."""
    import datetime
    import os

    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.confinement.converters import BoundedCollect
    from autograder.confinement.boundary import read_record

    config = Config()
    config.CourseDirectory.root = str(tmp_path / "course")
    config.CourseDirectory.course_id = "jax-tracing"
    config.CourseDirectory.assignment_id = A
    collect = BoundedCollect(coursedir=CourseDirectory(config=config), config=config)
    src = tmp_path / "inbound" / f"late+{A}+2026-01-01 10:00:00.000000 UTC+x"
    src.mkdir(parents=True)
    (src / f"{A}.ipynb").write_text("{}")
    stamped = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=3)
    (src / "timestamp.txt").write_text(f"{stamped:%Y-%m-%d %H:%M:%S.%f} UTC")
    os.makedirs(tmp_path / "course")
    collect.do_copy(str(src), str(tmp_path / "out"))
    lines = read_record(str(tmp_path / "out"))
    assert lines and lines[0].startswith("submission flagged: timestamp.txt says") and "stamped early" in lines[0], lines


def test_one_submission_nbgrader_stops_on_costs_only_itself(monkeypatch, tmp_path):
    """nbgrader's loop raises at the first schema error, and the students after are never graded:
    the course's runs it one submission at a time, and fails at the end naming the one."""
    from nbgrader.converters import Autograde
    from nbgrader.converters.base import NbGraderException
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.confinement.converters import BoundedAutograde

    graded = []

    def nbgraders_loop(self):
        for key in sorted(self.assignments):
            if "attacker" in key:
                raise NbGraderException("One or more notebooks in the assignment use an newer version")
            graded.append(key.rsplit("/", 2)[1])

    monkeypatch.setattr(Autograde, "convert_notebooks", nbgraders_loop)
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    app = BoundedAutograde(coursedir=CourseDirectory(config=config), config=config)
    app._stage_root = str(tmp_path)
    app.assignments = {str(tmp_path / s / A): [] for s in ("aaa-attacker", "bob", "carol")}
    with pytest.raises(NbGraderException, match="1 submission.*aaa-attacker"):
        app.convert_notebooks()
    assert graded == ["bob", "carol"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="gives inbound folders to other accounts")
def test_a_student_account_hands_in_for_itself_alone_and_a_shared_account_for_anyone(tmp_path):
    """``BoundedCollect._impostor`` through ``init_src``, with real accounts of this machine as owners:
    ``daemon`` and ``bin`` are students (accounts, ``bin`` also in the gradebook), ``nobody`` is a
    shared account that is no student (as ``jovyan`` on a hub). A student's folder for another id,
    an account's or not, is not collected; the shared account hands in for ids that are no account."""
    import datetime
    import pwd

    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.confinement.converters import BoundedCollect

    uid = {name: pwd.getpwnam(name).pw_uid for name in ("daemon", "bin", "nobody")}
    (tmp_path / "course").mkdir()
    db = f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}"
    with Gradebook(db, "jax-tracing") as gb:
        gb.add_assignment(A)
        gb.add_student("bin")
    inbound = tmp_path / "exchange" / "jax-tracing" / "inbound"
    inbound.mkdir(parents=True)
    when = datetime.datetime.now(datetime.timezone.utc)
    handed_in = {  # (the id the folder names, its owner) -> collected?
        ("daemon", "daemon"): True,   # a student for itself
        ("bin", "bin"): True,
        ("daemon", "bin"): False,     # a student for another student who is an account
        ("alice", "daemon"): False,   # a student (handing in as itself) for an id that is no account
        ("carol", "bin"): False,      # a student (in the gradebook) for an id that is no account
        ("alice", "nobody"): True,    # a shared account, no student: the name is the only word there is
        ("carol", "nobody"): True,
        ("dave", "nobody"): True,
        ("dave", "daemon"): False,    # newer than the shared account's folder for dave, and refused
        ("nobody", "daemon"): False,  # naming a folder for the shared account makes it no student
    }
    for i, (student, owner) in enumerate(handed_in):
        folder = inbound / f"{student}+{A}+{when:%Y-%m-%d %H:%M:%S}.{i:06d} UTC+{i}"
        folder.mkdir()
        os.chown(folder, uid[owner], -1)
    config = Config()
    config.CourseDirectory.root = str(tmp_path / "course")
    config.CourseDirectory.course_id = "jax-tracing"
    config.CourseDirectory.assignment_id = A
    config.CourseDirectory.db_url = db
    config.Exchange.root = str(tmp_path / "exchange")

    def collected(student: str = "") -> set[tuple[str, str]]:
        config.CourseDirectory.student_id = student
        collect = BoundedCollect(coursedir=CourseDirectory(config=config), config=config)
        collect.check_owner = True
        collect.init_src()
        return {(r["filename"].split("+")[0], pwd.getpwuid(os.lstat(inbound / r["filename"]).st_uid).pw_name)
                for r in collect.src_records}

    # one record per id (the newest folder it may hand in), so each id's owner stands alone
    assert collected() == {("daemon", "daemon"), ("bin", "bin"), ("alice", "nobody"), ("carol", "nobody"),
                           ("dave", "nobody")}
    # collecting one student still knows who hands in under their own name
    assert collected("dave") == {("dave", "nobody")}
