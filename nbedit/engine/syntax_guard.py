"""The syntax guard as the planner applies it: a Python or JSON result must still parse.

``engine/syntax.py`` says whether a text parses; this module decides what that means for a
planned change. A change placed leniently (indentation, blank lines, fuzzy) that breaks a
file which parsed before is refused: leniency found a place, and a result that no longer
parses says it was the wrong one, or the change was mis-indented. A change found exactly is
written as asked, with a warning. Curly quotes a chat interface put into the added lines
are written straight when only that makes the result parse, and the plan says so.
``engine/syntax.py`` is imported only when a guarded file changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.models import LocatedHunk
from nbedit.engine.text_edit import GUARD_SUFFIXES, TextEdit
from nbedit.errors import UnsafeChange

__all__ = ["GUARD_EXACT_HUNKS", "GUARD_SUFFIXES", "guard", "new_file_quotes"]

GUARD_EXACT_HUNKS = 32  # an exact change of more hunks (a release diff) is not parsed for a note


def guard(path: str, before: str, edit: TextEdit) -> TextEdit:
    """Refuse a leniently placed change that breaks parsing (``engine.syntax``); note an exact one.

    A change whose added lines hold curly quotes where the result would not parse, and
    whose result parses with them straight, is written straight (a chat interface curled
    the reply), with a note saying so.
    """
    if edit.after == before or not path.lower().endswith(GUARD_SUFFIXES):
        return edit
    lenient = edit.placed_leniently
    if not lenient and len(edit.hunks) > GUARD_EXACT_HUNKS:
        return edit
    from nbedit.engine.syntax import straightened, text_problem

    if edit.hunks:
        items = sorted(edit.hunks, key=lambda item: (item.match.start, item.match.end))
        spans = [(item.match.start, item.match.end, item.match.replacement) for item in items]
    else:  # blocks applied in order: one span, the whole text
        items = []
        spans = [(0, len(before), edit.after)]
    problem = text_problem(path, before, edit.after, spans)
    if problem is None:
        return edit
    olds = [item.hunk.old for item in items] or [before]
    straight = [straightened(replacement, old) for (_, _, replacement), old in zip(spans, olds, strict=True)]
    if any(value is not None for value in straight):
        spans_straight = [
            (start, end, value if value is not None else replacement)
            for (start, end, replacement), value in zip(spans, straight, strict=True)
        ]
        after = _spliced_spans(before, spans_straight)
        if text_problem(path, before, after, spans_straight) is None:
            note = (
                "curly quotes in the added lines were written as straight quotes: with them the result "
                f"would not parse ({problem.describe()[len('the result would not parse: ') :]}), a sign that "
                "a chat interface curled the reply"
            )
            hunks = tuple(
                LocatedHunk(item.hunk, replace(item.match, replacement=span[2]), item.cell)
                for item, span in zip(items, spans_straight, strict=False)
            )
            return replace(edit, after=after, hunks=hunks, notes=(*edit.notes, note))
    if lenient:
        raise UnsafeChange(
            f"{path}: {problem.describe()} (it parsed before); the change was placed leniently "
            "(see the match tiers), so nbedit will not write it: check the indentation and "
            "punctuation of the change against the file",
            path=path,
            reason=problem.describe(),
            line=problem.line,
        )
    note = (
        f"warning: {problem.describe()} (it parsed before; the change was found exactly, "
        "so it is written as asked)"
    )
    return replace(edit, notes=(*edit.notes, note))


def _spliced_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in spans:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def new_file_quotes(path: str, content: str) -> tuple[str, tuple[str, ...]]:
    """A new Python or JSON file that parses only with its curly quotes straight is written straight."""
    from nbedit.engine.syntax import straightened, text_problem

    straight = straightened(content, "")
    if straight is None:
        return content, ()
    empty = "" if path.lower().endswith((".py", ".pyi", ".pyw")) else "null"
    problem = text_problem(path, empty, content, [(0, len(empty), content)])
    if problem is None or text_problem(path, empty, straight, [(0, len(empty), straight)]) is not None:
        return content, ()
    note = (
        "curly quotes were written as straight quotes: with them the new file would not parse "
        f"({problem.describe()[len('the result would not parse: ') :]}), a sign that a chat interface "
        "curled the reply"
    )
    return straight, (note,)
