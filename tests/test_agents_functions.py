"""FunctionTools: schemas in three shapes, and every function run against a real workspace."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit.agents import FunctionTools
from tests.agents_support import snapshot


def test_schemas_in_each_flavor(workspace: Workspace) -> None:
    tools = FunctionTools(workspace)
    openai = tools.schemas("openai")
    assert [tool["name"] for tool in openai] == ["view", "edit", "edit_lines", "patch", "undo"]
    assert all(tool["type"] == "function" and tool["parameters"]["type"] == "object" for tool in openai)
    chat = tools.schemas("openai-chat")
    assert chat[1]["function"]["name"] == "edit"
    assert chat[1]["function"]["parameters"]["required"] == ["path", "old", "new", "replace_all", "cell"]
    anthropic = tools.schemas("anthropic")
    assert set(anthropic[0]) == {"name", "description", "input_schema", "strict"}
    json.dumps([openai, chat, anthropic])  # plain JSON
    with pytest.raises(ValueError, match="unknown flavor"):
        tools.schemas("gemini")


def test_view_edit_patch_undo(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace)
    original = (project / "app.py").read_bytes()
    assert "     4\tdef greet(name):" in tools.run("view", {"path": "app.py"})
    text = tools.run(
        "edit", '{"path": "app.py", "old": "return \\"hi \\" + name", "new": "return name"}', call_id="fc_1"
    )
    assert text.startswith("Edited app.py.") and "History entry" in text
    patch = (
        "--- a/README.md\n+++ b/README.md\n@@ -3 +3 @@\n-Greets people and adds prices.\n+Greets people.\n"
    )
    assert tools.run("patch", {"patch": patch}, call_id="fc_2").startswith("Patched README.md.")
    origins = [entry.origin for entry in workspace.history()]
    assert origins == ["agent:patch:fc_2", "agent:edit:fc_1"]
    assert tools.run("undo", {}, call_id="fc_3").startswith("Undid")
    assert tools.run("undo", {}, call_id="fc_4").startswith("Undid")
    assert (project / "app.py").read_bytes() == original
    text = tools.run("undo", {}, call_id="fc_5")
    assert text.startswith("Error:") and "no change made by a model" in text


def test_replace_all_and_cell(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace)
    text = tools.run(
        "edit", {"path": "app.py", "old": "result = 0\n", "new": "result = 0.0\n", "replace_all": True}
    )
    assert text.startswith("Edited"), text
    assert (project / "app.py").read_text().count("result = 0.0\n") == 2
    text = tools.run(
        "edit", {"path": "analysis.ipynb", "old": "threshold = 10", "new": "threshold = 5", "cell": "setup"}
    )
    assert text.startswith("Edited"), text


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("edit", {"path": "app.py", "old": "    return result", "new": "    return 0"}, "AmbiguousMatch"),
        ("edit", {"path": "app.py", "old": "def nope(x):\n    pass", "new": "x"}, "NoMatch"),
        ("edit", {"path": "app.py", "old": "x"}, "edit needs new"),
        (
            "edit",
            {"path": "app.py", "old": "x", "new": "y", "replace_all": "yes"},
            "replace_all must be true, false or null",
        ),
        ("edit", "{not json", "not valid JSON"),
        ("patch", {"patch": "hello"}, "PatchSyntaxError"),
        ("view", {"path": "../outside.txt"}, "outside the workspace root"),
        ("delete", {"path": "app.py"}, "unknown function 'delete'"),
        ("undo", {"entry_id": "e99999999"}, "Error"),
    ],
)
def test_errors_are_text_starting_with_error(
    name: str, arguments: object, expected: str, workspace: Workspace, project: Path
) -> None:
    before = snapshot(project)
    text = FunctionTools(workspace).run(name, arguments)
    assert text.startswith("Error:"), text
    assert expected in text
    assert snapshot(project) == before


def test_rejection_and_dry_run(workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    edit = {"path": "README.md", "old": "tiny app", "new": "small app"}
    text = FunctionTools(workspace, approval=lambda plan: "not now").run("edit", edit)
    assert text.startswith("Error: The user rejected this change") and "not now" in text
    text = FunctionTools(workspace, approval="dry-run").run("edit", edit)
    assert text.startswith("Dry run") and "+# small app" in text
    assert snapshot(project) == before


def test_importing_the_adapters_stays_light() -> None:
    import subprocess

    code = "import sys, nbedit.agents; print('IPython' in sys.modules, 'ipywidgets' in sys.modules, 'mcp' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False", "False", "False"]


def test_agents_public_names_resolve_and_are_sorted() -> None:
    import nbedit.agents

    assert nbedit.agents.__all__ == sorted(nbedit.agents.__all__)
    assert all(getattr(nbedit.agents, name) is not None for name in nbedit.agents.__all__)
