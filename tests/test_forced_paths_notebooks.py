"""Real notebooks through the size-dependent notebook paths: the same bytes, history and refusals.

A notebook of 4 MiB is read by msgspec (its cells decoded whole or by stretches), a big one
is scanned a window at a time, the next edit of a notebook of 1 MiB starts from a document
derived from the last edit, and a big result is written and compared by stretches
(``tests/forced_paths.py``). The notebooks tests use are small, so here those paths are forced
on for the real notebooks of ``tests/data/notebooks`` and ``tests/data/old-notebooks``, and
each does what the ordinary path does: a run of edits (cell edits with non-ASCII text, a
unified diff of the editable view, an edit whose old text is not there, an edit of a notebook
changed between plan and apply), each giving the same bytes or the same refusal, and with
history on, undo of every edit back to the exact original bytes.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from forced_paths import Reached, forced

from nbedit.engine.models import Plan
from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

DATA = Path(__file__).parent / "data"
NOTEBOOKS = sorted([*(DATA / "notebooks").glob("*.ipynb"), *(DATA / "old-notebooks").glob("*.ipynb")])
NAME = "notebook.ipynb"
Outcome = tuple[str, object]  # ("applied", the bytes) or ("refused", the error's class name)


def _step(workspace: Workspace, work: Path, make: object) -> tuple[Outcome, bool]:
    """One edit (``make(workspace)`` plans it): the notebook's bytes after, or the refusal; and
    whether it wrote (an edit that changes nothing records no history entry)."""
    before = (work / NAME).read_bytes()
    try:
        plan = make(workspace)  # type: ignore[operator]
        before = (work / NAME).read_bytes()  # as the plan left it (a change made meanwhile stays)
        written = workspace.apply(plan).changed
    except NbeditError as error:
        assert (work / NAME).read_bytes() == before, "a refused edit changed the notebook"
        return ("refused", type(error).__name__), False
    return ("applied", (work / NAME).read_bytes()), written


def _cell_edits(workspace: Workspace) -> list[object]:
    """Edits of the first line of up to three cells, the new text with non-ASCII characters."""
    view = workspace.view(NAME)
    edits: list[object] = []
    blocks = view.split("# %% nbedit cell ")[1:]
    for block in blocks:
        header, _, body = block.partition("\n")
        first = body.split("\n", 1)[0]
        if len(first.strip()) < 3 or len(edits) == 3:
            continue
        index = int(header.split()[0])
        new = first + " # é ✓ 𝄞"
        edits.append(lambda ws, index=index, first=first, new=new: ws.plan_edit(NAME, first, new, cell=index))
    return edits


def _view_diff(workspace: Workspace) -> Plan:
    return workspace.plan_patch(_view_diff_text(workspace))


def _view_diff_text(workspace: Workspace) -> str:
    """A unified diff of the editable view as it is now, every tenth line changed (a two-byte character)."""
    lines = workspace.view(NAME).splitlines(keepends=True)
    changed = [
        line[:-1] + " ñ\n" if index % 10 == 1 and line[-1:] == "\n" and line[:3] != "# %" else line
        for index, line in enumerate(lines)
    ]
    return "".join(difflib.unified_diff(lines, changed, f"a/{NAME}", f"b/{NAME}"))


def _changed_meanwhile(workspace: Workspace) -> Plan:
    """An edit whose notebook changes between plan and apply: one byte, same size and time."""
    plan = workspace.plan_patch(_view_diff_text(workspace))
    target = workspace.root / NAME
    info = target.stat()
    data = bytearray(target.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("1") if data[middle] != ord("1") else ord("2")
    target.write_bytes(bytes(data))
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    return plan


def _missing(workspace: Workspace) -> object:
    return lambda ws: ws.plan_edit(NAME, "this text is in no cell of the notebook", "x", cell=0)


def run(notebook: Path, work: Path, path_name: str, *, history: bool) -> tuple[list[Outcome], Reached]:
    work.mkdir()
    original = notebook.read_bytes()
    (work / NAME).write_bytes(original)
    workspace = Workspace(work, history=history, home=work.parent / f"{work.name}-home", live=None)
    outcomes: list[Outcome] = []
    with forced(path_name), Reached() as reached:
        try:
            edits = [*_cell_edits(workspace), _missing(workspace)]
        except NbeditError as error:  # the notebook is refused as a whole
            return [("refused", type(error).__name__)], reached
        written = 0
        for make in [*edits, _view_diff]:
            outcome, wrote = _step(workspace, work, make)
            outcomes.append(outcome)
            written += wrote
        kept = (work / NAME).read_bytes()
        outcome, _ = _step(workspace, work, _changed_meanwhile)
        outcomes.append(outcome)
        if outcome[0] == "refused":
            (work / NAME).write_bytes(kept)  # the change made meanwhile taken back
        if history:
            for _ in range(written):
                workspace.undo()
            assert (work / NAME).read_bytes() == original, f"{path_name}: undo did not give back the original"
    workspace.close()
    return outcomes, reached


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_forced_notebook_paths_make_the_ordinary_bytes(notebook: Path, tmp_path: Path) -> None:
    reference, _ = run(notebook, tmp_path / "reference", "reference", history=False)
    if notebook.parent.name == "notebooks":
        assert any(kind == "applied" for kind, _ in reference)
        assert reference[-1] == ("refused", "StaleFile")  # the notebook changed between plan and apply
    paths = (
        ("notebook", False),
        ("notebook-batches", False),
        ("notebook-scan", False),
        ("notebook-all", True),
    )
    for path_name, history in paths:
        outcomes, reached = run(notebook, tmp_path / path_name, path_name, history=history)
        for number, (outcome, expected) in enumerate(zip(outcomes, reference, strict=True)):
            assert outcome == expected, f"{path_name}: edit {number} differs: {outcome[0]} vs {expected[0]}"
        if path_name != "notebook-scan" and notebook.parent.name == "notebooks":  # old ones: nbformat 3
            assert reached.counts["cell_bytes"] > 0, f"{path_name}: msgspec never read the cells"


def test_the_notebooks_are_there() -> None:
    assert len(NOTEBOOKS) >= 15
