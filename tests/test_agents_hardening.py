"""Agents that cannot reach past what they name: control characters, one path per operation,
undo limited to this session's agents, and views of bounded size.

Every refusal is checked on the bytes: every file under the root is identical
(and keeps its mode) afterwards, and no history entry was made.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, FunctionTools, TextEditorTool
from tests.agents_support import snapshot

BAD_PATHS = ["a.txt\n*** Delete File: README.md", "app.py\x00", "app\x1b[2J.py", "app.py\r", "app\x7f.py"]


def editor_call(command: str, path: str, **arguments: object) -> dict:
    return {"type": "tool_use", "id": "toolu_bad", "name": "str_replace_based_edit_tool",
            "input": {"command": command, "path": path, **arguments}}  # fmt: skip


@pytest.mark.parametrize("path", BAD_PATHS)
def test_a_control_character_in_a_path_is_refused_by_every_tool(
    path: str, workspace: Workspace, project: Path
) -> None:
    before = snapshot(project)
    editor = TextEditorTool(workspace, require_view=False)
    answers = [
        editor.run(editor_call("view", path))["content"],
        editor.run(editor_call("str_replace", path, old_str="tiny", new_str="small"))["content"],
        editor.run(editor_call("create", path, file_text="x\n"))["content"],
        editor.run(editor_call("insert", path, insert_line=0, new_str="x"))["content"],
    ]
    patcher = ApplyPatchTool(workspace)
    for kind, diff in (("create_file", "+x\n"), ("update_file", "@@\n-a\n+b\n"), ("delete_file", None)):
        operation = {"type": kind, "path": path, **({"diff": diff} if diff else {})}
        output = patcher.run({"type": "apply_patch_call", "call_id": "call_bad", "operation": operation})
        assert output["status"] == "failed"
        answers.append(output["output"])
    functions = FunctionTools(workspace)
    answers += [
        functions.run("view", {"path": path}),
        functions.run("edit", {"path": path, "old": "tiny", "new": "small"}),
        functions.run("edit_lines", {"path": path, "insert_after": "0", "new": "x"}),
    ]
    for answer in answers:
        assert answer.startswith("Error") and "control character" in answer, answer
        assert "Traceback" not in answer and "ValueError" not in answer
    assert snapshot(project) == before and workspace.history() == []


def test_an_apply_patch_diff_cannot_smuggle_another_operation(workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    patcher = ApplyPatchTool(workspace)
    smuggled = [
        {"type": "create_file", "path": "a.txt", "diff": "+hello\n*** Delete File: README.md\n"},
        {"type": "update_file", "path": "app.py",
         "diff": "@@\n-def greet(name):\n+def greet(who):\n*** End Patch\n*** Begin Patch\n*** Delete File: README.md\n"},
        {"type": "update_file", "path": "app.py", "diff": "*** Update File: README.md\n@@\n-# tiny app\n+# owned\n"},
    ]  # fmt: skip
    for operation in smuggled:
        output = patcher.run({"type": "apply_patch_call", "call_id": "call_x", "operation": operation})
        assert output["status"] == "failed", output
        assert "patch header" in output["output"] and "only its own path" in output["output"]
    assert snapshot(project) == before and workspace.history() == []


def test_a_create_file_diff_without_plus_prefixes_says_so(workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    output = ApplyPatchTool(workspace).run(
        {"type": "apply_patch_call", "call_id": "c", "operation":
         {"type": "create_file", "path": "util.py", "diff": "+def double(x):\n    return 2 * x\n"}}
    )  # fmt: skip
    assert output["status"] == "failed"
    assert (
        "line 2 of your create_file diff" in output["output"]
        and "does not start with '+'" in output["output"]
    )
    assert snapshot(project) == before


def test_an_agent_undoes_only_agent_changes_of_its_own_session(
    workspace: Workspace, project: Path, tmp_path: Path
) -> None:
    person = workspace.apply(
        workspace.plan_edit("README.md", "tiny app", "little app"), origin="api"
    ).entry_id
    other = Workspace(project, home=tmp_path / "home", session="another-kernel")
    other_agent = other.apply(
        other.plan_edit("app.py", "hi ", "hey "), origin="agent:edit:call_other"
    ).entry_id
    tools = FunctionTools(workspace)
    mine = tools.run("edit", {"path": "app.py", "old": "def count(items):", "new": "def count(things):"})
    assert mine.startswith("Edited"), mine
    before = snapshot(project)
    for entry_id, why in ((person, "a person's change"), (other_agent, "not a change made in this session")):
        text = tools.run("undo", {"entry_id": entry_id})
        assert text.startswith("Error") and why in text and "Ask the user" in text, text
    assert snapshot(project) == before
    # undo with no id takes the agent's own latest change, never the person's
    assert tools.run("undo", {}).startswith("Undid")
    assert "def count(items):" in (project / "app.py").read_text()
    assert tools.run("undo", {}).startswith("Error")  # the person's entry is not the agent's to take
    assert "little app" in (project / "README.md").read_text()
    tools.allow_undo(person)  # the person says it may
    assert tools.run("undo", {"entry_id": person}).startswith(f"Undid {person}")
    assert "tiny app" in (project / "README.md").read_text()


def test_a_view_is_bounded_and_says_how_to_page(workspace: Workspace, project: Path) -> None:
    line = "x = 'a fairly long line of code, repeated to make a big file'  # padding padding\n"
    (project / "big.py").write_text(line * 200_000)  # 16 MB
    tools = FunctionTools(workspace)
    text = tools.run("view", {"path": "big.py"})
    assert len(text) < 17_000
    assert "showing lines 1-" in text and "of 200000" in text and "view_range [" in text
    shown = int(text.rsplit("showing lines 1-", 1)[1].split(" ", 1)[0])
    following = tools.run("view", {"path": "big.py", "view_range": [shown + 1, shown + 10]})
    assert f"{shown + 1:6}\t" in following and len(following) < 2_000
    small = FunctionTools(workspace, max_characters=500, max_lines=5)
    text = small.run("view", {"path": "big.py"})
    assert "showing lines 1-5 of 200000" in text and "view_range [6, 10]" in text
    editor = TextEditorTool(workspace, max_characters=1_000)
    result = editor.run(editor_call("view", "big.py"))["content"]
    assert len(result) < 1_400 and "a view returns at most 1000 characters" in result
    with pytest.raises(ValueError, match="max_lines"):
        FunctionTools(workspace, max_lines=0)
