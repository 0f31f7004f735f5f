"""``python -m autograder report ASSIGNMENT``: what a class got right and wrong, on one HTML page.

Run in the course folder after autograding (like nbgrader). Two sources, read
independently of each other:

- the gradebook (nbgrader's, at the URL of the course's nbgrader config) gives each
  student's automatic points (the histogram and the mean) and, apart, the points of the
  answers graded by hand in formgrader, or that they are not graded yet;
- the autograded notebooks, ``autograded/<student>/<assignment>/*.ipynb``, read as
  plain JSON, give the feedback text the grade cells printed
  (:mod:`autograder.grading.feedback`): which property passed or failed, with the
  failure's Problem/Example/Got/Expected lines, and the error outputs nbgrader's side
  left (a kernel that died, grading that was tampered with, a cell that timed out);
  and what the submission boundary refused of each submission
  (:data:`autograder.confinement.boundary.RECORD`, one sentence a line, in the same folder).

The page, ``reports/<assignment>.html`` in the course folder, is self-contained
(charts are inline SVG drawn with matplotlib's Agg backend) and every piece of
text from a notebook or the gradebook is HTML-escaped: student text is hostile.

Bad input never stops the report: a missing gradebook, a notebook that is not
JSON, a grade cell without feedback each become a line under "Problems" (and on
stderr), and the rest is reported.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder.confinement.boundary import RECORD, read_record
from autograder.confinement.boundary import shown as escaped
from autograder.grading.cells import GRADE_CALL, is_autograder_test
from autograder.grading.registry import assignments as course_assignments
from autograder.grading.registry import properties_of
from autograder.tools.course import Course, load
from autograder.tools.errors import ToolError
from autograder.tools.gradebook import is_automatic_grade
from autograder.tools.words import counted

REPORTS_DIR = "reports"
#: Problem sentences shown per failing property, most frequent first.
TOP_PROBLEMS = 5
_SUMMARY_NAMES = 8  # flagged students named in the terminal summary; the page lists all
_SUMMARY_PROBLEMS = 10  # problems printed on stderr; the page lists all
_SUMMARY_REFUSED = 8  # refused submissions printed in the terminal summary; the page lists all
_SHOWN_CHARS = 400  # a student's error message can be any length

# ---------------------------------------------------------------- what the grade cells print

_HEADER = re.compile(r"^(?P<assignment>\S+) / (?P<group>\S+): (?P<earned>\S+) of (?P<possible>\S+) points$")
_RESULT = re.compile(r"^  (?P<verdict>PASS|FAIL)  (?P<title>.*) \((?P<earned>\S+) of (?P<points>\S+)\)$")
_FIELD = re.compile(r"^ {8}(?P<label>Problem|Example|Got|Expected|Hint):")
_FIELD_TEXT = 18  # the text starts here: eight spaces, then the label and its colon padded to ten
_CONTINUATION = " " * 8

# ---------------------------------------------------------------- limits and tampering, in the code's words

TIME_LIMIT = "time limit"
MEMORY_LIMIT = "memory limit"
DEAD_KERNEL = "dead kernel"
TAMPERING = "tampering"
REACHES = "reaches into the grader"
#: Error outputs nbgrader's side writes into a cell (ename -> kind):
#: KernelDied, NotebookTimeout and KernelUnresponsive by autograder.confinement.preprocessors (the notebook's budget),
#: CellTimeoutError and KeyboardInterrupt by nbgrader's Execute when a cell runs past ``Execute.timeout``.
_ERROR_KINDS = {
    "KernelDied": DEAD_KERNEL,
    "NotebookTimeout": TIME_LIMIT,
    "KernelUnresponsive": TIME_LIMIT,
    "CellTimeoutError": TIME_LIMIT,
    "KeyboardInterrupt": TIME_LIMIT,
    "MemoryError": MEMORY_LIMIT,
}
#: Problem sentences of a failing property (autograder.grading.grade._run_one and _tampering,
#: autograder.grading.submission.describe_error, autograder.kit traces/compiles/host_reads).
_PROBLEM_KINDS = (
    (re.compile(r"^Time limit: "), TIME_LIMIT),
    (re.compile(r"^Memory limit: "), MEMORY_LIMIT),
    (re.compile(r"MemoryError|ran out of the grading kernel's memory"), MEMORY_LIMIT),
    (re.compile(r"^Tampering: "), TAMPERING),
    (re.compile(r"^Withheld: "), REACHES),
)
#: The line a grade cell of a notebook that reaches into the grader starts with
#: (autograder.grading.feedback.render of a report with a notice, autograder.grading.reach.sentence).
_NOTE = re.compile(r"^  NOTE  (?P<text>Reaches into the grader: .*)$")
_WITHHELD = "Withheld: "
#: The line a grade cell judged with a kernel of another JAX than the judge's starts with
#: (autograder.grading.judge.another_jax), with the kernel's versions and the judge's.
_OTHER_JAX = re.compile(r"^  NOTE  Graded by a kernel with (?P<kernel>jax [^,]*, jaxlib [^,]*), "
                        r"while the grader runs (?P<judge>jax [^,]*, jaxlib [^:]*):")

# ---------------------------------------------------------------- grouping similar sentences

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])|(?<![\w])-?(?:nan|inf)(?![\w])")
_RUN = re.compile(r"#(?:, #)+")


def normalise(sentence: str) -> str:
    """The sentence with addresses and numbers replaced, so failures that differ only in
    the values shown group together: ``float32[3] [1.5, -2.0, 3.0]`` -> ``float32[#] [#, …]``."""
    text = _ADDRESS.sub("0x…", sentence)
    text = _NUMBER.sub("#", text)
    text = _RUN.sub("#, …", text)
    return " ".join(text.split())


# ---------------------------------------------------------------- the data


@dataclass(frozen=True)
class Failure:
    """One failing property of one student, as its feedback block says it."""

    student: str
    problem: str = ""
    example: str = ""
    got: str = ""
    expected: str = ""


@dataclass
class PropertyStats:
    name: str
    group: str
    points: float
    title: str
    hint: str
    passed: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    #: Students whose grade cell for this group printed no feedback (it errored or never ran).
    ungraded: list[str] = field(default_factory=list)

    @property
    def students(self) -> int:
        return len(self.passed) + len(self.failures) + len(self.ungraded)

    @property
    def failing(self) -> int:
        """Students who did not pass: a FAIL block, or no feedback at all."""
        return len(self.failures) + len(self.ungraded)

    @property
    def pass_rate(self) -> float:
        return len(self.passed) / self.students if self.students else math.nan

    def problems(self, top: int = TOP_PROBLEMS) -> list[tuple[str, int, str]]:
        """(normalised sentence, students, one sentence as printed), most frequent first."""
        counts: Counter[str] = Counter()
        shown: dict[str, str] = {}
        for f in self.failures:
            key = normalise(f.problem or "(no problem sentence)")
            counts[key] += 1
            shown.setdefault(key, f.problem)
        return [(key, n, shown[key]) for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]

    @property
    def minimal_example(self) -> Failure | None:
        """The failure with the shortest Example line (ties: the first student by name)."""
        with_example = [f for f in self.failures if f.example]
        return min(with_example, key=lambda f: (len(f.example), f.example, f.student), default=None)


@dataclass(frozen=True)
class Flag:
    """A student whose grading hit a limit or found tampering: someone should look."""

    student: str
    kind: str  # TIME_LIMIT, MEMORY_LIMIT, DEAD_KERNEL or TAMPERING
    where: str  # the cell or property
    detail: str  # the sentence the output holds


@dataclass
class Reaching:
    """A notebook that reaches into the grader: what its feedback says, and what was withheld."""

    student: str
    detail: str  # the feedback's sentence: which constructs, in which cells
    withheld: list[str] = field(default_factory=list)  # "group / title" of each withheld check
    withheld_points: float = 0.0


@dataclass
class StudentResult:
    student: str
    #: Automatic points from the gradebook (None: not in it, or not fully autograded).
    score: float | None = None
    max_score: float | None = None
    #: Points the feedback headers add up to (None: no readable feedback).
    feedback_score: float | None = None
    notebooks: int = 0
    #: Answers graded by hand (formgrader), apart from the automatic points: the points given so far,
    #: what they are worth, how many answers there are and how many are not graded yet.
    hand_score: float = 0.0
    hand_max: float = 0.0
    hand_answers: int = 0
    hand_ungraded: int = 0
    #: What the submission boundary refused of this submission, one sentence each (its record's lines).
    refused: list[str] = field(default_factory=list)

    def hand_shown(self) -> str:
        """``1.5/2``, ``-/2 (not graded yet)``, ``1/4 (1 of 2 answers not graded yet)``; empty without such answers."""
        if not self.hand_answers:
            return ""
        if self.hand_ungraded == self.hand_answers:
            return f"-/{self.hand_max:g} (not graded yet)"
        rest = (f" ({self.hand_ungraded} of {counted(self.hand_answers, 'answer')} not graded yet)"
                if self.hand_ungraded else "")
        return f"{self.hand_score:g}/{self.hand_max:g}{rest}"


@dataclass
class ClassReport:
    """Everything the page shows, as numbers a test can compare."""

    assignment: str
    students: dict[str, StudentResult]
    properties: list[PropertyStats]  # hardest first
    flags: list[Flag]
    problems: list[str]
    max_score: float | None
    gradebook_read: bool
    path: Path | None = None
    seconds: float = 0.0
    #: Notebooks that reach into the grader, by student (their evidence points were withheld).
    reaching: list[Reaching] = field(default_factory=list)

    @property
    def scores(self) -> dict[str, float]:
        """The histogram's data: each student's automatic points from the gradebook, or, without
        a gradebook, what the feedback headers add up to."""
        out = {}
        for sid, s in self.students.items():
            value = s.score if self.gradebook_read else s.feedback_score
            if value is not None:
                out[sid] = value
        return out

    def histogram(self) -> dict[float, int]:
        """Students per point total, as the histogram draws them."""
        return dict(sorted(Counter(self.scores.values()).items()))

    @property
    def mean_score(self) -> float:
        values = list(self.scores.values())
        return sum(values) / len(values) if values else math.nan

    @property
    def hand_max(self) -> float:
        """What the answers graded by hand are worth (0 without such answers, or without a gradebook)."""
        return max((s.hand_max for s in self.students.values()), default=0.0)

    def hand_graded(self) -> list[str]:
        """The students whose every answer graded by hand has its points."""
        return [sid for sid, s in self.students.items() if s.hand_answers and not s.hand_ungraded]

    @property
    def refused(self) -> dict[str, list[str]]:
        """Each student with something refused at the submission boundary, and the record's sentences."""
        return {sid: s.refused for sid, s in sorted(self.students.items()) if s.refused}

    def hardest(self, n: int = 3) -> list[PropertyStats]:
        return [p for p in self.properties if p.students][:n]

    def failing_counts(self) -> dict[str, int]:
        return {p.name: p.failing for p in self.properties if p.failing}

    def pass_counts(self) -> dict[str, int]:
        return {p.name: len(p.passed) for p in self.properties}


# ---------------------------------------------------------------- the course


def _load_course(course_dir: Path) -> Course:
    """The course in ``course_dir``, as ``nbgrader autograde`` run there reads it."""
    return load(course_dir, "report", require_config=True)


def _sqlite_file(url: str) -> Path | None:
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///").split("?")[0])
    return None


def _gradebook_scores(course: Course, assignment: str, problems: list[str]) -> tuple[dict | None, set[str]]:
    """{student: (points, max, complete, hand points, hand max, hand answers, hand ungraded)}: the autograder
    tests' points, and apart those of the answers graded by hand, with one query; None without a gradebook.
    Also the assignments the gradebook knows."""
    db = _sqlite_file(course.db_url)
    if db is not None and not db.is_file():  # opening it would create an empty one
        problems.append(
            f"no gradebook at {db}: scores come from the feedback the notebooks printed "
            "(run `nbgrader autograde` in the course folder to make one)"
        )
        return None, set()
    from nbgrader.api import Assignment, GradeCell, Grade, Notebook, Student
    from nbgrader.api import SubmittedAssignment, SubmittedNotebook

    try:
        with course.gradebook() as gb:
            known = {a.name for a in gb.assignments}
            if assignment not in known:
                return {}, known
            answers = {
                (nb.name, cell.name) for nb in gb.find_assignment(assignment).notebooks for cell in nb.solution_cells
            }
            rows = (
                gb.db.query(Student.id, Notebook.name, GradeCell.name, GradeCell.cell_type, GradeCell.max_score,
                            Grade.auto_score, Grade.manual_score)
                .select_from(Grade)
                .join(GradeCell, Grade.cell_id == GradeCell.id)
                .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
                .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
                .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .join(Student, SubmittedAssignment.student_id == Student.id)
                .filter(Assignment.name == assignment)
                .all()
            )
            submitted = {
                sid for (sid,) in gb.db.query(Student.id)
                .join(SubmittedAssignment, SubmittedAssignment.student_id == Student.id)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .filter(Assignment.name == assignment)
            }
    except Exception as error:  # noqa: BLE001 - not a gradebook, a locked or broken one: report the rest
        problems.append(f"the gradebook at {course.db_url} could not be read ({type(error).__name__}: {error}); "
                        "scores come from the feedback the notebooks printed")
        return None, set()
    scores: dict[str, list] = {sid: [0.0, 0.0, True, 0.0, 0.0, 0, 0] for sid in submitted}
    for sid, nb_name, cell_name, cell_type, max_score, auto, manual in rows:
        entry = scores.setdefault(sid, [0.0, 0.0, True, 0.0, 0.0, 0, 0])
        if not is_automatic_grade(cell_type, (nb_name, cell_name), answers):  # graded by hand: not automatic points
            entry[3] += manual or 0.0
            entry[4] += max_score
            entry[5] += 1
            entry[6] += manual is None
            continue
        entry[1] += max_score
        if auto is None:
            entry[2] = False
        else:
            entry[0] += auto
    return {sid: tuple(v) for sid, v in scores.items()}, known


# ---------------------------------------------------------------- reading the notebooks


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _feedback_text(output: dict) -> str:
    """The feedback text an output of a grade cell holds: grade() shows it as a display output
    (text and HTML), and printed it on stdout before it did."""
    if output.get("output_type") == "display_data":
        return _text((output.get("data") or {}).get("text/plain")) + "\n"
    if output.get("output_type") == "stream" and output.get("name") == "stdout":
        return _text(output.get("text"))
    return ""


def _parse_feedback(text: str) -> list[dict]:
    """The group blocks of a grade cell's stdout: header numbers and one entry per property."""
    groups: list[dict] = []
    current_field = None
    for line in text.split("\n"):
        m = _HEADER.match(line)
        if m:
            groups.append({**m.groupdict(), "results": []})
            current_field = None
            continue
        if not groups:
            continue
        results = groups[-1]["results"]
        m = _RESULT.match(line)
        if m:
            results.append({"verdict": m["verdict"], "title": m["title"], "points": m["points"], "fields": {}})
            current_field = None
            continue
        m = _FIELD.match(line)
        if m and results and results[-1]["verdict"] == "FAIL":
            current_field = m["label"]
            results[-1]["fields"][current_field] = line[_FIELD_TEXT:] if len(line) > _FIELD_TEXT else ""
            continue
        if current_field and results and line.startswith(_CONTINUATION):
            results[-1]["fields"][current_field] += "\n" + line.strip()
            continue
        current_field = None
    return groups


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


class _Collector:
    def __init__(self, assignment: str, problems: list[str]):
        self.assignment = assignment
        self.problems = problems
        self.properties: dict[tuple[str, str], PropertyStats] = {}
        self.groups: dict[str, list[PropertyStats]] = defaultdict(list)
        try:
            declared = properties_of(assignment)
        except ValueError:
            declared = ()
            problems.append(f"the course has no property module for {assignment!r}; "
                            "properties are named after the feedback's titles, without hints")
        for p in declared:
            stats = PropertyStats(p.name, p.group, p.points, p.title, p.hint)
            self.properties[p.group, p.title] = stats
            self.groups[p.group].append(stats)
        self.flags: list[Flag] = []
        self._flagged: set[tuple[str, str]] = set()
        self.reaching: dict[str, Reaching] = {}
        self.other_jax: dict[tuple[str, str], set[str]] = defaultdict(set)  # (kernel's, judge's JAX) -> students

    def stats(self, group: str, title: str, points: str) -> PropertyStats:
        key = (group, title)
        if key not in self.properties:
            stats = PropertyStats(f"{group}: {title}", group, _number(points) or 0.0, title, "")
            self.properties[key] = stats
            self.groups[group].append(stats)
        return self.properties[key]

    def notebook(self, student: str, path: Path) -> float | None:
        """Read one autograded notebook; return the points its feedback headers add up to."""
        try:
            nb = json.loads(path.read_bytes())
            cells = nb["cells"]
            if not isinstance(cells, list):
                raise TypeError("cells is not a list")
        except (OSError, UnicodeDecodeError, ValueError) as error:
            self.problems.append(f"{path} is not a JSON notebook ({error}); {student}'s properties are not counted")
            return None
        except (KeyError, TypeError) as error:
            self.problems.append(f"{path} is not a notebook (no list of cells: {error}); "
                                 f"{student}'s properties are not counted")
            return None
        earned = 0.0
        seen_groups: set[str] = set()
        for index, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            outputs = [o for o in cell.get("outputs") or [] if isinstance(o, dict)]
            where = (cell.get("metadata") or {}).get("nbgrader", {}).get("grade_id") or f"cell {index + 1}"
            errors = [o for o in outputs if o.get("output_type") == "error"]
            for o in errors:
                kind = _ERROR_KINDS.get(str(o.get("ename")))
                if kind:
                    self._flag(student, kind, where, f"{o.get('ename')}: {_text(o.get('evalue'))}".rstrip(": "))
            if not is_autograder_test(cell):
                continue
            call = GRADE_CALL.search(_text(cell.get("source")))
            group = call[2] if call and call[1] == self.assignment else None
            stdout = "".join(_feedback_text(o) for o in outputs)
            blocks = [b for b in _parse_feedback(stdout) if b["assignment"] == self.assignment]
            for line in stdout.split("\n"):
                note = _NOTE.match(line)
                if note:
                    self.reaching.setdefault(student, Reaching(student, note["text"]))
                other = _OTHER_JAX.match(line)
                if other:
                    self.other_jax[other["kernel"], other["judge"]].add(student)
            for block in blocks:
                earned += _number(block["earned"]) or 0.0
                seen_groups.add(block["group"])
                for r in block["results"]:
                    stats = self.stats(block["group"], r["title"], r["points"])
                    if r["verdict"] == "PASS":
                        stats.passed.append(student)
                        continue
                    f = r["fields"]
                    failure = Failure(student, f.get("Problem", ""), f.get("Example", ""), f.get("Got", ""),
                                      f.get("Expected", ""))
                    stats.failures.append(failure)
                    if failure.problem.startswith(_WITHHELD):
                        held = self.reaching.setdefault(student, Reaching(student, ""))
                        held.withheld.append(f"{stats.group} / {stats.title}")
                        held.withheld_points += _number(r["points"]) or 0.0
                    for pattern, kind in _PROBLEM_KINDS:
                        if pattern.search(failure.problem):
                            self._flag(student, kind, stats.title, failure.problem)
                            break
            if group and group not in {b["group"] for b in blocks}:
                why = "; ".join(f"{o.get('ename')}: {_text(o.get('evalue'))}".rstrip(": ") for o in errors) or (
                    "the cell did not run" if cell.get("execution_count") is None else "it printed no feedback")
                self.problems.append(f"{student}: grade cell {where} ({group}) gave no feedback ({why[:_SHOWN_CHARS]})")
                seen_groups.add(group)
                for stats in self.groups.get(group, []):
                    stats.ungraded.append(student)
        for group in self.groups:
            if group not in seen_groups:
                self.problems.append(f"{student}: {path.name} has no grade cell for group {group!r} (deleted?)")
                for stats in self.groups[group]:
                    stats.ungraded.append(student)
        return earned

    def _flag(self, student: str, kind: str, where: str, detail: str) -> None:
        """One flag per student and kind: the first place it shows (a dead kernel marks every later cell)."""
        if (student, kind) not in self._flagged:
            self._flagged.add((student, kind))
            self.flags.append(Flag(student, kind, where, detail))


# ---------------------------------------------------------------- building the report


def build(assignment: str, course_dir: Path = Path(".")) -> ClassReport:
    """Read the gradebook and the autograded notebooks of ``assignment``; compute, write nothing."""
    start = time.perf_counter()
    course = _load_course(course_dir)
    problems: list[str] = []
    gradebook, known_in_gradebook = _gradebook_scores(course, assignment, problems)
    folders = course.students("autograded", assignment)
    if assignment not in known_in_gradebook and not folders:
        known = sorted(known_in_gradebook | course.assignments("autograded"))
        raise ToolError(
            f"report: unknown assignment {assignment!r}: neither the gradebook nor {course.root / 'autograded'} "
            f"has it (they have: {', '.join(known) or 'none'}; the course's property modules: "
            f"{', '.join(course_assignments())})"
        )
    if gradebook is not None and assignment not in known_in_gradebook:
        problems.append(f"the gradebook has no assignment {assignment!r}; scores come from the feedback")
        gradebook = None
    collector = _Collector(assignment, problems)
    students: dict[str, StudentResult] = {}
    for sid in sorted(set(folders) | set(gradebook or {})):
        result = students[sid] = StudentResult(sid)
        if gradebook is not None:
            if sid not in gradebook:
                problems.append(f"{sid}: has an autograded folder but no submission in the gradebook")
            else:
                points, possible, complete, *hand = gradebook[sid]
                result.hand_score, result.hand_max, result.hand_answers, result.hand_ungraded = hand
                if complete:
                    result.score, result.max_score = points, possible
                else:
                    problems.append(f"{sid}: not (fully) autograded in the gradebook; left out of the scores")
        folder = folders.get(sid)
        if folder is None:
            problems.append(f"{sid}: submitted, but there is no autograded folder {course.root / 'autograded' / sid}")
            continue
        result.refused = read_record(str(folder))
        notebooks = sorted(folder.glob("*.ipynb"))
        if not notebooks:
            problems.append(f"{sid}: no notebook in {folder}")
        for path in notebooks:
            earned = collector.notebook(sid, path)
            result.notebooks += 1
            if earned is not None:
                result.feedback_score = (result.feedback_score or 0.0) + earned
    for (kernel, judge), graded in sorted(collector.other_jax.items()):
        problems.append(f"graded by a kernel with {kernel}, not the grader's {judge} (the kernelspec's Python is not "
                        f"nbgrader's): {', '.join(sorted(graded))}; what their code traced and compiled was observed on another "
                        "JAX than the checks were written for: grade them again once the kernelspec runs nbgrader's Python")
    props = list(collector.properties.values())
    order = {id(p): i for i, p in enumerate(props)}
    props.sort(key=lambda p: (p.pass_rate if p.students else 2.0, order[id(p)]))
    maxima = {s.max_score for s in students.values() if s.max_score is not None}
    max_score = max(maxima) if maxima else (sum(p.points for p in props) or None)
    report = ClassReport(assignment, students, props, collector.flags, problems, max_score, gradebook is not None,
                         reaching=sorted(collector.reaching.values(), key=lambda r: r.student))
    report.seconds = time.perf_counter() - start
    return report


# ---------------------------------------------------------------- charts


def _svg(fig) -> str:
    buffer = io.StringIO()
    # No RDF block (creator, date): the same data give the same page.
    fig.savefig(buffer, format="svg", bbox_inches="tight",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG sits inline in HTML


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: smaller, searchable
    matplotlib.rcParams["svg.hashsalt"] = "autograder-report"  # the same page for the same data
    import matplotlib.pyplot as plt

    return plt


def histogram_svg(report: ClassReport) -> str:
    plt = _pyplot()
    scores = list(report.scores.values())
    top = report.max_score or (max(scores) if scores else 1.0) or 1.0
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    # One bar per possible point total: grades are whole or half points.
    step = 0.5 if any(s % 1 for s in scores) else 1.0
    edges = [i * step - step / 2 for i in range(int(top / step) + 2)]
    ax.hist(scores, bins=edges, color="#4477aa", edgecolor="white")
    ax.set_xlabel(f"automatic points (of {top:g})")
    ax.set_ylabel("students")
    ax.set_xlim(-step, top + step)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def pass_rate_svg(report: ClassReport) -> str:
    plt = _pyplot()
    props = [p for p in report.properties if p.students]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(props) + 0.9))
    rates = [100 * p.pass_rate for p in props]
    y = list(range(len(props)))
    ax.barh(y, rates, color=["#cc6677" if r < 50 else "#ddcc77" if r < 80 else "#117733" for r in rates])
    ax.set_yticks(y, [f"{p.group} / {p.name}" for p in props])
    ax.invert_yaxis()  # hardest on top
    ax.set_xlim(0, 100)
    ax.set_xlabel("students passing (%)")
    for yi, r, p in zip(y, rates, props):
        ax.text(min(r + 1, 88), yi, f"{len(p.passed)}/{p.students}", va="center", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


# ---------------------------------------------------------------- the page

_CSS = """
body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.3rem .5rem;
vertical-align:top;text-align:left}th{background:#f3f3f3}code,pre{font-family:ui-monospace,monospace;
font-size:.85rem}pre{white-space:pre-wrap;margin:0}.num{text-align:right}.warn{color:#a33}
section.failing{border-left:4px solid #cc6677;padding-left:1rem;margin-bottom:1.5rem}
table.properties{table-layout:fixed;width:100%}table.properties td:first-child{overflow-wrap:anywhere}
table.properties col.name{width:16%}table.properties col.n{width:5%}table.properties col.text{width:27%}th{font-size:.75rem}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _pct(rate: float) -> str:
    return "–" if math.isnan(rate) else f"{100 * rate:.0f}%"


def render_html(report: ClassReport) -> str:
    scores = report.scores
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # Nothing on the page may load or run anything: no network at view time, no student script.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">",
        f"<title>Class report: {_e(report.assignment)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Class report: <code>{_e(report.assignment)}</code></h1>",
        f"<p>{counted(len(scores), 'student')} with a score"
        + (f", mean {report.mean_score:.2f} of {report.max_score:g} automatic points" if scores and report.max_score
           else "")
        + f" ({'from the gradebook' if report.gradebook_read else 'from the feedback text: no gradebook'}); "
        f"{counted(len(report.students), 'student')} in all. {_e(_hand_sentence(report))}"
        f"Generated {_e(time.strftime('%Y-%m-%d %H:%M'))}.</p>",
        '<h2 id="scores">Score distribution</h2>',
        f'<figure class="chart" id="histogram">{histogram_svg(report)}</figure>',
        '<h2 id="properties">Properties, hardest first</h2>',
        f'<figure class="chart" id="pass-rates">{pass_rate_svg(report)}</figure>',
        '<table id="property-table" class="properties"><colgroup><col class="name"><col class="n"><col class="n">'
        '<col class="n"><col class="n"><col class="n"><col class="n"><col class="text"><col class="text"></colgroup>'
        '<thead><tr><th>property</th><th>group</th><th>points</th><th>pass</th>'
        "<th>fail</th><th>no feedback</th><th>pass rate</th><th>title</th><th>hint</th></tr></thead><tbody>",
    ]
    for p in report.properties:
        out.append(
            f'<tr class="property" data-property="{_e(p.name)}"><td><code>{_e(p.name)}</code></td><td>{_e(p.group)}</td>'
            f'<td class="num">{p.points:g}</td><td class="num">{len(p.passed)}</td>'
            f'<td class="num">{len(p.failures)}</td><td class="num">{len(p.ungraded)}</td>'
            f'<td class="num">{_pct(p.pass_rate)}</td><td>{_e(p.title)}</td><td>{_e(p.hint)}</td></tr>'
        )
    out.append("</tbody></table>")
    failing = [p for p in report.properties if p.failing]
    out.append(f'<h2 id="failing">Failing properties ({len(failing)})</h2>')
    for p in failing:
        out.append(f'<section class="failing" data-property="{_e(p.name)}"><h3><code>{_e(p.name)}</code>: '
                   f"{p.failing} of {counted(p.students, 'student')} {'fails' if p.failing == 1 else 'fail'}</h3>"
                   f"<p>{_e(p.title)}</p>")
        if p.ungraded:
            out.append(f"<p>{len(p.ungraded)} of them got no feedback for this group (see Problems).</p>")
        if p.failures:
            out.append("<table><thead><tr><th>students</th><th>problem (numbers and addresses grouped)</th>"
                       "</tr></thead><tbody>")
            for key, n, shown in p.problems():
                out.append(f'<tr><td class="num">{n}</td><td>{_e(_cut(shown))}'
                           + (f"<br><small>as: {_e(_cut(key))}</small>" if key != " ".join(shown.split()) else "")
                           + "</td></tr>")
            out.append("</tbody></table>")
        example = p.minimal_example
        if example:
            out.append("<p>Shortest failing example</p><table><tbody>")
            for label, text in (("student", example.student), ("Example", example.example),
                                ("Got", example.got), ("Expected", example.expected)):
                if text:
                    out.append(f"<tr><th>{label}</th><td><pre>{_e(_cut(text))}</pre></td></tr>")
            out.append("</tbody></table>")
        out.append("</section>")
    out.append(f'<h2 id="flags">Students to look at ({len({f.student for f in report.flags})})</h2>')
    if report.flags:
        out.append('<table id="flag-table"><thead><tr><th>student</th><th>what</th><th>where</th><th>detail</th>'
                   "</tr></thead><tbody>")
        for f in sorted(report.flags, key=lambda f: (f.student, f.kind, f.where)):
            out.append(f'<tr class="flag"><td>{_e(f.student)}</td><td>{_e(f.kind)}</td><td>{_e(f.where)}</td>'
                       f"<td>{_e(_cut(f.detail))}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>No grading hit a time or memory limit, a dead kernel or tampering.</p>")
    out.append(f'<h2 id="reaching">Notebooks that reach into the grader ({len(report.reaching)})</h2>')
    if report.reaching:
        out.append(
            "<p>These notebooks refer to the grading code or dig through the interpreter around it (imports of "
            "the grading package, the garbage collector's objects, frames, code built from strings). No answer "
            "needs that, and such code can rewrite what the kernel reports, so every check that passed on the "
            "kernel's own report (what a call raised, trace and compile events, host reads, thunk counts, staged "
            "programs) was withheld; checks judged on returned values kept their points. Review the notebook; "
            "to restore withheld points, give the cell a manual grade in formgrader (nbgrader's manual score "
            "overrides the automatic one).</p>")
        out.append('<table id="reaching-table"><thead><tr><th>student</th><th>points withheld</th>'
                   "<th>checks withheld</th><th>what the feedback says</th></tr></thead><tbody>")
        for r in report.reaching:
            out.append(f'<tr class="reaching"><td>{_e(r.student)}</td><td class="num">{r.withheld_points:g}</td>'
                       f"<td>{_e('; '.join(r.withheld)) or 'none'}</td><td>{_e(_cut(r.detail))}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>None.</p>")
    refused = report.refused
    out.append(f'<h2 id="refused">Submissions refused at the boundary ({len(refused)})</h2>')
    if refused:
        out.append(f"<p>What the course did not copy of these submissions, as each one's <code>{_e(RECORD)}</code> "
                   "says: a refused file was left out and the student graded on the rest; a refused notebook is "
                   "graded as released (0 points).</p>")
        out.append('<table id="refused-table"><thead><tr><th>student</th><th>refused</th></tr></thead><tbody>')
        for sid, lines in refused.items():
            out.append(f'<tr class="refused"><td>{_e(sid)}</td><td>'
                       + "<br>".join(_e(_cut(line)) for line in lines) + "</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>None.</p>")
    out.append(f'<h2 id="problems">Problems reading the course ({len(report.problems)})</h2>')
    if report.problems:
        out.append('<ul class="warn">' + "".join(f"<li>{_e(_cut(p))}</li>" for p in report.problems) + "</ul>")
    else:
        out.append("<p>None.</p>")
    by_hand = report.hand_max > 0
    out.append("<h2>Scores</h2><table id=\"score-table\"><thead><tr><th>student</th><th>automatic points</th>"
               + ("<th>graded by hand</th>" if by_hand else "") + "</tr></thead><tbody>")
    for sid, value in sorted(scores.items()):
        hand = f"<td>{_e(report.students[sid].hand_shown())}</td>" if by_hand else ""
        out.append(f'<tr><td>{_e(sid)}</td><td class="num">{value:g}</td>{hand}</tr>')
    out.append("</tbody></table></body></html>")
    return "\n".join(out) + "\n"


def _hand_sentence(report: ClassReport) -> str:
    """What the answers graded by hand add, apart from the automatic points (empty when there are none)."""
    if not report.hand_max:
        return ""
    graded = len(report.hand_graded())
    of = len([s for s in report.students.values() if s.hand_answers])
    return (f"Answers graded by hand are worth {report.hand_max:g} more points, not counted above: "
            f"{'none' if not graded else graded} of {of} graded so far. ")


def write(report: ClassReport, course_dir: Path = Path(".")) -> Path:
    folder = Path(course_dir).resolve() / REPORTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{report.assignment}.html"
    page = render_html(report)
    temporary = path.with_suffix(".html.tmp")
    temporary.write_text(page, encoding="utf-8")
    temporary.replace(path)
    report.path = path
    return path


def summary(report: ClassReport) -> str:
    scores = report.scores
    lines = [f"{report.assignment}: {counted(len(scores), 'student')}"
             + (f", mean {report.mean_score:.2f} of {report.max_score:g} automatic points" if scores and report.max_score
                else "")]
    if report.hand_max:
        lines.append(_hand_sentence(report).strip())
    hardest = report.hardest()
    if hardest:
        lines.append("hardest properties:")
        for p in hardest:
            lines.append(f"  {_pct(p.pass_rate):>4} pass  {p.group} / {p.name} ({len(p.passed)} of {p.students})")
    if report.flags:
        flagged = sorted({f.student for f in report.flags})
        shown = ", ".join(flagged[:_SUMMARY_NAMES]) + (f" and {len(flagged) - _SUMMARY_NAMES} more"
                                                         if len(flagged) > _SUMMARY_NAMES else "")
        kinds = Counter(f.kind for f in report.flags)
        lines.append(f"students to look at ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}): {shown}")
    if report.reaching:
        lines.append(f"notebooks that reach into the grader ({sum(r.withheld_points for r in report.reaching):g} "
                     f"points withheld, for review): " + ", ".join(r.student for r in report.reaching))
    refused = report.refused
    if refused:
        lines.append(f"submissions refused at the boundary ({counted(len(refused), 'student')}):")
        for sid, sentences in list(refused.items())[:_SUMMARY_REFUSED]:
            lines += [f"  {escaped(sid)}: {escaped(_cut(sentence))}" for sentence in sentences]
        if len(refused) > _SUMMARY_REFUSED:
            lines.append(f"  ... and {len(refused) - _SUMMARY_REFUSED} more, listed on the page")
    if report.problems:
        lines.append(f"{counted(len(report.problems), 'problem')} reading the course (above, and on the page)")
    lines.append(f"report: {report.path}")
    return "\n".join(lines)


def all_assignments(course_dir: Path = Path(".")) -> list[str]:
    """Assignments the gradebook or the autograded folder has."""
    course = _load_course(course_dir)
    names = course.assignments("autograded")
    db = _sqlite_file(course.db_url)
    if db is None or db.is_file():
        from nbgrader.api import Gradebook

        try:
            with Gradebook(course.db_url, course.course_id) as gb:
                names |= {a.name for a in gb.assignments}
        except Exception:  # noqa: BLE001 - each assignment's report says what is wrong with the gradebook
            pass
    return sorted(names)


def main(assignments: list[str], course_dir: Path = Path("."), every: bool = False) -> int:
    """Build, write and summarise each report; problems on stderr. 1 if an assignment had no report."""
    if every:
        assignments = all_assignments(course_dir)
        if not assignments:
            raise ToolError(f"report: no assignment in the gradebook or the autograded folder of {Path(course_dir).resolve()}")
    if not assignments:
        raise ToolError("report: name an assignment, or give --all")
    status = 0
    for i, assignment in enumerate(assignments):
        try:
            report = build(assignment, course_dir)
        except ToolError as error:
            if len(assignments) == 1:
                raise
            print(error, file=sys.stderr)
            status = 1
            continue
        write(report, course_dir)
        for problem in report.problems[:_SUMMARY_PROBLEMS]:
            print(f"problem: {problem}", file=sys.stderr)
        if len(report.problems) > _SUMMARY_PROBLEMS:
            print(f"problem: ... and {len(report.problems) - _SUMMARY_PROBLEMS} more, listed on the page",
                  file=sys.stderr)
        print(("\n" if i else "") + summary(report))
    return status
