"""Where things are in a notebook's JSON bytes, and how the file is formatted.

Rewriting a notebook with ``json.dumps`` would reformat every file that was not
written by Jupyter itself (other indentation, key order, ``source`` as one string)
and touch megabytes of outputs to change one line. Instead the writer splices new
values into the original bytes, which needs two things:

* a ``Layout``: byte offsets of the top-level members, of every cell object in
  ``cells`` and of each cell's members. ``scan.scan_notebook`` records it while it
  checks the JSON, in the same pass.
* ``detect_style``: the file's indentation unit, separators, newline, key order and
  ``\\u`` escaping, read from the file itself, so spliced values look like their
  neighbours. For a file in nbformat's canonical form (indent 1, sorted keys,
  ``": "``, raw UTF-8) the detected style *is* the canonical one.

Offsets are byte offsets: the structural characters of JSON are ASCII, so UTF-8
text can be located without decoding it.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator

from nbedit._dataclass import dataclass, field

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CellLayouts", "Layout", "Member", "ObjectLayout", "Style", "detect_style", "format_json"]

_NON_ASCII_ESCAPE = re.compile(
    rb"\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})[0-9a-fA-F]"
)
_BACKSLASH = 0x5C


@dataclass(slots=True)
class Member:
    key: str
    key_start: int
    key_end: int
    value_start: int = -1
    value_end: int = -1


@dataclass(slots=True)
class ObjectLayout:
    """Where one JSON object is, and where each of its members is.

    The members of a cell are read from the bytes only when something asks for them
    (``reader``): the scan checks a cell with one call of the ``json`` C scanner, and an
    edit needs the member offsets of the few cells it rewrites, not of all 2,000.
    """

    start: int
    end: int = -1
    known: dict[str, Member] | None = field(default_factory=dict)
    reader: Callable[[ObjectLayout], dict[str, Member]] | None = field(default=None, repr=False)

    @property
    def members(self) -> dict[str, Member]:
        if self.known is None:
            assert self.reader is not None
            self.known = self.reader(self)
        return self.known


class CellLayouts:
    """The objects of a ``cells`` array as two arrays of offsets; an ``ObjectLayout`` is made for
    a cell only when asked for, and kept (with the members it has read) from then on.

    A notebook of 10^6 cells would otherwise hold 10^6 ``ObjectLayout`` objects that the edit
    never looks at and the garbage collector walks (issue 27): 16 bytes a cell instead.
    """

    __slots__ = ("ends", "made", "reader", "starts")

    def __init__(
        self,
        starts: array[int],
        ends: array[int],
        reader: Callable[[ObjectLayout], dict[str, Member]] | None,
    ) -> None:
        self.starts = starts
        self.ends = ends
        self.reader = reader
        self.made: dict[int, ObjectLayout] = {}

    @classmethod
    def of(cls, layouts: list[ObjectLayout]) -> CellLayouts:
        """Cells whose layouts are made already (their members read or not)."""
        starts = array("q", [each.start for each in layouts])
        made = cls(starts, array("q", [each.end for each in layouts]), None)
        made.made = dict(enumerate(layouts))
        return made

    def __len__(self) -> int:
        return len(self.starts)

    def __bool__(self) -> bool:
        return len(self.starts) > 0

    def __getitem__(self, index: int) -> ObjectLayout:
        if isinstance(index, slice):
            chosen = range(*index.indices(len(self.starts)))
            return [self[each] for each in chosen]  # type: ignore[return-value]
        if index < 0:
            index += len(self.starts)
        made = self.made.get(index)
        if made is None:
            made = self.made[index] = ObjectLayout(self.starts[index], self.ends[index], None, self.reader)
        return made

    def __iter__(self) -> Iterator[ObjectLayout]:
        return (self[index] for index in range(len(self.starts)))


@dataclass(slots=True)
class Layout:
    top: ObjectLayout
    cells_start: int  # the '[' of the cells array
    cells_end: int  # just after its ']'
    cells: CellLayouts


@dataclass(frozen=True, slots=True)
class Style:
    """How the file writes JSON; ``indent`` None means everything on one line."""

    indent: str | None
    newline: str
    item_separator: str
    key_separator: str
    ensure_ascii: bool
    sort_keys: bool


def detect_style(data: bytes, layout: Layout, *, escapes_matter: bool = True) -> Style:
    """The file's style; ``escapes_matter=False`` (every value to write is ASCII) skips the
    search for ``\\u`` escapes, which reads the whole file and cannot change such values."""
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
        ensure_ascii=escapes_matter and _uses_ascii_escapes(data),
        sort_keys=_keys_sorted(members, layout.cells[:20]),
    )


def _uses_ascii_escapes(data: bytes) -> bool:
    """True when the file escapes non-ASCII text as ``\\uXXXX`` (``ensure_ascii``)."""
    if not data.isascii():
        return False
    # Only escapes of code points from U+0080 are looked at (a notebook of coloured output has
    # a million "\\u001b"); one counts when an even number of backslashes precedes it, so an
    # escaped backslash followed by "u00e9" is not mistaken for an escape of "\\u00e9".
    for found in _NON_ASCII_ESCAPE.finditer(data):
        position = found.start()
        backslashes = 0
        while position - 1 - backslashes >= 0 and data[position - 1 - backslashes] == _BACKSLASH:
            backslashes += 1
        if backslashes % 2 == 0:
            return True
    return False


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
