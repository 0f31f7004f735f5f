"""Where grading computes: the JAX platform of the grading kernels and of the judge, the course's choice.

By default a grading kernel computes on the CPU, whatever accelerator the grading host has: its
environment gets ``JAX_PLATFORMS=cpu`` (:func:`kernel_env`), so a grade is the same on a laptop, a
GPU server or a TPU host. An instructor chooses otherwise in ``course_config.py``::

    c.ConfinedKernelManager.jax_platforms = "tpu"   # or "cuda"; "" leaves JAX its own choice

The judge (nbgrader's process, :mod:`autograder.grading.judge`) computes its expected values on the
same choice (:func:`choose` pins this process's JAX before it starts a backend, and says in the log
when it has started one already), and the graders' tolerances come from the float32 precision of the
platform the course chose (:mod:`autograder.kit.precision` measures it here, in nbgrader's process),
never from anything a kernel says: a kernel is the student's, and could claim a loose platform.

Nothing here imports nbgrader, and JAX only when a choice is pinned. docs/accelerators.md says why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

#: The variable JAX reads for its platforms when it is imported.
ENV = "JAX_PLATFORMS"
#: Where grading computes unless the course says otherwise.
DEFAULT = "cpu"

log = logging.getLogger(__name__)

#: The course's choice in this process, once said (:func:`choose`); None: never said here (grading
#: in-process, ``tests/test_graders.py`` and ``python -m autograder device-check``: JAX's own choice).
_chosen: str | None = None


def with_host(platforms: str) -> str:
    """``platforms`` as JAX is given them: the host's CPU after the chosen ones where they leave it out
    ("tpu" -> "tpu,cpu"). JAX makes the first platform listed the default, so the accelerator still
    computes everything; the CPU is there for what runs on the host, as on any student's machine:
    without it ``jax.pure_callback`` fails ("failed to find a local CPU device to place the inputs on",
    a corpus file on the lent TPU, docs/accelerators.md). ``""`` stays JAX's own choice."""
    names = [p.strip() for p in platforms.split(",") if p.strip()]
    if names and "cpu" not in (p.lower() for p in names):
        names.append("cpu")
    return ",".join(names)


def kernel_env(env: Mapping[str, str], platforms: str | None = DEFAULT) -> dict[str, str]:
    """``env`` (a grading kernel's, or a child's that computes as one) with the course's choice of
    platform: ``JAX_PLATFORMS`` from ``platforms`` (:func:`with_host`); for ``""`` (or None), ``env`` as
    it is, JAX's own choice."""
    chosen = dict(env)
    if platforms and platforms.strip():
        chosen[ENV] = with_host(platforms)
    return chosen


def choose(platforms: str | None, logger: logging.Logger | logging.LoggerAdapter = log) -> None:
    """The course computes on ``platforms`` (``""``: JAX's own choice): the judge's JAX is pinned to it
    now, unless this process's JAX has started a backend already, which a line in the log then says
    (its expected values are computed there; the tolerances allow for the worse of the two)."""
    global _chosen
    platforms = with_host(platforms or "")
    if _chosen == platforms:
        return
    _chosen = platforms
    if platforms:
        _pin(platforms, logger)


def chosen() -> str | None:
    """The course's choice in this process (``""``: JAX's own), or None where none was said."""
    return _chosen


def _pin(platforms: str, logger) -> None:
    import jax
    from jax._src import xla_bridge

    if not xla_bridge.backends_are_initialized():
        jax.config.update("jax_platforms", platforms)
        return
    running = jax.default_backend()
    if _canonical(running) != _canonical(platforms.split(",")[0]):  # the first listed is JAX's default
        logger.warning(
            "autograder: the course grades on %r (c.ConfinedKernelManager.jax_platforms) and its kernels compute "
            "there, but JAX in this process started its %s backend before the choice could be pinned: the judge "
            "computes its expected values on %s; the tolerances allow for the worse of the two platforms",
            platforms, running, running)


def _canonical(platform: str) -> str:
    platform = platform.strip().lower()
    return "gpu" if platform in ("cuda", "rocm", "gpu") else platform


def devices():
    """The devices whose precision the graders allow for: the first of the course's chosen platform
    (where the kernels compute), and this process's default device (where the judge's own JAX computes
    expected values), once each; the default device alone where no choice was said or it is JAX's own."""
    import jax

    found = []
    if _chosen:
        for platform in _chosen.split(","):
            try:
                found.append(jax.devices(platform.strip())[0])
                break
            except RuntimeError:
                continue
        else:
            log.warning("autograder: no %r device in this process to measure the course's precision on; "
                        "measuring its default device", _chosen)
    default = jax.devices()[0]
    if default not in found:
        found.append(default)
    return found
