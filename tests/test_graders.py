"""Do the hidden graders give full points to right answers and take exactly the right
points from wrong ones?

Each file in ``tests/corpus/<assignment>/`` is a submission written the way a
student really gets it wrong (or right in an unusual way). It declares, by hand, which
properties it breaks (``FAILS``), the automatic score it must get (``SCORE``) and a
pattern its feedback must contain (``MESSAGE``).

The ``student_*`` files were written by a helper that saw only the release notebooks,
never ``autograder/``; each carries that helper's verdict as a careful teacher, per
graded cell (``TEACHER``). Where the grade differs, ``REVIEW`` says why the grader's
verdict was kept.
"""

from __future__ import annotations

import ast
import atexit
import multiprocessing
import os
import re
import shutil
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

from autograder import assignments, from_python, group_points, properties_of, run_group
from autograder.grading import compile_cache, compiler, judge
from autograder.grading.feedback import render
from autograder.tools.repository import as_a_kernel_starts

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(CORPUS.glob("*/*.py"))


def judged(assignment: str, group: str, namespace: dict, notebook_memo: dict | None = None):
    """One grade cell as nbgrader's kernels grade it: the judge's session on one side, the
    kernel's serving call (run here, in this thread, as a kernel runs it) on the other."""
    session = judge.Session(assignment, group, notebook_memo)
    exec(session.kernel_code, namespace)  # noqa: S102 - what the kernel runs in place of the cell
    return session.finish()


@dataclass(frozen=True)
class Verdict:
    """What grading one corpus file gave: the properties that failed, the points of each grade
    cell, the feedback's text, what the file declares, the XLA flags it was compiled with and the
    compile cache it read."""

    failed: frozenset
    earned: dict
    text: str
    declared: dict
    xla_flags: str
    compile_cache: str | None


def grade_file(path: str) -> Verdict:
    """Grade one corpus file the way a real grading does (the properties in the judge, the code
    in the kernel's place). Runs in a worker process of :func:`_pool`'s, which grades file after
    file: JAX's caches are cleared first, as each notebook's kernel starts without what an earlier
    notebook compiled."""
    import jax

    if not _NBGRADERS_ENVIRONMENT:  # not set up as a worker: set up now, before JAX makes a backend
        _as_kernels_compile()
    as_a_kernel_starts()
    assignment = Path(path).parent.name
    _read_the_references_programs(assignment)
    submission = from_python(path)
    reports = [judged(assignment, group, submission.namespace, submission.notebook_memo)
               for group in group_points(assignment)]
    declared = {k: submission.namespace[k] for k in ("FAILS", "SCORE", "MESSAGE", "TEACHER", "REVIEW", "TIMED")
                if k in submission.namespace}
    return Verdict(frozenset(r.prop.name for report in reports for r in report.results if not r.passed),
                   {f"test_{report.group}": report.earned for report in reports},
                   "\n".join(render(report) for report in reports), declared, os.environ.get("XLA_FLAGS", ""),
                   jax.config.jax_compilation_cache_dir)


#: The tests that read a file's verdict from the pool (the files graded beside the code are not).
_FROM_THE_POOL = {"test_the_corpus_is_graded_with_the_kernels_flags", "test_submission_loses_exactly_what_it_breaks",
                  "test_independent_students_get_the_teachers_points"}
_SUBMITTED: dict[Path, Future] = {}


def _as_kernels_compile(cache_home: str | None = None) -> None:
    """A grading process's start (a worker of :func:`_pool`'s, or any process that calls
    :func:`grade_file` first): the grading kernels' XLA flags, set before its JAX makes a backend, and
    a compile cache of its own (in ``cache_home``, else a temporary folder gone when the process
    ends), as a batch has the instructor's."""
    from jax._src import xla_bridge

    assert not xla_bridge.backends_are_initialized(), "XLA has read its flags already"
    if cache_home is None:
        cache_home = tempfile.mkdtemp(prefix="graders-cache-")
        atexit.register(shutil.rmtree, cache_home, True)
    _NBGRADERS_ENVIRONMENT.update(os.environ, XDG_CACHE_HOME=cache_home)
    os.environ.update(compiler.kernel_environment(_NBGRADERS_ENVIRONMENT))


#: A worker's environment before the kernels' flags, as nbgrader's process has it.
_NBGRADERS_ENVIRONMENT: dict[str, str] = {}


def _read_the_references_programs(assignment: str) -> None:
    """What a grading kernel of ``assignment`` reads: the programs its reference compiled. Written
    here as every autograde command writes them (:func:`compile_cache.warm`, once per assignment:
    the other worker waits on its lock), then read-only, with the cache's traces kept from the
    notebook (:func:`compile_cache.read_only`), as in a kernel. Once per assignment and process."""
    if assignment in _READING:
        return
    where = compile_cache.warm(assignment, REPO, env=_NBGRADERS_ENVIRONMENT)
    assert where is not None and compile_cache.read_only(str(where)), f"no compile cache for {assignment}"
    _READING.add(assignment)


#: The assignments whose reference programs this process reads already.
_READING: set[str] = set()


@pytest.fixture(scope="module", autouse=True)
def _pool(request, tmp_path_factory):
    """Two worker processes (the machine's cores) grade every selected corpus file once, from the
    module's start, in order; every test that judges a file shares its verdict, and the files graded
    beside the code run in this process meanwhile. Fresh interpreters (spawn): this process has JAX's
    threads running, which a fork would copy half-way. XLA compiles there with the grading kernels'
    flags (:func:`_as_kernels_compile`) and reads the reference's programs from a compile cache, as
    a batch's kernels do (:func:`_read_the_references_programs`), while the files graded beside the
    code run here with XLA's defaults and no cache: both must earn what each file declares, so the
    flags cannot change a grade unseen. The cache can, for a file that times compiles
    (``host_sync/student_e_timing_for_compiles.py``): the pool grades as a batch does."""
    wanted = {item.callspec.params["path"] for item in request.session.items
              if item.module is request.module and item.originalname in _FROM_THE_POOL
              and "path" in getattr(getattr(item, "callspec", None), "params", {})}
    if any(item.module is request.module and item.originalname == "test_the_corpus_is_graded_with_the_kernels_flags"
           for item in request.session.items):
        wanted.add(CASES[0])
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=_as_kernels_compile,
                               initargs=(str(tmp_path_factory.mktemp("graders-cache")),))
    for case in CASES:
        if case in wanted:
            _SUBMITTED[case] = pool.submit(grade_file, str(case))
    yield
    pool.shutdown(cancel_futures=True)
    _SUBMITTED.clear()


def _verdict(path: Path) -> Verdict:
    return _SUBMITTED[path].result()


def _beside_the_code() -> list[Path]:
    """The correct file and the first two wrong ones of each assignment."""
    chosen = []
    for assignment in assignments():
        files = sorted((CORPUS / assignment).glob("*.py"))
        chosen += [CORPUS / assignment / "correct.py", *[f for f in files if f.stem != "correct"][:2]]
    return chosen


@pytest.mark.parametrize("path", _beside_the_code(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_properties_run_beside_the_code_give_the_same_verdicts(path):
    """The other way to run the properties (``pytest autograder/properties/... --submission``, an
    author's check): in the submission's own process, here with XLA's defaults. The whole corpus goes
    through the judge below; this way shares the properties, so a few files show it agrees."""
    submission = from_python(path)
    assert_as_declared(submission, [run_group(path.parent.name, group, submission)
                                    for group in group_points(path.parent.name)])


def test_a_marked_cell_that_raises_is_reported_and_the_next_cell_runs(tmp_path, capsys):
    """As autograde runs a notebook: a corpus file's cells (``# %%`` marks) run in turn, past an error."""
    marked = tmp_path / "marked.py"
    marked.write_text("# %% cell 1 [first]\nfirst = 1\n\n# %% cell 2 [breaks]\nbroken = 1 / 0\n\n"
                      "# %% cell 3 [after]\nafter = first + 1\n")
    namespace = from_python(marked).namespace
    assert (namespace["after"], "broken" in namespace) == (2, False)
    assert "marked.py: the cell at line 4 raised ZeroDivisionError" in capsys.readouterr().out
    unmarked = tmp_path / "unmarked.py"
    unmarked.write_text("value = 1\nbroken = 1 / 0\n")
    with pytest.raises(ZeroDivisionError):
        from_python(unmarked)


def test_the_corpus_is_graded_with_the_kernels_flags():
    assert _verdict(CASES[0]).xla_flags.split() == list(compiler.known_flags())
    assert _verdict(CASES[0]).compile_cache.endswith("jax-tracing-course/compiled")


def _timed_flips(verdict: Verdict) -> dict[str, float]:
    """The file's ``TIMED`` properties (name -> points) whose verdict went the other way from its
    ``FAILS`` on this run. A file that decides by wall-clock time (``TIMED``: a compile is "anything over
    5 ms") earns those points or not as fast as the machine runs; nothing else of its grade may move."""
    timed = verdict.declared.get("TIMED", {})
    return {name: points for name, points in timed.items()
            if (name in verdict.failed) != (name in verdict.declared["FAILS"])}


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_submission_loses_exactly_what_it_breaks(path):
    verdict = _verdict(path)
    flips = _timed_flips(verdict)
    assert verdict.failed ^ set(flips) == verdict.declared["FAILS"]
    moved = sum(points if name in verdict.declared["FAILS"] else -points for name, points in flips.items())
    assert sum(verdict.earned.values()) == verdict.declared["SCORE"] + moved
    if "MESSAGE" in verdict.declared:
        assert re.search(verdict.declared["MESSAGE"], verdict.text), verdict.text


def assert_as_declared(submission, reports) -> None:
    """The corpus file's reports fail exactly its FAILS, earn its SCORE and show its MESSAGE."""
    failed = {r.prop.name for report in reports for r in report.results if not r.passed}
    assert failed == submission.namespace["FAILS"]
    assert sum(report.earned for report in reports) == submission.namespace["SCORE"]
    if "MESSAGE" in submission.namespace:
        text = "\n".join(render(report) for report in reports)
        assert re.search(submission.namespace["MESSAGE"], text), text


STUDENTS = sorted(CORPUS.glob("*/student_*.py"))


@pytest.mark.parametrize("path", STUDENTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_independent_students_get_the_teachers_points(path):
    """Each graded cell earns what the independent teacher gave, or a review says why not."""
    verdict = _verdict(path)
    earned = verdict.earned
    teacher = {cell: float(points) for cell, points in verdict.declared["TEACHER"].items()}
    if _timed_flips(verdict):  # the machine's speed moved a timed property: the test above holds the rest
        return
    if "REVIEW" in verdict.declared:
        assert earned != teacher, "the grade now matches the teacher: drop the REVIEW"
    else:
        assert earned == teacher


@pytest.mark.parametrize("assignment", assignments())
def test_independent_students_wrote_eight_submissions(assignment):
    """At least eight, correct ones in unusual styles among them."""
    files = sorted((CORPUS / assignment).glob("student_*.py"))
    full = [f for f in files if not _declared(f, "FAILS")]
    assert len(files) >= 8 and len(full) >= 3, [f.name for f in files]


@pytest.mark.parametrize("assignment", assignments())
def test_corpus_has_a_correct_and_six_wrong_submissions(assignment):
    files = sorted((CORPUS / assignment).glob("*.py"))
    names = {f.stem for f in files}
    assert "correct" in names
    assert len(names - {"correct"}) >= 6, names


@pytest.mark.parametrize("assignment", assignments())
def test_every_property_is_broken_by_some_wrong_submission(assignment):
    """A property no wrong submission breaks is untested: it might never fail."""
    broken = set()
    for path in (CORPUS / assignment).glob("*.py"):
        broken |= _declared(path, "FAILS")
    assert {p.name for p in properties_of(assignment)} <= broken


def _declared(path: Path, name: str):
    """What a corpus file declares as ``name = <literal>``, read without running the file."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            if ast.unparse(node.value) == "set()":  # the one non-literal a declaration uses
                return set()
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} declares no {name}")
