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

import contextlib
import datetime
import fcntl
import functools
import glob
import os
import pwd
import re
import shutil
import stat
import tempfile

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde, GenerateFeedback
from nbgrader.converters.base import NbGraderException
from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode

from autograder.confinement.boundary import (
    RECORD, SubmissionBoundary, canonical_time, copy_submission, kept, read_record, read_timestamp_text, readable_time,
    shown, usable_student_id, write_record,
)
from autograder.confinement.cell_marks import accepted, check_marks, known_cells
from autograder.confinement.sanitise import literal_markdown
from autograder.confinement.student_ids import lookalike

#: What marks the course's note cell in an autograded notebook.
NOTE_TAG = "autograder-boundary-note"


def _note_cell(lines: list[str], replaced: bool) -> nbformat.NotebookNode:
    head = ("**Your notebook was not graded**: the course could not read it as handed in, for the reason "
            "below. What follows is the notebook as released, so every automatic point is 0."
            if replaced else
            "**Some of what you handed in was not read** as it was: the course reads only regular files of "
            "your own, within its sizes, each cell with the nbgrader marks it was released with. Your notebook "
            "was graded as these lines say:")
    body = "\n".join(f"- {literal_markdown(line)}" for line in lines)
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


#: Refusals of one submission the log shows one by one; the rest are counted (the record keeps 50).
LOGGED = 10
#: The course's own folders (``autograded/``) may hold more than a student may hand in: nbgrader adds
#: outputs (the confined kernel keeps a notebook's within 32 MiB) to a notebook within the student's cap.
OWN_FOLDERS_FACTOR = 4


#: The private copies' folders in the course folder; each holds :data:`_LOCK`, locked while its run lives.
STAGE_PREFIX = ".graded-submissions-"
_LOCK = ".in-use"


def _remove_stale_stages(root: str) -> None:
    """Private copies left by a run that was killed: those whose lock nobody holds (on any machine
    sharing the course folder; a run never removes its own)."""
    for name in os.listdir(root):
        folder = os.path.join(root, name)
        if not name.startswith(STAGE_PREFIX) or os.path.islink(folder) or not os.path.isdir(folder):
            continue
        try:
            fd = os.open(os.path.join(folder, _LOCK), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # being made, or not ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its run is alive
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)


class _ThroughTheBoundary:
    """A converter that reads a private copy of its input, made through the boundary.

    The copy lies in the course's own folder (hidden: ``.graded-submissions-*``, mode 0700, locked
    while its run lives), so it is exposed to no one the course's ``submitted/`` and ``autograded/`` are not; the
    jail hides the course folder from every kernel but for the kernel's own notebook folder."""

    #: Names at the top of the input it skips, unread (the course's record, read on its own). The
    #: input is the course's (``submitted/``, ``autograded/``): no name is refused there, as collect refuses
    #: a student's file posing as the record.
    skipped: tuple[str, ...] = ()

    def start(self) -> None:
        root = self.coursedir.root
        _remove_stale_stages(root)
        self._stage_root = tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=root)  # mode 0700
        # The lock, held while this run lives (over NFS, Linux takes it on the server), is taken before
        # its name appears: another run's cleanup never finds it free in between.
        lock = os.open(os.path.join(self._stage_root, f"{_LOCK}.new"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.rename(os.path.join(self._stage_root, f"{_LOCK}.new"), os.path.join(self._stage_root, _LOCK))
        self.refusals: dict[tuple[str, str], list[str]] = {}
        self._known = {}  # the gradebook's cells of each notebook, read once a run
        try:
            self._stage()
            super().start()
        finally:
            shutil.rmtree(self._stage_root, ignore_errors=True)
            os.close(lock)

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

    def _limits(self) -> SubmissionBoundary:
        return SubmissionBoundary(parent=self)

    def _stage(self) -> None:
        limits = self._limits()
        pattern = self._real_source(self.coursedir.assignment_id, self.coursedir.student_id)
        folders = sorted(glob.glob(pattern))
        ids = {os.path.basename(os.path.dirname(os.path.normpath(folder))) for folder in folders}
        ids |= gradebook_students(self.coursedir)
        for folder in folders:
            student_folder, assignment_id = os.path.split(os.path.normpath(folder))
            student_id = os.path.basename(student_folder)
            if not (usable_student_id(student_id) and assignment_id.isprintable()):
                self.log.error("Not graded: the folder %s names no student the course can grade alone "
                               "(control characters, a pattern, a hidden name, a CSV separator, a leading "
                               "formula character, or mixed scripts)", shown(folder))
                continue
            imitated = lookalike(student_id, ids)
            if imitated:
                self.log.error("Not graded: the folder %s is named for %s, which looks like the student %s",
                               shown(folder), ascii(student_id), shown(imitated))
                continue
            try:
                self._stage_one(folder, student_folder, student_id, assignment_id, limits)
            except Exception as error:  # noqa: BLE001 - one submission that cannot be copied costs only itself
                self.log.error("Not graded: %s could not be copied through the boundary (%s: %s)",
                               shown(folder), type(error).__name__, shown(str(error)))
                shutil.rmtree(os.path.join(self._stage_root, student_id, assignment_id), ignore_errors=True)

    def _stage_one(self, folder: str, student_folder: str, student_id: str, assignment_id: str,
                   limits: SubmissionBoundary) -> None:
        """Copy one student's submission through the boundary into the private copy."""
        dest = os.path.join(self._stage_root, student_id, assignment_id)
        os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
        if os.path.islink(student_folder):
            refused = [f"submission refused: {shown(student_id)}/ (the student's folder) is a symbolic link"]
            os.makedirs(dest, mode=0o755)
        else:
            earlier = read_record(folder) if not os.path.islink(folder) else []
            names = notebook_names(self.coursedir, assignment_id)
            refused = earlier + copy_submission(
                folder, dest, limits, ignore=[*self.coursedir.ignore, *self.skipped], reserved=(),
                one_link=False, first=(*(f"{name}.ipynb" for name in names), "timestamp.txt")).sentences()
            refused += self._checked(dest, assignment_id, names)
        if refused:
            self._handle_refused(assignment_id, student_id, dest, refused)

    def _checked(self, dest: str, assignment_id: str, names: list[str]) -> list[str]:
        """What a check of the copied notebooks changed or refused (one sentence each); the copy
        itself is all the feedback reads (nbgrader wrote it)."""
        return []


    def _handle_refused(self, assignment_id: str, student_id: str, dest: str, refused: list[str]) -> None:
        log_refusals(self.log, refused, f"student {shown(student_id)}, assignment {shown(assignment_id)}")
        self.refusals[(assignment_id, student_id)] = kept(refused)
        write_record(dest, refused)


def notebook_names(coursedir, assignment_id: str) -> list[str]:
    """The assignment's notebooks, as the gradebook holds them; none where it does not know the
    assignment (nbgrader says so itself, for every student)."""
    try:
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            return [nb.name for nb in gb.find_assignment(assignment_id).notebooks]
    except MissingEntry:
        return []


def gradebook_students(coursedir) -> set[str]:
    """Every student id the gradebook holds."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        return {student.id for student in gb.students}


def log_refusals(log, refused: list[str], whose: str) -> None:
    for line in refused[:LOGGED]:
        log.warning("%s (%s)", line, whose)
    if len(refused) > LOGGED:
        log.warning("submission refused: %d more entries (%s; all in %s)", len(refused) - LOGGED, whose, RECORD)


class BoundedAutograde(_ThroughTheBoundary, Autograde):
    """nbgrader's Autograde, reading ``submitted/`` through the boundary; ends with a score line
    per assignment when run as ``nbgrader autograde``. The record a collect wrote there is read on
    its own and carried on."""

    skipped = (RECORD,)

    def _warm_compile_cache(self) -> None:
        """The reference's programs compiled once, for every confined kernel of this assignment to read
        (:mod:`autograder.grading.compile_cache`)."""
        from autograder.confinement.kernel_manager import can_confine
        from autograder.grading import compile_cache
        from autograder.grading.registry import assignments

        from autograder.grading import backend

        settings = self.config.get("ConfinedKernelManager", {})
        # Where grading computes (c.ConfinedKernelManager.jax_platforms): the judge in this process is
        # pinned there now, before anything starts JAX's backend; the warm-up compiles there too.
        platforms = settings.get("jax_platforms", backend.DEFAULT)
        backend.choose(platforms, self.log)
        wanted = settings.get("compile_cache", True)
        assignment = self.coursedir.assignment_id
        if wanted and assignment in assignments() and can_confine():
            compile_cache.warm(assignment, self.coursedir.root, env=backend.kernel_env(os.environ, platforms),
                               logger=self.log)

    def _handle_refused(self, assignment_id, student_id, dest, refused):
        super()._handle_refused(assignment_id, student_id, dest, refused)
        present = set(os.listdir(dest))
        for name in notebook_names(self.coursedir, assignment_id):
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

    def _checked(self, dest: str, assignment_id: str, names: list[str]) -> list[str]:
        """Every notebook's nbgrader marks made ones nbgrader accepts (:mod:`~autograder.confinement.
        cell_marks`): one notebook's marks never stop the batch. A notebook whose marks still fail is
        removed from the copy, so that it is graded as released, 0, with the reason named."""
        refused = []
        for name in names:
            path = os.path.join(dest, f"{name}.ipynb")
            if not os.path.isfile(path):
                continue
            try:
                nb = nbformat.read(path, as_version=4)
            except Exception:  # noqa: BLE001 - an unreadable notebook is nbgrader's to name, for this student alone
                continue
            known = self._known_cells(name, assignment_id)
            changed = check_marks(nb, known, f"{name}.ipynb")
            if not accepted(nb, known):
                os.remove(path)
                refused.append(f"submission refused: {name}.ipynb holds nbgrader marks the course could not "
                               "make ones nbgrader accepts")
            elif changed:
                nbformat.write(nb, path)
            refused += [r.sentence() for r in changed]
        return refused

    def _known_cells(self, name: str, assignment_id: str):
        if (name, assignment_id) not in self._known:
            self._known[name, assignment_id] = known_cells(self.coursedir.db_url, self.coursedir.course_id, name,
                                                           assignment_id)
        return self._known[name, assignment_id]

    def set_permissions(self, assignment_id: str, student_id: str) -> None:
        """After a student's notebooks are graded (nbgrader calls this then): the refusals go into the
        gradebook, flagged, in every comment of the submission."""
        super().set_permissions(assignment_id, student_id)
        self.graded = getattr(self, "graded", []) + [(assignment_id, student_id)]
        refused = self.refusals.get((assignment_id, student_id))
        if not refused:
            return
        # nbgrader renders comments as markdown (the feedback page): a refused name is the student's text.
        note = "\n".join(f"- {literal_markdown(line)}" for line in refused)  # one line each on the page
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            for nb in gb.find_submission(assignment_id, student_id).notebooks:
                nb.flagged = True
                for comment in nb.comments:
                    if not (comment.auto_comment or "").startswith(note):
                        comment.auto_comment = f"{note}\n\n{comment.auto_comment or ''}".strip()
            gb.db.commit()

    def convert_notebooks(self) -> None:
        """nbgrader's loop, one submission at a time: an error nbgrader makes fatal for the whole
        command (a notebook's schema version, say) costs only its own submission, as in the parallel
        command, where each student is a call of their own. A submission whose nbgrader marks stop
        nbgrader (a schema version it refuses, which :meth:`_checked` should have repaired already) is
        graded once more as released (:meth:`_as_released`: 0, flagged, the reason in its comments and
        note cell). Any other error is nbgrader's to contain, as it does (and as the parallel command
        does): that submission is not graded, it is named, and the command fails at the end."""
        everyone = self.assignments
        failed = []
        try:
            for key in sorted(everyone):
                for handed_in in (True, False):
                    self.assignments = {key: everyone[key]}
                    try:
                        super().convert_notebooks()
                        break
                    except NbGraderException as error:
                        why = shown(str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__)
                        self.log.error("%s stopped nbgrader (%s); the other submissions go on",
                                       shown(os.path.relpath(key, self._stage_root)), why)
                        schema = isinstance(error.__context__, (SchemaTooOldError, SchemaTooNewError))
                        if not (handed_in and schema and self._as_released(key, why)):
                            failed.append(key)
                            break
        finally:
            self.assignments = everyone
        if failed:
            names = ", ".join(shown(os.path.relpath(key, self._stage_root)) for key in failed)
            raise NbGraderException(f"{len(failed)} submission(s) could not be graded: {names} (each error is above)")

    def _as_released(self, staged: str, why: str) -> bool:
        """Put the released notebooks in place of the student's in the staged copy ``staged``, with a
        note saying why; whether there is a release to grade instead."""
        student_id, assignment_id = os.path.relpath(staged, self._stage_root).split(os.sep)[-2:]
        names = notebook_names(self.coursedir, assignment_id)
        if not names:
            return False
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(staged, f"{name}.ipynb"))
        line = f"submission refused: nbgrader could not grade the notebook as handed in ({why})"
        self._handle_refused(assignment_id, student_id, staged,
                             [*self.refusals.get((assignment_id, student_id), []), line])
        return all(os.path.isfile(os.path.join(staged, f"{name}.ipynb")) for name in names)

    def start(self) -> None:
        self.graded = []
        self._warm_compile_cache()
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
    record there goes on to ``feedback/``), with room for what autograding added."""

    def _limits(self) -> SubmissionBoundary:
        limits = SubmissionBoundary(parent=self)
        return SubmissionBoundary(max_file_bytes=limits.max_file_bytes * OWN_FOLDERS_FACTOR,
                                  max_submission_bytes=limits.max_submission_bytes * OWN_FOLDERS_FACTOR,
                                  max_notebook_bytes=limits.max_notebook_bytes * OWN_FOLDERS_FACTOR)


class BoundedCollect(ExchangeCollect):
    """nbgrader's collect, copying each submission out of ``inbound/`` through the boundary.

    Students write ``inbound/``, so what they can set is checked here too: a folder whose name holds
    no readable time is skipped with a warning (nbgrader stops the whole collect on it), as is one
    named for no id the course grades (:mod:`~autograder.confinement.student_ids`: no CSV separator,
    formula or look-alike of another id), and one handed in by an account that may not hand in for
    that id (:meth:`_impostor`); a ``timestamp.txt`` that is missing or unreadable is written from
    the folder's name. A timestamp earlier than the submission's files last changed (their
    ``ctime``, which no student can set) by more than :data:`STAMP_SLACK` seconds may dodge a late
    penalty: it is named in the log and written to the submission's record, so that autograde flags
    the notebook and says so in its comments, on the feedback page and in the class report.
    """

    #: Seconds between nbgrader submit's timestamp and its copy's last change, past which the log warns.
    STAMP_SLACK = 600

    def init_src(self) -> None:
        """nbgrader 0.9.6's ``init_src``, less the folders whose name is not ``student+assignment+time+...``."""
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        student_id = self.coursedir.student_id if self.coursedir.student_id else "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        records = []
        paths = glob.glob(pattern)
        self._handed_in = {os.path.basename(path).rsplit("+", 3)[0] for path in paths}
        # Accounts that hand in under their own name (any assignment, whatever --student picks): a folder
        # named for an account counts only when that account made it, so no student makes another
        # account (a shared one) a student by naming a folder for it.
        self._own_names = self._handed_in_by_themselves(glob.glob(os.path.join(self.inbound_path, "*+*")))
        self._students = gradebook_students(self.coursedir)
        for path in paths:
            name = os.path.basename(path)
            parts = name.rsplit("+", 3)
            when = readable_time(parts[2]) if len(parts) >= 3 else None
            if when is None or not name.isprintable():
                self.log.warning("Not collected: the inbound folder %s has no readable time in its name", shown(name))
                continue
            if not usable_student_id(parts[0]):
                self.log.warning("Not collected: %s names no student the course can grade alone (a pattern, a hidden "
                                 "name, a CSV separator, a leading formula character, or mixed scripts)", shown(name))
                continue
            imitated = lookalike(parts[0], self._students | self._handed_in)
            if imitated:
                self.log.warning("Not collected: the inbound folder %s is named for %s, which looks like the student %s",
                                 shown(name), ascii(parts[0]), shown(imitated))
                continue
            try:
                real_folder = stat.S_ISDIR(os.lstat(path).st_mode)
            except OSError:
                real_folder = False
            if not real_folder:  # nbgrader's copy_files would stop the whole collect on a dangling link
                self.log.warning("Not collected: the inbound entry %s is not a folder", shown(name))
                continue
            impostor = self._impostor(path, parts[0])
            if impostor:
                self.log.warning("Not collected: the inbound folder %s claims to be %s's but belongs to %s "
                                 "(a student hands in under their own name only)", shown(name), shown(parts[0]),
                                 shown(impostor))
                continue
            records.append({"username": parts[0], "filename": name, "timestamp": when})
        by_user: dict[str, list[dict]] = {}
        for record in records:
            by_user.setdefault(record["username"], []).append(record)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for group in by_user.values():
            group = self._sort_by_timestamp(group)
            on_time = [r for r in group if self.duedate is not None and r["timestamp"] <= self.duedate]
            self.src_records.append(on_time[0] if self.before_duedate and on_time else group[0])

    def _impostor(self, path: str, student: str) -> str | None:
        """Who owns a folder of ``inbound/`` named for ``student``, where that account may not hand
        in for ``student``; None where it may. nbgrader's own collect only warns, and takes the
        newest folder, whoever made it. Nobody hands in for a student who is an account here but
        that account. And an account that is itself a student (in the gradebook, or handing in under
        its own name in ``inbound/``, in a folder it made) hands in for itself alone: students who are accounts each keep
        to their own name. Where students share an account, or are no accounts here (that account
        is no student), the name is the only word there is."""
        if not self.check_owner:
            return None
        try:
            owner = os.lstat(path).st_uid
        except OSError:
            return None
        try:
            owner_name = pwd.getpwuid(owner).pw_name
        except KeyError:
            owner_name = None
        try:
            expected = pwd.getpwnam(student).pw_uid
        except KeyError:
            expected = None
        if expected is not None:
            return None if owner == expected else owner_name or f"user id {owner}"
        if owner_name is not None and owner_name in self._students | self._own_names:
            return owner_name
        return None

    @staticmethod
    def _handed_in_by_themselves(paths: list[str]) -> set[str]:
        """The names of ``paths`` (folders of ``inbound/``) that are the account that made the folder."""
        own = set()
        for path in paths:
            name = os.path.basename(path).rsplit("+", 3)[0]
            try:
                if os.lstat(path).st_uid == pwd.getpwnam(name).pw_uid:
                    own.add(name)
            except (KeyError, OSError):
                continue
        return own

    def do_copy(self, src: str, dest: str, log=None) -> None:
        notebooks = self._notebooks
        copied = copy_submission(src, dest, SubmissionBoundary(parent=self), ignore=self.coursedir.ignore,
                                 first=(*(f"{name}.ipynb" for name in notebooks), "timestamp.txt"))
        refused = self._stamp_check(src, dest, copied) + copied.sentences()  # the flag first, never cut off
        log_refusals(self.log, refused, f"in {shown(os.path.basename(src))}")
        write_record(dest, refused)

    @functools.cached_property
    def _notebooks(self) -> list[str]:
        """The assignment's notebooks, which each copy takes first: read once a collect."""
        return notebook_names(self.coursedir, self.coursedir.assignment_id)

    def _stamp_check(self, src: str, dest: str, copied) -> list[str]:
        """Write ``timestamp.txt`` in nbgrader's own form; the record's line when the stamp is
        earlier than the files' last change by more than :data:`STAMP_SLACK`, else none."""
        claimed = readable_time(read_timestamp_text(dest))
        if claimed is None:
            parts = os.path.basename(src).rsplit("+", 3)
            claimed = readable_time(parts[2]) if len(parts) >= 3 else None
        if claimed is not None:  # always in nbgrader's own form: nothing of the student's text is kept
            with open(os.path.join(dest, "timestamp.txt"), "w") as f:
                f.write(canonical_time(claimed))
        claimed_at = claimed.replace(tzinfo=datetime.timezone.utc).timestamp() if claimed else None
        if claimed_at is None or copied.latest_change - claimed_at <= self.STAMP_SLACK:
            return []
        changed = datetime.datetime.fromtimestamp(copied.latest_change, datetime.timezone.utc)
        return [f"submission flagged: timestamp.txt says {claimed.isoformat(' ', 'seconds')} UTC, but the files "
                f"last changed at {changed.isoformat(' ', 'seconds').removesuffix('+00:00')} UTC: a late submission "
                "stamped early? Its late penalty is reckoned from the stamp"]


def install() -> None:
    """Put the bounded converters where nbgrader's apps and API look their converters up."""
    import nbgrader.apps.api as api
    import nbgrader.apps.autogradeapp as autogradeapp
    import nbgrader.apps.generatefeedbackapp as generatefeedbackapp

    autogradeapp.Autograde = api.Autograde = BoundedAutograde
    generatefeedbackapp.GenerateFeedback = api.GenerateFeedback = BoundedGenerateFeedback
