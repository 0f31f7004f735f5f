"""Hostile entries of repair_clinic: what a red-team helper that read the graders got through (issue 52).

Each keeps the slow behaviour of one part and hides it from the evidence the graders read, through a
real ``nbgrader autograde``; each must lose that part's behaviour point and nothing else:

- ``checkpoint-hides-retraces``: a jit made per scaler (the colleague's defect), called inside an eager
  ``jax.checkpoint``. A jit traced inside another transformation's trace fires no trace event, and a
  small top-level jit supplies the one trace a first call must show: the scale part kept both points,
  until the audit counted the student's compiles beside its traces;
- ``waits-through-an-alias``: ``from jax import block_until_ready``, called on every step's pair.
  ``jax.block_until_ready`` waits for several arrays at once in C++, past the patched method, and an
  alias taken before grading escaped a patch of the ``jax`` module's attribute: now the C++ function is
  wrapped where JAX calls it.

The other attacks of that review are corpus files (``tests/corpus/repair_clinic/redteam_*.py``), graded
in-process; what it found and was left open is in docs/literal-student.md.
"""

from __future__ import annotations

from .model import RC, Hostile, points
from .notebooks import replace

CHECKPOINT_SCALER = """\
@jax.jit
def _tanh(v):
    return jnp.tanh(v)


def make_scaler(scale):
    multiply = jax.jit(lambda v: v * scale)
    return lambda x: _tanh(jax.checkpoint(multiply)(x))
"""

WAITS_THROUGH_ALIAS = """\
from jax import block_until_ready


@jax.jit
def _step_and_loss(theta, x, y, lr):
    return theta - lr * jax.grad(loss)(theta, x, y), loss(theta, x, y)


def train(theta, batches, lr):
    losses = []
    for x, y in batches:
        theta, value = block_until_ready(_step_and_loss(theta, x, y, lr))
        losses.append(value)
    return theta, jnp.stack(losses)
"""

ENTRIES: tuple[Hostile, ...] = (
    Hostile("checkpoint-hides-retraces", RC, (replace("make_scaler", CHECKPOINT_SCALER),),
            points(RC, test_scale=1), feedback=r"repair_clinic / scale: 1 of 2 points"),
    Hostile("waits-through-an-alias", RC, (replace("train", WAITS_THROUGH_ALIAS),),
            points(RC, test_train=1), feedback=r"`jax\.block_until_ready\(\.\.\.\)`"),
)
