"""One grade cell in the kernel: :func:`grade` runs a group's properties on the
notebook's namespace and prints its feedback; everything here runs in the kernel.

Importing this package is cheap (no JAX): instructor tools use ``grading.cells``
and ``grading.registry`` without loading the graders.
"""
