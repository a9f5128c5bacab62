"""The fast path of a notebook edit, held to ``json`` itself and to the slow path.

Three shortcuts make a one-cell edit of a 50 MB notebook cheap, and each is checked
here against what it replaces:

* the scanner decodes a window of the bytes at a time and parses each cell with one
  call of the ``json`` C scanner: with windows of 64 characters every token of a
  test notebook crosses a window boundary, and the scanner must still read exactly
  what ``json.loads`` reads and refuse exactly what it refuses, with its message;
* a cell's member offsets are read only when an edit needs them;
* a view that differs inside one cell's body is read back from that body alone: the
  result (bytes or error) must be the one reading back the whole view gives.

The invariant of every edit is checked on real notebooks (``tests/data/notebooks``)
and on generated big ones: the result is a notebook ``json`` and nbformat read, and
every byte outside the edited ``source`` value is the original's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_corpus import FORMATS, build_notebook, canonical, code_cell, many_cells_notebook, markdown_cell

from nbedit import Workspace
from nbedit.engine.notebook import NotebookDocument, render_cell
from nbedit.engine.notebook import document as document_module
from nbedit.engine.notebook import scan as scan_module
from nbedit.errors import NotebookError

REAL_NOTEBOOKS = sorted((Path(__file__).resolve().parent / "data" / "notebooks").glob("*.ipynb"))


@contextmanager
def tiny_windows(window: int = 64, margin: int = 16) -> Iterator[None]:
    """Scan with windows so small that tokens and values cross their boundaries everywhere."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan_module, "_WINDOW", window)
        patch.setattr(scan_module, "_MARGIN", margin)
        yield


@contextmanager
def slow_path() -> Iterator[None]:
    """Read every edited view back whole, as before the one-body shortcut."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(document_module.NotebookDocument, "_changed_body", lambda self, view: None)
        yield


def _agrees_with_json(data: bytes) -> NotebookDocument:
    expected = json.loads(data)
    document = NotebookDocument.parse(data, "x.ipynb")
    assert document.top == {key: value for key, value in expected.items() if key != "cells"}
    assert len(document.cells) == len(expected["cells"])
    for index, cell in enumerate(expected["cells"]):
        layout = document.layout.cells[index]
        assert json.loads(data[layout.start : layout.end]) == cell
        source = cell.get("source", "")
        assert document.cells[index].source == (source if isinstance(source, str) else "".join(source))
        assert document.cells[index].id == cell.get("id")
        for key, member in layout.members.items():
            assert json.loads(data[member.value_start : member.value_end]) == cell[key]
            assert json.loads(data[member.key_start : member.key_end]) == key
    for key, member in document.layout.top.members.items():
        assert json.loads(data[member.value_start : member.value_end]) == expected[key]
    return document


def _edit_cell(document: NotebookDocument, index: int, source: str) -> bytes:
    span = document.spans[index]
    cell = document.cells[index]
    new_body = render_cell(index, cell.cell_type, source, cell.id).split("\n", 1)[1]
    assert document.view[span.start : span.end] != new_body
    return document.apply_view(document.view[: span.start] + new_body + document.view[span.end :])


@functools.lru_cache(maxsize=1)
def _source_members(data: bytes) -> list[Any]:
    """Where each cell's source value sits in ``data`` (parsed once per notebook, not per edit)."""
    return [cell.members.get("source") for cell in NotebookDocument.parse(data, "x.ipynb").layout.cells]


def _check_invariant(data: bytes, result: bytes, index: int, source: str) -> None:
    """``result`` is ``data`` with cell ``index``'s source set to ``source``, and not one byte more."""
    expected = json.loads(data)  # a fresh copy of the original (json reads faster than deepcopy)
    old = expected["cells"][index].get("source", "")
    expected["cells"][index]["source"] = source.splitlines(keepends=True) if isinstance(old, list) else source
    assert json.loads(result) == expected
    member = _source_members(data)[index]
    assert member is not None
    tail = len(data) - member.value_end
    assert result[: member.value_start] == data[: member.value_start]
    assert result[len(result) - tail :] == data[member.value_end :]


# -- windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize("format_name", sorted(FORMATS))
@pytest.mark.parametrize("minor", [4, 5])
def test_tiny_windows_read_what_json_loads_reads(format_name: str, minor: int) -> None:
    data = FORMATS[format_name](build_notebook(minor))
    with tiny_windows():
        _agrees_with_json(data)


@pytest.mark.parametrize("window", [64, 97, 1000])
def test_tiny_windows_on_every_real_notebook(window: int) -> None:
    for path in REAL_NOTEBOOKS:
        with tiny_windows(window, 16):
            _agrees_with_json(path.read_bytes())


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sources=st.lists(st.text(max_size=40), max_size=4),
    extra=_values,
    outputs=st.lists(_values, max_size=3),
    indent=st.sampled_from([None, 0, 1, 2, "\t", " " * 40]),
    ensure_ascii=st.booleans(),
    window=st.integers(min_value=24, max_value=200),
)
def test_any_formatting_any_window_reads_what_json_reads(
    sources: list[str], extra: Any, outputs: list[Any], indent: Any, ensure_ascii: bool, window: int
) -> None:
    cells: list[dict[str, Any]] = []
    for number, source in enumerate(sources):
        cell = code_cell(source, outputs=outputs, count=number) if number % 2 else markdown_cell(source)
        cell["metadata"] = {"extra": extra}
        cell["id"] = f"c{number}"
        cells.append(cell)
    notebook = {"cells": cells, "metadata": {"extra": extra}, "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(notebook, indent=indent, ensure_ascii=ensure_ascii).encode()
    with tiny_windows(window, 8):
        _agrees_with_json(data)


def _json_error(data: bytes) -> str | None:
    try:
        json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as error:
        return f"(line {error.lineno} column {error.colno}: {error.msg})"
    except (UnicodeDecodeError, ValueError):
        return "?"
    return None


@settings(max_examples=200, deadline=None)
@given(
    position=st.integers(min_value=0),
    byte=st.sampled_from(b'{}[],:"\\ \n\t0123456789eE.-+ntfuxa\x00\x1f\x7f'),
    delete=st.booleans(),
    window=st.integers(min_value=24, max_value=300),
)
def test_damage_is_refused_with_jsons_message_whatever_the_window(
    position: int, byte: int, delete: bool, window: int
) -> None:
    data = bytearray(canonical(build_notebook(5)))
    position %= len(data)
    if delete:
        del data[position]
    else:
        data[position] = byte
    expected = _json_error(bytes(data))
    with tiny_windows(window, 8):
        try:
            NotebookDocument.parse(bytes(data), "d.ipynb")
        except NotebookError as error:
            if expected is None:  # valid JSON, but not a notebook nbedit edits
                assert "is not valid JSON" not in str(error)
            elif expected != "?":
                assert expected in str(error)
        else:
            assert expected is None


@pytest.mark.parametrize(
    "damage",
    [
        b'"outputs": [1,,2]',
        b'"outputs": [{"a": 1,}]',
        b'"outputs": ["unterminated]',
        b'"outputs": ["tab\there"]',
        b'"outputs": ["\\q"]',
        b'"outputs": ["\\ud83d\\u00"]',
        b'"outputs": [] "x": 1',
        b'"outputs": [1.]',
        b'"outputs": [-]',
        b'"outputs": [tru]',
    ],
)
def test_damage_in_a_big_output_is_refused_with_jsons_message(damage: bytes) -> None:
    # the damage sits behind 3 MB of output, far beyond the first window
    big = {"data": {"text/plain": ["x" * 1000 + "\n"] * 3000}, "metadata": {}, "output_type": "display_data"}
    notebook = {
        "cells": [code_cell("y = 2", outputs=[big], count=1), code_cell("x = 1")],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    data = canonical(notebook)
    position = data.rindex(b'"outputs": []')
    data = data[:position] + damage + data[position + len(b'"outputs": []') :]
    expected = _json_error(data)
    assert expected is not None and expected != "?"
    with pytest.raises(NotebookError, match="is not valid JSON") as caught:
        NotebookDocument.parse(data, "o.ipynb")
    assert expected in str(caught.value)


def test_an_integer_python_cannot_read_is_refused_like_json_refuses_it() -> None:
    data = b'{"cells": [], "metadata": {"n": ' + b"9" * 5000 + b'}, "nbformat": 4, "nbformat_minor": 4}'
    with pytest.raises(ValueError, match="Exceeds the limit"):
        json.loads(data)
    for window in (64, 1 << 20):
        with (
            tiny_windows(window, 16),
            pytest.raises(NotebookError, match="is not valid JSON.*Exceeds the limit"),
        ):
            NotebookDocument.parse(data, "n.ipynb")


def test_values_longer_than_the_window_and_long_whitespace() -> None:
    notebook = build_notebook(5)
    notebook["cells"][2]["outputs"][0]["data"]["image/png"] = "QUJD" * 800_000  # 3.2 MB, beyond 1 MiB
    notebook["metadata"]["number"] = 12345.678e-3
    data = canonical(notebook)
    data = data.replace(b'"cells": [', b'"cells": [' + b" " * 200_000, 1)  # whitespace past the margin
    data = data.replace(b'"nbformat": 4', b'"nbformat":' + b"\n" * 100_000 + b"4", 1)
    _agrees_with_json(data)
    with tiny_windows(4096, 1024):
        _agrees_with_json(data)


@pytest.mark.parametrize("number", ["1234567890123456789.5e-3", "-0.000001E+22", "12345678901234567890"])
def test_a_number_cut_by_the_window_end_is_read_whole(number: str) -> None:
    # the number's scanner stops quietly before a cut '.', 'e' or digit: it is trusted only with room after it
    for padding in range(12):
        data = (
            '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 4, "big":'
            + " " * padding
            + number
            + "}"
        ).encode()
        for window in range(16, 48):
            with tiny_windows(window, 2):
                document = NotebookDocument.parse(data, "n.ipynb")
            assert document.top["big"] == json.loads(number)


def test_non_ascii_cells_are_read_from_utf8_and_escapes_from_json() -> None:
    cells = [
        markdown_cell("Café é ✓ 📊", metadata={"naïve": "日本"}),
        code_cell("print('ü')", outputs=[{"name": "stdout", "output_type": "stream", "text": ["██ 100%\n"]}]),
        markdown_cell("plain"),
    ]
    notebook = {"cells": cells, "metadata": {"title": "Über"}, "nbformat": 4, "nbformat_minor": 4}
    for data in (
        canonical(notebook),
        json.dumps(notebook, ensure_ascii=True).encode(),
        FORMATS["tabs-crlf"](notebook),
    ):
        for window in (64, 1 << 20):
            with tiny_windows(window, 16):
                document = _agrees_with_json(data)
            assert document.cells[0].source == "Café é ✓ 📊"


# -- member offsets on demand -----------------------------------------------------------------


def test_a_one_cell_edit_reads_the_members_of_few_cells() -> None:
    notebook = many_cells_notebook(2000)
    data = canonical(notebook)
    document = NotebookDocument.parse(data, "many.ipynb")
    assert all(layout.known is None for layout in document.layout.cells)
    result = _edit_cell(document, 1500, "x1500 = -1\nprint(x1500)\n# done")
    read = [index for index, layout in enumerate(document.layout.cells) if layout.known is not None]
    assert 1500 in read and len(read) <= 21  # the edited cell, and the first 20 for the file's key order
    _check_invariant(data, result, 1500, "x1500 = -1\nprint(x1500)\n# done")


def test_repeated_source_key_edits_the_last_one_like_json() -> None:
    data = (
        b'{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], '
        b'"source": "old", "source": ["x = 1\\n", "y"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}'
    )
    for window in (24, 64, 1 << 20):
        with tiny_windows(window, 8):
            document = _agrees_with_json(data)
            result = _edit_cell(document, 0, "x = 2\ny")
        assert result == data.replace(b'["x = 1\\n", "y"]', b'["x = 2\\n", "y"]')


# -- one body read back alone -----------------------------------------------------------------


_inserted = st.lists(
    st.sampled_from(["a", " ", "\n", "\r", "\\", "é", "# %% nbedit", "cell 1 [code]", '"']), max_size=8
).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    format_name=st.sampled_from(sorted(FORMATS)),
    cell=st.integers(min_value=0, max_value=8),
    start=st.integers(min_value=0),
    length=st.integers(min_value=0, max_value=12),
    inserted=_inserted,
    clear_outputs=st.booleans(),
)
def test_one_body_shortcut_gives_what_reading_the_whole_view_gives(
    format_name: str, cell: int, start: int, length: int, inserted: str, clear_outputs: bool
) -> None:
    data = FORMATS[format_name](build_notebook(5))
    document = NotebookDocument.parse(data, "s.ipynb")
    span = document.spans[cell % len(document.spans)]
    # an edit inside the body, or reaching a little past it (the next marker line)
    begin = span.start + start % (span.end - span.start + 1)
    end = min(len(document.view), begin + length)
    view = document.view[:begin] + inserted + document.view[end:]

    def outcome() -> tuple[str, Any]:
        try:
            edit = document.edit(view, clear_outputs=clear_outputs, new_cell_id=lambda: "fresh")
        except NotebookError as error:
            return "refused", error.message
        return "written", (edit.data, edit.changes, edit.notes)

    fast = outcome()
    with slow_path():
        slow = outcome()
    assert fast == slow
    if fast[0] == "written":
        nbformat.validate(nbformat.reads(fast[1][0].decode("utf-8"), as_version=4))


def test_shortcut_declines_a_body_that_would_swallow_the_next_marker() -> None:
    data = canonical(build_notebook(5))
    document = NotebookDocument.parse(data, "s.ipynb")
    span = document.spans[1]
    view = document.view[: span.end - 1] + document.view[span.end :]  # the body's closing newline removed
    assert document._changed_body(view) is None
    assert (
        document._changed_body(document.view[: span.start] + "z = 0\n" + document.view[span.end :])
        is not None
    )


# -- the invariant on real and big notebooks --------------------------------------------------


@pytest.mark.parametrize("path", REAL_NOTEBOOKS, ids=[path.name for path in REAL_NOTEBOOKS])
def test_every_cell_of_every_real_notebook_edits_only_its_source(path: Path) -> None:
    data = path.read_bytes()
    document = NotebookDocument.parse(data, path.name)
    valid_before = _nbformat_valid(data)
    for cell in document.cells:
        if cell.read_only:
            continue
        for source in (cell.source + '\n# edited: é ✓ \\u00e9 "q"', "", "only\r\nline"):
            if source == cell.source:
                continue
            result = _edit_cell(document, cell.index, source)
            _check_invariant(data, result, cell.index, source)
            assert _nbformat_valid(result) or not valid_before
            with slow_path():
                assert _edit_cell(document, cell.index, source) == result


def _nbformat_valid(data: bytes) -> bool:
    try:
        nbformat.validate(nbformat.reads(data.decode("utf-8"), as_version=4))
    except nbformat.ValidationError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["image", "text"])
def test_big_generated_notebook_through_the_workspace(kind: str, tmp_path: Path) -> None:
    """A 20 MB notebook shaped like the benchmark's, edited through ``Workspace`` with history on."""
    cells = []
    for number in range(400):
        if kind == "image":
            outputs = [
                {"data": {"image/png": "iVBO" * 12_500 + "\n"}, "metadata": {}, "output_type": "display_data"}
            ]
        else:
            lines = [f"step {step} loss 0.{step:04d} ✓\n" for step in range(1700)]
            outputs = [{"name": "stdout", "output_type": "stream", "text": lines}]
        cells.append(code_cell(f"total_{number} = frame_{number}.sum()", outputs=outputs, count=number))
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    path = tmp_path / "big.ipynb"
    data = canonical(notebook)
    assert len(data) > 19_000_000
    path.write_bytes(data)
    workspace = Workspace(tmp_path)
    workspace.apply(
        workspace.plan_edit("big.ipynb", "total_321 = frame_321.sum()", "total_321 = frame_321.mean()")
    )
    result = path.read_bytes()
    _check_invariant(data, result, 321, "total_321 = frame_321.mean()")
    assert len(result) == len(data) + 1
    workspace.undo()
    assert path.read_bytes() == data


# -- the check before writing -----------------------------------------------------------------


SPLICERS = {"splice_cells": document_module.splice_cells, "splice_cell": document_module.splice_cell}


@pytest.mark.parametrize("damage", ["outside", "value"])
@pytest.mark.parametrize("splicer", sorted(SPLICERS))  # the general path, and the one-cell path
def test_a_splice_that_fails_the_check_writes_nothing(
    damage: str, splicer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "n.ipynb"
    data = canonical(build_notebook(5))
    path.write_bytes(data)
    original_splice = SPLICERS[splicer]

    def damaged(data: bytes, *args: Any) -> bytes:
        result = original_splice(data, *args)
        if damage == "outside":
            return result[:5] + bytes([result[5] ^ 1]) + result[6:]
        return result.replace(b'"value = math.tau\\n"', b'"value = math.pi\\n" ', 1)

    monkeypatch.setattr(document_module, splicer, damaged)
    workspace = Workspace(tmp_path)
    with pytest.raises(NotebookError, match="check of the edited notebook failed.*the file was not changed"):
        if splicer == "splice_cell":  # one cell's text
            workspace.plan_edit("n.ipynb", "value = math.pi", "value = math.tau")
        else:  # two cells' text: every cell is written through the general splice
            workspace.plan_patch(
                "n.ipynb\n<<<<<<< SEARCH\nvalue = math.pi\n=======\nvalue = math.tau\n>>>>>>> REPLACE\n"
                "<<<<<<< SEARCH\nsummary = value * 2\n=======\nsummary = value * 3\n>>>>>>> REPLACE\n"
            )
    assert path.read_bytes() == data


# -- the one-cell path against the general one --------------------------------------------------


def _already_invalid() -> bytes:
    """A notebook nbformat's schema refuses (no execution_count, no metadata): edits note it."""
    notebook = build_notebook(4)
    del notebook["cells"][1]["execution_count"]
    del notebook["cells"][4]["metadata"]
    return json.dumps(notebook, indent=2).encode()


CORPUS = {
    **{
        path.name: path.read_bytes()
        for path in sorted((Path(__file__).parent / "data" / "notebooks").glob("*.ipynb"))
    },
    "built": canonical(build_notebook(5)),
    "already invalid": _already_invalid(),
}


def _cell_edits(document: NotebookDocument) -> Iterator[tuple[str, str]]:
    """For each cell: views with its text changed at the start, in the middle and at the end."""
    view = document.view
    for span in document.spans:
        body = view[span.start : span.end]
        middle = span.start + len(body) // 2
        for label, edited in (
            ("start", view[: span.start] + "# edited\n" + view[span.start :]),
            ("middle", view[:middle] + "é✓" + view[middle:]),
            ("end", view[: span.end] + "added = 1\n" + view[span.end :]),
            ("cleared", view[: span.start] + view[span.end :]),
        ):
            yield f"{span.label} {label}", edited


@pytest.mark.parametrize("clear_outputs", [False, True])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_one_cell_edits_write_what_the_general_path_writes(
    name: str, clear_outputs: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = NotebookDocument.parse(CORPUS[name], name)
    if name == "already invalid":
        assert document.problems
    results: dict[str, Any] = {}
    for edit_name, edited in _cell_edits(document):
        try:
            edit = document.edit(edited, clear_outputs=clear_outputs)
        except NotebookError as error:
            results[edit_name] = str(error)
        else:
            results[edit_name] = (edit.data, edit.changes, edit.notes)
    monkeypatch.setattr(NotebookDocument, "_edit_one_cell", None)  # the one-cell path is not taken
    monkeypatch.setattr(NotebookDocument, "_changed_body", lambda self, new_view: None)
    for edit_name, edited in _cell_edits(document):
        try:
            edit = document.edit(edited, clear_outputs=clear_outputs)
        except NotebookError as error:
            assert results[edit_name] == str(error), edit_name
        else:
            assert results[edit_name] == (edit.data, edit.changes, edit.notes), edit_name


@pytest.mark.parametrize("stretch", [1, 7, 64, 1 << 22])
def test_a_big_result_is_copied_and_checked_a_stretch_at_a_time_with_the_same_bytes(
    stretch: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results of ``write._STRETCH`` bytes or more are built and checked in stretches (so a hashing
    thread gets the GIL between them): the same bytes, and damage in any stretch still refused."""
    from nbedit.engine.notebook import write as write_module

    monkeypatch.setattr(write_module, "_STRETCH", stretch)
    data = canonical(build_notebook(5))
    path = tmp_path / "n.ipynb"
    path.write_bytes(data)
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("n.ipynb", "value = math.pi", "value = math.tau")
    assert plan.files[0].after_bytes == data.replace(b'"value = math.pi\\n"', b'"value = math.tau\\n"')
    original_splice = SPLICERS["splice_cell"]
    for position in (0, len(data) // 3, len(data) - 2):  # the first, a middle, the last stretch

        def damaged(data: bytes, *args: Any, position: int = position) -> bytes:
            result = original_splice(data, *args)
            return result[:position] + bytes([result[position] ^ 1]) + result[position + 1 :]

        monkeypatch.setattr(document_module, "splice_cell", damaged)
        with pytest.raises(NotebookError, match="check of the edited notebook failed"):
            workspace.plan_edit("n.ipynb", "value = math.pi", "value = math.tau")
    assert path.read_bytes() == data
