"""Hostile entries: Notebooks that reach into the grading package to forge the kernel's evidence, or reuse what the judge handed over."""

from __future__ import annotations

from .model import Hostile

ENTRIES: tuple[Hostile, ...] = ()
