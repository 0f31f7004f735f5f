"""Scratch courses for the benchmark: the real course, its floors, and synthetic students.

- **serial** and **parallel**: two identical copies of the course (``scratch.prepare_course``
  plus ``generate_assignment``), one graded by ``nbgrader autograde``, one by
  ``python -m autograder autograde``.
- **floor**: the same course with the hidden regions removed from the source
  notebooks before ``generate_assignment``. Its release is the same notebook, so
  it grades the very same submissions with every grader call gone: what nbgrader,
  a kernel and ``import jax`` cost on their own. Its kernels start afresh through
  the jail (``c.ConfinedKernelManager.fork_server = False``), as every kernel did
  before the fork server: the fixed reference the speed targets are set against.
- **forked floor**: a copy of the floor whose kernels are forked, as the real
  course's are; b against it is what the graders alone add.
- **vanilla**: the floor's notebooks in a course with nbgrader's default
  configuration: no course config, so no jail, no sandbox, no seals, nbgrader's
  own kernel manager and preprocessors. What a course without property graders
  runs, and the peer the real course must beat.

Synthetic students hand in, per assignment, a rotation of the bundled samples
(correct, partial, empty, a correct one with a cell that raises) and of the
wrong-answer corpus (``tests/corpus``) pasted into the notebook: the *copies* mix,
whose correct students are the reference's copies. The *class* mix (``--class``) hands
in what the independent students wrote (``tests/corpus/<a>/student_*.py``): correct
answers in their own styles, whose programs are not the reference's (the shared compile
cache reads a program only where a student's function lowers to the reference's), and
their mistakes, with the partial sample, in :data:`CLASS_MIX`'s proportions. Submissions are
placed in ``submitted/`` exactly as ``nbgrader collect`` leaves them (the
notebook and ``timestamp.txt``): the exchange is not what is being measured.
"""

from __future__ import annotations

import copy
import datetime
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.cells import is_answer
from autograder.tools import scratch
from autograder.tools.repository import CORPUS, SAMPLES, is_correct, tool_env


#: Sample kinds that alternate with corpus faults; "raise" is the correct sample with a raising answer cell.
SAMPLE_ROTATION = ("correct", "partial", "empty", "raise")
#: The class mix, per ten students: six whose answers earn every point, written in an independent
#: student's own style; three with an independent student's mistake; one partial notebook (the sample).
CLASS_MIX = ("style", "mistake", "style", "mistake", "style", "style", "partial", "style", "mistake", "style")
#: The mixes a bench can hand in.
MIXES = ("copies", "class")


@dataclass(frozen=True)
class BenchCourses:
    root: Path
    vanilla: scratch.ScratchCourse
    floor: scratch.ScratchCourse
    forked_floor: scratch.ScratchCourse
    serial: scratch.ScratchCourse
    parallel: scratch.ScratchCourse
    #: (student, assignment) -> what they handed in ("correct", "corpus:hard_coded_max", ...)
    kinds: dict[tuple[str, str], str]
    #: (assignment, kind) -> the notebook handed in
    notebooks: dict[tuple[str, str], Path]


# ---------------------------------------------------------------- notebooks


def strip_hidden(source: str) -> str:
    """A grade cell's source without its hidden region (the grader call), line by line as nbgrader's
    ``ClearHiddenTests`` removes it (a line after the region stays, an empty last one too), so that the
    floor course releases byte for byte the notebook the real one does."""
    kept, hidden = [], False
    for line in source.split("\n"):
        if "### BEGIN HIDDEN TESTS" in line:
            hidden = True
        elif "### END HIDDEN TESTS" in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def floor_notebook(path: Path) -> None:
    """Remove the hidden regions of every cell of a source notebook, in place."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        text = "".join(cell.get("source", ""))
        if "### BEGIN HIDDEN TESTS" in text:
            cell["source"] = strip_hidden(text)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def with_corpus_answer(correct: dict, corpus_source: str) -> dict:
    """The correct sample with its answers replaced by one corpus submission (all in the first answer cell)."""
    nb = copy.deepcopy(correct)
    answers = [c for c in nb["cells"] if is_answer(c)]
    answers[0]["source"] = corpus_source
    for cell in answers[1:]:
        cell["source"] = "# (answered above)\n"
    return nb


def with_raising_answer(correct: dict) -> dict:
    """The correct sample whose last answer cell raises before defining anything."""
    nb = copy.deepcopy(correct)
    last = [c for c in nb["cells"] if is_answer(c)][-1]
    last["source"] = 'raise RuntimeError("a student cell that raises")\n' + "".join(last["source"])
    return nb


def corpus_faults(assignment: str) -> list[Path]:
    return sorted(p for p in (CORPUS / assignment).glob("*.py") if p.stem != "correct")


def kinds_for(assignment: str, n: int) -> list[str]:
    """What students 1..n hand in: samples alternating with corpus faults."""
    faults = corpus_faults(assignment)
    kinds = []
    for i in range(n):
        if i % 2 == 0 or not faults:
            kinds.append(SAMPLE_ROTATION[(i // 2) % len(SAMPLE_ROTATION)])
        else:
            kinds.append(f"corpus:{faults[(i // 2) % len(faults)].stem}")
    return kinds


def independent_students(assignment: str) -> tuple[list[Path], list[Path]]:
    """The independent students' files of an assignment: (correct in their own styles, mistakes)."""
    styles, mistakes = [], []
    for path in sorted((CORPUS / assignment).glob("student_*.py")):
        (styles if is_correct(path) else mistakes).append(path)
    return styles, mistakes


def class_kinds_for(assignment: str, n: int) -> list[str]:
    """What students 1..n of a class hand in: :data:`CLASS_MIX`, each style and each mistake taken in
    turn, so that a class of n holds as many different answers as the corpus has."""
    styles, mistakes = independent_students(assignment)
    if not styles or not mistakes:
        missing = "correct files" if not styles else "mistakes"
        raise scratch.CycleError(f"bench --class: {assignment} has no independent students' {missing} in "
                                 f"{CORPUS / assignment}")
    taken = {"style": 0, "mistake": 0}
    kinds = []
    for i in range(n):
        slot = CLASS_MIX[i % len(CLASS_MIX)]
        if slot == "partial":
            kinds.append("partial")
            continue
        pool = styles if slot == "style" else mistakes
        kinds.append(f"corpus:{pool[taken[slot] % len(pool)].stem}")
        taken[slot] += 1
    return kinds


def make_notebook(assignment: str, kind: str, out_dir: Path) -> Path:
    """Write the notebook a student of ``kind`` hands in; return its path."""
    out = out_dir / assignment / f"{kind.replace(':', '-')}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    sample = SAMPLES / assignment
    if kind in ("correct", "partial", "empty"):
        shutil.copyfile(sample / f"{kind}.ipynb", out)
        return out
    correct = json.loads((sample / "correct.ipynb").read_text(encoding="utf-8"))
    if kind == "raise":
        nb = with_raising_answer(correct)
    elif kind.startswith("corpus:"):
        nb = with_corpus_answer(correct, (CORPUS / assignment / f"{kind[7:]}.py").read_text(encoding="utf-8"))
    else:
        raise ValueError(f"unknown kind of submission {kind!r}")
    out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------- courses


def generate_here(assignments: list[str]) -> None:
    """``nbgrader generate_assignment`` for each assignment, in one process (run in the course root)."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.apps.generateassignmentapp import GenerateAssignmentApp

    app = GenerateAssignmentApp()
    app.initialize([])
    api = NbGraderAPI(coursedir=app.coursedir, parent=app)
    for assignment in assignments:
        result = api.generate_assignment(assignment, force=True, create=True)
        if not result["success"]:
            sys.exit(f"generate_assignment {assignment} failed:\n{result.get('error') or result.get('log')}")


def _generate(course: scratch.ScratchCourse, assignments: list[str]) -> subprocess.Popen:
    code = "import sys; from autograder.tools.bench.courses import generate_here; generate_here(sys.argv[1:])"
    return subprocess.Popen(
        [sys.executable, "-c", code, *assignments], cwd=course.root, env=tool_env(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
    )


def clone_course(course: scratch.ScratchCourse, dest: Path) -> scratch.ScratchCourse:
    """Copy a scratch course, pointing the copy's nbgrader_config.py at the copy."""
    shutil.copytree(course.root, dest)
    config = dest / "nbgrader_config.py"
    text = config.read_text()
    for path in (course.root, course.exchange):
        old, new = f"= {str(path)!r}", f"= {str(dest / path.relative_to(course.root))!r}"
        if old not in text:
            raise scratch.CycleError(f"bench: {config} does not set a path to {path}; cannot re-point the copy")
        text = text.replace(old, new)
    config.write_text(text)
    return scratch.ScratchCourse(dest)


_VANILLA_CONFIG = '''\
# Written by autograder.tools.bench.courses: nbgrader's default configuration, no course config.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "jax-tracing"
c.CourseDirectory.root = {root!r}
c.Exchange.root = {exchange!r}
c.ExchangeCollect.check_owner = False
'''


def vanilla_course(course_dir: Path) -> scratch.ScratchCourse:
    """A scratch course of floor notebooks whose nbgrader_config.py is nbgrader's default."""
    course = scratch.prepare_course(course_dir)
    (course.root / "nbgrader_config.py").write_text(
        _VANILLA_CONFIG.format(root=str(course.root), exchange=str(course.exchange)))
    return course


def build(root: Path, assignments: list[str], students: int, mix: str = "copies") -> BenchCourses:
    """The five courses with ``students`` synthetic students per assignment (``mix``: :data:`MIXES`),
    ready to autograde."""
    if mix not in MIXES:
        raise scratch.CycleError(f"bench: unknown mix of students {mix!r} (known: {', '.join(MIXES)})")
    handed_in = class_kinds_for if mix == "class" else kinds_for
    root = Path(root)
    serial = scratch.prepare_course(root / "serial")
    floor = scratch.prepare_course(root / "floor")
    vanilla = vanilla_course(root / "vanilla")
    for course in (floor, vanilla):
        for a in assignments:
            floor_notebook(course.root / "source" / a / f"{a}.ipynb")
    jobs = [(c, _generate(c, assignments)) for c in (serial, floor, vanilla)]
    for course, job in jobs:
        output, _ = job.communicate()
        if job.returncode:
            raise scratch.CycleError(f"bench: generate_assignment failed in {course.root}:\n{output[-2000:]}")
    for a in assignments:
        real = (serial.root / "release" / a / f"{a}.ipynb").read_bytes()
        for name, course in (("floor", floor), ("vanilla", vanilla)):
            if (course.root / "release" / a / f"{a}.ipynb").read_bytes() != real:
                raise scratch.CycleError(f"bench: the {name} course releases a different {a} notebook than the real one")

    kinds: dict[tuple[str, str], str] = {}
    notebooks: dict[tuple[str, str], Path] = {}
    when = datetime.datetime.now(datetime.timezone.utc)
    ids = [f"bench-{i + 1:03d}" for i in range(students)]
    for a in assignments:
        for sid, kind in zip(ids, handed_in(a, students), strict=True):
            if (a, kind) not in notebooks:
                notebooks[a, kind] = make_notebook(a, kind, root / "notebooks")
            kinds[sid, a] = kind
            for course in (serial, floor, vanilla):
                scratch.place_submission(course, sid, a, notebooks[a, kind], when)
    parallel = clone_course(serial, root / "parallel")
    forked_floor = clone_course(floor, root / "forked_floor")
    scratch.start_kernels_afresh(floor)  # the fixed reference; its copy above keeps forked kernels
    for course in (floor, forked_floor, serial, parallel):  # vanilla runs nbgrader's own Execute
        with open(course.root / "nbgrader_config.py", "a") as config:
            config.write(f"c.ConfinedExecute.phase_log = {str(phase_log(course.root))!r}\n")
    return BenchCourses(root, vanilla, floor, forked_floor, serial, parallel, kinds, notebooks)


def phase_log(root: Path) -> Path:
    """Where a bench course's kernels' phases are logged (autograder.confinement.preprocessors.ConfinedExecute)."""
    return Path(root) / "phases.jsonl"
