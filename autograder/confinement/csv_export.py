"""``nbgrader export`` as proper CSV: :class:`QuotedCsvExport` (``c.ExportApp.plugin_class``).

nbgrader's ``CsvExportPlugin`` joins each row's fields with ``","`` unquoted. A student id, a name
or an e-mail address holding a comma or a line break adds columns or rows: a student who handed in
as ``rt3mal,,,,10.0,0.0,10.0,10.0`` wrote a row of their own with full marks, and moved a classmate's
score out of its column. A field starting with ``=`` (``=HYPERLINK(...)``) is a formula to the
spreadsheet that opens the file. The course refuses such ids at collect and autograde
(:mod:`autograder.confinement.student_ids`), and this export holds whatever the gradebook still
holds (a name typed in formgrader, a gradebook of an earlier run): the same rows and columns as
nbgrader's, written by Python's ``csv`` module (every field that needs it quoted), each text field
that a spreadsheet would read as a formula led by an apostrophe, as OWASP's advice for CSV
injection has it.
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.confinement.student_ids import FORMULA_STARTS as _FORMULA

#: nbgrader's columns, in its order.
COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
           "raw_score", "late_submission_penalty", "score", "max_score")
#: What starts a formula in a spreadsheet (a tab or carriage return before one is skipped by some).
FORMULA_STARTS = (*_FORMULA, "\t", "\r")


def neutral(value) -> str:
    """``value`` as a CSV field no spreadsheet runs: a number as it is, a text that could start a
    formula behind an apostrophe; nothing (None) as an empty field."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class QuotedCsvExport(CsvExportPlugin):
    """nbgrader's CSV export (the same ``--to``, ``--student`` and ``--assignment``), quoted."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(COLUMNS)
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    out.writerow([neutral(v) for v in self._row(gradebook, assignment, student)])

    @staticmethod
    def _row(gradebook: Gradebook, assignment, student) -> list:
        """One row as nbgrader's export makes it: a student without a submission scores 0."""
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:
            timestamp, raw, penalty, score = "", 0.0, 0.0, 0.0
        else:
            timestamp, raw, penalty = submission.timestamp, submission.score, submission.late_submission_penalty
            score = max(0.0, raw - penalty)
        return [assignment.name, assignment.duedate, timestamp, student.id, student.last_name, student.first_name,
                student.email, raw, penalty, score, assignment.max_score]
