"""Property tests: random cell edits land exactly, directly and through a unified diff.

A random edit script (change sources, insert, delete, retype, in any of the corpus
formats and nbformat 4.4 or 4.5) is applied two ways: the edited cell view is read
back directly, and ``difflib.unified_diff`` of the old and new views is applied as a
patch through the workspace. Both must give exactly the bytes the format's
serialiser writes for the expected notebook.
"""

from __future__ import annotations

import copy
import difflib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_corpus import FORMATS, build_notebook, code_cell, markdown_cell, raw_cell

import nbedit
from nbedit.engine.notebook import NotebookDocument, render_cell

_BUILDERS = {"code": code_cell, "markdown": markdown_cell, "raw": raw_cell}
_PLAIN = "abcxyz XYZ_=()'\".,:é日✓"
_LINE_STARTS = "abcxyzé日#"
_SPECIAL_LINES = ["# %% nbedit cell 1 [code] id=c01-co", "\\# %% nbedit", "# %% other", "", "    indented"]


@st.composite
def _source(draw: st.DrawFn, special_whitespace: bool) -> str:
    plain_line = st.builds(
        lambda first, rest: first + rest,
        st.sampled_from(_LINE_STARTS),
        st.text(alphabet=_PLAIN + ("\t\x0c\r\u2028" if special_whitespace else "\t"), max_size=12),
    )
    lines = draw(st.lists(st.one_of(plain_line, st.sampled_from(_SPECIAL_LINES)), max_size=4))
    text = "\n".join(lines)
    if draw(st.booleans()) and text:
        text += "\n"
    return text


@st.composite
def _script(draw: st.DrawFn, special_whitespace: bool) -> tuple[str, int, list[tuple[str, Any]]]:
    """(format, minor, rows); a row is ("keep"|"edit"|"retype", (index, type, source)) or ("new", (type, source))."""
    format_name = draw(st.sampled_from(sorted(FORMATS)))
    minor = draw(st.sampled_from([4, 5]))
    notebook = build_notebook(minor)
    rows: list[tuple[str, Any]] = []
    for index, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        action = draw(st.sampled_from(["keep", "keep", "edit", "delete", "retype"]))
        if action == "retype" and "attachments" not in cell:
            new_type = draw(st.sampled_from([kind for kind in _BUILDERS if kind != cell["cell_type"]]))
            rows.append(
                ("retype", (index, new_type, draw(st.one_of(st.just(source), _source(special_whitespace)))))
            )
        elif action == "edit":
            rows.append(("edit", (index, cell["cell_type"], draw(_source(special_whitespace)))))
        elif action != "delete":
            rows.append(("keep", (index, cell["cell_type"], source)))
    for _ in range(draw(st.integers(0, 2))):
        position = draw(st.integers(0, len(rows)))
        rows.insert(
            position, ("new", (draw(st.sampled_from(sorted(_BUILDERS))), draw(_source(special_whitespace))))
        )
    return format_name, minor, rows


def _expected(notebook: dict[str, Any], rows: list[tuple[str, Any]]) -> dict[str, Any]:
    cells = []
    new_count = 0
    for action, payload in rows:
        if action == "new":
            cell_type, source = payload
            cell = _BUILDERS[cell_type](source)
            if notebook["nbformat_minor"] >= 5:
                cell["id"] = f"new-{new_count}"
            new_count += 1
        else:
            index, cell_type, source = payload
            original = notebook["cells"][index]
            if action == "keep":
                cell = copy.deepcopy(original)
            elif action == "edit":
                cell = copy.deepcopy(original)
                cell["source"] = source.splitlines(keepends=True)
            else:
                cell = _BUILDERS[cell_type](source, metadata=copy.deepcopy(original["metadata"]))
                if "id" in original:
                    cell["id"] = original["id"]
        cells.append(cell)
    return dict(copy.deepcopy(notebook), cells=cells)


def _view_after(document: NotebookDocument, rows: list[tuple[str, Any]]) -> str:
    parts = []
    new_count = 0
    for action, payload in rows:
        if action == "new":
            cell_type, source = payload
            cell_id = f"new-{new_count}" if document.nbformat_minor >= 5 else None
            parts.append(render_cell(None, cell_type, source, cell_id))
            new_count += 1
        else:
            index, cell_type, source = payload
            parts.append(render_cell(index, cell_type, source, document.cells[index].id))
    return "".join(parts)


@settings(max_examples=150, deadline=None)
@given(_script(special_whitespace=True))
def test_reading_back_an_edited_view_gives_the_expected_notebook(
    script: tuple[str, int, list[tuple[str, Any]]],
) -> None:
    format_name, minor, rows = script
    notebook = build_notebook(minor)
    serialise = FORMATS[format_name]
    document = NotebookDocument.parse(serialise(notebook), "nb.ipynb")
    result = document.apply_view(_view_after(document, rows))
    assert result == serialise(_expected(notebook, rows))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_script(special_whitespace=False))
def test_unified_diff_of_the_views_reproduces_the_expected_notebook(
    script: tuple[str, int, list[tuple[str, Any]]],
) -> None:
    format_name, minor, rows = script
    notebook = build_notebook(minor)
    serialise = FORMATS[format_name]
    data = serialise(notebook)
    document = NotebookDocument.parse(data, "nb.ipynb")
    view_after = _view_after(document, rows)
    diff = "".join(
        difflib.unified_diff(
            document.view.splitlines(True), view_after.splitlines(True), "a/nb.ipynb", "b/nb.ipynb"
        )
    )
    expected = serialise(_expected(notebook, rows))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "nb.ipynb"
        path.write_bytes(data)
        workspace = nbedit.Workspace(folder, history=False, exact=True)
        if diff:
            workspace.apply(workspace.plan_patch(diff))
        assert path.read_bytes() == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_script(special_whitespace=False), st.sampled_from([3, 1, 0]))
def test_unified_diff_of_the_raw_json_reproduces_the_expected_notebook(
    script: tuple[str, int, list[tuple[str, Any]]], context: int
) -> None:
    """The same edit scripts, written as a diff of the .ipynb text (issue 9 item 4): applied as JSON."""
    from nbedit.engine.whole_diff import text_diff

    format_name, minor, rows = script
    notebook = build_notebook(minor)
    serialise = FORMATS[format_name]
    data = serialise(notebook)
    expected = serialise(_expected(notebook, rows))
    before, after = data.decode("utf-8"), expected.decode("utf-8")
    if before.endswith("\n") and after.endswith("\n"):
        lines = difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), "a/nb.ipynb", "b/nb.ipynb", n=context
        )
        diff = "".join(lines)
    else:
        diff = text_diff(before, after, "nb.ipynb")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "nb.ipynb"
        path.write_bytes(data)
        workspace = nbedit.Workspace(folder, history=False, exact=True)
        if diff:
            plan = workspace.plan_patch(diff)
            assert plan.files[0].notes[0].startswith("applied to the notebook's JSON")
            workspace.apply(plan)
        assert path.read_bytes() == expected


@settings(max_examples=200, deadline=None)
@given(
    cells=st.lists(
        st.tuples(
            st.sampled_from(["code", "markdown", "raw", "heading", "future cell", "a]b", ""]),
            st.lists(st.sampled_from(["a", "\n", "\\", "# %% nbedit", " ", "é"]), max_size=8).map("".join),
            st.none() | st.sampled_from(["c0", "a-b_9"]),
        ),
        max_size=6,
    )
)
def test_the_view_is_each_cell_rendered_in_turn(cells: list[tuple[str, str, str | None]]) -> None:
    """``render_view``'s inline marker and label are ``render_cell``'s and ``cell_label``'s."""
    from nbedit.engine.notebook.view import cell_label, render_view

    view, spans, marker_starts = render_view(cells)
    assert view == "".join(render_cell(index, *cell) for index, cell in enumerate(cells))
    for index, ((cell_type, source, cell_id), span) in enumerate(zip(cells, spans, strict=True)):
        assert span.label == cell_label(index, cell_type, cell_id)
        assert view[marker_starts[index] : span.start] == render_cell(index, cell_type, "", cell_id)
        assert (
            view[span.start : span.end]
            == render_cell(index, cell_type, source, cell_id)[span.start - marker_starts[index] :]
        )
