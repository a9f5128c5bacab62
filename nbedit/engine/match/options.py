"""How lenient the matcher may be (``MatchOptions``), in a module of its own.

Every plan carries a ``MatchOptions``, but a diff whose hunks all stand where they say never
reaches the matcher: the planner and the workspace import the options from here, so that such a
change does not load the tiers' tables and the per-file index (``tiers``, which re-exports both
names) just to read a default (start-up, tests/test_startup.py).
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.models import DEFAULT_THRESHOLD

__all__ = ["DEFAULT_THRESHOLD", "MatchOptions"]


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """How lenient the matcher may be: the exact tier only, or down to the fuzzy ``threshold``."""

    exact: bool = False  # only the exact tier
    threshold: float = DEFAULT_THRESHOLD
