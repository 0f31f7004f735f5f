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
import re
import time
from functools import lru_cache

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Float, Int, Unicode

from autograder.confinement import PACKAGE_ROOT
from autograder.confinement.kernel_manager import ConfinedKernelManager
from autograder.grading import feedback, judge, reach, registry
from autograder.grading.cells import GRADE_CALL, is_autograder_test

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: What tracebacks and listings put before a source line: arrows, line numbers.
_PREFIX = re.compile(r"^[\s\-=>|]*\d*[\s|:]*")
_SHORTEST = 16  # shorter lines (``return None``, ``)``) say nothing about the grader
REMOVED = "[line removed: it belongs to the hidden grader]"


@lru_cache(maxsize=1)
def grader_lines() -> frozenset[str]:
    """Every distinctive line of the grading package's source."""
    lines = set()
    for path in PACKAGE_ROOT.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) >= _SHORTEST:
                lines.add(line)
    return frozenset(lines)


def scrub(text: str) -> str:
    """Replace each line of ``text`` that shows a line of grader source."""
    known = grader_lines()
    out = []
    for line in text.split("\n"):
        plain = _ANSI.sub("", line).strip()
        if plain in known or _PREFIX.sub("", plain, count=1).strip() in known:
            out.append(REMOVED)
        else:
            out.append(line)
    return "\n".join(out)


_TAG = re.compile(r"<[^>]*>")


def scrub_html(text: str) -> str:
    """:func:`scrub` for markup: a line goes when its text (tags dropped, entities decoded) is grader source.

    The course's own HTML feedback puts one line of text on each line of markup
    (:func:`autograder.grading.feedback.render_html`), so this sees each line a reader sees.
    """
    known = grader_lines()
    out = []
    for line in text.split("\n"):
        plain = html.unescape(_TAG.sub("", _ANSI.sub("", line))).strip()
        raw = _ANSI.sub("", line).strip()
        if any(t in known or _PREFIX.sub("", t, count=1).strip() in known for t in (plain, raw)):
            out.append(html.escape(REMOVED))
        else:
            out.append(line)
    return "\n".join(out)


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
        began = time.perf_counter()
        try:
            return super().preprocess(nb, resources, km)
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
