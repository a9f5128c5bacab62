"""Unified-diff header lines read by hand: the exact twins of the readers' regular expressions.

``re`` costs a command about 4 ms to import and compile its patterns, a tenth of a small
``nbedit apply`` (issue 27). The lines a plain diff is made of (hunk headers, a run's end,
git's ``index`` and mode lines) are read here with string methods instead, each function
accepting and refusing exactly what its pattern does, with the same groups: the pattern is
in each docstring, and ``tests/test_diff_lines.py`` runs both over generated and real lines
(every Unicode character where a class is involved: ``\\d`` and ``\\s`` are Unicode's).
A reader that walks a text line by line (``run_end``, ``header_numbers``) is used for a
small text only; past ``HAND_READ`` characters the C-speed pattern is compiled and wins.
"""

from __future__ import annotations

__all__ = [
    "HAND_READ",
    "HUNK_HEADER",
    "RUN_END",
    "decimal_hunk_counts",
    "hunk_numbers",
    "index_blob",
    "is_mode",
    "run_end",
]

HUNK_HEADER = r"@@ -([0-9]{1,9})(?:,([0-9]{1,9}))? \+([0-9]{1,9})(?:,([0-9]{1,9}))? @@(?!@)"
# The first line from which a run of hunks surely ends: one that is neither a hunk header nor a
# body line ('@@@', a bad header, a blank line, '\ No newline', 'diff'...), or a '--- ' line (the
# next file's header in a diff without 'diff' lines).
RUN_END = r"\n(?:[^ +\-@]|--- |@(?!" + HUNK_HEADER[1:] + "))"
HAND_READ = 1 << 14  # characters: a longer stretch is scanned by the compiled pattern

_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
Numbers = tuple[str, "str | None", str, "str | None"]


def _pair(part: str) -> tuple[str, str | None] | None:
    """``([0-9]{1,9})(?:,([0-9]{1,9}))?`` matching all of ``part``: its groups, or None."""
    first, comma, second = part.partition(",")
    if not (0 < len(first) <= 9 and first.isascii() and first.isdigit()):
        return None
    if not comma:
        return first, None
    if not (0 < len(second) <= 9 and second.isascii() and second.isdigit()):
        return None
    return first, second


def hunk_numbers(line: str) -> Numbers | None:
    """``re.match(HUNK_HEADER, line).groups()``, or None where it does not match.

    The numbers hold only digits, ',' and one ' +', so the header's ' @@' is the first
    one after '@@ -'; what is between is two number pairs split at ' +'. Each
    ``[0-9]{1,9}`` is greedy and followed by a non-digit, so it is a whole run of 1 to 9
    ASCII digits (``isascii`` and ``isdigit``: ``isdigit`` alone takes other scripts'
    digits), and a count that does not fit leaves no other reading.
    """
    if not line.startswith("@@ -"):
        return None
    close = line.find(" @@", 4)
    if close < 0 or line.startswith("@", close + 3):
        return None
    old, plus, new = line[4:close].partition(" +")
    if not plus:
        return None
    old_pair = _pair(old)
    new_pair = _pair(new)
    if old_pair is None or new_pair is None:
        return None
    return old_pair[0], old_pair[1], new_pair[0], new_pair[1]


def run_end(text: str, position: int, end: int, stop: int | None = None) -> int | None:
    """Where ``re.search(RUN_END, text[:end], position)`` matches (the newline's offset), or None.

    A newline before ``end`` matches when the character after it (before ``end``) is not
    ' ', '+', '-' or '@' (a newline too), when '--- ' follows it whole, or when '@'
    follows it and no hunk header starts there in the text cut at ``end``. A line by
    line walk, so the caller gives it a short stretch: only newlines before ``stop``
    (default ``end``) are looked at, and None then means none of those matches.
    """
    find = text.find
    last = end if stop is None else min(stop, end)
    while True:
        position = find("\n", position, last)
        if position < 0:
            return None
        after = position + 1
        if after < end:
            mark = text[after]
            if mark not in " +-@":
                return position
            if mark == "-":
                if text.startswith("--- ", after, end):
                    return position
            elif mark == "@":
                stop = find("\n", after, end)
                if hunk_numbers(text[after : end if stop < 0 else stop]) is None:
                    return position
        position = after


def header_numbers(lines: list[str]) -> list[Numbers]:
    """Each hunk header's numbers (``hunk_numbers``) of header lines known to match."""
    return [numbers for numbers in map(hunk_numbers, lines) if numbers is not None]


def is_mode(text: str) -> bool:
    """``re.fullmatch("[0-7]{6}", text) is not None``."""
    return len(text) == 6 and _OCTAL.issuperset(text)


def _hex_end(line: str, start: int) -> int:
    """The end of the run of 4 to 64 hex digits at ``start`` that no hex digit follows, or -1."""
    end = start
    size = len(line)
    while end < size and line[end] in _HEX:
        end += 1
    return end if 4 <= end - start <= 64 else -1


def index_blob(line: str) -> str | None:
    """Group 1 of ``re.match(r"index ([0-9a-fA-F]{4,64})\\.\\.[0-9a-fA-F]{4,64}(?: [0-7]{6})?\\s*$", line)``.

    Both hex runs are greedy and need a non-hex character after them ('..', ' ', a space
    or the end), so each is exactly a whole run of 4 to 64; ``\\s`` is ``str.isspace``, and
    ``\\s*$`` holds when only whitespace is left (a final newline included).
    """
    if not line.startswith("index "):
        return None
    end = _hex_end(line, 6)
    if end < 0 or not line.startswith("..", end):
        return None
    after = _hex_end(line, end + 2)
    if after < 0:
        return None
    rest = line[after:]
    if not rest or rest.isspace():
        return line[6:end]
    if rest[:1] == " " and is_mode(rest[1:7]) and (len(rest) == 7 or rest[7:].isspace()):
        return line[6:end]
    return None


def decimal_hunk_counts(line: str) -> tuple[str | None, str | None] | None:
    """``re.match(r"@@ -\\d+(?:,(\\d+))? \\+\\d+(?:,(\\d+))? @@", line).groups()``, or None.

    As ``hunk_numbers``, with ``\\d+`` (any length of ``str.isdecimal`` characters: Unicode's
    decimal digits) and nothing asked of what follows the ' @@'.
    """
    if not line.startswith("@@ -"):
        return None
    close = line.find(" @@", 4)
    if close < 0:
        return None
    old, plus, new = line[4:close].partition(" +")
    if not plus:
        return None
    old_start, old_comma, old_count = old.partition(",")
    new_start, new_comma, new_count = new.partition(",")
    if not (old_start.isdecimal() and new_start.isdecimal()):
        return None
    if (old_comma and not old_count.isdecimal()) or (new_comma and not new_count.isdecimal()):
        return None
    return (old_count if old_comma else None), (new_count if new_comma else None)
