"""One pytest module of hypothesis properties per assignment.

Each test takes the ``submission`` fixture (see ``conftest.py``) and is marked
with :func:`autograder.kit.prop`, which gives its grade-cell group, points
and the hint shown when it fails.
"""
