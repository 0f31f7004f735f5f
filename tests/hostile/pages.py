"""Hostile entries: Scripts in what students control (markdown, HTML, SVG, JavaScript outputs), aimed at formgrader and the feedback pages."""

from __future__ import annotations

from .model import Hostile

ENTRIES: tuple[Hostile, ...] = ()
