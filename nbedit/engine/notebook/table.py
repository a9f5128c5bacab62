"""A notebook's cells as columns: one list or array per field, not one object per cell.

A notebook of 10^5 small cells is 13 MB; read into one Python object per cell (its
layout, its kept values, the cell, its span in the view, its label) it took 8x the file
in memory and most of a second of the plan in building those objects and in the
garbage collector walking them (issue 27). The scan (``scan``) writes each cell it
checks into a ``CellTable`` instead:

* where the cell object is: two ``array('q')`` of byte offsets (16 bytes a cell);
* what the cell view shows: the cell type (an interned string), the id and the source
  joined into one string (the list of lines it was read from is dropped at once);
* what an edit needs to know about its other members, as bits of one small integer
  (``SOURCE_LIST``, ``HAS_OUTPUTS`` ...), and a list of the few cells whose shape the
  schema would refuse (``misshapen``), which ``validate.structure_problems`` reads again
  from their bytes to say why.

Anything odd is kept as a marker, not as a value: ``NOT_AN_OBJECT`` for an element of
``cells`` that is not an object, ``BAD_VALUE`` for a ``cell_type`` or ``id`` that is no
string and a source that is neither a string nor a list of strings; the reader parses
such a cell again from its bytes to name the problem. ``NotebookCells`` makes the
``NotebookCell`` values of this table on demand, so ``document.cells[i]`` works as before
without a million of them existing.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from itertools import compress, repeat
from sys import intern as _intern

from nbedit.engine.notebook.cells import NotebookCell

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BAD_VALUE", "MISSING", "NOT_AN_OBJECT", "CellTable", "NotebookCells"]

_KNOWN_TYPES = ("code", "markdown", "raw")
_CANONICAL = {cell_type: _intern(cell_type) for cell_type in _KNOWN_TYPES}
_KNOWN = frozenset(_KNOWN_TYPES)


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NOT_AN_OBJECT: Any = _Marker("NOT_AN_OBJECT")
BAD_VALUE: Any = _Marker("BAD_VALUE")
MISSING: Any = _Marker("MISSING")  # its own type: ``kinds[i] is _Marker`` says "no source member"
_NONE = type(None)
_ID_KINDS = frozenset({str, _NONE})
_SOURCE_KINDS = frozenset({str, list})


_DICT = frozenset({dict})
_LIST = frozenset({list})
_COUNT_KINDS = frozenset({int, _NONE})


class CellTable:
    """The cells of one ``cells`` array, column by column (see the module docstring)."""

    __slots__ = ("ends", "ids", "kinds", "misshapen", "sources", "starts", "types")

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")
        self.types: list[Any] = []  # interned str, BAD_VALUE (missing or no string) or NOT_AN_OBJECT
        self.ids: list[Any] = []  # str, None (missing or null) or BAD_VALUE
        self.sources: list[str | None] = []  # joined; None when it is neither a string nor a list of strings
        self.kinds: list[type] = []  # the type of each source as stored: str, list (of lines), _Marker (none)
        self.misshapen: list[int] = []  # cells the schema's structure would refuse

    def __len__(self) -> int:
        return len(self.starts)

    def add_batch(self, values: list[Any], reread: Callable[[int], Any] | None) -> None:
        """Record the elements ``values`` of ``cells`` whose offsets were appended to ``starts``
        and ``ends`` already (the last ``len(values)``).

        ``reread(index)`` parses cell ``index`` again from its bytes as UTF-8 (None: the file
        is ASCII); a cell whose kept values are not ASCII was read from Latin-1 text.

        The common batch (objects of known cell types, string ids, string or list sources)
        is read member by member over the whole batch; any other goes cell by cell.
        """
        count = len(values)
        first = len(self.types)
        if reread is not None:
            values = [
                value if type(value) is not dict or _plain(value) else reread(first + index)
                for index, value in enumerate(values)
            ]
        get = dict.get
        try:
            if set(map(type, values)) != {dict}:
                raise TypeError
            types = list(map(get, values, repeat("cell_type", count)))
            ids = list(map(get, values, repeat("id", count)))
            raw = list(map(get, values, repeat("source", count), repeat(MISSING, count)))
            kinds = list(map(type, raw))
            if not (
                _KNOWN.issuperset(types)
                and _ID_KINDS.issuperset(map(type, ids))
                and _SOURCE_KINDS.issuperset(kinds)
            ):
                raise TypeError
            sources = [source if type(source) is str else "".join(source) for source in raw]
        except TypeError:  # something odd in the batch (``join`` of a line that is no string, ...)
            for value in values:
                if type(value) is dict:
                    self.add(value)
                else:
                    self.add_other()
            return
        self.types.extend(map(_CANONICAL.__getitem__, types))
        self.ids.extend(ids)
        self.sources.extend(sources)
        self.kinds.extend(kinds)
        # the schema's structure: a metadata object everywhere, and in code cells an outputs list
        # and a count that is null or a number >= 0 (cell by cell only when a batch has an odd one)
        code = list(map("code".__eq__, types))
        counts = list(compress(map(get, values, repeat("execution_count", count), repeat(MISSING, count)), code))
        count_kinds = set(map(type, counts))
        if (
            _DICT.issuperset(map(type, map(get, values, repeat("metadata", count))))
            and _LIST.issuperset(map(type, compress(map(get, values, repeat("outputs", count)), code)))
            and _COUNT_KINDS.issuperset(count_kinds)
            and not _negative(counts, count_kinds)
        ):
            return
        for index, value in enumerate(values):
            if not _well_shaped(value):
                self.misshapen.append(first + index)

    def add(self, value: dict[str, Any]) -> None:
        """Record the cell object ``value`` (its offsets were appended already)."""
        get = value.get
        cell_type = get("cell_type", BAD_VALUE)
        if type(cell_type) is str:
            cell_type = _intern(cell_type)
        else:
            cell_type = BAD_VALUE
        self.types.append(cell_type)
        cell_id = get("id")
        self.ids.append(cell_id if cell_id is None or type(cell_id) is str else BAD_VALUE)
        source = get("source", MISSING)
        self.kinds.append(type(source))
        if source is MISSING:
            source = ""
        elif type(source) is list:
            try:
                source = "".join(source)
            except TypeError:  # not every line is a string
                source = None
        elif type(source) is not str:
            source = None
        self.sources.append(source)
        if not _well_shaped(value):
            self.misshapen.append(len(self.types) - 1)

    def add_other(self) -> None:
        """Record an element of ``cells`` that is not an object (its offsets were appended already)."""
        self.types.append(NOT_AN_OBJECT)
        self.ids.append(None)
        self.sources.append(None)
        self.kinds.append(_Marker)

    def extend(self, other: CellTable) -> None:
        """Append another array's cells (the worksheets of an nbformat 2/3 notebook)."""
        offset = len(self)
        self.starts.extend(other.starts)
        self.ends.extend(other.ends)
        self.types.extend(other.types)
        self.ids.extend(other.ids)
        self.sources.extend(other.sources)
        self.kinds.extend(other.kinds)
        self.misshapen.extend(index + offset for index in other.misshapen)

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


class NotebookCells:
    """The ``NotebookCell`` values of a checked ``CellTable``, each made when asked for.

    ``ids`` and ``sources`` are the ones the view shows (``document`` has put a shown id and
    ``""`` in place of what a read-only cell of an unknown type holds).
    """

    __slots__ = ("ids", "kinds", "sources", "types")

    def __init__(self, table: CellTable) -> None:
        self.types = table.types
        self.ids = table.ids
        self.sources = table.sources
        self.kinds = table.kinds

    def __len__(self) -> int:
        return len(self.types)

    def __bool__(self) -> bool:
        return len(self.types) > 0

    def __getitem__(self, index: int) -> NotebookCell:
        if isinstance(index, slice):
            return [self[each] for each in range(*index.indices(len(self.types)))]  # type: ignore[return-value]
        if index < 0:
            index += len(self.types)
        cell_type = self.types[index]
        return NotebookCell(
            index,
            cell_type,
            self.ids[index],
            self.sources[index],  # type: ignore[arg-type]
            self.kinds[index] is list,
            read_only=cell_type not in _KNOWN_TYPES,
        )

    def __iter__(self) -> Iterator[NotebookCell]:
        return (self[index] for index in range(len(self.types)))


def _plain(cell: dict[str, Any]) -> bool:
    """Whether the values the table keeps (``cell_type``, ``id``, ``source``) read the same from
    Latin-1 as from UTF-8: a character from U+0080 to U+00FF in them may be a UTF-8 byte read
    as Latin-1. The other members are only told apart by their type, which no decoding changes.
    """
    for key in ("cell_type", "id"):
        member = cell.get(key)
        if type(member) is str and not member.isascii():
            return False
    source = cell.get("source")
    if type(source) is str:
        return source.isascii()
    if type(source) is list:
        return all(type(line) is not str or line.isascii() for line in source)
    return True


def _well_shaped(cell: dict[str, Any]) -> bool:
    """Whether the schema's structure allows the cell: a ``metadata`` object and, for a code
    cell, an ``outputs`` list and an ``execution_count`` that is null or a number >= 0."""
    if type(cell.get("metadata")) is not dict:
        return False
    if cell.get("cell_type") != "code":
        return True
    count = cell.get("execution_count", MISSING)
    return type(cell.get("outputs")) is list and (count is None or (type(count) is int and count >= 0))


def _negative(counts: list[Any], kinds: set[type]) -> bool:
    """Whether an ``execution_count`` of the batch is a negative number (``kinds``: their types)."""
    if int not in kinds:
        return False
    if len(kinds) == 1:
        return min(counts) < 0  # type: ignore[no-any-return]
    return min([count for count in counts if type(count) is int]) < 0
