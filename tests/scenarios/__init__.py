"""Scripted scenarios that tests and benchmarks share (see :mod:`scenarios.desktop`)."""

from __future__ import annotations

__all__ = ["desktop"]
