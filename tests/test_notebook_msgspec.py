"""The cells read by msgspec (``engine/notebook/fast.py``) are the cells the ordinary scan reads.

Each case reads the same bytes twice, with msgspec's fast path forced on and off, and compares
everything the document keeps (offsets, types, ids, source kinds, the view, the notes, the top
level) and the bytes an edit writes, or the error and its message. The corpus: real notebooks
of tests/data, the builder's notebook in every serialiser (nbformat 4.0-4.5 layouts, ids present
and absent, string and list sources, attachments, non-ASCII, CRLF, tabs, escapes), and files the
fast path must hand back to the ordinary scan (NaN, a lone surrogate, duplicate keys, an integer
too long for Python, deep nesting, cells apart by odd text, broken JSON). The table tests of
``test_notebook_table.py`` run again at the end with the fast path forced on and batches of 3.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from notebook_corpus import FORMATS, build_notebook, code_cell, markdown_cell

from nbedit.engine.notebook import NotebookDocument
from nbedit.engine.notebook import fast as fast_module
from nbedit.engine.notebook import scan as scan_module
from nbedit.errors import NbeditError, NotebookError

DATA = Path(__file__).parent / "data" / "notebooks"
REAL = sorted(DATA.glob("*.ipynb"))


def read(data: bytes, monkeypatch: pytest.MonkeyPatch, fast: bool, whole: bool = False) -> tuple[Any, int]:
    """What the document keeps of ``data`` (or the error), and how many cells msgspec read;
    ``whole``: cells of any size decoded from the file at once (``fast._read_whole``), else batches."""
    with monkeypatch.context() as patch:
        patch.setattr(scan_module, "worth_it", lambda size: fast)
        patch.setattr(fast_module, "_WHOLE_FROM", 0 if whole else 1 << 62)
        try:
            document = NotebookDocument.parse(data, "n.ipynb")
        except NbeditError as error:
            return (type(error).__name__, str(error)), 0
        table = document.table
        kept = {
            "starts": list(table.starts),
            "ends": list(table.ends),
            "types": table.types,
            "ids": table.ids,
            "kinds": table.kinds,
            "misshapen": table.misshapen,
            "bad_sources": table.bad_sources,
            "view": document.view,
            "spans": list(document.spans),
            "top": document.top,
            "problems": document.problems,
            "bounds": (document.layout.cells_start, document.layout.cells_end),
            "sources": list(document.table.sources),
            "edited": _edited(document),
        }
        return kept, table.fast


def _edited(document: NotebookDocument) -> Any:
    """The bytes written when the last editable cell's source gets one more line."""
    editable = [cell.index for cell in document.cells if not cell.read_only]
    if not editable:
        return None
    span = document.spans[editable[-1]]
    view = document.view[: span.end] + "added = 1\n" + document.view[span.end :]
    try:
        return document.edit(view).data
    except NbeditError as error:
        return str(error)
    except RecursionError:  # nesting near the limit: the edit's member reader is deeper (both paths)
        return "RecursionError"


def same(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    """The three readings of ``data`` agree (ordinary, msgspec by batches, msgspec on the whole
    array); the fast one's result and how many cells msgspec read (the same both ways)."""
    ordinary, none = read(data, monkeypatch, fast=False)
    assert none == 0
    quick, count = read(data, monkeypatch, fast=True)
    assert quick == ordinary
    whole, whole_count = read(data, monkeypatch, fast=True, whole=True)
    assert whole == ordinary
    assert whole_count == count
    return quick, count


@pytest.mark.parametrize("path", REAL, ids=[path.name for path in REAL])
def test_real_notebooks_read_alike(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept, count = same(path.read_bytes(), monkeypatch)
    assert isinstance(kept, dict)
    # msgspec reads every cell, unless a cell of a type nbedit does not know sends their one
    # batch (each of these notebooks has fewer than 512 cells) the ordinary way
    known = {"code", "markdown", "raw"}.issuperset(kept["types"])
    assert count == (len(kept["types"]) if known else 0)


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("form", sorted(FORMATS))
def test_every_layout_reads_alike(form: str, minor: int, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = build_notebook(5 if minor == 5 else 4)
    notebook["nbformat_minor"] = minor
    data = FORMATS[form](notebook)
    for bom in (b"", b"\xef\xbb\xbf"):
        kept, count = same(bom + data, monkeypatch)
        assert isinstance(kept, dict) and count == len(notebook["cells"])


# how many of the 6 cells msgspec reads: none (the ordinary scan reads the file, or refuses it), all
# but the batch of cells 2 and 3 (read the ordinary way), or all of them
FILE = REFUSED = 0
BATCH = 4
FAST = 6


def _small(cells: list[dict[str, Any]], **top: Any) -> bytes:
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _cells(count: int) -> list[dict[str, Any]]:
    return [
        code_cell(f"x{index} = {index}", count=index + 1, id=f"c{index}")
        if index % 2
        else markdown_cell(f"# Part {index}", id=f"c{index}")
        for index in range(count)
    ]


@pytest.mark.parametrize(
    ("damage", "read"),
    [
        # what msgspec refuses and json accepts: the ordinary scan reads the whole file
        ((b'"metadata": {}', b'"metadata": {"x": NaN}'), FILE),
        ((b'"metadata": {}', b'"metadata": {"x": -Infinity}'), FILE),
        ((b'"# Part 2"', b'"# Part 2 \\ud800"'), FILE),
        ((b'"metadata": {}', b'"metadata": {"x": ' + b"7" * 4301 + b"}"), FILE),  # json refuses it
        ((b'"metadata": {}', b'"metadata": {"x": ' + b"7" * 4300 + b"}"), FILE),
        # a duplicate member: msgspec keeps the last value, as json does, or refuses
        ((b'"source": [\n    "# Part 2"\n   ]', b'"source": "a",\n   "source": ["# Part 2"]'), FAST),
        ((b'"id": "c2"', b'"id": "first",\n   "id": "c2"'), FAST),
        ((b'"id": "c2"', b'"id": "c2",\n   "id": null'), FAST),
        ((b'"cell_type": "markdown"', b'"cell_type": "markdown", "cell_type": "markdown"'), FAST),
        ((b'"cell_type": "markdown"', b'"cell_type": "code", "cell_type": "markdown"'), BATCH),
        ((b'"cell_type": "markdown"', b'"cell_type": "markdown", "cell_type": "raw"'), BATCH),
        ((b'"execution_count": 4', b'"execution_count": -4, "execution_count": 4'), BATCH),
        ((b'"metadata": {}', b'"metadata": 1, "metadata": {}'), BATCH),
        # escapes in keys and values
        ((b'"cell_type": "markdown"', b'"cell\\u005ftype": "mark\\u0064own"'), FAST),
        ((b'"# Part 2"', b'"# \\u00e9\\ud83d\\ude00 \\"x\\" \\\\ \\/ \\b\\f\\n\\r\\t"'), FAST),
        # odd cells: that batch is read cell by cell, as ever
        ((b'"cell_type": "markdown"', b'"cell_type": "heading", "level": 1'), BATCH),
        ((b'"execution_count": 4', b'"execution_count": 2.0'), BATCH),
        ((b'"execution_count": 4', b'"execution_count": true'), BATCH),
        ((b'"execution_count": 4', b'"execution_count": -1'), BATCH),
        ((b'"id": "c2"', b'"id": 2'), REFUSED),
        ((b'"source": [\n    "# Part 2"\n   ]', b'"source": ["a", 1]'), REFUSED),
        ((b'"metadata": {}', b'"metadata": []'), BATCH),
        # big and small numbers json reads
        ((b'"metadata": {}', b'"metadata": {"x": 1e999, "y": -0.0e-0, "z": ' + b"9" * 40 + b"}"), FAST),
    ],
)
def test_what_the_fast_path_hands_back_reads_alike(
    damage: tuple[bytes, bytes], read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast_module, "_BATCH", 2)  # cell 2 is in the second batch (cells 2 and 3)
    data = _small(_cells(6))
    first = data.index(b'"id": "c2"')  # cell 2 (markdown) or the first place after it
    at = data.find(damage[0], data.rfind(b"{\n", 0, first))
    assert at > 0, damage
    bad = data[:at] + damage[1] + data[at + len(damage[0]) :]
    kept, count = same(bad, monkeypatch)
    assert count == read, kept


@pytest.mark.parametrize(
    "broken",
    [
        b'"metadata": {"x": 01}',
        b'"metadata": {"x": .5}',
        b'"metadata": {"x": 1.}',
        b'"metadata": {"x": -}',
        b'"metadata": {"x": "\\x"}',
        b'"metadata": {"x": "\\u12g4"}',
        b'"metadata": {"x": "a\x01b"}',
        b'"metadata": {"x": [1,]}',
        b'"metadata": {"x": 1,}',
        b'"metadata": {\'x\': 1}',
        b'"metadata": {"x": True}',
        b'"metadata": {"x": 1}}',
        b'"metadata": {"x":\x0c1}',
    ],
)
def test_broken_json_in_a_cell_is_refused_with_jsons_message_and_the_file_kept(
    broken: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nbedit.workspace import Workspace

    data = _small(_cells(6))
    at = data.index(b'"metadata": {}', data.index(b'"id": "c3"'))
    bad = data[:at] + broken + data[at + len(b'"metadata": {}') :]
    with pytest.raises(json.JSONDecodeError) as decoding:
        json.loads(bad)
    where = f"line {decoding.value.lineno} column {decoding.value.colno}: {decoding.value.msg}"
    kept, _ = same(bad, monkeypatch)
    assert kept[0] == "NotebookError" and f"is not valid JSON ({where})" in kept[1]
    path = tmp_path / "broken.ipynb"
    path.write_bytes(bad)
    with monkeypatch.context() as patch:
        patch.setattr(scan_module, "worth_it", lambda size: True)
        with pytest.raises(NotebookError, match=re.escape(f"is not valid JSON ({where})")):
            Workspace(tmp_path).plan_edit("broken.ipynb", "x3 = 3", "x3 = 4")
    assert path.read_bytes() == bad


def test_invalid_utf8_is_refused_before_msgspec_sees_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _small(_cells(4))
    at = data.index(b'"metadata": {}', data.index(b'"id": "c1"'))
    bad = data[:at] + b'"metadata": {"x": "\xff"}' + data[at + len(b'"metadata": {}') :]
    kept, _ = same(bad, monkeypatch)
    assert kept == (
        "NotebookError",
        f"n.ipynb: byte {at + 19} is not valid UTF-8, so this is not a notebook nbedit can edit; "
        "the file was not changed",
    )


@pytest.mark.parametrize(
    "change",
    [
        "two cells arrays",
        "cells not a list",
        "cells null",
        "no cells",
        "empty cells",
        "one cell",
        "separators differ",
        "space before the bracket",
        "not a notebook",
        "nbformat 3",
    ],
)
def test_the_top_level_reads_alike(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook: dict[str, Any] = {"cells": _cells(7), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1, sort_keys=True)
    if change == "two cells arrays":
        text = text.replace('"nbformat_minor": 5\n}', '"nbformat_minor": 5,\n "cells": []\n}')
    elif change == "cells not a list":
        text = text.replace('"nbformat_minor": 5\n}', '"nbformat_minor": 5,\n "cells": 3\n}')
    elif change == "cells null":
        text = text.replace('{\n "cells": [', '{\n "cells": null, "c": [', 1)
    elif change == "no cells":
        text = text.replace('{\n "cells": [', '{\n "other": [', 1)
    elif change == "empty cells":
        text = json.dumps(dict(notebook, cells=[]), indent=1)
    elif change == "one cell":
        text = json.dumps(dict(notebook, cells=notebook["cells"][:1]), indent=1)
    elif change == "separators differ":
        text = text.replace("},\n  {", "} ,{", 3)
    elif change == "space before the bracket":
        text = text.replace("}\n ],", "}  \r\n\t ],")
    elif change == "not a notebook":
        text = json.dumps([notebook])
    elif change == "nbformat 3":
        text = (Path(__file__).parent / "data" / "old-notebooks" / "test3.ipynb").read_text()
    kept, count = same(text.encode(), monkeypatch)
    reads = change in ("one cell", "space before the bracket")
    assert (count > 0) == reads, kept
    if change == "two cells arrays":
        assert kept[0] == "NotebookError" and "two top-level 'cells' arrays" in kept[1]


def test_too_many_cells_are_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _small(_cells(30))
    with monkeypatch.context() as patch:
        refusals = []
        for fast in (False, True):
            patch.setattr(scan_module, "worth_it", lambda size, fast=fast: fast)
            with pytest.raises(NbeditError) as refused:
                NotebookDocument.parse(data, "n.ipynb", max_cells=20)
            refusals.append((type(refused.value), str(refused.value)))
        assert refusals[0] == refusals[1]
        assert NotebookDocument.parse(data, "n.ipynb", max_cells=30).table.fast == 30


def test_nesting_json_refuses_is_never_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Near the recursion limit both readings agree (msgspec counts two more levels, so it
    refuses first and the ordinary scan decides)."""
    import sys

    limit = sys.getrecursionlimit()
    data = _small(_cells(3))
    at = data.index(b'"metadata": {}', data.index(b'"id": "c1"'))
    for depth in range(limit - 80, limit + 5, 3):
        deep = b'"metadata": {"x": ' + b"[" * depth + b"]" * depth + b"}"
        same(data[:at] + deep + data[at + len(b'"metadata": {}') :], monkeypatch)


def test_an_edit_next_to_a_value_nested_near_the_limit_is_refused_clearly(tmp_path: Path) -> None:
    """A cell nested near the recursion limit reads fine, but rewriting the notebook reads it again
    deeper in the stack: that is a clear ``NotebookError`` with the file unchanged, never a bare
    ``RecursionError`` (whatever the depth, an edit either succeeds or is refused so)."""
    import sys

    import nbedit

    limit = sys.getrecursionlimit()
    data = _small(_cells(3))
    at = data.index(b'"metadata": {}', data.index(b'"id": "c1"'))
    refused = 0
    for depth in range(limit - 150, limit + 5):  # every depth: the window that reads but cannot be rewritten is narrow
        deep = b'"metadata": {"x": ' + b"[" * depth + b"]" * depth + b"}"
        notebook = tmp_path / f"deep{depth}.ipynb"
        notebook.write_bytes(data[:at] + deep + data[at + len(b'"metadata": {}') :])
        before = notebook.read_bytes()
        workspace = nbedit.Workspace(tmp_path, history=False)
        try:
            workspace.apply(workspace.plan_edit(notebook.name, "# Part 2", "# Part two"))
        except NbeditError as error:
            refused += isinstance(error, NotebookError)
            assert notebook.read_bytes() == before
            assert "nested too deeply" in str(error) or "not valid JSON" in str(error), str(error)
    assert refused  # the depths above do reach the limit


@pytest.mark.parametrize("batch", [1, 2, 3, 512])
def test_batches_of_any_size_read_alike(batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_module, "_BATCH", batch)
    cells = _cells(11)
    cells[4] = code_cell("s = 'é ✓'\n# %% nbedit cell 3 [code]\n", count=5, id="c4")
    cells[7]["cell_type"] = "heading"  # read-only: its batch is read cell by cell
    cells[9]["source"] = ""
    kept, count = same(_small(cells), monkeypatch)
    assert 0 < count < 11 if batch < 11 else count == 0


def test_an_ordinary_big_notebook_is_read_by_msgspec(tmp_path: Path) -> None:
    """The speed of a big notebook rests on the fast path: this fails if it silently stops
    being taken for nbformat's own layout (no forcing here: the size decides, as for a user)."""
    cells = [
        code_cell(f"x_{index} = {index}\nprint(x_{index})", count=index + 1, id=f"c{index:07d}")
        for index in range(24_000)
    ]
    data = _small(cells)
    assert len(data) >= fast_module.MIN_BYTES
    document = NotebookDocument.parse(data, "big.ipynb")
    assert document.table.fast == len(cells)


def _image_cells(count: int) -> list[dict[str, Any]]:
    """Cells of a plotting notebook: each a few KB of base64 image output (``fast._read_whole``'s kind)."""
    import base64
    import random

    rng = random.Random(5)
    cells: list[dict[str, Any]] = []
    for index in range(count):
        image = base64.b64encode(rng.randbytes(3_000)).decode()
        outputs = [{"data": {"image/png": image, "text/plain": ["<Figure>"]}, "metadata": {},
                    "output_type": "display_data"}]  # fmt: skip
        cells.append(code_cell(f"plot({index})", outputs=outputs, count=index + 1, id=f"p{index}"))
    return cells


def test_a_notebook_of_big_cells_is_decoded_whole_from_its_own_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells of 2 KiB and more are proved in place and decoded at once, never joined batch by batch
    (no forcing of ``_WHOLE_FROM``: the cells' size decides); small cells still go by batches."""
    big, small = _small(_image_cells(40)), _small(_cells(40))
    ordinary = {data: read(data, monkeypatch, fast=False)[0] for data in (big, small)}
    taken: list[str] = []
    batches, whole = fast_module._read_batches, fast_module._read_whole
    monkeypatch.setattr(scan_module, "worth_it", lambda size: True)
    monkeypatch.setattr(fast_module, "_read_batches", lambda *args: taken.append("batches") or batches(*args))
    monkeypatch.setattr(fast_module, "_read_whole", lambda *args: taken.append("whole") or whole(*args))
    for data, path in ((big, ["whole"]), (small, ["batches"])):
        taken.clear()
        document = NotebookDocument.parse(data, "n.ipynb")
        assert taken == path and document.table.fast == 40
        assert document.view == ordinary[data]["view"]
        assert list(document.table.starts) == ordinary[data]["starts"]
        assert document.edit(document.view.replace("plot(7)", "plot(70)")).data == data.replace(
            b'"plot(7)"', b'"plot(70)"'
        )


def test_big_cells_apart_by_other_text_that_ends_where_it_should_read_as_json_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One separator a byte shorter, a later one a byte longer: the array still ends where the
    lengths say, but the cells between are not where they would be; each is proved in place."""
    data = _small(_image_cells(12))
    separator = b",\n  {"
    assert data.count(separator) == 11
    pieces = data.split(separator)
    pieces[4] += b","  # shorter: ",\n {" (the array's indent only shrinks)
    pieces[8] += b",\n   "  # longer
    between = {4: b"\n {", 8: b"{"}  # after the pieces made shorter and longer
    odd = b"".join(
        piece + (b"" if index == len(pieces) - 1 else between.get(index, separator))
        for index, piece in enumerate(pieces)
    )
    assert len(odd) == len(data) and json.loads(odd) == json.loads(data)
    kept, count = same(odd, monkeypatch)
    assert isinstance(kept, dict) and len(kept["types"]) == 12 and count == 0  # the ordinary scan read it


@pytest.mark.parametrize(
    "damage",
    [
        b"\x01",  # a control character inside the base64 text
        b"\n",  # a raw line break inside it
        b"\\x",  # an escape JSON has not
        b"\\u12g4",  # a \u escape without four hex digits
        b'"',  # the string closed early: the rest of the base64 is no JSON
        b"\\",  # a backslash escaping the next base64 character
        b"\\ud800",  # a lone surrogate: json reads it, msgspec refuses (the ordinary scan decides)
    ],
)
def test_an_output_string_that_is_not_well_formed_json_is_refused_and_the_file_kept(
    damage: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Output strings are never decoded on the fast path, but every one of them is still proved a
    well-formed JSON string: a broken one is refused with json's own message, the file unchanged."""
    from nbedit.workspace import Workspace

    data = _small(_image_cells(30))
    inside = data.index(b'"image/png": "', data.index(b'"id": "p17"')) + 500  # well inside the base64
    bad = data[:inside] + damage + data[inside:]
    kept, _ = same(bad, monkeypatch)
    try:
        json.loads(bad)
    except json.JSONDecodeError as decoding:
        where = f"line {decoding.lineno} column {decoding.colno}: {decoding.msg}"
        assert kept[0] == "NotebookError" and f"is not valid JSON ({where})" in kept[1]
    else:  # JSON after all (a lone surrogate): read exactly as json reads it, by the ordinary scan
        assert isinstance(kept, dict)
    path = tmp_path / "plots.ipynb"
    path.write_bytes(bad)
    with monkeypatch.context() as patch:
        patch.setattr(scan_module, "worth_it", lambda size: True)
        workspace = Workspace(tmp_path)
        if isinstance(kept, dict):
            workspace.apply(workspace.plan_edit("plots.ipynb", "plot(3)", "plot(4)"))
            assert path.read_bytes() == bad.replace(b'"plot(3)"', b'"plot(4)"')
            return
        with pytest.raises(NotebookError, match=re.escape(kept[1].split(": ", 1)[1][:40])):
            workspace.plan_edit("plots.ipynb", "plot(3)", "plot(4)")
    assert path.read_bytes() == bad


# -- the table tests again, with msgspec reading the cells -------------------------------------

from test_notebook_table import (  # noqa: E402  (collected here too: run with the fast path on)
    test_a_bad_cell_in_the_middle_of_a_big_uniform_batch_is_named_and_the_file_kept as test_table_bad_cell,
    test_a_batch_of_one_cell_type_reads_as_json_reads_it as test_table_uniform_batch,
    test_a_cell_that_is_not_an_object_is_named_before_later_bad_cells as test_table_not_an_object,
    test_an_odd_cell_anywhere_in_a_batch_reads_as_json_reads_it as test_table_odd_cell,
    test_broken_json_in_the_middle_of_a_big_batch_is_refused_as_json_refuses_it as test_table_broken_json,
    test_cells_apart_by_other_text_than_the_first_two_read_as_json_reads_them as test_table_apart,
    test_cells_not_apart_by_one_comma_are_refused_as_json_refuses_them as test_table_not_apart,
    test_the_first_bad_cell_is_named_whatever_the_batch as test_table_first_bad_cell,
)


@pytest.fixture(autouse=True)
def _fast_path_on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.function.__module__ == "test_notebook_table":  # the table tests imported above
        monkeypatch.setattr(scan_module, "worth_it", lambda size: True)
        monkeypatch.setattr(fast_module, "_BATCH", 3)


__all__ = [
    "test_table_apart",
    "test_table_bad_cell",
    "test_table_broken_json",
    "test_table_first_bad_cell",
    "test_table_not_an_object",
    "test_table_not_apart",
    "test_table_odd_cell",
    "test_table_uniform_batch",
]


def test_a_small_notebook_does_not_import_msgspec(tmp_path: Path) -> None:
    """Importing msgspec costs some 30 ms, more than it saves on a notebook under ``MIN_BYTES``."""
    import os
    import subprocess
    import sys

    path = tmp_path / "small.ipynb"
    path.write_bytes(_small(_cells(50)))
    script = (
        "import sys\nfrom nbedit.engine.notebook import NotebookDocument\n"
        "document = NotebookDocument.parse(open(sys.argv[1], 'rb').read(), 'small.ipynb')\n"
        "print(len(document.cells), 'msgspec' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env)
    assert done.stdout.split() == ["50", "False"], done.stderr
