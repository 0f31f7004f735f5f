"""A student's namespace, seen through calls that fail with a sentence, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from . import _render
from ._results import PropertyFailure


class Submission:
    """The names a submission defines, and careful ways to call them.

    Every way student code can go wrong here (a missing name, a non-function, a
    call that raises) becomes a :class:`PropertyFailure` naming the problem, so
    one broken function fails only the properties that use it.
    """

    def __init__(self, namespace: dict, label: str = "the notebook"):
        self.namespace = namespace
        self.label = label

    def get(self, name: str):
        if name not in self.namespace:
            raise PropertyFailure(
                f"{self.label} does not define `{name}`; run every cell above, "
                f"and keep the name exactly `{name}`."
            )
        return self.namespace[name]

    def function(self, name: str):
        value = self.get(name)
        if not callable(value):
            raise PropertyFailure(f"`{name}` should be a function, but it is {_render.kind(value)}.")
        return value

    def call(self, name: str, *args, **kwargs):
        """Call a student function; any exception it raises becomes a failure naming the call."""
        fn = self.function(name)
        try:
            return fn(*args, **kwargs)
        except PropertyFailure:
            raise
        except Exception as error:  # student code may raise anything; report it, don't crash
            detail = "it ran out of the grading kernel's memory" if isinstance(error, MemoryError) else _first_line(error)
            raise PropertyFailure(
                f"`{name}` raised {type(error).__name__}: {detail}",
                example=_render.call(name, args, kwargs),
            ) from None

    def raises(self, expected: type[BaseException], name: str, *args, **kwargs) -> BaseException | None:
        """Call a student function that should raise ``expected``; return what it raised, or None."""
        fn = self.function(name)
        try:
            fn(*args, **kwargs)
        except expected as error:
            return error
        except Exception as error:
            raise PropertyFailure(
                f"`{name}` should raise {expected.__name__}, but raised {type(error).__name__}: {_first_line(error)}",
                example=_render.call(name, args, kwargs),
            ) from None
        return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    line = text[0] if text else "(no message)"
    return line if len(line) <= 200 else line[:197] + "..."


def from_namespace(namespace: dict) -> Submission:
    return Submission(namespace)


def from_python(path: str | Path) -> Submission:
    """Load a submission written as a plain Python file (the project's own corpus)."""
    path = Path(path)
    namespace: dict = {"__name__": f"submission_{path.stem}"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return Submission(namespace, label=f"`{path.name}`")


def from_notebook(path: str | Path) -> Submission:
    """Run a notebook's code cells in this process, as a kernel would, and wrap the result.

    Grade cells are skipped (they hold the checks, not the answer). A cell that
    raises is reported on stdout and the next cell still runs, like autograde.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    path = Path(path)
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        cells = notebook["cells"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a readable notebook: {error}") from None
    transform = TransformerManager().transform_cell
    namespace: dict = {"__name__": "__main__"}
    for index, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or (meta.get("grade") and not meta.get("solution")):
            continue
        source = "".join(cell.get("source", ""))
        try:
            exec(compile(transform(source), f"{path.name}[cell {index}]", "exec"), namespace)
        except Exception as error:
            print(f"{path.name}: cell {index} raised {type(error).__name__}: {_first_line(error)}")
    return Submission(namespace, label=f"`{path.name}`")
