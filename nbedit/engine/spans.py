"""Where a plan's hunks land in the file's bytes.

The history stores an edit's "after" as the byte spans of the "before" it replaced
(a region delta): a 900-hunk patch of a 4 MB file is then recorded from its hunks,
without comparing or compressing the whole file. The planner knows each hunk as
character offsets into the decoded text; this module turns them into byte offsets
for files whose bytes are exactly their text in UTF-8 (after an optional BOM) or in
a single-byte encoding. Anything else (notebooks, whose hunks live in the cell view;
UTF-16; changes planned as a whole, without located hunks) gets None, and the
history compares the bytes instead. The history checks the spans against the bytes
before it keeps them, so a wrong mapping could only cost space, never a version.

When the offsets carry over (an ASCII file, a single-byte encoding), the spans are an
``EncodedSpans``: the located matches, each replacement encoded only while the spans are
iterated. A 100,000-hunk patch then records its delta without a tuple and an encoded copy
of every new text held at once (about 1.1x the patch), one span at a time. A big file's new
bytes not joined (``engine.spliced``) are made of spans already: those are the ones recorded.
"""

from __future__ import annotations

import codecs
from _operator import attrgetter, le  # the operator module's C functions, without operator.py (start-up)

from nbedit.engine.models import FilePlan, Match, undecoded_before, unjoined_after, unjoined_before

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["EncodedSpans", "Span", "byte_spans"]

Span = tuple[int, int, bytes]  # (start, end, replacement): data[start:end] becomes replacement

_SINGLE_BYTE = frozenset({"cp1252", "iso8859-1", "iso8859-15", "ascii"})
_MATCH, _START, _END = attrgetter("match"), attrgetter("start"), attrgetter("end")
_REPLACEMENT = attrgetter("replacement")


class EncodedSpans:
    """The spans of matches whose offsets carry over to the bytes (shifted by ``offset``, a
    BOM), each replacement encoded with ``encoding`` when the span is read; a sequence of
    ``Span`` that equals any other sequence of the same spans."""

    __slots__ = ("encoding", "matches", "offset")

    def __init__(self, matches: Sequence[Match], encoding: str, offset: int = 0) -> None:
        self.matches = matches
        self.encoding = encoding
        self.offset = offset

    def __len__(self) -> int:
        return len(self.matches)

    def least_payload(self) -> int:
        """At least the bytes of all replacements (each character encodes to one byte or more),
        without encoding any: what tells a region delta that could never pay before it is checked."""
        return sum(map(len, map(_REPLACEMENT, self.matches)))

    def __getitem__(self, index: int) -> Span:
        match = self.matches[index]
        return (self.offset + match.start, self.offset + match.end, match.replacement.encode(self.encoding))

    def __iter__(self) -> Iterator[Span]:
        offset, encoding = self.offset, self.encoding
        for match in self.matches:
            yield offset + match.start, offset + match.end, match.replacement.encode(encoding)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EncodedSpans, tuple, list)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedSpans({len(self)} spans, {self.encoding})"


def byte_spans(file_plan: FilePlan) -> Sequence[Span] | None:
    """The byte spans of ``file_plan.before_bytes`` its hunks replace, in order; None when unknown."""
    data = unjoined_before(file_plan)  # a big file not held: its stand-in (storage.streamed_file)
    after = unjoined_after(file_plan)
    if file_plan.notebook or not file_plan.hunks or data is None or after is None:
        return None
    if getattr(after, "data", None) is data:  # new bytes not joined (engine.spliced): its own spans
        return after.spans()  # type: ignore[no-any-return]
    if not isinstance(data, (bytes, bytearray, memoryview)):
        data = file_plan.before_bytes  # read (and checked) now: the hunks' spans are mapped in them
    encoding = file_plan.encoding or "utf-8"
    matches = list(map(_MATCH, file_plan.hunks))
    starts, ends = list(map(_START, matches)), list(map(_END, matches))
    if not all(
        map(le, zip(starts, ends, strict=True), zip(starts[1:], ends[1:], strict=True))
    ):  # a diff's hunks are in order
        order = sorted(range(len(matches)), key=list(zip(starts, ends, strict=True)).__getitem__)
        matches = [matches[index] for index in order]
    del starts, ends
    try:
        if encoding in _SINGLE_BYTE:
            return _checked(EncodedSpans(matches, encoding))
        if encoding != "utf-8":
            return None
        # one byte per character (and no BOM): the offsets carry over. A "before" the planner left
        # undecoded is such a file's bytes (``models.undecoded_before``), checked ASCII already
        if undecoded_before(file_plan) is data or data.isascii():
            return _checked(EncodedSpans(matches, "utf-8"))
        before = file_plan.before  # read only here: an ASCII file's text need not be decoded
        if before is None:
            return None
        offset = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        if before.isascii():  # one byte per character: the offsets carry over
            return _checked(EncodedSpans(matches, "utf-8", offset))
        spans: list[Span] = []
        character = 0
        byte = offset
        for match in matches:
            start = byte + len(before[character : match.start].encode("utf-8"))
            end = start + len(before[match.start : match.end].encode("utf-8"))
            spans.append((start, end, match.replacement.encode("utf-8")))
            character, byte = match.end, end
        return tuple(spans)
    except UnicodeEncodeError:
        return None


def _checked(spans: EncodedSpans) -> EncodedSpans:
    """``spans`` once every replacement is known to encode (``UnicodeEncodeError`` otherwise,
    as the tuple of encoded spans raised when it was made)."""
    encoding = spans.encoding
    for match in spans.matches:
        text = match.replacement
        if not text.isascii():
            text.encode(encoding)
    return spans
