"""ApplyPatchTool against a real workspace, driven by recorded OpenAI ``apply_patch_call`` items."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from nbedit import Workspace
from nbedit.agents import ApplyPatchTool
from tests.agents_support import recorded, snapshot

CALLS = recorded("openai_apply_patch_call")


def run(tool: ApplyPatchTool, name: str) -> dict:
    call = CALLS[name]
    output = tool.run(call)
    assert set(output) == {"type", "call_id", "status", "output"}
    assert output["type"] == "apply_patch_call_output" and output["call_id"] == call["call_id"]
    return output


def failed(tool: ApplyPatchTool, name: str, project: Path) -> str:
    before = snapshot(project)
    output = run(tool, name)
    assert output["status"] == "failed", output["output"]
    assert snapshot(project) == before, f"{name} changed a file although it failed"
    return output["output"]


def test_definition(workspace: Workspace) -> None:
    assert ApplyPatchTool(workspace).definition == {"type": "apply_patch"}


def test_update_create_delete_are_recorded_with_the_call_id(workspace: Workspace, project: Path) -> None:
    tool = ApplyPatchTool(workspace)
    output = run(tool, "update_exact")
    assert output == {
        "type": "apply_patch_call_output",
        "call_id": "call_A1update",
        "status": "completed",
        "output": "Updated app.py.",
    }
    assert 'return f"hello {name}"' in (project / "app.py").read_text()
    assert run(tool, "create_file")["status"] == "completed"
    assert (project / "util.py").read_bytes() == b"def double(x):\n    return 2 * x\n"
    assert run(tool, "delete_file")["status"] == "completed"
    assert not (project / "util.py").exists()
    assert [entry.origin for entry in workspace.history()] == [
        "agent:apply_patch:call_C1delete",
        "agent:apply_patch:call_B1create",
        "agent:apply_patch:call_A1update",
    ]


def test_two_hunks_with_anchors(workspace: Workspace, project: Path) -> None:
    assert run(ApplyPatchTool(workspace), "update_two_hunks")["status"] == "completed"
    text = (project / "app.py").read_text()
    assert "def total(prices):\n    result = 0.0\n" in text
    assert "def count(items):\n    result = len(items)\n" in text


def test_drift_is_recovered_and_the_tier_named(workspace: Workspace, project: Path) -> None:
    output = run(ApplyPatchTool(workspace), "update_drifted")
    assert output["status"] == "completed", output["output"]
    assert "not an exact match" in output["output"] and "trailing whitespace" in output["output"]
    assert "        result += price\n" in (project / "app.py").read_text()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("update_ambiguous", "AmbiguousMatch"),
        ("update_missing", "NoMatch"),
        ("create_existing", "FileExists"),
        ("delete_missing", "FileMissing"),
        ("outside_root", "outside the workspace root"),
        ("unknown_operation", "unknown operation type 'rename_file'"),
        ("update_without_diff", "needs a V4A 'diff'"),
        ("bad_syntax", "PatchSyntaxError"),
    ],
)
def test_failures_say_what_to_do_and_write_nothing(
    name: str, expected: str, workspace: Workspace, project: Path
) -> None:
    text = failed(ApplyPatchTool(workspace), name, project)
    assert text.startswith("Error") and expected in text
    assert workspace.history() == []


def test_ambiguity_lists_every_location(workspace: Workspace, project: Path) -> None:
    text = failed(ApplyPatchTool(workspace), "update_ambiguous", project)
    assert "12:" in text and "19:" in text


def test_dry_run_and_rejection(workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    output = run(ApplyPatchTool(workspace, approval="dry-run"), "update_exact")
    assert output["status"] == "completed" and "Dry run" in output["output"]
    assert '+    return f"hello {name}"' in output["output"]
    output = run(ApplyPatchTool(workspace, approval=lambda plan: False), "update_exact")
    assert output["status"] == "failed" and "The user rejected this change" in output["output"]
    assert snapshot(project) == before and workspace.history() == []


def test_require_view_option(workspace: Workspace, project: Path) -> None:
    text = failed(ApplyPatchTool(workspace, require_view=True), "update_exact", project)
    assert "has not been viewed" in text


def test_notebook_update_through_the_cell_view(workspace: Workspace, project: Path) -> None:
    output = run(ApplyPatchTool(workspace), "notebook_update")
    assert output["status"] == "completed", output["output"]
    notebook = nbformat.reads((project / "analysis.ipynb").read_text(), as_version=4)
    assert notebook.cells[1].source == "threshold = 30\nprint(threshold)"
    assert notebook.cells[1].outputs


def test_sdk_object_and_undo(workspace: Workspace, project: Path) -> None:
    original = (project / "app.py").read_bytes()
    call = CALLS["update_exact"]
    item = SimpleNamespace(
        type="apply_patch_call",
        id=call["id"],
        call_id=call["call_id"],
        status="completed",
        operation=SimpleNamespace(**call["operation"]),
    )
    assert ApplyPatchTool(workspace).run(item)["status"] == "completed"
    workspace.undo()
    assert (project / "app.py").read_bytes() == original
