"""What every grading kernel compiles alike, compiled once: JAX's persistent compilation cache,
written by the reference, read-only to kernels.

Every kernel of an assignment compiles the same programs: the notebook's given code, and, for a
student whose function lowers to the reference's HLO, that function at every shape the graders try.
XLA's CPU backend takes about 10 ms for the smallest of them and 40 ms for an unrolled loop; read
from this cache, 2 to 3 ms.

- **Written once per assignment version, by the instructor's own process.** Before the first
  notebook of an assignment is graded (:func:`warm`, from the converter every autograde command
  runs), a child process of nbgrader's runs the reference notebook (``source/<a>/<a>.ipynb``)
  and every property against it, in-process, with the grading kernels' XLA flags, writing what it
  compiles. A stamp per assignment (the notebook, the grading package, JAX and the flags) says
  it is done, or failed (a reference that fails is not run again until it changes); a changed
  reference writes again. A lock keeps two commands (or two parallel workers) from writing at once;
  a command waits at most :data:`WARM_SECONDS` for another's. Stamps and lock lie beside the folder,
  out of every kernel's sight. The folder is used only where no other user can change the way to
  it (:func:`trusted`): nbgrader's user never writes where another user's folder or link points.
- **Read-only to kernels.** Only a confined kernel reads it (an unconfined one runs as the
  instructor and could write there): the jail binds the folder back read-only, and the kernel
  (:func:`read_only`) sets JAX's minimum compile time for a write beyond any compile, so JAX never
  tries. No kernel writes an entry another kernel loads.
- **Unlisted.** The folder is mode 0311: a kernel can open an entry whose name it already knows
  and cannot list the others (nor can its owner, whose user id a kernel of the rootless jail has).
  An entry's name is a SHA-256 of its program's HLO, the compile options and the versions, so a
  kernel can name only programs it can build itself: the
  reference's programs stay unreadable to a notebook that has not written them. (What it can learn
  is whether a program it built is one the reference built: a timing or a hit. The graders judge
  behaviour, not a program's text; docs/threat-model.md says so.)
- **Invisible to the lessons.** With the cache on, JAX adds log records (*Persistent compilation
  cache hit for ...* under ``jax_log_compiles``, *PERSISTENT COMPILATION CACHE MISS* and *Not
  writing persistent cache entry* under ``jax_explain_cache_misses``) and monitoring events
  (``/jax/compilation_cache/cache_hits`` and two durations) that a notebook never met, and a
  student's log reader or event counter would be graded on them. A kernel drops exactly those
  (:class:`_QuietCache`, :class:`_WithoutHitEvents`): the events, and every log record at the
  default level (WARNING), are what they are without the cache (``tests/test_compile_cache.py``
  compares them). At DEBUG, a program read from the cache lacks three bookkeeping lines JAX logs
  about looking for a cache that is not there.
- **Harmless when wrong.** An entry JAX cannot read is compiled instead (JAX's warning dropped:
  the student's cell output is theirs). An entry is machine code the instructor's account wrote;
  a folder that anyone else could write is not lent to kernels at all (:func:`kernel_folder`), and
  whoever can write it as its owner can already write the gradebook.

Where this JAX lacks what :func:`read_only` replaces, a kernel grades without the cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

#: Set by nbgrader's process in a confined kernel's environment: the cache folder, to read.
FOLDER_ENV = "AUTOGRADER_COMPILE_CACHE"
#: JAX writes an entry only for a compile at least this long: never, in a kernel.
NEVER = 1e9
#: No one lists the folder, not even its owner (a kernel of the rootless jail runs as the owner):
#: a named entry may be opened, and only the owner creates entries.
_MODE = 0o311
#: Beside the folder, never in it (a kernel sees only the folder): the warm-ups done, and their lock.
_STAMPS = "compile-cache-stamps"
_LOCK = "compile-cache.lock"
#: Seconds a warm-up may take (the reference runs in a few), and a command waits for another's.
WARM_SECONDS = 120

log = logging.getLogger(__name__)

#: What JAX logs only with a cache folder set (the messages' templates), at any level.
_ONLY_WITH_A_CACHE = re.compile(
    r"^(Persistent compilation cache hit|Enabling XLA autotuning cache|Initialized persistent compilation cache"
    r"|Cache (hit|miss) for key|Writing .* to persistent compilation cache|Resetting cache)"
)
#: What JAX logs with or without one, at DEBUG without and at WARNING with (under
#: ``jax_explain_cache_misses``): kept at DEBUG.
_DEBUG_WITHOUT_A_CACHE = re.compile(r"^(PERSISTENT COMPILATION CACHE MISS|Not writing persistent cache entry)")
#: Events JAX records only when an entry is read from the cache.
_HIT_EVENTS = frozenset({
    "/jax/compilation_cache/cache_hits",
    "/jax/compilation_cache/compile_time_saved_sec",
    "/jax/compilation_cache/cache_retrieval_time_sec",
})
_LOGGERS = ("jax._src.compiler", "jax._src.compilation_cache", "jax._src.lru_cache")


def folder(env: Mapping[str, str] = os.environ) -> Path:
    """The instructor's cache folder (in the user's cache folder, beside the XLA flags' record)."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jax-tracing-course" / "compiled"


def _made(path: Path) -> Path:
    """``path`` made if missing, as a real folder of this user's, mode :data:`_MODE`."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, _MODE)
    found = os.lstat(path)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
        raise ValueError(f"{path} is not a folder of this user's")
    os.chmod(path, _MODE)
    return path


def trusted(path: Path) -> bool:
    """Whether no one but this user and root can change where ``path`` leads: every folder on the
    way, and each link followed, belongs to one of them, and no folder on the way is writable by
    others unless it is sticky (``/tmp``). A cache folder named through another user's folder (an
    ``XDG_CACHE_HOME`` of theirs, a link they planted) would have nbgrader's user change modes and
    write wherever that user points it."""
    path = Path(os.path.abspath(path))
    owners = {0, os.geteuid()}
    current = Path("/")
    for part in path.parts[1:]:
        current = current / part
        for _ in range(40):  # links followed, each checked where it lies
            try:
                found = os.lstat(current)
            except FileNotFoundError:
                return True  # the rest is made here, by this user
            except OSError:
                return False
            if found.st_uid not in owners:
                return False
            if not stat.S_ISLNK(found.st_mode):
                break
            current = Path(os.path.abspath(current.parent / os.readlink(current)))
        else:
            return False
        if stat.S_ISDIR(found.st_mode) and found.st_mode & 0o022 and not found.st_mode & stat.S_ISVTX:
            return False
    return True


# --- nbgrader's side -------------------------------------------------------------------------------


def stamp(assignment: str, notebook: Path, flags: str) -> str:
    """What a warm-up depends on: the reference notebook, the grading package's code (the
    properties and what they run in a kernel), JAX's and jaxlib's versions, the flags."""
    import importlib.metadata

    from autograder.confinement import PACKAGE_ROOT

    digest = hashlib.sha256()
    for part in (assignment, flags, sys.version, *(importlib.metadata.version(p) for p in ("jax", "jaxlib"))):
        digest.update(part.encode() + b"\0")
    digest.update(notebook.read_bytes())
    for source in sorted(PACKAGE_ROOT.rglob("*.py")):
        digest.update(str(source.relative_to(PACKAGE_ROOT)).encode() + b"\0" + source.read_bytes())
    return f"{assignment}-{digest.hexdigest()[:32]}"


def warm(assignment: str, course_root: str | Path, env: dict[str, str] | None = None,
         logger: logging.Logger | logging.LoggerAdapter = log) -> Path | None:
    """Write the reference's programs for ``assignment`` into the cache, unless this version of it
    is written already; the folder, or None where there is no reference to run (then kernels
    compile everything, as without a cache). Never raises: a failed warm-up only costs speed.
    What it did goes to ``logger`` (nbgrader's log, from the converter)."""
    from autograder.grading import compiler

    notebook = (Path(course_root) / "source" / assignment / f"{assignment}.ipynb").resolve()
    if not notebook.is_file():
        return None
    env = compiler.kernel_environment(dict(env if env is not None else os.environ))
    where = folder(env)
    try:
        if not trusted(where):
            raise ValueError(f"{where} lies in a folder, or behind a link, that another user can change")
        where.parent.mkdir(parents=True, exist_ok=True)
        _made(where)
        stamps = _made(where.parent / _STAMPS)
        if not trusted(where):  # made just now: still no one else's to change
            raise ValueError(f"{where} lies in a folder that another user can change")
        done = stamps / stamp(assignment, notebook, env.get("XLA_FLAGS", ""))
        if done.exists():
            return where
        # The lock lies beside the folder: a kernel, which sees only the folder, must not hold it
        # (flock needs no more than a read-only descriptor) and stall every later command.
        with open(where.parent / _LOCK, "a") as lock:
            if not _locked(lock, WARM_SECONDS):
                logger.warning("autograder: another command has been writing the compile cache for over %d s; "
                               "grading without waiting for it", WARM_SECONDS)
                return where
            if done.exists():
                return where
            began = time.monotonic()
            try:
                ran = _run_the_reference(assignment, notebook, where, env)
                failed = ""
                if ran.returncode:
                    failed = f"it ended with exit code {ran.returncode}: {ran.stderr.strip()[-300:]}"
            except subprocess.TimeoutExpired:
                failed = f"it ran past {WARM_SECONDS} s"
            # Stamped either way: a reference that fails is not run again by every command, only
            # once it changes (a new stamp).
            done.write_text(failed)
            if failed:
                logger.warning("autograder: the reference run for %s's compile cache failed (%s); kernels read "
                               "what it wrote before it stopped and compile the rest", assignment, failed)
            else:
                logger.info("autograder: wrote the compile cache for %s from its reference in %.1f s", assignment,
                            time.monotonic() - began)
    except (OSError, ImportError, subprocess.SubprocessError, ValueError) as error:  # ImportError: no jax metadata
        logger.warning("autograder: no compile cache for %s (%s); kernels compile everything", assignment, error)
        return None
    return where


def _run_the_reference(assignment: str, notebook: Path, where: Path, env: dict[str, str]):
    """The warm-up's child, in a copy of the reference's folder (its ``selfcheck.py`` and data beside
    it): the course's ``source/`` is the instructor's and is left as it was, without so much as a
    ``__pycache__``."""
    with tempfile.TemporaryDirectory(prefix="autograder-reference-") as scratch:
        copy = Path(scratch) / assignment
        shutil.copytree(notebook.parent, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        return subprocess.run(
            [sys.executable, "-m", __name__, assignment, str(copy / notebook.name), str(where)],
            env={**env, FOLDER_ENV: "", "PYTHONDONTWRITEBYTECODE": "1"}, cwd=copy, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=WARM_SECONDS,
        )


def _locked(lock, seconds: float) -> bool:
    """Take ``lock`` within ``seconds``: another command or parallel worker may be writing now."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)


def kernel_folder(logger: logging.Logger | logging.LoggerAdapter = log) -> str | None:
    """The folder a confined kernel reads: only one of this user's that no one else can write
    (else None, said to ``logger``, and kernels compile everything)."""
    where = folder()
    try:
        found = os.lstat(where)
    except OSError:
        return None
    mine = stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid() and not found.st_mode & 0o022
    if not (mine and trusted(where)):
        logger.warning("autograder: %s is not this user's alone to write; grading kernels do not read it", where)
        return None
    return str(where)


# --- the kernel's side ------------------------------------------------------------------------------


class _QuietCache(logging.Filter):
    """JAX's records about the persistent cache as JAX logs them without one, before any handler
    hears them: those only a cache makes dropped, those it raises to WARNING kept at DEBUG."""

    def __init__(self, logger: logging.Logger):
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if _ONLY_WITH_A_CACHE.match(message):
            return False
        if record.levelno > logging.DEBUG and _DEBUG_WITHOUT_A_CACHE.match(message):
            if not self.logger.isEnabledFor(logging.DEBUG):
                return False
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


class _WithoutHitEvents:
    """JAX's monitoring module as its compiler sees it, less the events only a cache hit records."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def record_event(self, event, **kwargs):
        if event not in _HIT_EVENTS:
            self._real.record_event(event, **kwargs)

    def record_event_duration_secs(self, event, duration, **kwargs):
        if event not in _HIT_EVENTS:
            self._real.record_event_duration_secs(event, duration, **kwargs)


def read_only(where: str | None = None) -> bool:
    """In a grading kernel, before any notebook cell: read compiled programs from ``where`` (the
    kernel's :data:`FOLDER_ENV`), write none, and keep every trace of the cache out of what the
    notebook can hear. False, and no cache, where this JAX lacks a part it needs."""
    where = os.environ.get(FOLDER_ENV) if where is None else where
    if not where or not os.path.isdir(where):
        return False
    try:
        import jax
        from jax._src import compiler as _compiler
        from jax._src import monitoring as _monitoring

        if not (hasattr(_compiler, "monitoring") and hasattr(_compiler, "log_persistent_cache_hit")):
            return False
        jax.config.update("jax_persistent_cache_min_compile_time_secs", NEVER)
        jax.config.update("jax_compilation_cache_max_size", -1)  # no eviction: no access times written
        jax.config.update("jax_compilation_cache_dir", where)
    except (ImportError, AttributeError, ValueError):
        return False
    _compiler.monitoring = _WithoutHitEvents(_monitoring)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addFilter(_QuietCache(logger))
    warnings.filterwarnings("ignore", message=r"(?i)error (reading|writing) persistent compilation cache")
    return True


# --- the warm-up, in a child of nbgrader's process ---------------------------------------------------


def _write(assignment: str, notebook: str, where: str) -> int:
    os.umask(0o022)  # entries readable by every kernel's user, writable by this one alone
    import jax

    jax.config.update("jax_compilation_cache_dir", where)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    from autograder.grading.quiet import quiet
    from autograder.grading.registry import properties_of
    from autograder.grading.submission import from_notebook

    with quiet():
        submission = from_notebook(notebook)
    for prop in properties_of(assignment):
        with quiet(), contextlib.suppress(Exception):  # the reference passes; a failure only compiles less
            prop.run(submission)
    return 0


if __name__ == "__main__":
    sys.exit(_write(*sys.argv[1:4]))
