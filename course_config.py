"""nbgrader configuration for the JAX tracing course.

nbgrader reads only ``nbgrader_config.py``; that one-line shim loads this file.
Scratch courses built by ``python -m autograder demo`` load it the same way and
then point ``CourseDirectory.root`` and ``Exchange.root`` at their own folders.
"""

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads the file


c.CourseDirectory.course_id = "jax-tracing"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# Students' stubs: a clear marker and an error that names what is missing.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A graded cell runs at most three properties of at most 40 s each (autograder/grading/limits.py);
# a cell still running after 150 s is stuck, and only that cell loses points.
c.Execute.timeout = 150
c.Execute.interrupt_on_timeout = True
# Outputs are in nbgrader's hands once the last cell ran: kill the kernel then, rather than
# wait ~0.4 s for a graceful exit; what it left running is killed right after
# (autograder/confinement/kernel_manager.py, kill_leftovers).
c.Execute.shutdown_kernel = "immediate"

# Confine every autograde kernel before the notebook's first cell: memory, file size
# and process caps, and a record of the genuine grading objects (autograder/confinement/sandbox.py).
c.Execute.extra_arguments = [
    "--HistoryManager.hist_file=:memory:",
    "--IPKernelApp.exec_lines=['import autograder.confinement.sandbox']",
]

# A grading kernel gets nothing of nbgrader's environment (a JupyterHub's token, a database password)
# but PATH, HOME, the language and the course's own variables (autograder/confinement/environment.py);
# name here any other variable kernels need, NAME* for every name that begins NAME:
# c.ConfinedKernelManager.kernel_environment_names = ["MY_COURSE_*"]

# Where grading computes: every grading kernel gets JAX_PLATFORMS from this setting, whatever
# accelerator the grading host has, and the judge computes its expected values on the same platform,
# with tolerances from that platform's measured float32 precision (autograder/grading/backend.py,
# docs/accelerators.md). "cpu" (the default) grades the same everywhere; "tpu" or "cuda" grade on that
# accelerator (the CPU is listed after it, for host callbacks such as jax.pure_callback, and computes
# nothing else); "" leaves JAX its own choice (its accelerator, where there is one).
# c.ConfinedKernelManager.jax_platforms = "cpu"

# The submission boundary: what a student hands in is read only as regular files of its own,
# within the sizes below, before nbgrader copies anything (autograder/confinement/boundary.py).
# collect through nbgrader's own hook; autograde and generate_feedback (the commands, formgrader's
# buttons, the parallel and Dask workers) through converters put in nbgrader's place here.
from autograder.confinement import converters as _boundary  # noqa: E402

c.ExchangeFactory.collect = "autograder.confinement.converters.BoundedCollect"
# nbgrader's own sizes for collect (100 MB a file, 100 MB a submission), now kept for every kind of file.
c.SubmissionBoundary.max_file_bytes = 100_000_000
c.SubmissionBoundary.max_submission_bytes = 100_000_000
# A notebook is held parsed several times over in nbgrader's process (and in each parallel worker).
c.SubmissionBoundary.max_notebook_bytes = 32_000_000
_boundary.install()

# In nbgrader's own process, around the kernel: the grade cells are judged here, and outputs
# scrubbed of grader source, so feedback can never show it.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades,
)

from autograder.confinement.sanitise import SanitiseStudentContent  # noqa: E402

# ConfinedExecute: nbgrader's Execute, each kernel in a private view of the machine as
# a user of its own (autograder/confinement/jail.py), and a dead kernel costs only unfinished cells;
# every grade cell is judged here, in nbgrader's process, while the kernel only serves calls
# (autograder/grading/judge.py): the cell's points are the judge's, never the kernel's word.
# SanitiseStudentContent, last: once the grades are saved, every markdown cell and output of the
# notebook that formgrader and the feedback pages render is made unable to run script there
# (autograder/confinement/sanitise.py); nbgrader writes the autograded notebook after it.
# The first two are named by their import path: the judge brings in JAX, which nbconvert then loads when
# autograde starts, and the course's other commands (collect, generate_feedback, formgrader, ...) never do.
c.Autograde.autograde_preprocessors = [
    "autograder.confinement.preprocessors.ConfinedExecute", "autograder.confinement.preprocessors.ScrubGraderSource",
    IgnorePattern, ClearMetadataPreprocessor,
    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata, SanitiseStudentContent,
]

# The exchange between students (autograder/confinement/exchange.py): release_assignment keeps the
# exchange's top folder yours alone, inbound/ sticky (nobody renames or deletes another's submission),
# and publishes <exchange>/<course>/course_exchange.py, which each student loads with the one line it
# prints (their submissions then readable by them and you alone); release_feedback makes each feedback
# page readable by its student alone. README, "Instructor workflow" and "Student workflow".
from autograder.confinement.exchange import CourseReleaseAssignment, CourseReleaseFeedback  # noqa: E402

c.ExchangeFactory.release_assignment = CourseReleaseAssignment
c.ExchangeFactory.release_feedback = CourseReleaseFeedback

# nbgrader export writes grades.csv as proper CSV: nbgrader's own joins fields unquoted, so a comma
# in a student id adds columns, and a field starting with "=" is a formula to a spreadsheet
# (autograder/confinement/csv_export.py).
c.ExportApp.plugin_class = "autograder.confinement.csv_export.QuotedCsvExport"
