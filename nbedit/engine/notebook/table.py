"""A notebook's cells as columns: one list or array per field, not one object per cell.

A notebook of 10^5 small cells is 30 MB; read into one Python object per cell (its
layout, its kept values, the cell, its span in the view, its label) it took 8x the file
in memory and most of a second of the plan in building those objects and in the
garbage collector walking them (issue 27). The scan (``scan``) hands the cells it has
checked to a ``CellTable`` a batch at a time instead, which keeps:

* where each cell object is: two ``array('q')`` of byte offsets (16 bytes a cell);
* the cell type (an interned string), the id, and the type the source is stored as
  (a string or a list of lines);
* the few cells the schema's structure would refuse (``misshapen``), which
  ``validate.structure_problems`` reads again from their bytes to say why, and the
  cells whose source is no string or list of strings (``bad_sources``).

Each batch's sources are joined and written into the cell view at once
(``view.ViewWriter``) and then dropped: the view holds every source already, and
``sources`` reads one back from it when asked (``view.ViewSources``). A batch of
ordinary cells is read member by member over the whole batch (``map(dict.get, ...)``
and set checks, no Python code per cell); any other batch cell by cell. A batch
msgspec decoded (``fast``: known types, well shaped, checked already) comes as columns
(``add_read``). Anything odd is kept as a marker, not as a value: ``NOT_AN_OBJECT`` for
an element of ``cells`` that is not an object, ``BAD_VALUE`` for a ``cell_type`` or ``id`` that is no string;
the reader (``reading.check_cells``) parses such a cell again from its bytes to name
the problem. ``NotebookCells`` makes the ``NotebookCell`` values on demand, so
``document.cells[i]`` works as before without a million of them existing.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, repeat
from sys import intern as _intern

from nbedit.engine.notebook.cells import NotebookCell
from nbedit.engine.notebook.view import CellSpans, ViewSources, ViewWriter, render_columns

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BAD_VALUE", "MISSING", "NOT_AN_OBJECT", "SHOWN_ID", "CellTable", "NotebookCells"]

SHOWN_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # an id nbformat allows (and a marker can show)

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
_STR = frozenset({str})
_COUNT_KINDS = frozenset({int, _NONE})


class CellTable:
    """The cells of one ``cells`` array, column by column (see the module docstring)."""

    __slots__ = (
        "bad_sources",
        "ends",
        "fast",
        "ids",
        "kinds",
        "misshapen",
        "sources",
        "starts",
        "types",
        "writer",
    )

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")
        self.types: list[Any] = []  # interned str, BAD_VALUE (missing or no string) or NOT_AN_OBJECT
        self.ids: list[Any] = []  # str or None (missing or null) as the view shows it; BAD_VALUE: no string
        self.kinds: list[type] = []  # the type of each source as stored: str, list (of lines), _Marker (none)
        self.bad_sources: list[int] = []  # cells whose source is neither a string nor a list of strings
        self.misshapen: list[int] = []  # cells the schema's structure would refuse
        self.writer: ViewWriter | None = ViewWriter()  # the view, written batch by batch
        self.sources: Sequence[str] = ()  # each cell's source: read back from the view (``finish``)
        self.fast = 0  # cells read by msgspec (``fast.read_cells``), for the tests and benchmarks

    def __len__(self) -> int:
        return len(self.starts)

    def finish(self, sources: Sequence[str] | None = None) -> tuple[str, CellSpans]:
        """The cell view of every cell added, and its spans; ``sources`` reads from it from then on.

        ``sources``: the view is written again from these (the nbformat 2/3 reader reads a
        code cell's text from ``input``, not from ``source`` as the batches did).
        """
        if sources is not None:
            view, marker_starts, body_starts = render_columns(self.types, sources, self.ids)
        else:
            assert self.writer is not None
            view, marker_starts, body_starts = self.writer.finish()
        self.writer = None
        spans = CellSpans(marker_starts, body_starts, len(view), self.types, self.ids)
        self.sources = ViewSources(view, spans)
        return view, spans

    def add_batch(self, values: list[Any], reread: Callable[[int], Any] | None) -> None:
        """Record the elements ``values`` of ``cells`` whose offsets were appended to ``starts``
        and ``ends`` already (the last ``len(values)``), and write them into the view.

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
            # ``dict.get`` of an element that is no object raises TypeError, as ``join`` of a line
            # that is no string does: such a batch goes cell by cell
            types = list(map(get, values, repeat("cell_type", count)))
            ids = list(map(get, values, repeat("id", count)))
            raw = list(map(get, values, repeat("source", count), repeat(MISSING, count)))
            kinds = list(map(type, raw))
            source_kinds = set(kinds)
            if not (
                _KNOWN.issuperset(types)
                and _ID_KINDS.issuperset(map(type, ids))
                and _SOURCE_KINDS.issuperset(source_kinds)
            ):
                raise TypeError
            sources = _joined_column(raw, source_kinds)
        except TypeError:  # something odd in the batch
            self._add_each(values)
            return
        del raw
        only = _only_type(types)
        types = [only] * count if only is not None else list(map(_CANONICAL.__getitem__, types))
        self.types.extend(types)
        self.ids.extend(ids)
        self.kinds.extend(kinds)
        assert self.writer is not None
        self.writer.add(types, sources, ids)
        # the schema's structure: a metadata object everywhere, and in code cells an outputs list
        # and a count that is null or a number >= 0 (cell by cell only when a batch has an odd one)
        if only is None:  # a batch of several cell types: the members of code cells only
            code_cells = list(compress(values, map("code".__eq__, types)))
        else:
            code_cells = values if only == "code" else []
        counts = list(map(get, code_cells, repeat("execution_count"), repeat(MISSING)))
        count_kinds = set(map(type, counts))
        if (
            _DICT.issuperset(map(type, map(get, values, repeat("metadata", count))))
            and _LIST.issuperset(map(type, map(get, code_cells, repeat("outputs"))))
            and _COUNT_KINDS.issuperset(count_kinds)
            and not _negative(counts, count_kinds)
        ):
            return
        for index, value in enumerate(values):
            if not _well_shaped(value):
                self.misshapen.append(first + index)

    def add_read(self, types: list[str], ids: list[str | None], raw: list[str | list[str]]) -> None:
        """Record cells of known types read by msgspec (``fast``), whose offsets were appended already:
        their types, ids (a string or None) and sources (each a string or a list of strings)."""
        kinds = list(map(type, raw))
        sources = _joined_column(raw, set(kinds))
        del raw
        only = _only_type(types)
        types = [only] * len(types) if only is not None else list(map(_CANONICAL.__getitem__, types))
        self.types.extend(types)
        self.ids.extend(ids)
        self.kinds.extend(kinds)
        self.fast += len(types)
        assert self.writer is not None
        self.writer.add(types, sources, ids)

    def _add_each(self, values: list[Any]) -> None:
        """``add_batch`` cell by cell: odd cells are recorded as markers, and a cell of a type
        nbedit does not know is written into the view read-only, with the id it may show."""
        shown_types: list[str] = []
        shown_ids: list[str | None] = []
        sources: list[str] = []
        for value in values:
            index = len(self.types)
            if type(value) is not dict:
                cell_type, cell_id, source, kind = NOT_AN_OBJECT, None, "", _Marker
            else:
                get = value.get
                cell_type = get("cell_type", BAD_VALUE)
                cell_type = _intern(cell_type) if type(cell_type) is str else BAD_VALUE
                cell_id = get("id")
                if cell_id is not None and type(cell_id) is not str:
                    cell_id = BAD_VALUE
                raw = get("source", MISSING)
                kind = type(raw)
                source = _joined(raw)
                if source is None:
                    source = ""
                    if cell_type in _KNOWN:
                        self.bad_sources.append(index)
                if not _well_shaped(value):
                    self.misshapen.append(index)
            if type(cell_type) is str and cell_type not in _KNOWN:
                # nbformat's schema allows cell types it does not know (a newer nbformat, an old
                # 'heading' cell): shown read-only, with its id only when a view can show it
                if not (type(cell_id) is str and SHOWN_ID.fullmatch(cell_id)):
                    cell_id = None
            self.types.append(cell_type)
            self.ids.append(cell_id)
            self.kinds.append(kind)
            shown_types.append(cell_type if type(cell_type) is str else "unknown")
            shown_ids.append(cell_id if type(cell_id) is str else None)
            sources.append(source)
        assert self.writer is not None
        self.writer.add(shown_types, sources, shown_ids)

    def extend(self, other: CellTable) -> None:
        """Append another array's cells (the worksheets of an nbformat 2/3 notebook; their view is
        written by the reader of those versions, not here)."""
        offset = len(self)
        self.starts.extend(other.starts)
        self.ends.extend(other.ends)
        self.types.extend(other.types)
        self.ids.extend(other.ids)
        self.kinds.extend(other.kinds)
        self.bad_sources.extend(index + offset for index in other.bad_sources)
        self.misshapen.extend(index + offset for index in other.misshapen)
        self.fast += other.fast

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


def _joined_column(raw: list[Any], kinds: set[type]) -> list[str]:
    """The sources of a batch as strings (``kinds``: the types of ``raw``, strings and lists only);
    ``TypeError`` when a line of a list is no string."""
    if kinds == _LIST:  # nbformat's own layout: every source a list of lines
        return list(map("".join, raw))
    if kinds == _STR:
        return raw
    return [source if type(source) is str else "".join(source) for source in raw]


def _joined(source: Any) -> str | None:
    """A stored source as one string: missing is empty; None when it is no string or list of strings."""
    if source is MISSING:
        return ""
    if type(source) is str:
        return source
    if type(source) is list:
        try:
            return "".join(source)
        except TypeError:  # not every line is a string
            return None
    return None


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
            chosen = range(*index.indices(len(self.types)))
            return [self[each] for each in chosen]  # type: ignore[return-value]
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


def _only_type(types: list[str]) -> str | None:
    """The one (canonical) cell type of a batch of known types, or None when it holds several."""
    if not types:
        return None
    first = _CANONICAL[types[0]]
    return first if types.count(first) == len(types) else None


def _negative(counts: list[Any], kinds: set[type]) -> bool:
    """Whether an ``execution_count`` of the batch is a negative number (``kinds``: their types)."""
    if int not in kinds:
        return False
    if len(kinds) == 1:
        return min(counts) < 0  # type: ignore[no-any-return]
    return min([count for count in counts if type(count) is int]) < 0
