"""What a property module imports, and all it imports from the course.

    from autograder.kit import prop, PropertyFailure, VALUES, render, SignatureAudit

- declaring a property: :func:`prop` (its grade-cell group, points, title, hint);
- failing one: :class:`PropertyFailure` (problem, example, got, expected),
  :class:`CallRaised` (a student's function raised), :class:`Retraced`;
- hypothesis: the :data:`VALUES` and :data:`TRACES` settings, bounded strategies
  (:func:`float32_values`, :func:`vectors`, :data:`GARBAGE`, :data:`SHAPES`);
- numbers: :func:`scalar`, :func:`close`, :func:`op_by_op` (the mathematics as written,
  no compiler rewrite), :func:`first_failure` (a search over JAX's stateful caches);
- a second call at the same shapes: :func:`other_values` (every number changed) and
  :data:`BAKED` (the feedback sentence for a value baked in while tracing);
- evidence from JAX's own events: :class:`TraceLog`, :func:`traces_during`,
  :class:`SignatureAudit` (jitted, judged by what it does), :func:`clear_cache_of`,
  :func:`signature_of`, :func:`student_traced`;
- compiles, a different event from traces: :class:`CompileLog`, :func:`compiles_during`,
  :func:`student_compiled`;
- host reads (device-to-host conversions, which ``transfer_guard`` misses on CPU):
  :class:`HostReads`, :func:`conversion_under_trace`, :func:`spoken`;
- :mod:`render`: inputs and results in plain words for feedback; :mod:`drawn`: an order drawn once per
  notebook (``drawn.rng(submission.notebook_memo)``), the same at every regrade;
- submodules for one kind of evidence each: :mod:`autograder.kit.jaxprs` (equation counts of a
  staged computation, sub-jaxprs found by type), :mod:`autograder.kit.cache_log` (JAX's own
  cache-miss explanations, captured live) and :mod:`autograder.kit.compile_log` (JAX's compile log of
  the grader's own sessions, with what JAX did in them, and a reading of a captured text);
- :mod:`autograder.kit.programs`: functions a property hands to a student's function, built from
  a description that can travel to a kernel judged from outside.

See ``docs/authoring.md`` for how to write a property that is sound.
"""

from autograder.grading import drawn, render
from autograder.grading.registry import prop
from autograder.grading.results import CallRaised, PropertyFailure
from autograder.kit.checks import BAKED, close, first_failure, op_by_op, other_values, scalar
from autograder.kit.compiles import CompileLog, compiles_during, student_compiled
from autograder.kit.host_reads import HostReads, conversion_under_trace, spoken
from autograder.kit.settings import TRACES, VALUES
from autograder.kit.strategies import GARBAGE, SHAPES, float32_values, vectors
from autograder.kit.traces import (
    Retraced,
    SignatureAudit,
    TraceLog,
    clear_cache_of,
    signature_of,
    student_traced,
    traces_during,
)

__all__ = [
    "BAKED", "CallRaised", "drawn", "CompileLog", "HostReads", "compiles_during", "conversion_under_trace", "spoken", "student_compiled", "GARBAGE", "PropertyFailure", "Retraced", "SHAPES", "SignatureAudit", "TRACES", "TraceLog",
    "VALUES", "clear_cache_of", "close", "first_failure", "float32_values", "op_by_op", "other_values", "prop", "render",
    "scalar", "signature_of", "student_traced", "traces_during", "vectors",
]
