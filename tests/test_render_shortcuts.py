"""The review's fast paths draw exactly what the general ones draw.

Building the review of a large notebook used to draw every edited cell twice (its cell
entry, and the notebook's whole line view only to count its +/- lines), through row objects
kept alive in a cache. The shortcuts that replaced that are checked here against the
general code they stand for, on generated input:

* a cell's page rows (``cells._diff_rows``) against ``rows._change_rows`` converted and trimmed;
* the header's counts (``rows.view_counts``) against the drawn ``file_view``;
* the word-highlight bar (``highlight._unlike``) against ``SequenceMatcher.ratio``;
* plain cell markers (``cells._marker``) against the engine's ``_parse_marker``.
"""

from __future__ import annotations

import difflib
import tempfile
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import nbformat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbedit import NbeditError, Workspace
from nbedit.engine.notebook.view import _parse_marker
from nbedit.render.cells import CONTEXT_LINES, _diff_rows, _marker, _trimmed
from nbedit.render.highlight import _unlike
from nbedit.render.rows import Row, _change_rows, file_view, view_counts
from nbedit.render.summary import summarize

LINE = st.sampled_from(
    [
        "x = 1",
        "x = 2",
        "total = sum(items)",
        "total = sum(values)",
        "",
        "    return total",
        "\treturn total",
        "# note",
        "word " * 90,  # past the word-alignment length
        "word " * 91,
    ]
)
ENDING = st.sampled_from(["\n", "\r\n"])
SOURCE = st.lists(st.tuples(LINE, ENDING), max_size=30).map(
    lambda lines: "".join(text + ending for text, ending in lines)[:-1] if lines else ""
)


def _reference(old: str, new: str) -> list[list[Any]]:
    """What a cell's rows were before the shortcut: every row drawn, converted, then trimmed."""

    def lines(source: str) -> list[str]:
        return (source + "\n").splitlines(True) if source else []

    def text(row: Row) -> str | list[list[Any]]:
        if len(row.segments) == 1 and not row.segments[0].changed:
            return row.segments[0].text
        return [[segment.text, 1 if segment.changed else 0] for segment in row.segments]

    kinds = {"context": "c", "removed": "r", "added": "a"}
    rows = _change_rows(lines(old), lines(new), 1, 1)
    drawn = [[kinds[row.kind], row.old_line, row.new_line, text(row)] for row in rows]
    return _trimmed(drawn, CONTEXT_LINES)


@settings(max_examples=300, deadline=None)
@given(SOURCE, SOURCE)
def test_cell_rows_are_the_general_rows_trimmed(old: str, new: str) -> None:
    assert _diff_rows(old, new) == _reference(old, new)


@settings(max_examples=300, deadline=None)
@given(SOURCE, st.data())
def test_cell_rows_of_small_edits(old: str, data: st.DataObject) -> None:
    lines = old.split("\n")
    index = data.draw(st.integers(0, max(0, len(lines) - 1)))
    lines[index : index + 1] = data.draw(st.lists(LINE, max_size=3))
    new = "\n".join(lines)
    assert _diff_rows(old, new) == _reference(old, new)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab c=\t1é", max_size=40), st.text(alphabet="ab c=\t1é", max_size=40))
def test_the_highlight_bar_is_the_ratio(old: str, new: str) -> None:
    if old or new:
        assert _unlike(old, new) == (SequenceMatcher(None, old, new, autojunk=False).ratio() < 0.4)


@given(
    st.one_of(st.integers(0, 10**6).map(str), st.just("new")),
    st.sampled_from(["code", "markdown", "raw"]),
    st.one_of(st.none(), st.text(alphabet="aZ09_-", min_size=1, max_size=12)),
    st.booleans(),
    st.sampled_from(["", "\n", "\r\n"]),
)
def test_plain_markers_read_as_the_engine_reads_them(
    where: str, cell_type: str, cell_id: str | None, read_only: bool, ending: str
) -> None:
    line = f"# %% nbedit cell {where} [{cell_type}]"
    line += f" id={cell_id}" if cell_id else ""
    line += " read-only" if read_only else ""
    line += ending
    assert _marker(line) == _parse_marker(line, 0)


def test_other_markers_are_left_to_the_engine() -> None:
    for line in ("# %% nbedit cell 1 [sql] id=q\n", "# %% nbedit cell 1  [code]\n", "# %% nbedit cell 2\n"):
        assert _marker(line) == _parse_marker(line, 0)
    try:
        _marker("# %% nbedit cell 1 [code] ???\n")
    except NbeditError as error:
        assert "cannot read" in str(error)
    else:
        raise AssertionError("a marker the engine refuses is refused here too")


def _notebook_plan(folder: Path, sources: list[str], edit: dict[int, str]):  # type: ignore[no-untyped-def]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell{number}"
    nbformat.write(notebook, str(folder / "n.ipynb"))
    workspace = Workspace(folder, history=False)
    view = workspace.view("n.ipynb")
    edited = view
    for number, source in edit.items():
        edited = edited.replace(sources[number], source, 1)
    diff = "".join(
        difflib.unified_diff(view.splitlines(True), edited.splitlines(True), "a/n.ipynb", "b/n.ipynb")
    )
    return workspace.plan_patch(diff)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SOURCE.filter(lambda source: bool(source.strip())), min_size=1, max_size=6), st.data())
def test_header_counts_are_the_drawn_view_counts(sources: list[str], data: st.DataObject) -> None:
    sources = [
        source.replace("\r\n", "\n") + f"\ncell_{number} = {number}" for number, source in enumerate(sources)
    ]
    chosen = data.draw(st.lists(st.integers(0, len(sources) - 1), min_size=1, max_size=3, unique=True))
    edit = {number: sources[number].replace("\n", "\nadded = 0\n", 1) + "\nmore = 1" for number in chosen}
    with tempfile.TemporaryDirectory() as folder:
        try:
            plan = _notebook_plan(Path(folder), sources, edit)
        except NbeditError:
            return  # a change the engine refuses is not drawn
    file_plan = plan.files[0]
    view = file_view(file_plan)
    assert view_counts(file_plan) == (view.added, view.removed)
    header = summarize(plan).files[0]
    assert (header.added, header.removed) == (view.added, view.removed)
