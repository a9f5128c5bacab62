"""The one-pass notebook scanner and the two validation paths.

The scanner must accept exactly what ``json.loads`` accepts and read the same
values; source edits must be written without importing nbformat, structural edits
must still be checked by it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_corpus import FORMATS, build_notebook, canonical, code_cell, markdown_cell, set_source

from nbedit.engine.notebook import NotebookDocument, render_cell
from nbedit.engine.notebook.layout import _uses_ascii_escapes
from nbedit.engine.notebook.scan import check_utf8, scan_notebook
from nbedit.errors import NotebookError

REPOSITORY = Path(__file__).resolve().parent.parent


def _notebook(*cells: dict[str, Any], minor: int = 5) -> dict[str, Any]:
    for index, cell in enumerate(cells):
        if minor >= 5:
            cell.setdefault("id", f"cell{index}")
    return {
        "cells": list(cells),
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def _check_scan_matches_json(data: bytes) -> None:
    """Everything the scanner records agrees with ``json.loads`` of the same bytes."""
    expected = json.loads(data)
    document = NotebookDocument.parse(data, "x.ipynb")
    assert document.top == {key: value for key, value in expected.items() if key != "cells"}
    assert len(document.cells) == len(expected["cells"])
    for index, cell in enumerate(expected["cells"]):
        assert document.raw_cell(index) == cell
        source = cell.get("source", "")
        assert document.cells[index].source == (source if isinstance(source, str) else "".join(source))
        for key, member in document.layout.cells[index].members.items():
            assert json.loads(data[member.value_start : member.value_end]) == cell[key]
            assert json.loads(data[member.key_start : member.key_end]) == key
    for key, member in document.layout.top.members.items():
        value = data[member.value_start : member.value_end]
        assert json.loads(value) == expected[key]
        assert value == value.strip()  # the offsets are the value's own, no whitespace
    assert data[document.layout.cells_start : document.layout.cells_start + 1] == b"["
    assert data[document.layout.cells_end - 1 : document.layout.cells_end] == b"]"


@pytest.mark.parametrize("format_name", sorted(FORMATS))
@pytest.mark.parametrize("minor", [4, 5])
def test_scan_reads_what_json_loads_reads(format_name: str, minor: int) -> None:
    _check_scan_matches_json(FORMATS[format_name](build_notebook(minor)))


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sources=st.lists(st.text(max_size=30), min_size=0, max_size=4),
    extra=st.dictionaries(st.text(max_size=6), _json_values, max_size=3),
    outputs=st.lists(_json_values, max_size=3),
    indent=st.sampled_from([None, 0, 1, 2, "\t"]),
    ensure_ascii=st.booleans(),
    sort_keys=st.booleans(),
)
def test_scan_agrees_with_json_on_any_formatting(
    sources: list[str],
    extra: dict[str, Any],
    outputs: list[Any],
    indent: int | str | None,
    ensure_ascii: bool,
    sort_keys: bool,
) -> None:
    cells = []
    for number, source in enumerate(sources):
        cell = code_cell(source, count=number) if number % 2 else markdown_cell(source)
        cell["metadata"] = dict(extra)
        if number % 2:
            cell["outputs"] = outputs
        cells.append(cell)
    notebook = _notebook(*cells)
    notebook["metadata"]["extra"] = extra
    data = json.dumps(notebook, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys).encode()
    _check_scan_matches_json(data)


@settings(max_examples=150, deadline=None)
@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255), delete=st.booleans())
def test_a_damaged_file_is_refused_exactly_when_json_refuses_it(
    position: int, byte: int, delete: bool
) -> None:
    data = bytearray(canonical(build_notebook(5)))
    position %= len(data)
    if delete:
        del data[position]
    else:
        data[position] = byte
    try:
        json.loads(bytes(data).decode("utf-8"))
        json_accepts = True
    except ValueError:
        json_accepts = False
    try:
        NotebookDocument.parse(bytes(data), "d.ipynb")
    except NotebookError as error:
        assert json_accepts != ("is not valid JSON" in str(error) or "is not valid UTF-8" in str(error))
    else:
        assert json_accepts


@pytest.mark.parametrize(
    "damage",
    [
        b'"outputs": [1,,2]',
        b'"outputs": [{"a": 1,}]',
        b'"outputs": ["unterminated]',
        b'"outputs": ["tab\there"]',
        b'"outputs": ["\\q"]',
        b'"outputs": [] "x": 1',
        b'"outputs": [NaN, Infinity, -Infinity, 1e400]',  # json.loads accepts these
    ],
)
def test_broken_json_inside_outputs_is_refused_with_the_json_message(damage: bytes) -> None:
    data = canonical(_notebook(code_cell("x = 1"))).replace(b'"outputs": []', damage)
    assert damage in data
    try:
        json.loads(data)
    except json.JSONDecodeError as error:
        expected = f"line {error.lineno} column {error.colno}: {error.msg}"
    else:
        NotebookDocument.parse(data, "o.ipynb")
        return
    with pytest.raises(NotebookError, match="is not valid JSON") as caught:
        NotebookDocument.parse(data, "o.ipynb")
    assert expected in str(caught.value)
    assert "the file was not changed" in str(caught.value)


def test_unterminated_string_at_the_end_is_refused() -> None:
    with pytest.raises(NotebookError, match="Unterminated string starting at"):
        NotebookDocument.parse(b'{"cells": [{"source": "abc', "u.ipynb")


@pytest.mark.parametrize(
    "data",
    [
        b'{\n "cells": [],\n "nbformat": 4 4\n}',
        b'{"cells": [{"a": 1} {}]}',
        b'{"cells": [{"a" 1}]}',
        b'{"cells": [{"a": 1,}]}',
        b'{"cells": [1 2]}',
        b'{"cells": [], }',
        b'{\r\n\t"cells":\r\n[\r\n{"source": "x\\y"}]}',
        b"{",
        b'{"cells": [',
    ],
)
def test_error_position_and_message_are_those_of_json(data: bytes) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(data)
    error = expected.value
    with pytest.raises(NotebookError) as caught:
        NotebookDocument.parse(data, "p.ipynb")
    assert f"(line {error.lineno} column {error.colno}: {error.msg})" in str(caught.value)


def test_extra_data_after_the_notebook_is_refused() -> None:
    with pytest.raises(NotebookError, match="Extra data"):
        NotebookDocument.parse(canonical(_notebook()) + b"{}", "e.ipynb")


def test_two_cells_arrays_are_refused_one_overridden_by_a_non_array_is_not_a_notebook() -> None:
    data = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "cells": []}'
    with pytest.raises(NotebookError, match="two top-level 'cells' arrays"):
        NotebookDocument.parse(data, "two.ipynb")
    data = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "cells": 3}'
    with pytest.raises(NotebookError, match="has no 'cells' list"):
        NotebookDocument.parse(data, "three.ipynb")


def test_repeated_key_in_a_cell_uses_the_last_value_like_json() -> None:
    data = (
        b'{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], '
        b'"source": "old", "source": "x = 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}'
    )
    document = NotebookDocument.parse(data, "r.ipynb")
    assert document.cells[0].source == "x = 1"
    result = document.apply_view(document.view.replace("x = 1", "x = 2"))
    assert result == data.replace(b'"x = 1"', b'"x = 2"')
    assert json.loads(result)["cells"][0]["source"] == "x = 2"


def test_keys_with_escapes_and_non_ascii_text_are_decoded_from_utf8() -> None:
    notebook = _notebook(markdown_cell("Grüße → ✓", metadata={"t\u00e9st": "é"}))
    notebook["metadata"]['na"me'] = "日本"
    for data in (canonical(notebook), json.dumps(notebook).encode(), json.dumps(notebook, indent=1).encode()):
        _check_scan_matches_json(data)
        document = NotebookDocument.parse(data, "u.ipynb")
        assert document.cells[0].source == "Grüße → ✓"
        assert document.top["metadata"]['na"me'] == "日本"


def test_utf8_is_checked_in_chunks_across_boundaries() -> None:
    # multi-byte characters straddle every 1 MiB chunk boundary
    text = "é✓日" * 400_000
    data = canonical(_notebook(markdown_cell(text)))
    assert len(data) > 3 * (1 << 20)
    assert check_utf8(data, 0) is False
    assert NotebookDocument.parse(data, "big.ipynb").cells[0].source == text
    broken = data[: 2 * (1 << 20) + 1] + b"\xff" + data[2 * (1 << 20) + 2 :]
    with pytest.raises(NotebookError, match=f"byte {2 * (1 << 20) + 1} is not valid UTF-8"):
        NotebookDocument.parse(broken, "big.ipynb")
    assert check_utf8(b"plain", 0) is True


def test_scan_of_something_that_is_not_an_object() -> None:
    scanned = scan_notebook(b" [1, 2] ")
    assert not scanned.is_object and scanned.layout is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"a": "\\u00e9"}', True),
        (b'{"a": "\\u0041"}', False),
        (b'{"a": "\\\\u00e9"}', False),  # an escaped backslash, then the letters u00e9
        (b'{"a": "\\\\\\u00e9"}', True),
        (b'{"a": "\\u00"}', False),
        ('{"a": "é"}'.encode(), False),
    ],
)
def test_ascii_escape_detection(data: bytes, expected: bool) -> None:
    assert _uses_ascii_escapes(data) is expected


# -- the two validation paths ------------------------------------------------------------------


_NO_NBFORMAT = """
import json, sys
from nbedit.engine.notebook import NotebookDocument
data = sys.stdin.buffer.read()
document = NotebookDocument.parse(data, "n.ipynb")
view = document.view
edits = [
    view.replace("x = 1", "x = 10"),
    view.replace("x = 1", "x = 11"),
    view[: document.marker_starts[1]] + view[document.spans[1].end :],
]
results = [document.edit(edits[0]).data, document.edit(edits[1], clear_outputs=True).data, document.edit(edits[2]).data]
print(json.dumps([[json.loads(r)["cells"] for r in results],
                  sorted(n for n in ("nbformat", "jsonschema", "fastjsonschema") if n in sys.modules)]))
"""


def test_source_edits_deletions_and_cleared_outputs_do_not_import_nbformat() -> None:
    notebook = _notebook(
        code_cell("x = 1", outputs=[{"output_type": "stream", "name": "stdout", "text": ["1\n"]}], count=1),
        markdown_cell("gone"),
    )
    finished = subprocess.run(
        [sys.executable, "-c", _NO_NBFORMAT],
        input=canonical(notebook),
        capture_output=True,
        check=True,
        cwd=REPOSITORY,
    )
    results, imported = json.loads(finished.stdout.decode().strip().splitlines()[-1])
    assert imported == []
    edited, cleared, deleted = results
    assert edited == [set_source(notebook, 0, "x = 10")["cells"][0], notebook["cells"][1]]
    cleared_cell = dict(set_source(notebook, 0, "x = 11")["cells"][0], outputs=[], execution_count=None)
    assert cleared == [cleared_cell, notebook["cells"][1]]
    assert deleted == [notebook["cells"][0]]


def test_deleted_cell_is_gone_and_the_rest_is_byte_identical() -> None:
    notebook = _notebook(code_cell("a = 1"), markdown_cell("gone"), code_cell("b = 2"))
    data = canonical(notebook)
    document = NotebookDocument.parse(data, "d.ipynb")
    start = document.marker_starts[1]
    edit = document.edit(document.view[:start] + document.view[document.spans[1].end :])
    assert edit.changes == ("cell 1 (id cell1, markdown): deleted",)
    expected = dict(notebook, cells=[notebook["cells"][0], notebook["cells"][2]])
    assert edit.data == canonical(expected)


def test_structural_edit_is_still_validated_by_nbformat() -> None:
    document = NotebookDocument.parse(canonical(_notebook(code_cell("x = 1"))), "s.ipynb")
    edit = document.edit(document.view + render_cell(None, "raw", "new raw"))
    assert json.loads(edit.data)["cells"][1]["source"] == ["new raw"]
    assert "nbformat" in sys.modules


def test_missing_structure_is_noted_on_source_edits_and_does_not_block_them() -> None:
    cell = code_cell("x = 1")
    del cell["execution_count"]
    notebook = _notebook(cell, markdown_cell("m"), minor=4)
    del notebook["cells"][1]["metadata"]
    data = json.dumps(notebook, indent=1).encode()
    document = NotebookDocument.parse(data, "m.ipynb")
    assert document.problems == (
        "code cell 0 has no valid 'execution_count' (a number or null)",
        "cell 1 has no 'metadata' object",
    )
    edit = document.edit(document.view.replace("\nm\n", "\nchanged\n"))
    assert json.loads(edit.data)["cells"][1]["source"] == ["changed"]
    assert edit.data == data.replace(b'"m"', b'"changed"')
    (note,) = edit.notes
    assert note.startswith("the notebook was already invalid before this edit (code cell 0 has no valid")
    assert "cell 1 has no 'metadata' object" in note


def test_valid_notebook_has_no_problems_and_a_source_edit_has_no_notes() -> None:
    notebook = build_notebook(5)
    document = NotebookDocument.parse(canonical(notebook), "v.ipynb")
    assert document.problems == ()
    rows = document.cells
    source = rows[1].source + "\n# more"
    edit = document.edit(document.view.replace(rows[1].source + "\n", source + "\n", 1))
    assert edit.notes == ()
    assert edit.data == canonical(set_source(notebook, 1, source))


# -- errors exactly where json puts them -------------------------------------------------------

NOTEBOOKS = REPOSITORY / "tests" / "data" / "notebooks"


def _json_error(data: bytes) -> str | None:
    """``(line L column C: message)`` as json says it, None when json accepts the bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"byte {error.start} is not valid UTF-8"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return f"(line {error.lineno} column {error.colno}: {error.msg})"
    return None


def _check_refused_like_json(data: bytes) -> None:
    expected = _json_error(data)
    try:
        NotebookDocument.parse(data, "d.ipynb")
    except NotebookError as error:
        if expected is None:
            assert "is not valid JSON" not in str(error)  # JSON, but not a notebook
        else:
            assert expected in str(error), (expected, str(error))
    else:
        assert expected is None


@pytest.mark.parametrize("name", ["nbclient-Error.ipynb", "nbconvert-rawtest.ipynb"])
def test_every_cut_of_a_real_notebook_is_refused_with_jsons_message_and_position(name: str) -> None:
    data = (NOTEBOOKS / name).read_bytes()
    for end in range(len(data)):
        _check_refused_like_json(data[:end])


@pytest.mark.parametrize("name", ["nbclient-Error.ipynb", "nbformat-test4custom.ipynb"])
def test_every_damaged_byte_of_a_real_notebook_is_refused_like_json(name: str) -> None:
    data = (NOTEBOOKS / name).read_bytes()
    for position in range(len(data)):
        for byte in b'}],"\x00x':
            if data[position] != byte:
                _check_refused_like_json(data[:position] + bytes([byte]) + data[position + 1 :])
        _check_refused_like_json(data[:position] + data[position + 1 :])


def _big_notebook(cells: int = 160) -> bytes:
    """About 4 MB: each code cell prints 600 lines, so the scan crosses many of its 1 MiB windows."""
    printed = [f"step {step:4d} loss 0.{step:06d}\n" for step in range(600)]
    notebook = _notebook(
        *[
            code_cell(
                f"x_{number} = {number}",
                outputs=[{"output_type": "stream", "name": "stdout", "text": printed}],
                count=number,
            )
            for number in range(cells)
        ]
    )
    return canonical(notebook)


def test_damage_anywhere_in_a_big_notebook_is_refused_with_jsons_message_and_the_file_is_untouched(
    tmp_path: Path,
) -> None:
    from nbedit.workspace import Workspace

    data = _big_notebook()
    assert len(data) > 3 * (1 << 20)
    window = 1 << 20
    places = [
        position
        for boundary in (window, 2 * window, 3 * window)
        for position in range(boundary - 3, boundary + 3)
    ] + [len(data) // 7, len(data) // 2, len(data) - 40, len(data) - 3]
    workspace = Workspace(tmp_path, history=False)
    path = tmp_path / "big.ipynb"
    for position in places:
        for damage in (b"\x00", b"}", b'"', b","):
            if data[position : position + 1] == damage:
                continue
            damaged = data[:position] + damage + data[position + 1 :]
            expected = _json_error(damaged)
            if expected is None:
                continue
            path.write_bytes(damaged)
            with pytest.raises(NotebookError) as caught:
                workspace.plan_edit("big.ipynb", "x_3 = 3", "x_3 = 4")
            assert expected in str(caught.value)
            assert "the file was not changed" in str(caught.value)
            assert path.read_bytes() == damaged
    path.write_bytes(data)
    workspace.apply(workspace.plan_edit("big.ipynb", "x_3 = 3", "x_3 = 4"))
    assert path.read_bytes() == data.replace(b'"x_3 = 3"', b'"x_3 = 4"')


def test_scan_of_a_big_notebook_reads_what_json_loads_reads() -> None:
    _check_scan_matches_json(_big_notebook(60))


@pytest.mark.parametrize("spacing", [b"", b" ", b"\n", b" \r\n\t "])
def test_cells_array_followed_by_whitespace_ends_at_its_bracket(spacing: bytes) -> None:
    cell = b'{"cell_type": "raw", "metadata": {}, "source": "r"}'
    data = (
        b'{"metadata": {}, "nbformat": 4, "nbformat_minor": 4, "cells": ['
        + cell
        + b", "
        + cell
        + b"]"
        + spacing
        + b"}"
    )
    _check_scan_matches_json(data)
    _check_scan_matches_json(data.replace(b"[" + cell + b", " + cell + b"]", b"[ ]"))
