"""Where whole lines stand, for many hunks without line numbers: one pass over the text, not one each.

A hunk with no line number (a SEARCH/REPLACE block, an apply_patch chunk) is located by
searching the whole text for its old text, and searching on to prove it stands only once.
``str.find`` does that at C speed, but once per hunk: hunks x characters, seconds for a
thousand blocks in a notebook's cell view of a few megabytes (issue 27).

A hunk of whole lines (old text ending in ``"\\n"``) can only stand at a line start, with
its lines equal to the text's lines there. So the text's lines are read once (``LineTable``)
and, for every line any of the hunks' old texts holds, the numbers of the lines equal to it
are kept. A hunk's places are then found from the line of its old text that stands least
often: each such line, minus its place in the old text, is a candidate start, checked by
comparing the lines. The places are exactly the ones the search finds (``match.search._find``
asks the table first), in the same order; when even the rarest line stands so often that
checking every candidate would cost more than a search, the table answers None and the
search runs as before.

``LinesInOrder`` does the same for SEARCH/REPLACE blocks applied one after another, each to
the text the blocks before it left. The text is held as a linked list of its lines, and a
block found exactly once has its lines unlinked and its new lines linked in, updating the
index of where lines stand. A block found nowhere exactly but once with each line's final
``"\\r"`` left out (LF blocks for a CRLF file) is placed as the line-endings tier places it,
with what that tier writes there (the caller computes it with the tier's own code). Every
other block is located on the text as a string, as before, so the matcher decides what it
always decided. The blocks' cost is then the text's lines once plus the candidates each
block checks, instead of the whole text per block.

The same "read ``"\\r\\n"`` as ``"\\n"``" view of a ``LineTable`` (``without_line_endings``) gives
the line-endings tier's places when hunks are located against the original text.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

from nbedit.engine.models import Tier

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from nbedit.engine.models import Hunk

__all__ = ["LineTable", "LinesInOrder", "indexable", "plain_block", "wanted_lines"]

# a candidate place costs about what a search of this many characters does (a Python compare of
# its lines against ``str.find``'s C scan, some 0.2 ns a character): a hunk whose rarest line has
# more candidates than that fits in the text's size is searched for instead. ``LinesInOrder``
# weighs them against what a block it cannot place costs (the text joined, searched, indexed again).
CANDIDATE_CHARACTERS = 2_000
LINE_CHARACTERS = 200
IN_ORDER_WEIGHT = 16
FEW_CANDIDATES = 8  # checked in any text: they cost microseconds


def indexable(hunk: Hunk) -> bool:
    """A hunk whose exact places the table can give: whole lines, its old text ending a line."""
    return bool(hunk.whole_lines and hunk.old.endswith("\n") and not hunk.replace_all and not hunk.anchors)


def plain_block(hunk: Hunk) -> bool:
    """A block ``LinesInOrder`` may place: found exactly once, it replaces whole lines by whole lines,
    and what is written there is its new text as it is (the exact tier's replacement for a place
    at a line start whose old text ends a line: ``match.replacement._replacement``). Anything else
    (a blank old text, an append, several readings) is located on the text as a string."""
    return (
        indexable(hunk)
        and not hunk.at_end
        and not hunk.alternatives
        and bool(hunk.old.strip())
        and (not hunk.new or hunk.new.endswith("\n"))
    )


def wanted_lines(blocks: Iterable[Hunk]) -> frozenset[str]:
    """Every line the old texts of the plain blocks hold: what ``LinesInOrder`` indexes."""
    return frozenset(line for block in blocks if plain_block(block) for line in _old_lines(block.old))


def _line_ending_free(line: str) -> str:
    """A line (without its "\\n") as the line-endings tier sees it: "\\r\\n" read as "\\n"."""
    return line[:-1] if line.endswith("\r") else line


def _old_lines(old: str) -> list[str]:
    return old[:-1].split("\n")


def _worth_checking(candidates: int, lines: int, size: int) -> bool:
    return (
        candidates <= FEW_CANDIDATES or candidates * (CANDIDATE_CHARACTERS + LINE_CHARACTERS * lines) <= size
    )


def _where(lines: list[str], wanted: Iterable[str]) -> dict[str, list[int]]:
    """The numbers of the lines equal to each wanted line (the last item of a split is never a
    whole line: what follows the last ``"\\n"``)."""
    where: dict[str, list[int]] = {line: [] for line in wanted}
    for number, line in enumerate(lines[:-1]):
        found = where.get(line)
        if found is not None:
            found.append(number)
    return where


class LineTable:
    """Where some wanted lines stand in a text, and every line's start; the lines themselves are
    not kept (a place is checked by ``str.startswith`` on the text)."""

    __slots__ = ("_free", "_lines", "_starts", "text", "where")

    def __init__(self, text: str, wanted: Iterable[str]) -> None:
        lines = text.split("\n")
        self.text = text
        self._free: LineTable | None = None
        self.where = _where(lines, wanted)
        self._lines = len(lines) - 1  # whole lines
        # every line's start, 8 bytes each (no int objects to keep)
        self._starts = array("q", accumulate(map((1).__add__, map(len, lines[:-1])), initial=0))

    def without_line_endings(self, normalised: str) -> LineTable:
        """The same table over the text as the line-endings tier sees it (``normalised``: "\\r\\n"
        read as "\\n"), for the same lines read so; made the first time it is asked for."""
        if self._free is None:
            self._free = LineTable(normalised, {_line_ending_free(line) for line in self.where})
        return self._free

    @classmethod
    def for_hunks(cls, text: str, hunks: Sequence[Hunk]) -> LineTable:
        return cls(text, {line for hunk in hunks if indexable(hunk) for line in _old_lines(hunk.old)})

    def hits(self, old: str, low: int, high: int, limit: int) -> list[tuple[int, int]] | None:
        """(offset, 0-based line) of each place ``old`` stands, starting at a line start, within
        ``[low, high)``, in order, at most ``limit``; None when the table cannot tell cheaply
        (a line of ``old`` it does not index, or candidates that cost more than a search)."""
        if not old.endswith("\n"):
            return None
        wanted = _old_lines(old)
        where = self.where
        counts = [len(where[line]) if line in where else -1 for line in wanted]
        if min(counts) < 0:
            return None
        rarest = counts.index(min(counts))
        if not _worth_checking(counts[rarest], len(wanted), len(self.text)):
            return None
        starts, text, size, count = self._starts, self.text, len(old), len(wanted)
        found: list[tuple[int, int]] = []
        for number in where[wanted[rarest]]:
            first = number - rarest
            if first < 0:
                continue
            if first + count > self._lines:
                break
            start = starts[first]
            if start < low:
                continue
            if start + size > high:
                break
            if text.startswith(old, start):
                found.append((start, first))
                if len(found) >= limit:
                    break
        return found


class LinesInOrder:
    """A text as a linked list of its lines, edited by plain blocks one after another (module doc).

    Line ``n`` of the text is node ``n``; a block's new lines are new nodes. The last node is
    what follows the text's last ``"\\n"`` (maybe empty): no old text ending in ``"\\n"`` can
    take it in, so it stays last.
    """

    __slots__ = (
        "_after",
        "_before",
        "_content",
        "_first",
        "_gone",
        "_last",
        "_size",
        "_where",
        "_where_free",
        "placed",
    )

    def __init__(self, text: str, blocks: Sequence[Hunk] | frozenset[str]) -> None:
        """``blocks``: the blocks to come, or the lines their old texts hold (``wanted_lines``)."""
        self._content = text.split("\n")
        count = len(self._content)
        wanted = blocks if isinstance(blocks, frozenset) else wanted_lines(blocks)
        self._where = _where(self._content, wanted)
        # links as 8-byte arrays, not lists of int objects: a text's lines cost their strings only
        self._after = array("q", range(1, count + 1))
        self._after[-1] = -1
        self._before = array("q", range(-1, count - 1))
        self._first, self._last = 0, count - 1
        self._gone: set[int] = set()
        self._size = len(text)
        self._where_free: dict[str, list[int]] | None = None
        self.placed = 0  # blocks placed so far

    def text(self) -> str:
        """The text as the blocks placed so far left it."""
        content, after = self._content, self._after
        lines: list[str] = []
        node = self._first
        while node != -1:
            lines.append(content[node])
            node = after[node]
        return "\n".join(lines)

    def apply(self, block: Hunk, carried: Callable[[Hunk, str], str | None] | None = None) -> str | None:
        """Place a plain block where its old text stands exactly once, and write its new text there;
        the tier that placed it (``"exact"``, or ``"line-endings"``), or None.

        None (nothing changed) when the block is not plain, stands no place or several exactly, or
        its lines stand so often that checking them would cost more than searching the text: the
        caller then locates it on the text as a string, which decides as it always did. With
        ``carried`` (what the line-endings tier writes over the given lines, or None when it would
        refuse), a block standing nowhere exactly but once up to line endings (LF blocks for a CRLF
        file) is placed as that tier places it: the cascade's next tier, with nothing between.
        """
        if not plain_block(block):
            return None
        wanted = _old_lines(block.old)
        count, place = self._places(wanted, self._where, exact=True)
        if count == 0 and carried is not None and not self._content[self._last]:
            # (a last line without "\n" could take the old text by the exact tier's end-of-file rule)
            count, place = self._places(
                [_line_ending_free(line) for line in wanted], self._ending_free(), exact=False
            )
            if count != 1:
                return None
            lines = []
            node = place
            for _ in wanted:
                lines.append(self._content[node] + "\n")
                node = self._after[node]
            written = carried(block, "".join(lines))
            if written is None or (written and not written.endswith("\n")):
                return None
            self._replace(place, len(wanted), written)
            self._size += len(written) - len("".join(lines))
            self.placed += 1
            return Tier.LINE_ENDINGS.value
        if count != 1:
            return None
        self._replace(place, len(wanted), block.new)
        self._size += len(block.new) - len(block.old)
        self.placed += 1
        return Tier.EXACT.value

    def _ending_free(self) -> dict[str, list[int]]:
        """The index by lines as the line-endings tier sees them (a line's final "\\r" gone), built
        the first time a block needs it and kept up to date from then on."""
        if self._where_free is None:
            wanted = {_line_ending_free(line) for line in self._where}
            where: dict[str, list[int]] = {line: [] for line in wanted}
            content, after, node, last = self._content, self._after, self._first, self._last
            while node != last:
                found = where.get(_line_ending_free(content[node]))
                if found is not None:
                    found.append(node)
                node = after[node]
            self._where_free = where
        return self._where_free

    def _places(self, wanted: list[str], where: dict[str, list[int]], *, exact: bool) -> tuple[int, int]:
        """(how many places, up to 2; the first line of the last found) where ``wanted`` stands,
        comparing lines as they are (``exact``) or without a final "\\r"; (2, -1) when a line is not
        indexed or the candidates cost more than a search (the string search decides then)."""
        if any(line not in where for line in wanted):
            return 2, -1  # not a block this index was made for
        counts = [len(where[line]) for line in wanted]
        rarest = counts.index(min(counts))
        if not _worth_checking(counts[rarest], len(wanted), IN_ORDER_WEIGHT * self._size):
            return 2, -1
        content, after, before, gone, last = self._content, self._after, self._before, self._gone, self._last
        found, first_found = 0, -1
        for node in where[wanted[rarest]]:
            if node in gone:
                continue
            first = node
            for _ in range(rarest):
                first = before[first]
                if first == -1:
                    break
            if first == -1:
                continue
            at = first
            for line in wanted:
                if (
                    at == -1
                    or at == last
                    or (content[at] if exact else _line_ending_free(content[at])) != line
                ):
                    break
                at = after[at]
            else:
                found, first_found = found + 1, first
                if found == 2:
                    break  # a second place: the string search says how (ambiguous, or repeated)
        return found, first_found

    def _replace(self, first: int, count: int, new: str) -> None:
        after, before, content, where, gone = (
            self._after,
            self._before,
            self._content,
            self._where,
            self._gone,
        )
        node, previous = first, before[first]
        for _ in range(count):
            gone.add(node)
            node = after[node]
        following = node  # never -1: the last node is never taken in
        for line in new[:-1].split("\n") if new else ():
            added = len(content)
            content.append(line)
            after.append(-1)
            before.append(previous)
            if previous == -1:
                self._first = added
            else:
                after[previous] = added
            previous = added
            positions = where.get(line)
            if positions is not None:
                positions.append(added)
            if self._where_free is not None:
                positions = self._where_free.get(_line_ending_free(line))
                if positions is not None:
                    positions.append(added)
        if previous == -1:
            self._first = following
        else:
            after[previous] = following
        before[following] = previous
