"""How many lines a diff block adds and removes, counted without writing the diff.

A history entry records each file's added and removed line counts. For a
900-hunk patch, writing the diff text and reading it again cost as much as
planning the change, so the counts come from the blocks' texts: equal lines
trimmed from both ends by one XOR of the two texts (C speed), and only the
differing middle, usually a line or two, split and aligned. ``diff.py`` builds
the blocks and writes the diff; this module counts, and also holds the two
pieces both need: where two texts' equal ends are, and how a middle aligns.
"""

from __future__ import annotations

from _operator import itemgetter  # the operator module's C functions, without operator.py (start-up)

from nbedit.engine.models import FilePlan, exact_tiers, held_tier, undecoded_before
from nbedit.engine.text import split_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "ALIGN_LINES",
    "CONTEXT",
    "WHOLE_BLOCK_CHANGES",
    "block_counts",
    "diff_stats",
    "equal_ends",
    "holds_newlines",
    "line_count",
    "lone_block_counts",
    "lone_exact_hunks",
    "lone_exact_stats",
    "middle_opcodes",
    "summed",
]

CONTEXT = 3  # context lines a diff shows around each change
WHOLE_BLOCK_CHANGES = 8
"""A diff block joining at most this many located hunks is aligned whole, by one difflib call.

A block joining more is aligned a hunk at a time (``diff.change_pieces``): one call over a block
of thousands of close hunks costs its lines times its hunks (issue 27). Both are correct
diffs; they can differ only where two alignments are equally short (which of two blank
lines is the removed one), so blocks of a few hunks keep the diff they always had.
"""


ALIGN_LINES = 2_000
"""The most lines (both sides together) one difflib call aligns (issue 27).

difflib's cost is the lines times the equal runs it finds: a middle of 6,000 lines
holding 1,000 small changes took 2.3 s, 12,000 lines 10 s. Diff blocks are aligned a
located hunk at a time (``diff_units``), so only a single hunk this big gets here;
it is aligned by resynchronising on equal lines (linear), with difflib only on
windows under this size.
"""


def middle_opcodes(
    middle_old: Sequence[str], middle_new: Sequence[str]
) -> Sequence[tuple[str, int, int, int, int]]:
    if not middle_old or not middle_new or set(middle_old).isdisjoint(middle_new):
        # nothing to align (the usual edited line): SequenceMatcher would say "replace" whole
        return [("replace", 0, len(middle_old), 0, len(middle_new))]
    if len(middle_old) + len(middle_new) > ALIGN_LINES:
        from nbedit.engine.resync import bounded_opcodes  # brings difflib: only for a huge hunk

        return bounded_opcodes(middle_old, middle_new, ALIGN_LINES)
    import difflib  # only where lines must be aligned: the exact path never gets here

    return difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False).get_opcodes()


def lone_exact_hunks(
    before: str | bytes, file_plan: FilePlan, context: int, joined_limit: int | None = None
) -> tuple[list[str], list[str], list[tuple[int, int]]] | None:
    """The hunks' old and new texts, when each is a diff block of its own exactly as located.

    The third list holds the (added, removed) counts of the hunks whose counts the
    parser knew (``Hunk.changed_lines``, which is what ``block_counts`` gives for
    the hunk's texts); their texts are left out of the first two.

    That is: every hunk landed by the exact tier on whole lines, its span is its old
    text and its new text goes in as written (so the block's texts are the hunk's
    own), and more than ``2 * context`` lines lie between two hunks (so the diff does
    not join them). None otherwise: ``_changed_spans`` then builds the blocks. With
    ``joined_limit``, hunks the diff joins are taken too when more than that many join
    (``diff.WHOLE_BLOCK_CHANGES``: such a block is aligned a hunk at a time, so each
    hunk's texts are a piece of their own), as long as no two share a line.

    ``before`` may be the bytes of an ASCII text (the same offsets): each old text is then
    compared encoded, and the text itself is never made.
    """
    in_bytes = isinstance(before, bytes)
    newline: str | bytes = b"\n" if in_bytes else "\n"
    olds: list[str] = []
    news: list[str] = []
    known: list[tuple[int, int]] = []
    exact = exact_tiers()  # the tier as held: an exact match's Tier is not made for this
    previous_end = -2 * context - 1  # the 1-based line after the previous hunk
    joined = 1  # hunks in the diff block so far
    for located in file_plan.hunks:
        match, hunk = located.match, located.hunk
        old, new, start = hunk.old, hunk.new, match.start
        if match.line - previous_end > 2 * context:
            if 1 < joined <= (joined_limit or 0):
                return None  # a block of a few hunks is aligned whole
            joined = 1
        elif joined_limit is None or match.line < previous_end:
            return None
        else:
            joined += 1
        if (
            held_tier(match) not in exact  # both are compared by identity
            or match.replacement is not new
            or match.end - start != len(old)
            or not old.endswith("\n")
            or (new and not new.endswith("\n"))
            or (start and before[start - 1 : start] != newline)
            or not before.startswith(  # type: ignore[arg-type]
                old.encode("utf-8", "surrogatepass") if in_bytes else old, start
            )
        ):
            return None
        previous_end = match.line + match.line_count
        if hunk.changed_lines is not None:
            known.append(hunk.changed_lines)
            continue
        olds.append(old)
        news.append(new)
    if 1 < joined <= (joined_limit or 0):
        return None
    return olds, news, known


def lone_exact_stats(file_plan: FilePlan) -> tuple[int, int] | None:
    """``diff.file_stats`` of a plan whose hunks are each a diff block of their own as located
    (``lone_exact_hunks``): the usual diff applied where it says, counted without the diff
    module (its import is a first apply's cost); None when that is not so.
    """
    if not file_plan.hunks:
        return None
    lone_counts = getattr(file_plan.hunks, "lone_counts", None)  # a big file's (engine.hunk_table)
    if lone_counts is not None and not file_plan.notebook:
        counts = lone_counts(CONTEXT, WHOLE_BLOCK_CHANGES, lone_block_counts)
        if counts is not None:
            return counts  # type: ignore[no-any-return]
    # an ASCII file's text not decoded yet is read in its bytes (the same offsets), not made
    before: str | bytes | None = None if file_plan.notebook else undecoded_before(file_plan)
    if before is None:
        before = file_plan.display_before if file_plan.notebook else file_plan.before
        if before is None:
            return None
    alone = lone_exact_hunks(before, file_plan, CONTEXT, WHOLE_BLOCK_CHANGES)
    if alone is None:
        return None
    olds, news, known = alone  # each hunk is a block of its own: its texts are the block's
    added, removed = summed(map(lone_block_counts, olds, news))
    return added + sum(map(itemgetter(0), known)), removed + sum(map(itemgetter(1), known))


def lone_block_counts(old: str, new: str) -> tuple[int, int]:
    """``block_counts(old, new)`` for a block whose old text ends with a newline, new too or empty.

    Most hunks of a diff change one line, or only insert or only remove lines. Those
    shapes are told from where the two texts first differ (one XOR of the two ASCII
    texts read as little-endian integers) and one comparison of what follows: one
    line changed when the texts are the same after the line holding the first
    difference (two different single lines: ``block_counts`` says one added, one
    removed); lines inserted (or removed) at the head of the first difference when the
    shorter text's rest is the longer one's end and the inserted run is whole lines
    (nothing to align: the other middle is empty). Every other block is counted by
    ``block_counts`` itself.
    """
    if old == new or not (old.isascii() and new.isascii()):
        return block_counts(old, new)
    differ = int.from_bytes(old.encode(), "little") ^ int.from_bytes(new.encode(), "little")
    first = ((differ & -differ).bit_length() - 1) >> 3  # the first character that differs
    head = old.rfind("\n", 0, first) + 1
    old_rest, new_rest = old.find("\n", first) + 1, new.find("\n", first) + 1
    if old_rest and new_rest and old[old_rest:] == new[new_rest:]:
        return 1, 1
    old_size, new_size = len(old), len(new)
    if old_size < new_size and new.endswith(old[head:]):
        end = new_size - (old_size - head)  # the inserted lines are new[head:end]
        if end == head or new[end - 1] == "\n":
            return new.count("\n", head, end), 0
    elif new_size < old_size and old.endswith(new[head:]):
        end = old_size - (new_size - head)  # the removed lines are old[head:end]
        if end == head or old[end - 1] == "\n":
            return 0, old.count("\n", head, end)
    return block_counts(old, new)


def summed(counts: Iterable[tuple[int, int]]) -> tuple[int, int]:
    added = removed = 0
    for block_added, block_removed in counts:
        added += block_added
        removed += block_removed
    return added, removed


def block_counts(old: str, new: str) -> tuple[int, int]:
    """(added, removed) lines of the unified hunk written for a block whose texts are ``old`` and ``new``.

    The same trimming of equal lines at both ends (``equal_ends``) and the same
    alignment of the rest, on the two strings: only the differing middle, usually
    a line or two, is ever split. A 900-hunk patch is counted without splitting
    its 5,000 context lines.
    """
    head, old_end, new_end = equal_ends(old, new)
    middle_old, middle_new = old[head:old_end], new[head:new_end]
    if not middle_old or not middle_new:
        return line_count(middle_new), line_count(middle_old)
    if middle_old[-1] == middle_new[-1] == "\n":
        # every middle line ends in "\n": compare them without it (split leaves a last "")
        old_pieces, new_pieces = middle_old.split("\n")[:-1], middle_new.split("\n")[:-1]
        if set(old_pieces).isdisjoint(new_pieces):
            return len(new_pieces), len(old_pieces)
    old_lines, new_lines = split_lines(middle_old), split_lines(middle_new)
    added = removed = 0
    for tag, a0, a1, b0, b1 in middle_opcodes(old_lines, new_lines):
        if tag != "equal":
            removed += a1 - a0
            added += b1 - b0
    return added, removed


def equal_ends(old: str, new: str) -> tuple[int, int, int]:
    """``common_ends`` on two texts: (length of the equal leading lines, where the equal
    trailing lines start in ``old``, and in ``new``).

    Equal lines are equal runs of characters that start and end at line boundaries, so
    the line counts follow from where the characters first and last differ. For ASCII
    texts (one byte a character) those places come from one XOR of the two texts read
    as big integers (C speed, no Python step per line); otherwise line by line, one
    slice comparison a line.
    """
    if not (old.isascii() and new.isascii()):
        return _equal_ends_by_line(old, new)
    if old == new:
        return len(old), len(old), len(new)
    old_bytes, new_bytes = old.encode(), new.encode()
    shortest = min(len(old), len(new))
    differ = int.from_bytes(old_bytes[:shortest], "big") ^ int.from_bytes(new_bytes[:shortest], "big")
    prefix = shortest - 1 - (differ.bit_length() - 1) // 8 if differ else shortest
    head = old.rfind("\n", 0, prefix) + 1  # the line holding the first difference starts there
    # the trailing lines are looked for after the head only (they never overlap it)
    room = shortest - head
    differ = int.from_bytes(old_bytes[len(old) - room :], "big") ^ int.from_bytes(
        new_bytes[len(new) - room :], "big"
    )
    suffix = ((differ & -differ).bit_length() - 1) // 8 if differ else room
    old_end, new_end = len(old) - suffix, len(new) - suffix
    if (old_end == head or old[old_end - 1] == "\n") and (new_end == head or new[new_end - 1] == "\n"):
        return head, old_end, new_end
    newline = old.find("\n", old_end)  # the equal run starts inside a line: from the next one on
    if newline == -1:
        return head, len(old), len(new)
    return head, newline + 1, len(new) - (len(old) - newline - 1)


def _equal_ends_by_line(old: str, new: str) -> tuple[int, int, int]:
    # equal leading lines (common_ends' head)
    head = 0
    while True:
        end = old.find("\n", head)
        if end == -1:
            if head < len(old) and old[head:] == new[head:]:
                head = len(old)  # the last line, without a newline, is the same on both sides
            break
        end += 1
        if old[head:end] != new[head:end]:
            break
        head = end
    # equal trailing lines among the rest (common_ends' tail, never overlapping the head)
    old_end, new_end = len(old), len(new)
    while old_end > head and new_end > head:
        old_start = old.rfind("\n", 0, old_end - 1) + 1
        new_start = new.rfind("\n", 0, new_end - 1) + 1
        if old_start < head or new_start < head or old[old_start:old_end] != new[new_start:new_end]:
            break
        old_end, new_end = old_start, new_start
    return head, old_end, new_end


def line_count(text: str) -> int:
    """How many lines ``split_lines(text)`` gives, without splitting."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def holds_newlines(text: str, start: int, end: int, count: int) -> bool:
    """Whether ``text[start:end]`` holds at least ``count`` newlines.

    A few ``find`` calls (memchr) that stop at the count: ``str.count`` would walk the
    whole gap between two hunks, which over a 900-hunk patch is the whole file.
    """
    position = start
    for _ in range(count):
        position = text.find("\n", position, end) + 1
        if not position:
            return False
    return True


def diff_stats(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff.

    Counted inside hunks by their headers' line counts, so a removed line that
    itself starts with ``-- `` (an SQL comment) is not mistaken for a file header.
    """
    from nbedit.engine.diff_lines import decimal_hunk_counts  # loaded with the diff reader

    added = removed = 0
    old_left = new_left = 0
    for line in diff.split("\n"):
        if old_left or new_left:
            marker = line[:1]
            if marker == "-":
                removed += 1
                old_left -= 1
            elif marker == "+":
                added += 1
                new_left -= 1
            elif marker == " ":
                old_left -= 1
                new_left -= 1
            continue
        counts = decimal_hunk_counts(line)  # r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", read by hand
        if counts is not None:
            old_left = 1 if counts[0] is None else int(counts[0])
            new_left = 1 if counts[1] is None else int(counts[1])
    return added, removed

