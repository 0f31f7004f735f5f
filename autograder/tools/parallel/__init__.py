"""``python -m autograder autograde ASSIGNMENT --workers N``: nbgrader's autograde,
several students at once (run), in long-lived workers (worker), resumable from the
gradebook and the autograded folder (state), with a line per student (progress)."""
