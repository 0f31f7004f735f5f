"""Where a notebook runs: the jail (root, before the kernel), the sandbox (first
import in the kernel), the kernel manager and preprocessors (nbgrader's process),
every copy of the grading package a kernel must not read, and what of a notebook may reach
a page (the sanitiser at autograde, formgrader's content-security policy)."""

from pathlib import Path

#: The grading package's own folder, the one the sandbox hides and the kernel manager
#: keeps: the package root, never a subpackage's folder, or part of the grader stays
#: readable to the notebook (security-critical).
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
