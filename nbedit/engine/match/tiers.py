"""What each tier sees: a file's text and a hunk's old text, normalised, and the per-file index.

Each normalised tier transforms the *whole* file text and the hunk with C-speed string
operations (``replace``, ``translate``, ``re.sub``) that never add or remove a ``"\\n"``; a
hit in normalised text is mapped back to original lines by counting newlines (``search``).
That keeps a 100,000-line file fast without a Python loop over characters. ``FileIndex``
builds each tier's text once, from the previous tier's, and shares it (with line starts and
line positions) between every hunk located in the same file.

``MatchOptions`` (how lenient the matcher may be) and ``DEFAULT_THRESHOLD`` are importable from here,
with the tiers they choose among; they live in ``options``, which a change found in place loads alone.
"""

from __future__ import annotations

from _operator import methodcaller  # the operator module's C functions, without operator.py (start-up)
from itertools import accumulate

from nbedit._dataclass import dataclass, field
from nbedit.engine.match.options import DEFAULT_THRESHOLD, MatchOptions  # noqa: F401 - importable here too
from nbedit.engine.models import Tier
from nbedit.engine.text import line_starts

try:  # bisect's own function, without bisect.py (start-up)
    from _bisect import bisect_right
except ImportError:  # an interpreter without the C module
    from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.match.line_table import LineTable

_SPACES = (" ", "\t", "\r", "\f", "\v")
_LEADING_SPACE = r"\n[ \t]+"  # compiled (and cached by re) when the indentation tier is first reached
_RSTRIP = methodcaller("rstrip", " \t\r\f\v")

# then the blank-lines tier (``_locate_blank_lines``) and the fuzzy tier
_NORMALISED_TIERS = (Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE, Tier.UNICODE, Tier.INDENTATION)
_ORDER = (Tier.EXACT, *_NORMALISED_TIERS)
_TIER_RANK = {tier: rank for rank, tier in enumerate(Tier)}


def _normalise(text: str, tier: Tier) -> str:
    """Text as seen by a tier; each tier includes the ones before it.

    Every transformation keeps the number of ``"\\n"`` characters, and each runs
    at C speed (``replace``, ``translate``, a literal-led regex, ``map`` of a str
    method): a 100,000-line file costs milliseconds per tier.
    """
    for step in (Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE, Tier.UNICODE, Tier.INDENTATION):
        if _ORDER.index(step) > _ORDER.index(tier):
            break
        text = _normalise_step(text, step)
    return text


def _normalise_step(text: str, tier: Tier) -> str:
    """One tier's own transformation, applied to the previous tier's text."""
    if tier is Tier.LINE_ENDINGS:
        return text.replace("\r\n", "\n")
    if tier is Tier.TRAILING_WHITESPACE:
        rare = "\r" in text or "\f" in text or "\v" in text  # single characters: memchr-fast
        if not text.endswith(_SPACES) and " \n" not in text and "\t\n" not in text and not rare:
            return text  # nothing to strip: skip the split/join of every line
        return "\n".join(map(_RSTRIP, text.split("\n")))
    if tier is Tier.UNICODE:
        from nbedit.engine.transport import UNICODE_TABLE

        return text.translate(UNICODE_TABLE)
    if tier is Tier.INDENTATION:
        import re  # not on the way of a hunk found where it says (start-up time)

        return re.sub(_LEADING_SPACE, "\n", text).lstrip(" \t")
    return text


def _fuzzy_line(line: str) -> str:
    """A line as the fuzzy tier compares it: the indentation tier's normalisation."""
    return _normalise(line, Tier.INDENTATION)


@dataclass
class FileIndex:
    """Per-file caches shared by every hunk located in the same text."""

    text: str
    _starts: list[int] | None = None
    _normalised: dict[Tier, str] = field(default_factory=dict)
    _normalised_starts: dict[str, list[int]] = field(default_factory=dict)
    _fuzzy_lines: list[str] | None = None
    _line_positions: dict[str, list[int]] | None = None
    _newline_mark: tuple[int, int] = (0, 0)  # (offset, newlines before it): where the last count ended
    # where the lines of many hunks' old texts stand (``line_table``): exact places without a search each
    line_table: LineTable | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of each line start, plus one entry for the end of the text."""
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def line(self, number: int) -> str:
        """One line with its ending, without splitting the whole text."""
        starts = self.starts
        return self.text[starts[number] : starts[number + 1]]

    def line_range(self, first: int, count: int) -> list[str]:
        starts = self.starts
        return [
            self.text[starts[n] : starts[n + 1]] for n in range(first, min(first + count, len(starts) - 1))
        ]

    @property
    def line_count(self) -> int:
        return len(self.starts) - 1

    def newlines_before(self, offset: int) -> int:
        """``text.count("\\n", 0, offset)``, counted on from the last offset asked about when this
        one is after it: hunks found in file order cost one pass over the text, not one each."""
        mark, counted = self._newline_mark
        if offset < mark:
            mark, counted = 0, 0
        counted += self.text.count("\n", mark, offset)
        self._newline_mark = (offset, counted)
        return counted

    def line_of(self, offset: int) -> int:
        """0-based line index containing a character offset."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def normalised_starts(self, tier: Tier) -> list[int]:
        """Line starts in the tier's normalised text (same line count as the original)."""
        if tier is Tier.EXACT:
            return self.starts
        key = f"starts-{tier.value}"
        if key not in self._normalised_starts:
            if tier is Tier.INDENTATION:
                parts = self.fuzzy_lines  # already split: only the sums remain
                starts = list(accumulate(map((1).__add__, map(len, parts[:-1])), initial=0))
                if parts[-1]:
                    starts.append(len(self.normalised(tier)))
                self._normalised_starts[key] = starts
            else:
                self._normalised_starts[key] = line_starts(self.normalised(tier))
        return self._normalised_starts[key]

    def same_as(self, tier: Tier, other: Tier) -> bool:
        first, second = self.normalised(tier), self.normalised(other)
        return first is second or first == second

    def normalised(self, tier: Tier) -> str:
        """The text as ``tier`` sees it, built from the previous tier's (cached) text."""
        if tier is Tier.EXACT:
            return self.text
        if tier not in self._normalised:
            order = (Tier.EXACT, *_NORMALISED_TIERS)
            previous = self.normalised(order[order.index(tier) - 1])
            self._normalised[tier] = _normalise_step(previous, tier)
        return self._normalised[tier]

    @property
    def fuzzy_lines(self) -> list[str]:
        """Every line as the most lenient normalised tier sees it (one C-level split)."""
        if self._fuzzy_lines is None:
            self._fuzzy_lines = self.normalised(Tier.INDENTATION).split("\n")
        return self._fuzzy_lines

    def positions_of(self, line: str, limit: int) -> list[int] | None:
        """0-based numbers of the lines equal to ``line`` (fuzzy-normalised).

        None when it occurs more than ``limit`` times (too common to vote).
        Found with ``str.find`` over the normalised text, not a dict of all lines.
        """
        cached = self._line_positions.get(line) if self._line_positions is not None else None
        if cached is not None:
            return cached if len(cached) <= limit else None
        text = self.normalised(Tier.INDENTATION)
        starts = self.normalised_starts(Tier.INDENTATION)
        needle = "\n" + line + "\n"
        found: list[int] = []
        if text.startswith(line + "\n") or text == line:
            found.append(0)
        position = text.find(needle)
        while position != -1 and len(found) <= limit:
            found.append(bisect_right(starts, position + 1) - 1)
            position = text.find(needle, position + 1)
        if len(found) <= limit and text.endswith("\n" + line) and line:
            last = bisect_right(starts, len(text) - len(line)) - 1
            if last not in found:
                found.append(last)
        if self._line_positions is None:
            self._line_positions = {}
        self._line_positions[line] = found
        return found if len(found) <= limit else None
