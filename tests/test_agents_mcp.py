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


async def _session_calls(root: Path, home: Path, calls: list[tuple[str, dict]], *extra: str) -> list[Any]:
    environment = {"PATH": os.environ.get("PATH", ""), "NBEDIT_HOME": str(home), "NBEDIT_SESSION": "mcp-test"}
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "nbedit", "mcp", "--root", str(root), *extra], env=environment
    )
    results = []
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        results.append(sorted(tool.name for tool in listed.tools))
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


def run_session(root: Path, home: Path, calls: list[tuple[str, dict]], *extra: str) -> list[Any]:
    return asyncio.run(asyncio.wait_for(_session_calls(root, home, calls, *extra), timeout=120))


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
    assert names == ["edit", "history", "patch", "undo", "view"]
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
