"""Rewind in a real JupyterLab: the changes view, the history table's checkpoint rows, a rewind
reviewed and applied from a row; and a person's edit typed in an editor tab and saved with Ctrl+S
between the cell runs and the rewind (kept byte-exact where it does not overlap, the file left out
with the conflict shown where it does), with the files open in tabs that take the rewind in place
(no "File Changed" dialog). Assertions are on the files on disk, not only on the page.

The page helpers (open a path, type, save with Ctrl+S, look for a dialog) are the live tabs tests'
(``tests/test_browser_live.py``), imported where used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import (
    LabServer,
    cell_outputs_text,
    open_notebook,
    run_all_cells,
    wait_kernel_idle,
    write_notebook,
)

pytest_plugins = ["browser_support"]  # the lab, browser and page fixtures

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

EDIT = "%%edit {path} --yes\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
ROWS = "".join(f"row {number}\n" for number in range(10))


def test_changes_view_and_a_rewind_from_the_history_table(lab: LabServer, page: Any) -> None:
    rows, notes = lab.root / "rewind_rows.txt", lab.root / "rewind_notes.md"
    rows.write_text(ROWS)
    notes.write_text("notes\n")
    write_notebook(
        lab.root / "rewind_case.ipynb",
        [
            ("code", "%load_ext nbedit"),
            ("code", EDIT.format(path="rewind_rows.txt", old="row 1", new="cell two")),
            # one cell run that edits two files: a checkpoint of two entries, folded under one row
            (
                "code",
                "get_ipython().run_cell_magic('edit', 'rewind_rows.txt --yes', "
                "'<<<<<<< SEARCH\\nrow 4\\n=======\\ncell three\\n>>>>>>> REPLACE\\n')\n"
                "get_ipython().run_cell_magic('edit', 'rewind_notes.md --yes', "
                "'<<<<<<< SEARCH\\nnotes\\n=======\\ncell three notes\\n>>>>>>> REPLACE\\n')",
            ),
            ("code", EDIT.format(path="rewind_rows.txt", old="row 7", new="cell four")),
            # a person's edit from another process, on a line no cell touched
            (
                "code",
                "import subprocess, sys\n"
                "subprocess.run([sys.executable, '-c', \"import pathlib; p = pathlib.Path('rewind_rows.txt'); "
                "p.write_text(p.read_text().replace('row 9', 'typed by a person'))\"], check=True)",
            ),
            ("code", "%nbedit changes --since In[3]"),
            ("code", "%nbedit history"),
        ],
    )
    open_notebook(page, lab, "rewind_case.ipynb")
    run_all_cells(page)

    outputs = cell_outputs_text(page)
    assert "nbedit changes since In[3]" in outputs and "cell three notes" in outputs, outputs
    assert "changed outside nbedit since its last entry" in outputs

    table = page.locator(".jp-OutputArea .nbedit-history-table")
    table.wait_for(state="visible", timeout=30_000)
    header = table.locator("tr.nb-checkpoint")
    assert header.count() == 1 and "In[3]" in header.inner_text() and "2 entries" in header.inner_text()
    entries = table.locator("tr.nb-entry")
    assert entries.count() == 4
    header.locator("button.nb-fold").click()
    assert entries.count() == 2  # the two entries of In[3] folded under their row
    header.locator("button.nb-fold").click()
    assert entries.count() == 4

    # rewind to before In[3] from one of its rows: review, then Apply
    entries.nth(1).locator("button.nbedit-history-rewind").click()
    review = page.locator(".nbedit-history-detail .nbedit-review")
    review.wait_for(state="visible", timeout=30_000)
    page.wait_for_function(
        "() => { const b = document.querySelector('.nbedit-history-detail button.nbedit-apply');"
        " return b && !b.disabled; }"
    )
    assert "cell three" in review.inner_text()
    review.locator("button.nbedit-apply").click()
    review.locator(".nbedit-status").filter(has_text="applied").wait_for(timeout=30_000)
    assert rows.read_text() == ROWS.replace("row 1", "cell two").replace("row 9", "typed by a person")
    assert notes.read_text() == "notes\n"
    table.locator("tr.nb-entry", has_text="rewind").first.wait_for(timeout=30_000)


# ---------------------------------------------------------------------- a person's edit from a tab
#
# The kernel makes three cell runs that edit a text file and a notebook; then the person edits the
# text file in a JupyterLab editor tab (typed with the keyboard, saved with Ctrl+S); then the kernel
# rewinds to before In[3] with the file and the notebook open in tabs. Assertions are on the bytes on
# disk and on what the tabs show.

TAB_ROWS = "".join(f"row {number}\n" for number in range(12))
TARGET_CELLS = [("code", "threshold = 1\nthreshold"), ("markdown", "Notes kept by hand")]


def _tab_case(lab: LabServer, page: Any, stem: str) -> tuple[Path, Path, str, str, str]:
    """Write the files and the kernel's notebook, open it, run its three edit cells (In[2..4]).

    Returns the text file, the edited notebook, their names and the kernel notebook's name; its last
    cell (index 4, not yet run) is ``%nbedit rewind In[3]``."""
    from test_browser_live import start_lab_page

    rows_name, target_name, kernel_name = f"{stem}_rows.txt", f"{stem}_target.ipynb", f"{stem}_kernel.ipynb"
    rows, target = lab.root / rows_name, lab.root / target_name
    rows.write_text(TAB_ROWS)
    write_notebook(target, TARGET_CELLS)
    write_notebook(
        lab.root / kernel_name,
        [
            ("code", "%load_ext nbedit"),
            ("code", EDIT.format(path=rows_name, old="row 1", new="cell two")),
            (
                "code",
                f"get_ipython().run_cell_magic('edit', '{rows_name} --yes', "
                "'<<<<<<< SEARCH\\nrow 4\\n=======\\ncell three\\n>>>>>>> REPLACE\\n')\n"
                f"get_ipython().run_cell_magic('edit', '{target_name} --yes', "
                "'<<<<<<< SEARCH\\nthreshold = 1\\n=======\\nthreshold = 3\\n>>>>>>> REPLACE\\n')",
            ),
            ("code", EDIT.format(path=rows_name, old="row 6", new="cell four")),
            ("code", "%nbedit rewind In[3]"),
        ],
    )
    start_lab_page(page, lab, kernel_name)
    page.evaluate(
        """path => {
            const panel = [...window.jupyterapp.shell.widgets('main')]
                .find(w => w.context && w.context.path === path);
            panel.content.activeCellIndex = 4;
            window.jupyterapp.commands.execute('notebook:run-all-above');
        }""",
        kernel_name,
    )
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length === 5 && prompts.slice(0, 4).map(p => p.textContent.trim()).join(' ')
                === '[1]: [2]: [3]: [4]:';
        }""",
        timeout=90_000,
    )
    wait_kernel_idle(page)
    ran = TAB_ROWS.replace("row 1\n", "cell two\n").replace("row 4\n", "cell three\n")
    assert rows.read_text() == ran.replace("row 6\n", "cell four\n"), cell_outputs_text(page)
    return rows, target, rows_name, target_name, kernel_name


def _type_at_line_end(page: Any, path: str, line: int, text: str) -> None:
    """In the file's editor tab: put the cursor at the end of ``line`` (0-based) and type, as a person."""
    from test_browser_live import activate, widget_id

    activate(page, path)
    page.locator(f"#{widget_id(page, path)} .cm-content").click()
    page.keyboard.press("Control+Home")
    for _ in range(line):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    page.keyboard.type(text)


def _rewind_review(page: Any, kernel_name: str) -> Any:
    """Run the kernel notebook's ``%nbedit rewind In[3]`` cell; the review, once Apply is live."""
    from test_browser_live import activate, widget_id

    activate(page, kernel_name)
    page.evaluate(
        """path => {
            const panel = [...window.jupyterapp.shell.widgets('main')]
                .find(w => w.context && w.context.path === path);
            panel.content.activeCellIndex = 4;
            window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        kernel_name,
    )
    cell = page.locator(f"#{widget_id(page, kernel_name)} .jp-Cell").nth(4)
    review = cell.locator(".jp-OutputArea .nbedit-review")
    review.wait_for(state="visible", timeout=60_000)
    apply = review.locator("button.nbedit-apply")
    apply.wait_for(state="visible")
    page.wait_for_function("button => !button.disabled", arg=apply.element_handle(), timeout=30_000)
    return review


def _notebook_sources(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells]


def test_rewind_keeps_a_persons_edit_typed_in_a_tab_and_the_open_tabs_take_it(
    lab: LabServer, page: Any
) -> None:
    from test_browser_live import (
        activate,
        cell_sources,
        file_source,
        is_dirty,
        no_dialog,
        open_path,
        save,
        shot,
        type_into_cell,
        widget_js,
    )

    rows, target, rows_name, target_name, kernel_name = _tab_case(lab, page, "rewind_tab")
    target_before_rewind = target.read_bytes()
    assert _notebook_sources(target)[0] == "threshold = 3\nthreshold"

    # the person: row 9 in the editor tab, three lines away from the nearest line a cell wrote
    open_path(page, lab, rows_name, "split-right")
    _type_at_line_end(page, rows_name, 9, " checked by hand\t(ok)")
    assert is_dirty(page, rows_name)
    save(page, rows_name)
    typed = TAB_ROWS.replace("row 1\n", "cell two\n").replace("row 4\n", "cell three\n")
    typed = typed.replace("row 6\n", "cell four\n").replace("row 9\n", "row 9 checked by hand\t(ok)\n")
    assert rows.read_text() == typed
    # both files stay open while the rewind is applied: the tabs must take it in place. Opening the
    # notebook starts its kernel, and JupyterLab writes the kernel's language_info into its metadata
    # (the tab turns dirty); the person saves it: a second file saved from a tab, changed outside
    # nbedit far from the cell In[3] edited.
    open_path(page, lab, target_name, "split-bottom")
    activate(page, target_name)
    wait_kernel_idle(page, timeout=90_000)
    page.wait_for_function(
        widget_js(
            target_name,
            "return widget.context.model.sharedModel.getMetadata().language_info?.name === 'python';",
        ),
        timeout=30_000,
    )
    save(page, target_name)
    target_saved = target.read_bytes()
    assert b'"language_info"' in target_saved and target_saved != target_before_rewind
    shot(page, "rewind-tab-person-saved.png")

    review = _rewind_review(page, kernel_name)
    text = review.inner_text()
    assert rows_name in text and target_name in text and "CONFLICT" not in text, text
    review.scroll_into_view_if_needed()
    shot(page, "rewind-tab-review.png")
    assert rows.read_text() == typed and target.read_bytes() == target_saved  # a review writes nothing
    review.locator("button.nbedit-apply").click()
    review.locator(".nbedit-status").filter(has_text="applied").wait_for(timeout=30_000)

    # on disk: In[3] and In[4] taken back, In[2] kept, the person's typing kept byte-exact
    expected = TAB_ROWS.replace("row 1\n", "cell two\n").replace("row 9\n", "row 9 checked by hand\t(ok)\n")
    assert rows.read_bytes() == expected.encode()
    # the notebook: the cell back as it was, every byte the tab's save wrote kept (its metadata, its JSON)
    assert target_saved.count(b'"threshold = 3\\n"') == 1
    assert target.read_bytes() == target_saved.replace(b'"threshold = 3\\n"', b'"threshold = 1\\n"')

    # the open tabs show the rewound text, clean, with no "File Changed" dialog
    page.wait_for_function(
        widget_js(
            rows_name, f"return widget.context.model.sharedModel.getSource() === {json.dumps(expected)};"
        ),
        timeout=30_000,
    )
    page.wait_for_function(
        widget_js(
            target_name,
            "return widget.context.model.sharedModel.cells[0].getSource() === 'threshold = 1\\nthreshold';",
        ),
        timeout=30_000,
    )
    no_dialog(page)
    assert file_source(page, rows_name) == expected
    assert cell_sources(page, target_name) == [source for _, source in TARGET_CELLS]
    assert not is_dirty(page, rows_name) and not is_dirty(page, target_name)
    shot(page, "rewind-tab-after.png")

    # the person keeps working in the tabs: saves after the rewind raise no dialog and lose nothing
    _type_at_line_end(page, rows_name, 11, " and more")
    save(page, rows_name)
    assert rows.read_bytes() == expected.replace("row 11\n", "row 11 and more\n").encode()
    rewound = json.loads(target.read_bytes())
    type_into_cell(page, target_name, 0, "# typed after the rewind")
    save(page, target_name)
    saved = json.loads(target.read_bytes())
    assert _notebook_sources(target)[0] == "threshold = 1\nthreshold\n# typed after the rewind"
    saved["cells"][0]["source"] = rewound["cells"][0]["source"]
    assert saved == rewound  # nothing else the tab holds differs from the rewound file
    no_dialog(page)


def test_rewind_refuses_a_file_whose_tab_edit_overlaps_and_shows_the_conflict(
    lab: LabServer, page: Any
) -> None:
    from test_browser_live import is_dirty, no_dialog, open_path, save, shot, widget_js

    rows, target, rows_name, target_name, kernel_name = _tab_case(lab, page, "rewind_overlap")

    # the person: on the very line In[4] wrote
    open_path(page, lab, rows_name, "split-right")
    _type_at_line_end(page, rows_name, 6, ", fixed by hand")
    save(page, rows_name)
    typed = TAB_ROWS.replace("row 1\n", "cell two\n").replace("row 4\n", "cell three\n")
    typed = typed.replace("row 6\n", "cell four, fixed by hand\n")
    assert rows.read_text() == typed

    review = _rewind_review(page, kernel_name)
    text = review.inner_text()
    assert "CONFLICT" in text, text
    # the conflicted file arrives unticked; the notebook the person did not touch is ticked
    include = review.locator(f'.nb-file-include input[aria-label="include {rows_name}"]')
    assert include.count() == 1 and not include.is_checked()
    boxes = review.locator(".nb-file").filter(has_text=target_name).locator("input[type=checkbox]")
    assert boxes.count() >= 1 and all(boxes.nth(index).is_checked() for index in range(boxes.count()))
    assert rows.read_text() == typed and _notebook_sources(target)[0] == "threshold = 3\nthreshold"
    review.scroll_into_view_if_needed()
    shot(page, "rewind-tab-conflict.png")
    review.locator("button.nbedit-apply").click()
    review.locator(".nbedit-status").filter(has_text="applied").wait_for(timeout=30_000)

    assert rows.read_bytes() == typed.encode(), "nothing written for the conflicted file"
    assert _notebook_sources(target) == [source for _, source in TARGET_CELLS]
    page.wait_for_function(
        widget_js(rows_name, f"return widget.context.model.sharedModel.getSource() === {json.dumps(typed)};"),
        timeout=5_000,
    )
    assert not is_dirty(page, rows_name)
    no_dialog(page)
