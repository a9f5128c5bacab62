"""One pass over a notebook's bytes: JSON syntax checked, cells located, sources read.

Parsing a 50 MB notebook of base64 images with ``json.loads`` builds 50 MB of
strings the editor never looks at, and the writer then needs the byte offsets of
every cell anyway. This scanner does both jobs in one pass without keeping the
outputs:

* The bytes are decoded as Latin-1 (after a separate UTF-8 validity check), which
  maps byte ``i`` to character ``i``: offsets in the text *are* byte offsets, and
  every byte JSON treats as structure is ASCII, so UTF-8 text cannot be mistaken
  for structure.
* Python walks only the top-level object, the ``cells`` array and each cell's
  members (a few tokens per cell). Every member *value* is parsed by the C scanner
  of the ``json`` module (``scan_once``), which returns the value and where it
  ends: that checks the value's syntax exactly as ``json.loads`` would and gives
  its span. Values the editor needs (``cell_type``, ``id``, ``source``,
  ``metadata``, ``execution_count`` and the top-level members) are kept; all
  others, the outputs above all, are dropped at once, so memory holds one output
  at a time, never the whole notebook.
* A kept string that contains non-ASCII bytes was decoded as Latin-1 characters;
  it is parsed again from its bytes as UTF-8.

So a file this scanner accepts is exactly a file ``json.loads`` accepts (duplicate
keys included: the last value wins, the first position keeps the key's place),
apart from two refusals of its own: a second top-level ``cells`` array (which
``json.loads`` would silently drop) and anything other than UTF-8.
"""

from __future__ import annotations

import json
import json.scanner
import re
from dataclasses import dataclass, field
from typing import Any

from nbedit.engine.notebook.layout import Layout, Member, ObjectLayout

__all__ = ["CellScan", "JsonSyntaxError", "NotebookScan", "check_utf8", "scan_notebook"]

KEPT_CELL_KEYS = frozenset({"cell_type", "id", "source", "metadata", "execution_count"})

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20
_scan_value = json.scanner.make_scanner(json.JSONDecoder())
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]


class JsonSyntaxError(ValueError):
    """Not JSON: ``message`` is what ``json`` says, ``position`` a byte offset."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


@dataclass(slots=True)
class CellScan:
    """One element of ``cells``. ``layout`` is None when the element is not an object."""

    layout: ObjectLayout | None
    values: dict[str, Any] = field(default_factory=dict)  # KEPT_CELL_KEYS members; outputs if empty
    kinds: dict[str, type] = field(default_factory=dict)  # the Python type of every member's value


@dataclass(slots=True)
class NotebookScan:
    top: dict[str, Any]  # top-level members; ``cells`` only when it is not an array
    layout: Layout | None  # None when there is no ``cells`` array
    cells: list[CellScan]
    is_object: bool  # the document is a JSON object


def check_utf8(data: bytes, start: int) -> None:
    """``UnicodeDecodeError`` (``start`` = absolute byte offset) unless ``data[start:]`` is UTF-8.

    A chunk never ends just before a continuation byte (valid UTF-8 has at most three
    in a row), so each chunk decodes on its own and no decoded copy of the whole file
    exists at any time.
    """
    if data.isascii():
        return
    view = memoryview(data)
    position = start
    while position < len(data):
        end = min(position + _CHUNK, len(data))
        for _ in range(3):
            if end < len(data) and 0x80 <= data[end] < 0xC0:
                end -= 1
        try:
            str(view[position:end], "utf-8")
        except UnicodeDecodeError as error:
            raise UnicodeDecodeError(
                "utf-8", data, position + error.start, position + error.end, error.reason
            ) from None
        position = end


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.text = data.decode("latin-1")
        self.ascii = data.isascii()

    def skip(self, position: int) -> int:
        return _WHITESPACE.match(self.text, position).end()  # type: ignore[union-attr]

    def char(self, position: int) -> str:
        return self.text[position : position + 1]

    def value(self, position: int) -> tuple[Any, int]:
        try:
            return _scan_value(self.text, position)  # type: ignore[no-any-return]
        except StopIteration as stop:
            raise JsonSyntaxError("Expecting value", stop.value) from None
        except json.JSONDecodeError as error:
            raise JsonSyntaxError(error.msg, error.pos) from None
        except RecursionError:
            raise JsonSyntaxError("Nested too deeply", position) from None

    def kept(self, value: Any, start: int, end: int) -> Any:
        """``value`` decoded properly when its bytes are not ASCII."""
        if self.ascii or self.data[start:end].isascii():
            return value
        return json.loads(self.data[start:end].decode("utf-8"))

    def key(self, position: int) -> tuple[str, int]:
        if self.char(position) != '"':
            raise JsonSyntaxError("Expecting property name enclosed in double quotes", position)
        try:
            key, end = _scan_string(self.text, position + 1, True)
        except json.JSONDecodeError as error:
            raise JsonSyntaxError(error.msg, error.pos) from None
        return self.kept(key, position, end), end

    def members(self, start: int, on_member: Any) -> int:
        """Walk the object whose ``{`` is at ``start``; ``on_member(member)`` parses each value.

        Returns the offset just after the closing ``}``.
        """
        position = self.skip(start + 1)
        if self.char(position) == "}":
            return position + 1
        while True:
            key_start = position
            key, key_end = self.key(position)
            position = self.skip(key_end)
            if self.char(position) != ":":
                raise JsonSyntaxError("Expecting ':' delimiter", position)
            member = Member(key, key_start, key_end, self.skip(position + 1))
            member.value_end = on_member(member)
            position = self.skip(member.value_end)
            separator = self.char(position)
            if separator == "}":
                return position + 1
            if separator != ",":
                raise JsonSyntaxError("Expecting ',' delimiter", position)
            position = self.skip(position + 1)


def scan_notebook(data: bytes, start: int = 0) -> NotebookScan:
    """Scan ``data[start:]`` (see module docstring); ``JsonSyntaxError`` if it is not JSON."""
    scanner = _Scanner(data)
    position = scanner.skip(start)
    if scanner.char(position) != "{":
        _, end = scanner.value(position)
        _expect_end(scanner, end)
        return NotebookScan({}, None, [], is_object=False)
    top_layout = ObjectLayout(position)
    top: dict[str, Any] = {}
    cells: list[CellScan] = []
    cells_bounds: list[tuple[int, int]] = []

    def top_member(member: Member) -> int:
        if member.key == "cells" and scanner.char(member.value_start) == "[":
            if cells_bounds:
                raise _DuplicateCells(member.key_start)
            top.pop("cells", None)
            end = _scan_cells(scanner, member.value_start, cells)
            cells_bounds.append((member.value_start, end))
        else:
            value, end = scanner.value(member.value_start)
            top[member.key] = scanner.kept(value, member.value_start, end)
            if member.key == "cells":
                cells.clear()
                cells_bounds.clear()
        top_layout.members[member.key] = member  # as in json.loads: first place, last value
        return end

    top_layout.end = scanner.members(position, top_member)
    _expect_end(scanner, top_layout.end)
    layout = None
    if cells_bounds:
        cells_start, cells_end = cells_bounds[0]
        layout = Layout(top_layout, cells_start, cells_end, [cell.layout for cell in cells])  # type: ignore[misc]
    return NotebookScan(top, layout, cells, is_object=True)


class _DuplicateCells(JsonSyntaxError):
    def __init__(self, position: int) -> None:
        super().__init__("a second top-level 'cells' array", position)


def _expect_end(scanner: _Scanner, end: int) -> None:
    end = scanner.skip(end)
    if end != len(scanner.text):
        raise JsonSyntaxError("Extra data", end)


def _scan_cells(scanner: _Scanner, start: int, cells: list[CellScan]) -> int:
    position = scanner.skip(start + 1)
    if scanner.char(position) == "]":
        return position + 1
    while True:
        if scanner.char(position) == "{":
            cell = CellScan(ObjectLayout(position))
            assert cell.layout is not None
            cell.layout.end = scanner.members(position, _cell_member(scanner, cell))
            position = cell.layout.end
        else:
            cell = CellScan(None)
            _, position = scanner.value(position)
        cells.append(cell)
        position = scanner.skip(position)
        separator = scanner.char(position)
        if separator == "]":
            return position + 1
        if separator != ",":
            raise JsonSyntaxError("Expecting ',' delimiter", position)
        position = scanner.skip(position + 1)


def _cell_member(scanner: _Scanner, cell: CellScan) -> Any:
    layout = cell.layout
    assert layout is not None

    def on_member(member: Member) -> int:
        value, end = scanner.value(member.value_start)
        if member.key in KEPT_CELL_KEYS or (member.key == "outputs" and value == []):
            cell.values[member.key] = scanner.kept(value, member.value_start, end)
        cell.kinds[member.key] = type(value)
        layout.members[member.key] = member
        return end

    return on_member
