"""Explanations: why each hunk of a plan landed where it did, in words and with a score.

The matcher records its decision on every non-exact ``Match`` as ``(label,
text)`` rows (``match.explanation``): each tier it tried and what that tier
found, the winning score and the runner-up, the offset from a diff's line
number, and the lines the change expected next to the lines in the file. This
module turns those rows into a ``Reason`` for a person: a one-line plain
summary, a score for every tier, and the rows with what is noise left out. The
review widget's "Why here?", the static HTML and ``nbedit apply --explain``
all show the same ``Reason``.

The score is computed here, from the located hunk and the text its match
covers, not by the matcher: every tier but the fuzzy one accepts a place
because the text is *equal* after a normalisation (line endings, trailing
whitespace, punctuation, indentation, blank lines), so the number that tells a
reader how far the file's text is from the change's is the similarity of the
two texts as they are, line endings aside (1.00 for an exact match, and for a
match that differs only in its line endings). The fuzzy tier's own window
score is what decided there, so that is the score shown for it.

A runner-up under ``MEANINGFUL_RUNNER_UP`` never competed, so it is reported
as "no other candidate close" rather than as a number that reads like a
contest. Lines of the expected-vs-found comparison that differ only in spaces
and tabs are listed in ``Reason.whitespace`` so a renderer can make those
characters visible (``visible_whitespace``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nbedit._dataclass import dataclass

if TYPE_CHECKING:
    from nbedit.engine.models import FilePlan, LocatedHunk, Plan

__all__ = [
    "COMPARISON_LABEL",
    "MEANINGFUL_RUNNER_UP",
    "Reason",
    "cell_line",
    "cell_place",
    "cell_span",
    "explain_hunk",
    "explain_plan",
    "found_text",
    "hunk_place",
    "reason",
    "similarity",
    "visible_whitespace",
]

# the matcher's label for the row comparing the lines expected with the lines in the file
COMPARISON_LABEL = "expected (-) vs in the file (+)"
# a runner-up scoring below this was never a contender: "no other candidate close"
MEANINGFUL_RUNNER_UP = 0.5
# texts longer than this (both together) are compared line by line, not character by character
_CHARACTER_LIMIT = 20_000

_SUMMARIES = {
    "exact": "found verbatim",
    "line-endings": "the same text with other line endings (the file's are kept)",
    "trailing-whitespace": "the same text once trailing spaces are ignored",
    "unicode-punctuation": "the same text once curly quotes, dashes and no-break spaces are ignored",
    "indentation": "the same text at another indentation (the new text is re-indented to match)",
    "blank-lines": "the same lines with a different number of blank lines between them",
}


@dataclass(frozen=True, slots=True)
class Reason:
    """Why one hunk landed where it did.

    ``summary``: one plain sentence; ``score``: 1.0 for an exact match, the similarity of
    the expected and found text for the normalising tiers, the window score for a fuzzy
    match; ``score_label`` names which. ``rows``: (label, text) details; ``whitespace``:
    the lines (0-based) of the comparison row that differ from their partner only in
    spaces and tabs.
    """

    summary: str
    score: float
    score_label: str
    rows: tuple[tuple[str, str], ...] = ()
    whitespace: tuple[int, ...] = ()


def found_text(file_plan: FilePlan, located: LocatedHunk) -> str | None:
    """The text the hunk's match covers in the file as planned (a notebook's cell view), or None."""
    source = file_plan.display_before if file_plan.notebook else file_plan.before
    if source is None:
        return None
    match = located.match
    return source[match.start : match.end]


def similarity(expected: str, found: str) -> float:
    """How alike two texts are, 0..1 (``difflib``'s ratio): by characters, or by lines for long texts.

    Line endings are compared normalised: the file's own are always kept when writing, so two
    CRLF lines found for two LF ones are the same text (1.00), not 92 % alike by their ``\r``s."""
    expected, found = _one_ending(expected), _one_ending(found)
    if expected == found:
        return 1.0
    import difflib  # explanations only: applying a change never loads it

    if len(expected) + len(found) <= _CHARACTER_LIMIT:
        return difflib.SequenceMatcher(None, expected, found, autojunk=False).ratio()
    return difflib.SequenceMatcher(None, expected.splitlines(), found.splitlines(), autojunk=False).ratio()


def _one_ending(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def cell_line(file_plan: FilePlan, located: LocatedHunk) -> tuple[int, int] | None:
    """For a notebook, (first line, line count) of the hunk's match *within its cell* (the
    matcher counts lines of the whole cell view; a match that starts at the cell's marker line
    is counted from the cell's first line, and an insertion right before a marker lies at the
    end of the cell above it); None for other files and for a match across cells."""
    view = file_plan.display_before if file_plan.notebook else None
    if view is None or not located.cell:
        return None
    match = located.match
    start, end, count = match.start, match.end, match.line_count
    if start < end and _marker_at(view, start):
        start = view.find("\n", start) + 1  # the header line is the cell's, not one of its lines
        if start <= 0:
            return None
        count -= 1
    if _MARKER in view[start:end]:
        return None  # the match crosses cells (a change of the structure): see cell_span
    marker = _marker_before(view, start)
    if marker < 0:
        return None
    body = view.find("\n", marker) + 1
    if body <= 0 or body > start:
        return None
    return view.count("\n", body, start) + 1, max(count, 1)


def cell_span(file_plan: FilePlan, located: LocatedHunk) -> str | None:
    """For a notebook hunk whose match crosses cells (a change of the cell structure), where
    it lies counted within the cells: "lines 2-4 of cell 1 (id c2, code) to line 1 of cell 2
    (id c3, code)" (marker lines are the cells' headers, not lines); None otherwise."""
    view = file_plan.display_before if file_plan.notebook else None
    if view is None or not located.cell or cell_line(file_plan, located) is not None:
        return None
    from nbedit.engine.notebook.view import marker_label  # notebooks' explanations only

    match = located.match
    marker = _marker_before(view, match.start + 1)
    if marker < 0:
        return None
    label = marker_label(view[marker : view.find("\n", marker)]) or "a cell"
    number = max(view.count("\n", marker, match.start) - 1, 0)  # the cell's lines above the match
    places: list[tuple[str, int, int]] = []  # (cell, first line, last line) of each cell touched
    header = None  # a marker line that ends the match: the header of the cell below, no line of it
    for text in view[match.start : match.end].split("\n")[: max(match.line_count, 1)]:
        opened = marker_label(text)
        if opened is not None:
            label, number, header = opened, 0, opened
            continue
        number += 1
        header = None
        if places and places[-1][0] == label:
            places[-1] = (label, places[-1][1], number)
        else:
            places.append((label, number, number))
    if not places:
        return None
    (first_cell, first, first_last), (last_cell, last_first, last) = places[0], places[-1]
    start = f"{_lines(first, first_last)} of {first_cell}"
    if header is not None:
        return f"{start} to the header of {header}"
    if len(places) == 1:
        return start
    return f"{start} to {_lines(last_first, last)} of {last_cell}"


def cell_place(file_plan: FilePlan, located: LocatedHunk) -> tuple[int, int] | str | None:
    """Where a notebook hunk lies within its cell (``cell_line``), or across cells in words
    (``cell_span``); None for other files. What ``reason`` and ``explain_hunk`` take as ``line``."""
    if not file_plan.notebook or not located.cell:
        return None
    return cell_line(file_plan, located) or cell_span(file_plan, located)


def _marker_at(view: str, position: int) -> bool:
    return view.startswith(_MARKER, position) and (position == 0 or view[position - 1] == "\n")


def _marker_before(view: str, position: int) -> int:
    """The start of the last marker line that begins before ``position`` (-1: none)."""
    marker = view.rfind(_MARKER, 0, position)
    while marker > 0 and view[marker - 1] != "\n":
        marker = view.rfind(_MARKER, 0, marker)
    return marker


def _lines(first: int, last: int) -> str:
    return f"line {first}" if last <= first else f"lines {first}-{last}"


_MARKER = "# %% nbedit cell"


def hunk_place(located: LocatedHunk, line: tuple[int, int] | str | None = None) -> str:
    """Where a hunk lies, in words: "lines 3-4", "line 2 of cell 1 (id c2, code)" (``line``: its
    ``cell_place``), "line 2 of cell 1 (...) to line 1 of cell 2 (...), cell structure"."""
    if isinstance(line, str):  # across cells, in words (cell_span); the structure change said
        structure = ", cell structure" if (located.cell or "").endswith("cell structure") else ""
        return line + structure
    match = located.match
    first, count = (match.line, match.line_count) if line is None else line
    span = f"line {first}" if count <= 1 else f"lines {first}-{first + count - 1}"
    if not located.cell:
        return span
    return f"{span} of {located.cell}" if line is not None else f"{span} ({located.cell})"


def _runner_up(text: str) -> tuple[str, float | None]:
    """The runner-up row as shown, and its score when it names one."""
    found = re.match(r"^(\d+(?:\.\d+)?) at ", text)
    if found is None:
        return text, None
    score = float(found.group(1))
    if score < MEANINGFUL_RUNNER_UP:
        return f"no other candidate close (the best other place scored {found.group(1)})", score
    return text, score


def _whitespace_lines(text: str) -> tuple[int, ...]:
    """Lines of a ``-``/``+`` comparison whose partner differs from them only in spaces and tabs.

    A run of ``-`` lines is paired, line for line, with the run of ``+`` lines after it."""
    lines = text.split("\n")
    marked: list[int] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("-"):
            index += 1
            continue
        removed_start = index
        while index < len(lines) and lines[index].startswith("-"):
            index += 1
        added_start = index
        while index < len(lines) and lines[index].startswith("+"):
            index += 1
        for offset in range(min(added_start - removed_start, index - added_start)):
            old, new = lines[removed_start + offset][1:], lines[added_start + offset][1:]
            if old != new and "".join(old.split()) == "".join(new.split()):
                marked.extend((removed_start + offset, added_start + offset))
    return tuple(sorted(marked))


def _cell_headers(text: str) -> str:
    """A notebook comparison with each marker line the change and the file share shown as the
    header of its cell (``── cell 2 (id c3, code) ──``), not as a line of code. A marker line
    that differs (``-``/``+``) stays as written: it is part of what differs."""
    if _MARKER not in text:
        return text
    from nbedit.engine.notebook.view import marker_label  # notebooks' explanations only

    lines = text.split("\n")
    for number, line in enumerate(lines):
        label = marker_label(line[1:]) if line.startswith(" ") else None
        if label is not None:
            lines[number] = f"\u2500\u2500 {label} \u2500\u2500"
    return "\n".join(lines)


def visible_whitespace(line: str) -> str:
    """A comparison line with its spaces as ``·`` and tabs as ``→`` (the ``-``/``+`` marker kept)."""
    return line[:1] + line[1:].replace(" ", "\u00b7").replace("\t", "\u2192")


def reason(
    located: LocatedHunk, found: str | None = None, line: tuple[int, int] | str | None = None
) -> Reason:
    """The ``Reason`` for one located hunk; ``found``: the text its match covers (``found_text``);
    ``line``: in a notebook, where it lies within its cell (``cell_place``)."""
    match = located.match
    tier = match.tier.value
    fuzzy = tier == "fuzzy"
    if fuzzy:
        score, label = match.score, "window score"
    elif tier == "exact" or found is None:
        score, label = (1.0 if tier == "exact" else match.score), "similarity"
    else:
        score, label = similarity(located.hunk.old, found), "similarity"
    rows: list[tuple[str, str]] = []
    runner_score: float | None = None
    whitespace: tuple[int, ...] = ()
    for row_label, text in match.explanation:
        if row_label == "runner-up":
            text, runner_score = _runner_up(text)
        elif row_label == COMPARISON_LABEL:
            text = _cell_headers(text) if located.cell else text
            whitespace = _whitespace_lines(text)
        rows.append((row_label, text))
    where = hunk_place(located, line)
    if fuzzy:
        if runner_score is not None and runner_score >= MEANINGFUL_RUNNER_UP:
            rival = f"the next best place scored {runner_score:.2f}"
        else:
            rival = "no other place comes close"
        summary = f"Not found verbatim; placed at {where}, the closest text: score {score:.2f}; {rival}."
    elif tier == "exact":
        summary = f"Found verbatim at {where}: score 1.00."
    else:
        summary = (
            f"Not found verbatim; placed at {where}, where the file has {_SUMMARIES.get(tier, tier)}: "
            f"similarity {score:.2f}."
        )
    if match.offset:
        lines = "line" if abs(match.offset) == 1 else "lines"
        direction = "below" if match.offset > 0 else "above"
        summary = summary[:-1] + f", {abs(match.offset)} {lines} {direction} where the change said."
    return Reason(summary, score, label, tuple(rows), whitespace)


def explain_hunk(
    located: LocatedHunk, found: str | None = None, line: tuple[int, int] | str | None = None
) -> list[str]:
    """Lines explaining one located hunk: where, the tier and its score, the summary, the matcher's rows."""
    match = located.match
    shown = reason(located, found, line)
    word = "similarity" if shown.score_label == "similarity" and match.tier.value != "exact" else "score"
    head = f"{hunk_place(located, line)}: {match.tier.explanation}, {word} {shown.score:.2f}"
    rows = [head, f"  {shown.summary}"]
    if not shown.rows:
        if match.offset:
            rows.append(f"  {match.offset:+d} lines from the line the change named")
        return rows
    for label, text in shown.rows:
        if "\n" in text or label == COMPARISON_LABEL:
            lines = text.split("\n")
            marked = set(shown.whitespace) if label == COMPARISON_LABEL else set()
            note = " (· a space, → a tab)" if marked else ""
            rows.append(f"  {label}{note}:")
            for number, text_line in enumerate(lines):
                rows.append(f"    {visible_whitespace(text_line) if number in marked else text_line}")
        else:
            rows.append(f"  {label}: {text}")
    return rows


def explain_plan(plan: Plan) -> str:
    """Every file and hunk of a plan, explained (a hunk-less file says why it has none)."""
    lines: list[str] = []
    for file_plan in plan.files:
        lines.append(f"{file_plan.target_path}:")
        if not file_plan.hunks:
            lines.append(f"  {file_plan.operation}: no located hunks (the whole file is shown as one change)")
            lines.extend(f"  note: {note}" for note in file_plan.notes)
            continue
        for number, located in enumerate(file_plan.hunks, start=1):
            explained = explain_hunk(located, found_text(file_plan, located), cell_place(file_plan, located))
            lines.append(f"  hunk {number}, {explained[0]}")
            lines.extend(f"  {line}" for line in explained[1:])
    return "\n".join(lines)
