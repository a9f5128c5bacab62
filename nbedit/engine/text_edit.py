"""Editing one text: the planner's options, what editing a text gives, and the splice.

``PlanOptions``, ``TextEdit`` and ``splice`` are shared by the text stage
(``engine/locate_hunks.py``: ``edit_text``), the planner (``engine/plan.py``:
``plan_change``) and the notebook planner (``engine/notebook/planning.py``), which edits
a notebook's cell view with ``edit_text``. They live below all three so that the notebook
planner need not import ``plan.py``, which hands ``.ipynb`` targets to it: that was an import
circle (``tests/test_architecture.py``). ``plan.py`` still exports them.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.models import DEFAULT_THRESHOLD, LocatedHunk, tier_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from nbedit.engine.match.options import MatchOptions
    from nbedit.engine.tier import Tier

    STRUCTURE_KEEPING: frozenset[Tier]

__all__ = [
    "DEFAULT_MAX_CELLS",
    "DEFAULT_MAX_HUNKS",
    "DEFAULT_MAX_SEQUENTIAL_WORK",
    "GUARD_SUFFIXES",
    "STRUCTURE_KEEPING",  # noqa: F822 - given by __getattr__ (the Tiers: made when asked for)
    "PlanOptions",
    "TextEdit",
    "splice",
]

# Limits (issue 27): every cost is linear, but beyond these a plan takes longer than anyone
# waits for an edit (about 10 s on a loaded 2-core machine), so it is refused at once, saying
# how to go on. A notebook's cells are counted while it is scanned, a change's hunks once parsed.
DEFAULT_MAX_CELLS = 1_000_000
# files whose change is checked for a new syntax error (``engine.syntax_guard``, loaded for these only)
GUARD_SUFFIXES = (".py", ".pyi", ".pyw", ".json")
DEFAULT_MAX_HUNKS = 200_000
# SEARCH/REPLACE blocks apply one after another, each to the text the blocks before it left. Those
# found exactly once are placed from an index of the text's lines (``locate_hunks._edit_in_order``:
# the text once, plus each block's candidate lines); every other block (found by a lenient tier,
# ambiguous, absent, or among 16 blocks or fewer) is searched for in the whole text: blocks x
# characters, some 3.4 ns a block-character. Past 10^10 such block-characters (half a minute of one
# core) the blocks are refused: 16 or fewer before any is located, more as soon as the searched ones
# pass it.
DEFAULT_MAX_SEQUENTIAL_WORK = 10_000_000_000

# tiers that never change a line's structure: the syntax guard treats them as exact. By value here;
# ``STRUCTURE_KEEPING`` (the ``Tier``s) is made when asked for, since the enum costs a start milliseconds
_STRUCTURE_KEEPING_VALUES = frozenset({"exact", "line-endings", "trailing-whitespace"})


def __getattr__(name: str) -> frozenset[Tier]:
    if name == "STRUCTURE_KEEPING":
        from nbedit.engine.tier import Tier

        made = globals()["STRUCTURE_KEEPING"] = frozenset(map(Tier, _STRUCTURE_KEEPING_VALUES))  # one object
        return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """The planner's options, as a ``Workspace`` sets them; ``match`` gives the matcher's share."""

    exact: bool = False
    threshold: float = DEFAULT_THRESHOLD
    overwrite: bool = False
    clear_outputs: bool = False
    encoding: str | None = None  # declared text encoding of the files; None: UTF-8, BOM or detected
    max_cells: int = DEFAULT_MAX_CELLS  # a notebook with more cells is refused before it is planned
    max_hunks: int = DEFAULT_MAX_HUNKS  # a change with more hunks is refused before any is located
    # SEARCH/REPLACE blocks searched in the whole text x its characters, over which they are refused
    max_sequential_work: int = DEFAULT_MAX_SEQUENTIAL_WORK

    @property
    def match(self) -> MatchOptions:
        # the matcher's package loads when a hunk needs matching (an exact diff in place never does)
        from nbedit.engine.match.options import MatchOptions

        return MatchOptions(exact=self.exact, threshold=self.threshold)


@dataclass(frozen=True, slots=True)
class TextEdit:
    """The result of editing one text: what it became and where each hunk landed."""

    after: str
    hunks: tuple[LocatedHunk, ...]
    already_applied: bool
    notes: tuple[str, ...]
    lenient: bool = False  # some hunk was placed by a tier that can change what a line means

    @property
    def placed_leniently(self) -> bool:
        """Some hunk was placed by a tier beyond line endings and trailing blanks (those two never
        change a line's structure, so the syntax guard treats them as exact)."""
        return self.lenient or any(
            tier_value(item.match) not in _STRUCTURE_KEEPING_VALUES for item in self.hunks
        )


def splice(text: str, located: Sequence[LocatedHunk]) -> str:
    """``text`` with every located hunk's span replaced, in one pass."""
    pieces: list[str] = []
    cursor = 0
    for item in sorted(located, key=lambda item: (item.match.start, item.match.end)):
        pieces.append(text[cursor : item.match.start])
        pieces.append(item.match.replacement)
        cursor = item.match.end
    pieces.append(text[cursor:])
    return "".join(pieces)
