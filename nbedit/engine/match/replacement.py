"""What is written at a found place: the exact change, in the file's layout.

Leniency decides where, never what. The replacement is built so that bytes outside what the
hunk really changes stay as they are: lines the hunk keeps come from the file (not from the
patch), new lines take the file's newline style, are re-indented by the indentation tier's
offset, and keep the file's curly quotes when a quote-normalised match found them. The
carrying itself is ``engine/transport.py``'s (imported only when a lenient tier found the
place: a change found exactly, as most are, never loads it); a place it cannot carry the
change onto is an ``UnsafeChange``. A pure insertion (no old text) is placed here too: it
has nothing to find, only a line and a newline style to take.
"""

from __future__ import annotations

from nbedit.engine.match.search import _Hit
from nbedit.engine.match.tiers import FileIndex
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.text import dominant_newline, newline_of, split_lines, strip_newline
from nbedit.errors import UnsafeChange

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from nbedit.engine.transport import Refusal


def _insertion(index: FileIndex, hunk: Hunk, low: int, high: int, near_line: int | None) -> Match:
    """A hunk with no old text: append at the end, or insert before a line."""
    text = index.text
    if hunk.at_end or near_line is None:
        position = high
        prefix = ""
        if position > 0 and not text[:position].endswith("\n"):
            prefix = dominant_newline(text)
        replacement = prefix + _adapt_newlines(hunk.new, dominant_newline(text))
        if prefix and hunk.at_end and position == len(text):
            # appended to a file without a final newline: it still has none afterwards
            replacement = strip_newline(replacement)
        line = index.line_of(max(0, position - 1)) + (2 if position else 1)
    else:
        line_number = min(max(near_line, 1), index.line_count + 1)
        position = max(low, min(index.starts[min(line_number - 1, len(index.starts) - 1)], high))
        newline = _neighbour_newline(index, max(line_number - 2, 0))
        replacement = _adapt_newlines(hunk.new, newline)
        if position == len(text) and text and not text.endswith("\n"):
            replacement = newline + replacement.removesuffix(newline)
        line = line_number
    return Match(position, position, replacement, Tier.EXACT, 1.0, line, 0, None)


def _build(index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, score: float, near_line: int | None) -> Match:
    replacement = _replacement(index, hunk, hit, tier)
    if not isinstance(replacement, str):
        raise _refusal_error(index, hunk, hit, tier, replacement)
    offset = None
    if near_line is not None and hunk.start_line is not None:
        offset = hit.first_line + 1 - hunk.start_line
    return Match(
        hit.start, hit.end, replacement, tier, round(score, 4), hit.first_line + 1, hit.line_count, offset
    )


def _replacement(
    index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, strict_context: bool = False
) -> str | Refusal:
    """What goes in place of the hit: the exact change, carried by ``transport``.

    ``strict_context``: the lines old and new share must be the file's up to layout (the
    fuzzy tier without a line number: see ``transport``)."""
    text = index.text
    matched = text[hit.start : hit.end]
    newline = _span_newline(index, hit)
    if tier is Tier.EXACT:
        replacement = hunk.new
        if newline == "\r\n" and "\r" not in hunk.new and "\r" not in hunk.old:
            # a patch written with LF lines, matched exactly within one CRLF line
            replacement = _adapt_newlines(replacement, newline)
    else:
        from nbedit.engine.transport import Refusal, split_change_lines, transport

        first_partial = hit.start != index.starts[hit.first_line]
        region = split_lines(matched)
        if len(region) < hit.line_count and (not matched or matched.endswith("\n")):
            region.append("")  # the region ends on an empty last line
        if len(region) != len(split_change_lines(hunk.old)[0]):
            return Refusal("the located lines do not line up with the old text's lines")
        carried = transport(
            hunk.old,
            hunk.new,
            region,
            newline=newline,
            first_partial=first_partial,
            strict_context=strict_context,
            file_text=text,
        )
        if isinstance(carried, Refusal):
            return carried
        replacement = carried
    if (
        tier is not Tier.EXACT
        and hunk.whole_lines
        and hunk.old
        and not hunk.old.endswith("\n")
        and replacement.endswith("\n")
        and _final_newline_follows(text, hit.end)
    ):
        # the old text's last line had no newline ("\\ No newline at end of file") and was found as the
        # file's last line, whose newline follows the match: the file gives the newline the new text
        # ends with, so it is not written twice (the change "add the final newline" is already there)
        return replacement[:-2] if replacement.endswith("\r\n") else replacement[:-1]
    if hunk.whole_lines and not matched.endswith("\n") and hit.end == len(text) and hunk.old.endswith("\n"):
        # matched a last line without "\n" through the relaxed rule: keep it absent
        if replacement.endswith("\r\n"):
            replacement = replacement[:-2]
        elif replacement.endswith("\n"):
            replacement = replacement[:-1]
    return replacement


def _final_newline_follows(text: str, end: int) -> bool:
    """Whether all that follows ``end`` is the file's final newline (LF, or a whole CRLF)."""
    rest = len(text) - end
    if rest == 2:
        return text.endswith("\r\n")
    return rest == 1 and text.endswith("\n") and not text.endswith("\r\n")


def _refusal_error(index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, refusal: Refusal) -> UnsafeChange:
    line = hit.first_line + 1 + (refusal.line or 0)
    return UnsafeChange(
        f"found the place for the change at line {hit.first_line + 1} ({tier.explanation}), but cannot "
        f"write the change there exactly: {refusal.reason} (file line {line})",
        reason=refusal.reason,
        line=line,
    )


def _span_newline(index: FileIndex, hit: _Hit) -> str:
    """The line ending the replacement takes: the span's own, if it has one style."""
    text = index.text
    start = text.rfind("\n", 0, hit.start) + 1
    stop = text.find("\n", max(hit.start, hit.end - 1))
    stop = len(text) if stop == -1 else stop + 1
    newlines, crlf = text.count("\n", start, stop), text.count("\r\n", start, stop)
    if newlines and crlf == newlines:
        return "\r\n"
    if newlines and not crlf:
        return "\n"
    first_end = text.find("\n", start, stop)
    if first_end != -1:
        return "\r\n" if text[first_end - 1 : first_end] == "\r" else "\n"
    if start:  # a last line without an ending: take the previous line's
        return "\r\n" if text[start - 2 : start] == "\r\n" else "\n"
    return dominant_newline(text)


def _neighbour_newline(index: FileIndex, line: int) -> str:
    for number in (line, line - 1, line + 1):
        if 0 <= number < index.line_count:
            ending = newline_of(index.line(number))
            if ending:
                return ending
    return dominant_newline(index.text)


def _adapt_newlines(text: str, newline: str) -> str:
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)
