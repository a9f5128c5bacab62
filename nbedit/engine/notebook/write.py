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
bytes. On a file in nbformat's canonical form these rules produce exactly
``nbformat.writes(edited) + "\\n"``; the tests hold us to that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nbedit.engine.notebook.layout import Layout, ObjectLayout, Style, format_json

__all__ = ["CellWrite", "source_value", "splice_cells"]


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


def _original_bytes(
    data: bytes, layout: ObjectLayout, write: CellWrite, style: Style
) -> list[bytes | memoryview]:
    view = memoryview(data)
    assert write.replace is not None
    replacements = sorted(
        (layout.members[key] for key in write.replace), key=lambda member: member.value_start
    )
    pieces: list[bytes | memoryview] = []
    position = layout.start
    for member in replacements:
        pieces.append(view[position : member.value_start])
        pieces.append(format_json(write.cell[member.key], style, _line_indent(data, member.key_start)))
        position = member.value_end
    pieces.append(view[position : layout.end])
    return pieces


def splice_cells(data: bytes, layout: Layout, style: Style, writes: Sequence[CellWrite]) -> bytes:
    """The file with its ``cells`` array rebuilt from ``writes`` (see module docstring)."""
    view = memoryview(data)
    originals = layout.cells
    array_indent = _line_indent(data, layout.top.members["cells"].key_start)
    if originals:
        element_indent = _line_indent(data, originals[0].start)
    elif style.indent is not None and array_indent is not None:
        element_indent = array_indent + style.indent
    else:
        element_indent = None
    layout_break = style.newline + (element_indent or "") if style.indent is not None else ""
    if len(originals) >= 2:
        default_gap: bytes | memoryview = view[originals[0].end : originals[1].start]
    else:
        default_gap = (style.item_separator + layout_break).encode("ascii")

    pieces: list[bytes | memoryview] = [view[: layout.cells_start]]
    if not writes:
        pieces.append(b"[]")
    else:
        pieces.append(b"[")
        if originals:
            pieces.append(view[layout.cells_start + 1 : originals[0].start])
        else:
            pieces.append(layout_break.encode("ascii"))
        previous: int | None = None
        for position, write in enumerate(writes):
            if position:
                if previous is not None and write.original == previous + 1:
                    pieces.append(view[originals[previous].end : originals[write.original].start])
                else:
                    pieces.append(default_gap)
            if write.original is not None and write.replace is not None:
                pieces.extend(_original_bytes(data, originals[write.original], write, style))
            elif write.original is not None:
                own_indent = _line_indent(data, originals[write.original].start)
                pieces.append(_object_bytes(write, style, own_indent))
            else:
                pieces.append(_object_bytes(write, style, element_indent))
            previous = write.original
        if originals:
            pieces.append(view[originals[-1].end : layout.cells_end])
        elif style.indent is not None:
            pieces.append((style.newline + (array_indent or "") + "]").encode("ascii"))
        else:
            pieces.append(b"]")
    pieces.append(view[layout.cells_end :])
    return b"".join(pieces)
