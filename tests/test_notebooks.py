"""Run every notebook in ``notebooks/`` top to bottom with a real kernel.

The tour asserts what each step changed, so executing it is the test: a cell
that raises (a failed assertion, a magic's usage error) fails here with the
cell and its traceback. The notebooks work in their own temporary folders; the
kernel starts in ``tmp_path`` so a stray relative write could not land in the
repository either.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no .ipynb files"


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_notebook_runs_without_errors(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel inherits the environment: keep its history out of ~/.nbedit even before the tour sets its own
    monkeypatch.setenv("NBEDIT_HOME", str(tmp_path / "nbedit-home"))
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{path.name} failed:\n{error}", pytrace=False)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells and all(cell.execution_count for cell in code_cells), "some code cells did not run"
    errors = [output for cell in code_cells for output in cell.outputs if output.output_type == "error"]
    assert not errors
    assert not list(tmp_path.glob("*.py")), f"{path.name} wrote into the kernel's start folder"


def test_committed_notebooks_have_no_outputs() -> None:
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, (
                    f"{path.name}: commit without outputs"
                )
