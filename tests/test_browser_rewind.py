"""Rewind in a real JupyterLab: the changes view, the history table's checkpoint rows, a rewind
reviewed and applied from a row. Assertions are on the files on disk, not only on the page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser_support import LabServer, cell_outputs_text, open_notebook, run_all_cells, write_notebook

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
