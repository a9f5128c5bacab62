"""The review widget in a real JupyterLab: a click in the page changes (or does not change) the file.

Each case writes a notebook that loads the extension and runs ``%%edit`` in
review mode (no ``--yes``), opens it in headless Chromium, runs all cells and
acts on the rendered widget the way a person would. Assertions are on the bytes
on disk and on the history store, never only on what the page says.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("browser_support")  # it is also loaded as a plugin below

from browser_support import (  # noqa: E402
    ARTIFACTS,
    LabServer,
    cell_outputs_text,
    open_notebook,
    run_all_cells,
    set_theme,
    wait_kernel_idle,
    write_notebook,
)

pytest_plugins = ["browser_support"]  # the lab, browser and page fixtures

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

BEFORE = (
    "def greet(name):\n"
    '    return "hello " + name\n'
    "\n"
    "\n"
    "def farewell(name):\n"
    '    return "bye " + name  # café\n'
)
FIRST_BLOCK = """\
<<<<<<< SEARCH
    return "hello " + name
=======
    return f"hello, {name}!"
>>>>>>> REPLACE
"""
SECOND_BLOCK = """\
<<<<<<< SEARCH
    return "bye " + name  # café
=======
    return f"goodbye, {name}."  # café
>>>>>>> REPLACE
"""
BOTH_APPLIED = BEFORE.replace('"hello " + name', 'f"hello, {name}!"').replace(
    '"bye " + name', 'f"goodbye, {name}."'
)
ONLY_SECOND_APPLIED = BEFORE.replace('"bye " + name', 'f"goodbye, {name}."')
ENTRY_ID = re.compile(r"history entry (\S+?)[;)]")


def prepare(lab: LabServer, name: str, target_bytes: bytes) -> Path:
    """Write ``<name>.py`` with ``target_bytes`` and ``<name>.ipynb`` that reviews both blocks against it."""
    target = lab.root / f"{name}.py"
    target.write_bytes(target_bytes)
    write_notebook(
        lab.root / f"{name}.ipynb",
        [
            ("markdown", f"Review an edit of `{name}.py`."),
            ("code", "%load_ext nbedit"),
            ("code", f"%%edit {name}.py\n{FIRST_BLOCK}{SECOND_BLOCK}"),
        ],
    )
    return target


def rendered_widget(page: Any) -> Any:
    """The review widget once JupyterLab's widget manager has drawn it, buttons enabled."""
    widget = page.locator(".jp-OutputArea .nbedit-review")
    try:
        widget.wait_for(state="visible", timeout=30_000)
    except Exception as error:
        raise AssertionError(
            "no rendered .nbedit-review widget in the outputs; they show:\n" + cell_outputs_text(page)
        ) from error
    page.wait_for_function(
        "() => { const b = document.querySelector('.nbedit-review button.nbedit-apply');"
        " return b && !b.disabled; }"
    )
    return widget


def status_text(widget: Any, expected: str) -> str:
    status = widget.locator(".nbedit-status")
    status.filter(has_text=expected).wait_for(timeout=30_000)
    return str(status.inner_text())


def screenshot(page: Any, name: str) -> Path:
    """The output holding the widget: its padding frames the shot (the widget's own box is flush)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    output = page.locator(".jp-OutputArea-output").filter(has=page.locator(".nbedit-review"))
    output.screenshot(path=str(path), animations="disabled")
    return path


def history_entry(lab: LabServer, entry_id: str) -> Any:
    from nbedit.storage.history import HistoryStore

    with HistoryStore(lab.nbedit_home) as store:
        return store.entry(entry_id)


def history_entries(lab: LabServer) -> list[Any]:
    from nbedit.storage.history import HistoryStore

    if not lab.nbedit_home.exists():
        return []
    with HistoryStore(lab.nbedit_home) as store:
        return store.entries()


def test_apply_click_writes_the_file_and_records_history(lab: LabServer, page: Any) -> None:
    target = prepare(lab, "apply_case", BEFORE.encode())
    open_notebook(page, lab, "apply_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    assert "pending" in status_text(widget, "pending")
    assert target.read_bytes() == BEFORE.encode(), "review mode must not write before Apply"
    assert widget.locator(".nbedit-hunk-toggle input[type=checkbox]").count() == 2

    # screenshots for the README, pending state, both themes (the theme setting persists: restore it)
    widget.scroll_into_view_if_needed()
    # (copied by hand to docs/images/ after a look; a test run never writes into the repository)
    screenshot(page, "review-light.png")
    try:
        set_theme(page, "JupyterLab Dark")
        screenshot(page, "review-dark.png")
    finally:
        set_theme(page, "JupyterLab Light")

    widget.locator("button.nbedit-apply").click()
    text = status_text(widget, "applied")
    assert target.read_bytes() == BOTH_APPLIED.encode()
    found = ENTRY_ID.search(text)
    assert found, f"no history entry id in the status: {text!r}"
    entry = history_entry(lab, found.group(1))
    assert entry.status == "applied"
    assert entry.origin == "magic"
    assert [file.path for file in entry.files] == ["apply_case.py"]
    assert widget.locator("button.nbedit-apply").is_disabled()
    assert widget.locator("button.nbedit-reject").is_disabled()


def test_reject_click_leaves_the_file_byte_identical(lab: LabServer, page: Any) -> None:
    original = BEFORE.replace("\n", "\r\n").encode("utf-8")  # CRLF and non-ASCII: bytes must not move
    target = prepare(lab, "reject_case", original)
    entries_before = len(history_entries(lab))
    open_notebook(page, lab, "reject_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    widget.locator("button.nbedit-reject").click()
    assert "rejected" in status_text(widget, "rejected")
    assert widget.locator("button.nbedit-apply").is_disabled()
    assert target.read_bytes() == original
    assert len(history_entries(lab)) == entries_before
    # a disabled Apply cannot be clicked into writing after the decision
    widget.locator("button.nbedit-apply").click(force=True)
    page.wait_for_timeout(500)
    assert target.read_bytes() == original


def test_unticked_hunk_is_left_out(lab: LabServer, page: Any) -> None:
    original = BEFORE.replace("\n", "\r\n").encode("utf-8")
    target = prepare(lab, "toggle_case", original)
    open_notebook(page, lab, "toggle_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    toggles = widget.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert toggles.count() == 2
    toggles.nth(0).uncheck()
    widget.get_by_text("1 of 2 parts selected").wait_for()
    widget.locator("button.nbedit-apply").click()
    text = status_text(widget, "applied")
    expected = ONLY_SECOND_APPLIED.replace("\n", "\r\n").encode("utf-8")
    assert target.read_bytes() == expected
    found = ENTRY_ID.search(text)
    assert found, f"no history entry id in the status: {text!r}"
    assert history_entry(lab, found.group(1)).status == "applied"


# ------------------------------------------------------------------ layout, views, notebooks, keyboard

LONG_BEFORE = "".join(f"line_{number} = {number}\n" for number in range(1, 61))
LONG_EDIT = (
    "<<<<<<< SEARCH\nline_5 = 5\n=======\nline_5 = 'five'\n>>>>>>> REPLACE\n"
    "<<<<<<< SEARCH\nline_50 = 50\n=======\nline_50 = 'fifty'\n>>>>>>> REPLACE\n"
)


def prepare_long(lab: LabServer, name: str) -> Path:
    target = lab.root / f"{name}.py"
    target.write_text(LONG_BEFORE)
    write_notebook(
        lab.root / f"{name}.ipynb",
        [("code", "%load_ext nbedit"), ("code", f"%%edit {name}.py\n{LONG_EDIT}")],
    )
    return target


def test_unchanged_runs_expand_and_files_collapse(lab: LabServer, page: Any) -> None:
    target = prepare_long(lab, "gap_case")
    open_notebook(page, lab, "gap_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    gap = widget.locator("button.nb-expand").filter(has_text="unchanged lines")
    assert gap.count() == 2  # the run between the hunks and the file's tail, each shown once
    assert widget.locator("td.t", has_text="line_25 = 25").count() == 0
    between = widget.locator("button.nb-expand", has_text="⋯ 38 unchanged lines")
    between.click()
    widget.locator("td.t", has_text="line_25 = 25").wait_for()
    rows = widget.locator("tr.c td.t").all_inner_texts()
    expected = [f"line_{n} = {n}" for n in range(1, 54) if n not in (5, 50)]  # 1-8, the 38 shown, 47-53
    assert [text for text in rows if text.startswith("line_")] == expected
    assert widget.locator("button.nb-expand", has_text="⋯ 38 unchanged lines").count() == 0
    # the file's header collapses and expands its diff
    collapse = widget.locator("button.nb-collapse")
    assert collapse.get_attribute("aria-expanded") == "true"
    collapse.click()
    widget.locator(".nb-file.nb-collapsed").wait_for()
    assert widget.locator("table.nb-diff").count() == 0
    assert widget.locator("button.nb-collapse").get_attribute("aria-expanded") == "false"
    widget.locator("button.nb-collapse").click()
    widget.locator("table.nb-diff").wait_for()
    assert target.read_text() == LONG_BEFORE  # looking never writes


def test_unified_and_side_by_side_views(lab: LabServer, page: Any) -> None:
    prepare(lab, "split_case", BEFORE.encode())
    open_notebook(page, lab, "split_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    assert widget.locator("table.nb-diff.nb-split").count() == 0
    assert widget.locator("button[data-view=unified]").get_attribute("aria-pressed") == "true"
    widget.get_by_role("button", name="Side by side").click()
    widget.locator("table.nb-split").wait_for()
    # a changed line's old and new text sit on one row, each with its word highlight and marker
    paired = widget.locator("table.nb-split tr.s").filter(has_text="goodbye")
    assert paired.count() == 1
    cells = paired.locator("td").all_inner_texts()
    assert cells[0] == "6" and cells[1] == "-" and '"bye "' in cells[2]
    assert cells[3] == "6" and cells[4] == "+" and "goodbye" in cells[5]
    assert paired.locator("td.r .w").count() >= 1 and paired.locator("td.a .w").count() >= 1
    assert widget.locator("button[data-view=split]").get_attribute("aria-pressed") == "true"
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(page, "review-split-light.png")
    widget.get_by_role("button", name="Unified").click()
    widget.locator("table.nb-diff:not(.nb-split)").wait_for()
    assert widget.locator("tr.r").filter(has_text='"bye "').count() == 1


def test_keyboard_only_apply(lab: LabServer, page: Any) -> None:
    target = prepare(lab, "keyboard_case", BEFORE.encode())
    open_notebook(page, lab, "keyboard_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    # focus starts on the widget's first control; from there only keys are used
    widget.locator("button[data-view=unified]").focus()
    focused: list[str] = []
    for _ in range(12):
        page.keyboard.press("Tab")
        label = page.evaluate(
            "() => { const e = document.activeElement; return (e.getAttribute('aria-label') || e.textContent || '').trim(); }"
        )
        focused.append(label)
        if label.startswith("include hunk 1"):
            page.keyboard.press("Space")  # leave the first hunk out
        if label.startswith("Apply"):
            break
    assert any(label.startswith("include hunk 1") for label in focused), focused
    assert any(label.startswith("collapse") for label in focused), focused
    assert focused[-1].startswith("Apply"), focused
    widget.get_by_text("1 of 2 parts selected").wait_for()
    page.keyboard.press("Enter")
    status_text(widget, "applied")
    assert target.read_bytes() == ONLY_SECOND_APPLIED.encode()


def test_a_notebook_plan_is_drawn_as_cells(lab: LabServer, page: Any) -> None:
    import difflib

    import nbformat

    from nbedit.workspace import Workspace

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Sales report")]
    notebook.cells += [nbformat.v4.new_code_cell(f"step_{index} = prepare({index})") for index in range(6)]
    notebook.cells.append(nbformat.v4.new_code_cell("total = load()\nprint(total)"))
    target = lab.root / "sales.ipynb"
    nbformat.write(notebook, str(target))
    original = target.read_bytes()
    view = Workspace(lab.root, history=False).view("sales.ipynb")
    new_view = view.replace(
        "step_1 = prepare(1)\n", "step_1 = prepare(1)\n# %% nbedit cell new [markdown]\nStep one is done.\n"
    ).replace("total = load()", "total = load(cache=True)")
    diff = "".join(
        difflib.unified_diff(
            view.splitlines(True), new_view.splitlines(True), "a/sales.ipynb", "b/sales.ipynb"
        )
    )
    write_notebook(
        lab.root / "sales_review.ipynb", [("code", "%load_ext nbedit"), ("code", f"%%patch\n{diff}")]
    )
    open_notebook(page, lab, "sales_review.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    headers = widget.locator("tr.nb-cellhead").all_inner_texts()
    assert any("new cell · markdown" in text and "inserted" in text for text in headers), headers
    edited = widget.locator("tbody.nb-cell-edited")
    assert edited.count() == 1
    head = edited.locator("tr.nb-cellhead").inner_text()
    assert "cell 7 · code · id" in head and "edited" in head and "outputs kept" in head, head
    assert "exact" not in head  # the file's header says "all exact" once
    # line numbers count lines of the cell: its first line is 1 on both sides
    assert edited.locator("tr.r td.n").first.inner_text() == "1"
    assert edited.locator("tr.a td.n").nth(1).inner_text() == "1"
    inserted = widget.locator("tbody.nb-cell-inserted")
    assert inserted.locator("tr.a td.t").all_inner_texts() == ["Step one is done."]
    # every shown line sits under its own cell's header: no line rows outside a cell box
    assert widget.locator("table.nb-cells > tbody:not(.nb-cell):not(.nb-same-run) tr").count() == 0
    assert widget.locator(".nb-file-head .nb-badge", has_text="notebook").count() == 1
    assert widget.locator(".nb-file-head .nb-badge", has_text="inserts 1 cell").count() == 1
    assert widget.locator(".nb-note").count() == 0  # badges, not note lines
    # unchanged cells: a run is one row; opened, one header per cell; a header opens its lines
    run = widget.locator("button.nb-cells-run")
    assert run.count() >= 1
    widget.scroll_into_view_if_needed()
    screenshot(page, "review-notebook-light.png")
    run.first.click()
    opener = widget.locator("button.nb-cell-open").first
    opener.wait_for()
    first_cell = widget.locator("tbody.nb-cell-same").first
    assert "unchanged · 1 line" in first_cell.inner_text()
    opener.click()
    first_cell.locator("td.t", has_text="# Sales report").wait_for()
    assert first_cell.locator("tr.c td.n").first.inner_text() == "1"
    screenshot(page, "review-notebook-opened-light.png")
    try:
        set_theme(page, "JupyterLab Dark")
        screenshot(page, "review-notebook-dark.png")
    finally:
        set_theme(page, "JupyterLab Light")
    assert target.read_bytes() == original  # drawing the review wrote nothing
    widget.locator("button.nbedit-apply").click()
    status_text(widget, "applied")
    cells = nbformat.read(str(target), as_version=4).cells
    assert [cell.cell_type for cell in cells][:4] == ["markdown", "code", "code", "markdown"]
    assert (
        cells[3].source == "Step one is done."
        and cells[-1].source == "total = load(cache=True)\nprint(total)"
    )


def test_history_table_sorts_filters_and_undoes(lab: LabServer, page: Any) -> None:
    from nbedit.workspace import Workspace

    alpha, beta = lab.root / "alpha.py", lab.root / "beta.py"
    alpha.write_text("a = 1\n")
    beta.write_text("b = 1\n")
    other = Workspace(
        lab.root, session="colleague", home=lab.nbedit_home
    )  # another session's entry, shown with "All sessions"
    (lab.root / "gamma.py").write_text("c = 1\n")
    other.apply(other.plan_edit("gamma.py", "c = 1", "c = 2"))
    edit = "%%edit {path} --yes\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
    write_notebook(
        lab.root / "history_case.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", edit.format(path="alpha.py", old="a = 1", new="a = 2")),
            ("code", edit.format(path="beta.py", old="b = 1", new="b = 2")),
            ("code", edit.format(path="alpha.py", old="a = 2", new="a = 3")),
            ("code", "%nbedit history"),
        ],
    )
    open_notebook(page, lab, "history_case.ipynb")
    run_all_cells(page)
    table = page.locator(".jp-OutputArea .nbedit-history-table")
    table.wait_for(state="visible", timeout=30_000)
    entries = table.locator("tr.nb-entry")
    assert entries.count() == 3

    def files_column() -> list[str]:
        return [text.strip() for text in table.locator("tr.nb-entry td:nth-child(4)").all_inner_texts()]

    assert files_column() == ["alpha.py", "beta.py", "alpha.py"]  # newest first
    newest = entries.nth(0).get_attribute("data-id")
    oldest = entries.nth(2).get_attribute("data-id")
    table.locator("button.nb-sort").click()
    assert entries.nth(0).get_attribute("data-id") == oldest
    assert table.locator("th[aria-sort=ascending]").count() == 1
    table.locator("button.nb-sort").click()
    assert entries.nth(0).get_attribute("data-id") == newest

    table.locator("select.nb-filter-file").select_option("beta.py")
    assert files_column() == ["beta.py"]
    table.locator("select.nb-filter-file").select_option("")
    table.locator("button.nbedit-history-all").click()
    table.locator("tr.nb-entry", has_text="gamma.py").wait_for()
    assert entries.count() >= 4  # (other tests' kernels wrote to the same history)
    table.locator("select.nb-filter-session").select_option("colleague")
    assert files_column() == ["gamma.py"]
    table.locator("select.nb-filter-session").select_option("")
    table.locator("button.nbedit-history-all").click()
    table.locator("tr.nb-entry", has_text="gamma.py").wait_for(state="detached")

    output = page.locator(".jp-OutputArea-output").filter(has=page.locator(".nbedit-history-table"))
    output.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    output.screenshot(path=str(ARTIFACTS / "history-light.png"), animations="disabled")
    try:
        set_theme(page, "JupyterLab Dark")
        output.screenshot(path=str(ARTIFACTS / "history-dark.png"), animations="disabled")
    finally:
        set_theme(page, "JupyterLab Light")

    # a row's click shows its diff below the table
    entries.nth(1).locator("td").first.click()
    detail = page.locator(".nbedit-history-detail")
    detail.get_by_text("history entry").wait_for()
    # drawn as the review draws a plan: the file's box, its +/- counts, numbered rows
    assert detail.locator(".nb-file-head .nb-path").inner_text() == "beta.py"
    assert detail.locator("tr.a td").nth(1).inner_text() == "1"
    assert detail.locator("tr.a td").nth(3).inner_text() == "b = 2"
    assert detail.locator("tr.r td").nth(3).inner_text() == "b = 1"
    detail.screenshot(path=str(ARTIFACTS / "history-diff-light.png"), animations="disabled")
    # Undo on any row opens a review; only Apply writes. The middle entry (beta) is older than the
    # newest (alpha): it is undone by its reverse, the newer alpha edit stays
    assert table.locator("button.nbedit-history-undo").count() == 3
    middle = entries.nth(1).get_attribute("data-id")
    table.locator(f'button.nbedit-history-undo[data-id="{middle}"]').click()
    review = detail.locator(".nbedit-review")
    review.wait_for(state="visible")
    assert beta.read_text() == "b = 2\n"
    review.locator("button.nbedit-apply").click()
    status_text(review, "undone")
    assert alpha.read_text() == "a = 3\n" and beta.read_text() == "b = 1\n"
    table.locator("tr.nb-entry").filter(has_text="undoes").wait_for()
    assert entries.count() == 4 and files_column()[0] == "beta.py"
    table.locator(f'button.nbedit-history-undo[data-id="{middle}"]').wait_for(state="detached")  # undone once
    table.locator(f'button.nbedit-history-undo[data-id="{newest}"]').click()
    review = detail.locator(".nbedit-review")
    review.locator("button.nbedit-apply").click()
    status_text(review, "undone")
    assert alpha.read_text() == "a = 2\n"


DRIFTED = (
    "def total(items):\n"
    "    subtotal = sum(item.price for item in items)\n"
    "    tax = subtotal * 0.2\n"
    "    return subtotal + tax\n"
)
# the model's copy of the second line drifted ('itme'), and its new text is the file's line; the
# change itself is on a line that is really there (a kept line that differs would be a conflict)
FUZZY_BLOCK = """\
<<<<<<< SEARCH
def total(items):
    subtotal = sum(item.price for itme in items)
    tax = subtotal * 0.2
=======
def total(items):
    subtotal = sum(item.price for item in items)
    tax = round(subtotal * 0.2, 2)
>>>>>>> REPLACE
"""


TABBED = "def total(items):\n\tsubtotal = sum(items)\n\treturn subtotal\n"
# the model wrote four spaces where the file has a tab: the indentation tier, whitespace to show
INDENTED_BLOCK = """\
<<<<<<< SEARCH
    subtotal = sum(items)
    return subtotal
=======
    subtotal = sum(items)
    return round(subtotal, 2)
>>>>>>> REPLACE
"""


def widget_output(page: Any, index: int) -> Any:
    return page.locator(".jp-OutputArea-output").filter(has=page.locator(".nbedit-review")).nth(index)


def test_why_here_explains_every_tier_with_a_score(lab: LabServer, page: Any) -> None:
    target = lab.root / "why_case.py"
    target.write_bytes(DRIFTED.encode())
    tabbed = lab.root / "why_ws.py"
    tabbed.write_bytes(TABBED.encode())
    write_notebook(
        lab.root / "why_case.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", f"%%edit why_case.py\n{FUZZY_BLOCK}"),
            ("code", f"%%edit why_ws.py\n{INDENTED_BLOCK}"),
        ],
    )
    open_notebook(page, lab, "why_case.ipynb")
    run_all_cells(page)
    for index in (0, 1):
        page.locator(".jp-OutputArea .nbedit-review").nth(index).wait_for(state="visible", timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.nbedit-review button.nbedit-apply')].filter(b => !b.disabled).length == 2"
    )
    fuzzy, spaces = widget_output(page, 0), widget_output(page, 1)
    disclosure = fuzzy.locator("details.nb-why")
    assert disclosure.count() == 1
    summary = disclosure.locator("summary")
    assert summary.inner_text() == "Why here?"
    summary.focus()
    page.keyboard.press("Enter")  # a disclosure opens from the keyboard too
    table = disclosure.locator("table.nb-why-table")
    table.wait_for(state="visible")
    text = table.inner_text()
    summary_line = disclosure.locator("p.nb-why-summary").inner_text()
    # one plain line first: where, how close, and whether anything else came close
    assert re.fullmatch(
        r"Not found verbatim; placed at lines 1-3, the closest text: score 0\.\d\d; no other place comes close\.",
        summary_line,
    ), summary_line
    assert re.search(r"score\s+0\.\d\d \(window score\)", text), text
    assert "tiers tried" in text and "exact: not found" in text and "fuzzy: " in text
    assert "for itme in items" in text and "for item in items" in text

    # the indentation tier has a score too (the similarity of the text expected and found), and the
    # lines that differ only in whitespace show it: a space as ·, a tab as →
    why = spaces.locator("details.nb-why")
    why.locator("summary").click()
    why.locator("table.nb-why-table").wait_for(state="visible")
    line = why.locator("p.nb-why-summary").inner_text()
    assert line.startswith("Not found verbatim; placed at lines 2-3, where the file has the same text at another")
    assert re.search(r"similarity 0\.\d\d\.$", line), line
    marked = why.locator(".nb-ws").all_inner_texts()
    assert marked == ["····subtotal·=·sum(items)", "····return·subtotal", "→subtotal·=·sum(items)", "→return·subtotal"]
    assert "⚠ indentation" in spaces.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        if theme == "dark":
            set_theme(page, "JupyterLab Dark")
        try:
            fuzzy.screenshot(path=str(ARTIFACTS / f"review-why-{theme}.png"), animations="disabled")
            spaces.screenshot(path=str(ARTIFACTS / f"review-why-whitespace-{theme}.png"), animations="disabled")
        finally:
            if theme == "dark":
                set_theme(page, "JupyterLab Light")
    assert target.read_bytes() == DRIFTED.encode()  # looking explains; it never writes
    assert tabbed.read_bytes() == TABBED.encode()


# ------------------------------------------------------------------ Apply writes what the page shows

THREE_BEFORE = "".join(f"value_{number} = {number}\n" for number in range(1, 31))
THREE_EDIT = "".join(
    f"<<<<<<< SEARCH\nvalue_{n} = {n}\n=======\nvalue_{n} = {n * 100}\n>>>>>>> REPLACE\n" for n in (3, 15, 27)
)
BUSY_SECONDS = 20


def kernel_status(page: Any) -> str:
    return str(
        page.evaluate(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return w.sessionContext.session.kernel.status; }"
        )
    )


def keep_kernel_busy(page: Any, seconds: int = BUSY_SECONDS) -> None:
    """Run a long cell's code in the notebook's kernel (a person started the next cell) and wait
    until the kernel says it is busy."""
    page.evaluate(
        "seconds => { const w = window.jupyterapp.shell.currentWidget;"
        " w.sessionContext.session.kernel.requestExecute({code: `import time; time.sleep(${seconds})`}); }",
        seconds,
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'busy'"
    )


def test_apply_with_a_busy_kernel_writes_the_selection_on_screen(lab: LabServer, page: Any) -> None:
    # ipywidgets holds toggle updates back while the kernel is busy; Apply is sent at once.
    # Before Apply carried its selection, unticking hunks 1 and 2 and clicking Apply wrote 2 and 3.
    target = lab.root / "busy_case.py"
    target.write_text(THREE_BEFORE)
    write_notebook(
        lab.root / "busy_case.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", f"%%edit busy_case.py\n{THREE_EDIT}"),
            ("code", "_"),  # a second view of the same review
        ],
    )
    open_notebook(page, lab, "busy_case.ipynb")
    run_all_cells(page)
    views = page.locator(".jp-OutputArea .nbedit-review")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.nbedit-review button.nbedit-apply')]"
        ".filter(b => !b.disabled).length === 2",
        timeout=60_000,
    )
    first, second = views.nth(0), views.nth(1)
    keep_kernel_busy(page)
    toggles = first.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert toggles.count() == 3
    toggles.nth(0).uncheck()
    for _ in range(7):  # rapid toggling: every click is an update the busy kernel holds back
        toggles.nth(2).click()
    toggles.nth(1).uncheck()
    assert not toggles.nth(2).is_checked()  # seven clicks: hunk 3 ends unticked ...
    toggles.nth(2).check()  # ... and is ticked again: only hunk 3 is selected
    second.get_by_text("1 of 3 parts selected").wait_for()  # the other view draws the same selection
    assert kernel_status(page) == "busy", "the kernel must still be busy when Apply is clicked"
    second.locator("button.nbedit-apply").click()
    assert target.read_text() == THREE_BEFORE  # queued behind the running cell: nothing yet
    text = status_text(second, "applied")
    assert target.read_text() == THREE_BEFORE.replace("value_27 = 27\n", "value_27 = 2700\n"), text
    assert "1 of 3 parts (hunk 3)" in text
    status_text(first, "applied")
    for view in (first, second):
        boxes = view.locator(".nbedit-hunk-toggle input[type=checkbox]")
        assert [boxes.nth(index).is_checked() for index in range(3)] == [False, False, True]
        assert boxes.nth(0).is_disabled()
    found = ENTRY_ID.search(text)
    assert found and history_entry(lab, found.group(1)).status == "applied"
    wait_kernel_idle(page)
    page.wait_for_timeout(500)  # any held-back update has reached the kernel by now ...
    boxes = first.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert [boxes.nth(index).is_checked() for index in range(3)] == [
        False,
        False,
        True,
    ]  # ... and changed nothing
    assert target.read_text() == THREE_BEFORE.replace("value_27 = 27\n", "value_27 = 2700\n")
    second.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    second.screenshot(path=str(ARTIFACTS / "review-busy-applied-light.png"), animations="disabled")


def test_reject_and_replan_with_a_busy_kernel(lab: LabServer, page: Any) -> None:
    target = lab.root / "busy_replan.py"
    target.write_text(THREE_BEFORE)
    write_notebook(
        lab.root / "busy_replan.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", f"%%edit busy_replan.py\n{THREE_EDIT}"),
        ],
    )
    open_notebook(page, lab, "busy_replan.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    keep_kernel_busy(page, BUSY_SECONDS // 2)
    # the file moves under the review, next to a changed line: the change no longer applies by the
    # three-way rule a stale review re-plans itself with (issue 26), so it stays stale until Re-plan
    changed = THREE_BEFORE.replace("value_4 = 4\n", "value_4 = 4  # edited by someone else\n")
    target.write_text(changed)
    widget.locator(".nbedit-hunk-toggle input[type=checkbox]").nth(1).uncheck()
    widget.locator("button.nbedit-apply").click()
    status_text(widget, "stale")
    assert target.read_text() == changed
    widget.locator("button.nbedit-replan").click()
    status_text(widget, "pending")
    wait_kernel_idle(page)
    toggles = widget.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert [toggles.nth(index).is_checked() for index in range(3)] == [True, True, True]  # a new plan, all in
    toggles.nth(0).uncheck()
    widget.get_by_text("2 of 3 parts selected").wait_for()
    widget.locator("button.nbedit-apply").click()
    status_text(widget, "applied")
    expected = changed.replace("value_15 = 15\n", "value_15 = 1500\n").replace(
        "value_27 = 27\n", "value_27 = 2700\n"
    )
    assert target.read_text() == expected


# ------------------------------------------------------------------ where widgets do not render

INDENTED = "class Greeter:\n    def greet(self, name):\n        return 'hello ' + name\n"


def static_review_html(tmp_path: Path) -> str:
    from nbedit.jupyter.review import ReviewWidget
    from nbedit.workspace import Workspace

    (tmp_path / "greeter.py").write_text(INDENTED)
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("greeter.py", "return 'hello ' + name", "return f'hello, {name}!'")
    widget = ReviewWidget(workspace, plan)
    try:
        return widget.static_html()
    finally:
        widget.close()


def test_static_fallback_in_nbconvert_html_and_without_styles(page: Any, tmp_path: Path) -> None:
    import nbformat
    from nbconvert import HTMLExporter

    fallback = static_review_html(tmp_path)
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%edit greeter.py ...")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/html": fallback, "text/plain": "review"})
    ]
    notebook.cells = [cell]
    exported, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page.set_content(exported, wait_until="domcontentloaded")
    table = page.locator("table.nb-diff").first
    table.wait_for()
    widths = page.evaluate(
        """() => { const t = document.querySelector('table.nb-diff');
        const row = [...t.querySelectorAll('tr.a')][0];
        const text = row.lastElementChild;
        return [t.getBoundingClientRect().width, text.getBoundingClientRect().width,
                text.scrollWidth, text.clientWidth, getComputedStyle(text).whiteSpace]; }"""
    )
    table_width, text_width, scroll_width, client_width, white_space = widths
    assert text_width > 0.6 * table_width, widths  # not four equal columns
    assert scroll_width <= client_width + 1, widths  # the code is not clipped
    assert white_space == "pre"
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".nbedit-view").first.screenshot(path=str(ARTIFACTS / "static-nbconvert.png"))

    # GitHub drops style sheets and every style and class attribute
    stripped = re.sub(r"<style>.*?</style>", "", fallback, flags=re.S)
    stripped = re.sub(r'\s(?:style|class)="[^"]*"', "", stripped)
    assert "class=" not in stripped and "<style" not in stripped
    page.set_content(f"<html><body>{stripped}</body></html>")
    rows = page.evaluate("() => [...document.querySelectorAll('tr')].map(r => r.innerText)")
    added = next(text for text in rows if "hello, {name}" in text)
    assert "\u00a0" * 8 + "return f'hello, {name}!'" in added  # indentation survives
    text = page.evaluate("() => document.body.innerText")
    assert "greeter.py +1 −1 modified" in text, text  # the header's pieces do not run together
    page.screenshot(path=str(ARTIFACTS / "static-stripped.png"), full_page=True)


def static_notebook_review_html(tmp_path: Path) -> str:
    """The ``text/html`` of a review of a notebook plan: an indented line edited in cell 2 (its copy
    lost the file's trailing spaces: a whitespace-tier hunk), cell 4 deleted, a markdown cell inserted."""
    import nbformat

    from nbedit.jupyter.review import ReviewWidget
    from nbedit.workspace import Workspace

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Greeter\nA small notebook.")]
    for number in range(1, 7):
        cell = nbformat.v4.new_code_cell(
            f"class Greeter{number}:\n    def greet(self, name):\n        return 'hello ' + name  "
        )
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"run {number}\n")]
        notebook.cells.append(cell)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"c{number}"
    nbformat.write(notebook, str(tmp_path / "greeter.ipynb"))
    workspace = Workspace(tmp_path, history=False)
    view = workspace.view("greeter.ipynb").splitlines(keepends=True)
    start = view.index("# %% nbedit cell 2 [code] id=c2\n") + 1
    deleted = view.index("# %% nbedit cell 4 [code] id=c4\n") + 1
    diff = (
        "--- a/greeter.ipynb\n+++ b/greeter.ipynb\n"
        f"@@ -{start},4 +{start},4 @@\n"
        " # %% nbedit cell 2 [code] id=c2\n class Greeter2:\n     def greet(self, name):\n"
        "-        return 'hello ' + name\n+        return f'hello, {name}!'\n"
        f"@@ -{deleted},4 +{deleted - 0},2 @@\n"
        "-# %% nbedit cell 4 [code] id=c4\n-class Greeter4:\n-    def greet(self, name):\n"
        "-        return 'hello ' + name  \n+# %% nbedit cell new [markdown]\n+Greeter4 is gone.\n"
    )
    plan = workspace.plan_patch(diff)
    widget = ReviewWidget(workspace, plan)
    try:
        return widget.static_html()
    finally:
        widget.close()


def nbconvert_html(fallback: str, theme: str = "light") -> str:
    import nbformat
    from nbconvert import HTMLExporter

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%patch ...")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/html": fallback, "text/plain": "review"})
    ]
    notebook.cells = [cell]
    exported, _ = HTMLExporter(template_name="lab", theme=theme).from_notebook_node(notebook)
    return str(exported)


CELL_BOXES = """() => [...document.querySelectorAll('tbody')].filter((body) => !body.parentElement.closest('td')).map(
    (body) => [...body.querySelectorAll(':scope > tr')].map((row) => row.innerText.replace(/\\s+/g, ' ').trim()))"""


def test_static_notebook_fallback_is_cell_by_cell_in_nbconvert_and_without_styles(
    page: Any, tmp_path: Path
) -> None:
    fallback = static_notebook_review_html(tmp_path)
    assert "hunk 1 (cell 2 (id c2, code), line 1): matched ignoring trailing whitespace" in fallback
    for theme in ("light", "dark"):
        page.set_content(nbconvert_html(fallback, theme), wait_until="domcontentloaded")
        page.locator("table.nb-cells").wait_for()
        boxes = page.evaluate(CELL_BOXES)
        headers = [box[0] for box in boxes]
        assert headers[0].startswith("▣ cell 0 · markdown · id c0 unchanged · 2 lines"), headers
        edited = next(box for box in boxes if box[0].startswith("± cell 2 · code · id c2"))
        assert "edited" in edited[0] and "outputs kept" in edited[0] and "trailing-whitespace" in edited[0]
        # numbered within the cell: its third line is line 3, not a line of the notebook's cell view
        assert edited[1:] == [
            "1 1 class Greeter2:",
            "2 2 def greet(self, name):",
            "3 - return 'hello ' + name",
            "3 + return f'hello, {name}!'",
        ], edited
        deleted = next(box for box in boxes if box[0].startswith("− cell 4"))
        assert "deleted" in deleted[0] and deleted[1].startswith("1 - class Greeter4:")
        inserted = next(box for box in boxes if box[0].startswith("+ new cell · markdown"))
        assert inserted[1:] == ["1 + Greeter4 is gone."]
        assert any(box == ["⋯ 2 unchanged cells (cell 5 to cell 6)"] for box in boxes) or any(
            header.startswith("▣ cell 6") for header in headers
        )
        page_text = page.evaluate("() => document.body.innerText")
        assert "inserts 1 cell" in page_text and "deletes 1 cell" in page_text  # badges on the file
        widths = page.evaluate(
            """() => { const row = [...document.querySelectorAll('tbody.nb-cell-edited tr.a')][0];
            const table = row.closest('table'); const text = row.lastElementChild;
            return [table.getBoundingClientRect().width, text.getBoundingClientRect().width,
                    text.scrollWidth, text.clientWidth]; }"""
        )
        assert widths[1] > 0.6 * widths[0] and widths[2] <= widths[3] + 1, widths  # not 25% columns, not clipped
        why = page.locator("details.nb-why").first
        why.locator("summary").click()
        why_text = why.inner_text()
        assert "similarity 0.9" in why_text and "trailing spaces are ignored" in why_text
        assert "········return·'hello·'·+·name··" in why_text  # the spaces that differ are visible
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator(".nbedit-view").first.screenshot(path=str(ARTIFACTS / f"static-notebook-{theme}.png"))

    stripped = re.sub(r"<style>.*?</style>", "", fallback, flags=re.S)
    stripped = re.sub(r'\s(?:style|class)="[^"]*"', "", stripped)
    assert "class=" not in stripped and "<style" not in stripped
    page.set_content(f"<html><body>{stripped}</body></html>")
    boxes = page.evaluate(CELL_BOXES)
    edited = next(box for box in boxes if "cell 2 · code · id c2" in box[0])
    assert "edited outputs kept" in edited[0] and "hunk 1" in edited[0]  # the pieces do not run together
    rows = page.evaluate("() => [...document.querySelectorAll('tr')].map(r => r.innerText)")
    added = next(text for text in rows if "hello, {name}" in text)
    assert "\u00a0" * 8 + "return f'hello, {name}!'" in added  # indentation survives
    page.screenshot(path=str(ARTIFACTS / "static-notebook-stripped.png"), full_page=True)


# ------------------------------------------------------------------ big plans: the sticky bar

BIG_BEFORE = "".join(f"line_{number} = {number}\n" for number in range(1, 241))
BIG_EDIT = "".join(
    f"<<<<<<< SEARCH\nline_{n} = {n}\n=======\nline_{n} = {n * 10}\n>>>>>>> REPLACE\n"
    for n in (10, 50, 90, 130, 170)
) + (  # the model's copy of line 209 drifted (its new text is the file's line): the fuzzy tier
    "<<<<<<< SEARCH\nline_208 = 208\nline_209 = 2O9\nline_210 = 210\n=======\n"
    "line_208 = 208\nline_209 = 209\nline_210 = 2100\n>>>>>>> REPLACE\n"
)


CONTRAST = """() => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const [R, G, B] = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const background = (element) => {
    // the colour behind an element: its own and its ancestors' backgrounds, blended down to opaque
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const colour = rgba(getComputedStyle(node).backgroundColor);
      if (colour.length >= 3 && (colour[3] === undefined || colour[3] > 0)) layers.push(colour);
      if (colour.length === 3 || colour[3] === 1) break;
    }
    let result = [255, 255, 255];
    for (const [r, g, b, a = 1] of layers.reverse()) result = [r * a + result[0] * (1 - a), g * a + result[1] * (1 - a), b * a + result[2] * (1 - a)];
    return result;
  };
  const found = [];
  for (const button of document.querySelectorAll('.nbedit-review button:not(:disabled)')) {
    if (!button.offsetParent) continue;
    const [r, g, b, a = 1] = rgba(getComputedStyle(button).color);
    const behind = background(button);
    const text = [r * a + behind[0] * (1 - a), g * a + behind[1] * (1 - a), b * a + behind[2] * (1 - a)];
    const [L1, L2] = [luminance(text), luminance(behind)].sort((x, y) => y - x);
    found.push([(L1 + 0.05) / (L2 + 0.05), button.textContent]);
  }
  found.sort((x, y) => x[0] - y[0]);
  return found;
}"""


def lowest_button_contrast(page: Any) -> float:
    """The lowest text/background contrast of the review's enabled buttons (WCAG asks 4.5:1)."""
    found = page.evaluate(CONTRAST)
    assert found, "no enabled buttons to measure"
    print("lowest button contrast", found[:3])
    return float(found[0][0])


def test_sticky_bar_selects_and_walks_a_long_plan(lab: LabServer, page: Any) -> None:
    target = lab.root / "big_case.py"
    target.write_text(BIG_BEFORE)
    write_notebook(
        lab.root / "big_case.ipynb",
        [("code", "%load_ext nbedit"), ("code", f"%%edit big_case.py\n{BIG_EDIT}")],
    )
    open_notebook(page, lab, "big_case.ipynb")
    run_all_cells(page)
    widget = rendered_widget(page)
    widget.get_by_text("6 of 6 parts selected").wait_for()
    assert (
        widget.locator(".nb-badge", has_text="exact").count() == 0
        or widget.locator(".nb-file-head .nb-badge", has_text="5 exact, 1 not exact").count() == 1
    )
    # scrolled to the top of the review, its bar is still in view at the bottom of the notebook
    widget.locator(".nb-top").scroll_into_view_if_needed()
    page.evaluate("() => document.querySelector('.nbedit-review .nb-top').scrollIntoView({block: 'start'})")
    bar = widget.locator(".nb-foot")
    viewport = page.viewport_size
    box = bar.bounding_box()
    last = widget.locator("tr.c").last.bounding_box()
    assert last["y"] > viewport["height"], "the plan must be taller than the window for this check"
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 1, box
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "review-sticky-light.png"))
    # select none / all, for the plan and for the file
    bar.locator("button.nb-select-none").click()
    widget.get_by_text("0 of 6 parts selected").wait_for()
    bar.locator("button.nb-select-all").click()
    widget.get_by_text("6 of 6 parts selected").wait_for()
    widget.locator(".nb-file-head button.nb-select-none").click()
    widget.get_by_text("0 of 6 parts selected").wait_for()
    # keys: j / k walk the changes, w jumps to the one not matched exactly
    widget.locator("button.nb-go[data-go='1']").click()
    current = widget.locator("tbody.nb-current")
    assert "hunk 1" in current.inner_text()
    page.keyboard.press("j")
    assert "hunk 2" in widget.locator("tbody.nb-current").inner_text()
    page.keyboard.press("k")
    assert "hunk 1" in widget.locator("tbody.nb-current").inner_text()
    page.keyboard.press("w")
    assert "hunk 6" in widget.locator("tbody.nb-current").inner_text()
    assert "⚠" in widget.locator("tbody.nb-current tr.h").inner_text()
    page.keyboard.press("Space")  # the jump focused the hunk's checkbox: tick it
    widget.get_by_text("1 of 6 parts selected").wait_for()
    page.keyboard.press("z")
    assert "nb-wrap" in (widget.get_attribute("class") or "")
    page.screenshot(path=str(ARTIFACTS / "review-sticky-walk-light.png"))
    assert lowest_button_contrast(page) >= 4.5
    try:
        set_theme(page, "JupyterLab Dark")
        page.screenshot(path=str(ARTIFACTS / "review-sticky-walk-dark.png"))
        assert lowest_button_contrast(page) >= 4.5
    finally:
        set_theme(page, "JupyterLab Light")
    assert "tiers tried" not in bar.inner_text()
    assert target.read_text() == BIG_BEFORE
    bar.locator("button.nbedit-apply").click()
    status_text(widget, "applied")
    written = target.read_text()
    assert "line_210 = 2100\n" in written and "line_10 = 10\n" in written and "line_209 = 209\n" in written
    assert written.count("\n") == BIG_BEFORE.count("\n")
