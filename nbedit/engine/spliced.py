"""A big file's new bytes, kept as the old bytes and the spans that replace parts of them.

A patch of 100,000 hunks rewrites an 80 MB file in 100,000 places. Joined, the new bytes are
one more copy of the file next to the old one (which the writer's stale check and the
history's snapshot need anyway): 2.3x the patch, for a result that is only written once and
hashed once. ``Spliced`` is that result unjoined: the old bytes, and the located matches
(in file order, apart) whose replacements go in. The writer writes it piece by piece into the
temporary copy (``chunks``, at most about a mebibyte joined at a time), the history hashes it
piece by piece and stores it as the region delta it is (``replays``), and whoever reads
``FilePlan.after_bytes`` gets it joined, once (``join``; ``models.joined_when_read``).

Only an ASCII UTF-8 file whose hunks are all exactly in place is planned so (its character
offsets are its byte offsets: ``engine.exact_run``); a new text is encoded as UTF-8 when its
piece is made.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from nbedit.engine.models import Match

__all__ = ["CHUNK", "Spliced"]

CHUNK = 1 << 20  # bytes; the pieces between two big kept slices are joined up to about this size


class Spliced:
    """``data`` with ``data[match.start:match.end]`` replaced by ``match.replacement`` (UTF-8)
    for each match, in order and apart; ``len()`` is the size of the joined bytes."""

    __slots__ = ("_joined", "data", "matches", "size")

    def __init__(self, data: bytes, matches: Sequence[Match]) -> None:
        """Raises ``UnicodeEncodeError`` for a replacement UTF-8 cannot encode (a lone surrogate)."""
        size = len(data)
        for match in matches:
            new = match.replacement
            size += (len(new) if new.isascii() else len(new.encode())) - (match.end - match.start)
        self.data = data
        self.matches = matches
        self.size = size
        self._joined: bytes | None = None

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<Spliced {self.size:,} bytes: {len(self.matches):,} spans of {len(self.data):,} bytes>"

    def pieces(self) -> Iterator[bytes | memoryview]:
        """The kept slices (views of ``data``) and the encoded replacements, in order."""
        view, cursor = memoryview(self.data), 0
        for match in self.matches:
            yield view[cursor : match.start]
            yield match.replacement.encode()
            cursor = match.end
        yield view[cursor:]

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
        and the spans are the matches' own (a different but equivalent set is not recognised:
        the caller then compares the joined bytes)."""
        if base is not self.data or len(spans) != len(self.matches):
            return False
        for (start, end, replacement), match in zip(spans, self.matches, strict=True):
            if start != match.start or end != match.end or replacement != match.replacement.encode():
                return False
        return True
