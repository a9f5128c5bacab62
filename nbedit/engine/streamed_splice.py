"""``exact_run.located_table`` over a file read in chunks: a big file's hunks located without holding it.

A diff of a big file, made from it, has every hunk at the line it names. ``located_table`` finds
them in the whole file's bytes; this finds them in the same bytes as they are read, a chunk at
a time, so the planner never holds the file (its caller hashes the chunks meanwhile, and the
writer and the history prove the file unchanged by that hash: ``storage.streamed_file``).

It is the same search with the same answer: for each hunk, in order, the first exact occurrence
of its old text after the end of the previous one must start a line, and that line must be the
one its header names. A window of the file is kept from where the search goes on: what no
occurrence can start in any more is let go (its newlines counted), and the next chunk is read
when the window does not hold the old text. The bytes must be ASCII without a NUL (what the
planner's byte splice asks of a whole file: its offsets are the text's). None when any of that
is not so: the caller reads the file whole and plans it as usual.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence

from nbedit.engine.exact_run import hunk_texts, placed_by_line, shared_ends
from nbedit.engine.models import Hunk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from nbedit.engine.hunk_table import LocatedTable
else:
    Protocol = object

__all__ = ["located_in_chunks"]

_BATCH = 1 << 18  # bytes of new bytes handed to ``after`` at a time (a hash on another thread takes them)

Spans = tuple[array, array, bytes, array]  # span starts, span ends, new bytes, cuts in them


class Hasher(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...


def located_in_chunks(
    chunks: Iterable[bytes], hunks: Sequence[Hunk], after: Hasher | None = None, size: int | None = None
) -> tuple[LocatedTable, Spans] | None:
    """(the located hunks, the trimmed spans their new bytes replace) of a file read as ``chunks``;
    every chunk is taken (so a hasher of them sees every byte), unless the answer is None.
    ``after``: a hash (``update``) fed the new bytes in order as they are made, in batches (it
    may hash them on another thread: ``nbedit._hashing.HashedBeside``), so their SHA-256, which the
    history names them by, needs no second pass over the file. ``size``: the
    file's size when it was opened, so offsets take 4 bytes below 4 GiB (a file that grows past
    that while it is read gives None)."""
    from nbedit.engine.hunk_table import LocatedTable, offset_type

    try:
        return _located(iter(chunks), hunks, after, "q" if size is None else offset_type(size), LocatedTable)
    except OverflowError:  # an offset past what the arrays hold: the file grew while it was read
        return None


def _located(
    stream: Iterator[bytes], hunks: Sequence[Hunk], after: Hasher | None, offsets: str, table: type
) -> tuple[LocatedTable, Spans] | None:
    starts, lines, sizes = array(offsets), array(offsets), array(offsets)
    cut_starts, cut_ends, cuts = array(offsets), array(offsets), array("q", [0])
    inserted = bytearray()
    window = b""  # the file's bytes from ``base`` on, as far as they were read
    base = 0
    scan, line = 0, 0  # where the search goes on (the end of the last hunk found, or later), its 0-based line
    before = 10  # the byte before the window (a newline stands in for the file's start)
    ended = False
    whole = True
    fed = 0  # the new bytes are hashed up to this old byte (``after``)
    feed = after.update if after is not None else None
    pending = bytearray()  # new bytes not handed to ``after`` yet: handed over a batch at a time
    for hunk, old, new, start_line in hunk_texts(hunks):
        if not placed_by_line(hunk, old, start_line):
            return None
        needle = old.encode("utf-8", "surrogatepass")  # not ASCII: never in these bytes
        while True:
            position = window.find(needle, scan - base)
            if position != -1:
                break
            if ended:
                return None
            # no occurrence can start before this any more: let it go, its newlines counted
            keep = max(scan - base, len(window) - len(needle) + 1)
            line += window.count(b"\n", scan - base, keep)
            if keep:
                before = window[keep - 1]
                if feed is not None:  # no span starts before this: old bytes kept as they are
                    pending += memoryview(window)[fed - base : keep]
                    fed = base + keep
                    if len(pending) >= _BATCH:
                        feed(bytes(pending))
                        pending.clear()
            block = next(stream, None)
            if block is None:
                ended = True
                continue
            if not block.isascii() or b"\0" in block:
                return None
            base += keep
            scan = base
            window = window[keep:] + block
        if (window[position - 1] if position else before) != 10:  # not at a line start
            return None
        first = line + window.count(b"\n", scan - base, position)
        if first + 1 != start_line:
            return None
        size = old.count("\n")
        whole = whole and (not new or new.endswith("\n"))
        try:
            encoded = new.encode()
        except UnicodeEncodeError:
            return None
        head, tail = shared_ends(needle, encoded)  # only the bytes the hunk really changes
        piece = encoded[head : len(encoded) - tail]
        inserted += piece
        at = base + position
        if feed is not None:
            pending += memoryview(window)[fed - base : position + head]
            pending += piece
            fed = at + len(needle) - tail
        starts.append(at)
        lines.append(first + 1)
        sizes.append(size)
        cut_starts.append(at + head)
        cut_ends.append(at + len(needle) - tail)
        cuts.append(len(inserted))
        scan, line = at + len(needle), first + size
    if not starts:
        return None
    if feed is not None:
        pending += memoryview(window)[fed - base :]
        feed(bytes(pending))
    for block in stream:  # the rest of the file: checked, and seen by whoever hashes the chunks
        if not block.isascii() or b"\0" in block:
            return None
        if feed is not None:
            feed(block)
    return table(hunks, starts, lines, sizes, whole), (cut_starts, cut_ends, bytes(inserted), cuts)
