"""Every copy of the grading package on this machine that a kernel could read, and the one it imports.

In nbgrader's process, for the jail's ``--hide`` and ``--keep``. Two copies of the package are
often in play: nbgrader puts its working folder (the course root) first on ``sys.path``, so a
course folder that holds a copy of the repository gives nbgrader that copy, while a kernel,
started elsewhere, imports the installed one (site-packages, or an editable checkout). The jail
puts back only the copy the kernel imports, which the sandbox hides once it is loaded, and hides
every other copy it can name, with the repository around each (its ``source/`` holds the
solutions):

- the copy this process imported (:data:`PACKAGE_ROOT`);
- the copy a kernel imports: asked of this Python as a kernel starts it, from ``/`` and with
  no working folder on its path (:func:`kernel_copy`), as the fork server imports it too;
- a copy in any folder on this process's ``sys.path``, or found by an import hook
  (an editable install's finder);
- a copy in the course root.

A copy that nothing on this machine's paths names (a stray clone) is not found here; the jail
hides it anyway when it lies in a top-level folder outside the operating system's
(:func:`autograder.confinement.kernel_manager.outside_the_system`), so only one under ``/usr``
or ``/var`` stays readable (docs/threat-model.md says so).
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

from autograder.confinement import PACKAGE_ROOT

PACKAGE = PACKAGE_ROOT.name
#: A folder holding this file beside a copy of the package is the course repository.
REPOSITORY_MARK = "course_config.py"

_WHERE_A_KERNEL_IMPORTS = (
    "import importlib.util, sys; spec = importlib.util.find_spec(sys.argv[1]); "
    "print(list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations else '')"
)


@functools.lru_cache(maxsize=1)
def kernel_copy() -> Path:
    """The folder of the package a kernel of this Python imports (this process's own copy
    when that cannot be asked)."""
    try:
        found = subprocess.run(
            [sys.executable, "-P", "-c", _WHERE_A_KERNEL_IMPORTS, PACKAGE], cwd="/", capture_output=True,
            text=True, timeout=60, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    return Path(found).resolve() if found else PACKAGE_ROOT


def _is_copy(folder: Path) -> bool:
    return (folder / "__init__.py").is_file() and (folder / "confinement" / "jail.py").is_file()


def _found_by_import_hooks() -> set[Path]:
    """Where each of this process's import hooks would find the package (an editable install's
    finder maps it to its checkout), whatever comes first on ``sys.path``."""
    found = set()
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None or finder is importlib.machinery.PathFinder:
            continue
        try:
            spec = find_spec(PACKAGE, None)
        except Exception:  # noqa: BLE001 - a third-party hook may fail in any way; it names no copy then
            continue
        for location in getattr(spec, "submodule_search_locations", None) or ():
            found.add(Path(location))
    return found


def copies(course_root: str | None = None) -> set[Path]:
    """Every copy of the package this process can name (see the module doc), resolved."""
    candidates = {PACKAGE_ROOT, kernel_copy(), *_found_by_import_hooks()}
    folders = [p for p in sys.path if p] + ([course_root] if course_root else [])
    candidates.update(Path(folder) / PACKAGE for folder in folders)
    return {path.resolve() for path in candidates if _is_copy(path)}


def repository_of(copy: Path) -> Path | None:
    """The course repository around ``copy`` (its solutions, tests and samples), if it is one."""
    return copy.parent if (copy.parent / REPOSITORY_MARK).is_file() else None


def to_hide(course_root: str | None = None) -> list[str]:
    """What the jail must hide for no grader file to be readable: every copy but the kernel's
    (which the sandbox hides once loaded) and every repository around a copy."""
    found = copies(course_root)
    hidden = {copy for copy in found if copy != kernel_copy()}
    hidden.update(repo for repo in map(repository_of, found) if repo is not None)
    return sorted(os.path.realpath(path) for path in hidden)
