"""Misconception mutants: how strong a grader is, measured on mistakes written into the reference.

``python -m autograder mutants ASSIGNMENT | --all`` (:mod:`.run`); the operators are in
:mod:`.operators` (generic) and :mod:`.misconceptions` (the course's own); what a run leaves
beside the property module, and what ``check`` reads of it, in :mod:`.record`.
"""
