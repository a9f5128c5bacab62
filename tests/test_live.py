"""Live tabs without a browser: the wire form, finding the server, and every way it can be missing.

The browser tests (``test_browser_live.py``) prove the whole chain in a real JupyterLab.
These cover the parts that run in the kernel or the CLI with real processes, real files
and real HTTP servers: discovery walks a real process tree to a real runtime file; a
server that is gone, or answers 404 because it has no nbedit extension, leaves today's
behaviour (the file written, one line on stderr); and a real Jupyter server with the
extension but no browser says every file is "closed".
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from nbedit.errors import LiveConflict, LiveDifference
from nbedit.live import protocol
from nbedit.live.client import LiveClient, LiveUnavailable
from nbedit.live.discovery import Server, find_server
from nbedit.live.protocol import CellEdit, LiveChange, TextEdit
from nbedit.live.rebase import live_base, zero_context_diff
from nbedit.workspace import Workspace

REPOSITORY = Path(__file__).resolve().parent.parent


def notebook_bytes(sources: list[str], metadata: dict[str, object] | None = None) -> bytes:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.update(metadata or {})
    for index, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source)
        cell.id = f"cell{index}"
        notebook.cells.append(cell)
    return (nbformat.writes(notebook) + "\n").encode()


# ---------------------------------------------------------------------- protocol


def test_a_notebook_change_names_only_the_edited_cell_with_its_old_source() -> None:
    before = notebook_bytes(["a = 1", "b = 2", "c = 3"])
    after = notebook_bytes(["a = 1", "b = 20", "c = 3"])
    change = protocol.notebook_change("nb.ipynb", before, after)
    assert change.cells == (CellEdit("replace", 1, "cell1", "code", "b = 2", "b = 20"),)
    assert not change.structural and change.metadata is None
    assert LiveChange.from_json(json.loads(json.dumps(change.to_json()))) == change


def test_inserted_deleted_cells_and_metadata_are_structural() -> None:
    before = notebook_bytes(["a = 1", "b = 2"])
    after = notebook_bytes(["a = 1"], metadata={"title": "x"})
    change = protocol.notebook_change("nb.ipynb", before, after)
    assert change.structural and change.metadata == {"title": "x"}
    assert [cell.operation for cell in change.cells] == ["delete"]
    assert change.cells[0].cell_id == "cell1" and change.cells[0].old_source == "b = 2"


def test_text_edits_keep_line_endings_and_anchor_insertions() -> None:
    before = "one\r\ntwo\r\nthree\r\n"
    after = "one\r\nTWO\r\nthree\r\nfour\r\n"
    change = protocol.text_change("t.py", before, after)
    assert change.lines == (
        TextEdit(1, "two\r\n", "TWO\r\n"),
        TextEdit(2, "three\r\n", "three\r\nfour\r\n"),  # the insertion carries the line above
    )
    top = protocol.text_change("t.py", "a\n", "new\na\n")
    assert top.lines == (TextEdit(0, "a\n", "new\na\n"),)
    assert protocol.text_change("t.py", "", "x\n").lines == (TextEdit(0, "", "x\n"),)


def test_changes_round_trip_and_bad_json_is_a_value_error() -> None:
    changes = (protocol.text_change("a.py", "x\n", "y\n"), LiveChange("b.ipynb", "notebook"))
    assert protocol.changes_from_json(protocol.changes_to_json(changes)) == changes
    for bad in ("[]", '{"changes": [{"kind": "text"}]}', "not json"):
        with pytest.raises(ValueError):
            protocol.changes_from_json(bad)


def test_file_change_leaves_undecodable_files_alone() -> None:
    assert protocol.file_change("a.bin", False, b"\xff\xfe\x00", b"\xff") is None
    assert protocol.file_change("a.ipynb", True, b"{not json", b"{}") is None


def test_saved_holds_checks_every_new_source() -> None:
    before = notebook_bytes(["a = 1", "b = 2"])
    after = notebook_bytes(["a = 1", "b = 3"])
    change = protocol.notebook_change("nb.ipynb", before, after)
    assert protocol.saved_holds(change, after)
    assert not protocol.saved_holds(change, before)
    text = protocol.text_change("t.py", "x = 1\n", "x = 2\n")
    assert protocol.saved_holds(text, b"x = 2\n") and not protocol.saved_holds(text, b"x = 1\n")


# ---------------------------------------------------------------------- re-planning on a live document


def test_live_base_puts_the_tabs_source_into_the_edited_cell_only() -> None:
    before = notebook_bytes(["a = 1", "b = 2"])
    after = notebook_bytes(["a = 1", "b = 3"])
    document = [
        {"id": "cell0", "cell_type": "code", "source": "a = 1  # typed elsewhere"},
        {"id": "cell1", "cell_type": "code", "source": "b = 2\n# typed here"},
    ]
    base = live_base(True, before, after, document, None)
    assert base is not None
    cells = json.loads(base)["cells"]
    assert ["".join(cell["source"]) for cell in cells] == ["a = 1", "b = 2\n# typed here"]
    assert live_base(False, b"\xef\xbb\xbfx\n", b"y\n", "x\ny\n", None) == b"\xef\xbb\xbfx\ny\n"
    assert live_base(True, before, after, "not cells", None) is None


def test_zero_context_diff_marks_a_missing_final_newline() -> None:
    diff = zero_context_diff("t.py", "a\nb", "a\nc")
    assert "@@ -2 +2 @@" in diff and diff.endswith("+c\n\\ No newline at end of file\n")


def test_replan_live_places_the_edit_on_the_typing(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(notebook_bytes(["a = 1", "label = 'old'\nlabel"]))
    workspace = Workspace(tmp_path, history=False, live=None)
    plan = workspace.plan_edit("nb.ipynb", "label = 'old'", "label = 'new'")
    conflict = LiveConflict(
        [
            LiveDifference(
                "nb.ipynb", "cell 2 (id cell1)", "label = 'old'\nlabel", "label = 'old'\nlabel\n# mine"
            )
        ],
        documents={
            "nb.ipynb": [
                {"id": "cell0", "cell_type": "code", "source": "a = 1"},
                {"id": "cell1", "cell_type": "code", "source": "label = 'old'\nlabel\n# mine"},
            ]
        },
    )
    replanned = workspace.replan_live(plan, conflict)
    assert replanned.files[0].before_bytes == path.read_bytes()  # still checked against the disk
    workspace.apply(replanned)
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "label = 'new'\nlabel\n# mine"
    without_document = LiveConflict([LiveDifference("nb.ipynb", "cell 2", "", None)])
    with pytest.raises(LiveConflict):
        workspace.replan_live(plan, without_document)


def test_live_conflict_says_where_and_what_to_do() -> None:
    error = LiveConflict([LiveDifference("a.py", "lines 3-4", "x\n", "y\n")])
    assert "a.py: lines 3-4" in str(error) and "Save or undo the typing" in str(error)
    assert "re-plan the change against the live document" in str(error)
    assert error.path == "a.py"


# ---------------------------------------------------------------------- discovery


def test_discovery_finds_the_runtime_file_of_an_ancestor_process(tmp_path: Path) -> None:
    """A grandchild process (like a kernel under a server) finds this process's jpserver file."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    root = tmp_path / "served"
    root.mkdir()
    info = {"url": "http://127.0.0.1:9/base/", "token": "secret", "root_dir": str(root), "pid": os.getpid()}
    (runtime / f"jpserver-{os.getpid()}.json").write_text(json.dumps(info))
    code = (
        "import subprocess, sys; subprocess.run([sys.executable, '-c', "
        "'from nbedit.live.discovery import find_server; print(find_server())'], check=True)"
    )
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime), PYTHONPATH=str(REPOSITORY))
    environment.pop("NBEDIT_SERVER_URL", None)
    found = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    ).stdout
    assert "url='http://127.0.0.1:9/base'" in found and "token='secret'" in found
    assert f"root_dir='{os.path.realpath(root)}'" in found


def test_no_server_and_the_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NBEDIT_SERVER_URL", raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    assert find_server() is None
    monkeypatch.setenv("NBEDIT_SERVER_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("NBEDIT_SERVER_TOKEN", "t")
    monkeypatch.setenv("NBEDIT_SERVER_ROOT", str(tmp_path))
    assert find_server() == Server("http://127.0.0.1:9", "t", os.path.realpath(tmp_path))


def test_no_runtime_folder_means_no_server_and_no_process_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every write asks; with no runtime folder no server can have written its file, so the
    # process tree is not read (its /proc files are most of the cost of asking)
    from nbedit.live import discovery

    def walked() -> list[int]:
        raise AssertionError("the process tree was walked")

    monkeypatch.delenv("NBEDIT_SERVER_URL", raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "never made"))
    monkeypatch.setattr(discovery, "_ancestors", walked)
    assert find_server() is None
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))  # a runtime folder: the walk happens
    with pytest.raises(AssertionError, match="walked"):
        find_server()


def test_could_be_served_is_false_only_where_find_server_finds_nothing_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbedit.live import could_be_served, discovery

    monkeypatch.delenv("NBEDIT_SERVER_URL", raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "never made"))
    assert not could_be_served() and find_server() is None
    assert discovery.runtime_dir() == tmp_path / "never made"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))  # a runtime folder: find_server walks
    assert could_be_served()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "never made"))
    monkeypatch.setenv("NBEDIT_SERVER_URL", "http://127.0.0.1:9")  # the override: always asked
    assert could_be_served() and find_server() is not None
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    assert discovery.runtime_dir() == tmp_path / "data" / "runtime"


def test_server_relative_paths_stay_inside_the_root(tmp_path: Path) -> None:
    server = Server("http://x", "", os.path.realpath(tmp_path))
    (tmp_path / "sub").mkdir()
    assert server.relative(tmp_path / "sub" / "a.py") == "sub/a.py"
    assert server.relative(tmp_path.parent / "elsewhere.py") is None
    assert server.relative(tmp_path) is None


# ---------------------------------------------------------------------- failure paths: the file is written


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def plain_http_server() -> Iterator[str]:
    """A real HTTP server that knows nothing of nbedit (every path is a 404)."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("kind", ["gone", "no extension"])
def test_without_a_usable_server_the_file_is_written_with_a_one_line_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    with contextlib.ExitStack() as stack:
        url = (
            f"http://127.0.0.1:{free_port()}" if kind == "gone" else stack.enter_context(plain_http_server())
        )
        client = LiveClient(Server(url, "", os.path.realpath(tmp_path)))
        workspace = Workspace(tmp_path, history=False, live=client)
        workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 2"))
    assert target.read_text() == "x = 2\n"
    note = capsys.readouterr().err.strip().splitlines()
    assert len(note) == 1 and note[0].startswith("nbedit: ")
    assert ("did not answer" if kind == "gone" else "has no nbedit extension") in note[0]


def test_files_outside_the_servers_root_are_not_asked_about(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    # the server serves another folder, and is not even running: nothing is asked, nothing noted
    client = LiveClient(Server(f"http://127.0.0.1:{free_port()}", "", str(tmp_path / "elsewhere")))
    workspace = Workspace(tmp_path, history=False, live=client)
    workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 2"))
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


def test_the_running_notebook_still_needs_force_when_no_tab_takes_the_change(tmp_path: Path) -> None:
    from nbedit.errors import NotebookError

    path = tmp_path / "self.ipynb"
    path.write_bytes(notebook_bytes(["a = 1"]))
    before = path.read_bytes()
    client = LiveClient(Server(f"http://127.0.0.1:{free_port()}", "", os.path.realpath(tmp_path)))
    workspace = Workspace(tmp_path, history=False, live=client, running_notebook=str(path))
    with pytest.raises(NotebookError, match="force"):
        workspace.apply(workspace.plan_edit("self.ipynb", "a = 1", "a = 2"))
    assert path.read_bytes() == before


# 'auto' with no runtime folder: the package's could_be_served answers, discovery is not imported
@pytest.mark.parametrize(("live", "loaded"), [("None", "[]"), ("'auto'", "['nbedit.live']")])
def test_live_off_and_outside_a_server_import_nothing_of_it(tmp_path: Path, live: str, loaded: str) -> None:
    code = (
        "import sys, pathlib; from nbedit.workspace import Workspace; "
        f"root = pathlib.Path({str(tmp_path)!r}); (root / 'a.py').write_text('x = 1\\n'); "
        f"w = Workspace(root, history=False, live={live}); w.apply(w.plan_edit('a.py', 'x = 1', 'x = 2')); "
        "print(sorted(m for m in sys.modules if m.startswith('nbedit.live')))"
    )
    environment = dict(os.environ, PYTHONPATH=str(REPOSITORY), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    environment.pop("NBEDIT_SERVER_URL", None)
    output = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == loaded
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


# ---------------------------------------------------------------------- a real Jupyter server, no browser


@pytest.fixture(scope="module")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    pytest.importorskip("jupyter_server")
    base = tmp_path_factory.mktemp("server")
    root = base / "root"
    root.mkdir()
    port = free_port()
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(base / "runtime"), HOME=str(base))
    environment["PYTHONPATH"] = str(REPOSITORY)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0", "--allow-root",
         "--IdentityProvider.token=letmein", f"--ServerApp.root_dir={root}"],  # the extension is enabled by the install
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{url}/api/status?token=letmein", timeout=2).close()
                break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail("jupyter server did not start")
        yield url, root
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_server_without_open_tabs_says_closed_and_refuses_commit(jupyter_server: tuple[str, Path]) -> None:
    url, root = jupyter_server
    client = LiveClient(Server(url, "letmein", os.path.realpath(root)))
    assert client.info()["root_dir"] == os.path.realpath(root)
    change = protocol.text_change("a.py", "x\n", "y\n")
    assert client.prepare([change])["a.py"]["state"] == "closed"
    assert client.notify([change])["a.py"]["state"] == "closed"
    with pytest.raises(LiveUnavailable, match="409"):
        client.commit([change])
    with pytest.raises(LiveUnavailable, match="403|401"):
        LiveClient(Server(url, "wrong token", os.path.realpath(root))).prepare([change])


def test_a_write_through_a_real_server_without_tabs_is_todays_write(
    jupyter_server: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, root = jupyter_server
    (root / "b.py").write_text("y = 1\n")
    workspace = Workspace(
        root, history=False, live=LiveClient(Server(url, "letmein", os.path.realpath(root)))
    )
    workspace.apply(workspace.plan_edit("b.py", "y = 1", "y = 2"))
    assert (root / "b.py").read_text() == "y = 2\n"
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------- the collaboration contract


class RoomServer:
    """Stands where a Jupyter server with a collaboration room holding the notebook stands: it
    answers "live", and on commit saves the document itself, in its own JSON layout (as the
    room's save does). The real room is exercised by the collaboration tests; this checks what
    the workspace does with the answer: no write of its own, the saved bytes recorded."""

    def __init__(self, root: Path) -> None:
        self.server = Server("http://room", "", os.path.realpath(root))
        self.root = root
        self.committed: list[LiveChange] = []

    def relative(self, path: str) -> str | None:
        return self.server.relative(path)

    def prepare(self, changes: list[LiveChange]) -> dict[str, dict[str, object]]:
        return {
            change.path: {"state": "live", "detail": "a collaboration room holds it"} for change in changes
        }

    def commit(self, changes: list[LiveChange]) -> dict[str, dict[str, object]]:
        import hashlib

        results: dict[str, dict[str, object]] = {}
        for change in changes:
            self.committed.append(change)
            path = self.root / change.path
            notebook = json.loads(path.read_bytes())
            for edit in change.cells:
                cell = next(cell for cell in notebook["cells"] if cell["id"] == edit.cell_id)
                cell["source"] = edit.new_source
            saved = (json.dumps(notebook, indent=2) + "\n").encode()  # not nbformat's layout
            path.write_bytes(saved)
            results[change.path] = {"state": "committed", "sha256": hashlib.sha256(saved).hexdigest()}
        return results

    def notify(self, changes: list[LiveChange]) -> dict[str, dict[str, object]]:
        raise AssertionError("a file in a room is not written by nbedit, so there is nothing to notify")


def test_a_notebook_in_a_collaboration_room_is_committed_there_and_its_saved_bytes_recorded(
    tmp_path: Path,
) -> None:
    from nbedit.storage.history import HistoryStore

    path = tmp_path / "room.ipynb"
    path.write_bytes(notebook_bytes(["a = 1", "b = 2"]))
    before = path.read_bytes()
    room = RoomServer(tmp_path)
    workspace = Workspace(tmp_path, home=tmp_path / "home", live=room, running_notebook=str(path))
    result = workspace.apply(workspace.plan_edit("room.ipynb", "b = 2", "b = 3"))  # no force needed
    saved = path.read_bytes()
    assert b'  "cells"' in saved, "the room's save, not nbedit's writer"
    assert [edit.new_source for edit in room.committed[0].cells] == ["b = 3"]
    with HistoryStore(tmp_path / "home") as store:
        assert store.entry(result.entry_id).status == "applied"
        (version,) = store.file_versions(result.entry_id)
        assert version.after == saved and version.before == before
    # and undo goes through the room the same way
    workspace.undo(result.entry_id)
    assert [edit.new_source for edit in room.committed[-1].cells] == ["b = 2"]


def test_live_base_keeps_a_notebooks_own_json_layout() -> None:
    cells = [
        {"cell_type": "code", "id": "c0", "metadata": {}, "source": "a = 1", "outputs": [], "execution_count": None},
        {"cell_type": "code", "id": "c1", "metadata": {}, "source": ["b = 2\n", "b"], "outputs": [], "execution_count": None},
    ]  # fmt: skip
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    before = json.dumps(notebook, indent=2).encode()  # keys unsorted, two spaces: not nbformat's layout
    notebook["cells"][1]["source"] = ["b = 3\n", "b"]
    after = json.dumps(notebook, indent=2).encode()
    document = [{"id": "c0", "source": "a = 1 typed elsewhere"}, {"id": "c1", "source": "b = 2\nb\n# mine"}]
    base = live_base(True, before, after, document, None)
    expected = before.replace(b'"b"\n', b'"b\\n",\n        "# mine"\n')
    assert base == expected
