"""Limits on cells and hunks (issue 27): a clear refusal, every file byte-identical, before the work.

And the cyclic garbage collector, paused while a big input becomes objects, is always back on.
"""

from __future__ import annotations

import gc
import json
import threading
from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit._gc import paused
from nbedit.engine.notebook import NotebookDocument
from nbedit.engine.text_edit import DEFAULT_MAX_CELLS, DEFAULT_MAX_HUNKS
from nbedit.errors import FileTooLarge, OptionError


def _notebook(cells: int) -> bytes:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{index}",
                "metadata": {},
                "outputs": [],
                "source": [f"x{index} = {index}\n", f"print(x{index})"],
            }
            for index in range(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(notebook, indent=1, sort_keys=True) + "\n").encode()


def _patch(hunks: int) -> str:
    parts = ["--- a/f.txt\n+++ b/f.txt\n"]
    for index in range(hunks):
        line = 10 * index + 1
        parts.append(f"@@ -{line},1 +{line},1 @@\n-line {line}\n+LINE {line}\n")
    return "".join(parts)


def _home(tmp_path: Path) -> str:
    return str(tmp_path / "home")


def test_the_default_limits_are_generous_and_stated() -> None:
    assert DEFAULT_MAX_CELLS == 1_000_000
    assert DEFAULT_MAX_HUNKS == 200_000


def test_a_notebook_over_the_cell_limit_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    data = _notebook(5)
    (tmp_path / "n.ipynb").write_bytes(data)
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_cells=4)
    with pytest.raises(FileTooLarge) as caught:
        workspace.plan_edit("n.ipynb", "x1 = 1\n", "x1 = 2\n")
    error = caught.value
    assert (error.unit, error.limit, error.size, error.path) == ("cells", 4, 5, "n.ipynb")
    assert "more than 4 cells" in str(error)
    assert "max_cells" in str(error) and "Split the notebook" in str(error)
    assert (tmp_path / "n.ipynb").read_bytes() == data
    # at the limit, the edit goes through
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_cells=5)
    workspace.apply(workspace.plan_edit("n.ipynb", "x1 = 1\n", "x1 = 2\n"))
    assert (tmp_path / "n.ipynb").read_bytes() == data.replace(b'"x1 = 1\\n"', b'"x1 = 2\\n"')


def test_the_cell_scan_stops_at_the_limit() -> None:
    # the bytes after the limit are not read: broken JSON there is not reported, the limit is
    data = _notebook(3)
    broken = data.replace(b'"id": "c2"', b'"id": c2', 1)
    with pytest.raises(FileTooLarge, match="more than 2 cells"):
        NotebookDocument.parse(broken, "n.ipynb", max_cells=2)
    with pytest.raises(Exception, match="not valid JSON"):
        NotebookDocument.parse(broken, "n.ipynb", max_cells=3)


def test_a_change_over_the_hunk_limit_is_refused_before_any_is_located(tmp_path: Path) -> None:
    original = "".join(f"line {number}\n" for number in range(1, 31)).encode()
    (tmp_path / "f.txt").write_bytes(original)
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_hunks=2)
    with pytest.raises(FileTooLarge) as caught:
        workspace.plan_patch(_patch(3))
    error = caught.value
    assert (error.unit, error.size, error.limit, error.path) == ("hunks", 3, 2, "f.txt")
    assert "3 hunks, over the 2-hunk limit" in str(error) and "max_hunks" in str(error)
    assert (tmp_path / "f.txt").read_bytes() == original
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_hunks=3)
    workspace.apply(workspace.plan_patch(_patch(3)))
    assert (tmp_path / "f.txt").read_bytes().count(b"LINE") == 3


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_a_limit_must_be_a_positive_whole_number(tmp_path: Path, bad: object) -> None:
    with pytest.raises(OptionError, match="max_cells"):
        Workspace(tmp_path, home=_home(tmp_path), max_cells=bad)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="max_hunks"):
        Workspace(tmp_path, home=_home(tmp_path), max_hunks=bad)  # type: ignore[arg-type]


def test_the_collector_is_back_on_after_a_plan_that_failed(tmp_path: Path) -> None:
    (tmp_path / "n.ipynb").write_bytes(_notebook(3))
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_cells=2)
    assert gc.isenabled()
    with pytest.raises(FileTooLarge):
        workspace.plan_edit("n.ipynb", "x1 = 1\n", "x1 = 2\n")
    assert gc.isenabled()


def test_paused_nests_across_threads_and_keeps_a_callers_choice() -> None:
    assert gc.isenabled()
    inner_done = threading.Event()
    with paused():
        assert not gc.isenabled()

        def other() -> None:
            with paused():
                assert not gc.isenabled()
            inner_done.set()

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert inner_done.is_set()
        assert not gc.isenabled()  # the other thread's pause ended, this one has not
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
