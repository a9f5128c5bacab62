"""Warnings nbedit emits (e.g. editing the notebook open in this kernel's own tab)."""

from __future__ import annotations


class NbeditWarning(UserWarning):
    """Base of nbedit's warnings; the test suite turns them into errors."""
