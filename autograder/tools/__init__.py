"""Instructor commands (``python -m autograder ...``); nothing here runs in a kernel."""
