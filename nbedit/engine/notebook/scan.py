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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nbedit.engine.notebook.layout import Layout, Member, ObjectLayout

__all__ = ["CellScan", "DuplicateCells", "JsonSyntaxError", "NotebookScan", "check_utf8", "scan_notebook"]

KEPT_CELL_KEYS = frozenset({"cell_type", "id", "source", "metadata", "execution_count"})

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The common case in one match each: a plain key with its colon, and what follows a value.
_PLAIN_KEY = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_AFTER_MEMBER = re.compile(r"[ \t\n\r]*([,}])")
_AFTER_ELEMENT = re.compile(r"[ \t\n\r]*([,\]])")
_EMPTY_OBJECT = re.compile(r"[ \t\n\r]*}")
_EMPTY_ARRAY = re.compile(r"[ \t\n\r]*]")
_CHUNK = 1 << 20
_scan_value = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]


class JsonSyntaxError(ValueError):
    """Not JSON: ``message`` is what ``json`` says, ``position`` a byte offset."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


class DuplicateCells(JsonSyntaxError):
    """Valid JSON with two top-level ``cells`` arrays: which one is the notebook is a guess."""


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


def check_utf8(data: bytes, start: int) -> bool:
    """``UnicodeDecodeError`` (``start`` = absolute byte offset) unless ``data[start:]`` is UTF-8.

    Returns whether the data is plain ASCII (``scan_notebook`` can use that).

    A chunk never ends just before a continuation byte (valid UTF-8 has at most three
    in a row), so each chunk decodes on its own and no decoded copy of the whole file
    exists at any time.
    """
    if data.isascii():
        return True
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
    return False


def scan_notebook(data: bytes, start: int = 0, *, is_ascii: bool | None = None) -> NotebookScan:
    """Scan ``data[start:]`` (see module docstring); ``JsonSyntaxError`` if it is not JSON."""
    scanner = _Scanner(data, data.isascii() if is_ascii is None else is_ascii)
    try:
        return scanner.document(start)
    except StopIteration as stop:  # how the C scanner says "no value starts here"
        raise JsonSyntaxError("Expecting value", stop.value) from None
    except json.JSONDecodeError as error:
        raise JsonSyntaxError(error.msg, error.pos) from None
    except RecursionError:
        raise JsonSyntaxError("Nested too deeply", start) from None


class _Scanner:
    """The walk over the three levels the editor needs; values below them go to ``json``."""

    def __init__(self, data: bytes, is_ascii: bool) -> None:
        self.data = data
        self.text = data.decode("latin-1")
        self.ascii = is_ascii

    def skip(self, position: int) -> int:
        return _WHITESPACE.match(self.text, position).end()  # type: ignore[union-attr]

    def char(self, position: int) -> str:
        return self.text[position : position + 1]

    def kept(self, value: Any, start: int, end: int) -> Any:
        """``value`` decoded properly when its bytes are not ASCII."""
        if self.ascii or self.data[start:end].isascii():
            return value
        return json.loads(self.data[start:end].decode("utf-8"))

    def document(self, start: int) -> NotebookScan:
        position = self.skip(start)
        if self.char(position) != "{":
            _, end = _scan_value(self.text, position)
            self.expect_end(end)
            return NotebookScan({}, None, [], is_object=False)
        top_layout = ObjectLayout(position)
        top: dict[str, Any] = {}
        cells: list[CellScan] = []
        cells_bounds: tuple[int, int] | None = None
        for member in self.members(top_layout):
            if member.key == "cells" and self.char(member.value_start) == "[":
                if cells_bounds is not None:
                    raise DuplicateCells("a second top-level 'cells' array", member.key_start)
                top.pop("cells", None)
                member.value_end = self.cells(member.value_start, cells)
                cells_bounds = (member.value_start, member.value_end)
            else:
                value, member.value_end = _scan_value(self.text, member.value_start)
                top[member.key] = self.kept(value, member.value_start, member.value_end)
                if member.key == "cells":  # the last "cells" wins, as in json.loads
                    cells.clear()
                    cells_bounds = None
        self.expect_end(top_layout.end)
        if cells_bounds is None:
            return NotebookScan(top, None, cells, is_object=True)
        objects = [cell.layout for cell in cells if cell.layout is not None]
        return NotebookScan(top, Layout(top_layout, *cells_bounds, objects), cells, is_object=True)

    def members(self, layout: ObjectLayout) -> Iterator[Member]:
        """Each member of the object whose ``{`` is at ``layout.start``, recorded in ``layout``.

        The consumer parses the value and sets ``value_end`` before asking for the
        next member; ``layout.end`` is set when the object closes. As in
        ``json.loads``, a repeated key keeps its first place and its last value.
        """
        text = self.text
        empty = _EMPTY_OBJECT.match(text, layout.start + 1)
        if empty is not None:
            layout.end = empty.end()
            return
        position = layout.start + 1
        while True:
            member = self.key(position)
            layout.members[member.key] = member
            yield member
            after = _AFTER_MEMBER.match(text, member.value_end)
            if after is None:
                raise JsonSyntaxError("Expecting ',' delimiter", self.skip(member.value_end))
            if after[1] == "}":
                layout.end = after.end()
                return
            position = after.end()

    def key(self, position: int) -> Member:
        """The key starting after whitespace at ``position``, up to where its value starts."""
        found = _PLAIN_KEY.match(self.text, position)
        if found is not None:
            key_start, key_end = found.start(1) - 1, found.end(1) + 1
            key = found[1] if self.ascii else self.kept(found[1], key_start, key_end)
            return Member(key, key_start, key_end, found.end())
        # escapes, or not JSON: the json module decodes the key or names the error
        key_start = self.skip(position)
        if self.char(key_start) != '"':
            raise JsonSyntaxError("Expecting property name enclosed in double quotes", key_start)
        key, key_end = _scan_string(self.text, key_start + 1, True)
        colon = self.skip(key_end)
        if self.char(colon) != ":":
            raise JsonSyntaxError("Expecting ':' delimiter", colon)
        return Member(self.kept(key, key_start, key_end), key_start, key_end, self.skip(colon + 1))

    def cells(self, start: int, cells: list[CellScan]) -> int:
        text = self.text
        empty = _EMPTY_ARRAY.match(text, start + 1)
        if empty is not None:
            return empty.end()
        position = start + 1
        while True:
            position = self.skip(position)
            if self.char(position) == "{":
                cell = self.cell(position)
                position = cell.layout.end  # type: ignore[union-attr]
            else:
                cell = CellScan(None)
                _, position = _scan_value(text, position)
            cells.append(cell)
            after = _AFTER_ELEMENT.match(text, position)
            if after is None:
                raise JsonSyntaxError("Expecting ',' delimiter", self.skip(position))
            if after[1] == "]":
                return after.end()
            position = after.end()

    def cell(self, start: int) -> CellScan:
        layout = ObjectLayout(start)
        cell = CellScan(layout)
        values, kinds, text = cell.values, cell.kinds, self.text
        for member in self.members(layout):
            key = member.key
            value, member.value_end = _scan_value(text, member.value_start)
            if key in KEPT_CELL_KEYS or (key == "outputs" and value == []):
                values[key] = self.kept(value, member.value_start, member.value_end)
            kinds[key] = type(value)
        return cell

    def expect_end(self, end: int) -> None:
        end = self.skip(end)
        if end != len(self.text):
            raise JsonSyntaxError("Extra data", end)
