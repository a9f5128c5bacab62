"""Issue 10 items 14 and 17: odd names and text give a clear nbedit error (or just work), never a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import HistoryError, NbeditError


def run_cli(arguments: list[bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"nbedit", *arguments],
        cwd=cwd, capture_output=True, timeout=120, env={**os.environ, "LANG": "C.UTF-8", "COLUMNS": "200"},
    )  # fmt: skip


def test_non_utf8_text_from_the_command_line_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "menu.txt").write_bytes(b"cafe\n")
    completed = run_cli([b"edit", b"menu.txt", b"--old", b"cafe", b"--new", b"caf\xe9", b"--yes"], tmp_path)
    assert completed.returncode == 1
    assert b"Traceback" not in completed.stderr
    assert b"not UTF-8" in completed.stderr
    assert (tmp_path / "menu.txt").read_bytes() == b"cafe\n"


@pytest.mark.parametrize("name", ["menu.txt", "book.ipynb"])
def test_surrogates_in_api_text_are_a_clear_error(tmp_path: Path, name: str) -> None:
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                   "source": ["cafe"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    data = json.dumps(notebook).encode() if name.endswith(".ipynb") else b"cafe\n"
    (tmp_path / name).write_bytes(data)
    ws = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(nbedit.PatchSyntaxError, match="not UTF-8"):
        ws.plan_edit(name, "cafe", "caf\udce9")
    with pytest.raises(nbedit.PatchSyntaxError, match="not UTF-8"):
        ws.plan_patch(f"*** Begin Patch\n*** Update File: {name}\n@@\n-cafe\n+caf\udce9\n*** End Patch\n")
    assert (tmp_path / name).read_bytes() == data


def test_an_over_long_file_name_is_a_clear_error(tmp_path: Path) -> None:
    ws = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(nbedit.NotAFile, match="255-byte"):
        ws.plan_patch(f"*** Begin Patch\n*** Add File: {'x' * 300}.txt\n+hi\n*** End Patch\n")
    with pytest.raises(nbedit.NotAFile, match="255-byte"):
        ws.plan_edit("y" * 300, "", "hi")


def test_a_name_near_the_limit_still_works(tmp_path: Path) -> None:
    ws = nbedit.Workspace(tmp_path)
    name = "z" * 250 + ".txt"
    ws.apply(ws.plan_patch(f"*** Begin Patch\n*** Add File: {name}\n+hi\n*** End Patch\n"))
    ws.apply(ws.plan_edit(name, "hi", "ho"))
    assert (tmp_path / name).read_bytes() == b"ho\n"


def test_a_nul_in_a_path_is_a_clear_error(tmp_path: Path) -> None:
    ws = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(nbedit.OutsideWorkspace, match="NUL"):
        ws.plan_edit("a\0b.txt", "", "hi")
    with pytest.raises(NbeditError):
        ws.plan_patch("*** Begin Patch\n*** Add File: a\0b.txt\n+hi\n*** End Patch\n")


def test_a_huge_entry_id_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"1\n")
    ws = nbedit.Workspace(tmp_path)
    ws.apply(ws.plan_edit("a.txt", "1", "2"))
    with pytest.raises(HistoryError, match="no history entry"):
        ws.restore("e" + "f" * 40)
    completed = run_cli([b"restore", b"e" + b"f" * 40], tmp_path)
    assert completed.returncode == 1 and b"Traceback" not in completed.stderr


def test_a_non_utf8_file_name_blames_the_name_not_the_history(tmp_path: Path, nbedit_home: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(b"one\n")
    name = os.fsdecode(b"caf\xe9.txt")
    ws = nbedit.Workspace(tmp_path)
    with pytest.raises(nbedit.NotAFile) as raised:
        ws.apply(ws.plan_edit(name, "one", "two"))
    assert "not valid UTF-8" in raised.value.message and "--no-history" in raised.value.message
    assert str(nbedit_home) not in raised.value.message
    with open(raw, "rb") as handle:
        assert handle.read() == b"one\n"
    plain = nbedit.Workspace(tmp_path, history=False)
    plain.apply(plain.plan_edit(name, "one", "two"))
    with open(raw, "rb") as handle:
        assert handle.read() == b"two\n"


def _unknown_user() -> str:
    import pwd

    name = "nbedit-no-such-user-27"
    try:
        pwd.getpwnam(name)
    except KeyError:
        return name
    pytest.skip(f"the user {name} exists here")


def test_a_path_naming_an_unknown_users_home_or_no_file_name_is_a_clear_error(tmp_path: Path) -> None:
    """A model-written path ``~someone/x`` (a user this system does not know), one holding a lone
    surrogate (JSON allows ``\\ud800``; no file name encodes it) or through a link to itself is
    refused, not a crash."""
    from nbedit.agents.text_editor import TextEditorTool

    user = _unknown_user()
    ws = nbedit.Workspace(tmp_path, history=False)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")  # a link to itself: the tool's view refuses it too
    for name in (f"~{user}/x.py", "\ud800.py", "loop", "loop/x.py"):
        with pytest.raises(NbeditError):
            ws.plan_edit(name, "", "hi\n")
        with pytest.raises(NbeditError):
            ws.plan_patch(f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+hi\n")
        tool = TextEditorTool(ws)
        for command in ({"command": "view"}, {"command": "create", "file_text": "hi\n"}):
            result = tool.run({"id": "t1", "name": tool.name, "input": {**command, "path": name}})
            assert result["is_error"] and result["content"].startswith("Error"), result
    assert sorted(os.listdir(tmp_path)) == ["loop"]
    (tmp_path / "p.diff").write_text(f"--- /dev/null\n+++ b/~{user}/x.py\n@@ -0,0 +1 @@\n+hi\n")
    completed = run_cli([b"apply", b"p.diff", b"--yes"], tmp_path)
    assert completed.returncode == 1 and b"Traceback" not in completed.stderr, completed.stderr
    assert user.encode() in completed.stderr
    assert sorted(os.listdir(tmp_path)) == ["loop", "p.diff"]
