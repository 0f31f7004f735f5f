"""Where the course repository is, and the environment tool subprocesses run in."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from autograder.confinement import PACKAGE_ROOT

#: The course repository: ``source/``, ``release/``, ``tests/``, ``course_config.py``.
REPO_ROOT = PACKAGE_ROOT.parent
SOURCE = REPO_ROOT / "source"
RELEASE = REPO_ROOT / "release"
SAMPLES = REPO_ROOT / "tests" / "samples"
CORPUS = REPO_ROOT / "tests" / "corpus"
#: The sample submissions every assignment has: tests/samples/<assignment>/<kind>.ipynb.
SAMPLE_KINDS = ("correct", "partial", "empty")


def tool_env() -> dict[str, str]:
    """The environment for nbgrader, its kernels and the course's worker processes.

    They grade with this checkout's ``autograder`` package, installed or not; nbgrader
    runs ``alembic`` to create a gradebook, found beside this Python even when its
    environment is not activated."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join(filter(None, [str(Path(sys.executable).parent), env.get("PATH")]))
    return env


def declared(path: Path, name: str, default=None):
    """What a corpus file declares as ``name = <literal>``, read without running it."""
    if path.suffix != ".py":
        return default
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            if ast.unparse(node.value) == "set()":
                return set()
            return ast.literal_eval(node.value)
    return default


def is_correct(path: Path) -> bool:
    """A file that should earn every point: a sample ``correct.ipynb``, a corpus file with no FAILS."""
    if path.suffix == ".ipynb":
        return path.stem == "correct"
    return not declared(path, "FAILS", {"?"})


#: Python's logging as this process found it: what a kernel starts with.
_LOGGING_AT_START: dict = {}


def as_a_kernel_starts() -> None:
    """Before grading a corpus file in a process that graded others (tests/test_graders.py's workers, the
    device check): JAX's caches cleared, and Python's logging (the root's and JAX's loggers) and JAX's
    compile-log option as they were when this process first graded, since no kernel inherits another's.
    An earlier file's handler must not change what the next file's code finds (a ``logging.basicConfig``
    does nothing once the root logger has a handler)."""
    import logging

    import jax

    jax.clear_caches()
    loggers = {name: logging.getLogger(name) for name in ("", "jax")}
    if not _LOGGING_AT_START:
        _LOGGING_AT_START.update({name: (list(lg.handlers), lg.level, lg.propagate, list(lg.filters))
                                  for name, lg in loggers.items()})
    for name, (handlers, level, propagate, filters) in _LOGGING_AT_START.items():
        logger = loggers[name]
        logger.handlers[:], logger.filters[:] = handlers, filters
        logger.setLevel(level)
        logger.propagate = propagate
    jax.config.update("jax_log_compiles", False)
