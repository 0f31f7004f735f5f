"""The students' self-check: is each released selfcheck.py current, does it pass every correct
answer and catch some wrong ones, in the graders' form, in a student's bare environment, with
nothing of the hidden graders in it, and is it strictly weaker than they are?"""

from __future__ import annotations

import ast
import io
import itertools
import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import time
import types
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from conftest import COURSE_ASSIGNMENTS, REPO

from autograder.grading import compiler, feedback
from autograder.grading.registry import properties_of
from autograder.grading.results import (
    GroupReport,
    Property,
    PropertyFailure,
    PropertyResult,
)
from autograder.tools import release_selfcheck
from autograder.tools.check import HIDDEN_REGION

SOURCE, RELEASE, CORPUS, SAMPLES = REPO / "source", REPO / "release", REPO / "tests" / "corpus", REPO / "tests" / "samples"
CHECKED = release_selfcheck.assignments_with_checks()
SELF_CHECK_CALL = re.compile(r'^self_check\("(\w+)"\)$', re.MULTILINE)
GRADE_CALL = re.compile(r'grade\("(\w+)", "(\w+)", globals\(\)\)')

#: Per assignment, a corpus mistake the self-check lets through and the hidden graders catch (its
#: FAILS, held to the graders by tests/test_graders.py), and one the self-check catches.
MISSED = {
    "cache_misses": "shape_before_dtype.py",
    "branch_repair": "student_r3_bad_static_gain_wrapper.py",
    "host_sync": "student_static_lr.py",
    "ledger_extension": "signature_forgets_dtype.py",
    "loops": "count_seen_set.py",
    "padded_masking": "mask_by_multiplication.py",
    "static_max_mode": "student_r3_wrong_typeerror_nonstring.py",
}
CAUGHT = {
    "cache_misses": ("never_redefined.py", "causes"),
    "branch_repair": ("swapped_branches.py", "repair"),
    "host_sync": ("read_once_reads_each_step.py", "reads"),
    "ledger_extension": ("sixteen_int32.py", "sixteen"),
    "loops": ("count_top_level.py", "counting"),
    "padded_masking": ("zero_padding_no_mask.py", "objective"),
    "static_max_mode": ("unknown_mode_sums.py", "errors"),
}


def load_release_copy(assignment: str):
    """release/<a>/selfcheck.py as a fresh module of its own (its checks registered afresh)."""
    path = RELEASE / assignment / "selfcheck.py"
    module = types.ModuleType(f"released_selfcheck_{assignment}_{time.monotonic_ns()}")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)  # no __pycache__ written into release/
    return module


def parts_of(module) -> list[str]:
    return list(dict.fromkeys(check.part for check in module.CHECKS))


def grade_groups(assignment: str) -> list[str]:
    """The groups the source notebook's hidden grade cells grade, in order."""
    notebook = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text())
    return [m.group(2) for c in notebook["cells"] for m in GRADE_CALL.finditer("".join(c["source"]))]


def declared(path: Path) -> dict:
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in ("FAILS", "SCORE"):
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def corpus_namespace(path: Path) -> dict:
    namespace = {"__name__": f"corpus_{path.stem}"}
    with redirect_stdout(io.StringIO()):
        exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


# ---------------------------------------------------------------- the copies and the cells


def test_every_course_assignment_has_public_checks():
    assert set(CHECKED) == set(COURSE_ASSIGNMENTS)


@pytest.mark.parametrize("assignment", CHECKED)
def test_source_and_release_copies_are_what_the_generator_writes(assignment):
    made = release_selfcheck.render(assignment)
    fix = "run `python -m autograder selfcheck`, then `nbgrader generate_assignment {a} --force`".format(a=assignment)
    assert (SOURCE / assignment / "selfcheck.py").read_text() == made, f"source/{assignment}/selfcheck.py is stale: {fix}"
    assert (RELEASE / assignment / "selfcheck.py").read_text() == made, f"release/{assignment}/selfcheck.py is stale: {fix}"


def test_the_runner_is_defined_once():
    """Every released copy holds the runner's text exactly once, and the public checks never redefine
    the form (no second render of PASS or FAIL lines)."""
    runner = (REPO / "autograder" / "public" / "runner.py").read_text()
    for assignment in CHECKED:
        text = (RELEASE / assignment / "selfcheck.py").read_text()
        assert text.count(runner) == 1, assignment
        checks = (REPO / "autograder" / "public" / f"{assignment}.py").read_text()
        assert "PASS" not in checks and "FAIL" not in checks and "def self_check" not in checks, assignment


@pytest.mark.parametrize("assignment", CHECKED)
def test_each_graded_part_ends_with_a_self_check_of_its_group(assignment):
    """Each check cell calls self_check with the group of the grade cell right after it, a part the
    released module has, and every grade group has its check cell."""
    notebook = json.loads((RELEASE / assignment / f"{assignment}.ipynb").read_text())
    source = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text())
    by_id = {c["metadata"].get("nbgrader", {}).get("grade_id"): c for c in source["cells"]}
    cells = notebook["cells"]
    parts = parts_of(load_release_copy(assignment))
    called = []
    for index, cell in enumerate(cells):
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if not grade_id.startswith("check_"):
            continue
        meta = cell["metadata"]["nbgrader"]
        assert meta.get("locked") and not meta.get("grade") and not meta.get("solution"), grade_id
        text = "".join(cell["source"])
        assert text.startswith("# Self-check:"), grade_id
        found = SELF_CHECK_CALL.findall(text)
        assert len(found) == 1, f"{assignment}/{grade_id}: {text!r}"
        following = by_id[cells[index + 1]["metadata"]["nbgrader"]["grade_id"]]
        group = GRADE_CALL.search("".join(following["source"])).group(2)
        assert found[0] == group, f"{assignment}/{grade_id} checks {found[0]!r}, its grade cell grades {group!r}"
        assert group in parts, f"{assignment}: no public checks for {group!r}"
        called.append(group)
    assert sorted(called) == sorted(grade_groups(assignment))
    assert sorted(parts) == sorted(called), f"{assignment}: public parts {parts} no check cell calls"


# ---------------------------------------------------------------- the form


def _shape(line: str) -> str:
    """A line's layout without its words: its indentation and its mark or label."""
    found = re.match(r"^( *)(PASS|FAIL|NOTE|[A-Z][a-z]+:)( *)", line)
    return (found.group(1) + found.group(2) + found.group(3)) if found else "header"


def test_self_check_lines_have_the_feedback_shape():
    """For the same failing property, the self-check's lines and the graders' ``render`` lines have
    the same labels and indentation (the text after the label starts in the same column)."""
    module = load_release_copy(CHECKED[0])
    words = dict(problem="The thing is wrong.", example="f(float32[3] [1.0, 2.0, 3.0])", got="4.0", expected="5.0")
    check = module.Check("demo", "a title", "a hint", lambda names, rng: iter(()))
    mine = module.Result(check, "fail", words["example"], words["problem"], words["got"], words["expected"]).lines()
    prop = Property(name="t", group="demo", points=1, title="a title", hint="a hint", run=None)
    failed = PropertyResult(prop=prop, passed=False, failure=PropertyFailure(words["problem"], example=words["example"],
                                                                              got=words["got"], expected=words["expected"]))
    theirs = feedback.render(GroupReport("a", "demo", (failed,))).split("\n")[1:]
    assert [_shape(line) for line in mine] == [_shape(line) for line in theirs]
    for line_mine, line_theirs in zip(mine[1:], theirs[1:]):
        assert line_mine == line_theirs  # label, column and text: the same line
    passed = PropertyResult(prop=prop, passed=True)
    assert _shape(module.Result(check, "pass").lines()[0]) == _shape(feedback.render(
        GroupReport("a", "demo", (passed,))).split("\n")[1])


def test_a_raising_example_is_a_failure_in_one_line():
    module = load_release_copy(CHECKED[0])

    def examples(names, rng):
        yield "the first example", lambda: None
        yield "the second example", lambda: {}["missing key"]
        yield "never reached", lambda: pytest.fail("the loop went on after a failure")

    module.CHECKS[:] = [module.Check("p", "raises", "a hint", examples)]
    lines = module.run("p", {}).lines()
    assert lines[0].startswith(f"Self-check {CHECKED[0]} / p: 0 of 1")
    assert "does not promise full marks" in lines[1]
    assert lines[2] == "  FAIL  raises"
    assert lines[3] == "        Problem:  The example stopped with KeyError: 'missing key'"
    assert lines[4] == "        Example:  the second example"
    assert lines[5] == "        Hint:     a hint"
    assert "Traceback" not in "\n".join(lines)


def test_nothing_runs_while_nbgrader_autogrades(monkeypatch, capsys):
    module = load_release_copy(CHECKED[0])
    part = parts_of(module)[0]
    module.CHECKS[:] = [module.Check(part, "t", "h", lambda names, rng: iter([("e", lambda: 1 / 0)]))]
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    module.self_check(part, {})
    assert capsys.readouterr().out == (f"Self-check {CHECKED[0]} / {part}: not run while nbgrader grades; "
                                       "the graded cell below checks.\n")
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")  # the student's Validate button: the checks run
    module.self_check(part, {})
    assert "  FAIL  t" in capsys.readouterr().out


def test_the_time_budget_stops_between_examples():
    module = load_release_copy(CHECKED[0])
    ran = []

    def slow(names, rng):
        for i in itertools.count():
            yield f"example {i}", lambda i=i: (ran.append(i), time.sleep(0.05))

    module.CHECKS[:] = [module.Check("p", "slow", "h", slow), module.Check("p", "after", "h", slow)]
    started = time.monotonic()
    lines = module.run("p", {}, budget=0.3).lines()
    assert time.monotonic() - started < 2
    assert 3 <= len(ran) <= 10
    assert lines[2:] == ["  NOTE  Not finished in the time budget, so not judged: slow",
                         "  NOTE  Not finished in the time budget, so not judged: after"]


# ---------------------------------------------------------------- the samples, in a student's environment

_STUDENT = textwrap.dedent("""
    import importlib.abc, json, sys
    folder, site, notebooks = sys.argv[1], sys.argv[2], sys.argv[3:]
    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"autograder", "hypothesis", "pytest", "_pytest", "nbgrader", "IPython"}:
                raise ModuleNotFoundError(f"No module named {name!r} on a student's machine")
    sys.meta_path.insert(0, Absent())
    sys.path[:] = [folder] + [p for p in sys.path if "site-packages" not in p] + [site]
    import io, os, tempfile
    os.chdir(folder)
    for path in notebooks:
        print("=== NOTEBOOK", path, flush=True)
        namespace = {"__name__": "__main__"}
        for cell in json.load(open(path))["cells"]:
            if cell["cell_type"] != "code":
                continue
            text = "".join(cell["source"])
            checking = "self_check(" in text
            if checking:  # what reaches stderr here, from Python or below it, is kept to be shown
                sys.stderr.flush()
                saved, kept = os.dup(2), tempfile.TemporaryFile()
                os.dup2(kept.fileno(), 2)
                python_stderr, sys.stderr = sys.stderr, io.StringIO()
            try:
                exec(compile(text, "<cell>", "exec"), namespace)
            except BaseException as error:
                print("=== CELL RAISED", type(error).__name__, error, flush=True)
            finally:
                if checking:
                    written, sys.stderr = sys.stderr.getvalue(), python_stderr
                    os.dup2(saved, 2)
                    kept.seek(0)
                    written += kept.read().decode(errors="replace")
                    if written:
                        print("=== STDERR DURING SELF-CHECK", repr(written[:500]), flush=True)
    """)


@pytest.fixture(scope="module")
def student_runs():
    """Per assignment: stdout and stderr of the correct, then the partial sample, run cell by cell in
    a fresh ``python -I -S`` whose path holds only the release folder, the standard library and the
    site-packages (no .pth files: an editable autograder is not there; autograder, hypothesis, pytest,
    nbgrader and IPython refused), as a student's Python with jax and numpy would run them."""
    site = sysconfig.get_paths()["purelib"]
    env = compiler.kernel_environment(dict(os.environ))  # XLA's optimisations off: faster compiles, same results
    runs = {}
    for assignment in CHECKED:
        notebooks = [str(SAMPLES / assignment / f"{kind}.ipynb") for kind in ("correct", "partial")]
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", _STUDENT, str(RELEASE / assignment), site, *notebooks],
                              capture_output=True, text=True, timeout=300, cwd="/", env=env)
        runs[assignment] = (proc, time.monotonic() - started)
    return runs


def _reports(text: str) -> list[list[str]]:
    """The self-check reports in a notebook's output: each header with its lines."""
    reports = []
    for line in text.splitlines():
        if line.startswith("Self-check "):
            reports.append([line])
        elif reports and line.startswith("  "):
            reports[-1].append(line)
    return reports


@pytest.mark.parametrize("assignment", CHECKED)
def test_the_correct_sample_passes_and_the_partial_one_fails_in_a_bare_environment(assignment, student_runs):
    proc, seconds = student_runs[assignment]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "=== STDERR DURING SELF-CHECK" not in proc.stdout, proc.stdout[-3000:]
    assert "=== CELL RAISED ModuleNotFoundError" not in proc.stdout, proc.stdout[-3000:]
    correct, partial = proc.stdout.split("=== NOTEBOOK ")[1:]
    groups = sorted(grade_groups(assignment))
    passed = _reports(correct)
    assert sorted(r[0].split(" / ")[1].split(":")[0] for r in passed) == groups, correct[-3000:]
    for report in passed:
        assert "FAIL" not in "\n".join(report) and re.search(r": (\d+) of \1 public checks pass$", report[0]), report
    assert "=== CELL RAISED" not in correct, correct[-3000:]
    failed = [r for r in _reports(partial) if any(line.startswith("  FAIL  ") for line in r)]
    assert failed, f"the partial sample of {assignment} passed every self-check"
    for report in failed:
        block = report[report.index(next(line for line in report if line.startswith("  FAIL  "))):]
        labels = [line.split(":")[0].strip() for line in block[1:] if line.startswith("        ")]
        assert labels[0] == "Problem" and labels[-1] == "Hint" and "Example" in labels, report


# ---------------------------------------------------------------- the corpus: weaker than the graders


_JUDGE = textwrap.dedent("""
    import contextlib, io, json, sys
    verdicts = []
    for item in json.loads(sys.argv[1]):
        namespace = {"__name__": "corpus_file"}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(open(item["file"]).read(), item["file"], "exec"), namespace)
        module = {"__name__": "selfcheck_" + str(len(verdicts)), "__file__": item["selfcheck"]}
        exec(compile(open(item["selfcheck"]).read(), item["selfcheck"], "exec"), module)
        failing = {}
        for part in dict.fromkeys(check.part for check in module["CHECKS"]):
            report = module["run"](part, namespace)
            if not report.passed:
                failing[part] = report.lines()
        verdicts.append([item["assignment"], item["name"], failing])
    print(json.dumps(verdicts))
    """)


def _corpus_files_to_judge() -> list[tuple[str, str]]:
    chosen = []
    for assignment in CHECKED:
        correct = [p.name for p in sorted((CORPUS / assignment).glob("*.py")) if not declared(p).get("FAILS")]
        chosen += [(assignment, name) for name in correct + [MISSED[assignment], CAUGHT[assignment][0]]]
    return chosen


@pytest.fixture(scope="module")
def corpus_verdicts() -> dict[tuple[str, str], dict[str, list[str]]]:
    """(assignment, corpus file) -> {failing part: its report lines}, for every corpus file that declares
    no FAILS and the chosen missed and caught mistakes: two processes, each a half of the files, each file
    in a namespace of its own and a fresh copy of the released selfcheck.py, compiling as grading kernels
    do (XLA's optimisations off: the same programs and results, half the compile time)."""
    items = [{"assignment": a, "name": n, "file": str(CORPUS / a / n), "selfcheck": str(RELEASE / a / "selfcheck.py")}
             for a, n in _corpus_files_to_judge()]
    halves = [items[0::2], items[1::2]]
    env = compiler.kernel_environment(dict(os.environ))
    procs = [subprocess.Popen([sys.executable, "-B", "-c", _JUDGE, json.dumps(half)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for half in halves]
    verdicts = {}
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        for assignment, name, failing in json.loads(out.strip().splitlines()[-1]):
            verdicts[assignment, name] = failing
    return verdicts


@pytest.mark.parametrize("assignment", CHECKED)
def test_no_correct_corpus_file_fails_the_self_check(assignment, corpus_verdicts):
    correct = [p.name for p in sorted((CORPUS / assignment).glob("*.py")) if not declared(p).get("FAILS")]
    assert len(correct) >= 2, f"tests/corpus/{assignment} has fewer than two files declaring no FAILS"
    for name in correct:
        failing = corpus_verdicts[assignment, name]
        assert not failing, f"{name} (declares no FAILS) fails the self-check: {failing}"


@pytest.mark.parametrize("assignment", CHECKED)
def test_the_graders_catch_a_mistake_the_self_check_misses(assignment, corpus_verdicts):
    name = MISSED[assignment]
    assert declared(CORPUS / assignment / name)["FAILS"], f"{name} should declare what the hidden graders fail"
    assert not corpus_verdicts[assignment, name], f"the self-check now catches {name}: pick another"


@pytest.mark.parametrize("assignment", CHECKED)
def test_the_self_check_catches_a_corpus_mistake_in_the_feedback_form(assignment, corpus_verdicts):
    name, part = CAUGHT[assignment]
    failing = corpus_verdicts[assignment, name]
    assert part in failing, f"{name} passes the {part!r} self-check: {failing}"
    block = failing[part]
    assert block[0].startswith(f"Self-check {assignment} / {part}: ")
    fail = next(i for i, line in enumerate(block) if line.startswith("  FAIL  "))
    assert block[fail + 1].startswith("        Problem:  ")
    assert block[fail + 2].startswith("        Example:  ")
    assert any(line.startswith("        Hint:     ") for line in block[fail + 2:])


# ---------------------------------------------------------------- nothing hidden in release/


def _solution_lines(assignment: str) -> set[str]:
    notebook = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text())
    lines = set()
    for cell in notebook["cells"]:
        for region in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", "".join(cell["source"]), re.S):
            lines |= {line.strip() for line in region.splitlines() if len(line.strip()) >= 25}
    return lines


def _distinctive(path: Path) -> set[str]:
    lines = set()
    for line in path.read_text().splitlines():
        line = line.strip()
        if len(line) >= 30 and not line.startswith(("#", "import ", "from ", '"""', "'''")) and not line.endswith(":"):
            lines.add(line)
    return lines


@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_release_holds_no_hidden_property_solution_or_hidden_test(assignment):
    """No file of release/<a> holds a line of the hidden property module, of a hidden test region or of a
    solution region, and selfcheck.py holds no hidden property's title or hint. A notebook may repeat what
    the source notebook shows students anyway (its contract, its slow originals): those lines are left out."""
    module = REPO / "autograder" / "properties" / f"test_{assignment}.py"
    props = properties_of(assignment)
    source = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text())
    cells = ["".join(c["source"]) for c in source["cells"]]
    hidden_tests = {line.strip() for c in cells for region in HIDDEN_REGION.findall(c)
                    for line in region.splitlines() if line.strip()}
    solution = _solution_lines(assignment)
    shown = {line.strip() for c in cells
             for line in re.sub(r"### BEGIN SOLUTION\n.*?### END SOLUTION", "", HIDDEN_REGION.sub("", c),
                                flags=re.S).splitlines()}
    hidden = (_distinctive(module) | hidden_tests | solution)
    assert props and hidden_tests and solution and _distinctive(module)
    files = [p for p in (RELEASE / assignment).iterdir() if p.is_file()]
    assert (RELEASE / assignment / f"{assignment}.ipynb") in files
    for path in files:
        text = path.read_text()
        if path.suffix == ".ipynb":
            lines = {line.strip() for c in json.loads(text)["cells"] for line in "".join(c["source"]).splitlines()}
            leaked = (lines & hidden) - shown
        else:
            lines = {line.strip() for line in text.splitlines()}
            leaked = lines & hidden
            for prop in props:
                assert prop.title not in text and prop.hint not in text, f"{path} shows the hidden property {prop.name}"
            assert "autograder" not in text and not GRADE_CALL.search(text), f"{path} names the grader"
        assert not leaked, f"{path} holds hidden lines: {sorted(leaked)[:3]}"


# ---------------------------------------------------------------- speed


@pytest.mark.parametrize("assignment", CHECKED)
def test_each_part_runs_in_seconds_on_the_reference_answer(assignment):
    namespace = corpus_namespace(CORPUS / assignment / "correct.py")
    module = load_release_copy(assignment)
    for part in parts_of(module):
        started = time.monotonic()
        report = module.run(part, namespace)
        seconds = time.monotonic() - started
        assert report.passed, report.text()
        assert seconds < 5, f"{assignment} / {part} took {seconds:.1f} s"
