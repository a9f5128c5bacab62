"""Every message a model reads names only what its tool has.

The engine's hints name options (``replace_all=True``, ``overwrite=True``,
``encoding=``, ``root=``) that no agent surface takes; each surface gets the
hint in its own terms, apply_patch's line numbers count the model's own
``diff``, and NoMatch leaves out candidates scoring near zero.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, FunctionTools, TextEditorTool
from nbedit.agents.messages import MIN_CANDIDATE_SCORE, for_model
from nbedit.errors import Candidate, NoMatch
from tests.agents_support import snapshot

FOREIGN = ("replace_all=True", "overwrite=True", "encoding=", "root=", "--root", "--replace-all", "--encoding",
           "force=True", "create command")  # fmt: skip


def editor(tool: TextEditorTool, command: str, path: str, **arguments: object) -> str:
    block = {
        "type": "tool_use",
        "id": "toolu_m",
        "name": tool.name,
        "input": {"command": command, "path": path, **arguments},
    }
    return str(tool.run(block)["content"])


def patch(tool: ApplyPatchTool, kind: str, path: str, diff: str | None = None) -> str:
    operation = {"type": kind, "path": path, **({"diff": diff} if diff is not None else {})}
    return str(tool.run({"type": "apply_patch_call", "call_id": "call_m", "operation": operation})["output"])


def assert_own_terms(text: str, *, allowed: tuple[str, ...] = ()) -> None:
    assert text.startswith("Error"), text
    for word in FOREIGN:
        if word not in allowed:
            assert word not in text, f"{word!r} in {text!r}"
    assert "\ue000" not in text


def test_text_editor_messages(workspace: Workspace, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01binary\x00")
    tool = TextEditorTool(workspace, require_view=False)
    before = snapshot(project)
    ambiguous = editor(tool, "str_replace", "app.py", old_str="    return result", new_str="    return 0")
    assert "include more surrounding lines in old_str" in ambiguous
    assert_own_terms(ambiguous)
    binary = editor(tool, "str_replace", "blob.bin", old_str="binary", new_str="text")
    assert "BinaryFile" in binary and "this tool cannot edit it" in binary
    assert_own_terms(binary)
    outside = editor(tool, "view", "../elsewhere.txt")
    assert "OutsideWorkspace" in outside and "use a path relative to it" in outside
    assert_own_terms(outside)
    missing = editor(tool, "view", "nothere.py")
    assert "create it with the create command" in missing  # this tool has one
    assert snapshot(project) == before


def test_apply_patch_messages_count_lines_of_the_model_s_diff(workspace: Workspace, project: Path) -> None:
    tool = ApplyPatchTool(workspace)
    before = snapshot(project)
    exists = patch(tool, "create_file", "app.py", "+x\n")
    assert "FileExists" in exists and "send an update_file operation" in exists
    assert_own_terms(exists)
    ambiguous = patch(tool, "update_file", "app.py", "@@\n-    return result\n+    return 0\n")
    assert "include more context lines (or an @@ line" in ambiguous
    assert_own_terms(ambiguous)
    # a parse error on the diff's line 4 is reported as line 4 (not 6, counting the envelope)
    broken = patch(
        tool,
        "update_file",
        "app.py",
        '@@ def greet(name):\n-    return "hi " + name\n+    return name\n*** junk\n',
    )
    assert "line 4 of your diff" in broken, broken
    missing = patch(tool, "update_file", "app.py", "@@\n-def nothing_like_this_at_all(q):\n+def f():\n")
    assert "the hunk at line 1 of your diff" in missing, missing
    assert snapshot(project) == before


def test_function_tools_messages(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace)
    before = snapshot(project)
    missing = tools.run("view", {"path": "nothere.py"})
    assert 'call edit with old "" and new set to its text' in missing
    assert_own_terms(missing)
    ambiguous = tools.run("edit", {"path": "app.py", "old": "    return result", "new": "    return 0"})
    assert "or set replace_all to true to change every one" in ambiguous
    assert_own_terms(ambiguous)
    notebook = (project / "analysis.ipynb").read_text().replace('"# Analysis"', '"threshold = 10"')
    (project / "analysis.ipynb").write_text(notebook)
    before = snapshot(project)
    cells = tools.run("edit", {"path": "analysis.ipynb", "old": "threshold = 10", "new": "threshold = 5"})
    assert "set cell to the id or index of the cell you mean" in cells, cells
    assert_own_terms(cells)
    created = tools.run("edit", {"path": "new.py", "old": "", "new": "x = 1\n"})  # what the hint says works
    assert created.startswith("Edited new.py."), created
    (project / "new.py").unlink()
    assert snapshot(project) == before


def test_no_match_leaves_out_candidates_scoring_near_zero() -> None:
    near = Candidate(4, 4, 0.82, "@@ -1 +1 @@\n-retrun x\n+return x\n")
    far = Candidate(9, 9, MIN_CANDIDATE_SCORE / 2, "@@ -1 +1 @@\n-retrun x\n+import os\n")
    text = for_model(NoMatch("a.py: could not find the old text", candidates=[near, far]), "functions")
    assert "lines 4-4, similarity 0.82" in text and "lines 9-9" not in text and "import os" not in text
    none_close = for_model(NoMatch("a.py: could not find the old text", candidates=[far]), "text_editor")
    assert "nothing in the file is close" in none_close and "copy old_str" in none_close
    assert "similarity" not in none_close


@pytest.mark.parametrize("surface", ["text_editor", "apply_patch", "functions"])
def test_no_option_token_survives_for_any_surface(surface: str) -> None:
    from nbedit.errors import BinaryFile, FileExists, StaleFile, option

    errors = [
        FileExists(f"a.py: already exists; allow overwrite ({option('overwrite')}) to replace it, or send an update instead"),
        BinaryFile(f"a.bin: byte 3 is not valid utf-8; if it is text, declare its encoding ({option('encoding')}, e.g. cp1252) and retry"),
        StaleFile(f"a.py: changed since it was read; pass {option('force')} to overwrite it anyway"),
    ]  # fmt: skip
    for error in errors:
        text = for_model(error, surface)  # type: ignore[arg-type]
        assert "\ue000" not in text and "=" not in text and "--" not in text, text
