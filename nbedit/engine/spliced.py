"""A big file's new bytes, kept as the old bytes and the spans that replace parts of them.

A patch of 100,000 hunks rewrites an 80 MB file in 100,000 places. Joined, the new bytes are
one more copy of the file next to the old one (which the writer's stale check and the
history's snapshot need anyway): 2.3x the patch, for a result that is only written once and
hashed once. ``Spliced`` is that result unjoined: the old bytes, and the located matches
(in file order, apart) whose replacements go in. The writer writes it piece by piece into the
temporary copy (``chunks``, at most about a mebibyte joined at a time), the history hashes it
piece by piece and stores it as the region delta it is (``replays``), and whoever reads
``FilePlan.after_bytes`` gets it joined, once (``join``; ``models.joined_when_read``).

The spans are held as arrays (where each starts and ends in the old bytes, where its new
bytes start in one buffer of them all), not as an object a span: a diff's hunk span is
trimmed to the part its new text changes (``exact_run.located_table``), so the buffer holds
the changed lines alone, not every hunk's context again. The history stores these very
spans as the version's region delta (``spans``).

Only an ASCII UTF-8 file whose hunks are all exactly in place is planned so (its character
offsets are its byte offsets: ``engine.exact_run``); a new text is encoded as UTF-8 when its
piece is made.
"""

from __future__ import annotations

import io
from array import array
from collections.abc import Iterator, Sequence

from nbedit.engine.models import Match

__all__ = ["CHUNK", "Spliced"]

CHUNK = 1 << 18  # bytes; the pieces between two big kept slices are joined up to about this size (256 KiB:
# the writer, the hasher and the history each hold a group at once; 1 MiB groups cost 0.1x a big patch more)


class Spliced:
    """``data`` with ``data[starts[i]:ends[i]]`` replaced by ``inserted[cuts[i]:cuts[i + 1]]``
    for each span, in order and apart; ``len()`` is the size of the joined bytes.

    ``Spliced(data, matches)`` takes located matches (each replacement encoded as UTF-8);
    ``Spliced.of_spans`` the arrays themselves."""

    __slots__ = ("_joined", "cuts", "data", "ends", "inserted", "known_fingerprint", "size", "starts")

    def __init__(self, data: bytes, matches: Sequence[Match] = ()) -> None:
        """Raises ``UnicodeEncodeError`` for a replacement UTF-8 cannot encode (a lone surrogate)."""
        starts, ends, cuts = array("q"), array("q"), array("q", [0])
        inserted = bytearray()
        for match in matches:
            inserted += match.replacement.encode()
            starts.append(match.start)
            ends.append(match.end)
            cuts.append(len(inserted))
        self._set(data, starts, ends, bytes(inserted), cuts)

    @classmethod
    def of_spans(cls, data: bytes, starts: array, ends: array, inserted: bytes, cuts: array) -> Spliced:
        """The spans as arrays: ``cuts`` has one more entry than ``starts`` (0 first)."""
        spliced = cls.__new__(cls)
        spliced._set(data, starts, ends, inserted, cuts)
        return spliced

    def _set(self, data: bytes, starts: array, ends: array, inserted: bytes, cuts: array) -> None:
        self.data = data
        self.starts = starts
        self.ends = ends
        self.inserted = inserted
        self.cuts = cuts
        self.size = len(data) + len(inserted) - sum(ends) + sum(starts)
        self._joined: bytes | None = None
        # the SHA-256 of the joined bytes when the planner hashed them as it made the spans
        # (``engine.streamed_splice``: from old bytes it proved by their own SHA-256)
        self.known_fingerprint: str | None = None

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<Spliced {self.size:,} bytes: {len(self.starts):,} spans of {len(self.data):,} bytes>"

    def pieces(self) -> Iterator[bytes | memoryview]:
        """The kept slices (views of ``data``) and the new bytes of each span, in order."""
        if not isinstance(self.data, (bytes, bytearray, memoryview)):
            yield from self._streamed_pieces()
            return
        view, new, cursor = memoryview(self.data), memoryview(self.inserted), 0
        cuts = self.cuts
        for index, (start, end) in enumerate(zip(self.starts, self.ends)):  # noqa: B905 - same length
            yield view[cursor:start]
            yield new[cuts[index] : cuts[index + 1]]
            cursor = end
        yield view[cursor:]

    def _streamed_pieces(self) -> Iterator[bytes | memoryview]:
        """``pieces`` of old bytes not held (``storage.streamed_file``): cut from its chunks as they
        are read (which raise ``StaleFile`` if the file no longer holds the planned bytes)."""
        starts, ends, cuts = self.starts, self.ends, self.cuts
        new = memoryview(self.inserted)
        count = len(starts)
        index = cursor = position = 0  # the next span; the next old byte to keep or skip; the block's start
        for block in self.data.chunks():
            block_end = position + len(block)
            view = memoryview(block)
            while cursor < block_end:
                if index < count and starts[index] <= cursor:
                    if starts[index] == cursor and (index == 0 or ends[index - 1] <= cursor):
                        yield new[cuts[index] : cuts[index + 1]]  # the span's new bytes, once
                    if ends[index] > block_end:  # its old bytes go on in the next block
                        cursor = block_end
                        break
                    cursor = ends[index]
                    index += 1
                    continue
                stop = min(starts[index], block_end) if index < count else block_end
                yield view[cursor - position : stop - position]
                cursor = stop
            position = block_end
        while index < count:  # spans at the very end (an insertion after the last line)
            yield new[cuts[index] : cuts[index + 1]]
            index += 1

    def spans(self) -> _Spans:
        """The spans as the history stores them: (start, end, new bytes), in order."""
        return _Spans(self)

    def chunks(self, size: int = CHUNK) -> Iterator[bytes | memoryview]:
        """The joined bytes in order, in pieces: a kept slice of ``size`` bytes or more as a view of
        ``data`` (no copy), the small pieces between joined up to about ``size`` bytes."""
        group: list[bytes | memoryview] = []
        grouped = 0
        for piece in self.pieces():
            if len(piece) >= size:
                if group:
                    yield b"".join(group)
                    group, grouped = [], 0
                yield piece
                continue
            group.append(piece)
            grouped += len(piece)
            if grouped >= size:
                yield b"".join(group)
                group, grouped = [], 0
        if group:
            yield b"".join(group)

    def join(self) -> bytes:
        """The new bytes, made once (into one buffer of their size: no list of every piece held)."""
        if self._joined is None:
            buffer = io.BytesIO()
            if self.size:
                buffer.seek(self.size - 1)
                buffer.write(b"\0")  # the buffer at its final size: the writes below never grow it
                buffer.seek(0)
            write = buffer.write
            for piece in self.pieces():
                write(piece)
            if buffer.tell() != self.size:  # pragma: no cover - the sizes are the pieces'
                raise AssertionError("spliced pieces do not add up to their size")
            self._joined = buffer.getvalue()  # that very buffer: no copy
        return self._joined

    def decode(self) -> str:
        return self.join().decode()

    def fingerprint(self) -> str:
        """The SHA-256 of the joined bytes, hashed piece by piece (``engine.text.fingerprint``)."""
        from nbedit._hashing import openssl_sha256  # a file this big is hashed by OpenSSL's SHA-256

        if self.known_fingerprint is not None:
            return self.known_fingerprint
        if self._joined is not None:
            return openssl_sha256(self._joined).hexdigest()
        digest = openssl_sha256()
        for chunk in self.chunks():
            digest.update(chunk)
        return digest.hexdigest()

    def same_as(self, data: bytes) -> bool:
        """True if the joined bytes would be exactly ``data`` (compared piece by piece, no join)."""
        if self.size != len(data):
            return False
        position = 0
        for piece in self.pieces():
            if not data.startswith(piece, position):
                return False
            position += len(piece)
        return True

    def replays(self, base: bytes, spans: Sequence[tuple[int, int, bytes | memoryview]]) -> bool:
        """True if ``spans`` replayed on ``base`` give these bytes: ``base`` is the very ``data``
        and the spans are these (``spans()``) or equal to them (a different but equivalent set
        is not recognised: the caller then compares the joined bytes)."""
        if base is not self.data or len(spans) != len(self.starts):
            return False
        if isinstance(spans, _Spans) and spans.spliced is self:
            return True
        return all(map(tuple.__eq__, map(tuple, spans), _Spans(self)))


class _Spans:
    """``Spliced.spans()``: a sequence of (start, end, new bytes), each made when read."""

    __slots__ = ("spliced",)

    def __init__(self, spliced: Spliced) -> None:
        self.spliced = spliced

    def __len__(self) -> int:
        return len(self.spliced.starts)

    def __getitem__(self, index: int) -> tuple[int, int, bytes]:
        spliced = self.spliced
        cuts = spliced.cuts
        if index < 0:
            index += len(self)
        return spliced.starts[index], spliced.ends[index], spliced.inserted[cuts[index] : cuts[index + 1]]

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        spliced = self.spliced
        inserted, cuts = spliced.inserted, spliced.cuts
        for index, (start, end) in enumerate(zip(spliced.starts, spliced.ends)):  # noqa: B905
            yield start, end, inserted[cuts[index] : cuts[index + 1]]

    def payload(self) -> memoryview:
        """Every span's new bytes, in order, as one view: what a region delta stores after its table."""
        return memoryview(self.spliced.inserted)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (_Spans, tuple, list)):
            return len(self) == len(other) and all(map(tuple.__eq__, self, map(tuple, other)))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<spans of {self.spliced!r}>"
