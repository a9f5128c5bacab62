"""Builds the test notebooks in code, so every case says exactly what it contains.

``build_notebook`` makes one notebook as plain JSON data (code, markdown and raw
cells, image/png, stream, execute_result and error outputs, an attachment,
non-ASCII text, a source line that looks like a cell-view marker, an empty cell,
a source with a trailing newline), for nbformat 4.4 (no ids) or 4.5 (ids).

``FORMATS`` are the serialisers: nbformat's canonical form and hand-formatted
variants (indent 2 with another key order, compact separators with ``\\u``
escapes, ``source`` as one string, tabs with CRLF newlines). Each one is
deterministic, so the expected bytes after an edit are simply the same
serialiser applied to the expected notebook.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import nbformat

Notebook = dict[str, Any]

PNG = base64.b64encode(bytes(range(256)) * 3).decode("ascii") + "\n"

# The order a hand-written tool might use; differs from sorted order on purpose.
_CELL_KEY_ORDER = ("id", "cell_type", "source", "metadata", "execution_count", "outputs", "attachments")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def code_cell(
    source: str, outputs: list[dict[str, Any]] | None = None, count: int | None = None, **extra: Any
) -> dict[str, Any]:
    cell = {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "outputs": outputs or [],
        "source": _lines(source),
    }
    cell.update(extra)
    return cell


def markdown_cell(source: str, **extra: Any) -> dict[str, Any]:
    cell = {"cell_type": "markdown", "metadata": {}, "source": _lines(source)}
    cell.update(extra)
    return cell


def raw_cell(source: str, **extra: Any) -> dict[str, Any]:
    cell = {"cell_type": "raw", "metadata": {}, "source": _lines(source)}
    cell.update(extra)
    return cell


def build_notebook(minor: int = 5) -> Notebook:
    cells = [
        markdown_cell(
            "# Analyse des données 📊\n\nCafé, naïve, 日本語.", attachments={"chart.png": {"image/png": PNG}}
        ),
        code_cell(
            "import math\n\nvalue = math.pi\nprint(value)",
            outputs=[{"name": "stdout", "output_type": "stream", "text": ["3.141592653589793\n"]}],
            count=1,
        ),
        code_cell(
            "from IPython.display import Image\nImage(data)",
            outputs=[
                {
                    "data": {"image/png": PNG, "text/plain": ["<IPython.core.display.Image object>"]},
                    "metadata": {"image/png": {"width": 200}},
                    "output_type": "display_data",
                },
                {
                    "data": {"text/plain": ["42"]},
                    "execution_count": 2,
                    "metadata": {},
                    "output_type": "execute_result",
                },
            ],
            count=2,
            metadata={"tags": ["figure"], "scrolled": True},
        ),
        code_cell(
            "raise ValueError('ünïcode')",
            outputs=[
                {
                    "ename": "ValueError",
                    "evalue": "ünïcode",
                    "output_type": "error",
                    "traceback": ["\u001b[0;31mValueError\u001b[0m: ünïcode"],
                }
            ],
            count=3,
        ),
        raw_cell("Raw text for nbconvert\n", metadata={"format": "text/restructuredtext"}),
        code_cell("# %% nbedit cell 9 [code] id=fake\nx = 1  # a line that looks like a marker"),
        markdown_cell(""),
        code_cell('text = "tab\\tquote\\"backslash\\\\"\nsummary = value * 2'),
    ]
    notebook: Notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.0"},
        },
        "nbformat": 4,
        "nbformat_minor": minor,
    }
    if minor >= 5:
        for index, cell in enumerate(cells):
            cell["id"] = f"c{index:02d}-{cell['cell_type'][:2]}"
    return notebook


def many_cells_notebook(count: int, minor: int = 5) -> Notebook:
    cells = []
    for index in range(count):
        if index % 3 == 2:
            cell = markdown_cell(f"## Section {index}\nSome text about step {index}.")
        else:
            cell = code_cell(f"x{index} = {index}\nprint(x{index})\n# done", count=index)
        if minor >= 5:
            cell["id"] = f"cell-{index}"
        cells.append(cell)
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


def big_image_notebook(megabytes: int, cells: int = 100) -> Notebook:
    code_cells = cells - cells // 3
    per_image = megabytes * 1_000_000 // code_cells * 3 // 4
    chunk = bytes(range(256)) * (per_image // 256 + 1)
    notebook = many_cells_notebook(cells)
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            image = base64.b64encode(chunk[index % 7 :][:per_image]).decode("ascii") + "\n"
            cell["outputs"] = [{"data": {"image/png": image}, "metadata": {}, "output_type": "display_data"}]
    return notebook


# -- serialisers ---------------------------------------------------------------------------


def canonical(notebook: Notebook) -> bytes:
    """What Jupyter writes: ``nbformat.write`` is ``nbformat.writes`` plus a final newline."""
    return (nbformat.writes(nbformat.from_dict(copy.deepcopy(notebook))) + "\n").encode("utf-8")


def _reorder(cell: dict[str, Any]) -> dict[str, Any]:
    ordered = {key: cell[key] for key in _CELL_KEY_ORDER if key in cell}
    ordered.update((key, value) for key, value in cell.items() if key not in ordered)
    return ordered


def indent2_reordered(notebook: Notebook) -> bytes:
    data = dict(notebook, cells=[_reorder(cell) for cell in notebook["cells"]])
    data = {key: data[key] for key in ("nbformat", "nbformat_minor", "metadata", "cells")}
    return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")


def compact_escaped(notebook: Notebook) -> bytes:
    return json.dumps(notebook, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def string_sources(notebook: Notebook) -> bytes:
    cells = [dict(cell, source="".join(cell["source"])) for cell in notebook["cells"]]
    return (
        json.dumps(dict(notebook, cells=cells), indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8")
        + b"\n"
    )


def tabs_crlf(notebook: Notebook) -> bytes:
    text = json.dumps(notebook, indent="\t", sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\r\n").encode("utf-8")


FORMATS: dict[str, Callable[[Notebook], bytes]] = {
    "canonical": canonical,
    "indent2-reordered": indent2_reordered,
    "compact-escaped": compact_escaped,
    "string-sources": string_sources,
    "tabs-crlf": tabs_crlf,
}


def normalised(notebook: Notebook) -> Notebook:
    """A notebook with every source as a list of lines, the form the builders use."""
    result = copy.deepcopy(notebook)
    for cell in result["cells"]:
        if isinstance(cell.get("source"), str):
            cell["source"] = _lines(cell["source"])
    return result


def set_source(notebook: Notebook, index: int, source: str) -> Notebook:
    """A copy with one cell's source replaced (as a list of lines)."""
    result = copy.deepcopy(notebook)
    result["cells"][index]["source"] = _lines(source)
    return result


def source_of(notebook: Notebook, index: int) -> str:
    source = notebook["cells"][index]["source"]
    return source if isinstance(source, str) else "".join(source)
