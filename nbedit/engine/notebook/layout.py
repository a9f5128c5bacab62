"""Where things are in a notebook's JSON bytes, and how the file is formatted.

Rewriting a notebook with ``json.dumps`` would reformat every file that was not
written by Jupyter itself (other indentation, key order, ``source`` as one string)
and touch megabytes of outputs to change one line. Instead the writer splices new
values into the original bytes, which needs two things this module provides:

* ``scan_layout``: a small JSON scanner that records byte offsets of the top-level
  members, of every cell object in ``cells`` and of each cell's members. It only
  ever looks at structural bytes; strings are skipped with ``bytes.find`` for the
  closing quote, so a 50 MB notebook of base64 images scans in tens of
  milliseconds. It trusts its input: call it only on bytes ``json.loads`` accepted.
* ``detect_style``: the file's indentation unit, separators, newline, key order and
  ``\\u`` escaping, read from the file itself, so spliced values look like their
  neighbours. For a file in nbformat's canonical form (indent 1, sorted keys,
  ``": "``, raw UTF-8) the detected style *is* the canonical one.

Offsets are byte offsets: the structural characters of JSON are ASCII, so UTF-8
text can be scanned without decoding it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Layout", "Member", "ObjectLayout", "Style", "detect_style", "format_json", "scan_layout"]

_STRUCTURAL = re.compile(rb'[{}\[\],:"]')
_NESTING = re.compile(rb'[{}\[\]"]')  # inside skipped values only nesting and strings matter
_ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)")
_WHITESPACE = b" \t\r\n"
_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY = 0x7B, 0x7D, 0x5B, 0x5D
_COMMA, _COLON = 0x2C, 0x3A


@dataclass(slots=True)
class Member:
    key: str
    key_start: int
    key_end: int
    value_start: int = -1
    value_end: int = -1


@dataclass(slots=True)
class ObjectLayout:
    start: int
    end: int = -1
    members: dict[str, Member] = field(default_factory=dict)


@dataclass(slots=True)
class Layout:
    top: ObjectLayout
    cells_start: int  # the '[' of the cells array
    cells_end: int  # just after its ']'
    cells: list[ObjectLayout]


def _string_end(data: bytes, position: int) -> int:
    """Offset just after the string whose opening quote is at ``position - 1``."""
    quote = data.find(b'"', position)
    while True:
        backslash = quote - 1
        while data[backslash] == _BACKSLASH:
            backslash -= 1
        if (quote - 1 - backslash) % 2 == 0:
            return quote + 1
        quote = data.find(b'"', quote + 1)


def _skip_whitespace(data: bytes, position: int) -> int:
    while data[position] in _WHITESPACE:
        position += 1
    return position


def _trim_whitespace(data: bytes, position: int) -> int:
    while data[position - 1] in _WHITESPACE:
        position -= 1
    return position


def scan_layout(data: bytes, start: int = 0) -> Layout:
    """Offsets of the parts of a notebook the writer may replace (see module docstring)."""
    top: ObjectLayout | None = None
    cells: list[ObjectLayout] = []
    cells_start = cells_end = -1
    # Recording frames: the top-level object (depth 1), the cells array (2), a cell (3).
    stack: list[ObjectLayout | None] = []
    member: list[Member | None] = [None]  # pending member of the innermost recording object
    expecting_key = False
    skip_depth = 0
    structural = _STRUCTURAL.search
    nesting = _NESTING.search
    position = start
    while True:
        found = (nesting if skip_depth else structural)(data, position)
        if found is None:
            break
        at = found.start()
        char = data[at]
        position = at + 1
        if char == _QUOTE:
            end = _string_end(data, position)
            if skip_depth == 0 and expecting_key and stack and stack[-1] is not None:
                key_bytes = data[at + 1 : end - 1]
                key = json.loads(data[at:end]) if b"\\" in key_bytes else key_bytes.decode("utf-8")
                member[-1] = Member(key, at, end)
                expecting_key = False
            position = end
            continue
        if skip_depth:
            if char in (_OPEN_OBJECT, _OPEN_ARRAY):
                skip_depth += 1
            elif char in (_CLOSE_OBJECT, _CLOSE_ARRAY):
                skip_depth -= 1
            continue
        depth = len(stack)
        if char == _COLON:
            pending = member[-1]
            if pending is not None:
                pending.value_start = _skip_whitespace(data, position)
        elif char == _COMMA:
            pending = member[-1]
            if pending is not None and depth != 2:
                frame = stack[-1]
                assert frame is not None
                pending.value_end = _trim_whitespace(data, at)
                frame.members[pending.key] = pending
                member[-1] = None
                expecting_key = True
        elif char in (_OPEN_OBJECT, _OPEN_ARRAY):
            pending = member[-1]
            if depth == 0:
                top = ObjectLayout(at)
                stack.append(top)
                member.append(None)
                expecting_key = True
            elif depth == 1 and pending is not None and pending.key == "cells" and char == _OPEN_ARRAY:
                cells_start = at
                stack.append(None)
                member.append(None)
            elif depth == 2 and char == _OPEN_OBJECT:
                cell = ObjectLayout(at)
                cells.append(cell)
                stack.append(cell)
                member.append(None)
                expecting_key = True
            else:
                skip_depth = 1
        else:  # a closing bracket of a recording frame
            frame = stack.pop()
            pending = member.pop()
            if frame is not None:
                if pending is not None:
                    pending.value_end = _trim_whitespace(data, at)
                    frame.members[pending.key] = pending
                frame.end = at + 1
            elif depth == 2:
                cells_end = at + 1
            expecting_key = False
            if not stack:
                break
    assert top is not None and cells_start >= 0
    return Layout(top, cells_start, cells_end, cells)


@dataclass(frozen=True, slots=True)
class Style:
    """How the file writes JSON; ``indent`` None means everything on one line."""

    indent: str | None
    newline: str
    item_separator: str
    key_separator: str
    ensure_ascii: bool
    sort_keys: bool


CANONICAL_STYLE = Style(" ", "\n", ",", ": ", False, True)


def detect_style(data: bytes, layout: Layout, cells: list[dict[str, Any]]) -> Style:
    members = sorted(layout.top.members.values(), key=lambda each: each.key_start)
    first = members[0]
    opening = data[layout.top.start + 1 : first.key_start].decode("ascii")
    if "\n" in opening:
        indent: str | None = opening[opening.rindex("\n") + 1 :]
        newline = "\r\n" if "\r\n" in opening else "\n"
    else:
        indent, newline = None, "\n"
    key_separator = data[first.key_end : first.value_start].decode("ascii")
    if len(members) > 1:
        between = data[first.value_end : members[1].key_start].decode("ascii")
        item_separator = between.split("\n")[0].rstrip("\r") if indent is not None else between
    else:
        item_separator = "," if indent is not None else ", "
    return Style(
        indent=indent,
        newline=newline,
        item_separator=item_separator,
        key_separator=key_separator,
        ensure_ascii=_uses_ascii_escapes(data),
        sort_keys=_keys_sorted(members, layout.cells[:20]),
    )


def _uses_ascii_escapes(data: bytes) -> bool:
    """True when the file escapes non-ASCII text as ``\\uXXXX`` (``ensure_ascii``)."""
    if not data.isascii() or b"\\u" not in data:
        return False
    # Escapes are matched pairwise from the left, so an escaped backslash followed by
    # "u00e9" is not mistaken for an escape of "\u00e9".
    return any(match[1] is not None and int(match[1], 16) >= 0x80 for match in _ESCAPE.finditer(data))


def _keys_sorted(members: list[Member], cells: list[ObjectLayout]) -> bool:
    keys = [each.key for each in members]
    if keys != sorted(keys):
        return False
    for cell in cells:
        order = sorted(cell.members.values(), key=lambda each: each.key_start)
        cell_keys = [each.key for each in order]
        if cell_keys != sorted(cell_keys):
            return False
    return True


def format_json(value: Any, style: Style, base_indent: str | None, *, sort_keys: bool | None = None) -> bytes:
    """``value`` as JSON in the file's style, continuation lines indented by ``base_indent``."""
    text = json.dumps(
        value,
        indent=style.indent,
        separators=(style.item_separator, style.key_separator),
        ensure_ascii=style.ensure_ascii,
        sort_keys=style.sort_keys if sort_keys is None else sort_keys,
    )
    if style.indent is not None and (base_indent or style.newline != "\n"):
        # json.dumps never puts a raw newline inside a string, so every "\n" is layout.
        text = text.replace("\n", style.newline + (base_indent or ""))
    return text.encode("utf-8")
