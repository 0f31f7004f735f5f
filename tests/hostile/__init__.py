"""Hostile and broken submissions, graded by a real ``nbgrader autograde`` in tests/test_hostile.py.

``corpus.py`` declares each one; ``notebooks.py`` builds it from the correct sample.
"""
