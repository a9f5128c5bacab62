"""A line-based three-way merge (diff3): keep both sides' changes where they do not overlap.

Rewinding takes back what nbedit wrote while keeping what others wrote since (another
kernel, a person in an editor, a JupyterLab tab's save). That is a three-way merge of
one file: the *base* is what nbedit recorded after its change, *ours* is what the file
was before that change (where the rewind wants to go), *theirs* is the file on disk now.
Lines changed on one side only come from that side; lines changed on both sides the
same way come once; lines changed differently on both sides are a conflict, and so are
two changes that touch (no unchanged line between them), the rule ``diff3`` and git
follow: a merge that splices two edits side by side without a line of agreement between
them guesses, and a rewind must never guess.

The algorithm is the classic one of ``diff3`` (as in bzr's ``merge3``): the lines
base-ours and base-theirs both keep unchanged are *sync regions*; between two sync
regions each side either kept the base or changed it. Lines are compared as bytes with
their line endings (``bytes.splitlines(keepends=True)``), so a merged file is the exact
bytes of its pieces: CRLF, a missing final newline, tabs and any 8-bit encoding come
through untouched. Text with NUL bytes (UTF-16, binary) has no reliable lines and is
not merged here (``mergeable`` says so); the caller treats it as a conflict unless a
side is unchanged.

Pure: bytes in, values out. The matching blocks come from ``difflib`` on the part the
sides do not share at both ends (a rewind of a one-line edit in a long file compares a
few lines, not the file). A part longer than ``diff_counts.ALIGN_LINES`` lines (both sides)
is first cut at lines that stand once on each side, in the same order (patience diff's
anchors, ``resync.aligned_opcodes``), and difflib aligns only the gaps: one difflib call
over all of it costs lines x equal runs, minutes for a file rewritten throughout (issue 27).
Below that size the blocks are difflib's, as before. Above it they can differ from
difflib's longest matches (fewer, or elsewhere among repeated lines), so chunks can fall
elsewhere and more of them can be conflicts; the merge is still exact by diff3's rule: each
block is lines equal on both sides, in order, so an unchanged chunk is equal in all three and
a chunk taken from one side is one where the other side kept the base's lines byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from nbedit._dataclass import dataclass
from nbedit.engine.diff_counts import ALIGN_LINES
from nbedit.engine.models import Hunk, LocatedHunk, Match, Tier
from nbedit.engine.resync import ResyncMatcher, aligned_opcodes
from nbedit.engine.text import common_ends, split_lines

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    ChunkKind = Literal["unchanged", "ours", "theirs", "same", "conflict"]
    Prefer = Literal["ours", "theirs"]

__all__ = ["Chunk", "Conflict", "Merge", "located_hunks", "merge3", "merge_bytes", "mergeable"]

Lines = tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One stretch of the merge. ``kind`` says which side it comes from: ``unchanged`` (all three
    agree), ``ours``/``theirs`` (only that side changed the base), ``same`` (both changed it
    alike), ``conflict`` (both changed it differently). ``base_start`` is its 0-based first
    line in the base."""

    kind: ChunkKind
    base_start: int
    base: Lines
    ours: Lines
    theirs: Lines

    def lines(self, prefer: Prefer | None = None) -> Lines:
        if self.kind in ("unchanged", "theirs", "same"):
            return self.theirs
        if self.kind == "ours":
            return self.ours
        if prefer is None:
            raise ValueError("a conflict has no lines of its own; say which side to prefer")
        return self.ours if prefer == "ours" else self.theirs


@dataclass(frozen=True, slots=True)
class Conflict:
    """Lines both sides changed differently: where (1-based base line) and each side's lines."""

    line: int
    base: Lines
    ours: Lines
    theirs: Lines


@dataclass(frozen=True, slots=True)
class Merge:
    """The chunks of a three-way merge, in order; ``merged`` is None when any conflict remains."""

    chunks: tuple[Chunk, ...]

    @property
    def conflicts(self) -> tuple[Conflict, ...]:
        return tuple(
            Conflict(chunk.base_start + 1, chunk.base, chunk.ours, chunk.theirs)
            for chunk in self.chunks
            if chunk.kind == "conflict"
        )

    @property
    def clean(self) -> bool:
        return all(chunk.kind != "conflict" for chunk in self.chunks)

    @property
    def merged(self) -> bytes | None:
        """The merged bytes, or None when a conflict needs a decision (``resolved``)."""
        return self.resolved() if self.clean else None

    def resolved(self, prefer: Prefer | None = None) -> bytes:
        """The merged bytes, each conflict taken from ``prefer`` (required if there is one)."""
        return b"".join(line for chunk in self.chunks for line in chunk.lines(prefer))

    def with_markers(self, ours_label: str = "rewind", theirs_label: str = "on disk") -> bytes:
        """The merge as text with git-style conflict markers (for showing, never for writing silently)."""
        pieces: list[bytes] = []
        for chunk in self.chunks:
            if chunk.kind != "conflict":
                pieces.extend(chunk.lines())
                continue
            pieces.append(f"<<<<<<< {ours_label}\n".encode())
            pieces.extend(_terminated(chunk.ours))
            pieces.append(b"||||||| recorded by nbedit\n")
            pieces.extend(_terminated(chunk.base))
            pieces.append(b"=======\n")
            pieces.extend(_terminated(chunk.theirs))
            pieces.append(f">>>>>>> {theirs_label}\n".encode())
        return b"".join(pieces)


def _terminated(lines: Lines) -> Lines:
    if lines and not lines[-1].endswith((b"\n", b"\r")):
        return (*lines[:-1], lines[-1] + b"\n")
    return lines


def mergeable(*sides: bytes | None) -> bool:
    """True if every side is bytes without NUL (lines are then what they seem)."""
    return all(side is not None and b"\0" not in side for side in sides)


def _matching_blocks(old: Sequence[bytes], new: Sequence[bytes]) -> list[tuple[int, int, int]]:
    """difflib's matching blocks (ending with the (len, len, 0) sentinel), with the shared
    head and tail found by comparison first so only the middle goes to the matcher."""
    head, tail = common_ends(old, new)
    blocks: list[tuple[int, int, int]] = []
    if head:
        blocks.append((0, 0, head))
    middle_old = old[head : len(old) - tail]
    middle_new = new[head : len(new) - tail]
    if middle_old and middle_new and len(middle_old) + len(middle_new) > ALIGN_LINES:
        for tag, a0, a1, b0, _ in aligned_opcodes(middle_old, middle_new, ALIGN_LINES):
            if tag == "equal":
                blocks.append((a0 + head, b0 + head, a1 - a0))
    elif middle_old and middle_new:
        matcher = SequenceMatcher(None, middle_old, middle_new, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            if size:
                blocks.append((a + head, b + head, size))
    if tail:
        blocks.append((len(old) - tail, len(new) - tail, tail))
    blocks.append((len(old), len(new), 0))
    return blocks


def _sync_regions(
    base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]
) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches of the base both sides keep unchanged: (base start, end, ours start, end,
    theirs start, end), ending with an empty region at the three ends."""
    ours_blocks = _matching_blocks(base, ours)
    theirs_blocks = _matching_blocks(base, theirs)
    regions = []
    i = j = 0
    while i < len(ours_blocks) and j < len(theirs_blocks):
        ours_base, ours_at, ours_size = ours_blocks[i]
        theirs_base, theirs_at, theirs_size = theirs_blocks[j]
        start = max(ours_base, theirs_base)
        end = min(ours_base + ours_size, theirs_base + theirs_size)
        if start < end:
            ours_start = ours_at + (start - ours_base)
            theirs_start = theirs_at + (start - theirs_base)
            regions.append(
                (start, end, ours_start, ours_start + end - start, theirs_start, theirs_start + end - start)
            )
        if ours_base + ours_size < theirs_base + theirs_size:
            i += 1
        else:
            j += 1
    regions.append((len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)))
    return regions


def merge3(base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]) -> Merge:
    """The three-way merge of three line lists (each line with its ending)."""
    chunks: list[Chunk] = []
    base_at = ours_at = theirs_at = 0
    for base_start, base_end, ours_start, ours_end, theirs_start, theirs_end in _sync_regions(
        base, ours, theirs
    ):
        base_part = tuple(base[base_at:base_start])
        ours_part = tuple(ours[ours_at:ours_start])
        theirs_part = tuple(theirs[theirs_at:theirs_start])
        if base_part or ours_part or theirs_part:
            ours_kept = ours_part == base_part
            theirs_kept = theirs_part == base_part
            if ours_part == theirs_part:
                kind = "unchanged" if ours_kept else "same"
            elif ours_kept:
                kind = "theirs"
            elif theirs_kept:
                kind = "ours"
            else:
                kind = "conflict"
            chunks.append(Chunk(kind, base_at, base_part, ours_part, theirs_part))  # type: ignore[arg-type]
        if base_end > base_start:
            kept = tuple(base[base_start:base_end])
            chunks.append(Chunk("unchanged", base_start, kept, kept, kept))
        base_at, ours_at, theirs_at = base_end, ours_end, theirs_end
    return Merge(tuple(chunks))


def merge_bytes(base: bytes, ours: bytes, theirs: bytes) -> Merge:
    """``merge3`` of three files' bytes, split into lines with their endings kept."""
    return merge3(
        base.splitlines(keepends=True), ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    )


def located_hunks(before: str, after: str) -> tuple[LocatedHunk, ...]:
    """One exact ``LocatedHunk`` per changed run of lines from ``before`` to ``after``.

    A change computed from two whole texts (a rewind, a merge) has no hunks of its own;
    these give its review the same per-hunk toggles as a patch: leaving one out splices
    the others into ``before`` exactly where they are (``Plan.without_hunks``).
    """
    old = split_lines(before)
    new = split_lines(after)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    found = []
    # no difflib call over ALIGN_LINES lines: a long stretch with no resync nearby is cut at anchors
    for tag, first, last, new_first, new_last in ResyncMatcher(old, new, ALIGN_LINES).get_opcodes():
        if tag == "equal":
            continue
        replacement = "".join(new[new_first:new_last])
        match = Match(starts[first], starts[last], replacement, Tier.EXACT, 1.0, first + 1, last - first)
        found.append(LocatedHunk(Hunk(old="".join(old[first:last]), new=replacement), match))
    return tuple(found)
