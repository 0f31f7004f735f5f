"""Does grading notice a notebook that patched the grader's own objects, or handed in a
look-alike of a jitted function? In-process and fast; tests/test_hostile.py does the
same through real nbgrader kernels.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import pytest

import autograder._checks
import autograder._results
from autograder import from_python, grade
from autograder._traces import is_jitted

CORRECT = Path(__file__).parent / "corpus" / "ledger_extension" / "correct.py"


def _graded(capsys) -> tuple[float, str]:
    """What the hidden ``rows`` cell returns and prints for the correct answer."""
    earned = grade("ledger_extension", "rows", from_python(CORRECT).namespace)
    return earned, capsys.readouterr().out


def _full_marks(report):
    return report.possible


@pytest.mark.parametrize("patch", [
    pytest.param(lambda mp: mp.setattr(autograder._results.GroupReport, "earned", property(_full_marks)),
                 id="class-attribute"),
    pytest.param(lambda mp: mp.setattr(autograder._checks, "close", lambda *args, **kwargs: True), id="module-global"),
    pytest.param(lambda mp: mp.setattr(autograder._checks.close, "__code__", (lambda *a, **k: True).__code__),
                 id="function-code"),
])
def test_patching_the_grader_zeroes_the_group_and_says_what(monkeypatch, capsys, patch):
    assert _graded(capsys)[0] == 2  # before the patch
    patch(monkeypatch)
    earned, shown = _graded(capsys)
    assert earned == 0
    assert "Tampering: the notebook replaced objects the grader relies on (`autograder." in shown
    monkeypatch.undo()
    assert _graded(capsys)[0] == 2


def test_only_what_jax_jit_returns_counts_as_jitted():
    def double(x):
        return 2 * x

    class LookAlike:
        def __init__(self):
            compiled = jax.jit(double)
            self.trace, self.lower = compiled.trace, compiled.lower

        def __call__(self, x):
            return double(x)

    assert is_jitted(jax.jit(double))
    assert is_jitted(functools.partial(jax.jit, static_argnames=("x",))(double))
    assert not is_jitted(LookAlike())
    assert not is_jitted(double)
