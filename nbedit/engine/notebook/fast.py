"""The cells of a big notebook read by msgspec's C decoder: the scan's fast path (issue 27).

Checking every cell with the ``json`` module's C scanner means building each cell's
Python objects (every output, every line of text) and freeing them again: 0.38 s of
the 0.7 s a 100,000-cell notebook (30 MB) took to read. msgspec validates JSON in C
without building what it is not asked for: decoded into ``list[msgspec.Raw]`` (each
element's exact bytes, skipped over but still validated) the same notebook takes
0.05 s, and into small structs of the three members the editor keeps (``cell_type``,
``id``, ``source``) another 0.12 s. So for a notebook of at least ``MIN_BYTES`` (below
that, importing msgspec, some 30 ms, costs more than it saves):

* ``cell_bytes`` decodes the whole document once into the ``cells`` array's elements
  as raw bytes. Any error at all (not JSON, or JSON msgspec refuses and ``json``
  accepts: ``NaN``, a lone surrogate escape) returns None, and the scan reads the
  file the ordinary way, so the user meets ``json``'s own message as before.
* ``read_cells`` proves where each cell is: the first cell starts where the scanner
  found it, the text between the first two cells (comma and whitespace) is taken as
  the separator, and each batch of cells joined by that separator must equal the
  file's bytes there (one ``memcmp``). Offsets are then sums of lengths. A notebook
  whose cells are apart by other text goes the ordinary way. Cells of ``_WHOLE_FROM``
  bytes or more on average (plots, long outputs) are not joined at all (a 50 MB
  notebook's batches cost 35 ms of fresh pages): each cell and each separator is
  compared in place (one ``memcmp`` each, in a C-level ``map``) and each cell is decoded
  from its own bytes, some 4 MiB of cells per C call; a cell that does not fit sends the
  array through the batches below.
* Each batch is decoded again, into one struct per cell type (a tagged union on
  ``cell_type``) whose members are the ones the schema's structure needs (a
  ``metadata`` object; in a code cell an ``outputs`` list and an ``execution_count``
  that is null or a number >= 0) and the ones the view shows. A batch with any cell
  that does not fit (an unknown cell type, a misshapen or bad cell, a repeated member
  with another value) is parsed cell by cell with ``json`` and read as the ordinary
  scan reads it, so its cells get the same markers and notes.

Why the result is exactly the ordinary scan's: only the ``cells`` array is read here
(the scanner still walks the top level with ``json``), the bytes are valid UTF-8
before msgspec sees them (msgspec does not check skipped strings), everything msgspec
accepts inside a cell ``json`` accepts too, with two exceptions handled before:
an integer longer than Python's ``sys.get_int_max_str_digits()`` (``json`` refuses
it, msgspec skips it; a run of digits that long anywhere sends the file the ordinary
way), and nesting deeper than the recursion limit (msgspec counts two more levels,
the document and the array, so it refuses first). For a repeated member msgspec
keeps the last value as ``json`` does, and refuses a repeated ``cell_type`` with
another value. ``tests/test_notebook_msgspec.py`` compares both paths on a corpus.
"""

from __future__ import annotations

import json
import re
import sys
from _operator import attrgetter  # the operator module's C functions, without operator.py (start-up)
from array import array
from itertools import accumulate, repeat

from nbedit.engine.notebook.table import CellTable

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MIN_BYTES", "cell_bytes", "preload", "read_cells", "worth_it"]

MIN_BYTES = 4 << 20  # a notebook this big saves more than importing msgspec costs
_BATCH = 512
_SEPARATOR = re.compile(rb"[ \t\n\r]*,[ \t\n\r]*")
# cells of this many bytes on average are decoded from the file at once: the batches' joined
# copies cost page faults by the megabyte, and a few thousand decoded cells little memory
_WHOLE_FROM = 2048
_STRETCH = 4 << 20  # bytes of big cells decoded in one C call
_UNFIT = -1
_DIGIT = re.compile(rb"[0-9]")
_decoders: Any = None  # (document decoder, batch decoder, tag of each struct, msgspec's error) or ()
_id = attrgetter("id")
_source = attrgetter("source")


def worth_it(size: int) -> bool:
    """Whether ``size`` bytes are read faster with msgspec (or it is loaded already)."""
    return size >= MIN_BYTES or "msgspec" in sys.modules


def preload(size: int) -> None:
    """Import msgspec now if a notebook of ``size`` bytes will be read with it: the workspace calls
    this while another thread reads the file, so the import (some 30 ms) overlaps the read."""
    if worth_it(size):
        _load()


def _load() -> Any:
    """msgspec's decoders, made once; () when msgspec cannot be imported (the ordinary scan reads)."""
    global _decoders
    if _decoders is not None:
        return _decoders
    try:
        from typing import Annotated

        import msgspec
    except ImportError:
        _decoders = ()
        return _decoders
    shape = {"gc": False}
    anything = msgspec.defstruct("Object", [], **shape)  # any object: members skipped, still checked
    source = str | list[str]
    count = Annotated[int, msgspec.Meta(ge=0)] | None
    fields: dict[str, list[Any]] = {
        "code": [
            ("source", source),
            ("metadata", anything),
            ("outputs", list[msgspec.Raw]),
            ("execution_count", count),
        ],
        "markdown": [("source", source), ("metadata", anything)],
        "raw": [("source", source), ("metadata", anything)],
    }
    structs = {
        cell_type: msgspec.defstruct(
            f"{cell_type.title()}Cell",
            [*members, ("id", str | None, None)],
            tag_field="cell_type",
            tag=cell_type,
            **shape,
        )
        for cell_type, members in fields.items()
    }
    union = structs["code"] | structs["markdown"] | structs["raw"]
    document = msgspec.defstruct("Notebook", [("cells", list[msgspec.Raw] | None, None)], **shape)
    _decoders = (
        msgspec.json.Decoder(document),
        msgspec.json.Decoder(list[union]),  # type: ignore[valid-type]
        {struct: cell_type for cell_type, struct in structs.items()},
        msgspec.MsgspecError,
        msgspec.json.Decoder(union),  # one cell
    )
    return _decoders


def cell_bytes(data: bytes, start: int) -> list[Any] | None:
    """The elements of the top-level ``cells`` array of the UTF-8 JSON ``data[start:]``, each as
    its bytes; None when msgspec refuses the document or the ordinary scan must decide."""
    decoders = _load()
    if not decoders or _long_digit_run(data, start):
        return None
    try:
        return decoders[0].decode(memoryview(data)[start:]).cells  # type: ignore[no-any-return]
    except (decoders[3], RecursionError, ValueError):
        return None


def read_cells(data: bytes, position: int, raws: list[Any], table: CellTable) -> int | None:
    """Read the cells ``raws`` into ``table``, the first at ``position``; where the last one ends.

    None (and ``table`` partly filled: clear it) when the bytes at ``position`` are not those
    cells apart by the same text, or a cell ``json`` refuses: the ordinary scan decides.
    """
    separator = b""
    if len(raws) > 1:
        found = _SEPARATOR.match(data, position + len(raws[0]))
        if found is None:
            return None
        separator = found[0]
    if len(raws) > 1 and len(data) >= _WHOLE_FROM * len(raws):
        whole = _read_whole(data, position, raws, separator, table)
        if whole != _UNFIT:
            return whole
        table.clear()
    return _read_batches(data, position, raws, separator, table)


def _read_whole(
    data: bytes, position: int, raws: list[Any], separator: bytes, table: CellTable
) -> int | None:
    """``read_cells`` for big cells: every cell proved in place by its own ``memcmp`` and decoded
    from its own bytes (no joined copy of any batch).

    ``_UNFIT`` when a cell does not fit the structs (the batches decide, cell by cell).
    """
    tags, error, decode = _load()[2:]
    width = len(separator)
    steps = [width] * (2 * len(raws))  # a cell's length, then the separator's, and so on
    steps[0::2] = map(len, raws)
    offsets = array("q", list(accumulate(steps, initial=position)))
    starts, ends = offsets[0:-1:2], offsets[1::2]
    # each cell's bytes where its offset says, and the separator after each but the last
    if not all(map(data.startswith, raws, starts)):
        return None
    if not all(map(data.startswith, repeat(separator, len(raws) - 1), ends)):
        return None
    # each cell decoded from its own bytes (the ``Raw`` msgspec found), a stretch of cells at a time:
    # between two stretches the GIL may pass to the thread hashing the file (``engine.digest``)
    cells: list[Any] = []
    per = max(1, _STRETCH * len(raws) // max(1, ends[-1] - position))
    try:
        for first in range(0, len(raws), per):
            cells.extend(map(decode.decode, raws[first : first + per]))
    except (error, RecursionError):
        return _UNFIT
    table.starts.extend(starts)
    table.ends.extend(ends)
    for first in range(0, len(cells), _BATCH):
        _add_decoded(table, cells[first : first + _BATCH], tags)
    return ends[-1]


def _read_batches(
    data: bytes, position: int, raws: list[Any], separator: bytes, table: CellTable
) -> int | None:
    """``read_cells`` batch by batch: each batch joined, compared with the file and decoded."""
    _, decode, tags, error, _ = _load()
    width = len(separator)
    for first in range(0, len(raws), _BATCH):
        if first and not data.startswith(separator, position - width):
            return None
        batch = raws[first : first + _BATCH]
        pieces = list(batch)
        pieces[0] = b"[" + pieces[0]
        pieces[-1] = b"".join((pieces[-1], b"]"))
        bracketed = separator.join(pieces)
        if not data.startswith(memoryview(bracketed)[1:-1], position):
            return None
        steps = [width] * (2 * len(batch))  # a cell's length, then the separator's, and so on
        steps[0::2] = map(len, batch)
        offsets = array("q", list(accumulate(steps, initial=position)))
        table.starts.extend(offsets[0:-1:2])
        table.ends.extend(offsets[1::2])
        position = offsets[-1]
        try:
            cells = decode.decode(bracketed)
        except (error, RecursionError):  # a cell that does not fit: read as the ordinary scan reads it
            try:
                values = [json.loads(bytes(raw)) for raw in batch]
            except (ValueError, RecursionError):
                return None
            table.add_batch(values, None)
            continue
        _add_decoded(table, cells, tags)
    return position - width


def _add_decoded(table: CellTable, cells: list[Any], tags: dict[Any, str]) -> None:
    """The columns of msgspec's decoded cells (one struct per cell type) into ``table``."""
    classes = list(map(type, cells))
    only = classes[0]
    if classes.count(only) == len(classes):
        types = [tags[only]] * len(classes)
    else:
        types = list(map(tags.__getitem__, classes))
    table.add_read(types, list(map(_id, cells)), list(map(_source, cells)))


def _long_digit_run(data: bytes, start: int) -> bool:
    """Whether ``data[start:]`` may hold an integer longer than ``json`` reads (an aligned block of
    about half that many digits: a longer run always covers one); msgspec would skip it."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit:
        return False
    block = (limit + 2) // 2
    sample = data[start::block]
    for found in _DIGIT.finditer(sample):
        at = start + found.start() * block
        if data[at : at + block].isdigit():
            return True
    return False
