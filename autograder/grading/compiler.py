"""How a grading kernel compiles: correct programs, fast to build, not fast to run.

A grade cell compiles dozens of tiny programs, one per signature a property
tries, and runs each on a handful of values; XLA's CPU backend spends far more
time optimising them than running them. Grading kernels therefore start with
LLVM's optimisations off and XLA's older loop emitters in place of its fusion
emitters, which halves the compile time of a grade cell.

Neither changes what is graded. The HLO a function lowers to, its traces, its
compiles, its cache keys and XLA's algebraic rewrites (``x * mask`` becoming a
select, say) are the same; only the machine code differs, and it computes the
same IEEE operations. The course's tests grade the corpus in-process with XLA's
defaults and in real kernels with these flags, and expect the same points.
"""

from __future__ import annotations

#: Flags for every grading kernel, put ahead of any XLA_FLAGS already set for nbgrader.
XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


def kernel_environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the grading flags put before any XLA_FLAGS it already has."""
    own = env.get("XLA_FLAGS", "").split()
    return {**env, "XLA_FLAGS": " ".join([*XLA_FLAGS, *own])}
