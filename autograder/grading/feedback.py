"""Feedback text: one line per passing property, a short block per failing one.

:func:`render` is the plain text (a terminal, pytest, the notebook's ``text/plain``);
:func:`render_html` is the same lines for nbgrader's feedback and formgrader pages,
which show a cell's ``text/html`` output in preference to its text. Plain text there
would be a ``<pre>`` that never wraps, so a long ``Problem:`` or ``Hint:`` runs out of
the output box and is cut off; the HTML wraps each line inside the box, continuing
under the text after its label (a hanging indent), and never breaks a line in the
text itself, so what a grader reads and what a search finds stay whole sentences.
"""

from __future__ import annotations

import html
import re

from autograder.grading.results import GroupReport, PropertyResult

_LABELS = (("Problem", "problem"), ("Example", "example"), ("Got", "got"), ("Expected", "expected"))


def render(report: GroupReport) -> str:
    lines = [f"{report.assignment} / {report.group}: {_points(report.earned)} of {_points(report.possible)} points"]
    lines.extend(f"  NOTE  {note}" for note in getattr(report, "notice", "").split("\n") if note)
    for result in report.results:
        lines.extend(_render_result(result))
    return "\n".join(lines)


def _render_result(result: PropertyResult) -> list[str]:
    prop = result.prop
    if result.passed:
        return [f"  PASS  {prop.title} ({_points(prop.points)} of {_points(prop.points)})"]
    lines = [f"  FAIL  {prop.title} (0 of {_points(prop.points)})"]
    failure = result.failure
    for label, attribute in _LABELS:
        text = getattr(failure, attribute, "")
        if text:
            lines.append(f"        {label + ':':<10}{_field(text)}")
    lines.append(f"        {'Hint:':<10}{prop.hint}")
    return lines


#: A field's most characters and lines: a failure may quote what the student's code returned.
FIELD_CHARACTERS, FIELD_LINES = 4000, 40
#: Where a field's text starts on its line, and so where each of its later lines starts: inside the field,
#: never at a property's or a group's place (a returned string holding "\n  PASS  ..." stays the field's).
_FIELD_INDENT = " " * 18


def _field(text) -> str:
    """A field's text within :data:`FIELD_CHARACTERS` and :data:`FIELD_LINES`, each line after its first
    indented under the first: no line of it can read as a property's, a group's or a label's."""
    text = str(text)
    lines = text.splitlines() or [""]
    cut = len(lines) > FIELD_LINES or len(text) > FIELD_CHARACTERS
    lines = lines[:FIELD_LINES]
    kept, size = [], 0
    for line in lines:
        if size + len(line) > FIELD_CHARACTERS:
            kept.append(line[:max(0, FIELD_CHARACTERS - size)])
            break
        kept.append(line)
        size += len(line) + 1
    if cut:
        kept[-1] += f" ... (cut: {len(text)} characters in all)"
    return ("\n" + _FIELD_INDENT).join(kept)


def _points(value: float) -> str:
    return f"{value:g}"


#: Where a line's text starts: after ``  PASS  `` / ``  FAIL  `` or after a label.
_HANGING = re.compile(r"^(  (?:PASS|FAIL|NOTE) {2}| {8}[A-Z][a-z]+: *)")
_MARK = re.compile(r"^(  )(PASS|FAIL|NOTE)( )")
#: Per line, not on the box: the newlines between the line ``<div>``s must not show as blank lines.
_LINE_STYLE = "margin:0;white-space:pre-wrap;overflow-wrap:anywhere;padding-left:{indent}ch;text-indent:-{indent}ch"
_BOX_STYLE = (
    "font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:13px;line-height:1.4;color:#000;"
    "background:#f7f7f7;border:1px solid #cfcfcf;border-radius:2px;padding:0.4em 0.6em;"
    "box-sizing:border-box;max-width:100%;overflow-wrap:anywhere"
)
_COLOURS = {"PASS": "#1a7f37", "FAIL": "#b42318", "NOTE": "#9a6700"}


def render_html(report: GroupReport) -> str:
    """The lines of :func:`render`, one ``<div>`` per line on a line of its own.

    Each line of the markup holds exactly one line of the text (tags aside), so a
    line-by-line scrub of the markup (``ScrubGraderSource``) sees what a reader sees.
    """
    return html_of(render(report))


def html_of(text: str) -> str:
    """Feedback text as :func:`render_html` shows it."""
    out = ['<div class="autograder-feedback" style="' + _BOX_STYLE + '">']
    for line in text.split("\n"):
        out.append(_html_line(line))
    out.append("</div>")
    return "\n".join(out)


def _html_line(line: str) -> str:
    found = _HANGING.match(line)
    indent = len(found.group(1)) if found else 0
    body = html.escape(line, quote=False) or "&#8203;"
    mark = _MARK.match(body)
    if mark:
        word = mark.group(2)
        body = (f"{mark.group(1)}<b style=\"color:{_COLOURS[word]}\">{word}</b>{mark.group(3)}"
                + body[mark.end():])
    return f'<div style="{_LINE_STYLE.format(indent=indent)}">{body}</div>'
