"""``python -m autograder upgrade-check --jax VERSION``: what another JAX would change, before the course moves to it.

What the notebooks teach (a cache-miss explanation's words, an event's name, a jaxpr's shape), and so
the grades, are verified on the JAX the course pins: every sentence the claims test holds is true
(``tests/test_claims.py``) and every corpus file earns exactly what it declares
(``tests/test_graders.py``), which CI checks on every landing. This command builds a throwaway
environment with another JAX (:mod:`.environment`), runs the claims and grades the corpus there, in
processes that compile as grading kernels do (:mod:`.probe`), and reports, per claim, per corpus
file and per property, what no longer holds there, and which of the course's XLA flags that JAX's
XLA does not know (:mod:`.compare`). Nothing in the checkout changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from autograder.tools.errors import ToolError
from autograder.tools.repository import CORPUS, REPO_ROOT
from autograder.tools.upgrade import compare, environment


def run(jax_version: str, python: str = sys.executable, work_dir: Path | None = None,
        assignments: list[str] | None = None, workers: int = 2, json_path: Path | None = None,
        out: TextIO = sys.stdout) -> int:
    """Build the environment, probe it, print the report; 0 when everything holds there, 1 otherwise."""
    known = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    unknown = [a for a in assignments or () if a not in known]
    if unknown:
        raise ToolError(f"upgrade-check: no assignment {unknown[0]!r} in tests/corpus; there are: {', '.join(known)}")
    environment.python_version(python)  # a Python that is not there: said before anything is built
    folder = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="jax-upgrade-check-"))
    folder.mkdir(parents=True, exist_ok=True)
    out.write(f"upgrade-check: building an environment with jax {jax_version} in {folder} ...\n")
    out.flush()
    env_python = environment.build(folder / "env", python, jax_version, log=folder / "pip.log")
    found = probe_in(env_python, folder / "probe.json", assignments, workers, log=folder / "probe.log")
    lines, holds = compare.report(found)
    out.write("\n".join(lines) + "\n")
    out.flush()
    if json_path:
        Path(json_path).write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    return 0 if holds else 1


def probe_in(env_python: Path, result: Path, assignments: list[str] | None, workers: int, log: Path) -> dict:
    """Run :mod:`.probe` with ``env_python`` in this checkout; its findings."""
    command = [str(env_python), "-m", "autograder.tools.upgrade.probe", "--json", str(result), "--workers", str(workers)]
    for assignment in assignments or ():
        command += ["--assignment", assignment]
    env = environment.probe_env()
    with open(log, "w", encoding="utf-8") as output:
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not result.is_file():
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
        raise ToolError(f"upgrade-check: the probe failed in the new environment (exit {done.returncode}); "
                        f"its output is in {log}; it ended with:\n{tail}")
    return json.loads(result.read_text(encoding="utf-8"))
