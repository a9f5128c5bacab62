"""The short words every renderer uses for how a hunk was found.

Kept apart from ``rows`` (which builds diff rows and loads ``difflib``) so the
plain-text preview of ``nbedit apply`` can name tiers and offsets without
paying for the row builder's import.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.tier import Tier

__all__ = ["offset_note", "tier_label"]


def tier_label(tier: Tier, score: float = 1.0) -> str:
    """Short badge text: ``fuzzy 0.93`` for fuzzy matches, the tier name otherwise."""
    if tier.value == "fuzzy":  # by value: this module does not load the enum (engine/tier.py)
        return f"fuzzy {score:.2f}"
    return str(tier.value)


def offset_note(offset: int | None) -> str | None:
    """Where a unified-diff hunk landed relative to the line it claimed."""
    if not offset:
        return None
    lines = "line" if abs(offset) == 1 else "lines"
    direction = "below" if offset > 0 else "above"
    return f"applied {abs(offset)} {lines} {direction} where the diff said"
