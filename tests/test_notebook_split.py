"""A diff hunk that changes several cells becomes one hunk per cell change, each one leavable out alone."""

from __future__ import annotations

import difflib
import itertools
from pathlib import Path

import nbformat

from nbedit.workspace import Workspace


def test_one_hunk_per_cell_change_and_every_subset_is_a_notebook(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Sales report")]
    notebook.cells += [nbformat.v4.new_code_cell(f"step_{index} = prepare({index})") for index in range(6)]
    notebook.cells.append(nbformat.v4.new_code_cell("total = load()\nprint(total)"))
    nbformat.write(notebook, str(tmp_path / "s.ipynb"))
    original = (tmp_path / "s.ipynb").read_bytes()
    workspace = Workspace(tmp_path, history=False)
    view = workspace.view("s.ipynb")
    lines = view.splitlines(True)
    edited = (
        view.replace(
            "step_1 = prepare(1)\n", "step_1 = prepare(1)\n# %% nbedit cell new [markdown]\nStep one is done.\n"
        )
        .replace("step_2 = prepare(2)", "step_2 = prepare(22)")
        .replace("total = load()", "total = load(cache=True)")
        .splitlines(True)
    )
    deleted = next(index for index, line in enumerate(edited) if line.startswith("# %% nbedit cell 4 "))
    del edited[deleted : deleted + 2]  # cell 4
    retyped = next(index for index, line in enumerate(edited) if line.startswith("# %% nbedit cell 6 "))
    edited[retyped] = edited[retyped].replace("[code]", "[markdown]")
    diff = "".join(difflib.unified_diff(lines, edited, "a/s.ipynb", "b/s.ipynb"))
    assert diff.count("\n@@ ") + diff.startswith("@@") <= 1  # the diff says it all in one @@ block
    plan = workspace.plan_patch(diff)
    (file_plan,) = plan.files
    replacements = [located.match.replacement for located in file_plan.hunks]
    assert len(replacements) == 5, replacements  # insert, edit, delete, retype, edit
    assert replacements[0].startswith("# %% nbedit cell new [markdown]")
    assert replacements[1] == "step_2 = prepare(22)\n" and replacements[2] == ""
    assert "[markdown]" in replacements[3] and replacements[4] == "total = load(cache=True)\n"
    whole = nbformat.reads(file_plan.after_bytes.decode(), as_version=4)
    for count in range(len(replacements) + 1):
        for kept in itertools.combinations(range(len(replacements)), count):
            left_out = {(0, index) for index in range(len(replacements)) if index not in kept}
            chosen = plan.without_hunks(left_out) if left_out else plan
            cells = nbformat.reads(chosen.files[0].after_bytes.decode(), as_version=4).cells
            sources = [cell.source for cell in cells]
            assert ("Step one is done." in sources) == (0 in kept)
            assert ("step_2 = prepare(22)" in sources) == (1 in kept)
            assert ("step_3 = prepare(3)" in sources) == (2 not in kept)
            assert ("total = load(cache=True)\nprint(total)" in sources) == (4 in kept)
            if not kept:
                assert chosen.files[0].after_bytes == original
    assert [cell.source for cell in whole.cells][3] == "Step one is done."
    workspace.apply(plan.without_hunks({(0, 2)}))  # everything but the deletion
    written = nbformat.read(str(tmp_path / "s.ipynb"), as_version=4).cells
    assert "step_3 = prepare(3)" in [cell.source for cell in written] and len(written) == 9
