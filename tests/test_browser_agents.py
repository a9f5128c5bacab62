"""The human gate in a real JupyterLab: a running tool loop waits for clicks in the page.

A notebook cell runs a scripted agent making three tool calls with
``approval="review"`` (two Anthropic ``tool_use`` blocks and one OpenAI
``apply_patch_call``, recorded in tests/data/agents). The test, in headless
Chromium, clicks Apply on the first review, unticks one hunk and applies the
second, and types a reason and rejects the third. Only then can the cell
finish; its printed transcript must show the three tool results as the model
receives them, and the bytes on disk must match each decision.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("browser_support")

from browser_support import LabServer, cell_outputs_text, open_notebook, wait_kernel_idle, write_notebook  # noqa: E402

from tests.agents_support import DATA, recorded  # noqa: E402

pytest_plugins = ["browser_support"]

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

AGENT_LOOP = """\
import json
from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, TextEditorTool

calls = json.load(open({anthropic!r}))
patches = json.load(open({openai!r}))
workspace = Workspace({root!r})
editor = TextEditorTool(workspace, approval="review", require_view=False, review_timeout=180)
patcher = ApplyPatchTool(workspace, approval="review", review_timeout=180)
transcript = [
    await editor.arun(calls["exact_edit"]),
    await patcher.arun(patches["update_two_hunks"]),
    await editor.arun(calls["rejected_edit"]),
]
print("TRANSCRIPT" + json.dumps(transcript))
"""


def review(page: Any, index: int) -> Any:
    """The ``index``-th review widget once it is drawn with Apply enabled."""
    from playwright.sync_api import expect

    widget = page.locator(".jp-OutputArea .nbedit-review").nth(index)
    try:
        widget.wait_for(state="visible", timeout=90_000)
    except Exception as error:
        raise AssertionError(
            f"review widget {index + 1} never appeared; outputs:\n{cell_outputs_text(page)}"
        ) from error
    expect(widget.locator("button.nbedit-apply")).to_be_enabled(timeout=30_000)
    return widget


def test_a_running_agent_loop_waits_for_apply_partial_and_reject(lab: LabServer, page: Any) -> None:
    project = lab.root / "agent_project"
    project.mkdir()
    for name, text in recorded("project").items():
        (project / name).write_bytes(text.encode("utf-8"))
    original = (project / "app.py").read_bytes()
    code = AGENT_LOOP.format(
        anthropic=str(DATA / "anthropic_tool_use.json"),
        openai=str(DATA / "openai_apply_patch_call.json"),
        root=str(project),
    )
    write_notebook(lab.root / "agent_loop.ipynb", [("code", code)])
    open_notebook(page, lab, "agent_loop.ipynb")
    # not awaited: the command's promise resolves only when the cell finishes, which needs the clicks below
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    first = review(page, 0)
    assert (project / "app.py").read_bytes() == original, "nothing may be written before Apply"
    first.locator("button.nbedit-apply").click()

    second = review(page, 1)
    toggles = second.locator(".nbedit-hunk-toggle input[type=checkbox]")
    assert toggles.count() == 2
    toggles.nth(1).uncheck()
    second.get_by_text("1 of 2 parts selected").wait_for()
    second.locator("button.nbedit-apply").click()

    review(page, 2)
    reason = page.locator(".jp-OutputArea .nbedit-reject-reason input").nth(2)
    reason.fill("keep the signature untyped")
    reason.press("Tab")  # ipywidgets' Text syncs its value on change (and blur)
    page.wait_for_timeout(300)
    page.locator(".jp-OutputArea .nbedit-review").nth(2).locator("button.nbedit-reject").click()

    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea')].some(e => e.innerText.includes('TRANSCRIPT'))",
        timeout=60_000,
    )
    wait_kernel_idle(page)
    output = cell_outputs_text(page)
    transcript = json.loads(output.split("TRANSCRIPT", 1)[1].strip().splitlines()[0])
    first_result, second_result, third_result = transcript
    assert first_result["tool_use_id"] == "toolu_01B1exact" and not first_result["is_error"]
    assert second_result["call_id"] == "call_A2hunks" and second_result["status"] == "completed"
    assert "applied app.py hunk 1 (line 9)" in second_result["output"]
    assert "left out (not written) app.py hunk 2 (line 16)" in second_result["output"]
    assert third_result["is_error"] and "The user rejected this change" in third_result["content"]
    assert "keep the signature untyped" in third_result["content"]

    text = (project / "app.py").read_text()
    assert 'return f"hello {name}"' in text
    assert "    result = 0.0\n" in text and "len(items)" not in text
    assert "-> str" not in text

    from nbedit.storage.history import HistoryStore

    with HistoryStore(lab.nbedit_home) as store:
        origins = [entry.origin for entry in store.entries() if entry.origin.startswith("agent:")]
    assert origins == ["agent:apply_patch:call_A2hunks", "agent:str_replace_based_edit_tool:toolu_01B1exact"]


BLOCKING_LOOP = """\
import json
from nbedit import Workspace
from nbedit.agents import FunctionTools, TextEditorTool

calls = json.load(open({anthropic!r}))
workspace = Workspace({root!r})
editor = TextEditorTool(workspace, approval="review", require_view=False, review_timeout=180)
functions = FunctionTools(workspace, approval="review", review_timeout=180)
transcript = [
    editor.run(calls["exact_edit"]),  # ordinary calls: no await, the cell blocks until the click
    functions.run("edit", {{"path": "README.md", "old": "tiny app", "new": "small app"}}, call_id="call_B2"),
]
print("TRANSCRIPT" + json.dumps(transcript))
"""


def test_a_blocking_run_waits_for_the_click_on_ipykernel_7(lab: LabServer, page: Any) -> None:
    """``tool.run(...)`` in an ordinary cell, no ``await``: the gate's clicks reach the kernel anyway."""
    project = lab.root / "blocking_project"
    project.mkdir()
    for name, text in recorded("project").items():
        (project / name).write_bytes(text.encode("utf-8"))
    readme = (project / "README.md").read_bytes()
    code = BLOCKING_LOOP.format(anthropic=str(DATA / "anthropic_tool_use.json"), root=str(project))
    write_notebook(lab.root / "blocking_loop.ipynb", [("code", code)])
    open_notebook(page, lab, "blocking_loop.ipynb")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    review(page, 0).locator("button.nbedit-apply").click()
    review(page, 1)
    reason = page.locator(".jp-OutputArea .nbedit-reject-reason input").nth(1)
    reason.fill("keep the name tiny")
    reason.press("Tab")
    page.wait_for_timeout(300)
    page.locator(".jp-OutputArea .nbedit-review").nth(1).locator("button.nbedit-reject").click()

    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea')].some(e => e.innerText.includes('TRANSCRIPT'))",
        timeout=60_000,
    )
    wait_kernel_idle(page)
    transcript = json.loads(cell_outputs_text(page).split("TRANSCRIPT", 1)[1].strip().splitlines()[0])
    edited, rejected = transcript
    assert not edited["is_error"] and edited["content"].startswith("Edited app.py."), edited
    assert rejected.startswith("Error: The user rejected this change") and "keep the name tiny" in rejected
    assert 'return f"hello {name}"' in (project / "app.py").read_text()
    assert (project / "README.md").read_bytes() == readme


def test_data_files_exist() -> None:
    assert Path(DATA / "anthropic_tool_use.json").is_file()
