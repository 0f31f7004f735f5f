"""The exchange between students: nobody lists, reads or changes a classmate's submission or feedback.

nbgrader's own exchange (``nbgrader/exchange/default``) leaves each student's work to whoever
learns its name: ``submit`` makes the submission folder in ``inbound/`` mode 0777 and every file
in it 0444, ``release_feedback`` copies each feedback page into ``feedback/`` readable by all, and
``release_assignment`` makes the exchange's top folder 0777 without the sticky bit, so any user may
rename the course's folder there and put one of their own in its place. Only the names are secret:
``inbound/`` cannot be listed, and a submission's name ends in twelve random characters (nbgrader's
issue 978 is the history of that hole). Here a name is not enough:

=================================  =========  =================================================
folder of ``Exchange.root``         mode       who may do what
=================================  =========  =================================================
the exchange itself                 0755       only its owner (the instructor) makes folders in it
``<course>/``, ``outbound/``        0755       everyone reads the released assignments
``inbound/``                        3733       everyone may add a folder; nobody lists it; the
                                               sticky bit: nobody renames or deletes another's;
                                               set-group-ID: a new folder gets the folder's group
a submission in ``inbound/``        0750/0440  its student, and the instructor through the group
``feedback/``                       0711       nobody lists it, nobody but the instructor writes
a feedback page                     0600       its student alone (and the instructor): owned by the
                                               student when the instructor is root, else an ACL
=================================  =========  =================================================

Two sides:

- The instructor's ``release_assignment`` and ``release_feedback`` are :class:`CourseReleaseAssignment`
  and :class:`CourseReleaseFeedback` (``course_config.py`` names them). The release sets the
  modes above, checks that ``inbound/``'s group holds nobody but its owner, warns when students
  cannot reach the exchange, and publishes this very file as ``<course>/course_exchange.py``.
- A student's nbgrader never reads the course's configuration (they run it from their own folder),
  and must never import the grading package (the hidden graders are in it). So this file imports
  nbgrader and the standard library only, and a student loads the published copy as an nbgrader
  configuration file with one line, which ``release_assignment`` prints::

      load_subconfig("/usr/local/share/nbgrader/exchange/jax-tracing/course_exchange.py")

  Students run that file, so only the instructor may write it: the course's folder is theirs
  (nbgrader's release refuses one that is not), and so is the exchange's top folder, 0755, where
  the exchange is the instructor's own (nobody else can make the course's folder there first).
  Loaded so, it sets ``Exchange.root`` (the folder above its own) and the student's ``submit``,
  ``fetch_assignment``, ``fetch_feedback`` and ``list`` (:func:`configure_student`). nbgrader's own
  classes refuse the exchange's 0755 top folder ("Unwritable directory"), so a student without the
  line cannot submit at all, rather than submit into a folder everyone may change.

The submission is made 0700 while it fills, every file and folder in it inherits ``inbound/``'s
group (set-group-ID; a chmod by a student, who is not in that group, would clear the bit, so none
happens until every file is written), then its files become 0440 and its folders 0750. Only
regular files are handed in (a link to a regular file is handed in as its content, as nbgrader
does; anything else is left out with a warning), within nbgrader's ``max_file_size`` and
``max_dir_size``.

Where nbgrader's ``CourseDirectory.groupshared`` is set (several instructors sharing a course
folder through a group) nbgrader's own permissions apply, and the release says so.
"""

from __future__ import annotations

import glob
import grp
import json
import os
import pwd
import secrets
import shlex
import shutil
import stat
import struct

from nbgrader.exchange.default import (
    ExchangeFetchAssignment, ExchangeFetchFeedback, ExchangeList, ExchangeReleaseAssignment,
    ExchangeReleaseFeedback, ExchangeSubmit,
)
from nbgrader.utils import check_directory, ignore_patterns, notebook_hash

#: The name of this file's copy in ``<exchange>/<course>/``, which students load.
PUBLISHED = "course_exchange.py"

ROOT_MODE = 0o755
COURSE_MODE = 0o755
OUTBOUND_MODE = 0o755
INBOUND_MODE = stat.S_ISGID | stat.S_ISVTX | 0o733
FEEDBACK_MODE = 0o711
SUBMISSION_DIR_MODE = 0o750
SUBMISSION_FILE_MODE = 0o440
FEEDBACK_FILE_MODE = 0o600


def student_line(published: str) -> str:
    """The line of a student's nbgrader configuration that loads ``published``."""
    return f"load_subconfig({json.dumps(published)})"


def student_command(published: str) -> str:
    """The shell command that adds :func:`student_line` to a student's ``~/.jupyter/nbgrader_config.py``."""
    return f"mkdir -p ~/.jupyter && echo {shlex.quote(student_line(published))} >> ~/.jupyter/nbgrader_config.py"


def _set_mode(log, path: str, mode: int, why: str, made: bool = False) -> None:
    """Give ``path`` ``mode``; a change to a folder that was there already is a warning."""
    now = stat.S_IMODE(os.stat(path).st_mode)
    if now != mode:
        os.chmod(path, mode)
        (log.info if made else log.warning)("Permissions of %s: %s -> %s (%s)", path, oct(now), oct(mode), why)


# ---------------------------------------------------------------- the instructor's side


class CourseReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release, with the exchange's folders as the module says, and this file published
    for the students."""

    def ensure_root(self):
        if self.coursedir.groupshared:
            self.log.warning("CourseDirectory.groupshared is set: nbgrader's own exchange permissions "
                             "apply, not the course's (autograder/confinement/exchange.py)")
            return super().ensure_root()
        root = self.root
        if not os.path.isdir(root):
            self.log.warning("Creating exchange directory: %s", root)
            try:
                os.makedirs(root)
                os.chmod(root, ROOT_MODE)
            except PermissionError:
                self.fail(f"Could not create {root}, permission denied. Without root, name a folder of "
                          "yours in ~/.jupyter/nbgrader_config.py: c.Exchange.root = '...' (README, Without root)")
            return
        info = os.stat(root)
        if info.st_uid == os.geteuid():
            _set_mode(self.log, root, ROOT_MODE, "only you make folders in the exchange; students load "
                      "the course's exchange to reach it")
        elif info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
            self.fail(f"The exchange {root} is not yours and anyone may rename what is in it (mode "
                      f"{oct(stat.S_IMODE(info.st_mode))}, no sticky bit): name a folder of yours as "
                      "c.Exchange.root (README, Without root)")

    def init_dest(self):
        course = os.path.join(self.root, self.coursedir.course_id)
        there = {name: os.path.isdir(os.path.join(course, name)) for name in ("", "outbound", "inbound")}
        super().init_dest()  # nbgrader: makes course/, outbound/ and inbound/, refuses any not yours
        if self.coursedir.groupshared:
            return
        _set_mode(self.log, self.course_path, COURSE_MODE, "everyone reads, only you write", not there[""])
        _set_mode(self.log, self.outbound_path, OUTBOUND_MODE, "everyone reads, only you write",
                  not there["outbound"])
        _set_mode(self.log, self.inbound_path, INBOUND_MODE, "nobody lists it; nobody renames or deletes "
                  "another's submission; each gets this folder's group", not there["inbound"])
        self._check_group()
        self._check_reachable()
        self.published = self._publish()

    def copy_files(self):
        super().copy_files()
        if not self.coursedir.groupshared:
            self.log.info("Students reach this exchange with one line in their ~/.jupyter/nbgrader_config.py "
                          "(or, for everyone, in the server's /etc/jupyter/nbgrader_config.py); from a shell:\n"
                          "    %s", student_command(self.published))

    def _check_group(self) -> None:
        """Each submission is readable by ``inbound/``'s group (so that an instructor who is not root
        can collect it): that group must hold nobody but its owner."""
        info = os.stat(self.inbound_path)
        me = pwd.getpwuid(os.geteuid()).pw_name
        try:
            group = grp.getgrgid(info.st_gid)
            name, members = group.gr_name, set(group.gr_mem)
        except KeyError:
            name, members = str(info.st_gid), set()
        members |= {p.pw_name for p in pwd.getpwall() if p.pw_gid == info.st_gid}
        others = sorted(members - {me})
        if others:
            self.log.warning("Every submission in %s is readable by its group %s, which also holds %s: "
                             "chgrp that folder to a group of yours alone", self.inbound_path, name,
                             ", ".join(others))

    def _check_reachable(self) -> None:
        path = os.path.abspath(self.root)
        while True:
            if not os.stat(path).st_mode & stat.S_IXOTH:
                self.log.warning("Other users cannot reach the exchange %s: %s is not searchable by them. "
                                 "Fine where you grade alone or every student is you; otherwise name an "
                                 "exchange they can reach (README, Without root)", self.root, path)
                return
            if path == os.path.dirname(path):
                return
            path = os.path.dirname(path)

    def _publish(self) -> str:
        """This file, as ``<course>/course_exchange.py``, replaced only when it changed."""
        dest = os.path.join(self.course_path, PUBLISHED)
        with open(os.path.abspath(__file__), "rb") as f:
            text = f.read()
        try:
            with open(dest, "rb") as f:
                if f.read() == text:
                    os.chmod(dest, 0o644)
                    return dest
        except FileNotFoundError:
            pass
        tmp = f"{dest}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
        self.log.info("Published the course's exchange for students: %s", dest)
        return dest


def _acl_reader_only(fd: int, reader: int) -> None:
    """A POSIX access ACL on ``fd``: its owner rw, ``reader`` r, nobody else anything."""
    undefined = 0xFFFFFFFF
    entries = [(0x01, 6, undefined), (0x02, 4, reader), (0x04, 0, undefined), (0x10, 4, undefined),
               (0x20, 0, undefined)]  # user_obj, user, group_obj, mask, other
    blob = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in entries)
    os.setxattr(fd, "system.posix_acl_access", blob)


class CourseReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, each page readable only by the student who submitted the work
    it grades: the owner of that submission in ``inbound/`` (else the user named like the student)."""

    def init_dest(self):
        super().init_dest()  # nbgrader makes feedback/ 0711 where it is missing
        if not self.coursedir.groupshared:
            _set_mode(self.log, self.outbound_feedback_path, FEEDBACK_MODE, "nobody lists it, only you write")

    def copy_files(self):
        if self.coursedir.groupshared:
            return super().copy_files()
        exclude = set(self.coursedir.student_id_exclude.split(",")) if self.coursedir.student_id_exclude else set()
        unreadable = []
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            feedback_dir, name = os.path.split(html_file)
            notebook_id = name[: -len(".html")]
            student_id = os.path.basename(os.path.dirname(feedback_dir))
            expected = self.coursedir.format_path(self.coursedir.feedback_directory, student_id,
                                                  self.coursedir.assignment_id)
            if os.path.normpath(expected) != os.path.normpath(feedback_dir):
                self.log.error("Could not tell the student of %s", html_file)
                continue
            if student_id in exclude:
                self.log.debug("Skipping student '%s'", student_id)
                continue
            with open(os.path.join(feedback_dir, "timestamp.txt")) as fh:
                timestamp = fh.read()
            with open(os.path.join(feedback_dir, "submission_secret.txt")) as fh:
                secret = fh.read()
            checksum = notebook_hash(secret=secret, notebook_id=notebook_id)
            dest = os.path.join(self.dest_path, f"{checksum}.html")
            self.log.info("Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)", student_id,
                          self.coursedir.course_id, self.coursedir.assignment_id, notebook_id, timestamp)
            reader = self._reader(student_id, timestamp)
            tmp = os.path.join(self.dest_path, f".{checksum}.{secrets.token_hex(4)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FEEDBACK_FILE_MODE)
            try:
                with open(html_file, "rb") as src:
                    shutil.copyfileobj(src, os.fdopen(os.dup(fd), "wb"))
                if not self._give(fd, reader, student_id):
                    unreadable.append(student_id)
            finally:
                os.close(fd)
            os.replace(tmp, dest)
            self.log.info("Feedback released to: %s", dest)
        if unreadable:
            self.fail("Feedback released, but not readable by {}: this filesystem takes no ACLs, and only "
                      "root can give a file to another user. Release feedback as root, or keep the exchange "
                      "on a filesystem with ACLs (ext4, xfs, tmpfs)".format(", ".join(sorted(set(unreadable)))))

    def _reader(self, student_id: str, timestamp: str) -> int | None:
        """The user who submitted the work this feedback grades: the owner of its folder in inbound/."""
        base = f"{student_id}+{self.coursedir.assignment_id}+{timestamp}"
        inbound = os.path.join(self.course_path, "inbound")
        owners = set()
        for path in glob.glob(os.path.join(glob.escape(inbound), glob.escape(base) + "*")):
            name = os.path.basename(path)
            if name == base or name.startswith(base + "+"):
                owners.add(os.lstat(path).st_uid)
        if len(owners) == 1:
            return owners.pop()
        if owners:
            self.log.warning("Several users made a submission named %s: its feedback stays yours alone", base)
            return None
        try:
            return pwd.getpwnam(student_id).pw_uid
        except KeyError:
            self.log.warning("No submission of %s in %s and no user %s: the feedback stays yours alone",
                             base, inbound, student_id)
            return None

    def _give(self, fd: int, reader: int | None, student_id: str) -> bool:
        """Make the page readable by ``reader`` alone (besides this user); False where that cannot be."""
        me = os.geteuid()
        if reader is None or reader == me:
            return True
        if me == 0:
            os.fchown(fd, reader, -1)
            return True
        try:
            _acl_reader_only(fd, reader)
        except OSError as error:
            self.log.error("Could not make the feedback of %s readable by user %d: %s", student_id, reader, error)
            return False
        return True


# ---------------------------------------------------------------- the students' side


class _ReachableRoot:
    """The exchange's top folder is the instructor's alone (0755): a student needs only to reach it."""

    def ensure_root(self):
        if not check_directory(self.root, execute=True):
            self.fail(f"Cannot reach the exchange {self.root}, please contact your instructor.")


class CourseFetchAssignment(_ReachableRoot, ExchangeFetchAssignment):
    pass


class CourseFetchFeedback(_ReachableRoot, ExchangeFetchFeedback):
    pass


class CourseList(_ReachableRoot, ExchangeList):
    pass


class CourseSubmit(_ReachableRoot, ExchangeSubmit):
    """nbgrader's submit, with a submission its student and the instructor alone can read, and
    nobody but its student can change (module docstring)."""

    def copy_files(self):
        self.init_release()
        secret = secrets.token_hex(64)
        dest_path = os.path.join(self.inbound_path, self.assignment_filename)
        if self.add_random_string:
            cache_path = os.path.join(self.cache_path, self.assignment_filename.rsplit("+", 1)[0])
        else:
            cache_path = os.path.join(self.cache_path, self.assignment_filename)
        self.log.info("Source: %s", self.src_path)
        self.log.info("Destination: %s", dest_path)
        self.check_filename_diff()
        self._copy_private(self.src_path, dest_path, {"timestamp.txt": self.timestamp,
                                                      "submission_secret.txt": secret})
        os.makedirs(self.cache_path, exist_ok=True)
        self.do_copy(self.src_path, cache_path)
        for name, text in (("timestamp.txt", self.timestamp), ("submission_secret.txt", secret)):
            with open(os.path.join(cache_path, name), "w") as fh:
                fh.write(text)
        self.log.info("Submitted as: %s %s %s", self.coursedir.course_id, self.coursedir.assignment_id,
                      self.timestamp)

    def _copy_private(self, src: str, dest: str, extra: dict[str, str]) -> None:
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is "
                               f"{1000 * self.coursedir.max_dir_size}")
        ignore = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                 max_file_size=self.coursedir.max_file_size, log=self.log)
        os.mkdir(dest, 0o700)  # gets inbound/'s group and its set-group-ID bit, which every entry inherits
        folders, files = [dest], []
        for here, dirs, names in os.walk(src):
            target = os.path.normpath(os.path.join(dest, os.path.relpath(here, src)))
            ignored = set(ignore(here, dirs + names))
            for d in list(dirs):
                if d in ignored or os.path.islink(os.path.join(here, d)):
                    if d not in ignored:
                        self.log.warning("Not handed in: %s is a link to a folder", os.path.join(here, d))
                    dirs.remove(d)
                    continue
                os.mkdir(os.path.join(target, d), 0o700)
                folders.append(os.path.join(target, d))
            for name in names:
                if name in ignored:
                    continue
                path = os.path.join(here, name)
                if self._copy_file(path, os.path.join(target, name)):
                    files.append(os.path.join(target, name))
        for name, text in extra.items():
            path = os.path.join(dest, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            if path not in files:
                files.append(path)
        for path in files:
            os.chmod(path, SUBMISSION_FILE_MODE)
        for path in reversed(folders):  # the deepest first; each chmod clears set-group-ID: all is written
            os.chmod(path, SUBMISSION_DIR_MODE)

    def _copy_file(self, path: str, dest: str) -> bool:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as error:
            self.log.warning("Not handed in: %s (%s)", path, error.strerror)
            return False
        with os.fdopen(fd, "rb") as src:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self.log.warning("Not handed in: %s is not a regular file", path)
                return False
            out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(out, "wb") as fh:
                shutil.copyfileobj(src, fh)
        return True


def configure_student(c, published: str) -> None:
    """A student's nbgrader configuration ``c``: the exchange this file was published in, and the
    course's classes for what a student does there."""
    c.Exchange.root = os.path.dirname(os.path.dirname(os.path.abspath(published)))
    c.ExchangeFactory.submit = CourseSubmit
    c.ExchangeFactory.fetch_assignment = CourseFetchAssignment
    c.ExchangeFactory.fetch_feedback = CourseFetchFeedback
    c.ExchangeFactory.list = CourseList


if "load_subconfig" in globals() and "get_config" in globals():  # loaded as a configuration file
    configure_student(get_config(), __file__)  # noqa: F821 - traitlets provides get_config there
