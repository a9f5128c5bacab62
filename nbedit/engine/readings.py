"""Readings of a reply's old text that is not in the file, the way a careful person reads it.

Real models write old text that is not the file's text in a few recurring ways that a
person applying the reply by hand would still read without hesitation:

- **an elision line** (``...``, ``# ... existing code ...``, ``// ...``, ``<!-- ... -->``)
  standing for lines the model did not copy. It is never matched as text. When the old and
  the new text carry the same elision lines in the same order, and the lines around each
  elision are found in the file in one way only, the elision stands for the file's lines
  between them: those are put back in both texts, verbatim, and the change is located
  again. When the lines around it fit the file in more than one way, nbedit refuses and
  says so (an elision is never resolved by guessing how far it reaches).
- **line numbers pasted into the reply** (``  12 import os``, ``12\\timport os``), as a
  file viewer that numbers its lines shows them. They are dropped only when every line of
  the old text carries one, the numbers of the old text count up one by one, and every line
  of the new text carries one too; a file that itself holds such numbers is left alone
  (its text then matches as it is, or not at all).

Each reading changes only *where* the change goes: the lines written are the reply's new
lines and, for an elision, the file's own lines put back. The rewritten hunk is located by
the ordinary cascade; a match it finds is reported with ``Tier.READING`` so the plan says a
reading was needed, and the syntax guard treats it as lenient.

A third reading, **one block per place** (the same SEARCH/REPLACE block given once for
each of the places its old text occurs), is decided by the planner, which sees the blocks
together (``repeats_of``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.reading_lines import (
    _file_line,
    _joined,
    _lines,
    _region_lines,
    fill_skipped_context,
    rejoined,
    reread,
)
from nbedit.errors import AmbiguousMatch, NoMatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from nbedit.engine.match import FileIndex
    from nbedit.engine.match import MatchOptions as _Options
    from nbedit.engine.text_edit import PlanOptions, TextEdit

__all__ = [
    "elision_lines",
    "blank_runs_noted",
    "elision_noted",
    "expand_elisions",
    "locate_as_meant",
    "occurrences",
    "once_per_place",
    "read_as_meant",
    "repeats_of",
    "strip_line_numbers",
]

# an elision: "...", "…", optionally inside a comment, optionally with words after the dots
# ("# ... existing code ...", "// ... rest of the function", "<!-- ... -->", "/* ... */")
_ELISION = re.compile(r"^\s*(?:#|//|--|;|%|/\*|<!--|\*)?\s*(?:\.\.\.|\u2026)(?:\s[^=;{}\[\]]*)?$")
# a comment whose words say it stands for code: "# rest of the code ...", "// existing code..."
_ELIDING_COMMENT = re.compile(
    r"^\s*(?:#|//|--|;|%|/\*|<!--)\s*[\w ,'()-]*\b(?:existing|rest|remaining|unchanged|same|omitted|other)\b"
    r"[\w ,'()-]*(?:\.\.\.|\u2026)\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE,
)
# a pasted line number: digits, then a tab or one space (the line's own text follows unchanged)
_NUMBERED = re.compile(r"^ *(\d{1,6})(?:\t| |$)")


def _is_elision(line: str) -> bool:
    return bool(_ELISION.match(line) or _ELIDING_COMMENT.match(line))


def elision_lines(text: str) -> list[int]:
    """0-based numbers of the lines of ``text`` that are elisions (``...``, ``# ... existing code ...``)."""
    lines, _ = _lines(text)
    return [number for number, line in enumerate(lines) if _is_elision(line)]


def _parts(lines: Sequence[str], elisions: Sequence[int]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for number, line in enumerate(lines):
        if number in elisions:
            parts.append([])
        else:
            parts[-1].append(line)
    return parts


def _at(file_lines: Sequence[str], part: Sequence[str], start: int) -> bool:
    return all(file_lines[start + step].rstrip() == line.rstrip() for step, line in enumerate(part))


def _places(file_lines: Sequence[str], part: Sequence[str], first: int, last: int) -> list[int]:
    """Line numbers in ``[first, last)`` where ``part`` starts (lines compared without trailing blanks)."""
    end = last - len(part) + 1
    head = part[0].rstrip()
    return [
        start
        for start in range(first, max(first, end))
        if file_lines[start].rstrip() == head and _at(file_lines, part, start)
    ]


def expand_elisions(text: str, hunk: Hunk, region: tuple[int, int], path: str | None) -> Hunk | None:
    """``hunk`` with each elision line of its old and new text replaced by the file's lines it stands for.

    None when the hunk has no elision line, when old and new do not carry the same number of
    them, or when the lines around them are not in the file (the caller's NoMatch stands, with
    a note). Raises ``AmbiguousMatch`` when they fit the file in more than one way, or when a
    line after an elision occurs more than once after the lines before it (the elision's reach
    would be a guess).
    """
    old_lines, old_final = _lines(hunk.old)
    new_lines, new_final = _lines(hunk.new)
    old_elisions = [n for n, line in enumerate(old_lines) if _is_elision(line)]
    if not old_elisions:
        return None
    new_elisions = [n for n, line in enumerate(new_lines) if _is_elision(line)]
    if len(new_elisions) != len(old_elisions):
        return None
    old_parts = _parts(old_lines, old_elisions)
    new_parts = _parts(new_lines, new_elisions)
    # an elision at the very start or end of both texts stands for the file around the change
    if not old_parts[0] and not new_parts[0]:
        old_parts, new_parts = old_parts[1:], new_parts[1:]
    if len(old_parts) > 1 and not old_parts[-1] and not new_parts[-1]:
        old_parts, new_parts = old_parts[:-1], new_parts[:-1]
        old_final = new_final = True  # the lines before the dropped elision end with a newline
    if len(old_parts) == 1:
        if not old_parts[0]:
            return None
        # edge elisions only: what is left is an ordinary old text
        return reread(hunk, old_parts[0], old_final, new_parts[0], new_final)
    if any(not part for part in old_parts):
        return None  # two elisions in a row, or one at an edge of the old text only
    file_lines = text[region[0] : region[1]].split("\n")
    if text[region[0] : region[1]].endswith("\n"):
        file_lines.pop()
    file_lines = [line[:-1] if line.endswith("\r") else line for line in file_lines]
    chains: list[list[tuple[int, int]]] = []  # per way of reading: (start, end) line of each part
    for start in _places(file_lines, old_parts[0], 0, len(file_lines)):
        chain = [(start, start + len(old_parts[0]))]
        for part in old_parts[1:]:
            # an elision stands for one line at least
            after = _places(file_lines, part, chain[-1][1] + 1, len(file_lines))
            if not after:
                break
            if len(after) > 1:
                raise AmbiguousMatch(
                    f"{path or 'file'}: the old text has an elision line ('...') followed by "
                    f"{_quoted(part[0])}, which occurs {len(after)} times after the lines before the "
                    "elision; "
                    "nbedit will not guess how far the elision reaches",
                    path=path,
                    locations=[(_file_line(text, region, n), 1) for n in after],
                    tier="reading",
                    detail=(
                        "found at lines "
                        + ", ".join(str(_file_line(text, region, n)) for n in after[:5])
                        + "\ncopy the elided lines from the file, or add a line after the elision "
                        "that occurs once"
                    ),
                )
            chain.append((after[0], after[0] + len(part)))
        else:
            chains.append(chain)
    if not chains:
        return None
    if len(chains) > 1:
        raise AmbiguousMatch(
            f"{path or 'file'}: the old text's lines around its elision line ('...') fit the file in "
            f"{len(chains)} places; nbedit will not guess which one you mean",
            path=path,
            locations=[(_file_line(text, region, chain[0][0]), 1) for chain in chains],
            tier="reading",
        )
    chain = chains[0]
    gaps = [file_lines[chain[n][1] : chain[n + 1][0]] for n in range(len(chain) - 1)]
    marks = {old_lines[number].strip() for number in old_elisions}
    if any(line.strip() in marks for gap in gaps for line in gap):
        return None  # the "elision" is the file's own text there (a doctest's "...", a stub body)
    expanded_old: list[str] = []
    expanded_new: list[str] = []
    for number, (_old_part, new_part) in enumerate(zip(old_parts, new_parts, strict=True)):
        if number:
            expanded_old.extend(gaps[number - 1])
            expanded_new.extend(gaps[number - 1])
        expanded_old.extend(file_lines[chain[number][0] : chain[number][1]])
        expanded_new.extend(new_part)
    return reread(hunk, expanded_old, old_final, expanded_new, new_final)


def _quoted(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= 60 else line[:57] + "...")


def locate_as_meant(
    index: FileIndex, hunk: Hunk, options: _Options, region: tuple[int, int], path: str | None
) -> tuple[Hunk, list[Match]] | None:
    """Locate the hunk a careful reader makes of ``hunk`` (``read_as_meant``); None if there is none
    or it is not in the file either (the fuzzy tier is not tried). Its matches carry ``Tier.READING``."""
    from nbedit.engine.match import MatchOptions, locate

    if options.exact or hunk.anchors:
        return None
    reading = read_as_meant(index.text, hunk, region, path)
    if reading is None:
        return None
    try:
        # the ordinary tiers, no fuzzy one: a reading is one leniency already
        matches = locate(index, reading, options=MatchOptions(threshold=1.01), region=region, path=path)
    except NoMatch:
        return None
    if not matches:
        # "already applied" of a reading is two leniencies on top of each other, and its evidence is
        # weak here: without the fuzzy tier no near miss of the old text elsewhere is known (a
        # stub's "..." read as an elision, its change standing in another overload)
        return None
    if any(_dots_beside(index.text, hunk, match) for match in matches):
        return None
    how = _how(hunk, reading)
    return reading, [
        replace(match, tier=Tier.READING, explanation=(("read as meant", how), *match.explanation))
        for match in matches
    ]


def _dots_beside(text: str, hunk: Hunk, match: Match) -> bool:
    """An edge elision of ``hunk`` dropped by the reading stands where the file has a line of dots too.

    Then the file holds such lines as text there (a doctest's ``...     title: str``, a stub's
    ``...``) and the reply's line is most likely its copy, mis-copied or not: dropping it would
    drop whatever the reply changed in it. Not an elision, so no reading.
    """
    old_lines, _ = _lines(hunk.old)
    if not old_lines:
        return False
    dots = ("...", "\u2026")
    if _is_elision(old_lines[-1]):
        end = match.end
        if end and text[end - 1] != "\n":  # the match ends inside its last line: the next line follows it
            found = text.find("\n", end)
            end = len(text) if found < 0 else found + 1
        found = text.find("\n", end)
        if text[end : len(text) if found < 0 else found].strip().startswith(dots):
            return True
    if _is_elision(old_lines[0]):
        start = text.rfind("\n", 0, match.start)  # the line before the match's first line ends here
        if start >= 0 and text[text.rfind("\n", 0, start) + 1 : start].strip().startswith(dots):
            return True
    return False


def elision_noted(error: NoMatch, hunk: Hunk) -> NoMatch:
    """``error``, saying so when the old text that was not found has an elision line."""
    lines = elision_lines(hunk.old)
    if not lines:
        return error
    first, _, rest = str(error).partition("\n")
    if "closest candidates" not in rest:
        rest = ""
    shown = repr(_lines(hunk.old)[0][lines[0]].strip())
    note = (
        f"its old text has an elision line ({shown}, line {lines[0] + 1}), which is never matched as text: "
        "nbedit expands one only when the new text has it at the same place and the lines around it "
        "are in the file, in one place; otherwise copy the elided lines from the file"
    )
    return NoMatch(f"{first}\n{note}", path=error.path, candidates=error.candidates)


def blank_runs_noted(error: NoMatch, hunk: Hunk, text: str, region: tuple[int, int]) -> NoMatch:
    """``error``, saying so when the old text's lines are in the file once with other blank-line runs.

    The blank-lines tier refuses such a place when the change adds lines next to a run the
    file has at another length (above or below the file's blank lines is not said); the
    closest candidates of the fuzzy tier would not tell that.
    """
    old_lines, _ = _lines(hunk.old)
    wanted = [(number, line.strip()) for number, line in enumerate(old_lines) if line.strip()]
    if len(wanted) < 2 or len(wanted) == len(old_lines) and text.find("\n\n", region[0], region[1]) == -1:
        return error
    file_lines = _region_lines(text, region)
    places = []
    head = wanted[0][1]
    for start, line in enumerate(file_lines):
        # ``in`` first: most lines do not hold the first line at all, and are not copied by ``strip``
        if head not in line or line.strip() != head:
            continue
        matched, cursor = [start], start
        for _, expected in wanted[1:]:
            cursor += 1
            while cursor < len(file_lines) and not file_lines[cursor].strip():
                cursor += 1
            if cursor >= len(file_lines) or file_lines[cursor].strip() != expected:
                break
            matched.append(cursor)
        else:
            places.append(matched)
    if len(places) != 1:
        return error
    matched = places[0]
    for position in range(1, len(wanted)):
        theirs = matched[position] - matched[position - 1] - 1
        ours = wanted[position][0] - wanted[position - 1][0] - 1
        if theirs != ours:
            break
    else:
        return error
    after = _file_line(text, region, matched[position - 1])
    first, _, _ = str(error).partition("\n")
    note = (
        f"its lines are in the file at line {_file_line(text, region, matched[0])}, but with {theirs} blank "
        f"line{'s' if theirs != 1 else ''} after line {after} where the old text has {ours}, next to lines "
        "the change adds or removes: on which side of the file's blank lines they go is not said; copy the "
        "blank lines from the file into the old and new text"
    )
    return NoMatch(f"{first}\n{note}", path=error.path, candidates=error.candidates)


def _how(hunk: Hunk, reading: Hunk) -> str:
    if elision_lines(hunk.old) and not elision_lines(reading.old):
        return "its elision lines ('...') stand for the file's lines between the lines around them"
    return "the line numbers pasted before its lines were dropped"


def read_as_meant(text: str, hunk: Hunk, region: tuple[int, int], path: str | None) -> Hunk | None:
    """The hunk a careful reader makes of old text that is not in the file, or None.

    Pasted line numbers first (an elision line may carry one too), then elisions, then
    lines the old text's context skipped.
    """
    numbered = strip_line_numbers(hunk)
    if numbered is not None:
        hunk = numbered
    expanded = expand_elisions(text, hunk, region, path)
    if expanded is not None:
        return expanded
    filled = fill_skipped_context(text, hunk, region, path)
    if filled is not None:
        return filled
    joined = rejoined(text, hunk, region, path)
    if joined is not None:
        return joined
    return numbered


def strip_line_numbers(hunk: Hunk) -> Hunk | None:
    """``hunk`` without the line numbers a reply pasted before every line, or None.

    Every line of the old text must carry a number (a blank line may carry none), the
    numbers counting up one by one, and every non-blank line of the new text must carry
    one too, counting up. Only the number and the one tab or space after it are dropped.
    """
    old_lines, old_final = _lines(hunk.old)
    new_lines, new_final = _lines(hunk.new)
    old = _numbered(old_lines, consecutive=True)
    if old is None:
        return None
    new = _numbered(new_lines, consecutive=False) if new_lines else []
    if new is None:
        return None
    return replace(
        hunk,
        old=_joined(old, old_final),
        new=_joined(new, new_final),
        changed_lines=None,
        alternatives=(),
    )


def _numbered(lines: Sequence[str], *, consecutive: bool) -> list[str] | None:
    stripped: list[str] = []
    numbers: list[tuple[int, int]] = []  # (position, number)
    for position, line in enumerate(lines):
        found = _NUMBERED.match(line)
        if found is None:
            if line.strip():
                return None
            stripped.append(line)
            continue
        numbers.append((position, int(found.group(1))))
        stripped.append(line[found.end() :])
    if len(numbers) < 2 and consecutive:
        return None
    for (first_at, first), (second_at, second) in zip(numbers, numbers[1:], strict=False):
        if consecutive and second - first != second_at - first_at:
            return None
        if second <= first:
            return None
    if not any(line.strip() for line in stripped):
        return None
    return stripped


def repeats_of(hunks: Sequence[Hunk], number: int) -> list[int]:
    """Indexes of the later hunks that are the very same block as ``hunks[number]`` (old and new)."""
    hunk = hunks[number]
    return [
        later
        for later in range(number + 1, len(hunks))
        if hunks[later].old == hunk.old and hunks[later].new == hunk.new and not hunks[later].alternatives
    ]


def occurrences(text: str, old: str, region: tuple[int, int]) -> int:
    """Whole-line, non-overlapping occurrences of ``old`` in ``text[region]``."""
    low, high = region
    count = 0
    position = text.find(old, low, high)
    while position != -1:
        end = position + len(old)
        starts_line = position == 0 or text[position - 1] == "\n"
        if starts_line and (old.endswith("\n") or end == len(text) or text[end] in "\r\n"):
            count += 1
            position = text.find(old, position + len(old), high)
        else:
            position = text.find(old, position + 1, high)
    return count


def once_per_place(
    edit: Callable[..., TextEdit],
    text: str,
    hunks: Sequence[Hunk],
    number: int,
    options: PlanOptions,
    path: str,
    region: tuple[int, int],
    error: AmbiguousMatch,
) -> tuple[TextEdit, list[int]]:
    """The same block given once for each place its old text occurs: every place, once.

    A reply that repeats one SEARCH/REPLACE block k times, where its old text occurs exactly
    k times (exactly, whole lines), means each of them: applying the blocks one after another
    changes one place each, in any order to the same result. Any other count is the ambiguity
    it looks like (``error`` is raised). ``edit`` is the planner's ``edit_text``; the later
    identical blocks are returned so the planner skips them.
    """
    hunk = hunks[number]
    later = repeats_of(hunks, number)
    places = occurrences(text, hunk.old, region) if later and hunk.old not in hunk.new else 0
    if places != len(later) + 1:
        raise error
    every = edit(text, [replace(hunk, replace_all=True)], options, path=path, region=region)
    if len(every.hunks) != places or any(item.tier is not Tier.EXACT for item in every.hunks):
        raise error
    return every, later
