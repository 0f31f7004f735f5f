"""Hypothesis settings for grading: reproducible, silent, no files written.

Same submission, same examples, same feedback: derandomized search, no example
database, no wall-clock deadline (the first call at a new shape compiles for
~50 ms), no file written into the working folder, and no constants mined from
the modules the process happens to have loaded.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.internal.conjecture import providers as _providers

from autograder.confinement.leftovers import private_folder

# Hypothesis also caches to ``.hypothesis/`` in the working folder, which under
# autograde is the student's folder. Keep its scratch files in a private temp dir,
# removed at exit, or by a later process where this one was killed outright.
HOME = private_folder("hypothesis")
set_hypothesis_home_dir(HOME)

# Hypothesis also favours numbers and strings it finds in the source of every
# "local" module loaded (outside site-packages and the standard library). Which
# those are differs between a kernel (the grader's files are hidden, a student
# may write and import a module of their own) and the test suite, so the very
# same submission would meet other examples. Mine none. (No public switch exists:
# this replaces the one private function that collects them, if it is there.)
if hasattr(_providers, "_get_local_constants"):
    _providers._get_local_constants = lambda: _providers._local_constants

_COMMON = dict(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    report_multiple_bugs=False,
    verbosity=Verbosity.quiet,
    suppress_health_check=list(HealthCheck),
)

#: Pure numerical properties: search, then shrink to the smallest failing input.
VALUES = settings(max_examples=25, **_COMMON)

#: Trace properties read JAX's caches, which outlive an example, so a failure
#: may not replay; they report the first failing sequence instead of shrinking.
TRACES = settings(max_examples=12, phases=(Phase.explicit, Phase.generate), **_COMMON)
