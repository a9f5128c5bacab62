"""Section: the review widget for a 1,000-hunk change to a 100,000-line file.

What a person waits for after ``%%patch``: building the ``ReviewWidget`` (its
rows document, one widget model). The payload is everything the widget sends to
the browser and a saved notebook keeps: the JSON of its synced state (rows,
script and style sheet included). The peer is
``difflib.HtmlDiff().make_table`` on the same pair of texts (context mode, 3
lines), the stdlib's side-by-side HTML diff; it runs in a subprocess with a time
limit because on files this size it can take minutes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.corpus import code_lines, edit_spread, git_diff, write_text
from benchmarks.timing import Row

__all__ = ["run"]

LINES = 100_000
HUNKS = 1_000
NAME = "big.py"
PEER_LIMIT = 60.0

_PEER_SCRIPT = r"""
import difflib, sys, time
before = open(sys.argv[1], encoding="utf-8").read().splitlines()
after = open(sys.argv[2], encoding="utf-8").read().splitlines()
start = time.perf_counter()
table = difflib.HtmlDiff().make_table(before, after, context=True, numlines=3)
print(time.perf_counter() - start, len(table.encode()))
"""


def _payload(widget: Any) -> int:
    return len(json.dumps(widget.get_state()).encode())


NOTEBOOK_CELLS = 5_000


def _notebook_rows(scratch: Path) -> list[Row]:
    """The same budget for a notebook drawn cell by cell: one edit in every fifth cell of a
    5,000-cell notebook (1,000 hunks, 110,000 lines of cell view).

    The patch is written by nbedit's own ``text_diff`` (the same bytes ``difflib.unified_diff``
    writes here): difflib's ``find_longest_match`` rescans the rest of the text after every
    change, hunks x lines, 42 s of CPU at 5,000 cells and minutes at 20,000, all of it spent
    making the benchmark's input."""
    import nbformat

    from nbedit.engine.whole_diff import text_diff
    from nbedit.jupyter.review import ReviewWidget
    from nbedit.render.cells import cached_cells
    from nbedit.render.rows import _aligned_rows
    from nbedit.render.summary import _cached_counts, cached_view
    from nbedit.workspace import Workspace

    folder = scratch / "notebook"
    folder.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "".join(f"v{cell}_{line} = {line}\n" for line in range(20)) + f"print({cell})"
        )
        for cell in range(NOTEBOOK_CELLS)
    ]
    nbformat.write(notebook, str(folder / "big.ipynb"))
    workspace = Workspace(folder, history=False)
    view = workspace.view("big.ipynb")
    lines = view.splitlines(True)
    edited = [
        line.replace("= 10\n", "= 1000\n")
        if line.startswith("v") and "_10 = 10\n" in line and int(line[1 : line.index("_")]) % 5 == 0
        else line
        for line in lines
    ]
    patch = text_diff(view, "".join(edited), "big.ipynb")
    timings = []
    widget = None
    for _ in range(2):
        plan = workspace.plan_patch(patch)
        # an equal plan would find every cache warm: each build starts cold
        for cache in (_aligned_rows, cached_cells, cached_view, _cached_counts):
            cache.cache_clear()
        start = time.perf_counter()
        widget = ReviewWidget(workspace, plan)
        timings.append(time.perf_counter() - start)
    assert widget is not None
    hunks = len(widget.plan.files[0].hunks)
    payload = _payload(widget)
    section = f"review widget notebook {hunks:,} cell edits, {NOTEBOOK_CELLS:,} cells"
    return [
        Row(
            section,
            "build ReviewWidget (cells)",
            min(timings),
            "s",
            target="< 1 s",
            passed=min(timings) < 1.0,
            samples={"nbedit": timings},
        ),
        Row(
            section, "widget state payload", payload / 1e6, "MB", target="< 2 MB", passed=payload < 2_000_000
        ),
    ]


def run(scratch: Path, repeat: int = 3) -> list[Row]:
    from nbedit.jupyter.review import ReviewWidget
    from nbedit.render.rows import _aligned_rows
    from nbedit.render.summary import _cached_counts, cached_view
    from nbedit.workspace import Workspace

    edited = edit_spread(code_lines(LINES, seed=9), HUNKS, seed=10)
    repository = scratch / "repository"
    patch = git_diff(repository, NAME, edited.before, edited.after)
    write_text(str(repository / NAME), edited.before)
    write_text(str(scratch / "after.py"), edited.after)

    workspace = Workspace(repository, history=False)
    timings = []
    widget = None
    for _ in range(min(repeat, 2)):  # each build is slow today: keep the whole run under 5 minutes
        plan = workspace.plan_patch(patch)  # a fresh plan: no cached diff or rows
        _aligned_rows.cache_clear()  # nor remembered line alignments from the previous build
        cached_view.cache_clear()  # nor the rows of the equal plan drawn before
        _cached_counts.cache_clear()  # nor its counted lines
        start = time.perf_counter()
        widget = ReviewWidget(workspace, plan)
        timings.append(time.perf_counter() - start)
    payload = _payload(widget)
    hunk_boxes = sum(1 for key in widget.toggles if key[1] is not None)  # type: ignore[union-attr]

    try:
        finished = subprocess.run(
            [sys.executable, "-c", _PEER_SCRIPT, str(repository / NAME), str(scratch / "after.py")],
            capture_output=True,
            text=True,
            check=True,
            timeout=PEER_LIMIT,
        )
        peer_seconds, peer_bytes = (float(value) for value in finished.stdout.split())
        peer_note = ""
    except subprocess.TimeoutExpired:
        peer_seconds, peer_bytes, peer_note = None, None, f"HtmlDiff did not finish in {PEER_LIMIT:.0f} s"

    section = f"review widget {HUNKS:,} hunks, {LINES:,} lines"
    return _notebook_rows(scratch) + [
        Row(
            section,
            "build ReviewWidget",
            min(timings),
            "s",
            "difflib.HtmlDiff.make_table",
            peer_seconds,
            "< 1 s",
            min(timings) < 1.0 and hunk_boxes == HUNKS,
            note=(f"{hunk_boxes} hunk checkboxes" if hunk_boxes != HUNKS else "") + peer_note,
            samples={"nbedit": timings},
        ),
        Row(
            section,
            "widget state payload",
            payload / 1e6,
            "MB",
            "difflib.HtmlDiff.make_table",
            peer_bytes / 1e6 if peer_bytes is not None else None,
            "< 2 MB",
            payload < 2_000_000,
        ),
    ]
