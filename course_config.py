"""nbgrader configuration for the JAX tracing course.

nbgrader reads only ``nbgrader_config.py``; that one-line shim loads this file.
Scratch courses built by ``python -m autograder demo`` load it the same way and
then point ``CourseDirectory.root`` and ``Exchange.root`` at their own folders.
"""

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads the file

ASSIGNMENTS = ("static_max_mode", "padded_masking", "branch_repair", "ledger_extension")  # noqa: F841 - documents the course

c.CourseDirectory.course_id = "jax-tracing"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# Students' stubs: a clear marker and an error that names what is missing.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# One cell may compile a handful of JAX programs and run a property search; a
# cell that still runs after this long is stuck, and only that cell loses points.
c.ExecutePreprocessor.timeout = 120
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
