"""The throwaway environment an upgrade check runs in: a virtual environment with another JAX.

Where the check's Python is the one running this command (same major and minor version), the new
environment sees this one's packages through a ``.pth`` file and installs only jax and jaxlib
(and what they need that differs) ahead of them: seconds when the wheels are cached. For another
Python (JAX 0.11 and later need 3.12 or newer), everything the course and its tests need is
installed there, with the course's own pins except jax's and jaxlib's. The course itself is not
installed: the probe runs from this checkout. A folder built once for the same Python and JAX is
reused as it is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from autograder.tools.errors import ToolError
from autograder.tools.repository import REPO_ROOT

#: The pins the JAX under check decides: its own, and ml_dtypes's (held back for speed alone).
_PINNED = re.compile(r"^(jax|jaxlib|ml_dtypes)\s*(==|>=|<=|~=|<|>|!=|$)")
_MARKER = ".upgrade-check.json"


def requirements(jax_version: str) -> list[str]:
    """What the course and its tests need (``pyproject.toml``'s dependencies and ``test`` extra),
    jax and jaxlib at ``jax_version``, and the ml_dtypes that JAX asks for."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project.get("optional-dependencies", {}).get("test", [])]
    kept = [r for r in wanted if not _PINNED.match(r.strip())]
    return [f"jax=={jax_version}", f"jaxlib=={jax_version}", *dict.fromkeys(kept)]


def python_version(python: str) -> str:
    """``major.minor`` of the interpreter ``python`` names (a path or a command)."""
    found = shutil.which(python)
    if found is None:
        raise ToolError(f"upgrade-check: no Python {python!r} here; give --python the path or name of an interpreter")
    done = subprocess.run([found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolError(f"upgrade-check: {found} did not run: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def build(folder: Path, python: str, jax_version: str, log: Path) -> Path:
    """The environment's Python, with ``jax_version`` installed (see the module doc)."""
    version = python_version(python)
    here = "%d.%d" % sys.version_info[:2]
    reuse = version == here
    wanted = {"python": os.path.realpath(shutil.which(python)), "jax": jax_version, "reuse": reuse,
              "requirements": requirements(jax_version)}
    env_python = folder / "bin" / "python"
    marker = folder / _MARKER
    if env_python.exists() and marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == wanted:
        return env_python
    if folder.exists():
        shutil.rmtree(folder)
    _run([wanted["python"], "-m", "venv", str(folder)], log, "could not make a virtual environment")
    if reuse:
        site = Path(subprocess.run([str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
        ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
        (site / "_course_packages.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
        packages = [f"jax=={jax_version}", f"jaxlib=={jax_version}"]
    else:
        packages = wanted["requirements"]
    _run([str(env_python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
          "--progress-bar", "off", *packages], log,
         f"pip could not install jax {jax_version} for Python {version}"
         + ("" if tuple(map(int, version.split("."))) >= (3, 12) else " (JAX 0.11 and later need Python 3.12 or newer: give --python python3.12)"))
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    return env_python


def probe_env() -> dict[str, str]:
    """The probe's environment: this checkout importable, nothing of this environment's activation."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "XLA_FLAGS")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])
    return env


def _run(command: list[str], log: Path, why: str) -> None:
    with open(log, "a", encoding="utf-8") as output:
        output.write("$ " + " ".join(command) + "\n")
        output.flush()
        done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-8:])
        raise ToolError(f"upgrade-check: {why}; the whole output is in {log}; it ended with:\n{tail}")
