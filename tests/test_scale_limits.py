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
from nbedit.engine.text_edit import DEFAULT_MAX_CELLS, DEFAULT_MAX_HUNKS, DEFAULT_MAX_SEQUENTIAL_WORK
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
    assert DEFAULT_MAX_SEQUENTIAL_WORK == 10_000_000_000


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


def _blocks(path: str, pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n" for old, new in pairs)
    return f"{path}\n```python\n{body}```\n"


@pytest.mark.parametrize("name", ["f.py", "n.ipynb"])
def test_search_replace_blocks_over_the_work_limit_are_refused_before_any_is_located(
    tmp_path: Path, name: str
) -> None:
    # in-order blocks cost blocks x characters of the text (each is located in what the ones before
    # left): over the limit they are refused at once, a block whose old text is nowhere included
    if name.endswith(".ipynb"):
        original = _notebook(4)
    else:
        original = "".join(f"x{index} = {index}\nprint(x{index})\n" for index in range(4)).encode()
    (tmp_path / name).write_bytes(original)
    size = len(Workspace(tmp_path, home=_home(tmp_path), history=False).view(name))
    blocks = [("x1 = 1\n", "x1 = 10\n"), ("x2 = 2\n", "x2 = 20\n"), ("x3 = 3\n", "x3 = 30\n")]
    nowhere = [*blocks[:2], ("not in the file\n", "x\n")]
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_sequential_work=3 * size - 1)
    for change in (blocks, nowhere):
        with pytest.raises(FileTooLarge) as caught:
            workspace.plan_patch(_blocks(name, change))
        error = caught.value
        expected = ("block-characters", 3 * size, 3 * size - 1, name)
        assert (error.unit, error.size, error.limit, error.path) == expected
        assert "3 SEARCH/REPLACE blocks" in str(error) and "unified diff" in str(error)
        assert "max_sequential_work" in str(error) and "nothing was located or written" in str(error)
        assert (tmp_path / name).read_bytes() == original
    # fewer blocks, or a limit at the work, go through; one block is never in-order work
    workspace.apply(workspace.plan_patch(_blocks(name, blocks[:2])))
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_sequential_work=1)
    workspace.apply(workspace.plan_patch(_blocks(name, blocks[2:])))
    after = (tmp_path / name).read_bytes()
    for old, new in blocks:
        assert old.strip().encode() not in after.replace(new.strip().encode(), b"")
    grown = len(workspace.view(name))  # each block wrote one character more
    assert grown == size + 3
    workspace = Workspace(tmp_path, home=_home(tmp_path), max_sequential_work=3 * grown)
    back = [(new, old) for old, new in blocks]
    workspace.apply(workspace.plan_patch(_blocks(name, back)))
    assert (tmp_path / name).read_bytes() == original


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_a_limit_must_be_a_positive_whole_number(tmp_path: Path, bad: object) -> None:
    with pytest.raises(OptionError, match="max_cells"):
        Workspace(tmp_path, home=_home(tmp_path), max_cells=bad)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="max_hunks"):
        Workspace(tmp_path, home=_home(tmp_path), max_hunks=bad)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="max_sequential_work"):
        Workspace(tmp_path, home=_home(tmp_path), max_sequential_work=bad)  # type: ignore[arg-type]


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
