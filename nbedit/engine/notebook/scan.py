"""One pass over a notebook's bytes: JSON syntax checked, cells located, sources read.

Parsing a 50 MB notebook of base64 images with ``json.loads`` builds 50 MB of
strings the editor never looks at, and the writer then needs the byte offsets of
the cells it rewrites anyway. This scanner does both jobs in one pass without
keeping the outputs:

* The bytes are decoded as Latin-1 (after a separate UTF-8 validity check), which
  maps byte ``i`` to character ``i``: offsets in the text *are* byte offsets, and
  every byte JSON treats as structure is ASCII, so UTF-8 text cannot be mistaken
  for structure. Only a window of about 1 MiB is decoded at a time: a whole-file
  copy would cost a fresh 50 MB allocation (most of the time of decoding it is the
  kernel handing out new pages), while a window's memory is reused.
* Python walks only the top-level object and the ``cells`` array. Each cell is
  parsed by the C scanner of the ``json`` module (``scan_once``) in one call, which
  checks its syntax exactly as ``json.loads`` would and says where it ends. The
  parsed cells go to a ``table.CellTable`` a batch of ``_BATCH`` at a time, which
  keeps what the editor needs column by column (offsets in arrays, the cell type,
  the id; the source is written into the cell view at once) and drops the rest, so
  memory holds one batch's outputs at a time, never the whole notebook, and no
  Python object per cell is kept (issue 27: 10^5 cells took 8x the file before).
  Between two cells, the text that followed the first one (``,\n  `` in nbformat's
  layout) is recognised by ``startswith`` and a ``{`` after it; any other text goes
  through the general rule (a regular expression, then ``after``), which says
  what JSON would say about it.
* A notebook of at least ``fast.MIN_BYTES`` has its ``cells`` array read by msgspec's
  C decoder instead (``fast``: twice as fast, the same table), and goes through the
  loop above whenever that path declines: anything msgspec refuses, cells apart by
  uneven text, too many cells. A batch with an odd cell is read as the loop reads it.
* Where each member of a cell sits is read only for the cells an edit rewrites
  (``ObjectLayout.members`` asks ``_MemberReader``): a one-cell edit of a
  2,000-cell notebook walks one cell's members, not 14,000.
* A kept value that holds non-ASCII text was decoded from Latin-1 characters; such
  a cell is parsed again from its bytes as UTF-8.

So a file this scanner accepts is exactly a file ``json.loads`` accepts (duplicate
keys included: the last value wins, the first position keeps the key's place),
with ``json``'s own message and position for every error, apart from two refusals
of its own: a second top-level ``cells`` array (which ``json.loads`` would silently
drop) and anything other than UTF-8.

Why the outputs still go through the C scanner (measured on 50 MB notebooks, issue 12):
checking a string's bytes is the cost, not building it. ``scanstring`` checks a 27 KB
base64 string in about 16 us (0.6 ns a byte); ``bytes.translate``, ``isalnum`` after
replacing ``+/=``, and ``binascii`` in strict mode cost as much or more, and ``re`` is
five times slower. For printed lines, replacing each ``",\\n      "`` by one escape so a
list scans as one string costs more in ``bytes.replace`` than it saves. A fresh chunk per
cell instead of the windows was slower too.

Windows and exactness: a regular expression or a C scan that runs into the end of
the window (or fails there) is not trusted; it is repeated on a window that is
larger, up to the end of the region, so a value is never cut short. A scalar is
trusted only when at least ``_LOOKAHEAD`` characters follow it in the window (a
number's scanner looks a few characters ahead for ``.``, ``e`` and digits).
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Iterator
from functools import partial

from nbedit._dataclass import dataclass
from nbedit.engine.notebook.fast import cell_bytes, read_cells, worth_it
from nbedit.engine.notebook.layout import CellLayouts, Layout, Member, ObjectLayout
from nbedit.engine.notebook.table import CellTable

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DuplicateCells",
    "JsonSyntaxError",
    "NotebookScan",
    "TooManyCells",
    "check_utf8",
    "scan_notebook",
    "scan_worksheets",
]


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The common case in one match each: a plain key with its colon, and what follows a value.
_PLAIN_KEY = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_AFTER = re.compile(r"[ \t\n\r]*([,}\]])")
_NEXT_ELEMENT = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")
_CHUNK = 1 << 20
_WINDOW = 1 << 20  # characters decoded at a time
_MARGIN = 1 << 16  # a token is matched only with this much window after it (or the region's end)
_LOOKAHEAD = 8
_BATCH = 512  # cells whose values are read into the table at a time (``CellTable.add_batch``)
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


class TooManyCells(ValueError):
    """The ``cells`` array has more than ``limit`` elements; the scan stopped there."""

    def __init__(self, limit: int, position: int) -> None:
        super().__init__(f"more than {limit} cells")
        self.limit = limit
        self.position = position


@dataclass(slots=True)
class NotebookScan:
    top: dict[str, Any]  # top-level members; ``cells`` only when it is not an array
    layout: Layout | None  # None when there is no ``cells`` array
    cells: CellTable
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


def scan_notebook(
    data: bytes, start: int = 0, *, is_ascii: bool | None = None, max_cells: int | None = None
) -> NotebookScan:
    """Scan ``data[start:]`` (see module docstring); ``JsonSyntaxError`` if it is not JSON.

    ``TooManyCells`` as soon as a ``cells`` array has more than ``max_cells`` elements.
    ``data[start:]`` must be UTF-8 (``check_utf8`` first): msgspec's path does not check the
    strings it skips.
    """
    scanner = _Scanner(data, data.isascii() if is_ascii is None else is_ascii)
    if max_cells is not None:
        scanner.max_cells = max_cells
    try:
        return scanner.document(start)
    except RecursionError:
        raise JsonSyntaxError("Nested too deeply", start) from None


def scan_worksheets(data: bytes, start: int, *, is_ascii: bool) -> tuple[Layout, CellTable]:
    """The top object and the cells of every worksheet of an nbformat 2 or 3 notebook, in order.

    Those versions keep their cells in ``worksheets[i].cells``; each cell's layout
    gives its byte offsets as for version 4. The data was checked as JSON by
    ``scan_notebook`` already; as in ``json.loads``, a repeated key's last value wins.

    The layout spans every worksheet's cells, as if they were one ``cells`` array
    (for the splice and its proof; its ``cells_start`` and ``cells_end`` are the
    first cell's start and the last one's end).
    """
    scanner = _Scanner(data, is_ascii)
    top = ObjectLayout(scanner.skip(start))
    found = CellTable()
    for member in scanner.members(top, top.known if top.known is not None else {}):
        if member.key == "worksheets" and scanner.char(member.value_start) == "[":
            found.clear()
            member.value_end = scanner.worksheets(member.value_start, found)
        else:
            _, member.value_end = scanner.value(member.value_start)
            if member.key == "worksheets":
                found.clear()
    cells = CellLayouts(found.starts, found.ends, scanner.reader)
    first = found.starts[0] if len(found) else top.start
    last = found.ends[-1] if len(found) else top.start
    return Layout(top, first, last, cells), found


class _Scanner:
    """The walk over the levels the editor needs, on a Latin-1 window of ``data[:limit]``.

    Every method takes and returns absolute byte offsets; ``local`` turns one into an
    offset in the window (decoding another window when needed).
    """

    def __init__(self, data: bytes, is_ascii: bool, limit: int | None = None) -> None:
        self.data = data
        self.view = memoryview(data)
        self.ascii = is_ascii
        self.limit = len(data) if limit is None else limit
        self.base = 0
        self.text = ""
        self.reader = _MemberReader(data, is_ascii)
        self.max_cells = -1  # no limit

    # -- the window ---------------------------------------------------------------------------

    def load(self, position: int, size: int) -> None:
        self.base = position
        self.text = str(self.view[position : min(self.limit, position + size)], "latin-1")

    def complete(self) -> bool:
        """The window reaches the end of the region: nothing in it can be cut short."""
        return self.base + len(self.text) >= self.limit

    def local(self, position: int) -> int:
        if position < self.base or (position + _MARGIN > self.base + len(self.text) and not self.complete()):
            self.load(position, _WINDOW)
        return position - self.base

    def grow(self, position: int) -> None:
        self.load(position, max(2 * len(self.text), _WINDOW))

    # -- tokens -------------------------------------------------------------------------------

    def skip(self, position: int) -> int:
        while True:
            local = self.local(position)
            end = _WHITESPACE.match(self.text, local).end()  # type: ignore[union-attr]
            if end < len(self.text) or self.complete():
                return self.base + end
            self.grow(position)

    def char(self, position: int) -> str:
        local = self.local(position)
        return self.text[local : local + 1]

    def value(self, position: int) -> tuple[Any, int]:
        """The JSON value at ``position`` and where it ends, as ``json`` parses it."""
        while True:
            local = self.local(position)
            try:
                value, end = _scan_value(self.text, local)
            except StopIteration as stop:  # how the C scanner says "no value starts here"
                if not self.complete():
                    self.grow(position)
                    continue
                raise JsonSyntaxError("Expecting value", self.base + stop.value) from None
            except json.JSONDecodeError as error:
                if not self.complete():
                    self.grow(position)
                    continue
                raise JsonSyntaxError(error.msg, self.base + error.pos) from None
            except ValueError as error:  # JSON, but not for Python: an integer of over 4,300 digits
                if not self.complete():
                    self.grow(position)
                    continue
                raise JsonSyntaxError(str(error).split(";")[0], position) from None
            if end + _LOOKAHEAD <= len(self.text) or self.complete():
                return value, self.base + end
            self.grow(position)

    def string(self, position: int) -> tuple[str, int]:
        """The string whose opening quote is at ``position``, and where it ends."""
        while True:
            local = self.local(position)
            try:
                value, end = _scan_string(self.text, local + 1, True)
            except json.JSONDecodeError as error:
                if not self.complete():
                    self.grow(position)
                    continue
                raise JsonSyntaxError(error.msg, self.base + error.pos) from None
            return value, self.base + end

    def after(self, position: int, closing: str) -> tuple[str, int]:
        """The ``,`` or ``closing`` bracket that must follow a value ending at ``position``."""
        local = self.local(position)
        found = _AFTER.match(self.text, local)
        if found is not None and found.end() < len(self.text) and found[1] in ("," + closing):
            return found[1], self.base + found.end()
        after = self.skip(position)
        character = self.char(after)
        if character not in ("," + closing) or not character:
            raise JsonSyntaxError("Expecting ',' delimiter", after)
        return character, after + 1

    def kept(self, value: Any, start: int, end: int) -> Any:
        """``value`` decoded properly when its bytes are not ASCII."""
        if self.ascii or self.data[start:end].isascii():
            return value
        return json.loads(str(self.view[start:end], "utf-8"))

    # -- the walk -----------------------------------------------------------------------------

    def document(self, start: int) -> NotebookScan:
        position = self.skip(start)
        if self.char(position) != "{":
            _, end = self.value(position)
            self.expect_end(end)
            return NotebookScan({}, None, [], is_object=False)
        top_layout = ObjectLayout(position)
        top: dict[str, Any] = {}
        cells = CellTable()
        cells_bounds: tuple[int, int] | None = None
        # msgspec's reading of the cells (``fast``), for the first ``cells`` array met
        raws = cell_bytes(self.data, start) if worth_it(self.limit - start) else None
        for member in self.members(top_layout, top_layout.members):
            if member.key == "cells" and self.char(member.value_start) == "[":
                if cells_bounds is not None:
                    raise DuplicateCells("a second top-level 'cells' array", member.key_start)
                top.pop("cells", None)
                end = self.fast_cells(member.value_start, cells, raws) if raws else None
                raws = None
                member.value_end = self.cells(member.value_start, cells) if end is None else end
                cells_bounds = (member.value_start, member.value_end)
            else:
                value, member.value_end = self.value(member.value_start)
                top[member.key] = self.kept(value, member.value_start, member.value_end)
                if member.key == "cells":  # the last "cells" wins, as in json.loads
                    cells.clear()
                    cells_bounds = None
        self.expect_end(top_layout.end)
        if cells_bounds is None:
            return NotebookScan(top, None, cells, is_object=True)
        objects = CellLayouts(cells.starts, cells.ends, self.reader)
        return NotebookScan(top, Layout(top_layout, *cells_bounds, objects), cells, is_object=True)

    def members(self, layout: ObjectLayout, into: dict[str, Member]) -> Iterator[Member]:
        """Each member of the object whose ``{`` is at ``layout.start``, recorded in ``into``.

        The consumer parses the value and sets ``value_end`` before asking for the
        next member; ``layout.end`` is set when the object closes. As in
        ``json.loads``, a repeated key keeps its first place and its last value.
        """
        position = self.skip(layout.start + 1)
        if self.char(position) == "}":
            layout.end = position + 1
            return
        while True:
            member = self.key(position)
            into[member.key] = member
            yield member
            character, position = self.after(member.value_end, "}")
            if character == "}":
                layout.end = position
                return

    def key(self, position: int) -> Member:
        """The key starting after whitespace at ``position``, up to where its value starts."""
        local = self.local(position)
        found = _PLAIN_KEY.match(self.text, local)
        if found is not None and found.end() < len(self.text):
            key_start, key_end = self.base + found.start(1) - 1, self.base + found.end(1) + 1
            key = found[1] if self.ascii else self.kept(found[1], key_start, key_end)
            return Member(key, key_start, key_end, self.base + found.end())
        # escapes, or not JSON: the json module decodes the key or names the error
        key_start = self.skip(position)
        if self.char(key_start) != '"':
            raise JsonSyntaxError("Expecting property name enclosed in double quotes", key_start)
        key, key_end = self.string(key_start)
        colon = self.skip(key_end)
        if self.char(colon) != ":":
            raise JsonSyntaxError("Expecting ':' delimiter", colon)
        return Member(self.kept(key, key_start, key_end), key_start, key_end, self.skip(colon + 1))

    def cells(self, start: int, cells: CellTable) -> int:
        position = self.skip(start + 1)
        if self.char(position) == "]":
            return position + 1
        scan_value, next_element = _scan_value, _NEXT_ELEMENT.match
        add_start, add_end = cells.starts.append, cells.ends.append
        batch: list[Any] = []
        add_value = batch.append
        reread = None if self.ascii else partial(self.reread, cells)
        limit = self.max_cells
        count = len(cells)
        # the loop works in the window's own offsets (``local``), and re-reads the window's
        # variables after any method that may load another window
        text, base, complete = self.text, self.base, self.complete()
        size = len(text)
        pending = 0  # cells in ``batch``
        separator, width = "", 0  # what followed the first cell that a comma followed
        while True:
            if count == limit:
                raise TooManyCells(limit, position)
            count += 1
            pending += 1
            local = position - base
            if local < 0 or (local + _MARGIN > size and not complete):
                self.local(position)
                text, base, complete = self.text, self.base, self.complete()
                size, local = len(text), position - self.base
            # ``value`` inline for the common case (a 100,000-cell notebook calls it 100,000 times):
            # the C scanner ends the cell well inside the window; anything else (the window's edge,
            # not JSON) goes through ``value``, which decides
            try:
                value, end = scan_value(text, local)
                if end + _LOOKAHEAD > size and not complete:
                    raise StopIteration
            except (StopIteration, ValueError):  # JSONDecodeError is a ValueError
                value, end = self.value(position)
                text, base, complete = self.text, self.base, self.complete()
                size, end = len(text), end - base
            add_start(position)
            add_end(base + end)
            add_value(value)
            if pending == _BATCH:
                cells.add_batch(batch, reread)
                batch.clear()
                pending = 0
            # the common case: the text between two cells is the same as after the first cell,
            # and a ``{`` follows it (so no more whitespace); else one match says what follows
            after = end + width
            if width and after < size and text.startswith(separator, end) and text[after] == "{":
                position = base + after
                continue
            found = next_element(text, end)
            if found is not None:
                after = found.end()
                if after < size:
                    if found[1] == "]":
                        cells.add_batch(batch, reread)
                        return base + found.end(1)
                    if not width:
                        separator, width = text[end:after], after - end
                    position = base + after
                    continue
            character, position = self.after(base + end, "]")  # the window's edge, or not JSON
            if character == "]":
                cells.add_batch(batch, reread)
                return position
            position = self.skip(position)
            text, base, complete = self.text, self.base, self.complete()
            size = len(text)

    def fast_cells(self, start: int, cells: CellTable, raws: list[Any]) -> int | None:
        """The ``cells`` array at ``start`` read from msgspec's ``raws`` (``fast.read_cells``), and
        its end; None (``cells`` empty) when the ordinary ``cells`` must read it."""
        position = self.skip(start + 1)
        if 0 <= self.max_cells < len(raws):
            return None  # ``cells`` says where it stops, as ever
        end = read_cells(self.data, position, raws, cells)
        if end is not None:
            character, after = self.after(end, "]")
            if character == "]":
                return after
        cells.clear()
        return None

    def worksheets(self, start: int, found: CellTable) -> int:
        """The ``worksheets`` array at ``start``: every worksheet's cells into ``found``; its end."""
        position = self.skip(start + 1)
        if self.char(position) == "]":
            return position + 1
        while True:
            if self.char(position) == "{":
                sheet = ObjectLayout(position)
                cells = CellTable()
                for member in self.members(sheet, {}):
                    if member.key == "cells" and self.char(member.value_start) == "[":
                        cells = CellTable()
                        member.value_end = self.cells(member.value_start, cells)
                    else:
                        _, member.value_end = self.value(member.value_start)
                        if member.key == "cells":
                            cells = CellTable()
                found.extend(cells)
                end = sheet.end
            else:
                _, end = self.value(position)
            character, position = self.after(end, "]")
            if character == "]":
                return position
            position = self.skip(position)

    def reread(self, cells: CellTable, index: int) -> Any:
        """Cell ``index`` of ``cells``, parsed from its bytes as UTF-8 (not from Latin-1 text)."""
        return json.loads(str(self.view[cells.starts[index] : cells.ends[index]], "utf-8"))

    def expect_end(self, end: int) -> None:
        end = self.skip(end)
        if end != self.limit:
            raise JsonSyntaxError("Extra data", end)


class _MemberReader:
    """Reads where each member of one cell is, when an edit first needs it."""

    __slots__ = ("ascii", "data")

    def __init__(self, data: bytes, is_ascii: bool) -> None:
        self.data = data
        self.ascii = is_ascii

    def __call__(self, layout: ObjectLayout) -> dict[str, Member]:
        scanner = _Scanner(self.data, self.ascii, limit=layout.end)
        scanner.load(layout.start, layout.end - layout.start)
        members: dict[str, Member] = {}
        for member in scanner.members(ObjectLayout(layout.start), members):
            _, member.value_end = scanner.value(member.value_start)
        return members
