"""History entries rendered as a rich table and an HTML table, from a real history store."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from nbedit import Workspace
from nbedit.render.history import history_rows, history_table, history_to_html


def _workspace_with_history(root: Path) -> Workspace:
    (root / "a.py").write_bytes("x = “q”\ny = 1\n".encode())
    (root / "<b>.txt").write_bytes(b"b\n")
    workspace = Workspace(root, session="test", origin="api")
    workspace.apply(workspace.plan_edit("a.py", "y = 1", "y = 2\nz = 3"), execution_count=7)
    workspace.apply(
        workspace.plan_patch('a.py\n<<<<<<< SEARCH\nx = "q"\n=======\nx = "r"\n>>>>>>> REPLACE\n')
    )
    workspace.apply(workspace.plan_edit("<b>.txt", "b", "c"))
    workspace.undo()
    return workspace


def test_rows_carry_what_the_table_shows(tmp_path: Path) -> None:
    entries = _workspace_with_history(tmp_path).history()
    rows = history_rows(entries)
    assert [row.origin for row in rows] == ["undo", "api", "api", "api"]
    oldest = rows[-1]
    assert (oldest.cell, oldest.files, oldest.added, oldest.removed) == ("In[7]", "a.py", 2, 1)
    assert rows[-2].flags == "unicode-punctuation"
    assert oldest.flags == ""
    assert rows[0].status.startswith("applied, undoes ")


def test_html_table_escapes_and_flags(tmp_path: Path) -> None:
    entries = _workspace_with_history(tmp_path).history()
    html = history_to_html(entries)
    assert html.startswith('<div class="nbedit-view"><style>')
    assert html.count("<tr>") == len(entries) + 1
    assert "&lt;b&gt;.txt" in html and "<b>.txt" not in html
    assert "⚠ unicode-punctuation" in html
    assert "In[7]" in html and entries[0].id in html


def test_rich_table_lists_every_entry(tmp_path: Path) -> None:
    entries = _workspace_with_history(tmp_path).history()
    console = Console(record=True, width=160, color_system=None)
    console.print(history_table(entries))
    text = console.export_text()
    for entry in entries:
        assert entry.id in text
    assert "<b>.txt" in text and "+2 -1" in text


def test_empty_history_says_so() -> None:
    assert "no edits recorded yet" in history_to_html([])


def test_rich_table_and_error_panel_never_read_paths_as_markup(tmp_path: Path) -> None:
    from nbedit.errors import NoMatch
    from nbedit.render.errors import error_panel

    (tmp_path / "app" / "[slug]").mkdir(parents=True)
    (tmp_path / "app" / "[slug]" / "page.tsx").write_bytes(b"export default 1\n")
    (tmp_path / "[").mkdir()
    (tmp_path / "[" / "]x[bold].txt").write_bytes(b"a\n")
    workspace = Workspace(tmp_path, session="markup")
    workspace.apply(workspace.plan_edit("app/[slug]/page.tsx", "1", "2"))
    workspace.apply(workspace.plan_edit("[/]x[bold].txt", "a", "b"))
    console = Console(record=True, width=200, color_system=None)
    console.print(history_table(workspace.history()))
    text = console.export_text()
    assert "app/[slug]/page.tsx" in text and "[/]x[bold].txt" in text
    try:
        workspace.plan_edit("[/]x[bold].txt", "zzz", "qqq")
    except NoMatch as error:
        console.print(error_panel(error))
    assert "NoMatch: [/]x[bold].txt" in console.export_text()
