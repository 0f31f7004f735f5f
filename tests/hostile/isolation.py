"""Hostile entries: Kernels that reach for each other: a neighbour's IOPub, its judge session, loopback services, leftovers in shared folders and IPC."""

from __future__ import annotations

from .model import Hostile

ENTRIES: tuple[Hostile, ...] = ()
