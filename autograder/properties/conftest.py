"""Run the property modules under plain pytest against one submission.

    pytest autograder/properties/test_static_max_mode.py --submission path/to/notebook.ipynb

A ``.py`` file works too. Failures show the same sentences the feedback shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import from_notebook, from_python


def pytest_addoption(parser):
    parser.addoption("--submission", action="store", default=None, help="notebook (.ipynb) or Python file to grade")


@pytest.fixture(scope="session")
def submission(request):
    path = request.config.getoption("--submission")
    if path is None:
        pytest.skip("no --submission given: pass the notebook or Python file to grade")
    path = Path(path)
    return from_notebook(path) if path.suffix == ".ipynb" else from_python(path)
