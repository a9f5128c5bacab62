"""The values a notebook document is read into and edited into: a cell, and the bytes an edit writes.

They live apart from ``document.py`` so that the modules the document uses (the nbformat 2/3
reader in ``legacy.py``) can make them without importing the document back.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.notebook.view import cell_label
from nbedit.errors import NotebookError

__all__ = ["UNCHANGED", "NotebookCell", "NotebookEdit", "checked_cell_type"]

UNCHANGED = "the file was not changed"


@dataclass(frozen=True, slots=True)
class NotebookCell:
    index: int
    cell_type: str
    id: str | None
    source: str
    source_as_list: bool  # the file stores the source as a list of lines
    read_only: bool = False  # a cell type nbedit does not know: shown, kept byte for byte, never edited

    @property
    def label(self) -> str:
        return cell_label(self.index, self.cell_type, self.id)


@dataclass(frozen=True, slots=True)
class NotebookEdit:
    """The bytes to write and what they change, cell by cell."""

    data: bytes
    changes: tuple[str, ...] = ()  # "cell 3 (id ab, code): source changed", ...
    notes: tuple[str, ...] = ()
    # the one cell whose member values alone differ from the bytes edited, every other byte proved
    # the same by ``write.check_rewritten`` (so ``successor.derive`` need not compare them again)
    rewritten_cell: int | None = None


def checked_cell_type(path: str, index: int, raw: object) -> str:
    """The cell's ``cell_type``; a clear ``NotebookError`` when cell ``index`` is no cell object
    with a ``cell_type`` string (every nbformat version's reader checks this the same way)."""
    if not isinstance(raw, dict):
        raise NotebookError(f"{path}: cell {index} is not a JSON object; {UNCHANGED}", path=path)
    cell_type = raw.get("cell_type")
    if not isinstance(cell_type, str):
        raise NotebookError(
            f"{path}: cell {index} has no 'cell_type' string ({cell_type!r}), so it is not a valid notebook "
            f"cell; repair it or open the notebook in Jupyter first; {UNCHANGED}",
            path=path,
        )
    return cell_type
