"""Rewind in a real Jupyter kernel: ten cell runs and two agent turns, a person's edit from
another process in between, a rewind to each checkpoint (and its undo), and a refused overlap.

Executed headless with nbclient like ``test_jupyter_kernel``; every expected file is built
here from the list of edits, never by the merge under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.test_jupyter_kernel import _kernel_available, _outputs

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.slow,
    pytest.mark.skipif(
        not _kernel_available(), reason="no python3 kernelspec (python -m ipykernel install --sys-prefix)"
    ),
]

BASE = [f"line {number}\n" for number in range(32)]
CELLS = [(count, 2 * count, f"cell {count}\n") for count in range(1, 11)]  # cell run k rewrites line 2k
TURNS = {  # turn -> [(file, line, new)], two tool calls each
    "turn-1": [("lines.txt", 25, "agent one\n"), ("lines.txt", 23, "agent one again\n")],
    "turn-2": [("lines.txt", 29, "agent two\n"), ("other.txt", 0, "agent two was here\n")],
}
PERSON = (27, "person's line\n")  # from another process, after cell run 6
OTHER = ["other 0\n", "other 1\n"]

PERSON_CODE = (
    "import subprocess, sys\n"
    "code = 'import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.write_text(p.read_text().replace(sys.argv[2], sys.argv[3]))'\n"
    "subprocess.run([sys.executable, '-c', code, 'lines.txt', {old!r}, {new!r}], check=True)"
)


def _edit_cell(path: str, old: str, new: str) -> str:
    return f"%%edit {path} --yes\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


def _agent_cell(turn: str) -> str:
    calls = "\n".join(
        f"    print(tools.run('edit', {{'path': {path!r}, 'old': {BASE[line] if path == 'lines.txt' else OTHER[line]!r}, "
        f"'new': {new!r}}}, call_id='{turn}-call-{index}'))"
        for index, (path, line, new) in enumerate(TURNS[turn])
    )
    return (
        "from nbedit.agents.functions import FunctionTools\n"
        "from nbedit.jupyter.kernel import session_id\n"
        "from nbedit.workspace import Workspace\n"
        "tools = FunctionTools(Workspace('.', session=session_id()))\n"
        f"with tools.session.turn({turn!r}):\n{calls}"
    )


REWIND_EACH = """
import json, pathlib
from nbedit.jupyter.kernel import session_id
from nbedit.workspace import Workspace
ip = get_ipython()
read = lambda: {name: pathlib.Path(name).read_text() for name in ("lines.txt", "other.txt")}
results = []
for checkpoint in Workspace('.', session=session_id()).checkpoints():
    before = read()
    review = ip.run_line_magic("nbedit", f"rewind {checkpoint.key} --yes")
    rewound = read()
    ip.run_line_magic("nbedit", "undo --yes")
    results.append({"key": checkpoint.key, "label": checkpoint.label, "entries": len(checkpoint.entries),
                    "status": review.status, "rewound": rewound, "redone": read() == before})
print("RESULTS" + json.dumps(results))
"""


def _state(checkpoints_before: list[str], order: list[str], person: bool) -> dict[str, str]:
    lines, other = BASE.copy(), OTHER.copy()
    for name in order:
        if name not in checkpoints_before:
            break
        if name.startswith("turn"):
            for path, line, new in TURNS[name]:
                (lines if path == "lines.txt" else other)[line] = new
        else:
            count = int(name.removeprefix("cell "))
            lines[2 * count] = CELLS[count - 1][2]
    if person:
        lines[PERSON[0]] = PERSON[1]
    return {"lines.txt": "".join(lines), "other.txt": "".join(other)}


def test_rewind_to_each_checkpoint_in_a_kernel(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    (tmp_path / "lines.txt").write_text("".join(BASE))
    (tmp_path / "other.txt").write_text("".join(OTHER))
    cells = ["%load_ext nbedit"]
    order: list[str] = []
    for count, line, new in CELLS:
        cells.append(_edit_cell("lines.txt", BASE[line], new))
        order.append(f"cell {count}")
        if count == 5:
            cells.append(_agent_cell("turn-1"))
            order.append("turn-1")
        if count == 6:
            cells.append(PERSON_CODE.format(old=BASE[PERSON[0]], new=PERSON[1]))
    cells.append(_agent_cell("turn-2"))
    order.append("turn-2")
    cells.append(REWIND_EACH)
    # the overlap: the person rewrites what cell run 3 wrote; rewinding to it must write nothing
    cells.append(PERSON_CODE.format(old=CELLS[2][2], new="person rewrote cell 3\n"))
    cells.append(
        "import pathlib\nbefore = {n: pathlib.Path(n).read_bytes() for n in ('lines.txt', 'other.txt')}"
    )
    cells.append(f"%nbedit rewind In[{4} --yes")  # filled in below with cell run 3's In[n]
    cells.append(
        "print('UNCHANGED', before == {n: pathlib.Path(n).read_bytes() for n in ('lines.txt', 'other.txt')})"
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    # In[n] of cell run 3: cells run in order, the first is In[1]
    notebook.cells[
        -2
    ].source = f"%nbedit rewind In[{cells.index(_edit_cell('lines.txt', BASE[6], CELLS[2][2])) + 1}] --yes"
    notebook.cells[-2].metadata["tags"] = ["raises-exception"]
    client = NotebookClient(
        notebook, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()

    printed = _outputs(notebook.cells[len(cells) - 5])
    results = json.loads(printed.split("RESULTS", 1)[1].strip())
    assert [result["label"] for result in results] == [
        *(f"In[{cells.index(_edit_cell('lines.txt', BASE[line], new)) + 1}]" for _, line, new in CELLS[:5]),
        "agent turn turn-1",
        *(f"In[{cells.index(_edit_cell('lines.txt', BASE[line], new)) + 1}]" for _, line, new in CELLS[5:]),
        "agent turn turn-2",
    ]
    assert [result["entries"] for result in results] == [1] * 5 + [2] + [1] * 5 + [2]
    for index, result in enumerate(results):
        expected = _state(order[:index], order, person=True)
        assert result["status"] == "applied", result
        assert result["rewound"] == expected, (result["label"], index)
        assert result["redone"], result["label"]

    (error,) = [output for output in notebook.cells[-2].outputs if output["output_type"] == "error"]
    refused = "\n".join(error["traceback"])
    assert (
        error["ename"] == "RewindConflict"
        and "person rewrote cell 3" in refused
        and "<<<<<<< rewind" in refused
    )
    assert "nothing was written" in refused
    assert "UNCHANGED True" in _outputs(notebook.cells[-1])
    assert "person rewrote cell 3" in (tmp_path / "lines.txt").read_text()
