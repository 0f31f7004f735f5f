"""Feedback text: one line per passing property, a short block per failing one."""

from __future__ import annotations

from autograder.grading.results import GroupReport, PropertyResult

_LABELS = (("Problem", "problem"), ("Example", "example"), ("Got", "got"), ("Expected", "expected"))


def render(report: GroupReport) -> str:
    lines = [f"{report.assignment} / {report.group}: {_points(report.earned)} of {_points(report.possible)} points"]
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
            lines.append(f"        {label + ':':<10}{text}")
    lines.append(f"        {'Hint:':<10}{prop.hint}")
    return lines


def _points(value: float) -> str:
    return f"{value:g}"
