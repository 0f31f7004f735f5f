"""The one root of the instructor commands' errors: the command line prints the
message (it says which step failed, why, and what to do) and exits with 1."""


class ToolError(RuntimeError):
    """An instructor command could not do its work; the message says why."""


class CycleError(ToolError):
    """A step of the grading cycle in a scratch course could not run."""


class ParallelError(ToolError):
    """Parallel autograding could not start."""
