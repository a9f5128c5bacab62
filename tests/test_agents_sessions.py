"""A recorded ten-call session per adapter, and the transcript a model would read.

Each session holds drift, an ambiguous edit, a retry after an error, a rejection
with a reason, and (function tools and MCP) an anchored edit including a stale
anchor. Calls are parsed into the SDKs' own types first; every answer is checked
for what it must say, in the tool's own terms, and for what it must never say
(options of other surfaces, raw validator text, doubled prefixes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, FunctionTools, TextEditorTool
from tests.agents_support import recorded

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from anthropic.types import ToolUseBlock  # noqa: E402
from openai.types.responses import ResponseApplyPatchToolCall, ResponseFunctionToolCall  # noqa: E402

SESSIONS = recorded("sessions")
REASON = "keep the public names and signatures as they are"
NEVER = ("replace_all=True", "overwrite=True", "encoding=", "root=", "Error executing", "Error: Error",
         "validation error", "Traceback", "\ue000")  # fmt: skip


def approver(plan: Any) -> bool | str:
    """The person: no typed signatures, and util.py stays."""
    diff = plan.diff
    if "-> str" in diff or ("util.py" in plan.paths and "+++ /dev/null" in diff):
        return REASON
    return True


def clean(transcript: list[str]) -> None:
    for number, text in enumerate(transcript, start=1):
        for word in NEVER:
            assert word not in text, f"call {number}: {word!r} in {text!r}"


def test_function_tools_session(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace, approval=approver)
    calls = [ResponseFunctionToolCall.model_validate(call) for call in SESSIONS["functions"]]
    transcript = [tools.run(call.name, call.arguments, call_id=call.call_id) for call in calls]
    clean(transcript)
    view, drift, ambiguous, retry, rejected, anchored, stale, inserted, undone, final = transcript
    assert '5:4d1|    return "hi " + name' in view
    assert drift.startswith("Edited app.py.") and "was not an exact match" in drift
    assert "exactly as your old -> new text says" in drift
    assert ambiguous.startswith("Error: AmbiguousMatch") and "12:1, 19:1" in ambiguous
    assert "or set replace_all to true" in ambiguous and "Nothing was written." in ambiguous
    assert retry.startswith("Edited app.py.")
    assert rejected.startswith("Error: The user rejected this change") and REASON in rejected
    assert anchored.startswith("Replaced lines 5-5 of app.py.")
    assert stale.startswith("Error: anchor 5:4d1 is stale") and '5:c75|    return f"hello {name}"' in stale
    assert inserted.startswith("Inserted lines after line 15 of app.py.")
    assert undone.startswith("Undid e")
    assert '     5\t    return f"hello {name}"' in final
    source = (project / "app.py").read_text()
    assert "result = 0.0" in source and "round(result, 2)" in source and "How many items" not in source
    assert "-> str" not in source
    assert [entry.origin for entry in workspace.history()][1:] == [
        "agent:edit_lines:call_S08", "agent:edit_lines:call_S06", "agent:edit:call_S04", "agent:edit:call_S02",
    ]  # fmt: skip


def test_text_editor_session(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace, approval=approver)
    calls = recorded("anthropic_tool_use")
    results = [tool.run(ToolUseBlock.model_validate(calls[name])) for name in SESSIONS["text_editor"]]
    transcript = [str(result["content"]) for result in results]
    clean(transcript)
    errors = [result["is_error"] for result in results]
    assert errors == [False, False, True, False, True, False, True, False, False, False], transcript
    view, drift, ambiguous, retry, rejected, _, missing, exact, created, inserted = transcript
    assert drift.startswith("Edited app.py.") and "exactly as your old_str -> new_str says" in drift
    assert "include more surrounding lines in old_str" in ambiguous and "replace_all" not in ambiguous
    assert REASON in rejected
    assert missing.startswith("Error: NoMatch") and "old_str" in missing
    assert exact.startswith("Edited app.py.") and created.startswith("Created util.py.")
    assert inserted.startswith("Inserted text after line 0 of util.py.")


def test_apply_patch_session(workspace: Workspace, project: Path) -> None:
    tool = ApplyPatchTool(workspace, approval=approver)
    calls = recorded("openai_apply_patch_call")
    outputs = [
        tool.run(ResponseApplyPatchToolCall.model_validate(calls[name])) for name in SESSIONS["apply_patch"]
    ]
    transcript = [str(output["output"]) for output in outputs]
    clean(transcript)
    statuses = [output["status"] for output in outputs]
    assert statuses == ["completed", "completed", "failed", "failed", "failed", "completed", "failed",
                        "completed", "failed", "completed"], transcript  # fmt: skip
    exact, drift, ambiguous, missing, syntax, created, exists, hunks, deleted, notebook = transcript
    assert "exactly as your diff's - and + lines say" in drift
    assert "include more context lines (or an @@ line" in ambiguous
    assert "'def average(prices):' was not found" in missing and "copy the diff's lines" in missing
    assert "line 1 of your diff" in syntax
    assert "send an update_file operation" in exists and "overwrite" not in exists
    assert REASON in deleted and (project / "util.py").exists()
    source = json.loads((project / "analysis.ipynb").read_text())["cells"][1]["source"]
    assert "".join(source).startswith("threshold = 30")
