"""Shared setup for the agent adapter tests: the small project and the recorded tool calls."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat

DATA = Path(__file__).resolve().parent / "data" / "agents"


def recorded(name: str) -> dict[str, Any]:
    """A file of recorded tool calls (tests/data/agents/NAME.json), by step name."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def notebook_bytes() -> bytes:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Analysis", id="intro"),
        nbformat.v4.new_code_cell("threshold = 10\nprint(threshold)", id="setup"),
    ]
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", text="10\n")]
    notebook.cells[1].execution_count = 1
    return nbformat.writes(notebook).encode("utf-8")


def make_project(root: Path) -> Path:
    for name, text in recorded("project").items():
        (root / name).write_bytes(text.encode("utf-8"))
    (root / "analysis.ipynb").write_bytes(notebook_bytes())
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` (history home excluded) with its bytes and mode."""
    files = {}
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if name != "home"]
        for name in names:
            path = Path(folder) / name
            files[str(path.relative_to(root))] = (path.read_bytes(), path.stat().st_mode)
    return files
