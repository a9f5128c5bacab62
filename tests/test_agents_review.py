"""``approval="review"``: the gate blocks a running cell until a person decides.

The kernel test is the real thing minus the browser: a real kernel runs a
cell in which a scripted agent makes four tool calls with the review gate;
the test plays the front end, sending the same comm messages JupyterLab sends
when a person clicks (Apply on the first; untick one hunk, then Apply on the
second; type a reason and Reject the third; nothing on the fourth, which times
out; then one blocking ``run`` call). The cell can only finish if the kernel handled those messages while it
was blocked, and its printed transcript is what the model would receive.
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import pytest

from nbedit import Workspace
from tests.agents_support import DATA, recorded, snapshot

pytest.importorskip("jupyter_ui_poll")


def test_gate_decision_names_applied_and_left_out_hunks(project: Path, tmp_path: Path) -> None:
    from nbedit.agents.review_gate import ReviewGate

    workspace = Workspace(project, home=tmp_path / "home")
    patch = recorded("openai_apply_patch_call")["update_two_hunks"]["operation"]["diff"]
    from nbedit.agents.apply_patch import envelope

    plan = workspace.plan_patch(envelope("update_file", "app.py", patch))
    gate = ReviewGate(workspace, plan, origin="agent:apply_patch:call_x")
    gate.widget.toggles[(0, 1)].value = False
    gate.widget.apply()
    decision = gate.decision()
    assert decision.outcome == "applied" and decision.partial
    assert decision.applied_hunks == ("app.py hunk 1 (line 9)",)
    assert decision.left_out == ("app.py hunk 2 (line 16)",)
    text = (project / "app.py").read_text()
    assert "    result = 0.0\n" in text and "result = len(items)" not in text
    assert workspace.history(all_sessions=True)[0].origin == "agent:apply_patch:call_x"

    before = snapshot(project)
    gate = ReviewGate(workspace, workspace.plan_edit("README.md", "tiny", "small"), origin="agent:t:c")
    gate.reason.value = "  keep it tiny "
    gate.widget.reject()
    decision = gate.decision()
    assert decision.outcome == "rejected" and decision.reason == "keep it tiny"
    assert snapshot(project) == before


def test_review_outside_a_kernel_is_raised_to_the_program_never_sent_to_the_model(
    project: Path, tmp_path: Path
) -> None:
    from nbedit.agents import ApplyPatchTool, FunctionTools, TextEditorTool
    from nbedit.agents.review_gate import ReviewUnavailable

    workspace = Workspace(project, home=tmp_path / "home")
    before = snapshot(project)
    tool = TextEditorTool(workspace, approval="review", require_view=False)
    with pytest.raises(ReviewUnavailable, match="needs a Jupyter kernel"):
        tool.run(recorded("anthropic_tool_use")["exact_edit"])
    with pytest.raises(ReviewUnavailable):
        ApplyPatchTool(workspace, approval="review").run(recorded("openai_apply_patch_call")["update_exact"])
    with pytest.raises(ReviewUnavailable):
        FunctionTools(workspace, approval="review").run(
            "edit", {"path": "README.md", "old": "tiny", "new": "small"}
        )
    assert snapshot(project) == before


AGENT_CELL = """
import json
from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, TextEditorTool

calls = json.load(open({anthropic!r}))
patches = json.load(open({openai!r}))
workspace = Workspace({root!r}, home={home!r}, session="kernel-agent")
editor = TextEditorTool(workspace, approval="review", require_view=False, review_timeout=90)
patcher = ApplyPatchTool(workspace, approval="review", review_timeout=90)
impatient = TextEditorTool(workspace, approval="review", require_view=False, review_timeout=1)
transcript = [
    await editor.arun(calls["exact_edit"]),
    await patcher.arun(patches["update_two_hunks"]),
    await editor.arun(calls["rejected_edit"]),
    await impatient.arun(calls["edit_after_view"]),
    editor.run(calls["edit_after_view"]),  # an ordinary (blocking) call: the cell's thread waits for the click
]
print("TRANSCRIPT" + json.dumps(transcript))
"""


class FrontEnd:
    """Plays JupyterLab's part: records the widgets the kernel opens, sends clicks and edits."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.widgets: list[dict[str, Any]] = []  # comm id + state, in the order opened
        self.gates_seen = 0

    def send(self, comm_id: str, data: dict[str, Any]) -> None:
        message = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(message)

    def act(self, review: dict[str, Any], action: str) -> None:
        """What the review page sends when a button is pressed: one custom message on the one model."""
        self.send(review["comm_id"], {"method": "custom", "content": {"action": action}})

    def set_state(self, widget: dict[str, Any], state: dict[str, Any]) -> None:
        self.send(widget["comm_id"], {"method": "update", "state": state, "buffer_paths": []})

    def gate_widgets(self) -> dict[str, Any]:
        """The latest gate: its review model (one per review, state = the plan's rows) and its reason box."""
        start = max(i for i, w in enumerate(self.widgets) if w["state"].get("part") == "review")
        mine = self.widgets[start:]
        review = mine[0]
        hunks = [
            (file_index, hunk["index"])
            for file_index, file in enumerate(review["state"]["doc"]["files"])
            for section in file["sections"]
            for hunk in section.get("hunks", [])
        ]
        return {
            "review": review,
            "hunks": hunks,
            "reason": next(w for w in mine if "reason" in str(w["state"].get("placeholder", ""))),
        }


@pytest.mark.kernel
def test_a_running_cell_waits_for_apply_partial_apply_reject_and_timeout(
    project: Path, tmp_path: Path
) -> None:
    from jupyter_client.manager import start_new_kernel

    home = tmp_path / "home"
    code = AGENT_CELL.format(
        anthropic=str(DATA / "anthropic_tool_use.json"),
        openai=str(DATA / "openai_apply_patch_call.json"),
        root=str(project),
        home=str(home),
    )
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        front = FrontEnd(client)
        message_id = client.execute(code)
        plan = ["apply", "partial", "reject", "wait", "apply"]
        output, finished, deadline = "", False, time.monotonic() + 150
        while not finished and time.monotonic() < deadline:
            try:
                message = client.get_iopub_msg(timeout=5)
            except queue.Empty:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                front.widgets.append({"comm_id": content["comm_id"], "state": content["data"]["state"]})
            elif kind == "comm_msg" and content["data"].get("method") == "update":
                for widget in front.widgets:  # the kernel's later state updates (the review's rows)
                    if widget["comm_id"] == content["comm_id"]:
                        widget["state"].update(content["data"]["state"])
            elif kind == "stream":
                output += content["text"]
            elif kind == "error":
                pytest.fail("\n".join(content["traceback"]))
            elif kind == "display_data" and "application/vnd.jupyter.widget-view+json" in content["data"]:
                action = plan[front.gates_seen]
                front.gates_seen += 1
                gate = front.gate_widgets()
                if action == "apply":
                    front.act(gate["review"], "apply")
                elif action == "partial":
                    assert len(gate["hunks"]) == 2
                    front.set_state(gate["review"], {"excluded": [list(gate["hunks"][1])]})
                    front.act(gate["review"], "apply")
                elif action == "reject":
                    front.set_state(gate["reason"], {"value": "keep the signature untyped"})
                    front.act(gate["review"], "reject")
            elif kind == "status" and content["execution_state"] == "idle":
                finished = message["parent_header"].get("msg_id") == message_id
        assert finished, f"the cell did not finish; output so far: {output!r}"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)

    transcript = json.loads(output.split("TRANSCRIPT", 1)[1])
    first, second, third, fourth, blocking = transcript
    assert first["type"] == "tool_result" and first["tool_use_id"] == "toolu_01B1exact"
    assert not first["is_error"] and first["content"].startswith("Edited app.py.")
    assert second["type"] == "apply_patch_call_output" and second["status"] == "completed"
    assert "applied app.py hunk 1 (line 9)" in second["output"]
    assert "left out (not written) app.py hunk 2 (line 16)" in second["output"]
    assert third["is_error"] and "The user rejected this change" in third["content"]
    assert "keep the signature untyped" in third["content"]
    assert fourth["is_error"] and "no decision was made in time" in fourth["content"]
    # a blocking run() waits for the click too (ipykernel 7: the gate's comms are served by a subshell)
    assert front.gates_seen == 5
    assert not blocking["is_error"] and blocking["content"].startswith("Edited app.py."), blocking

    text = (project / "app.py").read_text()
    assert 'return f"hello {name}"' in text  # first: applied
    assert "    result = 0.0\n" in text and "len(items)" not in text  # second: hunk 1 only
    assert "def greet(name):" in text and "-> str" not in text  # third: rejected
    assert text.count('"""How many items there are."""') == 1  # fourth timed out, fifth (blocking) applied
    origins = [entry.origin for entry in Workspace(project, home=home).history(all_sessions=True)]
    assert origins == [
        "agent:str_replace_based_edit_tool:toolu_01F3retry",
        "agent:apply_patch:call_A2hunks",
        "agent:str_replace_based_edit_tool:toolu_01B1exact",
    ]


def test_after_a_partial_approval_the_model_must_view_again(project: Path, tmp_path: Path) -> None:
    from nbedit.agents import TextEditorTool
    from nbedit.agents.approval import Decision

    workspace = Workspace(project, home=tmp_path / "home")
    tool = TextEditorTool(workspace)
    calls = recorded("anthropic_tool_use")
    tool.run(calls["view_app"])
    plan = workspace.plan_edit("app.py", 'return "hi " + name', "return name")
    result = workspace.apply(plan)
    tool.session.record_written(Decision("applied", plan, result, applied_hunks=("x",), left_out=("y",)))
    refused = tool.run(calls["retry_with_context"])
    assert refused["is_error"] and "view the file again" in refused["content"]
    tool.session.record_written(Decision("applied", plan, result))  # a whole approval counts as seen
    assert not tool.run(calls["retry_with_context"])["is_error"]
