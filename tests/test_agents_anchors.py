"""Anchored edits: ``view(anchors=True)`` shows ``N:hash|text``; ``edit_lines`` names lines by anchor.

Checked against the file (a stale anchor is refused with the current lines and
nothing written), and written through the same plan, approval, history and undo
as every edit. A property test holds the bytes: for any file (LF, CRLF, with or
without a final newline) and any range, the result is exactly the file with
those lines replaced.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbedit import Workspace
from nbedit.agents import FunctionTools
from nbedit.agents.anchors import line_hash
from tests.agents_support import snapshot


def anchors_of(view: str) -> dict[int, str]:
    """line number -> 'N:hash' as the view shows it."""
    return {int(n): f"{n}:{h}" for n, h in re.findall(r"^(\d+):([0-9a-f]{3})\|", view, flags=re.M)}


def test_anchored_view_shows_number_hash_and_text(workspace: Workspace) -> None:
    tools = FunctionTools(workspace)
    text = tools.run("view", {"path": "app.py", "anchors": True, "view_range": [4, 5]})
    assert f"4:{line_hash('def greet(name):')}|def greet(name):" in text
    line = '    return "hi " + name'
    assert f"5:{line_hash(line)}|{line}" in text
    assert "3:" not in text.split("\n", 1)[1] and "6:" not in text


def test_replace_insert_and_delete_by_anchors_with_history_and_undo(
    workspace: Workspace, project: Path
) -> None:
    tools = FunctionTools(workspace)
    original = (project / "app.py").read_bytes()
    anchors = anchors_of(tools.run("view", {"path": "app.py", "anchors": True}))
    text = tools.run(
        "edit_lines",
        {"path": "app.py", "replace": f"{anchors[9]}..{anchors[11]}",
         "new": "    result = sum(prices)", "insert_after": None},
        call_id="call_anchor1",
    )  # fmt: skip
    assert text.startswith("Replaced lines 9-11 of app.py."), text
    source = (project / "app.py").read_text()
    assert "def total(prices):\n    result = sum(prices)\n    return result\n" in source
    assert "def count(items):\n    result = 0\n    for item in items:\n" in source  # the twin is untouched
    anchors = anchors_of(tools.run("view", {"path": "app.py", "anchors": True}))
    text = tools.run("edit_lines", {"path": "app.py", "insert_after": "0", "new": "import math\n"})
    assert text.startswith("Inserted lines after line 0"), text
    anchors = anchors_of(tools.run("view", {"path": "app.py", "anchors": True}))
    last = max(anchors)
    text = tools.run("edit_lines", {"path": "app.py", "replace": anchors[last], "new": ""})
    assert text.startswith("Replaced"), text
    source = (project / "app.py").read_text()
    assert source.startswith("import math\n") and source.endswith("        result = result + 1\n")
    assert [entry.origin.split(":")[1] for entry in workspace.history()] == ["edit_lines"] * 3
    for _ in range(3):
        assert tools.run("undo", {}).startswith("Undid")
    assert (project / "app.py").read_bytes() == original


def test_a_stale_anchor_is_refused_with_the_current_lines(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace)
    anchors = anchors_of(tools.run("view", {"path": "app.py", "anchors": True}))
    path = project / "app.py"
    path.write_text(path.read_text().replace('return "hi " + name', 'return "hello " + name'))
    before = snapshot(project)
    text = tools.run("edit_lines", {"path": "app.py", "replace": anchors[5], "new": "    return name"})
    assert text.startswith("Error: anchor 5:") and "is stale" in text
    line = '    return "hello " + name'
    assert f"5:{line_hash(line)}|{line}" in text
    assert snapshot(project) == before and workspace.history() == []


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"replace": "5", "new": "x"}, "has no hash"),
        ({"replace": "5:zzz", "new": "x"}, "is not an anchor"),
        ({"replace": "99:abc", "new": "x"}, "past the end of the file"),
        ({"replace": "9:abc..5:abc", "new": "x"}, "ends before it starts"),
        ({"new": "x"}, "either replace"),
        ({"replace": "5:abc", "insert_after": "4:abc", "new": "x"}, "either replace"),
        ({"insert_after": "0", "new": ""}, "needs the lines to insert"),
    ],
)
def test_bad_anchors_are_refused(arguments: dict, expected: str, workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    text = FunctionTools(workspace).run("edit_lines", {"path": "app.py", **arguments})
    assert text.startswith("Error") and expected in text, text
    assert snapshot(project) == before


def test_anchored_edit_passes_the_approval_gate(workspace: Workspace, project: Path) -> None:
    before = snapshot(project)
    tools = FunctionTools(workspace, approval=lambda plan: "not this line")
    anchors = anchors_of(tools.run("view", {"path": "README.md", "anchors": True}))
    text = tools.run("edit_lines", {"path": "README.md", "replace": anchors[1], "new": "# small app"})
    assert text.startswith("Error: The user rejected this change") and "not this line" in text
    assert snapshot(project) == before


lines_strategy = st.lists(st.sampled_from(["a", "b", "", "  x = 1", "a", "\tz"]), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=lines_strategy,
    crlf=st.booleans(),
    final_newline=st.booleans(),
    data=st.data(),
)
def test_any_range_replaced_byte_exact(
    lines: list[str], crlf: bool, final_newline: bool, data, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ending = "\r\n" if crlf else "\n"
    original = ending.join(lines) + (ending if final_newline else "")
    if original == "":
        return
    root = tmp_path / f"case{abs(hash((tuple(lines), crlf, final_newline)))}"
    root.mkdir(exist_ok=True)
    (root / "f.txt").write_bytes(original.encode())
    tools = FunctionTools(Workspace(root, history=False))
    count = len(original.splitlines())
    start = data.draw(st.integers(1, count))
    end = data.draw(st.integers(start, count))
    new_lines = data.draw(st.lists(st.sampled_from(["n", "", "  m"]), max_size=3))
    new = "\n".join(new_lines) + ("\n" if new_lines else "")
    anchors = anchors_of(tools.run("view", {"path": "f.txt", "anchors": True}))
    text = tools.run(
        "edit_lines", {"path": "f.txt", "replace": f"{anchors[start]}..{anchors[end]}", "new": new}
    )
    assert not text.startswith("Error"), text
    kept = original.splitlines(keepends=True)
    written_ending = ending if ending in original else "\n"  # a file without line endings gets LF
    replacement = [line + written_ending for line in new_lines]
    expected_lines = kept[: start - 1] + replacement + kept[end:]
    if end == len(kept) and not original.endswith("\n") and expected_lines:
        # the file ended without a newline: it still does
        last = expected_lines[-1]
        expected_lines[-1] = last.rstrip("\r\n")
    assert (root / "f.txt").read_bytes() == "".join(expected_lines).encode()


def test_a_form_feed_is_not_a_line_break_in_views_and_anchored_edits(
    workspace: Workspace, project: Path
) -> None:
    (project / "ff.py").write_bytes(b"a = 1\x0c# page two\nb = 2\n")
    tools = FunctionTools(workspace)
    view = tools.run("view", {"path": "ff.py", "anchors": True})
    anchors = anchors_of(view)
    assert sorted(anchors) == [1, 2] and "1:" in view and "# page two" in view
    text = tools.run("edit_lines", {"path": "ff.py", "replace": anchors[2], "new": "b = 3"})
    assert text.startswith("Replaced lines 2-2"), text
    assert (project / "ff.py").read_bytes() == b"a = 1\x0c# page two\nb = 3\n"
    numbered = tools.run("view", {"path": "ff.py"})
    assert "     2\tb = 3" in numbered and "     3\t" not in numbered


def test_a_changed_line_with_the_same_short_hash_is_still_stale(workspace: Workspace, project: Path) -> None:
    """Three hex digits collide one time in 4,096: an anchor this tool showed is held to the whole line."""
    seen: dict[str, str] = {}
    for number in range(100_000):
        text = f"value = {number}"
        if line_hash(text) in seen:
            first, second = seen[line_hash(text)], text
            break
        seen[line_hash(text)] = text
    (project / "c.py").write_text(f"import os\n{first}\n")
    tools = FunctionTools(workspace)
    anchor = anchors_of(tools.run("view", {"path": "c.py", "anchors": True}))[2]
    (project / "c.py").write_text(f"import os\n{second}\n")  # someone changed it; same short hash
    before = snapshot(project)
    text = tools.run("edit_lines", {"path": "c.py", "replace": anchor, "new": "value = -1"})
    assert text.startswith(f"Error: anchor {anchor} is stale") and second in text, text
    assert snapshot(project) == before
    tools.run("view", {"path": "c.py", "anchors": True})  # seen again: now the anchor names what it shows
    assert tools.run("edit_lines", {"path": "c.py", "replace": anchor, "new": "value = -1"}).startswith(
        "Replaced"
    )
