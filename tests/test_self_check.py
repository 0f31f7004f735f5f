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
    "compile_log": "every_compiling_line_a_program.py",
    "branch_repair": "student_r3_bad_static_gain_wrapper.py",
    "host_sync": "student_static_lr.py",
    "ledger_extension": "student_c_dict_insertion_order.py",
    "loops": "count_seen_set.py",
    "padded_masking": "not_jitted.py",
    "repair_clinic": "student_b_always_normalize.py",
    "static_max_mode": "mode_stripped.py",
}
CAUGHT = {
    "cache_misses": ("never_redefined.py", "causes"),
    "compile_log": ("returns_a_list_of_lines.py", "capture"),
    "branch_repair": ("swapped_branches.py", "repair"),
    "host_sync": ("read_once_reads_each_step.py", "reads"),
    "ledger_extension": ("sixteen_int32.py", "sixteen"),
    "loops": ("count_top_level.py", "counting"),
    "padded_masking": ("zero_padding_no_mask.py", "objective"),
    "repair_clinic": ("slow_as_given.py", "smooth"),
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


# ---------------------------------------------------------------- the notebooks' own traps, each caught


def _failures(assignment: str, namespace: dict, part: str):
    """The results of ``part`` that are not passes, run by a fresh release copy on ``namespace``."""
    module = load_release_copy(assignment)
    report = module.run(part, namespace)
    return [result for result in report.results if result.status != "pass"], report


def _with(assignment: str, wrong: str) -> dict:
    """The reference answer (tests/corpus/<a>/correct.py) with the cells in ``wrong`` run after it."""
    namespace = corpus_namespace(CORPUS / assignment / "correct.py")
    exec(compile(textwrap.dedent(wrong), f"<wrong {assignment}>", "exec"), namespace)
    return namespace


#: (assignment, corpus file making the mistake, part, words of its Problem, words of its Example): each
#: a case the notebook states that the public checks did not try before, caught by its new example.
TRAPS_IN_CORPUS = [
    ("padded_masking", "student_r3_wrong_mask_from_nan.py", "padding", "mask should mark exactly the real rows",
     "a real row may hold nan"),
    ("padded_masking", "count_and_keep_prefix.py", "objective", "sum over the marked rows only.", "not a prefix"),
    ("padded_masking", "student_r3_wrong_times_bool_mask.py", "objective", "op by op, under `jax.disable_jit()`",
     "under jax.disable_jit()"),
    ("padded_masking", "student_r3_wrong_nansum.py", "objective", "sum over the marked rows only",
     "a marked row that holds nan"),
    ("padded_masking", "student_c_count_positive_values.py", "gradient", "not the unpadded one",
     "padded to 8 with inf"),
    ("host_sync", "not_jitted.py", "step", "`sgd_step` is not jitted", "jax.make_jaxpr"),
    ("host_sync", "step_gradient_only_jitted.py", "step", "not one jitted program", "jax.make_jaxpr"),
    ("host_sync", "float_inside_loop.py", "reads", "outside `read`: a hidden wait", "θ traced"),
    ("host_sync", "print_each_step.py", "reads", "outside `read`: a hidden wait", "watching print, f-strings"),
    ("host_sync", "student_e_compiling_message.py", "diagnosis", "Lowering a program traced before", "only lowers"),
    ("branch_repair", "epsilon_threshold.py", "repair", "total its gain asks for", "the next float32 above 1.0"),
    ("branch_repair", "arithmetic_blend.py", "repair", "Run op by op", "under jax.disable_jit()"),
    ("branch_repair", "student_r3_bad_inverted_nan_gain.py", "repair", "total its gain asks for", "a nan gain"),
    ("static_max_mode", "student_r3_wrong_typeerror_nonstring.py", "errors", "TypeError", "mode=None"),
    ("cache_misses", "student_r3_spectral_norm.py", "repairs", "slow original's result", "a 2-D x"),
    ("cache_misses", "student_r3_sum_over_len.py", "repairs", "slow original's result", "low == high"),
    ("cache_misses", "keyword_list_weak_first.py", "causes", "another cause", "now i32[]{weak_type=True}"),
    ("loops", "scan_fully_unrolled.py", "rolled", "unrolls the whole loop", "rolled(v, 40)"),
    ("loops", "loop_in_a_callback.py", "rolled", "no `scan` or `while` equation", "rolled(v, 40)"),
    ("loops", "count_by_param_name.py", "counting", "another count", "lax.while_loop"),
    ("loops", "student_gus_no_tuple_unjitted.py", "counting", "another count", "lax.cond"),
    ("loops", "quantise_fresh_lambda.py", "pytree", "A new `scale` traced again", "then at 0.25, 2.0 and 0.1"),
    ("ledger_extension", "signature_forgets_dtype.py", "signature", "signatures should differ",
     "scale 2 (an int), then 2.0"),
]

#: (assignment, the wrong cells run after the reference answer, part, words of its Problem, of its Example).
TRAPS_WRITTEN = [
    ("padded_masking", """
        def pad_batch(values, size):  # the mask read from the values: a real row that holds 0 is taken for padding
            if len(values) > size:
                raise ValueError("too long")
            padded = jnp.zeros(size, jnp.float32).at[:len(values)].set(jnp.asarray(values, jnp.float32))
            return padded, padded != 0
        """, "padding", "The mask should mark exactly the real rows.", "[0.0, 2.0, 0.0]"),
    ("padded_masking", """
        def pad_batch(values, size):  # stacks the values one by one: an empty batch has nothing to stack
            if len(values) > size:
                raise ValueError("too long")
            real = jnp.stack([jnp.float32(v) for v in values])
            return jnp.concatenate([real, jnp.zeros(size - len(values), jnp.float32)]), jnp.arange(size) < len(values)
        """, "padding", "The example stopped with", "an empty batch"),
    ("padded_masking", """
        def masked_loss(t, values, mask):  # assumes the real rows come first
            n = jnp.sum(mask)
            first = jnp.arange(values.shape[0]) < n
            logs = jnp.log(jnp.where(first, values, 1.0))
            return jnp.sum(jnp.where(first, (logs - t) ** 2, 0.0)) / n

        loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
        """, "gradient", "not the unpadded one", "real rows not a prefix"),
    ("padded_masking", """
        def masked_loss(t, values, mask):  # multiplies by the bool mask, nothing cleaned before the log
            return jnp.sum((jnp.log(values) - t) ** 2 * mask) / jnp.sum(mask)

        loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
        """, "gradient", "not the unpadded one", "padded to 8 with"),
    ("host_sync", """
        import logging

        def phase_row(label, thunk):  # reads the compile log: *Compiling* taken for a compile
            messages = []

            class Keep(logging.Handler):
                def emit(self, record):
                    messages.append(record.getMessage())

            logger = logging.getLogger("jax")
            keep = Keep()
            logger.addHandler(keep)
            try:
                with jax.log_compiles(True):
                    thunk()
            finally:
                logger.removeHandler(keep)
            traces = sum("Finished tracing" in m for m in messages)
            compiles = sum(m.startswith("Compiling") for m in messages)
            return {"label": label, "traced": traces > 0, "compiled": compiles > 0, "traces": traces,
                    "compiles": compiles}
        """, "ledger", "'lower only, a new shape' row", ".lower(v3, 0.5)"),
    ("ledger_extension", """
        seen_shapes = set()

        def observed_call(label, x, scale):  # predicts a trace from the shape instead of observing one
            traced = (x.shape, str(x.dtype)) not in seen_shapes
            seen_shapes.add((x.shape, str(x.dtype)))
            result = float(compiled_square_sum(x, scale))
            call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                              "traced": traced, "trace_count": trace_log["count"], "result": result})
            return result
        """, "traces", "traced flag is not what JAX did", "compiled_square_sum"),
    ("ledger_extension", """
        def observed_call(label, x, scale):  # rounds the result to an int when x is an int array
            before = trace_log["count"]
            value = compiled_square_sum(x, scale)
            result = int(value) if x.dtype == jnp.int32 else float(value)
            call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                              "traced": trace_log["count"] > before, "trace_count": trace_log["count"],
                              "result": result})
            return result
        """, "rows", "not a Python float", "scale 3 (a Python int)"),
    ("static_max_mode", """
        import functools

        import jax.numpy as jnp

        @functools.partial(jax.jit, static_argnames=("mode", "n_iter", "eps", "clip_at"))
        def normalise_jitted(x, mode, n_iter, eps, clip_at):  # every number static: an array cannot be hashed
            y = x
            for _ in range(n_iter):
                y = 0.5 * (y + jnp.roll(y, 1))
            size = jnp.linalg.norm(y) if mode == "l2" else jnp.max(jnp.abs(y))
            y = y / (size + eps)
            peak = jnp.max(jnp.abs(y))
            return jnp.where(peak > clip_at, y * (clip_at / peak), y)
        """, "sorting", "The example stopped with", "0-d float32 arrays"),
]


def _the_failure(failures, problem: str, example: str, where: str):
    blocks = ["\n".join(r.lines()) + f"\n        [example] {r.example}" for r in failures]
    assert any(r.status == "fail" and problem in r.problem and example in r.example for r in failures), (
        f"{where}: no FAIL with {problem!r} at an example with {example!r}:\n" + "\n".join(blocks))


@pytest.mark.parametrize("assignment, name, part, problem, example", TRAPS_IN_CORPUS,
                         ids=[f"{a}-{n}" for a, n, *_ in TRAPS_IN_CORPUS])
def test_a_corpus_mistake_fails_the_new_example_with_its_problem(assignment, name, part, problem, example):
    assert declared(CORPUS / assignment / name)["FAILS"], f"{name} should be a mistake"
    failures, _ = _failures(assignment, corpus_namespace(CORPUS / assignment / name), part)
    _the_failure(failures, problem, example, f"{assignment}/{name}")


@pytest.mark.parametrize("assignment, wrong, part, problem, example", TRAPS_WRITTEN,
                         ids=[f"{a}-{p}-{i}" for i, (a, _, p, *_) in enumerate(TRAPS_WRITTEN)])
def test_a_written_mistake_fails_the_new_example_with_its_problem(assignment, wrong, part, problem, example):
    failures, _ = _failures(assignment, _with(assignment, wrong), part)
    _the_failure(failures, problem, example, f"{assignment}: {wrong.strip().splitlines()[0]}")
    right, _ = _failures(assignment, corpus_namespace(CORPUS / assignment / "correct.py"), part)
    assert not right, [r.lines() for r in right]


# ---------------------------------------------------------------- never blame a later part for an earlier one

_BROKEN_PAD_BATCH = """
    def pad_batch(values, size):  # the mask is one row short
        values = jnp.asarray(values, jnp.float32)
        n = values.shape[0]
        if n > size:
            raise ValueError("too long")
        return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n - 1
    """


def test_a_later_part_using_a_failing_earlier_function_is_not_checked_naming_it():
    """A broken `pad_batch` beside a right `masked_score`: Part A fails its own check; the objective's check
    that builds its batches with `pad_batch` says it was not checked, naming `pad_batch` and Part A, and fails
    nothing; the objective's check with inputs of its own still runs and passes."""
    namespace = _with("padded_masking", _BROKEN_PAD_BATCH)
    padding, _ = _failures("padded_masking", namespace, "padding")
    assert [r.status for r in padding] == ["fail"], [r.lines() for r in padding]
    for part in ("objective", "traces"):
        results, report = _failures("padded_masking", namespace, part)
        assert results and all(r.status == "not checked" for r in results), report.text()
        assert "FAIL" not in report.text()
        lines = report.lines()
        note = next(i for i, line in enumerate(lines) if line.startswith("  NOTE  Not checked: "))
        assert "`pad_batch`" in lines[note + 1] and "fix Part A first" in lines[note + 1], lines
        assert lines[note + 1].startswith(" " * 8) and not report.passed
    _, objective = _failures("padded_masking", namespace, "objective")
    assert "  PASS  `masked_score` honours any mask" in objective.text()  # its own inputs: still judged
    right, report = _failures("padded_masking", corpus_namespace(CORPUS / "padded_masking" / "correct.py"), "objective")
    assert not right, report.text()


def test_host_sync_later_parts_wait_for_a_step_that_passes_its_own_check():
    """A wrong `sgd_step` (the loss after the update) fails Part A only: the trainers' checks and Part C's say
    they were not checked, naming `sgd_step` and Part A, and mark nothing failed. (The self-check ships no right
    step of its own to put in its place: that would be an answer to Part A in the release folder.)"""
    namespace = corpus_namespace(CORPUS / "host_sync" / "loss_after_update.py")
    step, _ = _failures("host_sync", namespace, "step")
    assert any(r.status == "fail" for r in step)
    for part in ("reads", "traces"):
        results, report = _failures("host_sync", namespace, part)
        assert results and all(r.status == "not checked" for r in results), report.text()
        assert "FAIL" not in report.text()
        assert "your `sgd_step`" in report.text() and "fix Part A first" in report.text()
    right = corpus_namespace(CORPUS / "host_sync" / "correct.py")
    for part in ("reads", "traces"):
        results, report = _failures("host_sync", right, part)
        assert not results, report.text()


def test_a_dependency_is_run_once_and_a_passing_one_lets_the_check_run():
    module = load_release_copy(CHECKED[0])
    ran = []

    def earlier(names, rng):
        yield "earlier", lambda: ran.append("earlier")

    def later(names, rng):
        yield "later", lambda: ran.append("later")

    module.CHECKS[:] = [module.Check("a", "first", "h", earlier),
                        module.Check("b", "second", "h", later, uses=("a",)),
                        module.Check("b", "third", "h", later, uses=("a",))]
    assert module.run("b", {}).passed and ran == ["earlier", "later", "later"]

    def failing(names, rng):
        yield "earlier", lambda: 1 / 0

    module.CHECKS[0] = module.Check("a", "first", "h", failing)
    module.PARTS.clear()
    lines = module.run("b", {}).lines()
    assert lines[2] == "  NOTE  Not checked: second"
    assert lines[3].startswith('        It uses the part checked by self_check("a"), whose own self-check above fails')


# ---------------------------------------------------------------- hints ask, they never answer

_SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)
_API_CHAIN = re.compile(r"\b(?:jax|jnp|lax|np|numpy)((?:\.\w+)+)")
_JIT_KEYWORDS = re.compile(r"\b(static_arg\w+|donate_arg\w+)\b")
_CALLED = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\s*\(")
_DEFINED = re.compile(r"^(?:def|class)\s+(\w+)", re.MULTILINE)
#: Names of the reference answers that each part's contract states itself (the objective's own arithmetic,
#: the error a part asks to provoke, `jit`, which every part's title names): a hint may say them.
_CONTRACT_WORDS = frozenset({
    "jit", "sum", "mean", "max", "log", "sqrt", "sin", "roll", "clip", "linalg", "norm", "arange", "zeros",
    "asarray", "array", "float32", "int32", "float64", "inf", "shape", "errors", "TracerBoolConversionError",
    "make_jaxpr",
})


def distinctive_names(assignment: str) -> set[str]:
    """What the reference answers of ``assignment`` call that the parts' contracts do not name: each JAX or
    NumPy function and module in their solution regions, jit's keyword arguments, and the lesson's own
    helpers they call (a class or function of the notebook's given cells)."""
    notebook = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text())
    solutions, given = [], []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            found = _SOLUTION.findall("".join(cell["source"]))
            solutions += found
            if not found:
                given.append("".join(cell["source"]))
    text, lesson = "\n".join(solutions), set(_DEFINED.findall("\n".join(given)))
    names = {part for chain in _API_CHAIN.findall(text) for part in chain.strip(".").split(".")}
    names |= set(_JIT_KEYWORDS.findall(text)) | {name for name in _CALLED.findall(text) if name in lesson}
    return names - _CONTRACT_WORDS


def named_in(hint: str) -> set[str]:
    """The code names a hint says: every identifier in a backtick span, every dotted chain, every call."""
    spans = re.findall(r"`([^`]*)`", hint)
    names = {name for span in spans for name in re.findall(r"[A-Za-z_]\w*", span)}
    names |= {part for chain in re.findall(r"\b\w+(?:\.\w+)+", hint) for part in chain.split(".")}
    return names | set(_CALLED.findall(hint))


@pytest.mark.parametrize("assignment", CHECKED)
def test_no_hint_names_what_the_reference_answer_calls(assignment):
    """A hint says what is wrong and asks a question that points to the lesson; it never names the fix. Held
    mechanically: no hint of the released self-check says a call, a module or a jit keyword of the reference
    answers that the contracts do not state themselves (the hints of 4bc3936 said `lax.cond`, `jnp.where`,
    `static_argnames`, `lax.fori_loop`, `jax.typeof`, `PhaseWatch` and `jnp.stack`, and fail this test)."""
    answers = distinctive_names(assignment)
    assert answers, f"{assignment}: the reference answers call nothing distinctive, so this test holds nothing"
    told = {check.title: sorted(named_in(check.hint) & answers) for check in load_release_copy(assignment).CHECKS}
    told = {title: names for title, names in told.items() if names}
    assert not told, f"hints naming the answer: {told}"


@pytest.mark.parametrize("assignment", CHECKED)
def test_every_hint_asks_and_points_to_a_section_of_its_notebook(assignment):
    """Each hint is a question, and ends by naming the notebook's section it points to (a heading of the
    release notebook, or a Part)."""
    notebook = json.loads((RELEASE / assignment / f"{assignment}.ipynb").read_text())
    headings = {line.lstrip("#").strip() for cell in notebook["cells"] if cell["cell_type"] == "markdown"
                for line in "".join(cell["source"]).splitlines() if line.startswith("#")}
    for check in load_release_copy(assignment).CHECKS:
        pointer = re.search(r"\(([^()]*)\)\s*$", check.hint)
        assert "?" in check.hint and pointer, f"{check.title!r}: {check.hint!r}"
        assert any(heading == pointer.group(1) or heading.startswith(pointer.group(1) + " ")
                   or heading.startswith(pointer.group(1) + ":") for heading in headings), (
            f"{check.title!r} points to {pointer.group(1)!r}, which is no heading of release/{assignment}")


_STUBS = '''
def pad_batch(values, size):
    # YOUR CODE HERE
    raise NotImplementedError()


def masked_score(values, mask):
    # YOUR CODE HERE
    raise NotImplementedError()
'''


def test_a_function_still_released_as_a_stub_is_not_written_yet_not_wrong():
    """nbgrader releases each answer as `raise NotImplementedError()`: the self-check says which function is
    not written yet, with no hint, and a later part that uses it says so too; a NotImplementedError that says
    something (JAX raises some, for what it cannot do) is a failure like any other error."""
    namespace: dict = {}
    exec(compile(_STUBS, "/tmp/ipykernel_7/2291.py", "exec"), namespace)  # noqa: S102 - a notebook cell's file name
    padding, report = _failures("padded_masking", namespace, "padding")
    assert [r.status for r in padding] == ["not written"], report.text()
    assert "`pad_batch` still raises NotImplementedError" in report.text()
    assert "Hint:" not in report.text() and "FAIL" not in report.text() and not report.passed
    objective, report = _failures("padded_masking", namespace, "objective")
    assert [r.status for r in objective] == ["not checked", "not written"], report.text()
    assert "your `pad_batch`, which is not written yet: write Part A first" in report.text()

    def says_something(values, mask):
        raise NotImplementedError("Differentiation rule for 'custom' not implemented")

    namespace["masked_score"] = says_something
    objective, report = _failures("padded_masking", namespace, "objective")
    assert objective[-1].status == "fail" and "Differentiation rule" in report.text(), report.text()
