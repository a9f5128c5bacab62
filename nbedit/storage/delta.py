"""Deltas between two versions of a file, and cheap replay of delta chains.

An edit usually changes a few lines in the middle of a file, so the history stores
a new version as ``(prefix_length, suffix_length, middle)`` against the version it
replaced: keep the first ``prefix_length`` bytes of the base, then ``middle``, then
the last ``suffix_length`` bytes of the base. Storage therefore grows with the size
of the change, not of the file.

Why not a real diff (difflib, xdelta)? A line diff of a 10 MB file costs seconds
in Python, and an edit made through nbedit is almost always one contiguous region
(or a few close ones), which prefix/suffix trimming captures well.

A patch of many spread-out hunks (900 hunks over a 4 MB file) is one region from its
first hunk to its last, so it gets a *region delta* instead (``Regions``): the byte
spans of the base each hunk replaced and what replaced them. The planner already
knows them, so nothing is scanned; ``region_delta`` only checks that the spans,
replayed on the base, give the target exactly (one compare per piece, no copy), and
refuses them otherwise. Stored, a region delta is a table of little-endian 64-bit
(start, end, length) triples, then the replacements one after another.

The common prefix is found by binary search: each probe compares only the window
still in doubt, as ``b.startswith(memoryview(a)[low:middle], low)``, one C
``memcmp`` with no copy of either side (slicing the bytes would copy both windows,
ten times slower on a 50 MB notebook; ``memoryview`` equality compares item by
item, slower still), so the total work is about one pass over the data.

Replaying a chain of deltas never materialises the intermediate versions: a version
is kept as a list of pieces (memoryviews into the keyframe and into the middles), a
delta only cuts and splices that short list, and the bytes are joined once at the
end. Restoring version 100 of a 10 MB file costs one decompression and one join.
(A list grown past a few thousand pieces by region deltas is joined once and started
again, so a long chain of 900-region deltas stays linear.)
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence

from nbedit._dataclass import dataclass, field

try:  # bisect's own function, without bisect.py (start-up)
    from _bisect import bisect_right
except ImportError:  # an interpreter without the C module
    from bisect import bisect_right

__all__ = [
    "Delta",
    "Regions",
    "apply_deltas",
    "common_prefix_length",
    "common_suffix_length",
    "decode_regions",
    "make_delta",
    "region_delta",
]

_JOIN_PIECES = 4096  # a piece list longer than this is joined before the next delta cuts it


@dataclass(frozen=True, slots=True)
class Delta:
    """``base[:prefix] + middle + base[len(base) - suffix:]`` gives the new version."""

    prefix: int
    suffix: int
    middle: bytes


def common_prefix_length(first: bytes, second: bytes) -> int:
    low, high = 0, min(len(first), len(second))
    view = memoryview(first)
    # Invariant: first[:low] == second[:low], and they differ somewhere before high + 1.
    while low < high:
        middle = (low + high + 1) // 2
        if second.startswith(view[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix_length(first: bytes, second: bytes, *, limit: int | None = None) -> int:
    """Length of the common suffix, at most ``limit`` bytes (to keep it from overlapping a prefix)."""
    high = min(len(first), len(second))
    if limit is not None:
        high = min(high, limit)
    low = 0
    view = memoryview(first)
    first_end, second_end = len(first), len(second)
    while low < high:
        middle = (low + high + 1) // 2
        if second.endswith(view[first_end - middle : first_end - low], 0, second_end - low):
            low = middle
        else:
            high = middle - 1
    return low


def make_delta(base: bytes, target: bytes) -> Delta:
    prefix = common_prefix_length(base, target)
    suffix = common_suffix_length(base, target, limit=min(len(base), len(target)) - prefix)
    return Delta(prefix, suffix, target[prefix : len(target) - suffix])


@dataclass(frozen=True, slots=True)
class Regions:
    """``spans`` of the base, in order and apart, replaced: (start, end, replacement) each.

    ``spans`` may be a sequence that makes each replacement when read (``engine.spans.EncodedSpans``):
    the delta is then encoded piece by piece (``chunks``), and never held whole.
    """

    spans: Sequence[tuple[int, int, bytes | memoryview]]
    # the stored table in native byte order (count, then start, end, length per span), when
    # ``region_delta`` made it while it checked the spans (one pass over them less)
    table: array | None = field(default=None, compare=False, repr=False)

    def _table(self) -> array:
        if self.table is not None:
            return self.table
        numbers = array("Q", [len(self.spans)])
        for start, end, replacement in self.spans:
            numbers.extend((start, end, len(replacement)))
        return numbers

    @property
    def payload(self) -> int:
        return sum(self._table()[3::3])

    @property
    def size(self) -> int:
        """The length of ``encode()``."""
        table = self._table()
        return 8 * len(table) + sum(table[3::3])

    def encode(self) -> bytes:
        return b"".join(self.chunks())

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes | memoryview]:
        """``encode()`` in pieces of about ``size`` bytes, the table first (a view of its array, not
        a copy: 2.4 MB for 100,000 spans): what a compressor takes one after another, so a delta
        of 100,000 spans is never held whole."""
        numbers = self._table()
        if sys.byteorder == "big":
            numbers = array("Q", numbers)
            numbers.byteswap()
        yield memoryview(numbers).cast("B")
        payload = getattr(self.spans, "payload", None)  # spans whose new bytes lie in order in one buffer
        if payload is not None:  # (``engine.spliced``): that buffer, not an object a span
            yield payload()
            return
        group: list[bytes | memoryview] = []
        grouped = 0
        for _, _, replacement in self.spans:
            group.append(replacement)
            grouped += len(replacement)
            if grouped >= size:
                yield b"".join(group)
                group, grouped = [], 0
        if group:
            yield b"".join(group)


def decode_regions(data: bytes) -> Regions:
    """The ``Regions`` stored as ``data``; ``ValueError`` when the bytes are not a region table."""
    if len(data) < 8:
        raise ValueError("region delta too short")
    count = int.from_bytes(data[:8], "little")
    table_end = 8 + 24 * count
    if count > len(data) or table_end > len(data):
        raise ValueError("region delta table cut short")
    numbers = array("Q")
    numbers.frombytes(data[8:table_end])
    if sys.byteorder == "big":
        numbers.byteswap()
    view = memoryview(data)
    spans: list[tuple[int, int, bytes | memoryview]] = []
    position = table_end
    previous_end = 0
    for index in range(0, 3 * count, 3):
        start, end, length = numbers[index], numbers[index + 1], numbers[index + 2]
        if start < previous_end or end < start or position + length > len(data):
            raise ValueError("region delta spans out of order")
        spans.append((start, end, view[position : position + length]))
        position += length
        previous_end = end
    if position != len(data):
        raise ValueError("region delta has trailing bytes")
    return Regions(tuple(spans))


def region_delta(base: bytes, target: bytes, spans: Sequence[tuple[int, int, bytes]]) -> Regions | None:
    """``spans`` as a delta from ``base`` to ``target``, or None if replaying them does not give ``target``.

    ``target`` may be new bytes not joined yet (an object with ``replays(base, spans)``,
    ``engine.spliced.Spliced``): it is made of exactly such spans, and says if these are they.

    The spans come from the caller (the planner's hunks, mapped to bytes); they are
    trusted only after this check, so a wrong mapping can cost a bigger delta, never
    a wrong version.
    """
    replays = getattr(target, "replays", None)
    if replays is not None:  # new bytes not joined (``engine.spliced``): the spans they are made of?
        if not replays(base, spans):
            return None
        numbers = array("Q", [len(spans)])
        for start, end, replacement in spans:
            numbers.extend((start, end, len(replacement)))
        return Regions(tuple(spans) if isinstance(spans, (tuple, list)) else spans, numbers)
    # Compared piece by piece with ``startswith`` at an offset: a C memcmp against a
    # memoryview of the base, with no joined copy of the target.
    if not isinstance(base, (bytes, bytearray, memoryview)):
        base = base.join()  # a big file's old bytes not held (``storage.streamed_file``): read, checked
    view = memoryview(base)
    cursor = 0  # in base
    position = 0  # in target
    numbers = array("Q", [len(spans)])  # the stored table, made on the way
    for start, end, replacement in spans:
        if start < cursor or end < start or end > len(base):
            return None
        if not target.startswith(view[cursor:start], position):
            return None
        position += start - cursor
        if not target.startswith(replacement, position):
            return None
        position += len(replacement)
        cursor = end
        numbers.extend((start, end, len(replacement)))
    if len(target) - position != len(base) - cursor or not target.startswith(view[cursor:], position):
        return None
    # a tuple or list is kept as a tuple; a sequence that makes its spans when read is kept as it is
    return Regions(tuple(spans) if isinstance(spans, (tuple, list)) else spans, numbers)


class _Pieces:
    """A version as a list of memoryviews, with the offset each starts at (for cutting by bisection)."""

    def __init__(self, pieces: list[memoryview]) -> None:
        self.pieces = [piece for piece in pieces if len(piece)]
        self.starts: list[int] = []
        offset = 0
        for piece in self.pieces:
            self.starts.append(offset)
            offset += len(piece)
        self.length = offset

    def cut(self, start: int, stop: int, into: list[memoryview]) -> None:
        """Append the pieces covering byte offsets [start, stop) to ``into``."""
        if stop <= start:
            return
        index = max(bisect_right(self.starts, start) - 1, 0)
        while index < len(self.pieces) and self.starts[index] < stop:
            piece_start = self.starts[index]
            piece = self.pieces[index]
            into.append(piece[max(start - piece_start, 0) : min(stop - piece_start, len(piece))])
            index += 1


def apply_deltas(keyframe: bytes, deltas: Iterable[Delta | Regions]) -> bytes:
    """Replay ``deltas`` (oldest first) on top of ``keyframe``; ``ValueError`` if one does not fit."""
    current = _Pieces([memoryview(keyframe)])
    for delta in deltas:
        pieces: list[memoryview] = []
        if isinstance(delta, Delta):
            if delta.prefix + delta.suffix > current.length:
                raise ValueError("delta does not fit its base")
            current.cut(0, delta.prefix, pieces)
            pieces.append(memoryview(delta.middle))
            current.cut(current.length - delta.suffix, current.length, pieces)
        else:
            cursor = 0
            for start, end, replacement in delta.spans:
                if start < cursor or end > current.length:
                    raise ValueError("region delta does not fit its base")
                current.cut(cursor, start, pieces)
                pieces.append(memoryview(replacement))
                cursor = end
            current.cut(cursor, current.length, pieces)
        if len(pieces) > _JOIN_PIECES:
            pieces = [memoryview(b"".join(pieces))]
        current = _Pieces(pieces)
    if len(current.pieces) == 1 and current.pieces[0].obj is keyframe and len(keyframe) == current.length:
        return keyframe
    return b"".join(current.pieces)
