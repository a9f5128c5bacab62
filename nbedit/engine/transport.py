"""Transport: carry the exact change old -> new onto a located place.

The matcher decides *where* a hunk goes (``engine/match/``: exact, normalised and
fuzzy tiers). This module decides *what* is written there, and it is strict:
leniency may find the place despite drift, but the change written is exactly
what old -> new says.

1. Old and new are aligned line by line with **exact** comparison (every
   character: indentation, punctuation, trailing whitespace). A line old and
   new share identically is context: it is copied from the file, with its own
   bytes, so drift in context never leaks into the result.
2. Every other line takes the new text, adapted only by the located
   indentation offset (the uniform prefix the file adds to, or lacks from, the
   old text) and the file's line endings. Within a rewritten line, characters
   the edit left alone keep the file's spelling where the file differs from the
   old text only by Unicode punctuation (a curly quote stays curly). A curly
   quote, dash or odd space the old text wrote where the file has a plain one
   (a reply curled by a chat interface) is written in the new text as the file
   spells it too (``punctuation_map``): the same reply curled both. Every other
   character the edit changes is the new text's.
3. Every line the change removes or rewrites must be in the file, equal to the
   old line up to the lenient tiers' normalisations (line endings, trailing
   whitespace, Unicode punctuation, the uniform indentation offset). One
   exception is the line a model mis-copied in the old text whose new text is
   exactly the file's line: it was not meant to change, and the result holds
   the file's line either way. Anything else is refused: "similar enough" is not
   "there".
   Tabs for spaces (or spaces for tabs) count as one offset when every line pair
   agrees on one width and shift (``IndentUnit``).
4. With ``strict_context`` (the fuzzy tier placing a hunk that has no line
   number), a line old and new *both* carry must be the file's line up to
   layout: whitespace, quote style, a trailing comma or semicolon. Any other
   difference (a name, a keyword argument, a number, a blank line where the
   file has text) means the reply believes the file says something it does
   not: copying the file's line would silently drop that part of the change
   (real replies: ``commonpath`` where the file has ``commonprefix``,
   ``input=`` where it has ``stdin=``), so it is a conflict, refused naming
   the line. Likewise a ``def``/``class`` line is never "mis-copied" when its
   name differs: a different name is another function, not a typo.
5. When the offset cannot be applied (the file's indentation relates to the
   old text's in different ways on different lines, or a new line is shallower
   than the prefix to remove), the change is refused rather than guessed.

The region is given as the file's lines, aligned one to one with the old
text's lines: every tier locates a span of exactly that many lines. The first
line may start mid-line (an old/new pair that starts inside a line); such a
line takes no indentation offset.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from nbedit._dataclass import dataclass
from nbedit.engine.text import newline_of, strip_newline

__all__ = [
    "IndentUnit",
    "UNICODE_TABLE",
    "align",
    "Offset",
    "Refusal",
    "indentation_offset",
    "names",
    "normalised_line",
    "punctuation_map",
    "same_up_to_layout",
    "split_change_lines",
    "transport",
    "uniform_offset",
]

UNICODE_TABLE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u2007": " ",
        "\u202f": " ",
        "\u2009": " ",
        "\u200a": " ",
        "\u3000": " ",
        "\u2002": " ",
        "\u2003": " ",
    }
)
_BLANKS = " \t\r\f\v"
MISCOPY_SIMILARITY = 0.8  # a mis-copied old line is at least this similar to the file's line


@dataclass(frozen=True, slots=True)
class Offset:
    """How the file's indentation relates to the old text's: ``file = added + old[len(removed):]``."""

    added: str = ""
    removed: str = ""

    def apply(self, line: str) -> str | None:
        """``line`` moved by the offset; None when it is shallower than the prefix to remove."""
        if not line.strip(_BLANKS):
            return (
                line
                if not self.removed
                else line[len(self.removed) :]
                if line.startswith(self.removed)
                else line
            )
        if self.removed:
            if not line.startswith(self.removed):
                return None
            line = line[len(self.removed) :]
        return self.added + line

    def __str__(self) -> str:
        if self.added:
            return f"{_describe_indent(self.added)} deeper"
        if self.removed:
            return f"{_describe_indent(self.removed)} shallower"
        return "the same indentation"


def _describe_indent(prefix: str) -> str:
    tabs, spaces = prefix.count("\t"), prefix.count(" ")
    parts = [f"{spaces} space{'s' if spaces != 1 else ''}"] if spaces else []
    if tabs:
        parts.append(f"{tabs} tab{'s' if tabs != 1 else ''}")
    return " and ".join(parts)


@dataclass(frozen=True, slots=True)
class IndentUnit:
    """Tabs for spaces (or spaces for tabs), uniformly: ``file = tabs((old - shift) / width)``.

    Real replies re-indent a tab-indented file with spaces (and the reverse). When every
    non-blank line pair agrees on one width and one shift, each new line's indentation is
    converted the same way; anything else is refused as before.
    """

    width: int
    shift: int  # in the old text's characters
    to_tabs: bool  # the file uses tabs, the old text spaces

    @classmethod
    def between(
        cls, old_lines: Sequence[str], file_lines: Sequence[str], *, skip_first: bool = False
    ) -> IndentUnit | None:
        pairs = []
        for number, (old_line, file_line) in enumerate(zip(old_lines, file_lines, strict=False)):
            if (skip_first and number == 0) or not old_line.strip(_BLANKS) or not file_line.strip(_BLANKS):
                continue
            if normalised_line(old_line) != normalised_line(file_line):
                continue
            pairs.append((_indent(old_line), _indent(file_line)))
        if not pairs:
            return None
        for to_tabs, old_char, file_char in ((True, " ", "\t"), (False, "\t", " ")):
            if not all(set(old) <= {old_char} and set(new) <= {file_char} for old, new in pairs):
                continue
            for width in (4, 2, 8):
                counts = [(len(old), len(new)) for old, new in pairs]
                if to_tabs:
                    shifts = {old - width * new for old, new in counts}
                else:
                    shifts = {new - width * old for old, new in counts}
                if len(shifts) == 1 and len({new for _, new in counts}) > 1 or (
                    len(shifts) == 1 and next(iter(shifts)) == 0
                ):
                    return cls(width, next(iter(shifts)), to_tabs)
        return None

    def apply(self, line: str) -> str | None:
        body = line.lstrip(" \t")
        if not body.strip(_BLANKS):
            return line if not line.strip(_BLANKS) else body
        indent = line[: len(line) - len(body)]
        if self.to_tabs:
            if set(indent) - {" "} or (len(indent) - self.shift) % self.width or len(indent) < self.shift:
                return None
            return "\t" * ((len(indent) - self.shift) // self.width) + body
        if set(indent) - {"\t"}:
            return None
        return " " * (self.width * len(indent) + self.shift) + body

    @property
    def removed(self) -> str:  # read by the refusal message of a line that cannot move
        return ""

    def __str__(self) -> str:
        kind = "tabs for spaces" if self.to_tabs else "spaces for tabs"
        return f"{kind} ({self.width} to a tab)"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a change cannot be carried onto a place; ``line`` is 0-based in the region."""

    reason: str
    line: int | None = None
    kind: str = (
        "missing"  # "missing": a changed line is not in the file; "indentation": the offset cannot apply
    )


def split_change_lines(text: str) -> tuple[list[str], bool]:
    """Lines of an old or new text without endings (a ``"\\r"`` before ``"\\n"`` dropped), and the final-newline flag."""
    lines = text.split("\n")
    final = text.endswith("\n")
    if final:
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines], final


def normalised_line(line: str) -> str:
    """A line as the most lenient exact-ish tier compares it: no indentation, trailing blanks or curly punctuation."""
    return line.strip(_BLANKS).translate(UNICODE_TABLE)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _pair_offset(old_line: str, file_line: str) -> Offset | None:
    old_indent, file_indent = _indent(old_line), _indent(file_line)
    if file_indent.endswith(old_indent):
        return Offset(added=file_indent[: len(file_indent) - len(old_indent)])
    if old_indent.endswith(file_indent):
        return Offset(removed=old_indent[: len(old_indent) - len(file_indent)])
    return None


def indentation_offset(
    old_lines: Sequence[str], file_lines: Sequence[str], *, skip_first: bool = False
) -> Offset | Refusal:
    """The uniform offset between old lines and the file lines they were located at.

    Decided by the lines that are the same but for indentation (the strong
    pairs); when there are none (all context drifted), by every non-blank pair.
    Pairs that disagree make the offset unclear: a Refusal.
    """
    strong: list[tuple[int, Offset | None]] = []
    weak: list[tuple[int, Offset | None]] = []
    for number, (old_line, file_line) in enumerate(zip(old_lines, file_lines, strict=False)):
        if (skip_first and number == 0) or not old_line.strip(_BLANKS) or not file_line.strip(_BLANKS):
            continue
        pair = (number, _pair_offset(old_line, file_line))
        (strong if normalised_line(old_line) == normalised_line(file_line) else weak).append(pair)
    pairs = strong or weak
    if not pairs:
        return Offset()
    first = pairs[0][1]
    for number, offset in pairs:
        if offset is None or offset != first:
            return Refusal(
                "the file's indentation differs from the old text's by different amounts on different "
                "lines, so nbedit cannot tell how to indent the new lines",
                line=number,
                kind="indentation",
            )
    assert first is not None  # every pair agreed with it, and none was None
    return first


def uniform_offset(
    old_lines: Sequence[str], file_lines: Sequence[str], *, skip_first: bool = False
) -> Offset | None:
    """The offset every non-blank pair agrees on (the indentation tier's rule), or None."""
    found: Offset | None = None
    for number, (old_line, file_line) in enumerate(zip(old_lines, file_lines, strict=False)):
        if (skip_first and number == 0) or not old_line.strip(_BLANKS) or not file_line.strip(_BLANKS):
            continue
        offset = _pair_offset(old_line, file_line)
        if offset is None or (found is not None and offset != found):
            return None
        found = offset
    return found or Offset()


def transport(
    old: str,
    new: str,
    file_lines: Sequence[str],
    *,
    newline: str,
    first_partial: bool = False,
    offset: Offset | None = None,
    strict_context: bool = False,
    file_text: str | None = None,
) -> str | Refusal:
    """The text to write in place of ``file_lines`` so the file holds the change old -> new.

    ``file_lines`` are the located lines with their endings, one per line of
    ``old`` (the last may lack an ending: end of file, or an old text that ends
    mid-line). ``newline`` is the ending for lines that have no file line to
    take one from. ``first_partial``: the region starts mid-line, so its first
    line takes no indentation offset. ``offset`` overrides the offset found
    from the lines (the indentation tier already knows it). ``strict_context``:
    a line old and new share must be the file's up to layout (rule 4 above).
    ``file_text``: the whole file, to tell which curly characters it never uses.
    """
    old_lines, _ = split_change_lines(old)
    new_lines, new_final = split_change_lines(new)
    if len(file_lines) != len(old_lines):
        raise ValueError("transport needs one file line per old line")
    file_bodies = [strip_newline(line) for line in file_lines]
    found = (
        offset if offset is not None else indentation_offset(old_lines, file_bodies, skip_first=first_partial)
    )
    if isinstance(found, Refusal):
        unit = IndentUnit.between(old_lines, file_bodies, skip_first=first_partial)
        if unit is None:
            return found
        found = unit  # type: ignore[assignment]

    def moved(line: str, first: bool) -> str | None:
        return line if first and first_partial else found.apply(line)

    spelling = punctuation_map(old_lines, file_bodies)
    if spelling and file_text is not None:
        # the reply was curled: so was the rest of its new text, where the file never uses the character
        for char in {char for char in new if ord(char) in UNICODE_TABLE and ord(char) not in spelling}:
            if char not in file_text and char not in old and _plain_absent(char, old):
                spelling[ord(char)] = char.translate(UNICODE_TABLE)

    pieces: list[str] = []
    for tag, old_first, old_last, new_first, new_last in align(old_lines, new_lines):
        if tag == "equal":
            if strict_context:
                for number in range(old_first, old_last):
                    if not same_up_to_layout(old_lines[number], file_bodies[number]):
                        return _conflict(number, old_lines[number], file_bodies[number])
            pieces.extend(file_lines[old_first:old_last])
            continue
        block: list[str] = []
        for number in range(new_first, new_last):
            line = moved(new_lines[number], number == 0)
            if line is None:
                return Refusal(
                    f"new line {number + 1} ({new_lines[number].strip()[:60]!r}) is less indented than the "
                    f"{_describe_indent(found.removed)} the file lacks compared with the old text",
                    kind="indentation",
                )
            block.append(line.translate(spelling) if spelling else line)
        for number in range(old_first, old_last):
            old_moved = moved(old_lines[number], number == 0)
            file_body = file_bodies[number]
            if old_moved is not None and _same_but_spelling(old_moved, file_body):
                continue
            if _miscopied(old_lines[number], file_body, block):
                continue  # mis-copied in the old text; the new text keeps the file's line
            return Refusal(
                f"the old text's line {number + 1} ({old_lines[number].strip()[:60]!r}) is not in the file: "
                f"the file has {file_body.strip()[:60]!r} there",
                line=number,
            )
        for step, line in enumerate(block):
            ending = newline
            old_number = old_first + step
            if tag == "replace" and old_number < old_last:
                ending = newline_of(file_lines[old_number]) or newline
                old_moved = moved(old_lines[old_number], old_number == 0)
                if old_moved is not None:
                    line = _keep_spelling(old_moved, file_bodies[old_number], line)
            pieces.append(line + ending)
    for number in range(len(pieces) - 1):
        if not newline_of(pieces[number]):
            pieces[number] += newline  # a file line that ended the region, with new lines after it
    if pieces:
        # the result ends with a line ending exactly when the new text does
        has_ending = bool(newline_of(pieces[-1]))
        if new_final and not has_ending:
            pieces[-1] += newline
        elif not new_final and has_ending:
            pieces[-1] = strip_newline(pieces[-1])
    return "".join(pieces)


def _conflict(number: int, old_line: str, file_line: str) -> Refusal:
    return Refusal(
        f"the old text's line {number + 1} ({old_line.strip()[:60]!r}) is kept by the change, but the "
        f"file has {file_line.strip()[:60]!r} there: the change expects a line the file does not have "
        "(copy that line from the file, or make the change it implies explicit)",
        line=number,
        kind="conflict",
    )


def align(old_lines: list[str], new_lines: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Exact line alignment of old and new, as diff tools draw it.

    The shared head and tail are taken first (as GNU diff and git do), so a
    repeated line such as ``]`` is paired with its own neighbour rather than
    with a later copy; difflib aligns only the differing middle.
    """
    head, tail = _shared_ends(old_lines, new_lines)
    old_end, new_end = len(old_lines) - tail, len(new_lines) - tail
    opcodes: list[tuple[str, int, int, int, int]] = []
    if head:
        opcodes.append(("equal", 0, head, 0, head))
    middle = difflib.SequenceMatcher(None, old_lines[head:old_end], new_lines[head:new_end], autojunk=False)
    for tag, old_first, old_last, new_first, new_last in middle.get_opcodes():
        opcodes.append((tag, old_first + head, old_last + head, new_first + head, new_last + head))
    if tail:
        opcodes.append(("equal", old_end, len(old_lines), new_end, len(new_lines)))
    return opcodes


def _miscopied(old_line: str, file_line: str, block: list[str]) -> bool:
    """The old line is a near copy of the file's line, and the new text keeps the file's line as it is.

    A blank file line, or one that is not nearly the old line, is never taken as
    mis-copied: that would be a different line, not a slip of the pen.
    """
    if not file_line.strip(_BLANKS) or file_line not in block or max(len(old_line), len(file_line)) > 1_000:
        return False
    if _defines(old_line) or _defines(file_line):
        if names(old_line) != names(file_line):
            return False  # another function or class, not a slip of the pen
    from rapidfuzz import fuzz

    return fuzz.ratio(normalised_line(old_line), normalised_line(file_line)) >= MISCOPY_SIMILARITY * 100


_NAME = re.compile(r"[^\W\d]\w*")
_WORD_GAP = re.compile(r"(?<=\w)\s+(?=\w)")  # a gap between two words stays a gap
_LAYOUT = re.compile(r"\s+")


def names(line: str) -> list[str]:
    """The identifiers and keywords of a line, in order (keyword arguments included)."""
    return _NAME.findall(line)


def _defines(line: str) -> bool:
    body = line.lstrip(_BLANKS)
    return body.startswith(("def ", "async def ", "class "))


def same_up_to_layout(first: str, second: str) -> bool:
    """Equal up to whitespace, quote style, Unicode punctuation and a trailing comma or semicolon."""
    if first == second:
        return True
    return _layout_key(first) == _layout_key(second)


def _layout_key(line: str) -> str:
    spaced = _WORD_GAP.sub("\x00", line.translate(UNICODE_TABLE))
    return _LAYOUT.sub("", spaced).replace("'", '"').rstrip(",;")


def punctuation_map(old_lines: Sequence[str], file_lines: Sequence[str]) -> dict[int, str]:
    """The spelling the old text needed: each curly quote, dash or odd space it wrote where the
    file has another character of the same class (``“`` for ``"``), as a ``str.translate`` table.

    A reply whose quotes were curled (chat interfaces do it) curls its new text too; those
    characters are artifacts of the same reply and are written as the file spells them. A
    character the old text also wrote where the file has it the same, or mapped two ways,
    is left as written (the file really uses it).
    """
    seen: dict[str, str] = {}
    kept: set[str] = set()
    for old_line, file_line in zip(old_lines, file_lines, strict=False):
        old_body, file_body = old_line.strip(_BLANKS), file_line.strip(_BLANKS)
        if len(old_body) != len(file_body) or old_body == file_body:
            if old_body == file_body:
                kept.update(char for char in old_body if ord(char) in UNICODE_TABLE)
            continue
        for old_char, file_char in zip(old_body, file_body, strict=True):
            if ord(old_char) not in UNICODE_TABLE:
                continue
            if old_char == file_char:
                kept.add(old_char)
            elif old_char.translate(UNICODE_TABLE) == file_char.translate(UNICODE_TABLE):
                if seen.setdefault(old_char, file_char) != file_char:
                    kept.add(old_char)
    old_text = "\n".join(old_lines)
    return {
        ord(char): file_char
        for char, file_char in seen.items()
        if char not in kept and _plain_absent(char, old_text)
    }


def _plain_absent(char: str, old: str) -> bool:
    """The old text never writes ``char``'s plain counterpart (a curled reply curls every one);
    a space-like character is plain text's own artifact, never a choice."""
    plain = char.translate(UNICODE_TABLE)
    return plain == " " or plain not in old


def _shared_ends(first: Sequence[str], second: Sequence[str]) -> tuple[int, int]:
    """Lengths of the shared head and of the shared tail (not overlapping the head)."""
    head = 0
    limit = min(len(first), len(second))
    while head < limit and first[head] == second[head]:
        head += 1
    tail = 0
    while tail < limit - head and first[-1 - tail] == second[-1 - tail]:
        tail += 1
    return head, tail


def _same_but_spelling(old_line: str, file_line: str) -> bool:
    """Equal up to trailing blanks and Unicode punctuation (indentation already moved)."""
    if old_line == file_line:
        return True
    return old_line.rstrip(_BLANKS).translate(UNICODE_TABLE) == file_line.rstrip(_BLANKS).translate(
        UNICODE_TABLE
    )


def _keep_spelling(old_line: str, file_line: str, new_line: str) -> str:
    """``new_line`` with the file's punctuation where the edit kept the old text's characters.

    Only the shared head and tail of old and new count as kept (linear time, so
    long minified lines stay cheap), and only characters the file spells
    differently by Unicode punctuation (curly quotes, dashes, non-breaking
    spaces) are taken from it; every character the edit changed is new's.
    """
    old_body, file_body = old_line.rstrip(_BLANKS), file_line.rstrip(_BLANKS)
    if old_body == file_body or len(old_body) != len(file_body):
        return new_line
    new_body = new_line.rstrip(_BLANKS)
    trailing = new_line[len(new_body) :]
    head, tail = _shared_ends(old_body, new_body)
    if head == len(old_body) == len(new_body):
        return file_body + trailing
    middle = new_body[head : len(new_body) - tail]
    return file_body[:head] + middle + file_body[len(file_body) - tail :] + trailing
