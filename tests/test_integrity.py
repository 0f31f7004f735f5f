"""Does grading notice a notebook that patched the grader's own objects, and does it judge
a look-alike of a jitted function by what JAX does, not by its class? In-process and fast;
tests/test_hostile.py does the same through real nbgrader kernels.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograder.kit.checks
import autograder.grading.results
from autograder import from_namespace, from_python, grade
from autograder.grading.results import PropertyFailure
from autograder.kit.traces import SignatureAudit, traces_during

CORRECT = Path(__file__).parent / "corpus" / "ledger_extension" / "correct.py"


def _graded(capsys) -> tuple[float, str]:
    """What the hidden ``rows`` cell returns and prints for the correct answer."""
    earned = grade("ledger_extension", "rows", from_python(CORRECT).namespace)
    return earned, capsys.readouterr().out


def _full_marks(report):
    return report.possible


@pytest.mark.parametrize("patch", [
    pytest.param(lambda mp: mp.setattr(autograder.grading.results.GroupReport, "earned", property(_full_marks)),
                 id="class-attribute"),
    pytest.param(lambda mp: mp.setattr(autograder.kit.checks, "close", lambda *args, **kwargs: True), id="module-global"),
    pytest.param(lambda mp: mp.setattr(autograder.kit.checks.close, "__code__", (lambda *a, **k: True).__code__),
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


def test_eager_jax_work_is_not_counted_as_a_trace_of_the_student():
    """Eager jnp calls trace JAX's own small programs, under names no fixed list holds."""
    x = jnp.arange(5.0)

    def eager():
        return jnp.sum(jnp.where(x > 1.0, x * 2.0, jnp.pad(x, (0, 2))[:5])) + jnp.max(jnp.zeros(3))

    jax.clear_caches()  # so every one of those eager programs is traced afresh
    assert traces_during(eager)[1] == 0

    def students(v):
        return jnp.sum(v * 2.0)

    assert traces_during(jax.jit(students), x)[1] == 1


def _double(x):
    return 2.0 * x


_TOP_LEVEL = jax.jit(_double)


class LookAlike:
    """Has jit's `trace` and `lower`, but runs eagerly."""

    def __init__(self):
        self.trace, self.lower = _TOP_LEVEL.trace, _TOP_LEVEL.lower

    def __call__(self, x):
        return _double(x)


def _audit(fn) -> None:
    audit = SignatureAudit(from_namespace({"f": fn}), "f", "")
    audit.require_a_trace("float32[29]", jax.device_put(np.ones(29, np.float32)))
    for values in (np.arange(3.0, dtype=np.float32), np.arange(3.0, dtype=np.float32) + 1, np.ones(4, np.float32)):
        array = jax.device_put(values)
        audit.call(f"float32[{array.shape[0]}]", array)
    audit.finish()


@pytest.mark.parametrize("fn, problem", [
    pytest.param(LookAlike(), "JAX traced none of your code", id="look-alike"),
    pytest.param(_double, "JAX traced none of your code", id="plain-function"),
    pytest.param(lambda x: jax.jit(lambda v: 2.0 * v)(x), "It traces on every call", id="fresh-jit-per-call"),
])
def test_what_is_not_jitted_is_told_by_its_traces(fn, problem):
    with pytest.raises(PropertyFailure, match=problem):
        _audit(fn)


@pytest.mark.parametrize("fn", [
    pytest.param(_TOP_LEVEL, id="jitted"),
    pytest.param(lambda x: _TOP_LEVEL(x), id="plain-wrapper-of-a-top-level-jit"),
])
def test_a_jitted_function_passes_whatever_its_type(fn):
    _audit(fn)


def test_a_jit_of_jax_s_own_function_is_the_student_s_trace():
    """`jax.jit(jnp.sum)` is the student's program, though `jnp.sum` lives in JAX."""
    jax.clear_caches()
    x = jnp.arange(7.0)
    assert traces_during(jax.jit(jnp.sum), x)[1] == 1
    assert traces_during(jnp.sum, x)[1] == 0
