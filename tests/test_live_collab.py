"""``nbedit.live.collab`` against a real Jupyter server with real-time collaboration.

The server runs from the collaboration environment with a test-only extension
(``tests/live_collab_server.py``) that calls ``prepare``/``commit`` exactly as nbedit's
server extension does. A room is opened the way a tab opens one (the server holds the
shared document) and a collaborator's typing lands in it as a client's update would. The
assertions are on the bytes the server wrote and on what the live document holds; the
browser test (``test_browser_live_collab.py``) proves the same with real JupyterLab tabs.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytest.register_assert_rewrite("browser_support", "collab_support")

from collab_support import call, relative  # noqa: E402

from nbedit.live.protocol import (  # noqa: E402
    LiveChange,
    TextEdit,
    changes_to_json,
    notebook_change,
    text_change,
)

pytest_plugins = ["collab_support"]
pytestmark = [pytest.mark.slow]

CELLS = [
    ("markdown", "# Analysis"),
    ("code", "total = 1 + 1\nprint(total)"),
    ("code", 'label = "café ☕"\nlabel'),
    ("code", "def square(x):\n    return x * x"),
]


def write_notebook(path: Path) -> bytes:
    """A notebook with outputs and cell ids, written the way Jupyter writes it."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for number, (kind, source) in enumerate(CELLS):
        if kind == "markdown":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(source, execution_count=number)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"output {number}\n")]
        cell.id = f"cell-{number}"
        notebook.cells.append(cell)
    nbformat.write(notebook, str(path))
    return path.read_bytes()


def edited(before: bytes, index: int, old: str, new: str) -> bytes:
    notebook = nbformat.reads(before.decode(), as_version=4)
    assert old in notebook.cells[index].source
    notebook.cells[index].source = notebook.cells[index].source.replace(old, new)
    return (nbformat.writes(notebook) + "\n").encode()


def change_json(change: LiveChange) -> dict[str, Any]:
    return change.to_json()


@pytest.fixture
def notebook(collab_lab: Any, request: pytest.FixtureRequest) -> tuple[Path, bytes]:
    path = collab_lab.root / f"{request.node.name[:40]}.ipynb"
    before = write_notebook(path)
    assert call(collab_lab, "open", {"path": relative(collab_lab, path), "kind": "notebook"})["opened"]
    return path, before


def test_collaboration_is_available_and_a_closed_file_has_no_room(collab_lab: Any) -> None:
    assert call(collab_lab, "state")["available"] is True
    path = collab_lab.root / "closed.ipynb"
    before = write_notebook(path)
    change = notebook_change("closed.ipynb", before, edited(before, 1, "1 + 1", "2 + 2"))
    assert call(collab_lab, "prepare", {"change": change_json(change)})["result"] is None
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "WriteError" and "no longer open" in reply["message"]
    assert path.read_bytes() == before


def test_commit_rewrites_only_the_edited_cell_and_the_server_saves(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    after = edited(before, 2, '"café ☕"', '"naïve 🍵 café"')
    change = notebook_change(relative(collab_lab, path), before, after)
    assert [edit.operation for edit in change.cells] == ["replace"]
    prepared = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert prepared["state"] == "live", prepared
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    saved = path.read_bytes()
    assert reply == {"sha256": hashlib.sha256(saved).hexdigest()}
    # the server wrote the notebook as Jupyter writes it: the planned result byte for byte, but for
    # the empty language_info every collaborative room adds to a notebook's metadata when it loads it
    expected = json.loads(after)
    expected["metadata"]["language_info"] = {"name": ""}
    assert saved == (json.dumps(expected, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()
    cells = json.loads(saved)["cells"]
    assert [cell["outputs"] for cell in cells[1:]] == [
        [{"name": "stdout", "output_type": "stream", "text": [f"output {number}\n"]}] for number in (1, 2, 3)
    ]
    # the live document holds the change too: the same change again is a conflict now
    again = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert again["state"] == "conflict" and "cell 3 (id cell-2)" in again["detail"]


def test_typing_in_the_edited_cell_is_a_conflict_and_nothing_is_applied(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    name = relative(collab_lab, path)
    change = notebook_change(name, before, edited(before, 1, "1 + 1", "40 + 2"))
    call(collab_lab, "type", {"path": name, "kind": "notebook", "cell": 1, "text": "\n# typed, not saved"})
    prepared = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert prepared["state"] == "conflict"
    typed = "total = 1 + 1\nprint(total)\n# typed, not saved"
    assert prepared["conflicts"] == [
        {"where": "cell 2 (id cell-1)", "expected": "total = 1 + 1\nprint(total)", "live": typed}
    ]
    assert "cell 2 (id cell-1)" in prepared["detail"]
    live = prepared["document"]
    assert [cell["id"] for cell in live] == ["cell-0", "cell-1", "cell-2", "cell-3"]
    assert live[1] == {"id": "cell-1", "cell_type": "code", "source": typed}

    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "LiveConflict"
    assert reply["conflicts"] == [[name, "cell 2 (id cell-1)", "total = 1 + 1\nprint(total)", typed]]
    assert reply["documents"] == {name: live}
    assert "re-plan" in reply["message"]
    assert path.read_bytes() == before
    # nothing reached the live document either
    assert call(collab_lab, "prepare", {"change": change_json(change)})["result"]["document"] == live


def test_typing_in_another_cell_is_kept_and_saved_with_the_change(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    name = relative(collab_lab, path)
    change = notebook_change(name, before, edited(before, 3, "x * x", "x ** 2"))
    call(collab_lab, "type", {"path": name, "kind": "notebook", "cell": 1, "text": "\nprint('typed')"})
    assert call(collab_lab, "prepare", {"change": change_json(change)})["result"]["state"] == "live"
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    saved = path.read_bytes()
    assert reply["sha256"] == hashlib.sha256(saved).hexdigest()
    sources = ["".join(cell["source"]) for cell in json.loads(saved)["cells"]]
    assert sources[1] == "total = 1 + 1\nprint(total)\nprint('typed')"
    assert sources[3] == "def square(x):\n    return x ** 2"
    assert sources[0] == "# Analysis" and sources[2] == 'label = "café ☕"\nlabel'


def test_several_cells_change_in_one_transaction(collab_lab: Any, notebook: tuple[Path, bytes]) -> None:
    path, before = notebook
    after = edited(edited(before, 0, "Analysis", "Results"), 3, "return x * x", "return x * x  # squared")
    change = notebook_change(relative(collab_lab, path), before, after)
    assert len(change.cells) == 2
    assert "sha256" in call(collab_lab, "commit", {"change": change_json(change)})
    saved = json.loads(path.read_bytes())
    assert saved["cells"] == json.loads(after)["cells"]


def test_one_conflicting_cell_blocks_the_other_cells_too(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    name = relative(collab_lab, path)
    after = edited(edited(before, 1, "1 + 1", "3"), 3, "x * x", "x + x")
    change = notebook_change(name, before, after)
    call(collab_lab, "type", {"path": name, "kind": "notebook", "cell": 3, "text": " + 0"})
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "LiveConflict" and [item[1] for item in reply["conflicts"]] == [
        "cell 4 (id cell-3)"
    ]
    assert path.read_bytes() == before
    live = call(collab_lab, "prepare", {"change": change_json(change)})["result"]["document"]
    assert live[1]["source"] == "total = 1 + 1\nprint(total)"  # cell 2 was not applied alone


def reparsed(before: bytes, change: Any) -> bytes:
    notebook = nbformat.reads(before.decode(), as_version=4)
    change(notebook)
    return (nbformat.writes(notebook) + "\n").encode()


def test_cells_inserted_deleted_and_retyped_in_one_transaction(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook

    def restructure(notebook: Any) -> None:
        del notebook.cells[0]  # the markdown title goes
        notebook.cells[1].cell_type = "markdown"  # the label cell becomes markdown
        notebook.cells[1].source = "A *label*"
        for key in ("outputs", "execution_count"):
            del notebook.cells[1][key]
        added = nbformat.v4.new_code_cell("inserted = True")
        added.id = "cell-new"
        notebook.cells.insert(2, added)
        notebook.metadata["nbedit"] = {"reviewed": True}

    after = reparsed(before, restructure)
    change = notebook_change(relative(collab_lab, path), before, after)
    assert change.structural and {edit.operation for edit in change.cells} == {"replace", "insert", "delete"}
    assert call(collab_lab, "prepare", {"change": change_json(change)})["result"]["state"] == "live"
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    saved = json.loads(path.read_bytes())
    assert reply["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [(cell["id"], cell["cell_type"], "".join(cell["source"])) for cell in saved["cells"]] == [
        ("cell-1", "code", "total = 1 + 1\nprint(total)"),
        ("cell-2", "markdown", "A *label*"),
        ("cell-new", "code", "inserted = True"),
        ("cell-3", "code", "def square(x):\n    return x * x"),
    ]
    assert saved["cells"][0]["outputs"][0]["text"] == ["output 1\n"]  # outputs of the other cells kept
    assert saved["metadata"]["nbedit"] == {"reviewed": True}
    assert saved["metadata"]["kernelspec"]["name"] == "python3"


def test_a_structural_change_conflicts_with_an_unsaved_new_cell(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    name = relative(collab_lab, path)
    call(collab_lab, "insert", {"path": name, "index": 1, "source": "# a collaborator's new cell"})

    def delete_last(notebook: Any) -> None:
        del notebook.cells[3]

    change = notebook_change(name, before, reparsed(before, delete_last))
    prepared = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert prepared["state"] == "conflict"
    assert [item["where"] for item in prepared["conflicts"]] == ["the list of cells"]
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "LiveConflict"
    assert path.read_bytes() == before
    assert len(call(collab_lab, "prepare", {"change": change_json(change)})["result"]["document"]) == 5


def test_a_type_only_change_is_unsupported_and_nothing_is_written(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook

    def retype(notebook: Any) -> None:
        notebook.cells[0].cell_type = "raw"

    change = notebook_change(relative(collab_lab, path), before, reparsed(before, retype))
    prepared = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert prepared["state"] == "unsupported" and "without changing its source" in prepared["detail"]
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "WriteError" and "nothing was applied" in reply["message"]
    assert path.read_bytes() == before


TEXT = "def greet(name):\n    return 'hello ' + name  # café\n\n\nVALUE = 1\n"


def open_text(collab_lab: Any, name: str, content: bytes) -> Path:
    path = collab_lab.root / name
    path.write_bytes(content)
    assert call(collab_lab, "open", {"path": name, "kind": "text"})["opened"]
    return path


def test_text_file_lines_change_in_the_live_document(collab_lab: Any) -> None:
    path = open_text(collab_lab, "greet.py", TEXT.encode())
    after = TEXT.replace("'hello ' + name", "f'hello, {name}!'").replace("VALUE = 1", "VALUE = 2")
    change = text_change("greet.py", TEXT, after)
    assert len(change.lines) == 2
    assert call(collab_lab, "prepare", {"change": change_json(change)})["result"]["state"] == "live"
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert path.read_bytes() == after.encode()
    assert reply["sha256"] == hashlib.sha256(after.encode()).hexdigest()


def test_text_file_typing_on_the_edited_line_is_a_conflict(collab_lab: Any) -> None:
    path = open_text(collab_lab, "typed.py", TEXT.encode())
    call(collab_lab, "type", {"path": "typed.py", "kind": "text", "text": "# typed at the end\n"})
    other = text_change("typed.py", TEXT, TEXT.replace("VALUE = 1", "VALUE = 3"))
    # the typing sits after the last line: the edited line still holds its old text
    assert call(collab_lab, "prepare", {"change": change_json(other)})["result"]["state"] == "live"
    clash = LiveChange(
        "typed.py", "text", lines=(TextEdit(5, "", "# mine\n"),)
    )  # an insertion where the collaborator typed
    prepared = call(collab_lab, "prepare", {"change": change_json(clash)})["result"]
    assert prepared["state"] == "live"  # an insertion replaces nothing: nothing to lose
    clash_replace = LiveChange("typed.py", "text", lines=(TextEdit(5, "# other\n", "# mine\n"),))
    prepared = call(collab_lab, "prepare", {"change": change_json(clash_replace)})["result"]
    assert prepared["state"] == "conflict"
    assert prepared["conflicts"] == [
        {"where": "line 6", "expected": "# other\n", "live": "# typed at the end\n"}
    ]
    assert prepared["document"] == TEXT + "# typed at the end\n"
    reply = call(collab_lab, "commit", {"change": change_json(clash_replace)})
    assert reply["error"] == "LiveConflict" and [item[1] for item in reply["conflicts"]] == ["line 6"]
    assert path.read_bytes() == TEXT.encode()
    reply = call(collab_lab, "commit", {"change": change_json(other)})
    assert path.read_bytes() == (TEXT.replace("VALUE = 1", "VALUE = 3") + "# typed at the end\n").encode()


def test_a_crlf_text_file_is_not_rewritten_through_the_room(collab_lab: Any) -> None:
    content = TEXT.replace("\n", "\r\n")
    path = open_text(collab_lab, "windows.py", content.encode())
    change = text_change("windows.py", content, content.replace("VALUE = 1", "VALUE = 2"))
    prepared = call(collab_lab, "prepare", {"change": change_json(change)})["result"]
    assert prepared["state"] == "unsupported" and "line endings" in prepared["detail"]
    reply = call(collab_lab, "commit", {"change": change_json(change)})
    assert reply["error"] == "WriteError"
    assert path.read_bytes() == content.encode()


def live_endpoint(collab_lab: Any, name: str, changes: list[LiveChange]) -> dict[str, Any]:
    """POST to nbedit's own server extension (/nbedit/live/...), as the kernel's client does."""
    request = urllib.request.Request(
        f"{collab_lab.url}/nbedit/live/{name}",
        data=changes_to_json(changes).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.load(response)["results"])


def test_the_server_extension_checks_every_document_before_changing_any(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    path, before = notebook
    name = relative(collab_lab, path)
    text_path = open_text(collab_lab, "second.py", TEXT.encode())
    cell_change = notebook_change(name, before, edited(before, 1, "1 + 1", "1 + 2"))
    text_edit = text_change("second.py", TEXT, TEXT.replace("VALUE = 1", "VALUE = 5"))
    prepared = live_endpoint(collab_lab, "prepare", [cell_change, text_edit])
    assert {path: result["state"] for path, result in prepared.items()} == {name: "live", "second.py": "live"}

    # a collaborator now types on the line the text change rewrites
    clash = text_edit
    _replace_live_text(collab_lab, "second.py", TEXT.replace("VALUE = 1", "VALUE = 1  # typed"))
    results = live_endpoint(collab_lab, "commit", [cell_change, clash])
    assert results["second.py"]["state"] == "conflict", results
    assert name not in results or results[name].get("state") != "committed"
    assert path.read_bytes() == before  # the notebook, first in the list, was not applied
    assert text_path.read_bytes() == TEXT.encode()

    # with the typing undone by its author, both go through in one request
    _replace_live_text(collab_lab, "second.py", TEXT)
    results = live_endpoint(collab_lab, "commit", [cell_change, clash])
    assert [results[key]["state"] for key in (name, "second.py")] == ["committed", "committed"]
    assert results[name]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert text_path.read_bytes() == TEXT.replace("VALUE = 1", "VALUE = 5").encode()


def _replace_live_text(collab_lab: Any, name: str, text: str) -> None:
    reply = call(collab_lab, "replace", {"path": name, "text": text})
    assert reply["live"] == text


def test_a_notebook_without_cell_ids_is_edited_by_position(collab_lab: Any) -> None:
    """nbformat 4.4 has no cell ids; the room gives its cells ids of its own and drops them on save."""
    path = collab_lab.root / "old_format.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.nbformat_minor = 4
    notebook.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("b = 2")]
    for cell in notebook.cells:
        del cell["id"]
    path.write_text(json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
    before = path.read_bytes()
    assert call(collab_lab, "open", {"path": "old_format.ipynb", "kind": "notebook"})["opened"]

    def change(notebook: Any) -> None:
        notebook.cells[1].source = "b = 3"
        notebook.cells.insert(1, nbformat.v4.new_markdown_cell("between"))
        del notebook.cells[1]["id"]

    after = json.dumps(_with(before, change), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    live_change = notebook_change("old_format.ipynb", before, after.encode())
    assert all(edit.cell_id is None for edit in live_change.cells) and live_change.structural
    prepared = call(collab_lab, "prepare", {"change": change_json(live_change)})["result"]
    assert prepared["state"] == "live", prepared
    assert "sha256" in call(collab_lab, "commit", {"change": change_json(live_change)})
    saved = json.loads(path.read_bytes())
    assert [("id" in cell, cell["cell_type"], "".join(cell["source"])) for cell in saved["cells"]] == [
        (False, "code", "a = 1"),
        (False, "markdown", "between"),
        (False, "code", "b = 3"),
    ]


def _with(before: bytes, change: Any) -> Any:
    notebook = json.loads(before)
    node = nbformat.from_dict(notebook)
    change(node)
    return node


def test_the_cli_applies_through_the_room_and_history_records_the_saved_bytes(
    collab_lab: Any, notebook: tuple[Path, bytes]
) -> None:
    """The whole chain without a browser: the CLI (told where the server is), the workspace
    hook, the client, nbedit's server extension, the room; then undo the same way."""
    import os
    import subprocess
    import sys

    from nbedit.storage.history import HistoryStore

    path, before = notebook
    name = relative(collab_lab, path)
    home = collab_lab.root.parent / "cli-history"
    environment = {
        **os.environ,
        "NBEDIT_SERVER_URL": collab_lab.url,
        "NBEDIT_SERVER_ROOT": str(collab_lab.root),
        "NBEDIT_HOME": str(home),
    }

    def nbedit(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "nbedit", *arguments],
            cwd=collab_lab.root,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = nbedit("edit", name, "--old", "x * x", "--new", "x ** 2", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    saved = path.read_bytes()
    sources = ["".join(cell["source"]) for cell in json.loads(saved)["cells"]]
    assert sources[3] == "def square(x):\n    return x ** 2"
    # the room wrote the file (its metadata mark), and the history holds those very bytes
    assert json.loads(saved)["metadata"]["language_info"] == {"name": ""}
    with HistoryStore(home) as store:
        (entry,) = store.entries()
        ((_, _, before_sha, after_sha),) = store.file_fingerprints(entry.id)
    assert after_sha == hashlib.sha256(saved).hexdigest()
    assert before_sha == hashlib.sha256(before).hexdigest()  # nothing was typed: the disk was the live text
    # the live document has the change: the same edit again finds nothing to replace
    assert (
        call(collab_lab, "prepare", {"change": change_json(notebook_change(name, before, saved))})["result"][
            "state"
        ]
        == "conflict"
    )

    undone = nbedit("undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    restored = json.loads(path.read_bytes())
    assert "".join(restored["cells"][3]["source"]) == "def square(x):\n    return x * x"
    assert [cell["outputs"] for cell in restored["cells"][1:]] == [
        cell["outputs"] for cell in json.loads(before)["cells"][1:]
    ]
