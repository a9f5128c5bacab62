"""The extension in a real Jupyter kernel, executed headless with nbclient (no clicks, as in CI).

The kernel is the ``python3`` kernelspec; jupyter_client runs a spec whose argv
starts with ``python`` with the current interpreter, so the kernel sees this
environment's nbedit. If no ``python3`` kernelspec is installed, install one
into the environment with ``python -m ipykernel install --sys-prefix``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.kernel

FIRST = "<<<<<<< SEARCH\n>>> total(1, 2)\n3\n=======\n>>> total(1, 2, 3)\n6\n>>>>>>> REPLACE\n"
SECOND = "<<<<<<< SEARCH\nlimit = 1\n=======\nlimit = 2\n>>>>>>> REPLACE\n"


def _kernel_available() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return "python3" in KernelSpecManager().find_kernel_specs()


def _outputs(cell: nbformat.NotebookNode) -> str:
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append(output["text"])
        texts.extend(str(value) for value in output.get("data", {}).values())
    return "\n".join(texts)


@pytest.mark.skipif(
    not _kernel_available(), reason="no python3 kernelspec (python -m ipykernel install --sys-prefix)"
)
def test_notebook_edits_files_headless(tmp_path: Path, nbedit_home: Path) -> None:
    from nbclient import NotebookClient

    (tmp_path / "doc.txt").write_bytes(b"Usage:\n>>> total(1, 2)\n3\n")
    (tmp_path / "settings.py").write_bytes(b"limit = 1\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext nbedit\nimport sys\nprint(sys.executable)"),
        nbformat.v4.new_code_cell("%%edit doc.txt --yes\n" + FIRST),
        nbformat.v4.new_code_cell("%%edit settings.py\n" + SECOND),
        nbformat.v4.new_code_cell("review = _\nreview.apply()\nprint(review.status, review.entry_id)"),
        nbformat.v4.new_code_cell(
            "%%edit settings.py\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n"
        ),
        nbformat.v4.new_code_cell("%nbedit history"),
    ]
    client = NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    cells = notebook.cells

    # the kernel runs this environment's interpreter (python and python3 are one binary in a venv)
    assert os.path.realpath(_outputs(cells[0]).strip()) == os.path.realpath(sys.executable)
    assert (tmp_path / "doc.txt").read_bytes() == b"Usage:\n>>> total(1, 2, 3)\n6\n"
    assert (tmp_path / "settings.py").read_bytes() == b"limit = 2\n"

    applied = cells[1].outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in applied
    assert "applied" in applied["text/plain"] and "+>>> total(1, 2, 3)" in applied["text/plain"]
    assert "nbedit-view" in applied["text/html"]
    assert _outputs(cells[3]).startswith("applied e")
    failed = _outputs(cells[4])
    assert "NoMatch" in failed and "Traceback" not in failed  # reviewed: an error panel, not a traceback
    assert "nb-history" in _outputs(cells[5])

    from nbedit.storage.history import HistoryStore

    with HistoryStore(nbedit_home) as store:
        entries = store.entries()
    # the entry carries the In[n] of the %%edit cell that proposed it, even when applied from a later cell
    assert [entry.execution_count for entry in reversed(entries)] == [2, 3]
    assert all(entry.session.startswith("kernel-") and entry.origin == "magic" for entry in entries)
    json.dumps(nbformat.writes(notebook))  # the executed notebook still serialises


@pytest.mark.skipif(
    not _kernel_available(), reason="no python3 kernelspec (python -m ipykernel install --sys-prefix)"
)
@pytest.mark.parametrize(
    "failing",
    [
        "%%patch --yes\n--- a/settings.py\n+++ b/settings.py\n@@ -1 +1 @@\n-not there\n+x\n",
        "%%edit settings.py --yes\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n",
        "%nbedit undo --yes",
    ],
    ids=["patch", "edit", "undo"],
)
def test_an_unattended_failure_stops_a_headless_run(tmp_path: Path, failing: str) -> None:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    (tmp_path / "settings.py").write_bytes(b"limit = 1\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext nbedit"),
        nbformat.v4.new_code_cell(failing),
        nbformat.v4.new_code_cell("open('later-cell-ran', 'w').close()"),
    ]
    client = NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with pytest.raises(CellExecutionError) as raised:
        client.execute()
    assert not (tmp_path / "later-cell-ran").exists()  # the run stopped at the failed cell
    assert (tmp_path / "settings.py").read_bytes() == b"limit = 1\n"
    (error,) = [output for output in notebook.cells[1].outputs if output["output_type"] == "error"]
    expected = "NothingToUndo" if "undo" in failing else "NoMatch"
    assert error["ename"] == expected and expected in str(raised.value)
    # the message alone, as the magics spell it: no Python traceback frames
    shown = "\n".join(error["traceback"])
    assert "nothing was written" in shown and "File " not in shown and "site-packages" not in shown


@pytest.mark.skipif(
    not _kernel_available(), reason="no python3 kernelspec (python -m ipykernel install --sys-prefix)"
)
def test_fourteen_saved_reviews_keep_one_model_each_and_the_code_once(tmp_path: Path) -> None:
    """The saved widget state of a notebook of reviews: one small model per review, shared code once."""
    from nbclient import NotebookClient

    for number in range(14):
        (tmp_path / f"module_{number}.py").write_text(f"value = {number}\nother = {number}\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext nbedit")]
    notebook.cells += [
        nbformat.v4.new_code_cell(
            f"%%edit module_{number}.py\n<<<<<<< SEARCH\nvalue = {number}\n=======\nvalue = {number + 1}\n"
            f">>>>>>> REPLACE\n<<<<<<< SEARCH\nother = {number}\n=======\nother = -1\n>>>>>>> REPLACE\n"
        )
        for number in range(14)
    ]
    client = NotebookClient(  # nbclient saves the widget state into the notebook, as Lab's "save state" does
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    assert "widgets" in notebook.metadata, [cell.get("outputs") for cell in notebook.cells[:2]]
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    models = {model_id: model for model_id, model in state.items()}
    reviews = [model for model in models.values() if model["state"].get("part") == "review"]
    assert len(reviews) == 14
    others = [model["model_name"] for model in models.values() if model["state"].get("part") != "review"]
    assert sorted(others) == ["LayoutModel", "WidgetModel"]  # the shared layout and the shared code
    largest = max(len(json.dumps(model)) for model in reviews)
    assert largest < 4_000, largest  # was about 32 KB in 34 models per review
    widget_state = len(json.dumps(state).encode())
    code = sum(
        len(json.dumps(model).encode()) for model in models.values() if model["model_name"] == "WidgetModel"
    )
    # the page code and styles, saved once per notebook: the cell-by-cell review, the bar and its keys
    # (issue 24) made it ~60 KB; the reviews themselves stay under 4 KB each
    assert code < 80_000, code
    assert widget_state - code < 14 * 4_000, (
        widget_state
    )  # 14 reviews saved about 450 KB of widget state before
    saved = len(nbformat.writes(notebook).encode())
    html = sum(len(cell.outputs[0]["data"]["text/html"].encode()) for cell in notebook.cells[1:])
    print(
        f"largest review model {largest} B; widget state {widget_state} B (code {code} B); static html {html} B; "
        f"file {saved} B"
    )
