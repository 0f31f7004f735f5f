"""What each property costs on one submission: seconds, JAX traces and compiles, hypothesis examples.

    python -m autograder.tools.bench.probe ASSIGNMENT NOTEBOOK     # prints one JSON object

Run in a fresh process per submission, as a kernel is: the notebook's code cells
run in this process (:func:`autograder.from_notebook`), then every property of
the assignment runs on it the way a grade cell runs it (quietly, each caught on
its own), with a JAX monitoring listener and a hypothesis observability callback
counting what it causes. The grading core is not changed; nothing here is used
when grading.
"""

from __future__ import annotations

import os

# Count examples without hypothesis collecting line coverage for each (which is slow).
os.environ.setdefault("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER", "1")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from contextlib import contextmanager  # noqa: E402

_TRACE = "/jax/core/compile/jaxpr_trace_duration"
_LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
_COMPILE = "/jax/core/compile/backend_compile_duration"


class Counts:
    """JAX compile events and hypothesis test cases seen while active."""

    def __init__(self):
        self.traces = 0  # traces of the student's code (not JAX's own eager work)
        self.compiles = 0  # XLA compilations, eager primitives at a new shape included
        self.compile_seconds = 0.0  # trace + lowering + XLA compile
        self.programs: Counter[str] = Counter()
        self.examples = 0

    def on_jax_event(self, event, duration_secs, **kwargs):
        from autograder.kit.traces import student_traced

        name = kwargs.get("fun_name", "")
        if event == _TRACE and student_traced():
            self.traces += 1
        if event == _COMPILE:
            self.compiles += 1
            self.programs[name] += 1
        if event in (_TRACE, _LOWER, _COMPILE):
            self.compile_seconds += duration_secs

    def on_observation(self, observation):
        if observation.type == "test_case":
            self.examples += 1


@contextmanager
def counting(counts: Counts):
    import jax
    from hypothesis.internal.observability import add_observability_callback, remove_observability_callback

    jax.monitoring.register_event_duration_secs_listener(counts.on_jax_event)
    add_observability_callback(counts.on_observation)
    try:
        yield counts
    finally:
        remove_observability_callback(counts.on_observation)
        jax.monitoring.unregister_event_duration_listener(counts.on_jax_event)


def probe(assignment: str, notebook: str) -> dict:
    """Per-property costs of grading ``notebook``, plus the one-off costs before the first property."""
    start = time.perf_counter()
    import jax  # noqa: F401

    t_jax = time.perf_counter()
    import hypothesis  # noqa: F401

    from autograder import from_notebook
    from autograder.grading.quiet import quiet
    from autograder.grading.registry import properties_of

    t_hypothesis = time.perf_counter()
    with quiet():
        submission = from_notebook(notebook)
    t_load = time.perf_counter()
    props = properties_of(assignment)  # imports the property module
    t_module = time.perf_counter()

    results = []
    for prop in props:
        counts = Counts()
        begin = time.perf_counter()
        with quiet(), counting(counts):
            try:
                prop.run(submission)
                passed = True
            except Exception:  # noqa: BLE001 - a failing property is an outcome here, as in grading
                passed = False
        results.append({
            "property": prop.name,
            "group": prop.group,
            "passed": passed,
            "seconds": time.perf_counter() - begin,
            "traces": counts.traces,
            "compiles": counts.compiles,
            "compile_seconds": counts.compile_seconds,
            "examples": counts.examples,
            "programs": len(counts.programs),
        })
    return {
        "assignment": assignment,
        "notebook": notebook,
        "import_jax_seconds": t_jax - start,
        "import_hypothesis_autograder_seconds": t_hypothesis - t_jax,
        "run_notebook_cells_seconds": t_load - t_hypothesis,
        "import_property_module_seconds": t_module - t_load,
        "properties": results,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    report = probe(*argv)
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
