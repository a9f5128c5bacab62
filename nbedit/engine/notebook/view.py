"""The cell view: a notebook as plain text that the matcher can search.

Every cell becomes one marker line followed by its source::

    # %% nbedit cell 0 [code] id=1a2b3c
    import pandas as pd
    # %% nbedit cell 1 [markdown] id=9f8e
    # Title

Design choices, in the spirit of jupytext's percent format but stricter:

* The marker names the tool (``# %% nbedit cell``), so an ordinary ``# %%`` line in
  a script cell is content, never structure. The index is the cell's position in
  the notebook *as read*; ``id=`` appears for nbformat >= 4.5 cells that have one.
* A source line that itself starts with ``# %% nbedit`` (after any number of
  backslashes) is shown with one extra leading backslash and unescaped when the view
  is read back, the way mbox quotes ``From`` lines. So every source round-trips, and
  the only lines read as markers are ones the view put there (or an editor wrote on
  purpose).
* A cell's body is its source followed by one ``"\\n"`` (nothing for an empty
  source); reading back strips exactly that one newline. A source that ends with a
  newline therefore shows as a blank line before the next marker.
* A cell of a type nbedit does not know (nbformat's schema allows them; old files
  have ``heading`` cells) is shown with its type and the word ``read-only``
  (``# %% nbedit cell 9 [future cell] read-only``); the document keeps it byte for
  byte and refuses an edit that changes, retypes or deletes it.
* To insert a cell, write a marker with ``new`` instead of an index
  (``# %% nbedit cell new [markdown]``); a marker without a type is a code cell when
  new. Markers of cells that were read keep their index and id: indexes always
  refer to the notebook as read, so do not renumber them.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate

from nbedit._dataclass import NamedTuple, dataclass
from nbedit.engine.text import split_lines
from nbedit.errors import NotebookError

__all__ = [
    "CELL_TYPES",
    "MARKER_PREFIX",
    "READ_ONLY",
    "CellSpan",
    "CellSpans",
    "ViewCell",
    "ViewSources",
    "ViewWriter",
    "cell_label",
    "cell_label_at_line",
    "format_marker",
    "marker_label",
    "parse_view",
    "shown_type",
    "render_cell",
    "render_columns",
    "render_view",
]

MARKER_PREFIX = "# %% nbedit cell"
CELL_TYPES = ("code", "markdown", "raw")

_MARKER_START = "# %% nbedit"
_NEEDS_ESCAPE = re.compile(r"^(\\*# %% nbedit)", re.MULTILINE)
_ESCAPED = re.compile(r"^\\(\\*# %% nbedit)")
_ESCAPED_LINES = re.compile(r"^\\(\\*# %% nbedit)", re.MULTILINE)
_MARKER_WORD = re.compile(r"(?P<index>\d+)|(?P<new>new)|id=(?P<id>\S+)|(?P<read_only>read-only)")
_MARKER_TYPE = re.compile(r"(?:^|\s)\[(?P<type>[^\]\n]*)\](?=\s|$)")
_SHOWABLE_TYPE = re.compile(r"[A-Za-z0-9_.:+-][A-Za-z0-9 _.:+-]{0,39}")
READ_ONLY = "read-only"
_CHUNK = 4096  # cells rendered at a time: the pieces of one chunk exist at once, never all
_KNOWN = frozenset(CELL_TYPES)
_MARKER_WITH_ID = MARKER_PREFIX.replace("%", "%%") + " %d [%s] id=%s\n"
_MARKER_WITHOUT_ID = MARKER_PREFIX.replace("%", "%%") + " %d [%s]\n"
_STR = frozenset({str})
_NONE = frozenset({type(None)})


class CellSpan(NamedTuple):
    """Where one cell's body (its source plus the one newline the view adds) sits in the view."""

    start: int
    end: int
    label: str


@dataclass(frozen=True, slots=True)
class ViewCell:
    """One cell as read back from an edited view.

    ``index`` is the original index the marker names (None for ``new`` or none);
    ``cell_type`` is None when the marker did not say.
    """

    source: str
    index: int | None
    cell_type: str | None
    id: str | None
    line: int  # 1-based line of the marker in the view


def cell_label(index: int, cell_type: str, cell_id: str | None) -> str:
    """``cell 3 (id 1a2b, code)``: how errors and diffs name a cell."""
    if cell_id is not None:
        return f"cell {index} (id {cell_id}, {cell_type})"
    return f"cell {index} ({cell_type})"


def shown_type(cell_type: str) -> str:
    """A cell type as a marker shows it: an odd type nbedit does not know is named safely."""
    return cell_type if cell_type in CELL_TYPES or _SHOWABLE_TYPE.fullmatch(cell_type) else "unknown"


def format_marker(index: int | None, cell_type: str, cell_id: str | None) -> str:
    """``# %% nbedit cell 3 [code] id=ab``; a cell type nbedit does not know is marked ``read-only``."""
    where = "new" if index is None else str(index)
    marker = f"{MARKER_PREFIX} {where} [{shown_type(cell_type)}]"
    if cell_id is not None:
        marker += f" id={cell_id}"
    if cell_type not in CELL_TYPES:
        marker += f" {READ_ONLY}"
    return marker


def _escape(source: str) -> str:
    if _MARKER_START not in source:
        return source
    return _NEEDS_ESCAPE.sub(r"\\\1", source)


def render_cell(index: int | None, cell_type: str, source: str, cell_id: str | None = None) -> str:
    """One cell as the view shows it: marker line plus escaped body (``index`` None: a new cell)."""
    return format_marker(index, cell_type, cell_id) + "\n" + (_escape(source) + "\n" if source else "")


def render_view(
    cells: Sequence[tuple[str, str, str | None]],
) -> tuple[str, tuple[CellSpan, ...], tuple[int, ...]]:
    """Render ``(cell_type, source, id)`` triples.

    Returns the view, each cell's body span, and where each cell's marker line starts.
    """
    types = [cell[0] for cell in cells]
    ids = [cell[2] for cell in cells]
    view, marker_starts, body_starts = render_columns(types, [cell[1] for cell in cells], ids)
    spans = CellSpans(marker_starts, body_starts, len(view), types, ids)
    return view, tuple(spans), tuple(marker_starts)


def render_columns(
    types: Sequence[str], sources: Sequence[str], ids: Sequence[str | None]
) -> tuple[str, array[int], array[int]]:
    """The view of cells given column by column, where each marker line starts and each body starts."""
    writer = ViewWriter()
    for first in range(0, len(types), _CHUNK):
        last = min(first + _CHUNK, len(types))
        writer.add(types[first:last], sources[first:last], ids[first:last])
    return writer.finish()


class ViewWriter:
    """The view, written a chunk of cells at a time (``add``), and where its markers and bodies start.

    The notebook scan hands each batch of cells to ``add`` as soon as it has read it, so a
    cell's joined source lives only as long as its batch (a notebook of 10^5 cells would
    otherwise hold all of them once more beside the view). The markers and bodies of a
    chunk are built by comprehensions and their offsets summed by ``itertools.accumulate``:
    no Python object per cell outlives its chunk.
    """

    __slots__ = ("body_starts", "marker_starts", "offset", "pieces")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.marker_starts = array("q")
        self.body_starts = array("q")
        self.offset = 0

    def add(self, types: Sequence[str], sources: Sequence[str], ids: Sequence[str | None]) -> None:
        if not types:
            return
        first = len(self.marker_starts)
        numbers = range(first, first + len(types))
        id_kinds = set(map(type, ids)) if _KNOWN.issuperset(types) else None
        if id_kinds == _STR:  # nbformat >= 4.5: every cell has an id
            markers = list(map(_MARKER_WITH_ID.__mod__, zip(numbers, types, ids, strict=True)))
        elif id_kinds == _NONE:
            markers = list(map(_MARKER_WITHOUT_ID.__mod__, zip(numbers, types, strict=True)))
        elif id_kinds is not None:
            markers = [
                f"{MARKER_PREFIX} {index} [{cell_type}]\n"
                if cell_id is None
                else f"{MARKER_PREFIX} {index} [{cell_type}] id={cell_id}\n"
                for index, cell_type, cell_id in zip(numbers, types, ids, strict=False)
            ]
        else:
            markers = [
                format_marker(index, cell_type, cell_id) + "\n"
                for index, cell_type, cell_id in zip(numbers, types, ids, strict=False)
            ]
        if "" in sources or _MARKER_START in "\n".join(sources):
            bodies = [
                ((source if _MARKER_START not in source else _escape(source)) + "\n" if source else "")
                for source in sources
            ]
            parts: list[str] = [""] * (2 * len(markers))
            parts[0::2] = markers
            parts[1::2] = bodies
        else:  # the common chunk: each body is its source and a newline, as three parts
            parts = ["\n"] * (3 * len(markers))
            parts[0::3] = markers
            parts[1::3] = sources
        step = len(parts) // len(markers)
        offsets = array("q", list(accumulate(map(len, parts), initial=self.offset)))
        self.marker_starts.extend(offsets[0:-1:step])
        self.body_starts.extend(offsets[1::step])
        self.offset = offsets[-1]
        self.pieces.append("".join(parts))

    def finish(self) -> tuple[str, array[int], array[int]]:
        """The view, and where each marker line and each body starts in it."""
        view = "".join(self.pieces)
        self.pieces = []
        return view, self.marker_starts, self.body_starts


class CellSpans:
    """``CellSpan`` of each cell's body, made when asked for from the offsets ``render_columns``
    returns (a label string per cell of a 10^6-cell notebook would be 80 MB nobody reads)."""

    __slots__ = ("body_starts", "ids", "marker_starts", "types", "view_length")

    def __init__(
        self,
        marker_starts: array[int],
        body_starts: array[int],
        view_length: int,
        types: Sequence[str],
        ids: Sequence[str | None],
    ) -> None:
        self.marker_starts = marker_starts
        self.body_starts = body_starts
        self.view_length = view_length
        self.types = types
        self.ids = ids

    def __len__(self) -> int:
        return len(self.body_starts)

    def end(self, index: int) -> int:
        """Where the body of cell ``index`` ends (the next marker, or the view's end)."""
        return self.marker_starts[index + 1] if index + 1 < len(self.marker_starts) else self.view_length

    def __getitem__(self, index: int) -> CellSpan:
        if isinstance(index, slice):
            chosen = range(*index.indices(len(self.body_starts)))
            return [self[each] for each in chosen]  # type: ignore[return-value]
        if index < 0:
            index += len(self.body_starts)
        start = self.body_starts[index]  # raises IndexError past the end
        return CellSpan(start, self.end(index), cell_label(index, self.types[index], self.ids[index]))

    def __iter__(self) -> Iterator[CellSpan]:
        return (self[index] for index in range(len(self.body_starts)))


class ViewSources:
    """Each cell's source, read back from its body in the view when asked for: the view holds
    every source already, so a second copy of them all is not kept (issue 27)."""

    __slots__ = ("spans", "view")

    def __init__(self, view: str, spans: CellSpans) -> None:
        self.view = view
        self.spans = spans

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, index: int) -> str:
        if index < 0:
            index += len(self.spans)
        # the body without the newline the view adds
        body = self.view[self.spans.body_starts[index] : self.spans.end(index) - 1]
        return body if _MARKER_START not in body else _ESCAPED_LINES.sub(r"\1", body)

    def __iter__(self) -> Iterator[str]:
        return (self[index] for index in range(len(self.spans)))


def _parse_marker(line: str, number: int) -> tuple[int | None, str | None, str | None]:
    text = line.rstrip("\r\n")
    rest = text[len(MARKER_PREFIX) :] if text.startswith(MARKER_PREFIX) else None
    if rest is None or (rest and not rest[0].isspace()):
        raise NotebookError(
            f"cell view line {number}: {text!r} looks like a cell marker but is not one; "
            f"write markers as '{MARKER_PREFIX} <index>|new [code|markdown|raw] [id=<id>]', "
            f"or start a source line that begins with '{_MARKER_START}' with a backslash; "
            "the file was not changed"
        )
    index: int | None = None
    cell_type: str | None = None
    cell_id: str | None = None
    bracket = _MARKER_TYPE.search(rest)
    if bracket is not None:
        cell_type = bracket["type"].strip()
        rest = rest[: bracket.start()] + " " + rest[bracket.end() :]
        if cell_type not in CELL_TYPES and not _SHOWABLE_TYPE.fullmatch(cell_type):
            raise NotebookError(
                f"cell view line {number}: unknown cell type [{cell_type}]; "
                "use [code], [markdown] or [raw]; the file was not changed"
            )
    for word in rest.split():
        found = _MARKER_WORD.fullmatch(word)
        if found is None:
            raise NotebookError(
                f"cell view line {number}: cannot read {word!r} in the cell marker {text!r}; "
                "a marker holds an index or 'new', a type in brackets and optionally id=<id>; "
                "the file was not changed"
            )
        if found["index"] is not None:
            index = int(found["index"])
        elif found["id"] is not None:
            cell_id = found["id"]
    return index, cell_type, cell_id


def parse_view(view: str) -> list[ViewCell]:
    """Read an (edited) cell view back into cells; inverse of ``render_view``."""
    cells: list[ViewCell] = []
    header: tuple[int | None, str | None, str | None, int] | None = None
    body: list[str] = []

    def finish() -> None:
        if header is None:
            if "".join(body).strip():
                raise NotebookError(
                    "the cell view has text before its first cell marker; put it inside a cell "
                    f"(a line '{MARKER_PREFIX} new [code]' starts a new one); the file was not changed"
                )
            return
        text = "".join(body)
        if text.endswith("\n"):
            text = text[:-1]
        index, cell_type, cell_id, line = header
        cells.append(ViewCell(text, index, cell_type, cell_id, line))

    for number, line in enumerate(split_lines(view), start=1):
        if line.startswith(_MARKER_START):
            finish()
            index, cell_type, cell_id = _parse_marker(line, number)
            header = (index, cell_type, cell_id, number)
            body = []
        elif line.startswith("\\"):
            body.append(_ESCAPED.sub(r"\1", line, count=1))
        else:
            body.append(line)
    finish()
    return cells


def cell_label_at_line(view: str, line: int) -> str | None:
    """The label of the cell that holds 1-based ``line`` of a cell view (None: no cell).

    Works on any view, including an edited one, so a diff hunk of either side can
    say which cell it belongs to. A marker line belongs to the cell it opens.
    """
    label: str | None = None
    for number, text in enumerate(split_lines(view), start=1):
        if number > line:
            break
        label = marker_label(text) or label
    return label


def marker_label(line: str) -> str | None:
    """The label of the cell a marker line opens (``cell 2 (id c3, code)``, ``new cell (code)``);
    None when the line is not a marker."""
    if not line.startswith(_MARKER_START):
        return None
    try:
        index, cell_type, cell_id = _parse_marker(line, 0)
    except NotebookError:
        return None
    where = "new cell" if index is None else f"cell {index}"
    return f"{where} ({'id ' + cell_id + ', ' if cell_id else ''}{cell_type or 'code'})"
