"""A student's namespace, seen through calls that fail with a sentence, not a traceback."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from autograder.grading import drawn, render
from autograder.grading.cells import is_autograder_test
from autograder.grading.integrity import tampered
from autograder.grading.limits import time_limit
from autograder.grading.quiet import quiet
from autograder.grading.results import CallRaised, PropertyFailure


class Submission:
    """The names a submission defines, and careful ways to call them.

    Every way student code can go wrong here (a missing name, a non-function, a
    call that raises) becomes a :class:`PropertyFailure` naming the problem, so
    one broken function fails only the properties that use it.
    """

    def __init__(self, namespace: dict, label: str = "the notebook"):
        self.namespace = namespace
        self.label = label
        #: Observations the properties of one grade cell share (costly to make, judged by each).
        self.memo: dict = {}
        #: What properties note for the notebook's later grade cells (which rows of a ledger the
        #: grader's own calls appended): the notebook's whole run, as a kernel's globals last.
        self.notebook_memo: dict = {}

    # How a property runs against this submission (grade.run_group): in this process, quiet,
    # within its time limits, and checked for tampering in this process.
    quiet = staticmethod(quiet)
    time_limit = staticmethod(time_limit)
    tampered = staticmethod(tampered)

    def get(self, name: str):
        """The value of ``name``; a dotted name (``compiled.trace``) reads attributes of it."""
        head, *attributes = name.split(".")
        if head not in self.namespace:
            raise PropertyFailure(
                f"{self.label} does not define `{head}`; run every cell above, "
                f"and keep the name exactly `{head}`."
            )
        value = self.namespace[head]
        for attribute in attributes:
            try:
                value = getattr(value, attribute)
            except Exception:  # noqa: BLE001 - a student object's __getattr__ may raise anything
                raise PropertyFailure(
                    f"`{head}` has no `{attribute}`: it is {render.kind(self.namespace[head])}, "
                    "not the notebook's jitted function."
                ) from None
        return value

    def tail(self, name: str, start: int) -> tuple[int | None, object]:
        """``(len(value), value[start:])`` of a list the notebook grows (a ledger), so that a property
        reading it after every call takes only the new rows; ``(None, value)`` if it is no list."""
        value = self.get(name)
        return (len(value), value[start:]) if type(value) is list else (None, value)

    def function(self, name: str):
        value = self.get(name)
        if not callable(value):
            raise PropertyFailure(f"`{name}` should be a function, but it is {render.kind(value)}.")
        return value

    def call(self, name: str, *args, **kwargs):
        """Call a student function; any exception it raises becomes a failure naming the call."""
        return self._call(name, self.function(name), args, kwargs)

    def call_staged(self, stage: str, name: str, *args, static_argnums: tuple[int, ...] = (), **kwargs):
        """Call a student function the way one of JAX's transformations would (a :data:`STAGES`
        name: ``"jit"``, ``"make_jaxpr"``), as :meth:`call` does: every argument traced but the
        positional ones at ``static_argnums``, passed as they are (closed over, so they need not
        be hashable)."""
        fn, dynamic = staged(stage, self.function(name), args, static_argnums)
        return self._call(name, fn, dynamic, kwargs)

    @contextlib.contextmanager
    def replaced(self, **names):
        """The notebook's ``names`` bound to the grader's values while the block runs (a trainer
        run with the grader's own step, so that a wrong step costs only the step's points)."""
        missing = object()
        saved = {name: self.namespace.get(name, missing) for name in names}
        self.namespace.update(names)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is missing:
                    self.namespace.pop(name, None)
                else:
                    self.namespace[name] = value

    def run_grader(self, thunk):
        """Run a thunk of the grader's (:class:`autograder.kit.handed.Thunk`) where the student's
        code runs, outside any call of it (a program's cache cleared between two observed calls)."""
        return thunk()

    def _call(self, name: str, fn, args: tuple, kwargs: dict):
        try:
            return fn(*args, **kwargs)
        except PropertyFailure:
            raise
        except Exception as error:  # student code may raise anything; report it, don't crash
            raise CallRaised(
                f"`{name}` raised {type(error).__name__}: {describe_error(error)}",
                error_type=type(error),
                example=render.call(name, args, kwargs),
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
                f"`{name}` should raise {expected.__name__}, but raised {type(error).__name__}: {describe_error(error)}",
                example=render.call(name, args, kwargs),
            ) from None
        return None


def _jit(fn):
    import jax

    return jax.jit(fn)


def _make_jaxpr(fn):
    import jax

    return jax.make_jaxpr(fn)


#: The transformations :meth:`Submission.call_staged` applies to a student's function before the call.
STAGES = {"jit": _jit, "make_jaxpr": _make_jaxpr}


def staged(stage: str, fn, args: tuple, static_argnums=()) -> tuple:
    """``(the stage of fn with the static arguments bound, the other arguments)``."""
    static = {i: args[i] for i in static_argnums if -len(args) <= i < len(args)}
    static = {i % len(args): value for i, value in static.items()}
    dynamic = tuple(a for i, a in enumerate(args) if i not in static)

    def bound(*values, **kwargs):
        given = iter(values)
        return fn(*(static[i] if i in static else next(given) for i in range(len(args))), **kwargs)

    return STAGES[stage](bound), dynamic


_STATIC_PATH = re.compile(r"passed to the function at path (\w+)")

#: JAX errors a lesson explains: (error class name, text it contains, the lesson's sentence).
#: ``{arg}`` is the argument JAX names, where it names one.
_LESSONS = (
    ("TypeError", "as an abstract array",
     "jit tried to trace `{arg}`, which is not an array. An argument that chooses the program (a string "
     "such as a mode) must be declared static: `jax.jit(f, static_argnames=(\"{arg}\",))`."),
    ("TracerBoolConversionError", "",
     "a Python `if` (or `and`, `or`, `bool()`) met a traced value. Under jit a value is a tracer with no "
     "True or False; keep the decision in the program with `lax.cond` or `jnp.where`."),
    ("NonConcreteBooleanIndexError", "",
     "`x[mask]` keeps a number of rows that depends on the data, and jit needs fixed shapes; keep every row "
     "and select with `jnp.where(mask, ..., 0.0)`."),
    ("TracerIntegerConversionError", "",
     "`int()` of a traced value: under jit the value is not known while tracing."),
    ("ConcretizationTypeError", "",
     "the code needed a concrete Python value from a traced array (`float()`, `int()`, a shape taken from "
     "data); under jit only shapes and dtypes are known while tracing."),
    ("ValueError", "Non-hashable static arguments",
     "a static argument must be hashable (a string, a number, a tuple), because jit keys its cache on it."),
)


def describe_error(error: BaseException) -> str:
    """One line about an exception from student code: the lesson's words for a JAX error JAX's
    message would bury, else the message's first line, without memory addresses."""
    if isinstance(error, MemoryError):
        return "it ran out of the grading kernel's memory"
    text = str(error)
    for cls in type(error).__mro__:
        for name, contains, lesson in _LESSONS:
            if cls.__name__ == name and contains in text:
                found = _STATIC_PATH.search(text)
                return lesson.format(arg=found.group(1) if found else "that argument")
    return _first_line(error)


def _first_line(error: BaseException) -> str:
    text = render.ADDRESS.sub("", str(error)).strip().splitlines()
    line = text[0] if text else "(no message)"
    return line if len(line) <= 200 else line[:197] + "..."


def from_namespace(namespace: dict) -> Submission:
    return Submission(namespace)


#: Where a plain Python submission marks a notebook cell's start (``# %% cell 4 [demo]``, ``# %% Part E``).
_CELL_MARK = re.compile(r"^# %%", re.MULTILINE)


def from_python(path: str | Path) -> Submission:
    """Load a submission written as a plain Python file (the project's own corpus). A file whose
    cells are marked (``# %%``) runs cell by cell, as a kernel runs a notebook: a cell that
    raises is reported on stdout and the next one still runs, as in autograde. An unmarked file runs
    whole, and what it raises reaches the caller."""
    path = Path(path)
    namespace: dict = {"__name__": f"submission_{path.stem}"}
    text = path.read_text(encoding="utf-8")
    starts = [0, *(m.start() for m in _CELL_MARK.finditer(text) if m.start())]
    for start, end in zip(starts, [*starts[1:], len(text)]):
        line = text.count("\n", 0, start)
        try:  # the cell at its own lines, so a traceback names the file's line
            exec(compile("\n" * line + text[start:end], str(path), "exec"), namespace)
        except Exception as error:
            if len(starts) == 1:
                raise
            print(f"{path.name}: the cell at line {line + 1} raised {type(error).__name__}: {_first_line(error)}")
    submission = Submission(namespace, label=f"`{path.name}`")
    drawn.note(submission.notebook_memo, [text])
    return submission


def from_notebook(path: str | Path) -> Submission:
    """Run a notebook's code cells in this process, as a kernel would, and wrap the result.

    Grade cells are skipped (they hold the checks, not the answer). A cell that
    raises is reported on stdout and the next cell still runs, like autograde.
    """
    path = Path(path)
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        cells = notebook["cells"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a readable notebook: {error}") from None
    sources = [(index, "".join(cell.get("source", ""))) for index, cell in enumerate(cells)
               if cell.get("cell_type") == "code" and not is_autograder_test(cell)]
    return from_cells(sources, path.name)


def from_cells(sources: list[tuple[int, str]], name: str) -> Submission:
    """Run code cells, ``(index in the notebook, source)``, grade cells left out, in this process,
    each as a kernel runs a cell; a cell that raises is reported on stdout and the next one still runs."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    namespace: dict = {"__name__": "__main__"}
    for index, source in sources:
        try:
            exec(compile(transform(source), f"{name}[cell {index}]", "exec"), namespace)
        except Exception as error:
            print(f"{name}: cell {index} raised {type(error).__name__}: {_first_line(error)}")
    submission = Submission(namespace, label=f"`{name}`")
    drawn.note(submission.notebook_memo, [source for _, source in sources])
    return submission
