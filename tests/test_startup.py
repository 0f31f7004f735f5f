"""What the course's processes pay for before they do any work.

nbformat validates with jsonschema, which imports ``rfc3987_syntax`` when it is
installed: 39 Lark parsers, about 2 s of CPU in every process that reads a
notebook, for an "iri" string format no notebook schema uses. The course's own
commands and workers treat it as absent (``autograder/tools/__init__.py``), and
the README's install leaves it out, so nbgrader's own processes skip it too.
"""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO

from autograder.tools import scratch


def _imports(code: str, **env) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                          env={**os.environ, **env}).stdout.strip()


def test_nbgraders_own_process_does_not_import_rfc3987_syntax():
    """The environment choice: plain `nbgrader autograde` imports nbformat and jsonschema, not it."""
    shown = _imports("import sys, nbgrader.apps.autogradeapp, nbformat, jsonschema; "
                     "print(sorted(m for m in ('nbformat', 'jsonschema', 'rfc3987_syntax') if m in sys.modules))")
    assert shown == "['jsonschema', 'nbformat']"


def test_the_course_commands_treat_rfc3987_syntax_as_absent_even_when_installed(tmp_path):
    """The import guard: with a stand-in package on the path that records its import, a
    course command's process that reads notebooks never imports it."""
    marker = tmp_path / "imported"
    (tmp_path / "rfc3987_syntax.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef is_valid_syntax(*a): return True\n")
    code = ("import autograder.tools.cli, nbformat, jsonschema, nbgrader.apps.api; "
            "from autograder.tools.parallel import worker; print('read')")
    assert _imports(code, PYTHONPATH=f"{tmp_path}:{REPO}") == "read"
    assert not marker.exists()
    # And the stand-in is importable at all: without the guard it would have been imported.
    assert _imports("import nbformat, jsonschema; print('read')", PYTHONPATH=f"{tmp_path}:{REPO}") == "read"
    assert marker.exists()


def test_the_course_commands_load_its_configuration_without_jax(tmp_path):
    """Every command in the course folder loads course_config.py (collect, generate_feedback, export,
    formgrader, ...): JAX, about 1.3 s of CPU, comes only with autograde's judge, which the configuration
    names by import path for nbconvert to import when autograde starts."""
    course = scratch.prepare_course(tmp_path / "course")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "nbgrader", "list"], cwd=course.root,
                          capture_output=True, text=True, env=scratch.tool_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "autograder.confinement.converters" in imported  # the course's configuration was loaded
    assert sorted(m for m in imported if m.split(".")[0] in ("jax", "jaxlib", "hypothesis")) == []


def test_every_xla_flag_the_course_sets_is_one_this_xla_knows(tmp_path):
    """XLA stops a process whose XLA_FLAGS names a flag it does not know, so a flag a jaxlib dropped
    would kill every grading kernel at start (every student 0). The course's flags all hold here;
    a flag XLA does not know is left out and named, the others kept."""
    from autograder.grading import compiler

    assert compiler.known_flags() == compiler.XLA_FLAGS
    done = subprocess.run(
        [sys.executable, "-c", "import logging, sys\nfrom autograder.grading import compiler\n"
         "print(' '.join(compiler.known_flags(('--xla_not_a_flag_anywhere=1',) + compiler.XLA_FLAGS)))"],
        capture_output=True, text=True, check=True, cwd=REPO, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert done.stdout.split() == list(compiler.XLA_FLAGS)
    assert "This XLA does not know --xla_not_a_flag_anywhere=1" in done.stderr
    assert "--xla_not_a_flag_anywhere=1" in (tmp_path / "jax-tracing-course" / "xla-flags.json").read_text()
    unknown = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], capture_output=True, text=True,
                             env={**os.environ, "XLA_FLAGS": "--xla_not_a_flag_anywhere=1"})
    assert unknown.returncode != 0 and "Unknown flag in XLA_FLAGS" in unknown.stderr  # what it would do to a kernel


def test_a_command_leaves_without_teardown_but_with_its_code_output_and_exit_handlers(tmp_path):
    """`python -m autograder` skips the interpreter's teardown of its modules, not what a command
    must finish: its exit code, everything it printed into a pipe (block-buffered), what it logged,
    and the exit handlers registered while it ran."""
    marker, log = tmp_path / "handler-ran", tmp_path / "command.log"
    code = f"""
import atexit, logging, runpy, sys
import autograder.tools.report as report

class Kept:
    def __del__(self):
        print("torn down")

def command(*args, **kwargs):
    atexit.register(lambda: open({str(marker)!r}, "w").close())
    handler = logging.FileHandler({str(log)!r})
    logging.getLogger("a-command").addHandler(handler)
    logging.getLogger("a-command").warning("logged")
    print("x" * 100_000)
    report.kept = Kept()
    return 3

report.main = command
sys.argv = ["autograder", "report", "some-assignment"]
runpy.run_module("autograder", run_name="__main__")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout == "x" * 100_000 + "\n"  # nothing lost, and no teardown ("torn down")
    assert marker.exists()
    assert log.read_text() == "logged\n"


def test_a_command_whose_reader_goes_away_finishes_its_work(tmp_path):
    """`python -m autograder autograde ... | head -1`: once the reader has gone, the command's output
    is dropped, stderr says so once (no traceback), and the command does the rest of its work and
    leaves with its own exit code."""
    marker = tmp_path / "finished"
    code = f"""
import runpy, sys, time
import autograder.tools.report as report

def command(*args, **kwargs):
    for n in range(200):
        print("line", n, flush=True)
        time.sleep(0.01)
    open({str(marker)!r}, "w").close()
    return 2

report.main = command
sys.argv = ["autograder", "report", "some-assignment"]
runpy.run_module("autograder", run_name="__main__")
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout.readline() == b"line 0\n"
    proc.stdout.close()  # as `head -1` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 2, stderr
    assert marker.exists()
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert stderr.count("the reader of this command's output went away") == 1, stderr
