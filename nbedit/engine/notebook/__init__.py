"""Notebooks as edit targets: ``.ipynb`` <-> an editable cell view, and back, byte-stable.

The engine edits text, so a notebook is edited through its *cell view* (``view``):
one marker line per cell followed by the cell's source. The bytes are scanned once
(``scan``: JSON checked, cells located, outputs never kept). Matching, uniqueness
and diffs all happen on the view; the edited view is read back, mapped onto the
original cells (``document``), checked (``validate``: proved for source edits,
nbformat's schema for structural ones) and spliced into the original JSON bytes so
that untouched cells, outputs, metadata and the file's own formatting stay byte for
byte (``write``, ``layout``). ``plan_notebook`` is the planner's hook for
``.ipynb`` targets (``planning``).

Pure code: bytes in, bytes out; nothing here reads or writes files.
"""

from __future__ import annotations

from nbedit.engine.notebook.document import NotebookCell, NotebookDocument, NotebookEdit
from nbedit.engine.notebook.planning import cell_view, plan_notebook, replan_notebook
from nbedit.engine.notebook.view import (
    MARKER_PREFIX,
    CellSpan,
    cell_label,
    cell_label_at_line,
    format_marker,
    render_cell,
)

__all__ = [
    "MARKER_PREFIX",
    "CellSpan",
    "NotebookCell",
    "NotebookDocument",
    "NotebookEdit",
    "cell_label",
    "cell_label_at_line",
    "cell_view",
    "format_marker",
    "plan_notebook",
    "render_cell",
    "replan_notebook",
]
