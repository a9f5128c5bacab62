"""The line-level readings of a reply's old text: context lines it skipped, lines it joined or split.

Helpers shared with ``readings`` (lines of a change text, lines of a region of the file, the
kept-line map of an old/new alignment) live here too, so neither module imports the other's
internals in a circle. See ``nbedit.engine.readings`` for what a reading may and may not do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.models import Hunk
from nbedit.errors import AmbiguousMatch

__all__ = ["MAX_SKIPPED_RUN", "OLD_LINES_PER_SKIP", "fill_skipped_context", "rejoined"]


def _lines(text: str) -> tuple[list[str], bool]:
    lines = text.split("\n")
    final = text.endswith("\n")
    if final:
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines], final


def _joined(lines: Sequence[str], final: bool) -> str:
    return "\n".join(lines) + ("\n" if final and lines else "")


def reread(hunk: Hunk, old: Sequence[str], old_final: bool, new: Sequence[str], new_final: bool) -> Hunk:
    """``hunk`` with the old and new lines a reading gave it, placed by text alone (its line
    number and counts belonged to the text as the reply wrote it)."""
    return replace(
        hunk,
        old=_joined(old, old_final),
        new=_joined(new, new_final),
        changed_lines=None,
        alternatives=(),
        start_line=None,
    )


def _file_line(text: str, region: tuple[int, int], line: int) -> int:
    """The 1-based file line of the region's 0-based ``line``."""
    return text.count("\n", 0, region[0]) + line + 1


_WHITESPACE = re.compile(r"\s+")


def _squashed(line: str) -> str:
    """A line without whitespace; a blank line is a line break (blank lines are the blank-lines tier's)."""
    return _WHITESPACE.sub("", line) or "\n"


def rejoined(text: str, hunk: Hunk, region: tuple[int, int], path: str | None) -> Hunk | None:
    """``hunk`` whose old text is the file's lines joined or split at other places, or None.

    A model copies a call the file spreads over three lines as one line (or the reverse).
    The file's lines are taken as the old text when, with every run of whitespace taken out,
    they are the old text character for character, they start at the old text's indentation,
    and they break into lines differently (otherwise an ordinary tier would have found them).
    Only lines the change replaces may be joined or split: every line the change keeps must be
    one of the file's lines there as it is (indentation aside), since the new text writes it
    as the reply has it. One such place in the region, or None (two are an ``AmbiguousMatch``).
    """
    from nbedit.engine.transport import align

    old_lines, old_final = _lines(hunk.old)
    new_lines, _ = _lines(hunk.new)
    wanted = "".join(map(_squashed, old_lines))
    if len(wanted) < 12 or not old_lines or not old_lines[0].strip():
        return None
    indent = old_lines[0][: len(old_lines[0]) - len(old_lines[0].lstrip())]
    file_lines = _region_lines(text, region)
    places: list[tuple[int, int]] = []
    # a place starts with a line at the old text's indentation whose first character after it is the
    # old text's first non-blank one (``head``: squashing takes out whitespace only), and whose squashed
    # text starts the squashed old text (``first`` starts ``wanted``, so ``wanted`` alone decides):
    # the line is squashed only when its first character says it may be one (a file of thousands of
    # lines is read with one comparison a line)
    head = wanted[0]
    after = len(indent)
    for start, line in enumerate(file_lines):
        if line[after : after + 1] != head or not line.startswith(indent):
            continue
        piece = _squashed(line)
        if not wanted.startswith(piece):
            continue
        gathered = piece
        end = start
        while len(gathered) < len(wanted) and end + 1 < len(file_lines):
            end += 1
            gathered += _squashed(file_lines[end])
        if gathered == wanted and end + 1 - start != len(old_lines):
            places.append((start, end + 1))
    if not places:
        return None
    if len(places) > 1:
        raise AmbiguousMatch(
            f"{path or 'file'}: the old text, joined or split at other lines than the file's, fits the "
            f"file in {len(places)} places; nbedit will not guess which one you mean",
            path=path,
            locations=[(_file_line(text, region, start), 1) for start, _ in places],
            tier="reading",
        )
    start, end = places[0]
    groups = _line_groups(old_lines, file_lines[start:end])
    if groups is None:
        return None
    kept = _kept_map(align(old_lines, new_lines))
    for old_span, file_span in groups:
        if not any(number in kept for number in old_span):
            continue
        # a kept line must be the file's line as it is: the new text writes it as the reply has it
        if len(old_span) != 1 or len(file_span) != 1:
            return None
        if old_lines[old_span[0]].rstrip() != file_lines[start + file_span[0]].rstrip():
            return None
    return replace(
        hunk,
        old=_joined(file_lines[start:end], old_final or end < len(file_lines)),
        changed_lines=None,
        alternatives=(),
        start_line=None,
    )


def _line_groups(old_lines: Sequence[str], file_lines: Sequence[str]) -> list[tuple[range, range]] | None:
    """Pair runs of old lines with runs of file lines that are the same text, whitespace aside.

    Each pair is as short as it can be: one old line with one file line where they match, a
    joined line with the file lines it joins, and so on. None if the texts part ways.
    """
    groups: list[tuple[range, range]] = []
    old_at = file_at = 0
    while old_at < len(old_lines) and file_at < len(file_lines):
        old_first, file_first = old_at, file_at
        ours, theirs = _squashed(old_lines[old_at]), _squashed(file_lines[file_at])
        while ours != theirs:
            if len(ours) < len(theirs):
                old_at += 1
                if old_at >= len(old_lines) or not theirs.startswith(ours):
                    return None
                ours += _squashed(old_lines[old_at])
            else:
                file_at += 1
                if file_at >= len(file_lines) or not ours.startswith(theirs):
                    return None
                theirs += _squashed(file_lines[file_at])
        groups.append((range(old_first, old_at + 1), range(file_first, file_at + 1)))
        old_at, file_at = old_at + 1, file_at + 1
    if old_at != len(old_lines) or file_at != len(file_lines):
        return None
    return groups


# a skipped run of file lines: at most this many lines, and this many runs per non-blank old lines
MAX_SKIPPED_RUN = 2
OLD_LINES_PER_SKIP = 4


def fill_skipped_context(text: str, hunk: Hunk, region: tuple[int, int], path: str | None) -> Hunk | None:
    """``hunk`` with the file's lines its old text skipped put back, where nothing is added next to them.

    Real replies leave out a line of the context they copy (a debugging line, a call the
    model did not remember), so the old text is the file's lines with a gap. The old text's
    first and last lines and every line between must be the file's, in order, with at most
    ``MAX_SKIPPED_RUN`` file lines skipped at a time (not blank lines only: those are the
    blank-lines tier's), and only where the change adds nothing: between two lines the change
    keeps with nothing inserted between them, or before/after lines it replaces by no more
    lines than it removes. The skipped lines are put back in both texts, so they stay as they
    are. One such place in the region, or None (two are an ``AmbiguousMatch``).
    """
    from nbedit.engine.transport import align

    old_lines, old_final = _lines(hunk.old)
    new_lines, new_final = _lines(hunk.new)
    non_blank = sum(1 for line in old_lines if line.strip())
    if non_blank < 3 or not old_lines[0].strip() or not old_lines[-1].strip():
        return None
    allowed = _gap_boundaries(align(old_lines, new_lines), len(old_lines))
    if not allowed:
        return None
    file_lines = _region_lines(text, region)
    places: list[list[int]] = []  # file line of each old line
    head = old_lines[0].rstrip()
    for start, line in enumerate(file_lines):
        # ``startswith`` first: most lines differ at once, and only a candidate is copied by ``rstrip``
        if not line.startswith(head) or line.rstrip() != head:
            continue
        found = _skipping(file_lines, old_lines, start, allowed)
        if found is None or found[-1] - found[0] + 1 == len(old_lines):
            continue
        if sum(1 for a, b in zip(found, found[1:], strict=False) if b - a > 1) <= max(
            1, non_blank // OLD_LINES_PER_SKIP
        ):
            places.append(found)
    if not places:
        return None
    if len(places) > 1:
        raise AmbiguousMatch(
            f"{path or 'file'}: the old text's lines fit the file in {len(places)} places once lines it "
            "skipped are put back; nbedit will not guess which one you mean",
            path=path,
            locations=[(_file_line(text, region, place[0]), 1) for place in places],
            tier="reading",
        )
    place = places[0]
    kept = _kept_map(align(old_lines, new_lines))
    expanded_old = file_lines[place[0] : place[-1] + 1]
    inserts: list[tuple[int, list[str]]] = []  # (new line before which the skipped lines go, lines)
    for number in range(len(old_lines) - 1):
        skipped = file_lines[place[number] + 1 : place[number + 1]]
        if skipped:
            if number in kept:
                inserts.append((kept[number] + 1, skipped))
            else:
                inserts.append((kept[number + 1], skipped))
    expanded_new = list(new_lines)
    for at, lines in reversed(inserts):
        expanded_new[at:at] = lines
    return reread(hunk, expanded_old, old_final, expanded_new, new_final)


def _region_lines(text: str, region: tuple[int, int]) -> list[str]:
    part = text[region[0] : region[1]]
    lines = part.split("\n")
    if part.endswith("\n"):
        lines.pop()
    if "\r" not in part:
        return lines  # no line to take a carriage return off (one C-level test instead of one a line)
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _kept_map(opcodes: Sequence[tuple[str, int, int, int, int]]) -> dict[int, int]:
    kept: dict[int, int] = {}
    for tag, old_first, old_last, new_first, _ in opcodes:
        if tag == "equal":
            kept.update(
                zip(
                    range(old_first, old_last),
                    range(new_first, new_first + old_last - old_first),
                    strict=False,
                )
            )
    return kept


def _gap_boundaries(opcodes: Sequence[tuple[str, int, int, int, int]], count: int) -> set[int]:
    """Old line numbers ``n`` such that file lines may stand skipped between old lines n and n + 1.

    Inside a kept run, or at the edge of a replaced run that is not longer in the new text,
    with no insertion at that boundary.
    """
    kept = _kept_map(opcodes)
    inserted_at = {old_first for tag, old_first, old_last, _, _ in opcodes if tag == "insert"}
    edge_ok: set[int] = set()  # boundaries at the edge of a replace/delete run that does not grow
    for tag, old_first, old_last, new_first, new_last in opcodes:
        if tag in ("replace", "delete") and new_last - new_first <= old_last - old_first:
            edge_ok.update((old_first, old_last))
    allowed: set[int] = set()
    for number in range(count - 1):
        boundary = number + 1
        if boundary in inserted_at:
            continue
        both_kept = number in kept and boundary in kept and kept[boundary] == kept[number] + 1
        at_edge = boundary in edge_ok and (number in kept or boundary in kept)
        if both_kept or at_edge:
            allowed.add(number)
    return allowed


def _skipping(
    file_lines: Sequence[str], old_lines: Sequence[str], start: int, allowed: set[int]
) -> list[int] | None:
    """File line of each old line from ``start``, skipping up to ``MAX_SKIPPED_RUN`` non-blank-only runs."""
    place = [start]
    cursor = start
    for number in range(1, len(old_lines)):
        wanted = old_lines[number].rstrip()
        if cursor + 1 < len(file_lines) and file_lines[cursor + 1].rstrip() == wanted:
            cursor += 1
            place.append(cursor)
            continue
        if number - 1 not in allowed:
            return None
        for skip in range(1, MAX_SKIPPED_RUN + 1):
            at = cursor + 1 + skip
            if at < len(file_lines) and file_lines[at].rstrip() == wanted:
                if not any(line.strip() for line in file_lines[cursor + 1 : at]):
                    return None  # blank lines only: the blank-lines tier's
                cursor = at
                place.append(cursor)
                break
        else:
            return None
    return place
