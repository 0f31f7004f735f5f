"""The students' self-check: public, released beside each notebook as ``selfcheck.py``.

Nothing here is hidden. :mod:`autograder.public.runner` is the one definition of the self-check's
form (its lines, its example loop, its time budget); ``autograder/public/<assignment>.py`` holds
the public checks of one assignment, written from what its notebook promises. Both use only the
standard library, NumPy and JAX: a student's machine has nothing else. ``python -m autograder
selfcheck`` joins the runner and an assignment's checks into ``source/<assignment>/selfcheck.py``,
which nbgrader copies into ``release/``; ``tests/test_self_check.py`` holds both copies current.
Nothing in this folder may import the rest of ``autograder`` or repeat a hidden property.
"""
