"""How a grading kernel compiles: correct programs, fast to build, not fast to run.

A grade cell compiles dozens of tiny programs, one per signature a property
tries, and runs each on a handful of values; XLA's CPU backend spends far more
time optimising them than running them. Grading kernels therefore start with
LLVM's optimisations off. Every flag here is one the pinned XLA knows (``tests/test_startup.py``
holds that; ``tests/test_confinement.py`` computes in a real grading kernel started with them); a
flag another XLA does not know is left out
(:func:`known_flags`), with a warning in the log: XLA would stop every kernel that names it.
(``--xla_cpu_use_fusion_emitters=false``, which halved a grade cell's compiles on JAX 0.10, is
gone from JAX 0.12's XLA, and is no longer set.)

It does not change what is graded. The HLO a function lowers to, its traces, its
compiles, its cache keys and XLA's algebraic rewrites (``x * mask`` becoming a
select, say) are the same; only the machine code differs, and it computes the
same IEEE operations. The course's tests grade the whole corpus and every mutant with
these flags, as the kernels do, and a sample of the corpus again in-process with XLA's
defaults, and expect the same points from both.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import subprocess
import sys

#: Flags for every grading kernel, put ahead of any XLA_FLAGS already set for nbgrader; each only
#: where this XLA knows it (:func:`known_flags`).
XLA_FLAGS = ("--xla_backend_optimization_level=0",)

#: XLA's words for a flag it does not know; it then stops the process that starts it.
_UNKNOWN = re.compile(r"Unknown flags? in XLA_FLAGS: (\S+)")

#: Started in a child with the flags: what makes XLA read them (its CPU client), as cheaply as
#: jaxlib allows (a quarter of a second here), else through JAX itself.
_PROBE = """
try:
    from jaxlib import xla_client
    xla_client.make_cpu_client()
except (ImportError, AttributeError):
    import jax
    jax.devices("cpu")
"""

log = logging.getLogger(__name__)


def kernel_environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the grading flags put before any XLA_FLAGS it already has, each flag only where
    this XLA knows it (an unknown one of the instructor's own would stop every kernel too)."""
    own = tuple(env.get("XLA_FLAGS", "").split())
    return {**env, "XLA_FLAGS": " ".join(known_flags(XLA_FLAGS + own))}


@functools.lru_cache(maxsize=None)
def known_flags(flags: tuple[str, ...] = XLA_FLAGS, python: str = sys.executable) -> tuple[str, ...]:
    """The ``flags`` this Python's XLA knows. XLA stops any process whose XLA_FLAGS names a flag it
    does not know ("Unknown flag in XLA_FLAGS"), so a flag a newer jaxlib dropped would kill every
    grading kernel at start and give every student nothing. Each set is tried first in a child
    process; a flag XLA names as unknown is left out, and the log says so. The answer is kept, per
    jaxlib install, in the user's cache folder (:func:`_remembered`), so a command pays for the
    child only the first time."""
    key = _install_key(python, flags)
    remembered = _remembered()
    if key is not None and key in remembered:
        return tuple(remembered[key])
    kept = _tried(flags, python)
    if key is not None:
        _remember(key, kept)
    return kept


def _cache_file() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jax-tracing-course", "xla-flags.json")


def _install_key(python: str, flags: tuple[str, ...]) -> str | None:
    """Which jaxlib the flags were tried with: its version and where it is installed, as of when."""
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        return None  # another Python's jaxlib: not read from here
    import importlib.metadata
    import importlib.util

    try:
        spec = importlib.util.find_spec("jaxlib")
        where = os.path.dirname(spec.origin) if spec and spec.origin else None
        if where is None:
            return None
        return (f"{os.path.realpath(python)}|{importlib.metadata.version('jaxlib')}|{where}|"
                f"{os.stat(where).st_mtime_ns}|{' '.join(flags)}")
    except (ImportError, OSError, ValueError, importlib.metadata.PackageNotFoundError):
        return None


def _remembered() -> dict:
    try:
        with open(_cache_file(), encoding="utf-8") as f:
            found = json.load(f)
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def _remember(key: str, kept: tuple[str, ...]) -> None:
    """Best effort: a folder that cannot be written only means trying again next time."""
    path = _cache_file()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        found = {**_remembered(), key: list(kept)}
        temporary = f"{path}.{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(found, f)
        os.replace(temporary, path)
    except OSError:
        pass


def _tried(flags: tuple[str, ...], python: str) -> tuple[str, ...]:
    """``flags`` less each that XLA names unknown, found by starting XLA in a child with them."""
    kept = list(flags)
    while kept:
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
        env["XLA_FLAGS"] = " ".join(kept)
        try:
            done = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as error:
            log.warning("could not check the grading kernels' XLA flags (%s); kernels start with %s", error, kept)
            break
        unknown = _UNKNOWN.search(done.stderr)
        if done.returncode == 0 or unknown is None:
            break
        dropped = next((flag for flag in kept if flag.split("=")[0] == unknown[1].split("=")[0]), None)
        if dropped is None:
            break
        kept.remove(dropped)
        log.warning("This XLA does not know %s: grading kernels start without it, since XLA stops any "
                    "process whose XLA_FLAGS names a flag it does not know.", dropped)
    return tuple(kept)
