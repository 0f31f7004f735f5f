"""The compile cache (autograder/grading/compile_cache.py): what grading kernels read, who writes it,
and that a notebook cannot tell it is there.

Each JAX run here is a child process of its own (JAX reads its cache settings once per process):
the same script run three ways, writing the cache, without any cache, and reading it as a grading
kernel does. Then real ``nbgrader autograde`` runs: the same submissions graded with the cache and
without (``c.ConfinedKernelManager.compile_cache = False``) get the same scores and show the same
outputs, and a submission that goes after the cache finds it unlisted and read-only, and leaves it
as it was.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import graded_course
import nbformat
import pytest
from conftest import REPO

from autograder.grading import compile_cache, compiler
from autograder.tools import scratch

slow = pytest.mark.slow

#: Calls a notebook of the lessons makes, with the logs and events the lessons read switched on;
#: prints what a handler on the root logger (at ``level``) heard, the monitoring events, the
#: results, and how many programs were read from the cache.
_SCRIPT = r'''
import json, logging, re, sys
mode, where, level = sys.argv[1], sys.argv[2], sys.argv[3]
import jax, jax.numpy as jnp, numpy as np
from jax._src import lru_cache

if mode == "write":
    jax.config.update("jax_compilation_cache_dir", where)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
elif mode == "read":
    from autograder.grading import compile_cache
    assert compile_cache.read_only(where)
read = []
_get = lru_cache.LRUCache.get
def counted(self, key):
    value = _get(self, key)
    read.append(value is not None)
    return value
lru_cache.LRUCache.get = counted

records, events = [], []
class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.name, record.levelname, record.getMessage()])
logging.getLogger().addHandler(Keep())
logging.getLogger().setLevel(getattr(logging, level))
jax.monitoring.register_event_duration_secs_listener(lambda event, seconds, **kw: events.append(event))
jax.monitoring.register_event_listener(lambda event, **kw: events.append(event))
jax.config.update("jax_log_compiles", True)
jax.config.update("jax_explain_cache_misses", True)

@jax.jit
def powered(x, scale):
    return jnp.sum(scale * x ** 2)

results = [float(powered(np.arange(n, dtype=np.float32), 1.5)) for n in (3, 4, 4)]
powered.clear_cache()
results.append(float(powered(np.arange(3, dtype=np.float32), 2.5)))
results.append(float(jax.jit(lambda x: x * 2).lower(1.0).compile()(3.0)))
results.append(int((jnp.arange(5) + 1).sum()))
same = lambda text: re.sub(r"\d+\.\d+(e-?\d+)?|id=\d+|0x[0-9a-f]+", "N", text)
print(json.dumps({"records": [[n, l, same(m)] for n, l, m in records], "events": events, "results": results,
                  "read": sum(read)}))
'''


def _run(tmp_path: Path, mode: str, where: Path, level: str = "WARNING") -> dict:
    script = tmp_path / "lesson.py"
    script.write_text(_SCRIPT)
    env = compiler.kernel_environment({**os.environ, "PYTHONPATH": str(REPO)})
    done = subprocess.run([sys.executable, str(script), mode, str(where), level], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("compiled")
    _run(where, "write", where)
    assert any(name.endswith("-cache") for name in os.listdir(where))
    return where


def test_a_kernel_reads_the_cache_and_the_lessons_hear_what_they_hear_without_it(written, tmp_path):
    """What the lessons' log readers and event counters get (the root logger at its default level,
    WARNING: ``jax_log_compiles`` and ``jax_explain_cache_misses`` lines) is the same whether JAX
    compiled every program or read every one from the cache; without the filters, JAX adds a
    *Persistent compilation cache hit* line per program and three events per hit."""
    without = _run(tmp_path, "none", written)
    reading = _run(tmp_path, "read", written)
    assert reading["read"] >= 4, "the kernel read the programs the writer compiled"
    assert without["read"] == 0
    assert reading["results"] == without["results"]
    assert reading["records"] == without["records"]
    assert reading["events"] == without["events"]
    assert any("Finished XLA compilation" in message for _, _, message in reading["records"])
    assert any("TRACING CACHE MISS" in message for _, _, message in reading["records"])


def test_at_debug_level_only_jax_s_own_cache_bookkeeping_differs(written, tmp_path):
    """The one difference the module's docstring owns up to: with the root logger at DEBUG (no
    lesson sets it), a program read from the cache lacks the DEBUG lines JAX logs about looking in a
    cache that is not there and not writing one. Every other record is the same, in order."""
    without = _run(tmp_path, "none", written, "DEBUG")
    reading = _run(tmp_path, "read", written, "DEBUG")
    bookkeeping = ("PERSISTENT COMPILATION CACHE MISS", "Not writing persistent cache entry",
                   "get_executable_and_time: cache is disabled")
    kept = [r for r in without["records"] if not r[2].startswith(bookkeeping)]
    assert [r for r in reading["records"] if not r[2].startswith(bookkeeping)] == kept
    assert not any("Persistent compilation cache hit" in r[2] for r in reading["records"])
    assert reading["events"] == without["events"]


def test_a_garbage_entry_is_compiled_instead_and_says_nothing(written, tmp_path):
    """An entry JAX cannot read (a disk error, a truncated write, a tampered file) costs a compile:
    the same results, records and events, and no warning on the kernel's stderr (a student's cell)."""
    spoiled = tmp_path / "spoiled"
    spoiled.mkdir()
    for entry in os.listdir(written):
        if entry.endswith("-cache"):
            (spoiled / entry).write_bytes(b"not an executable" * 10)
    without = _run(tmp_path, "none", spoiled)
    reading = _run(tmp_path, "read", spoiled)
    assert reading["read"] >= 4, "the spoiled entries were found and read"
    assert reading["results"] == without["results"]
    assert reading["records"] == without["records"]
    assert reading["events"] == without["events"]
    assert "persistent compilation cache" not in reading["stderr"].lower()


def test_a_kernel_never_writes(tmp_path):
    """A kernel reading an empty folder compiles everything and writes nothing (JAX writes only a
    compile slower than :data:`compile_cache.NEVER` seconds); the folder here is even writable."""
    empty = tmp_path / "empty"
    empty.mkdir()
    reading = _run(tmp_path, "read", empty)
    assert reading["read"] == 0
    assert os.listdir(empty) == []


def test_a_folder_that_others_can_write_is_not_lent(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    where = compile_cache.folder()
    assert compile_cache.kernel_folder() is None  # none yet
    where.mkdir(parents=True)
    for mode, lent in ((0o311, True), (0o711, True), (0o331, False), (0o313, False), (0o777, False)):
        os.chmod(where, mode)
        assert (compile_cache.kernel_folder() == str(where)) is lent, oct(mode)


def test_the_warm_up_writes_once_per_reference_version(tmp_path, monkeypatch):
    """The reference is run once: a second command finds the stamp; a changed reference runs again.
    The folder cannot be listed by anyone but root, and every entry is readable by a kernel's user."""
    course = tmp_path / "course"
    assignment = "loops"
    source = course / "source" / assignment
    shutil.copytree(REPO / "source" / assignment, source, ignore=shutil.ignore_patterns("__pycache__"))
    before = sorted(str(p.relative_to(source)) for p in source.rglob("*"))
    assert "selfcheck.py" in before  # the reference imports it
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    where = compile_cache.warm(assignment, course, env)
    # The instructor's source/ is left as it was: the reference ran in a copy (a __pycache__ it once
    # left there changed the course's source and every later student's folder).
    assert sorted(str(p.relative_to(source)) for p in source.rglob("*")) == before
    assert where == tmp_path / "xdg" / "jax-tracing-course" / "compiled"
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o311
    entries = sorted(name for name in os.listdir(where) if name.endswith("-cache"))
    assert len(entries) > 5
    assert all(stat.S_IMODE(os.stat(where / name).st_mode) == 0o644 for name in entries)
    assert [name for name in os.listdir(where) if not name.endswith("-cache")] == []  # nothing but JAX's entries
    stamps = os.listdir(where.parent / "compile-cache-stamps")
    assert len(stamps) == 1 and stamps[0].startswith(f"{assignment}-")

    def no_second_run(*args, **kwargs):
        raise AssertionError("the reference ran again")

    with monkeypatch.context() as patch:
        patch.setattr(compile_cache.subprocess, "run", no_second_run)
        assert compile_cache.warm(assignment, course, env) == where

    nb = nbformat.read(source / f"{assignment}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A reference changed after its first grading."))
    nbformat.write(nb, source / f"{assignment}.ipynb")
    compile_cache.warm(assignment, course, env)
    assert len(os.listdir(where.parent / "compile-cache-stamps")) == 2


def test_no_reference_no_warm_up_and_a_broken_one_only_logs(tmp_path, caplog):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    assert compile_cache.warm("loops", tmp_path / "no-course", env) is None
    source = tmp_path / "course" / "source" / "loops"
    source.mkdir(parents=True)
    (source / "loops.ipynb").write_text("{not a notebook")
    assert compile_cache.warm("loops", tmp_path / "course", env) is not None
    assert "failed (it ended with exit code 1" in caplog.text
    stamps = tmp_path / "xdg" / "jax-tracing-course" / "compile-cache-stamps"
    assert len(os.listdir(stamps)) == 1  # a failed reference is not run again by every command
    caplog.clear()
    compile_cache.warm("loops", tmp_path / "course", env)
    assert "failed" not in caplog.text


def test_another_command_s_warm_up_is_waited_for_only_so_long(tmp_path, monkeypatch, caplog):
    """The lock lies beside the folder, where no kernel sees it (a kernel that held it, with a
    read-only descriptor, once stalled every later command); and a command waits for another's
    warm-up at most :data:`compile_cache.WARM_SECONDS`, then grades without it."""
    import fcntl

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    source = tmp_path / "course" / "source" / "loops"
    source.mkdir(parents=True)
    (source / "loops.ipynb").write_bytes((REPO / "source" / "loops" / "loops.ipynb").read_bytes())
    lock_path = tmp_path / "xdg" / "jax-tracing-course" / "compile-cache.lock"
    lock_path.parent.mkdir(parents=True)
    monkeypatch.setattr(compile_cache, "WARM_SECONDS", 1)
    with open(lock_path, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another command, writing
        assert compile_cache.warm("loops", tmp_path / "course", env) is not None
    assert "grading without waiting" in caplog.text
    assert not any((tmp_path / "xdg" / "jax-tracing-course" / "compile-cache-stamps").iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="gives folders and links to another user id (root only)")
def test_a_cache_folder_another_user_can_redirect_is_never_written(tmp_path):
    """A red-team find: with ``XDG_CACHE_HOME`` in a folder of another user's, that user planted
    ``compiled`` as a link to a folder of root's, and root's warm-up set that folder's mode to 0311
    and wrote its entries there. Now nothing is made, changed or lent along a way another user
    (or anyone, in a folder writable by all that is not sticky) could change."""
    other = 54321
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    os.chmod(victim, 0o755)
    theirs = tmp_path / "theirs"
    (theirs / "jax-tracing-course").mkdir(parents=True)
    os.symlink(victim, theirs / "jax-tracing-course" / "compiled")
    for path in (theirs, theirs / "jax-tracing-course"):
        os.chown(path, other, other)
    os.chown(theirs / "jax-tracing-course" / "compiled", other, other, follow_symlinks=False)
    course = tmp_path / "course" / "source" / "loops"
    course.mkdir(parents=True)
    (course / "loops.ipynb").write_bytes((REPO / "source" / "loops" / "loops.ipynb").read_bytes())

    assert not compile_cache.trusted(theirs / "jax-tracing-course" / "compiled")
    assert compile_cache.warm("loops", tmp_path / "course", {**os.environ, "XDG_CACHE_HOME": str(theirs)}) is None
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o755 and os.listdir(victim) == []

    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    os.chmod(open_to_all, 0o777)
    assert not compile_cache.trusted(open_to_all / "jax-tracing-course" / "compiled")
    os.chmod(open_to_all, 0o1777)  # sticky, as /tmp: what lies in it is its owner's alone
    assert compile_cache.trusted(open_to_all / "jax-tracing-course" / "compiled")
    os.symlink(victim, tmp_path / "root-s-link")  # a link of root's own, to a folder of root's
    assert compile_cache.trusted(tmp_path / "root-s-link" / "compiled")


# ------------------------------------------------------------------------------ real grading kernels

#: A submission that goes after the cache from its own kernel, without naming the grader (which
#: would cost it the points resting on in-kernel evidence): lists it, makes an entry, opens the lock
#: to write, changes the folder's mode, has JAX write one (its minimum compile time set to 0), and
#: prints what it managed; then the notebook goes on as the correct one.
_GOES_AFTER_THE_CACHE = r'''
import os, errno
import jax, jax.numpy as jnp
where = next((value for name, value in os.environ.items() if name.endswith("_COMPILE_CACHE")), None)
done = []
def attempt(name, thunk):
    try:
        thunk()
        done.append(name)
    except OSError as error:
        pass
if where:
    attempt("listed", lambda: os.listdir(where))
    attempt("made an entry", lambda: open(os.path.join(where, "jit_f-" + "0" * 64 + "-cache"), "wb").close())
    attempt("opened a file there to write", lambda: open(os.path.join(where, "x"), "a").close())
    attempt("chmod", lambda: os.chmod(where, 0o777))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.jit(lambda x: jnp.cos(x) * 41.5 + 0.25)(jnp.arange(7.0)).block_until_ready()
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1e9)
print("compile cache:", "lent" if where else "not lent", "| managed:", done or "nothing")
'''


def _submissions(tmp_path: Path) -> dict[tuple[str, str], Path]:
    notebooks = {}
    for assignment in ("loops", "ledger_extension"):
        for kind in ("correct", "partial"):
            notebooks[f"{kind}-student", assignment] = REPO / "tests" / "samples" / assignment / f"{kind}.ipynb"
    nb = nbformat.read(REPO / "tests" / "samples" / "loops" / "correct.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_GOES_AFTER_THE_CACHE))
    nbformat.write(nb, tmp_path / "attacker.ipynb")
    notebooks["attacker", "loops"] = tmp_path / "attacker.ipynb"
    return notebooks


def _entries(where: Path) -> dict[str, bytes]:
    os.chmod(where, 0o711)
    try:
        return {name: (where / name).read_bytes() for name in os.listdir(where) if name.endswith("-cache")}
    finally:
        os.chmod(where, 0o311)


def _grade(root: Path, notebooks: dict, cache: bool) -> scratch.ScratchCourse:
    course = scratch.prepare_course(root)
    if not cache:
        with open(course.root / "nbgrader_config.py", "a") as config:
            config.write("c.ConfinedKernelManager.compile_cache = False\n")
    return graded_course.autograde_each(course, notebooks)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("lists the 0311 cache folder as its owner's root would; tests/test_rootless.py runs as a user")
    work = tmp_path_factory.mktemp("compile-cache")
    notebooks = _submissions(work)
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(work / "xdg")
    try:
        without = _grade(work / "without", notebooks, cache=False)
        assert not (work / "xdg" / "jax-tracing-course" / "compiled").exists()
        with_cache = _grade(work / "with", notebooks, cache=True)
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = previous
    where = work / "xdg" / "jax-tracing-course" / "compiled"
    return notebooks, without, with_cache, where


@slow
def test_grades_and_outputs_are_the_same_with_the_cache(graded):
    from test_forked_kernels import _outputs

    notebooks, without, with_cache, _ = graded
    scores = scratch.read_scores(without), scratch.read_scores(with_cache)
    assert set(scores[0]) == set(notebooks)
    assert scores[0] == scores[1]
    assert all(scores[0]["correct-student", a].points == scores[0]["correct-student", a].max_points
               for a in ("loops", "ledger_extension"))
    for student, assignment in notebooks:
        if student != "attacker":
            assert _shown(_outputs(without, student, assignment)) == _shown(_outputs(with_cache, student, assignment))


def _shown(outputs: list[str]) -> list[str]:
    """Outputs as compared: loops prints the size of an ``eqn_count_pprof`` dump, which names the
    kernel's cell files (``/tmp/ipykernel_<pid>/``), one byte longer for a six-digit pid."""
    return [re.sub(r"eqn_count_pprof \d+ bytes", "eqn_count_pprof N bytes", text) for text in outputs]


@slow
def test_a_submission_cannot_list_or_write_the_cache(graded):
    from test_forked_kernels import _outputs

    notebooks, without, with_cache, where = graded
    entries = _entries(where)
    assert len(entries) > 10
    assert not any(name.startswith("jit_f-000") for name in entries)
    said = "".join(_outputs(with_cache, "attacker", "loops", as_shown=True))
    assert "compile cache: lent | managed: nothing" in said
    assert "compile cache: not lent" in "".join(_outputs(without, "attacker", "loops", as_shown=True))
    scores = scratch.read_scores(with_cache)
    attacker, correct = scores["attacker", "loops"], scores["correct-student", "loops"]
    assert (attacker.points, attacker.cells) == (correct.points, correct.cells) and correct.points == correct.max_points
    # What the attacker's kernel compiled was not written by JAX either: grading again changes nothing.
    scratch.nbgrader(with_cache, ["autograde", "loops", "--force"], with_cache.root)
    assert _entries(where) == entries
