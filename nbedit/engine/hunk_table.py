"""Many hunks held as places in the change text and a few numbers, made into values when read.

A 100,000-hunk ``git diff`` (36 MB) parsed into ``Hunk`` values holds every hunk's old and
new text as strings: the context lines twice, plus an object header per string, 2.4x the
patch next to the patch itself. The patch text already holds every one of those lines, so a
big patch's hunks are kept as a ``HunkTable``: where each hunk's body lies in the text and
the numbers its header gave (a few bytes a hunk), each ``Hunk`` made from its lines when it is
read (about 4 microseconds), exactly as the run reader makes it for a list. While the patch is
parsed its run hunks are not made at all: the run reader hands over their numbers alone
(``unified_runs.read_run_places``), so no text of theirs is built only to be let go.

The located hunks of a big file are kept the same way (``LocatedTable``): where each hunk
landed, as arrays, and a ``LocatedHunk`` (with its ``Match``) made when read, instead of two
objects a hunk held for the whole apply.

Both are read-only sequences that compare equal to the tuple of the values they make, so a
``FileChange`` or ``FilePlan`` that holds one is the same value as one holding the tuple.
"""

from __future__ import annotations

from _operator import eq  # the operator module's C functions, without operator.py (start-up)
from collections.abc import Iterator, Sequence
from itertools import chain

from nbedit.engine.models import EXACT_WHEN_READ, Hunk, LocatedHunk, Match

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from array import array

__all__ = ["HunkTable", "LocatedTable", "offset_type"]

_FOUR_BYTES = 0xFFFFFFFF  # offsets below this fit in 4 bytes; a 4-byte table marks held hunks with it
_UNKNOWN = (-1, -1)  # changed_lines None, as the table keeps it
_BEFORE = (1).__rsub__  # a header's 1-based line: the 0-based line before it, where the body above ends


def offset_type(size: int) -> str:
    """The ``array`` type code of offsets into ``size`` bytes or characters: 4 bytes up to 4 GiB."""
    return "I" if size < _FOUR_BYTES else "q"


class _Table:
    """What the two tables share: a sequence made of ``_made(index)``, equal to its tuple."""

    __slots__ = ()

    def __len__(self) -> int:  # pragma: no cover - each table says
        raise NotImplementedError

    def _made(self, index: int) -> object:  # pragma: no cover - each table says
        raise NotImplementedError

    def __getitem__(self, index: int | slice) -> object:
        size = len(self)
        if isinstance(index, slice):
            return tuple(map(self._made, range(*index.indices(size))))
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._made(index)

    def __iter__(self) -> Iterator[object]:
        return map(self._made, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (_Table, tuple, list)):
            return len(self) == len(other) and all(map(eq, self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self):,}>"


class HunkTable(_Table):
    """The hunks of one file section of a big unified diff, in order.

    A hunk of a run (``unified_runs.read_run``) is its body's place in ``text`` (its
    lines, each ' ', '-' or '+' and a newline, up to the next header), its start line,
    its header's line and its ``changed_lines``; any other hunk (one the careful reader
    read: a '\\ No newline' marker, an empty context line...) is held as the value it is.
    """

    __slots__ = ("_bodies", "_changed", "_eager", "_held", "_sources", "_starts", "text")

    def __init__(self, text: str) -> None:
        from array import array  # here: a diff read by hand never builds a table (start-up)

        self.text = text
        offsets = offset_type(len(text))  # offsets and line numbers of the text: 4 bytes each up to 4 GiB
        self._bodies = array(offsets)  # start, end of each body in the text
        self._held = _FOUR_BYTES if offsets == "I" else -1  # the body start of a hunk held as a value
        self._starts = array(offsets)  # Hunk.start_line (at most 9 digits: 4 bytes)
        self._sources = array(offsets)  # Hunk.source_line
        self._changed = array("i")  # Hunk.changed_lines (added, removed); -1: None
        self._eager: dict[int, Hunk] = {}

    def __len__(self) -> int:
        return len(self._starts)

    def append(self, hunk: Hunk) -> None:
        """A hunk held as it is."""
        self._eager[len(self._starts)] = hunk
        self._bodies.extend((self._held, self._held))
        self._starts.append(0)
        self._sources.append(0)
        self._changed.extend((-1, -1))

    def extend_run(self, hunks: Sequence[Hunk], line_starts: Sequence[int], end: int) -> None:
        """The hunks of one run, whose lines end before line ``end`` (0-based); ``line_starts``:
        where each line of the text starts (``unified_runs.LineIndex.starts``)."""
        self.extend_places(
            [hunk.source_line for hunk in hunks],  # type: ignore[misc]
            [hunk.start_line for hunk in hunks],  # type: ignore[misc]
            [hunk.changed_lines for hunk in hunks],
            line_starts,
            end,
        )

    def extend_places(
        self,
        source_lines: list[int],
        start_lines: list[int],
        changed: list[tuple[int, int] | None],
        line_starts: Sequence[int],
        end: int,
    ) -> None:
        """The hunks of one run by their numbers (``unified_runs.read_run_places``: the hunks are
        never made): each header's 1-based line, which is its body's first 0-based line, its
        ``start_line`` and its ``changed_lines``; the run's lines end before line ``end``. Kept
        with C-level maps (a Python step a hunk was a sixth of reading a big patch)."""
        count = len(source_lines)
        bounds = [0] * (2 * count)  # each body's start and end: the next header's line, or ``end``
        bounds[0::2] = map(line_starts.__getitem__, source_lines)
        bounds[1::2] = map(line_starts.__getitem__, [*map(_BEFORE, source_lines[1:]), end])
        self._bodies.extend(bounds)
        self._starts.extend(start_lines)
        self._sources.extend(source_lines)
        self._changed.extend(chain.from_iterable([pair or _UNKNOWN for pair in changed]))

    def changed_lines(self, index: int) -> tuple[int, int] | None:
        """``self[index].changed_lines`` without making the hunk."""
        eager = self._eager.get(index)
        if eager is not None:
            return eager.changed_lines
        added = self._changed[2 * index]
        return None if added < 0 else (added, self._changed[2 * index + 1])

    def texts(self) -> Iterator[tuple[Hunk | None, str, str, int | None]]:
        """(hunk, old, new, start_line) of each hunk in order, for a reader that needs only these:
        a hunk of a run is not made (None; it is a plain hunk of whole lines, nothing more),
        a hunk held as a value is given as it is."""
        text, bodies, starts, eager, held = self.text, self._bodies, self._starts, self._eager, self._held
        for index in range(len(starts)):
            first = bodies[2 * index]
            if first == held:
                hunk = eager[index]
                yield hunk, hunk.old, hunk.new, hunk.start_line
                continue
            end = bodies[2 * index + 1]
            lines = text[first : end - 1].split("\n") if end > first else []  # a header alone: no lines
            olds = [line[1:] for line in lines if line[0] != "+"]
            news = [line[1:] for line in lines if line[0] != "-"]
            old = "\n".join(olds) + "\n" if olds else ""
            yield None, old, "\n".join(news) + "\n" if news else "", starts[index]

    def _made(self, index: int) -> Hunk:
        first = self._bodies[2 * index]
        if first == self._held:
            return self._eager[index]
        # as ``read_run`` made it: each side's lines without their marker, each with its newline
        end = self._bodies[2 * index + 1]
        lines = self.text[first : end - 1].split("\n") if end > first else []  # a header alone: no lines
        olds = [line[1:] for line in lines if line[0] != "+"]
        news = [line[1:] for line in lines if line[0] != "-"]
        added = self._changed[2 * index]
        return Hunk(
            "\n".join(olds) + "\n" if olds else "",
            "\n".join(news) + "\n" if news else "",
            True,
            self._starts[index],
            (),
            False,
            False,
            False,
            self._sources[index],
            (),
            None if added < 0 else (added, self._changed[2 * index + 1]),
        )


class LocatedTable(_Table):
    """Hunks all found exactly where their headers say, in file order, in an ASCII file: each
    ``LocatedHunk`` made from its hunk and where it landed (``exact_run.located_table``).

    ``starts`` are the offsets of the spans (an old text ends ``len(hunk.old)`` later),
    ``lines`` their 1-based first lines, ``sizes`` their line counts; ``whole``: every new
    text is empty or ends with a newline (so each span is a diff block's whole lines).
    """

    __slots__ = ("hunks", "lines", "sizes", "starts", "whole")

    def __init__(self, hunks: Sequence[Hunk], starts: array, lines: array, sizes: array, whole: bool) -> None:
        self.hunks = hunks
        self.starts = starts
        self.lines = lines
        self.sizes = sizes
        self.whole = whole

    def __len__(self) -> int:
        return len(self.starts)

    def _made(self, index: int) -> LocatedHunk:
        hunk = self.hunks[index]
        start = self.starts[index]
        end = start + len(hunk.old)
        match = Match(start, end, hunk.new, EXACT_WHEN_READ, 1.0, self.lines[index], self.sizes[index], 0)
        return LocatedHunk(hunk, match)

    def tier_names(self) -> tuple[str, ...]:
        """Each located hunk's tier name, in order, without making them (all exact)."""
        return (EXACT_WHEN_READ.value,) * len(self)

    def lone_counts(self, context: int, joined_limit: int | None, counted: object) -> tuple[int, int] | None:
        """What ``diff_counts.lone_exact_hunks`` and the counting of its result give, from the
        table: (added, removed) when each hunk is a diff block of its own (or a piece of one
        block of more than ``joined_limit`` hunks); None when a diff must count them.

        Each hunk here is exact, on whole lines, its span its old text and its new text as
        written (checked when it was located); what is left to check is how far apart they
        are, and each hunk's counts: the parser's (``changed_lines``) or ``counted(old, new)``.
        """
        if not self.whole:
            return None
        lines, sizes = self.lines, self.sizes
        previous_end = -2 * context - 1
        joined = 1
        for index in range(len(lines)):
            line = lines[index]
            if line - previous_end > 2 * context:
                if 1 < joined <= (joined_limit or 0):
                    return None
                joined = 1
            elif joined_limit is None or line < previous_end:
                return None
            else:
                joined += 1
            previous_end = line + sizes[index]
        if 1 < joined <= (joined_limit or 0):
            return None
        hunks = self.hunks
        known = getattr(hunks, "changed_lines", None)
        added = removed = 0
        for index in range(len(lines)):
            pair = known(index) if known is not None else hunks[index].changed_lines
            if pair is None:
                hunk = hunks[index]
                pair = counted(hunk.old, hunk.new)  # type: ignore[operator]
            added += pair[0]
            removed += pair[1]
        return added, removed
