"""``nbedit mcp``: the real server process, driven by the ``mcp`` package's own stdio client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from nbedit import Workspace  # noqa: E402
from tests.agents_support import snapshot  # noqa: E402


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def _session_calls(
    root: Path,
    home: Path,
    calls: list[tuple[str, dict]],
    *extra: str,
    errlog: Any = None,
    listing: list | None = None,
) -> list[Any]:
    environment = {"PATH": os.environ.get("PATH", ""), "NBEDIT_HOME": str(home), "NBEDIT_SESSION": "mcp-test",
                   "PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # fmt: skip
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "nbedit", "mcp", "--root", str(root), *extra], env=environment
    )
    results = []
    async with (
        stdio_client(parameters, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        listed = await session.list_tools()
        if listing is not None:
            listing.extend([initialized, listed])
        results.append(sorted(tool.name for tool in listed.tools))
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


def run_session(
    root: Path,
    home: Path,
    calls: list[tuple[str, dict]],
    *extra: str,
    errlog: Any = None,
    listing: list | None = None,
) -> list[Any]:
    return asyncio.run(
        asyncio.wait_for(
            _session_calls(root, home, calls, *extra, errlog=errlog, listing=listing), timeout=120
        )
    )


def test_tools_results_errors_and_shared_history(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    original = (project / "app.py").read_bytes()
    names, view, edit, ambiguous, missing, history = run_session(
        project,
        home,
        [
            ("view", {"path": "app.py", "view_range": [4, 5]}),
            ("edit", {"path": "app.py", "old": 'return "hi " + name', "new": 'return f"hello {name}"'}),
            ("edit", {"path": "app.py", "old": "    return result", "new": "    return 0"}),
            ("patch", {"patch": "--- a/nothere.py\n+++ b/nothere.py\n@@ -1 +1 @@\n-a\n+b\n"}),
            ("history", {}),
        ],
    )
    assert names == ["edit", "edit_lines", "history", "patch", "undo", "view"]
    assert not view.is_error and "     4\tdef greet(name):" in _text(view)
    assert not edit.is_error and _text(edit).startswith("Edited app.py.")
    assert ambiguous.is_error and "AmbiguousMatch" in _text(ambiguous) and "12:1" in _text(ambiguous)
    assert missing.is_error and "FileMissing" in _text(missing)
    assert "agent:mcp.edit:" in _text(history)
    # a person in a notebook (another session, same store) sees the agent's edit and undoes it
    person = Workspace(project, home=home, session="kernel-person")
    entries = person.history(all_sessions=True)
    assert len(entries) == 1 and entries[0].origin.startswith("agent:mcp.edit:")
    person.undo(entries[0].id)
    assert (project / "app.py").read_bytes() == original


def test_undo_over_mcp_and_dry_run(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    original = snapshot(project)
    results = run_session(
        project,
        home,
        [
            ("edit", {"path": "README.md", "old": "tiny app", "new": "small app"}),
            ("undo", {}),
            ("undo", {}),
        ],
    )
    assert not results[1].is_error and not results[2].is_error, _text(results[2])
    assert results[3].is_error and "no change made by a model" in _text(results[3])
    assert snapshot(project) == original
    dry = run_session(project, home, [("edit", {"path": "README.md", "old": "tiny app", "new": "small app"})],
                      "--approval", "dry-run")  # fmt: skip
    assert not dry[1].is_error and "Dry run" in _text(dry[1]) and "+# small app" in _text(dry[1])
    assert snapshot(project) == original


def test_descriptions_annotations_version_and_plain_errors_without_stderr_noise(
    project: Path, tmp_path: Path
) -> None:
    import nbedit

    home, listing = tmp_path / "home", []
    errors = tmp_path / "stderr.txt"
    before = snapshot(project)
    with errors.open("w") as errlog:
        _, missing_arguments, wrong_type, refused, unknown, bad_path = run_session(
            project,
            home,
            [
                ("edit", {"path": "app.py"}),
                ("view", {"path": "app.py", "view_range": "all"}),
                ("edit", {"path": "app.py", "old": "    return result", "new": "    return 0"}),
                ("rename", {"path": "app.py"}),
                ("view", {"path": "app.py\x00"}),
            ],
            errlog=errlog,
            listing=listing,
        )
    initialized, listed = listing
    assert initialized.server_info.name == "nbedit" and initialized.server_info.version == nbedit.__version__
    tools = {tool.name: tool for tool in listed.tools}
    assert tools["view"].annotations.read_only_hint and tools["history"].annotations.read_only_hint
    assert tools["patch"].annotations.destructive_hint and tools["undo"].annotations.destructive_hint
    assert tools["edit"].annotations.read_only_hint is False
    for tool in tools.values():
        assert tool.description and tool.output_schema is None
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    assert (
        "end -1 means to the last line"
        in tools["view"].input_schema["properties"]["view_range"]["description"]
    )
    assert "0-based index" in tools["edit"].input_schema["properties"]["cell"]["description"]

    assert missing_arguments.is_error
    assert _text(missing_arguments).startswith("Error: edit needs old and new;"), _text(missing_arguments)
    assert (
        wrong_type.is_error
        and _text(wrong_type).startswith("Error: view_range (")
        and "pydantic" not in _text(wrong_type)
    )
    for result in (missing_arguments, wrong_type, refused, unknown, bad_path):
        text = _text(result)
        assert result.is_error and "Error executing tool" not in text and "Error: Error" not in text, text
        assert "validation error" not in text and "errors.pydantic.dev" not in text
    assert _text(refused).startswith("Error: AmbiguousMatch:") and "set replace_all to true" in _text(refused)
    assert "unknown tool 'rename'" in _text(unknown)
    assert "control character" in _text(bad_path)
    assert errors.read_text() == "", errors.read_text()  # no log line per refused call
    assert snapshot(project) == before


def test_require_view_and_anchored_edit_over_mcp(project: Path, tmp_path: Path) -> None:
    import re

    home = tmp_path / "home"
    _, unviewed, view, anchored = run_session(
        project,
        home,
        [
            ("edit", {"path": "README.md", "old": "tiny app", "new": "small app"}),
            ("view", {"path": "README.md", "anchors": True}),
            ("view", {"path": "app.py", "anchors": True, "view_range": [4, 5]}),
        ],
        "--require-view",
    )
    assert unviewed.is_error and "has not been viewed" in _text(unviewed)
    anchors = dict(re.findall(r"^(\d+):([0-9a-f]{3})\|", _text(anchored), flags=re.M))
    _, *_, edited, undone = run_session(
        project,
        home,
        [
            ("view", {"path": "app.py", "anchors": True}),
            (
                "edit_lines",
                {"path": "app.py", "replace": f"5:{anchors['5']}", "new": '    return f"hello {name}"'},
            ),
            ("undo", {}),
        ],
        "--require-view",
    )
    assert not edited.is_error and _text(edited).startswith("Replaced lines 5-5 of app.py."), _text(edited)
    assert not undone.is_error and 'return "hi " + name' in (project / "app.py").read_text()


def test_a_recorded_ten_call_session_over_mcp(project: Path, tmp_path: Path) -> None:
    """The function tools' recorded session, sent by the mcp client (no person to reject over stdio)."""
    import json

    from tests.agents_support import recorded

    calls = [(call["name"], json.loads(call["arguments"])) for call in recorded("sessions")["functions"]]
    _, *results = run_session(project, tmp_path / "home", calls)
    texts = [_text(result) for result in results]
    errors = [result.is_error for result in results]
    assert errors == [False, False, True, False, False, False, True, False, False, False], texts
    view, drift, ambiguous, retry, typed, anchored, stale, inserted, undone, final = texts
    assert "5:4d1|" in view and "was not an exact match" in drift
    assert ambiguous.startswith("Error: AmbiguousMatch") and "set replace_all to true" in ambiguous
    assert retry.startswith("Edited app.py.") and typed.startswith("Edited app.py.")
    assert anchored.startswith("Replaced lines 5-5") and stale.startswith("Error: anchor 5:4d1 is stale")
    assert inserted.startswith("Inserted lines after line 15") and undone.startswith("Undid e")
    assert 'return f"hello {name}"' in final
    for text in texts:
        assert "Error executing" not in text and "Error: Error" not in text and "\ue000" not in text
