"""Word highlights: which pieces of a removed line and the added line paired with it changed.

Split from ``rows`` (which builds a file's rows) because it is a stage of its own with its
own limits: lines shorter than ``MAX_HIGHLIGHT_LENGTH`` get a ``SequenceMatcher`` over their
words (highlights snap to whole words; lines too unlike each other get none, where a word
salad would only distract); longer lines (a markdown paragraph, a minified line) get the
stretch between their common head and tail, in linear time. Lines that differ only in their
line ending show the ending itself (``␍␊`` against ``␊``) rather than two equal lines.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from nbedit._dataclass import dataclass
from nbedit.engine.text import strip_newline

__all__ = ["MAX_HIGHLIGHT_LENGTH", "Segment", "highlight_pair"]

# Word-aligned highlights for lines shorter than this; longer ones get their changed middle highlighted.
MAX_HIGHLIGHT_LENGTH = 400


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of one line; ``changed`` pieces get the word highlight."""

    text: str
    changed: bool = False


# Words, runs of spaces, and single punctuation marks: highlights snap to whole words.
_WORD = re.compile(r"\w+|\s+|[^\w\s]")


def highlight_pair(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """The segments of a removed line and of the added line paired with it (line endings included)."""
    old_body, new_body = strip_newline(old), strip_newline(new)
    if old_body == new_body:
        # Only the line ending differs: make that visible rather than showing two equal lines.
        return (Segment(old_body), Segment(_ending_mark(old), True)), (
            Segment(new_body),
            Segment(_ending_mark(new), True),
        )
    if len(old_body) > MAX_HIGHLIGHT_LENGTH or len(new_body) > MAX_HIGHLIGHT_LENGTH:
        return _highlight_long(old_body, new_body)
    if _unlike(old_body, new_body):
        return (Segment(old_body),), (Segment(new_body),)
    old_words, new_words = _WORD.findall(old_body), _WORD.findall(new_body)
    old_segments: list[Segment] = []
    new_segments: list[Segment] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_words, new_words, autojunk=False).get_opcodes():
        changed = tag != "equal"
        if i2 > i1:
            old_segments.append(Segment("".join(old_words[i1:i2]), changed))
        if j2 > j1:
            new_segments.append(Segment("".join(new_words[j1:j2]), changed))
    return _coalesce(old_segments), _coalesce(new_segments)


def _unlike(old: str, new: str) -> bool:
    """Whether ``SequenceMatcher(None, old, new, autojunk=False).ratio()`` is under 0.4.

    The matcher's first block is a longest common substring, so its matched characters are at
    least the longer of the common head and the common tail: when that alone reaches the bar
    (an edited line usually keeps most of itself) the answer is known without aligning the
    characters, and it is the same answer.
    """
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if 2.0 * max(head, tail) / (len(old) + len(new)) >= 0.4:
        return False
    return SequenceMatcher(None, old, new, autojunk=False).ratio() < 0.4


def _highlight_long(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Long lines (a markdown paragraph, a minified line): the stretch between the common head and
    tail is highlighted, widened to whole words. Linear time, where a word alignment is quadratic."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    while head > 0 and old[head - 1].isalnum():
        head -= 1
    while tail > 0 and old[len(old) - tail].isalnum():
        tail -= 1

    def pieces(text: str) -> tuple[Segment, ...]:
        middle = text[head : len(text) - tail]
        parts = [Segment(text[:head]), Segment(middle, True), Segment(text[len(text) - tail :])]
        return tuple(part for part in parts if part.text)

    return pieces(old), pieces(new)


def _ending_mark(line: str) -> str:
    if line.endswith("\r\n"):
        return "␍␊"
    if line.endswith("\n"):
        return "␊"
    return "(no newline at end)"


def _coalesce(segments: list[Segment]) -> tuple[Segment, ...]:
    result: list[Segment] = []
    for segment in segments:
        if result and result[-1].changed == segment.changed:
            result[-1] = Segment(result[-1].text + segment.text, segment.changed)
        else:
            result.append(segment)
    return tuple(result)
