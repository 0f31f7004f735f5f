"""nbgrader's collect, autograde and feedback, reading submissions only through the boundary.

:func:`install` (called by ``course_config.py``) puts these in nbgrader's place in the process
that loads the configuration, so ``nbgrader collect``, ``nbgrader autograde``, ``nbgrader
generate_feedback``, formgrader's buttons, the parallel command's workers and the Dask workers
(all of which load the course's configuration) go through them:

- :class:`BoundedCollect` (nbgrader's own hook, ``ExchangeFactory.collect``) copies each
  ``inbound/`` submission with :func:`~autograder.confinement.boundary.copy_submission` instead of
  ``shutil.copytree``, and notes what it refused in the copy.
- :class:`BoundedAutograde` and :class:`BoundedGenerateFeedback` copy every submission they are
  about to read (``submitted/`` or ``autograded/``) through the boundary into a private folder of
  their own first, and let nbgrader read only that copy. nbgrader has no hook for where a converter
  reads from, so the apps' names for the converters are replaced (``nbgrader.apps.autogradeapp.
  Autograde``, ``nbgrader.apps.api.Autograde`` and the two for feedback).

A notebook the boundary refused is graded as the released notebook with the reason written at its
top: every automatic point 0, the reason in the log, on the feedback page, in the gradebook's
comments (the submission flagged) and in the class report. A refused file beside it is left out;
the notebook is graded as usual, with the reason at its top.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde, GenerateFeedback
from nbgrader.exchange.default.collect import ExchangeCollect

from autograder.confinement.boundary import (
    RECORD, SubmissionBoundary, copy_submission, read_record, shown, write_record,
)

#: What marks the course's note cell in an autograded notebook.
NOTE_TAG = "autograder-boundary-note"


def _note_cell(lines: list[str], replaced: bool) -> nbformat.NotebookNode:
    head = ("**Your notebook was not graded**: the course reads only regular files, and this one was "
            "refused. What follows is the notebook as released, so every automatic point is 0."
            if replaced else
            "**Some of what you handed in was not read**: the course reads only regular files of your "
            "own, within its sizes. Your notebook was graded without these:")
    body = "\n".join(f"- {line}" for line in lines)
    cell = nbformat.v4.new_markdown_cell(f"{head}\n\n{body}\n")
    cell.metadata["tags"] = [NOTE_TAG]
    return cell


def _with_note(path: str, lines: list[str], replaced: bool) -> None:
    """Put the note at the top of the notebook at ``path`` (left alone if it is not a notebook:
    nbgrader names that problem itself)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - any unreadable notebook is nbgrader's to report
        return
    nb.cells.insert(0, _note_cell(lines, replaced))
    nbformat.write(nb, path)


class _ThroughTheBoundary:
    """A converter that reads a private copy of its input, made through the boundary."""

    #: Files of the input the boundary refuses by name (the course's record, where a student could forge it).
    reserved: tuple[str, ...] = ()

    def start(self) -> None:
        self._stage_root = tempfile.mkdtemp(prefix="autograder-boundary-")
        os.chmod(self._stage_root, 0o711)  # a kernel's user may pass through to its folder, not list it
        self.refusals: dict[tuple[str, str], list[str]] = {}
        try:
            self._stage()
            super().start()
        finally:
            shutil.rmtree(self._stage_root, ignore_errors=True)

    def _real_source(self, assignment_id: str, student_id: str) -> str:
        return super()._format_source(assignment_id, student_id)

    def _format_source(self, assignment_id: str, student_id: str, escape: bool = False) -> str:
        if escape:
            return re.escape(os.sep).join([re.escape(self._stage_root), student_id, assignment_id])
        return os.path.join(self._stage_root, student_id, assignment_id)

    def init_single_notebook_resources(self, notebook_filename: str) -> dict:
        """Autograde's second pass reads the notebook it wrote (``autograded/<s>/<a>/<n>.ipynb``):
        its student, assignment and notebook are read from the copy's place that matches it."""
        if not notebook_filename.startswith(self._stage_root + os.sep):
            notebook_filename = os.path.join(self._stage_root, *os.path.normpath(notebook_filename).split(os.sep)[-3:])
        return super().init_single_notebook_resources(notebook_filename)

    def _stage(self) -> None:
        limits = SubmissionBoundary(parent=self)
        pattern = self._real_source(self.coursedir.assignment_id, self.coursedir.student_id)
        for folder in sorted(glob.glob(pattern)):
            student_folder, assignment_id = os.path.split(os.path.normpath(folder))
            student_id = os.path.basename(student_folder)
            if not (student_id.isprintable() and assignment_id.isprintable()):
                self.log.error("Not graded: the folder %s has a name with control characters", shown(folder))
                continue
            dest = os.path.join(self._stage_root, student_id, assignment_id)
            os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
            if os.path.islink(student_folder):
                refused = [f"submission refused: {shown(student_id)}/ (the student's folder) is a symbolic link"]
                os.makedirs(dest, mode=0o755)
            else:
                earlier = read_record(folder) if not os.path.islink(folder) else []
                refused = earlier + [r.sentence() for r in copy_submission(
                    folder, dest, limits, ignore=self.coursedir.ignore, reserved=self.reserved)]
            if refused:
                self._handle_refused(assignment_id, student_id, dest, refused)

    def _handle_refused(self, assignment_id: str, student_id: str, dest: str, refused: list[str]) -> None:
        for line in refused:
            self.log.warning("%s (student %s, assignment %s)", line, shown(student_id), shown(assignment_id))
        self.refusals[(assignment_id, student_id)] = refused
        write_record(dest, refused)


class BoundedAutograde(_ThroughTheBoundary, Autograde):
    """nbgrader's Autograde, reading ``submitted/`` through the boundary; ends with a score line
    per assignment when run as ``nbgrader autograde``."""

    reserved = (RECORD,)

    def _handle_refused(self, assignment_id, student_id, dest, refused):
        super()._handle_refused(assignment_id, student_id, dest, refused)
        present = set(os.listdir(dest))
        for name in self._notebook_names(assignment_id):
            if f"{name}.ipynb" in present:
                _with_note(os.path.join(dest, f"{name}.ipynb"), refused, replaced=False)
                continue
            released = os.path.join(self.coursedir.format_path(self.coursedir.release_directory, ".",
                                                               assignment_id), f"{name}.ipynb")
            if not os.path.isfile(released):
                self.log.error("Cannot grade %s's refused %s.ipynb as released: %s is missing",
                               shown(student_id), name, released)
                continue
            shutil.copyfile(released, os.path.join(dest, f"{name}.ipynb"))
            _with_note(os.path.join(dest, f"{name}.ipynb"), refused, replaced=True)

    def _notebook_names(self, assignment_id: str) -> list[str]:
        try:
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                return [nb.name for nb in gb.find_assignment(assignment_id).notebooks]
        except MissingEntry:
            return []  # nbgrader says the assignment is missing, for every student

    def set_permissions(self, assignment_id: str, student_id: str) -> None:
        """After a student's notebooks are graded (nbgrader calls this then): the refusals go into the
        gradebook, flagged, in every comment of the submission."""
        super().set_permissions(assignment_id, student_id)
        self.graded = getattr(self, "graded", []) + [(assignment_id, student_id)]
        refused = self.refusals.get((assignment_id, student_id))
        if not refused:
            return
        note = "\n".join(refused)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            for nb in gb.find_submission(assignment_id, student_id).notebooks:
                nb.flagged = True
                for comment in nb.comments:
                    if not (comment.auto_comment or "").startswith(note):
                        comment.auto_comment = f"{note}\n\n{comment.auto_comment or ''}".strip()
            gb.db.commit()

    def start(self) -> None:
        self.graded = []
        try:
            super().start()
        finally:
            if _is_the_cli(self.parent):
                from autograder.tools.summary import log_summary

                log_summary(self.log, self.coursedir, self.graded, self.refusals)


def _is_the_cli(parent) -> bool:
    from nbgrader.apps.autogradeapp import AutogradeApp

    return isinstance(parent, AutogradeApp)


class BoundedGenerateFeedback(_ThroughTheBoundary, GenerateFeedback):
    """nbgrader's GenerateFeedback, reading ``autograded/`` through the boundary (the course's own
    record there goes on to ``feedback/``)."""


class BoundedCollect(ExchangeCollect):
    """nbgrader's collect, copying each submission out of ``inbound/`` through the boundary."""

    def do_copy(self, src: str, dest: str, log=None) -> None:
        refused = [r.sentence() for r in copy_submission(
            src, dest, SubmissionBoundary(parent=self), ignore=self.coursedir.ignore)]
        for line in refused:
            self.log.warning("%s (in %s)", line, shown(os.path.basename(src)))
        write_record(dest, refused)


def install() -> None:
    """Put the bounded converters where nbgrader's apps and API look their converters up."""
    import nbgrader.apps.api as api
    import nbgrader.apps.autogradeapp as autogradeapp
    import nbgrader.apps.generatefeedbackapp as generatefeedbackapp

    autogradeapp.Autograde = api.Autograde = BoundedAutograde
    generatefeedbackapp.GenerateFeedback = api.GenerateFeedback = BoundedGenerateFeedback
