"""nbgrader preprocessors of this course, named in ``course_config.py``.

They run in nbgrader's own process, around the kernel that executes the notebook,
so nothing a student's code does in that kernel can skip them: :class:`ConfinedExecute` runs
it, and judges every grade cell here, in this process, while the kernel only serves calls
(:mod:`autograder.grading.judge`); :class:`ScrubGraderSource` cleans the outputs after it finished.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import re
import stat
import time
from functools import lru_cache

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Float, Int, Unicode

from autograder.confinement import PACKAGE_ROOT
from autograder.confinement.kernel_manager import ConfinedKernelManager
from autograder.grading import drawn, feedback, judge, reach, registry
from autograder.grading.cells import GRADE_CALL, is_autograder_test

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: What tracebacks and listings put before a source line: arrows, line numbers, IPython's ``(...)``.
_PREFIX = re.compile(r"^[\s\-=>|]*(?:\(\.\.\.\)[\s\-=>|]*)?\d*[\s|:]*")
_SHORTEST = 16  # shorter lines (``return None``, ``)``) say nothing about the grader on their own
REMOVED = "[line removed: it belongs to the hidden grader]"
#: A traceback frame's first line, naming its file: Python's ``File "PATH", line N, in NAME`` and
#: IPython's ``File PATH:N, in NAME(ARGS)``. The lines under it, indented or arrowed, are that file's.
_FRAME = re.compile(r'^\s*File\s+(?:"(?P<quoted>[^"\n]+)", line \d+|(?P<bare>\S.*?):\d+)(?:, in .*)?\s*$')
#: A line of a frame that shows no source: the carets under a Python 3.11 frame's line.
_MARKS = re.compile(r"[\^~\s]*")
_FRAME_CHARACTERS = 4096  # a longer line is no frame header (and the pattern never meets a megabyte line)
_LIBRARY_FILE_BYTES = 8 * 2**20  # a library frame's file is read to check its lines only up to this size


@lru_cache(maxsize=1)
def grader_lines() -> frozenset[str]:
    """Every distinctive line of the grading package's source: stripped, at least 16 characters, and in no
    library of this Python (:func:`library_lines`), so that shown alone it is the grader's."""
    return _long_lines() - library_lines()


@lru_cache(maxsize=1)
def _long_lines() -> frozenset[str]:
    """The grading package's lines of at least 16 characters, stripped, a library's or not."""
    return frozenset(line for lines in _grader_sources().values() for line in lines if len(line) >= _SHORTEST)


@lru_cache(maxsize=1)
def _grader_sources() -> dict[str, tuple[str, ...]]:
    """Each file of the grading package (its path inside the package) and its lines, stripped, blank ones left
    out: what a run of printed lines is held to, in order."""
    sources = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
        sources[path.relative_to(PACKAGE_ROOT).as_posix()] = tuple(line for line in lines if line)
    return sources


@lru_cache(maxsize=1)
def _positions() -> dict[str, tuple[tuple[str, int], ...]]:
    """Where each grader line of 16 characters or more stands: ``(file, index among its non-blank lines)``."""
    found: dict[str, list[tuple[str, int]]] = {}
    for name, lines in _grader_sources().items():
        for index, line in enumerate(lines):
            if len(line) >= _SHORTEST:
                found.setdefault(line, []).append((name, index))
    return {line: tuple(where) for line, where in found.items()}


def _library_roots() -> list[str]:
    """Where this Python's libraries live: the standard library and site-packages (never the grader)."""
    import site
    import sysconfig

    paths = {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(Exception):  # site may lack them in an embedded or virtual Python
        paths.update(site.getsitepackages())
        paths.add(site.getusersitepackages())
    roots = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    # a folder inside another is walked with it
    return [r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots)]


def _is_grader_copy(folder: str) -> bool:
    return (os.path.basename(folder) == PACKAGE_ROOT.name
            and os.path.isfile(os.path.join(folder, "confinement", "preprocessors.py")))


@lru_cache(maxsize=1)
def library_lines() -> frozenset[str]:
    """The grader's lines of 16 characters or more that a library of this Python has too (``except ValueError:``,
    ``import numpy as np``): shown alone, such a line says nothing of the grader.

    Read once per process, and only when an output shows a grader line outside a library's own
    traceback frame (a second or two over the standard library and site-packages)."""
    wanted = {line.encode("utf-8") for line in _long_lines()}
    found: set[bytes] = set()
    grader = os.path.realpath(PACKAGE_ROOT)
    for root in _library_roots():
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [d for d in subfolders if d != "__pycache__" and not _is_grader_copy(os.path.join(folder, d))
                             and os.path.realpath(os.path.join(folder, d)) != grader]
            for name in files:
                if not name.endswith(".py"):
                    continue
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                found.update(wanted.intersection(map(bytes.strip, data.splitlines())))
    return frozenset(line.decode("utf-8") for line in found)


def _grader_file(path: str) -> str | None:
    """The grader file a frame's path names (any copy of the package: the kernel may import another), else None."""
    parts = path.replace("\\", "/").split("/")
    sources = _grader_sources()
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == PACKAGE_ROOT.name and "/".join(parts[i + 1:]) in sources:
            return "/".join(parts[i + 1:])
    return None


@lru_cache(maxsize=64)
def _library_file(path: str) -> frozenset[str] | None:
    """The stripped lines of the library file a frame names (a regular ``.py`` file under the standard library
    or site-packages, not the grader's), else None: its own lines, shown under its frame, are not the grader's."""
    real = os.path.realpath(os.path.expanduser(path))
    if not real.endswith(".py") or not any(real.startswith(root + os.sep) for root in _library_roots()):
        return None
    if any(_is_grader_copy(folder) for folder in _parents(real)):
        return None
    try:  # never a FIFO's open that waits, never a link swapped in since realpath
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as f:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        try:
            data = f.read(_LIBRARY_FILE_BYTES + 1)
        except OSError:
            return None
    if len(data) > _LIBRARY_FILE_BYTES:
        return None
    return frozenset(line.strip() for line in data.decode("utf-8", "replace").splitlines())


def _parents(path: str):
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent
        yield path


def _frame(line: str) -> re.Match | None:
    """The frame header ``line`` is, if it is one (a line too long for a path is none)."""
    return _FRAME.match(line) if len(line) <= _FRAME_CHARACTERS and "File" in line[:64] else None


def _candidates(variants: tuple[str, ...]):
    """The texts a line may show source as: each variant stripped, and without a traceback's prefix."""
    for text in variants:
        yield text.strip()
        yield _PREFIX.sub("", text, count=1).strip()


def _removed(lines: list[tuple[str, ...]]) -> set[int]:
    """The indices of the lines that show the grader's source; each line is given as the texts it reads as
    (its first is the text a reader sees).

    A line goes when it is really the grader's:

    - a source line of a traceback frame of a grader file (under ``File ".../autograder/...py", line N``);
    - a distinctive grader line (16 characters or more that no library of this Python has), and every line
      around it that goes on showing the same grader file in order, short or generic ones too;

    never a line a library's own frame shows from that library's file, nor a lone line that a library has
    as well (NumPy's ``except ValueError:`` in a student's traceback)."""
    known, positions, sources = _long_lines(), _positions(), _grader_sources()
    removed: set[int] = set()
    owned: set[int] = set()  # lines a library's frame shows from its own file
    index = 0
    while index < len(lines):
        frame = _frame(lines[index][0])
        index += 1
        if frame is None:
            continue
        path = frame["quoted"] or frame["bare"]
        grader = _grader_file(path)
        library = None if grader else _library_file(path)
        while index < len(lines):
            shown = lines[index][0]
            if not shown.strip() or shown[:1] not in (" ", "\t", "-") or _frame(shown):
                break
            texts = [t for t in _candidates(lines[index]) if t]
            if texts and not _MARKS.fullmatch(texts[0]):
                if grader:
                    removed.add(index)
                elif library is not None and any(t in library for t in texts):
                    owned.add(index)
            index += 1
    order = [i for i, variants in enumerate(lines) if any(v.strip() for v in variants)]
    for at, i in enumerate(order):
        if i in removed or i in owned:
            continue
        line = next((t for t in _candidates(lines[i]) if t in known), None)
        if line is None or line in library_lines():
            continue
        removed.add(i)
        for name, start in positions.get(line, ()):
            removed.update(_run(lines, order, at, sources[name], start, owned))
    return removed


def _run(lines: list[tuple[str, ...]], order: list[int], at: int, source: tuple[str, ...], start: int,
         owned: set[int]) -> list[int]:
    """The lines around ``lines[order[at]]`` (source line ``start`` of a grader file) that go on showing that
    file's lines in order, blank lines skipped on both sides."""

    def shows(step: int) -> bool:
        k, s = at + step, start + step
        return (0 <= k < len(order) and 0 <= s < len(source) and order[k] not in owned
                and source[s] in _candidates(lines[order[k]]))

    first = last = 0
    while shows(last + 1):
        last += 1
    while shows(first - 1):
        first -= 1
    return order[at + first:at + last + 1]


def scrub(text: str) -> str:
    """Replace each line of ``text`` that shows the grader's source (:func:`_removed` says which)."""
    lines = text.split("\n")
    removed = _removed([(_ANSI.sub("", line),) for line in lines])
    return "\n".join(REMOVED if i in removed else line for i, line in enumerate(lines))


_TAG = re.compile(r"<[^>]*>")


def scrub_html(text: str) -> str:
    """:func:`scrub` for markup: a line is read as its text (tags dropped, entities decoded) and as it is.

    The course's own HTML feedback puts one line of text on each line of markup
    (:func:`autograder.grading.feedback.render_html`), so this sees each line a reader sees.
    """
    lines = text.split("\n")
    removed = _removed([(html.unescape(_TAG.sub("", _ANSI.sub("", line))), _ANSI.sub("", line)) for line in lines])
    return "\n".join(html.escape(REMOVED) if i in removed else line for i, line in enumerate(lines))


def _scrub_value(value, scrubber=scrub):
    if isinstance(value, str):
        return scrubber(value)
    if isinstance(value, list):
        return [_scrub_value(v, scrubber) for v in value]
    return value


class ScrubGraderSource(NbGraderPreprocessor):
    """Remove grader source from every output, whoever printed it (feedback shows outputs)."""

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = _scrub_value(output.text)
            if "data" in output:
                for mime, value in output.data.items():
                    if mime == "text/html":
                        output.data[mime] = _scrub_value(value, scrub_html)
                    elif mime.startswith("text/"):
                        output.data[mime] = _scrub_value(value)
            if "traceback" in output:
                output.traceback = _scrub_value(output.traceback)
            if "evalue" in output:
                output.evalue = _scrub_value(output.evalue)
        return cell, resources


class ConfinedExecute(Execute):
    """nbgrader's Execute, with confined kernels (:mod:`autograder.confinement.kernel_manager`), and a kernel
    that dies costing only the cells it did not finish.

    nbgrader's own Execute stops at a dead kernel and the whole submission goes
    ungraded; here the cell that was running and every cell after it get an error
    output saying so (nbgrader scores those zero) and the rest keeps its results.

    A whole notebook has a wall-clock budget, :attr:`notebook_timeout` (each cell keeps nbgrader's
    ``Execute.timeout`` as well): a cell gets at most what is left of it; once it is spent, the
    kernel is stopped (a notebook that stalls or snoops holds a worker for one budget at most), the
    cell that ran out gets an error saying so, and every cell after it is not run and scores zero.
    The cells that finished keep their results, and the batch goes on.

    With ``phase_log`` set (the benchmark sets it), each notebook appends one JSON
    line there: the seconds from the start to the first cell (the kernel starting
    and becoming ready), in the notebook's own cells, in its grade cells, and
    from the last cell to the end (shutting the kernel down, killing its leftovers).
    """

    phase_log = Unicode("", config=True, help="Append each notebook's phase timings to this file (JSON lines).")
    notebook_timeout = Float(
        900.0, config=True,
        help="Seconds of wall-clock time one notebook may take in all, from its kernel's start to its last cell; "
             "past them its kernel is stopped and the cells not yet run score zero. 0 for no budget.")

    output_bytes = Int(
        8 * 2**20, config=True,
        help="Bytes one output of the notebook's kernel may hold; a larger one is replaced by a line saying so "
             "(nbgrader keeps every output in memory and in the autograded notebook).")
    notebook_output_bytes = Int(
        32 * 2**20, config=True,
        help="Bytes all the outputs of one notebook may hold; past them each cell keeps one line saying so.")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", ConfinedKernelManager)
        super().__init__(*args, **kwargs)

    def output(self, outs, msg, display_id, cell_index):
        """Keep an output (:meth:`_kept`); a piece of a stream right after a piece of the same stream
        joins it, as Jupyter shows them: the kernel sends what a cell prints in pieces, cut wherever
        its flush timer fell (one ``print`` of two words can arrive as two), and the feedback shows
        each output apart."""
        out = self._kept(outs, msg, display_id, cell_index)
        if (out is not None and out.get("output_type") == "stream" and len(outs) > 1 and outs[-1] is out
                and outs[-2].get("output_type") == "stream" and outs[-2].get("name") == out.get("name")):
            outs.pop()
            outs[-1]["text"] += out["text"]
            return outs[-1]
        return out

    def _kept(self, outs, msg, display_id, cell_index):
        """Keep an output only within :attr:`output_bytes`, and the notebook's within
        :attr:`notebook_output_bytes`: past them a line says what was left out (an error keeps its
        name, shortened), once per cell."""
        size = _output_size(msg)
        if size <= self.output_bytes and self._output_total + size <= self.notebook_output_bytes:
            self._output_total += size
            return super().output(outs, msg, display_id, cell_index)
        if msg["header"]["msg_type"] == "error":
            return super().output(outs, _shortened_error(msg), display_id, cell_index)
        if cell_index in self._cells_cut:
            return None
        self._cells_cut.add(cell_index)
        limit = (f"the limit of {self.output_bytes // 2**20} MiB an output" if size > self.output_bytes else
                 f"the notebook's limit of {self.notebook_output_bytes // 2**20} MiB of outputs")
        note = (f"[autograder: an output of {size / 2**20:.1f} MiB was left out here, past {limit} "
                "(and any more such outputs of this cell)]\n")
        return super().output(outs, _stream(msg, note), None, cell_index)

    def _update_display_id(self, display_id, msg):
        """An update replaces an output in place: past :attr:`output_bytes` it says so instead."""
        size = _output_size(msg)
        if size > self.output_bytes:
            note = f"[autograder: an update of {size / 2**20:.1f} MiB was left out, past {self.output_bytes // 2**20} MiB]"
            msg = {**msg, "content": {**msg["content"], "data": {"text/plain": note}, "metadata": {}}}
        return super()._update_display_id(display_id, msg)

    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None  # (ename, sentence): why no more cells run (the kernel died, the budget ran out)
        self._deadline = time.monotonic() + self.notebook_timeout if self.notebook_timeout > 0 else None
        self._phases = {"cells": 0.0, "grade_cells": 0.0}
        self._first_cell = self._last_cell = None
        self._notebook_memo: dict = {}  # what the judge's properties note for later grade cells of this notebook
        self._output_total, self._cells_cut = 0, set()  # bytes of output seen; cells whose outputs were cut
        reach.note(nb, self._notebook_memo)  # cells that reach into the grader: the judges withhold evidence points
        drawn.note(self._notebook_memo, [cell.source for cell in nb.cells  # what a drawn order is seeded with
                                         if cell.cell_type == "code" and not is_autograder_test(cell)])
        began = time.perf_counter()
        try:
            return super().preprocess(nb, resources, km)
        except RuntimeError as error:
            if self._first_cell is None and "died" in str(error):
                where = (resources or {}).get("nbgrader", {})
                self.log.error(
                    "The grading kernel for %s died as it started, before it ran any cell of the notebook (%s). "
                    "That is the grading environment, not the student's notebook: its last lines above say why "
                    "(an XLA_FLAGS entry this XLA does not know, a broken install). The notebook is left "
                    "ungraded; fix the environment and grade it again.",
                    "/".join(str(where.get(k)) for k in ("student", "notebook") if where.get(k)) or "this notebook",
                    error)
            raise
        finally:
            if self.phase_log:
                self._log_phases(began, time.perf_counter(), resources)

    def _log_phases(self, began: float, ended: float, resources) -> None:
        first = self._first_cell if self._first_cell is not None else ended
        last = self._last_cell if self._last_cell is not None else ended
        where = (resources or {}).get("nbgrader", {})
        phases = {"student": where.get("student"), "notebook": where.get("notebook"), "kernel_start": first - began,
                  **self._phases, "shutdown": ended - last, "execute": ended - began}
        with open(self.phase_log, "a", encoding="utf-8") as log:
            log.write(json.dumps(phases) + "\n")

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        started = time.perf_counter()
        if self._first_cell is None:
            self._first_cell = started
        try:
            return self._run_cell(cell, resources, index)
        finally:
            self._last_cell = time.perf_counter()
            kind = "grade_cells" if is_autograder_test(cell) else "cells"
            self._phases[kind] += self._last_cell - started

    def _run_cell(self, cell, resources, index):
        if self._stopped is None and self._left() == 0:
            self._stop_for_budget(index)
        if self._stopped is not None:
            cell.outputs = [_error(*self._stopped)]
            return cell, resources
        try:
            call = _grade_call(cell)
            if call is not None:
                return self._judge_cell(cell, resources, index, *call)
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            how = self.km.exit_description() if hasattr(self.km, "exit_description") else "it stopped"
            self._stopped = (DIED, f"Not run: the kernel died in an earlier cell ({how}).")
            self.log.warning("kernel died in cell %d (%s); the cells after it are not run", index, how)
            cell.outputs.append(_error(DIED, f"The kernel died while this cell ran ({how}); the cells after it did not run."))
            return cell, resources
        except CellTimeoutError:  # past its time, interrupted, and still not answering: the kernel is stopped
            if self._left() != 0:
                self._stopped = (UNRESPONSIVE, "Not run: the kernel stopped answering in an earlier cell.")
                cell.outputs.append(_error(
                    UNRESPONSIVE, "This cell ran past its time limit and its kernel did not stop when interrupted; "
                    "the kernel was stopped, and the cells after it did not run."))
                self._stop_kernel()
            return cell, resources
        finally:
            if self._stopped is None and self._left() == 0:  # this cell ran out of the notebook's budget
                cell.outputs.append(_error(
                    OUT_OF_BUDGET, f"The notebook's time budget of {self.notebook_timeout:g} s ran out while this cell ran; "
                    "its kernel was stopped, and the cells after it did not run."))
                self._stop_for_budget(index)

    def _left(self) -> float | None:
        """Seconds left of the notebook's budget (0 once spent); None without a budget."""
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def _get_timeout(self, cell):
        """A cell's timeout: nbgrader's, but never past the notebook's budget (at least a second)."""
        timeout, left = super()._get_timeout(cell), self._left()
        if left is None:
            return timeout
        left = max(1, math.ceil(left))
        return left if timeout is None else min(timeout, left)

    def _stop_for_budget(self, index: int) -> None:
        self._stopped = (OUT_OF_BUDGET, f"Not run: the notebook's time budget of {self.notebook_timeout:g} s ran "
                                        "out in an earlier cell.")
        self.log.warning("autograder: the notebook's budget of %g s ran out in cell %d; its kernel is stopped and "
                         "the cells after it are not run", self.notebook_timeout, index)
        self._stop_kernel()

    def _stop_kernel(self) -> None:
        with contextlib.suppress(Exception):  # a kernel already gone is what we want
            run_sync(self.km.shutdown_kernel)(now=True)

    def _judge_cell(self, cell, resources, index, assignment: str, group: str):
        """A grade cell judged in this process (:mod:`autograder.grading.judge`): the kernel runs
        only the serving call in place of the cell's source; the judge's report becomes the
        cell's outputs, its feedback and its points, whatever the kernel printed meanwhile."""
        try:
            registry.properties_of(assignment, group)
        except (ValueError, ImportError) as error:  # the course's own grade cell names no group it has
            self.log.error("grade cell %d: %s", index, error)
            cell.outputs = [new_output("error", ename="GradeCellUnknown", evalue=str(error),
                                       traceback=[f"GradeCellUnknown: {error}"])]
            return cell, resources
        session = judge.Session(assignment, group, self._notebook_memo, getattr(self.km, "private_folder", None))
        source = cell.source
        cell.source = session.kernel_code
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = source
            report = session.finish()
        errors = [o for o in cell.outputs if o.output_type == "error"]  # the cell did not finish: it scores 0
        cell.outputs = [
            new_output("display_data", data={"text/plain": feedback.render(report),
                                             "text/html": feedback.render_html(report)}),
            *(errors or [new_output("execute_result", data={"text/plain": repr(float(report.earned))},
                                    execution_count=cell.get("execution_count"))]),
        ]
        return cell, resources


def _grade_call(cell) -> tuple[str, str] | None:
    """The assignment and group a grade cell's hidden region grades, else None (a test cell of
    the instructor's own, with no call of the course's grader, runs and is scored as nbgrader does)."""
    if not is_autograder_test(cell):
        return None
    call = GRADE_CALL.search(cell.source)
    return None if call is None else (call[1], call[2])


#: The errors this preprocessor writes into a cell (nbgrader scores it zero; the class report counts them):
#: the kernel died in it or before it; the notebook's time budget ran out in it or before it; the
#: kernel stopped answering in it or before it (a cell past its time that ignored the interrupt).
DIED, OUT_OF_BUDGET, UNRESPONSIVE = "KernelDied", "NotebookTimeout", "KernelUnresponsive"


def _output_size(msg: dict) -> int:
    """Characters of what an IOPub message would add to the notebook (0 for what adds nothing)."""
    content = msg.get("content") or {}
    kind = msg["header"]["msg_type"]
    if kind == "stream":
        return len(content.get("text") or "")
    if kind in ("display_data", "execute_result", "update_display_data"):
        return sum(len(value) if isinstance(value, str) else len(json.dumps(value))
                   for value in (content.get("data") or {}).values())
    if kind == "error":
        return len(str(content.get("evalue", ""))) + sum(map(len, map(str, content.get("traceback") or ())))
    return 0


def _stream(msg: dict, text: str) -> dict:
    """``msg`` turned into a line on standard output (never standard error: nbgrader zeroes a test
    cell that wrote there)."""
    return {**msg, "msg_type": "stream", "header": {**msg["header"], "msg_type": "stream"},
            "content": {"name": "stdout", "text": text}}


def _shortened_error(msg: dict) -> dict:
    content = msg["content"]
    evalue = str(content.get("evalue", ""))
    short = evalue[:ERROR_CHARACTERS] + (" [autograder: cut]" if len(evalue) > ERROR_CHARACTERS else "")
    ename = str(content.get("ename", ""))[:ERROR_CHARACTERS]
    return {**msg, "content": {**content, "ename": ename, "evalue": short, "traceback": [f"{ename}: {short}"]}}


#: Characters of an error's name and message kept when its output is past the limits.
ERROR_CHARACTERS = 2000


def _error(ename: str, message: str):
    return new_output("error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"])
