"""The tolerance rule (docs/accelerators.md), held on a CPU, and where grading computes.

Every numerical comparison of the graders and of the self-check allows today's tolerance, widened by
``PROPAGATION`` times the backend's measured float32 error beyond ``BASELINE`` (4 ulp): elementwise,
plus a default-precision matrix product's for values that went through matrix products. Here: on this
CPU the excess is 0 and every tolerance is exactly today's; with a TPU v5e's figures (its float32 ``log``
1.05e-4 off, a matrix product in one bfloat16 pass) an answer carrying that error passes and one
beyond it fails. And a grading kernel computes on the CPU unless the course chooses otherwise.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.grading import backend
from autograder.kit import checks, precision
from autograder.public import runner

#: A TPU v5e with JAX 0.10.2 (issue 54): float32 log off by up to 1.05e-4; a 4x3 @ 3x3 product at
#: default precision in one bfloat16 pass (2**-8 of the terms' sizes).
TPU = runner.Precision(1.05e-4, 2.0 ** -8, "tpu (synthetic: issue 54's figures)")


@pytest.fixture
def on(monkeypatch):
    """Grade (kit) and self-check (runner) as if on a backend of the given precision."""
    def use(measured):
        monkeypatch.setattr(precision, "_override", measured)
        monkeypatch.setattr(runner, "precision", lambda: measured)
        return measured
    return use


def _today_kit(got, expected, magnitude):
    """kit.checks.close before issue 54."""
    if math.isnan(expected):
        return math.isnan(got)
    if math.isinf(expected):
        return got == expected
    return math.isfinite(got) and abs(got - expected) <= 1e-5 * (abs(magnitude) + 1.0) + 1e-6 * abs(expected)


# ------------------------------------------------------------------------------------ this CPU


def test_this_cpu_delivers_float32_within_the_baseline():
    measured = precision.measured()
    assert measured.elementwise <= runner.BASELINE and measured.products <= runner.BASELINE, measured
    assert measured.elementwise <= 3 * runner.ULP, measured  # about 1 ulp: a CPU's transcendentals
    assert precision.excess() == precision.excess(products=True) == 0.0


def test_the_graders_and_the_self_check_measure_alike():
    kit, public = precision.measured(), runner.precision()
    assert (kit.elementwise, kit.products) == (public.elementwise, public.products)
    assert precision.Precision is runner.Precision and precision.BASELINE == runner.BASELINE


CASES = [(1.0, 1.0, 1.0), (1.0 + 1.5e-5, 1.0, 1.0), (1.0 + 2.5e-5, 1.0, 1.0), (5.0001, 5.0, 5.0),
         (5.0002, 5.0, 5.0), (-3.0, -3.00001, 10.0), (0.0, 1e-6, 0.0), (2.0, 1.0, 1.0), (float("nan"), 1.0, 1.0),
         (float("inf"), float("inf"), 1.0), (1.0, float("nan"), 1.0), (100.00012, 100.0, 0.0)]


@pytest.mark.parametrize("got, expected, magnitude", CASES)
def test_on_this_cpu_every_tolerance_is_todays(got, expected, magnitude):
    assert checks.close(got, expected, magnitude) == _today_kit(got, expected, magnitude)
    assert checks.close(got, expected, magnitude, products=True) == _today_kit(got, expected, magnitude)
    for rtol, atol in ((1e-5, 1e-6), (1e-4, 1e-5), (0, 0), (2e-5, 4e-5)):
        today = bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
        assert runner.close(got, expected, rtol, atol) == today
        assert runner.close(got, expected, rtol, atol, products=True) == today
        assert precision.allclose(got, expected, rtol, atol, products=True, equal_nan=True) == today


# ------------------------------------------------------------------------------------ the rule


def _padded_loss(values, log=np.log):
    """A loss through float32 log terms, like padded_masking's Part C: (mean of log(v)) over real rows."""
    return float(np.mean([log(v) for v in values]))


def test_an_answer_carrying_the_backends_error_passes_and_one_beyond_it_fails(on):
    """padded_masking's explicit example (real rows 0.75, 12, 5): each log term off by the TPU's error
    passes the graders and the self-check on the TPU's precision, and fails on a CPU's; the same answer
    pushed past the widened tolerance fails on both."""
    values = [0.75, 12.0, 5.0]
    expected = _padded_loss(values)
    magnitude = sum(abs(math.log(v)) for v in values)
    off_by_tpu = _padded_loss(values, lambda v: math.log(v) + TPU.elementwise * max(abs(math.log(v)), 1.0))
    assert not checks.close(off_by_tpu, expected, magnitude), "a CPU's tolerance already allowed it"
    assert not runner.close(off_by_tpu, expected)
    on(TPU)
    assert checks.close(off_by_tpu, expected, magnitude)
    assert runner.close(off_by_tpu, expected)
    allowed = 1e-5 * (magnitude + 1) + 1e-6 * abs(expected) + TPU.excess() * (magnitude + 1 + abs(expected))
    beyond = expected + 1.01 * allowed
    assert not checks.close(beyond, expected, magnitude)
    assert not runner.close(expected + 1.01 * (1e-6 + TPU.excess() + (1e-5 + TPU.excess()) * abs(expected)), expected)


def test_a_matrix_product_in_one_bfloat16_pass_passes_only_where_said(on):
    """host_sync's step through `jax.jacfwd` (a 4x3 @ 3x3 product): 2.0e-3 off on the TPU. Allowed where
    the comparison says its values went through matrix products, not elsewhere, and not on a CPU."""
    theta = np.array([0.5, -0.25, 1.0])
    x = np.arange(12.0).reshape(4, 3) / 12
    y = np.array([1.0, -1.0, 0.5, 2.0])
    expected = theta - 0.1 * (2 / 4) * x.T @ (x @ theta - y)
    got = expected + np.array([2.0e-3, -1.5e-3, 0.0])
    scale = float(np.abs(expected).max())
    hs = pytest.importorskip("autograder.properties.test_host_sync")
    assert not hs._close(got, expected, scale, products=True)
    on(TPU)
    assert hs._close(got, expected, scale, products=True)
    assert runner.close(got, expected, products=True)
    assert not hs._close(got, expected, scale), "an elementwise comparison gets no matrix allowance"
    assert not runner.close(got, expected)
    extra = TPU.excess(products=True)
    beyond = expected + 1.01 * (2e-5 * (1 + scale) + extra * (1 + scale) + (2e-5 + extra) * np.abs(expected))
    assert not hs._close(beyond, expected, scale, products=True)


def test_wrong_answers_stay_wrong_on_the_tpus_precision(on):
    """What the corpus's wrong files get wrong is far beyond any backend's rounding: the loss after the
    update, a sum for a mean, a padded row counted, each fails on the TPU's precision too."""
    on(TPU)
    values = [0.75, 12.0, 5.0]
    magnitude = sum(abs(math.log(v)) for v in values)
    expected = _padded_loss(values)
    assert not checks.close(expected * 3, expected, magnitude)  # a sum for a mean
    assert not checks.close(expected + 1.0, expected, magnitude)  # a zero row's (0 + 1) ** 2 counted
    hs = pytest.importorskip("autograder.properties.test_host_sync")
    theta, x, y = np.array([0.5, -0.25, 1.0]), np.arange(12.0).reshape(4, 3) / 12, np.array([1.0, -1.0, 0.5, 2.0])
    step = theta - 0.1 * (2 / 4) * x.T @ (x @ theta - y)
    assert not hs._close(theta - 0.1 * x.T @ (x @ theta - y) * 2, step, 1.0, products=True)  # the sum's gradient
    loss, after = float(np.mean((x @ theta - y) ** 2)), float(np.mean((x @ step - y) ** 2))
    assert not hs._close(after, loss, loss)  # the loss after the update (a matrix-vector product: no allowance)
    assert not hs._close(theta - 0.75 * (1 / 4) * x.T @ (x @ theta - y), theta - 0.75 * (2 / 4) * x.T @ (x @ theta - y),
                         1.0, products=True)  # the gradient without its 2, at the probe's large lr


def test_a_rounded_result_is_not_the_calls_result_on_any_backend(on, monkeypatch):
    """ledger_extension's rows hold the call's result: rounded to 4 decimals, it is within a TPU's widened
    tolerance of sum(scale * x ** 2), and kept its point on the lent TPU (issue 54). The call's own
    result, computed here by the given program, carries the backend's rounding, so the row is held to it
    unwidened: on the TPU's precision the rounding still fails, and the correct file still passes."""
    from autograder import from_python, run_group
    from autograder.grading import integrity

    on(TPU)
    monkeypatch.setattr(integrity, "_baseline", None)  # graded as a kernel started on the TPU, not patched since
    corpus = Path(__file__).parent / "corpus" / "ledger_extension"
    failed = {}
    for name in ("student_r3_rounded_result", "correct"):
        report = run_group("ledger_extension", "rows", from_python(corpus / f"{name}.py"))
        failed[name] = {r.prop.name for r in report.results if not r.passed}
    assert failed == {"student_r3_rounded_result": {"rows_record_results"}, "correct": set()}


def test_an_exact_contract_stays_exact(on):
    on(TPU)
    assert not runner.close(1.0 + 2 ** -20, 1.0, rtol=0, atol=0)
    assert precision.widened(0, 0, products=True) == (0, 0)


# ------------------------------------------------------------------------------- where grading computes


@pytest.fixture
def kernel_env(monkeypatch):
    """The environment ConfinedKernelManager gives a kernel (no kernel started), on a host whose
    instructor's environment names an accelerator (JAX_PLATFORMS=tpu, kept by the course's names)."""
    from jupyter_core.utils import run_sync
    from traitlets.config import Config

    from autograder.confinement import kernel_manager

    pinned = []
    monkeypatch.setattr(backend, "_pin", lambda platforms, logger: pinned.append(platforms))
    monkeypatch.setattr(backend, "_chosen", None)
    monkeypatch.setattr(kernel_manager, "can_confine", lambda: False)
    monkeypatch.setattr(kernel_manager.ConfinedKernelManager, "announce", lambda self, cmd, server: None)
    monkeypatch.setenv("JAX_PLATFORMS", "tpu")

    def start(**settings):
        config = Config()
        config.ConfinedKernelManager.allow_unconfined = True
        config.ConfinedKernelManager.kernel_environment_names = ["JAX_PLATFORMS"]
        for name, value in settings.items():
            setattr(config.ConfinedKernelManager, name, value)
        manager = kernel_manager.ConfinedKernelManager(config=config)
        try:
            _, kw = run_sync(manager._async_pre_start_kernel)()
        finally:
            manager.cleanup_connection_file()
            manager._close_streams()
        return kw["env"], list(pinned)
    return start


def test_a_grading_kernel_computes_on_the_cpu_by_default(kernel_env):
    env, pinned = kernel_env()
    assert env["JAX_PLATFORMS"] == "cpu"
    assert pinned == ["cpu"] and backend.chosen() == "cpu", "the judge computes where the kernels do"


def test_a_grading_kernel_computes_where_the_course_chose(kernel_env):
    env, pinned = kernel_env(jax_platforms="tpu,cpu")
    assert env["JAX_PLATFORMS"] == "tpu,cpu" and pinned == ["tpu,cpu"]


def test_an_accelerator_chosen_alone_gets_the_hosts_cpu_after_it(kernel_env):
    """A course that says "tpu": the TPU is JAX's default (listed first) and the CPU is there for host
    callbacks; with JAX_PLATFORMS=tpu alone, jax.pure_callback fails on the TPU (docs/accelerators.md)."""
    env, pinned = kernel_env(jax_platforms="tpu")
    assert env["JAX_PLATFORMS"] == "tpu,cpu" and pinned == ["tpu,cpu"]
    assert backend.with_host("cuda") == "cuda,cpu" and backend.with_host("cpu") == "cpu"
    assert backend.with_host("") == ""


def test_an_empty_choice_leaves_jax_its_own(kernel_env):
    env, pinned = kernel_env(jax_platforms="")
    assert env["JAX_PLATFORMS"] == "tpu" and pinned == []  # what kernel_environment_names kept


def test_the_judge_cannot_be_moved_once_its_jax_has_started(monkeypatch, caplog):
    """Its backend started (this process's CPU), a choice of another platform is said in the log and
    changes nothing here; the tolerances then allow for the worse of the two."""
    import jax

    jax.devices()
    monkeypatch.setattr(backend, "_chosen", None)
    backend.choose("tpu")
    assert "before the choice could be pinned" in caplog.text
    assert jax.default_backend() == "cpu"
    monkeypatch.setattr(backend, "_chosen", None)


def test_a_forked_kernel_follows_its_own_environment_not_its_servers():
    """The fork server imported JAX with its own JAX_PLATFORMS; a kernel forked from it computes where
    its own environment says (the parallel command's shared server is started without the course's)."""
    probe = ("import json, os, jax\nfrom autograder.confinement import forkserver\n"
             "os.environ['JAX_PLATFORMS'] = 'cpu'\nforkserver._follow_jax_environment()\n"
             "print(json.dumps([jax.config.jax_platforms, jax.devices()[0].platform]))")
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["cpu", "cpu"]


def test_the_device_check_names_what_it_lacks_before_grading(monkeypatch, capsys, tmp_path):
    """The lent TPU machine had no flatbuffers: every host_sync trainer property failed alike on both of
    its sides, and the table called it a limit of the harness. The check now stops first, naming it."""
    from autograder.tools import device_check

    assert {"hypothesis", "flatbuffers"} <= set(device_check.NEEDS)
    monkeypatch.setattr(device_check, "NEEDS", (*device_check.NEEDS, "no_such_package_on_this_machine"))
    assert device_check.main(assignments=["host_sync"], out=tmp_path) == 2
    assert "no_such_package_on_this_machine not installed" in capsys.readouterr().err
    assert not any(tmp_path.iterdir()), "nothing graded"
