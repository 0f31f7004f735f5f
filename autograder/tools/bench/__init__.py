"""``python -m autograder bench``: the graders' cost against a floor run side by side
(run), on scratch courses (courses), measured as a process tree (measure), and
property by property in a fresh process (probe)."""
