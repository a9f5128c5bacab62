"""Write an edited notebook by splicing into the original bytes.

The rules, in order of preference:

1. A cell whose source changed keeps its object byte for byte except the value of
   ``"source"`` (and, with ``clear_outputs``, ``"outputs"``/``"execution_count"``).
   The new value takes the cell's own form: a list of lines split the way nbformat
   splits them (``str.splitlines(keepends=True)``, so the file stays what Jupyter
   would write) or a single string when the cell stored one.
2. A cell whose type changed, or a new cell, is written whole, in the file's detected
   style (``layout.Style``): its indentation, separators, newline and ``\\u``
   escaping; keys sorted when the file sorts them, otherwise in the order of the
   cell's own keys (type change) or of the nearest cell of the same type (new cell).
3. The separators between cells are kept wherever two cells were neighbours before
   and still are; anywhere else (insertions, deletions, moves) the file's first
   separator between cells is used.

Everything outside the ``cells`` array, and every untouched cell, is copied as
bytes, each untouched stretch in one piece. On a file in nbformat's canonical form
these rules produce exactly ``nbformat.writes(edited) + "\\n"``; the tests hold us
to that. ``check_spliced`` then proves a source edit: the bytes outside the new
values are the original's and each new value reads back as meant.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Sequence

from nbedit._dataclass import dataclass
from nbedit.engine.notebook.layout import Layout, Member, ObjectLayout, Style, format_json
from nbedit.errors import NotebookError

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

_STRETCH = 4 << 20  # bytes copied or compared in one C call of a big result (see ``_Pieces.join``)

__all__ = [
    "CellWrite",
    "check_rewritten",
    "check_spliced",
    "source_value",
    "splice_cell",
    "splice_cells",
    "splice_members",
]

_scan_value = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class CellWrite:
    """One cell of the result.

    ``original``: index of the cell in the file whose bytes are reused, if any.
    ``replace``: member names whose values are rewritten from ``cell``; None means
    the whole object is written from ``cell``. ``key_order`` orders a whole object
    when the file does not sort keys. With ``replace`` set, ``cell`` needs to hold
    only the replaced members (an untouched cell has ``replace == ()`` and ``{}``).
    """

    cell: dict[str, Any]
    original: int | None = None
    replace: tuple[str, ...] | None = ()
    key_order: tuple[str, ...] = ()


def source_value(source: str, as_list: bool) -> list[str] | str:
    # nbformat splits with str.splitlines; following it keeps canonical files canonical.
    # Joining the list gives the source back exactly, so the split is only layout.
    return source.splitlines(keepends=True) if as_list else source


def _line_indent(data: bytes, position: int) -> str | None:
    """The whitespace between the previous newline and ``position`` (None: not at line start)."""
    newline = data.rfind(b"\n", 0, position)
    if newline == -1:
        return None
    prefix = data[newline + 1 : position]
    if prefix.strip(b" \t"):
        return None
    return prefix.decode("ascii")


def _ordered(cell: dict[str, Any], key_order: Sequence[str]) -> dict[str, Any]:
    ordered = {key: cell[key] for key in key_order if key in cell}
    ordered.update((key, value) for key, value in cell.items() if key not in ordered)
    return ordered


def _object_bytes(write: CellWrite, style: Style, indent: str | None) -> bytes:
    cell = write.cell if style.sort_keys else _ordered(write.cell, write.key_order)
    return format_json(cell, style, indent)


class _Pieces:
    """The result as a list of new bytes and stretches of the original; touching stretches merge,
    so a one-cell edit of a 2,000-cell file is three pieces and ``join`` copies each byte once."""

    def __init__(self, data: bytes) -> None:
        self.view = memoryview(data)
        self.parts: list[bytes | tuple[int, int]] = []

    def copy(self, start: int, end: int) -> None:
        if start == end:
            return
        last = self.parts[-1] if self.parts else None
        if isinstance(last, tuple) and last[1] == start:
            self.parts[-1] = (last[0], end)
        else:
            self.parts.append((start, end))

    def add(self, new: bytes) -> None:
        self.parts.append(new)

    def join(self) -> bytes:
        view = self.view
        parts = [view[part[0] : part[1]] if isinstance(part, tuple) else part for part in self.parts]
        if sum(map(len, parts)) < _STRETCH:
            return b"".join(parts)
        # a big result is copied a stretch at a time, so another thread waiting for the GIL (the
        # SHA-256 of the old bytes, engine.digest) gets it between two stretches, not after all of
        # them (a 50 MB copy into fresh pages holds the GIL for some 35 ms)
        import io

        buffer = io.BytesIO()
        write = buffer.write
        for part in parts:
            for start in range(0, len(part), _STRETCH):
                write(part[start : start + _STRETCH])
        return buffer.getvalue()  # that very buffer, no copy


def _replaced_members(layout: ObjectLayout, write: CellWrite) -> list[Member]:
    assert write.replace is not None
    return sorted((layout.members[key] for key in write.replace), key=lambda member: member.value_start)


def _original_bytes(
    data: bytes, layout: ObjectLayout, write: CellWrite, style: Style, pieces: _Pieces
) -> None:
    position = layout.start
    for member in _replaced_members(layout, write):
        pieces.copy(position, member.value_start)
        pieces.add(format_json(write.cell[member.key], style, _line_indent(data, member.key_start)))
        position = member.value_end
    pieces.copy(position, layout.end)


def splice_cells(data: bytes, layout: Layout, style: Style, writes: Sequence[CellWrite]) -> bytes:
    """The file with its ``cells`` array rebuilt from ``writes`` (see module docstring)."""
    originals = layout.cells
    array_indent = _line_indent(data, layout.top.members["cells"].key_start)
    if originals:
        element_indent = _line_indent(data, originals[0].start)
    elif style.indent is not None and array_indent is not None:
        element_indent = array_indent + style.indent
    else:
        element_indent = None
    layout_break = style.newline + (element_indent or "") if style.indent is not None else ""
    default_gap = (style.item_separator + layout_break).encode("ascii")

    pieces = _Pieces(data)
    pieces.copy(0, layout.cells_start)
    if not writes:
        pieces.add(b"[]")
    else:
        if originals:
            pieces.copy(layout.cells_start, originals[0].start)
        else:
            pieces.add(b"[" + layout_break.encode("ascii"))
        previous: int | None = None
        for position, write in enumerate(writes):
            if position:
                if previous is not None and write.original == previous + 1:
                    pieces.copy(originals[previous].end, originals[write.original].start)
                elif len(originals) >= 2:
                    pieces.copy(originals[0].end, originals[1].start)
                else:
                    pieces.add(default_gap)
            if write.original is not None and write.replace == ():
                pieces.copy(originals[write.original].start, originals[write.original].end)
            elif write.original is not None and write.replace is not None:
                _original_bytes(data, originals[write.original], write, style, pieces)
            elif write.original is not None:
                own_indent = _line_indent(data, originals[write.original].start)
                pieces.add(_object_bytes(write, style, own_indent))
            else:
                pieces.add(_object_bytes(write, style, element_indent))
            previous = write.original
        if originals:
            pieces.copy(originals[-1].end, layout.cells_end)
        elif style.indent is not None:
            pieces.add((style.newline + (array_indent or "") + "]").encode("ascii"))
        else:
            pieces.add(b"]")
    pieces.copy(layout.cells_end, len(data))
    return pieces.join()


def splice_cell(data: bytes, layout: Layout, style: Style, write: CellWrite) -> bytes:
    """``splice_cells`` for writes that rewrite members of cell ``write.original`` and keep every
    other cell where it is: the same bytes, without a loop over the notebook's other cells."""
    assert write.original is not None and write.replace
    pieces = _Pieces(data)
    cell = layout.cells[write.original]
    pieces.copy(0, cell.start)
    _original_bytes(data, cell, write, style, pieces)
    pieces.copy(cell.end, len(data))
    return pieces.join()


def splice_members(data: bytes, layout: Layout, style: Style, writes: Sequence[CellWrite]) -> bytes:
    """The file with members of some cells rewritten and every cell kept in its place: ``writes``
    in file order, each with ``replace`` set (the others are skipped). Needs no ``cells`` member,
    so it serves layouts whose cells are spread over several arrays (nbformat 3 worksheets)."""
    pieces = _Pieces(data)
    position = 0
    for write in writes:
        if write.original is None or not write.replace:
            continue
        cell = layout.cells[write.original]
        pieces.copy(position, cell.start)
        _original_bytes(data, cell, write, style, pieces)
        position = cell.end
    pieces.copy(position, len(data))
    return pieces.join()


def check_spliced(data: bytes, result: bytes, layout: Layout, writes: Sequence[CellWrite], path: str) -> None:
    """Prove a source edit wrote what it should: ``NotebookError`` (nothing is written) if not.

    For writes that keep every original cell in its place and rewrite only member
    values (``validate.is_source_only`` without deletions or moves), every byte
    outside the rewritten values must be the original's, compared with ``memcmp``
    (``bytes.startswith`` at an offset), and each new value must be one JSON value
    that ``json`` reads back as exactly the value meant. The input was checked to be
    JSON as a whole, and replacing one JSON value by another keeps a document JSON
    (strings and lists delimit themselves), so the result is JSON too. Other edits
    (cells moved, deleted or inserted) are checked by the validator instead.
    """
    if [write.original for write in writes] != list(range(len(layout.cells))):
        return
    check_rewritten(data, result, layout, [write for write in writes if write.replace], path)


def check_rewritten(
    data: bytes, result: bytes, layout: Layout, rewritten: Sequence[CellWrite], path: str
) -> None:
    """``check_spliced`` for a result that keeps every original cell in place, given only the
    writes that rewrite members (in file order)."""
    view = memoryview(data)
    position = 0  # in data
    shift = 0  # len(result) - len(data) so far
    for write in rewritten:
        assert write.original is not None and write.replace
        for member in _replaced_members(layout.cells[write.original], write):
            if not _holds(result, view[position : member.value_start], position + shift):
                raise _failed(path, "bytes outside the edited values changed")
            new_end = _value_end(result, member.value_start + shift, write.cell[member.key])
            if new_end is None:
                raise _failed(path, f"the new {member.key!r} value does not read back as written")
            shift = new_end - member.value_end
            position = member.value_end
    if len(result) - len(data) != shift or not _holds(result, view[position:], position + shift):
        raise _failed(path, "bytes outside the edited values changed")


def _holds(result: bytes, expected: memoryview, at: int) -> bool:
    """``result.startswith(expected, at)``, compared a stretch at a time (the GIL passes between)."""
    if at < 0 or at + len(expected) > len(result):
        return False
    for start in range(0, len(expected), _STRETCH):
        if not result.startswith(expected[start : start + _STRETCH], at + start):
            return False
    return True


def _value_end(result: bytes, start: int, expected: Any) -> int | None:
    """Where the JSON value at ``start`` ends, if it reads back as exactly ``expected``."""
    view = memoryview(result)
    size = 4 * len(json.dumps(expected)) + 4096
    while True:
        # Latin-1: offsets are byte offsets; lists and strings end with their own bracket or quote
        text = str(view[start : start + size], "latin-1")
        try:
            _, end = _scan_value(text, 0)
            break
        except (StopIteration, ValueError):
            if start + size >= len(result):
                return None
            size *= 2
    try:
        value = json.loads(str(view[start : start + end], "utf-8"))
    except ValueError:
        return None
    if type(value) is not type(expected) or value != expected:
        return None
    return start + end


def _failed(path: str, problem: str) -> NotebookError:
    return NotebookError(
        f"{path}: nbedit's check of the edited notebook failed ({problem}); this is a bug in nbedit, "
        "please report it with the notebook and the edit; the file was not changed",
        path=path,
    )
