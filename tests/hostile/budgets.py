"""Hostile entries: Notebooks that hold a worker: many slow cells, and replies that would swell the judge's memory."""

from __future__ import annotations

from .model import Hostile

ENTRIES: tuple[Hostile, ...] = ()
