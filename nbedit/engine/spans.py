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
"""

from __future__ import annotations

import codecs
from itertools import repeat
from operator import attrgetter, le

from nbedit.engine.models import FilePlan, undecoded_before

__all__ = ["Span", "byte_spans"]

Span = tuple[int, int, bytes]  # (start, end, replacement): data[start:end] becomes replacement

_SINGLE_BYTE = frozenset({"cp1252", "iso8859-1", "iso8859-15", "ascii"})
_MATCH, _START, _END = attrgetter("match"), attrgetter("start"), attrgetter("end")
_REPLACEMENT = attrgetter("replacement")


def byte_spans(file_plan: FilePlan) -> tuple[Span, ...] | None:
    """The byte spans of ``file_plan.before_bytes`` its hunks replace, in order; None when unknown."""
    data = file_plan.before_bytes
    if file_plan.notebook or not file_plan.hunks or data is None or file_plan.after_bytes is None:
        return None
    encoding = file_plan.encoding or "utf-8"
    matches = list(map(_MATCH, file_plan.hunks))
    starts, ends = list(map(_START, matches)), list(map(_END, matches))
    if not all(map(le, zip(starts, ends), zip(starts[1:], ends[1:]))):  # a diff's hunks are in order
        order = sorted(range(len(matches)), key=list(zip(starts, ends)).__getitem__)
        matches = [matches[index] for index in order]
        starts, ends = [starts[index] for index in order], [ends[index] for index in order]
    replacements = list(map(_REPLACEMENT, matches))
    try:
        if encoding in _SINGLE_BYTE:
            return tuple(zip(starts, ends, map(str.encode, replacements, repeat(encoding))))
        if encoding != "utf-8":
            return None
        # one byte per character (and no BOM): the offsets carry over. A "before" the planner left
        # undecoded is such a file's bytes (``models.undecoded_before``), checked ASCII already
        if undecoded_before(file_plan) is data or data.isascii():
            return tuple(zip(starts, ends, map(str.encode, replacements)))
        before = file_plan.before  # read only here: an ASCII file's text need not be decoded
        if before is None:
            return None
        offset = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        if before.isascii():  # one byte per character: the offsets carry over
            return tuple(
                (offset + match.start, offset + match.end, match.replacement.encode("utf-8"))
                for match in matches
            )
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
