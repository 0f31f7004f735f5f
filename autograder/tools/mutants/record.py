"""What a mutants run leaves beside a property module, and what ``check`` reads of it.

- ``autograder/properties/<a>.equivalent.toml`` (written and reviewed by the author): the mutants
  that no grader can kill because they are the same program, ``"<mutant id>" = "<reason>"``.
- ``autograder/properties/<a>.mutants.json`` (written by ``python -m autograder mutants``): the
  counts per operator and every survivor, with the fingerprint of what it graded: the source
  notebook's code, the property module, ``autograder/kit`` and the operators. A change to any of
  them makes the record stale, and ``check`` says so until the mutants are run again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import tomllib
from pathlib import Path

from autograder.tools.errors import ToolError

MUTANTS_PACKAGE = Path(__file__).parent


def equivalent_path(root: Path, assignment: str) -> Path:
    return root / "autograder" / "properties" / f"{assignment}.equivalent.toml"


def record_path(root: Path, assignment: str) -> Path:
    return root / "autograder" / "properties" / f"{assignment}.mutants.json"


def equivalents(root: Path, assignment: str) -> dict[str, str]:
    """``{mutant id: reason}`` the author declared; a clear error for a file that is not TOML."""
    path = equivalent_path(root, assignment)
    if not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ToolError(f"{path}: not TOML ({error}); write one line per mutant: \"<id>\" = \"<reason>\"") from None
    bad = [key for key, reason in table.items() if not (isinstance(reason, str) and reason.strip())]
    if bad:
        raise ToolError(f"{path}: {', '.join(bad)}: give each equivalent mutant a one-line reason (a string)")
    return table


def fingerprint(root: Path, assignment: str) -> str:
    """What a mutants run of the assignment depends on, hashed: the course's notebook and property
    module, this package's kit and operators (the code that grades and mutates), and the installed
    jax and jaxlib (what a mutant traces and compiles, and so whether it loses points, is theirs)."""
    digest = hashlib.sha256()
    for package in ("jax", "jaxlib"):
        digest.update(f"{package} {importlib.metadata.version(package)}\n".encode())
    notebook = json.loads((root / "source" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell.get("cell_type") == "code":
            digest.update("".join(cell.get("source", "")).encode())
    files = [root / "autograder" / "properties" / f"test_{assignment}.py"]
    files += sorted((MUTANTS_PACKAGE.parents[1] / "kit").glob("*.py"))
    files += sorted(MUTANTS_PACKAGE.glob("*.py"))
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def write(root: Path, assignment: str, record: dict) -> Path:
    path = record_path(root, assignment)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def problems(root: Path, assignment: str) -> list[tuple[str, str, str]]:
    """``(where, what, fix)`` for check: no record, a stale one, an undeclared survivor, a stale declaration."""
    path = record_path(root, assignment)
    where = str(path.relative_to(root))
    rerun = f"run python -m autograder mutants {assignment}"
    if not path.is_file():
        return [(where, "no mutants record: nobody has measured what this grader kills", rerun)]
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        survivors, ids = record["survivors"], set(record["killed"]) | {s["id"] for s in record["survivors"]}
    except (ValueError, KeyError, TypeError) as error:
        return [(where, f"not a mutants record ({error})", rerun)]
    if record.get("fingerprint") != fingerprint(root, assignment):
        return [(where, "stale: the notebook's code, the property module, autograder/kit or the operators "
                 "changed since the mutants were graded", rerun)]
    try:
        declared = equivalents(root, assignment)
    except ToolError as error:
        return [(str(equivalent_path(root, assignment).relative_to(root)), str(error), "fix the file")]
    found = []
    for survivor in survivors:
        if survivor["id"] not in declared:
            found.append((where, f"mutant {survivor['id']} ({survivor['what']}, line {survivor['line']}) "
                          "keeps every point",
                          "make a property fail for it, or declare it in "
                          f"{equivalent_path(root, assignment).relative_to(root)} with the reason it is the same program"))
    for key in sorted(set(declared) - {s["id"] for s in survivors}):
        status = "is killed now" if key in ids else "is no mutant of the reference"
        found.append((str(equivalent_path(root, assignment).relative_to(root)),
                      f"{key} is declared equivalent but {status}", "remove the line"))
    return found
