"""The short words every renderer uses for how a hunk was found, and ``HunkFlag``: a hunk the
reviewer should look at twice (``render.summary`` gives it too).

Kept apart from ``rows`` (which builds diff rows and loads ``difflib``) so the
plain-text preview of ``nbedit apply`` can name tiers and offsets without
paying for the row builder's import; and apart from ``summary`` so that a plan whose hunks are
all exact and in place loads neither (start-up, tests/test_startup.py).
"""

from __future__ import annotations

from nbedit._dataclass import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.tier import Tier

__all__ = ["HunkFlag", "offset_note", "tier_label"]


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


@dataclass(frozen=True, slots=True)
class HunkFlag:
    """A hunk the reviewer should look at twice: a non-exact tier or an offset."""

    index: int
    line: int
    cell: str | None
    label: str  # "fuzzy 0.93", "unicode-punctuation", "exact" (exact hunks flag only offsets)
    explanation: str
    exact: bool
    offset: str | None
    place: str | None = None  # a notebook hunk across cells, in words (``explain.cell_span``)

    @property
    def where(self) -> str:
        if self.place is not None:
            return self.place
        place = f"line {self.line}"
        return f"{self.cell}, {place}" if self.cell else place

    def describe(self) -> str:
        details = [] if self.exact else [self.explanation]
        if self.offset:
            details.append(self.offset)
        return f"hunk {self.index + 1} ({self.where}): " + "; ".join(details)

    def describe_with_label(self) -> str:
        """``describe`` with the tier's name (``[fuzzy 0.93]``) for lines that stand without a badge."""
        if self.exact:
            return self.describe()
        details = "; ".join([self.explanation, *([self.offset] if self.offset else [])])
        return f"hunk {self.index + 1} ({self.where}) [{self.label}]: {details}"
