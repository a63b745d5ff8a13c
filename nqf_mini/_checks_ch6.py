"""Self-checks of Chapter 6's exercises, registered in :data:`nqf_mini.check.CHECKS`."""

from __future__ import annotations

from .check import CheckResult, register_check  # noqa: F401
