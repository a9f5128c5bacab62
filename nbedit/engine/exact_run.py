"""The fast path of a diff whose hunks all stand exactly at the lines they name.

Most diffs are applied to the file they were made from: every hunk's old text is at its
header's line, in file order. One tight loop finds them (``exact_in_place``: a ``find`` and a
``count`` from the previous hunk, no index of the file, no matcher), and since such hunks
cannot overlap they are spliced without a sort or an overlap check, in the text or, for an
ASCII UTF-8 file, straight in the file's bytes (``edit_bytes``). A hunk that is not so hands
the rest of the diff to the full search (``engine/locate_hunks.py``).
"""

from __future__ import annotations

from _operator import attrgetter  # the operator module's C functions, without operator.py (start-up)
from itertools import repeat

from nbedit._dataclass import made_in_bulk
from nbedit.engine.models import EXACT_WHEN_READ, Hunk, LocatedHunk, Match
from nbedit.engine.text import UTF8, Codec

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import TypeVar

    from nbedit.engine.hunk_table import LocatedTable
    from nbedit.engine.spliced import Spliced

    Item = TypeVar("Item")

__all__ = ["STREAMED_FROM", "edit_bytes", "exact_in_place", "interleaved", "kept_slices", "located_table"]

# bytes; from this file size the new bytes are handed over unjoined (``engine.spliced``: written
# and hashed piece by piece, joined only if read: one copy of the file less at the peak). Below it
# one ``join`` is quicker (on a 4 MB file with 918 hunks the pieces cost ~3% more CPU), and small
STREAMED_FROM = 4 << 20
# A text searched is this long at most when a hunk is expected within ``_NEAR`` of where the last
# one ended: CPython searches a text under 2,500 characters without setting up for the whole
# needle (the two-way search costs about a microsecond of that for a hunk of a few lines)
_WINDOW = 2_400
_NEAR = 1_200
_NEW = attrgetter("new")


def exact_in_place(
    text: str | bytes, hunks: Sequence[Hunk], data: bytes | None = None
) -> tuple[list[LocatedHunk], tuple[int, int]]:
    """The leading hunks of a diff that are exactly at the lines they claim.

    What ``_exact_at_expected_line`` finds for each hunk while every hunk before it
    was found so (its offset then stays 0), in one tight loop: the first exact
    occurrence after the previous hunk, at the line the header names. Such hunks
    are in file order and cannot overlap, so ``kept_slices`` and ``interleaved`` splice
    them without a sort or an overlap check. Returns the located hunks and the (offset, line)
    where the last one ended; the caller goes on from the first hunk that is not
    so, with the full search.

    ``text`` may be the bytes of an ASCII UTF-8 text (the same offsets; each old text is
    then looked for encoded), and ``data`` the bytes of a ``str`` text when they have its
    offsets: the newlines between hunks are then counted in the bytes (``bytes.count`` of
    one byte is about three times quicker than ``str.count`` over the same 4 MB).
    """
    found: list[Hunk] = []  # the hunks found, and where: their matches are made at once after
    starts: list[int] = []
    ends: list[int] = []
    lines: list[int] = []
    sizes: list[int] = []
    find = text.find
    in_bytes = isinstance(text, bytes)
    newline: str | bytes = b"\n" if in_bytes else "\n"
    counted = text if data is None else data
    count, counted_newline = counted.count, b"\n" if isinstance(counted, bytes) else "\n"
    offset = line = 0  # the end of the last hunk found: a line start, and its 0-based line
    for hunk in hunks:
        old = hunk.old
        if (
            hunk.start_line is None
            or not hunk.whole_lines
            or hunk.replace_all
            or hunk.anchors
            or hunk.at_end
            or hunk.alternatives
            or not old.endswith("\n")
        ):
            break
        needle = old.encode("utf-8", "surrogatepass") if in_bytes else old  # not ASCII: not found
        size = old.count("\n")
        # the lines before it at the old text's own line length: a hunk that should start near
        # is first looked for in a short window (a search of a long text sets up for the whole
        # needle first, as long as the short search takes); the first occurrence either way
        if (hunk.start_line - line) * len(needle) < _NEAR * size:
            position = find(needle, offset, offset + _WINDOW)  # type: ignore[arg-type]
            if position == -1:
                position = find(needle, offset)  # type: ignore[arg-type]
        else:
            position = find(needle, offset)  # type: ignore[arg-type]
        if position == -1 or (position and text[position - 1 : position] != newline):
            break
        first = line + count(counted_newline, offset, position)  # type: ignore[arg-type]
        if first + 1 != hunk.start_line:
            break
        end = position + len(needle)
        found.append(hunk)
        starts.append(position)
        ends.append(end)
        lines.append(first + 1)
        sizes.append(size)
        offset, line = end, first + size
    # the span is the old text itself, line endings included, so the new text goes in as written;
    # each field set for every match at once (two ``__init__`` calls a hunk were half of this loop)
    count = len(found)
    news = list(map(_NEW, found))
    exact, score, moved, explanation = repeat(EXACT_WHEN_READ), repeat(1.0), repeat(0), repeat(())
    matches = made_in_bulk(Match, count, starts, ends, news, exact, score, lines, sizes, moved, explanation)
    return made_in_bulk(LocatedHunk, count, found, matches, repeat(None)), (offset, line)


def kept_slices(located: Sequence[LocatedHunk]) -> list[slice]:
    """The slices of a text that hunks in file order, not overlapping, leave as they are."""
    starts = [item.match.start for item in located]
    ends = [item.match.end for item in located]
    return list(map(slice, [0, *ends], [*starts, None]))


def interleaved(kept: Sequence[Item], insertions: Sequence[Item]) -> list[Item]:
    """``kept[0], insertions[0], kept[1], ...``: what one join turns into the new text."""
    pieces = [*kept, *insertions]  # the right length; every item is overwritten
    pieces[0::2] = kept
    pieces[1::2] = insertions
    return pieces


def edit_bytes(
    text: str | None, data: bytes, codec: Codec, hunks: Sequence[Hunk], *, ascii_bytes: bool = False
) -> tuple[tuple[LocatedHunk, ...] | LocatedTable, bytes | Spliced] | None:
    """The located hunks and new bytes of a diff whose hunks are all exactly in place, spliced in the file's bytes.

    When a UTF-8 file is all ASCII (as many characters as bytes), an offset in the
    text is the same offset in the bytes: the new bytes are cut from a memoryview
    of the old ones (no copies) around the hunks' encoded new texts, joined once.
    That is one big copy less than joining the text and encoding it, and no copies
    of the text between the hunks; the new text is decoded from the new bytes when
    it is first read (``decoded_when_read``). From ``STREAMED_FROM`` bytes the new
    bytes are not joined at all: a ``Spliced`` (``engine.spliced``) stands for them.
    None when that is not so (the caller takes ``edit_text``). ``text`` None: the caller
    let the text go (the bytes are all ASCII, checked here unless ``ascii_bytes`` says the
    caller did); the hunks are then found in
    the bytes themselves.
    """
    if codec != UTF8 or not hunks:
        return None
    if len(text) != len(data) if text is not None else not (ascii_bytes or data.isascii()):
        return None
    if len(data) >= STREAMED_FROM or hasattr(hunks, "texts"):
        # a big file; or a big patch's hunks, kept as places (``engine.hunk_table``): located from
        # their texts without making each hunk, and spliced as the trimmed spans the history records
        return located_table(data, hunks)
    located, _ = exact_in_place(data, hunks) if text is None else exact_in_place(text, hunks, data)
    if len(located) != len(hunks):
        return None
    try:
        # the located hunks' own (a HunkTable's hunks are made once, in ``exact_in_place``)
        insertions: list[bytes | memoryview] = [item.hunk.new.encode() for item in located]
    except UnicodeEncodeError:  # a lone surrogate: ``encode`` says what to do about it
        return None
    view = memoryview(data)
    kept: list[bytes | memoryview] = [view[cut] for cut in kept_slices(located)]
    return tuple(located), b"".join(interleaved(kept, insertions))


def located_table(data: bytes, hunks: Sequence[Hunk]) -> tuple[LocatedTable, Spliced] | None:
    """``exact_in_place`` of every hunk in the bytes of an ASCII UTF-8 text, kept as arrays.

    The same search, hunk by hunk (the first exact occurrence after the previous hunk, at
    the line its header names), but what is kept of each hunk is numbers: where it landed
    (a ``LocatedTable``, which makes each ``LocatedHunk`` when read) and the part of the
    span its new bytes really change (the bytes both share at each end left out), with those
    new bytes appended to one buffer (a ``Spliced``: the hunk's context lines are the file's
    own, so only the changed middle is kept). A hunk of a ``HunkTable`` is never made here:
    its old and new texts are, once, and let go. None when some hunk is not so (the caller
    goes to the full search), or a new text cannot be encoded (a lone surrogate: ``edit_text``
    says what to do about it).
    """
    from array import array

    from nbedit.engine.hunk_table import LocatedTable, offset_type
    from nbedit.engine.spliced import Spliced

    offsets = offset_type(len(data))  # offsets and line numbers in the file: 4 bytes each up to 4 GiB
    starts, lines, sizes = array(offsets), array(offsets), array(offsets)
    cut_starts, cut_ends, cuts = array(offsets), array(offsets), array("q", [0])
    inserted = bytearray()
    find, count = data.find, data.count
    offset = line = 0  # the end of the last hunk found: a line start, and its 0-based line
    whole = True
    for hunk, old, new, start_line in hunk_texts(hunks):
        if not placed_by_line(hunk, old, start_line):
            return None
        needle = old.encode("utf-8", "surrogatepass")  # not ASCII: not in these bytes
        size = old.count("\n")
        # a hunk expected near is looked for in a short window first (as ``exact_in_place`` does)
        if (start_line - line) * len(needle) < _NEAR * size:  # type: ignore[operator]
            position = find(needle, offset, offset + _WINDOW)
            if position == -1:
                position = find(needle, offset)
        else:
            position = find(needle, offset)
        if position == -1 or (position and data[position - 1] != 10):  # not at a line start
            return None
        first = line + count(b"\n", offset, position)
        if first + 1 != start_line:
            return None
        whole = whole and (not new or new.endswith("\n"))
        try:
            encoded = new.encode()
        except UnicodeEncodeError:
            return None
        head, tail = shared_ends(needle, encoded)
        inserted += encoded[head : len(encoded) - tail]
        starts.append(position)
        lines.append(first + 1)
        sizes.append(size)
        cut_starts.append(position + head)
        cut_ends.append(position + len(needle) - tail)
        cuts.append(len(inserted))
        offset, line = position + len(needle), first + size
    if not starts:
        return None
    return LocatedTable(hunks, starts, lines, sizes, whole), Spliced.of_spans(
        data, cut_starts, cut_ends, bytes(inserted), cuts
    )


def hunk_texts(hunks: Iterable[Hunk]) -> Iterator[tuple[Hunk | None, str, str, int | None]]:
    """(hunk, old, new, start_line) of each hunk; a ``HunkTable``'s from its texts, without making
    each ``Hunk`` (its hunk is None then: a table holds plain line-numbered whole-line hunks only)."""
    texts = getattr(hunks, "texts", None)
    if texts is not None:
        return texts()  # type: ignore[no-any-return]
    return ((hunk, hunk.old, hunk.new, hunk.start_line) for hunk in hunks)


def placed_by_line(hunk: Hunk | None, old: str, start_line: int | None) -> bool:
    """The hunk is whole lines, ends with a newline and is placed by its line number alone (no
    anchors, no alternatives, not replace-all, not "at the end"): one a table may place."""
    if not old.endswith("\n"):
        return False
    return hunk is None or not (
        start_line is None
        or not hunk.whole_lines
        or hunk.replace_all
        or hunk.anchors
        or hunk.at_end
        or hunk.alternatives
    )


def shared_ends(old: bytes, new: bytes) -> tuple[int, int]:
    """How many bytes ``old`` and ``new`` share at their start and then at their end (never
    overlapping): one XOR of each end read as an integer, so a hunk's splice keeps only the bytes
    it really changes."""
    from_bytes = int.from_bytes
    shortest = min(len(old), len(new))
    differ = from_bytes(old[:shortest], "little") ^ from_bytes(new[:shortest], "little")
    head = ((differ & -differ).bit_length() - 1) >> 3 if differ else shortest
    shortest -= head
    differ = from_bytes(old[len(old) - shortest :], "big") ^ from_bytes(new[len(new) - shortest :], "big")
    tail = ((differ & -differ).bit_length() - 1) >> 3 if differ else shortest
    return head, tail
