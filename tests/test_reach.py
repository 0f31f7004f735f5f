"""Which code cells reach into the grader (autograder.grading.reach): each construct is seen, in
the forms a student would hide it in, and no honest submission of the corpus is flagged."""

from __future__ import annotations

import pytest
from conftest import REPO

from autograder.grading import reach


@pytest.mark.parametrize("source", [
    "import autograder",
    "from autograder.grading import serve",
    "__import__('auto' + 'grader')",
    "import importlib\nm = importlib.import_module('autograder.grading.serve')",
    "import gc\nobjs = gc.get_objects()",
    "import sys\nf = sys._getframe(1)",
    "g = (lambda: 0).__globals__",
    "import sys\nf = getattr(sys, ''.join(map(chr, (95, 103, 101, 116, 102, 114, 97, 109, 101))))(1)",  # _getframe
    "import sys\nf = getattr(sys, chr(95) + 'get' + 'frame')(1)",
    "import sys\nsys.modules['autograder.grading.serve']",
    "import ctypes",
    # the red team's: the module table as a namespace, names spelled backwards, a computed setattr
    "import sys\ntable = vars(sys)[''.join(reversed('seludom'))]",
    "name = ''.join(reversed('rewsna'))\nsetattr(type(obj), name, lambda self, r: r)",
    # the second red team's: what a loop handed to `diagnose` closes over (the grader's steps)
    "def diagnose(loop):\n    return loop.__closure__[0].cell_contents.actions",
    "import inspect\ndef diagnose(loop):\n    return inspect.getclosurevars(loop).nonlocals",
])
def test_each_way_of_reaching_is_flagged(source):
    assert reach.scan_source(source), source


@pytest.mark.parametrize("source", [
    "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(x)",
    "print('the autograder will check this answer for me')",  # prose, not a reference
    "# I read that the autograder uses hypothesis\nx = 1",
    "import functools, time\nstart = time.perf_counter()",
    "import jax.numpy as jnp\ndef choose(x, mode):\n    return getattr(jnp, mode)(x)",  # a name looked up, not set
])
def test_honest_code_is_not_flagged(source):
    assert reach.scan_source(source) == []


def test_no_submission_of_the_corpus_or_the_samples_is_flagged():
    """Every correct and wrong submission written as students write them: none names the grader."""
    import nbformat

    flagged = [path.name for path in sorted((REPO / "tests" / "corpus").rglob("*.py"))
               if reach.scan_source(path.read_text())]
    for path in sorted((REPO / "tests" / "samples").rglob("*.ipynb")):
        memo: dict = {}
        reach.note(nbformat.read(path, as_version=4), memo)
        if reach.findings_of(memo):
            flagged.append(str(path.relative_to(REPO)))
    assert flagged == []
