"""TextEditorTool against a real workspace, driven by recorded Anthropic ``tool_use`` blocks.

Every refusal is checked twice: the ``tool_result`` says what to do next, and
every file under the root is byte-identical (and keeps its mode) afterwards.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from nbedit import Workspace
from nbedit.agents import TextEditorTool
from tests.agents_support import recorded, snapshot

CALLS = recorded("anthropic_tool_use")


def run(tool: TextEditorTool, name: str) -> dict:
    block = CALLS[name]
    result = tool.run(block)
    assert result["type"] == "tool_result" and result["tool_use_id"] == block["id"]
    assert isinstance(result["content"], str) and isinstance(result["is_error"], bool)
    return result


def refused(tool: TextEditorTool, name: str, project: Path) -> str:
    before = snapshot(project)
    result = run(tool, name)
    assert result["is_error"], result["content"]
    assert snapshot(project) == before, f"{name} changed a file although it was refused"
    return result["content"]


def test_definition_for_each_version(workspace: Workspace) -> None:
    assert TextEditorTool(workspace).definition == {
        "type": "text_editor_20250728",
        "name": "str_replace_based_edit_tool",
    }
    assert TextEditorTool(workspace, version="text_editor_20250429").definition == {
        "type": "text_editor_20250429",
        "name": "str_replace_based_edit_tool",
    }
    assert TextEditorTool(workspace, version="text_editor_20250124").definition == {
        "type": "text_editor_20250124",
        "name": "str_replace_editor",
    }
    assert TextEditorTool(workspace, max_characters=500).definition["max_characters"] == 500
    with pytest.raises(ValueError, match="unknown text editor version"):
        TextEditorTool(workspace, version="text_editor_20990101")
    with pytest.raises(ValueError, match="approval"):
        TextEditorTool(workspace, approval="sometimes")  # type: ignore[arg-type]


def test_view_numbers_lines_ranges_and_folders(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    text = run(tool, "view_app")["content"]
    assert '     1\t"""A tiny app the scripted model edits."""' in text
    assert '     5\t    return "hi " + name' in text
    ranged = run(tool, "view_app_range")["content"]
    assert "     8\tdef total(prices):" in ranged and "    19\t    return result" in ranged
    assert "     5\t" not in ranged
    listing = run(tool, "view_folder")["content"]
    assert "app.py" in listing and "analysis.ipynb" in listing and "README.md" in listing
    notebook = run(tool, "view_notebook")["content"]
    assert "# %% nbedit cell 1 [code] id=setup" in notebook and "threshold = 10" in notebook


def test_view_is_cut_at_max_characters_on_a_whole_line_and_says_how_to_page(workspace: Workspace) -> None:
    tool = TextEditorTool(workspace, max_characters=60)
    text = run(tool, "view_app")["content"]
    body = text.split("\n", 1)[1]
    assert "def count" not in text
    shown = [line for line in body.split("\n") if line[:6].strip().isdigit()]
    assert len("\n".join(shown)) <= 60 and shown[-1].startswith("     2\t")  # whole lines only
    assert "showing lines 1-2 of 19" in text and "view_range [3, 4]" in text


def test_exact_edit_is_applied_and_recorded_with_tool_and_call_id(
    workspace: Workspace, project: Path
) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    result = run(tool, "exact_edit")
    assert not result["is_error"], result["content"]
    assert result["content"].startswith("Edited app.py.")
    assert "not an exact match" not in result["content"]
    assert '     5\t    return f"hello {name}"' in result["content"]  # the edited region, numbered
    assert 'return f"hello {name}"' in (project / "app.py").read_text()
    entry = workspace.history()[0]
    assert entry.origin == "agent:str_replace_based_edit_tool:toolu_01B1exact"
    assert [f.path for f in entry.files] == ["app.py"]


def test_drifted_edit_is_recovered_and_names_the_tier(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    result = run(tool, "drifted_edit")
    assert not result["is_error"], result["content"]
    assert "not an exact match" in result["content"]
    assert "indentation" in result["content"]
    text = (project / "app.py").read_text()
    assert "def total(prices):\n    result = 0.0\n    for price in prices:\n" in text
    assert "def count(items):\n    result = 0\n" in text  # the other 'result = 0' is untouched


def test_ambiguous_edit_is_refused_with_every_location_then_retry_works(
    workspace: Workspace, project: Path
) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    text = refused(tool, "ambiguous_edit", project)
    assert "AmbiguousMatch" in text and "12:1" in text and "19:1" in text
    assert "include more surrounding lines in old_str" in text and "Nothing was written" in text
    assert "replace_all" not in text  # the text editor tool has no such argument
    result = run(tool, "retry_with_context")
    assert not result["is_error"], result["content"]
    source = (project / "app.py").read_text()
    assert source.count("return round(result, 2)") == 1 and source.endswith("    return result\n")


def test_missing_old_str_lists_closest_candidates(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    text = refused(tool, "missing_edit", project)
    assert "NoMatch" in text and "Nothing was written" in text


def test_require_view_refuses_unviewed_and_stale_files(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    text = refused(tool, "exact_edit", project)
    assert "has not been viewed" in text and "view the file first" in text
    run(tool, "view_app")
    # the person edits the file in between
    path = project / "app.py"
    path.write_bytes(path.read_bytes().replace(b"Greets", b"Greets") + b"# edited by the person\n")
    text = refused(tool, "edit_after_person", project)
    assert "changed on disk since you last viewed it" in text and "view the file again" in text
    run(tool, "view_again")
    result = run(tool, "edit_after_view")
    assert not result["is_error"], result["content"]
    assert path.read_text().endswith("# edited by the person\n")  # the person's line survives
    # its own edit counts as seen: a second edit needs no new view
    assert not run(tool, "exact_edit")["is_error"]


def test_require_view_off_edits_without_a_view(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace, require_view=False)
    assert not run(tool, "exact_edit")["is_error"]


def test_rejection_by_callable_says_so_and_writes_nothing(workspace: Workspace, project: Path) -> None:
    seen = []

    def approve(plan):  # type: ignore[no-untyped-def]
        seen.append(plan.diff)
        return "keep the signature untyped for now"

    tool = TextEditorTool(workspace, approval=approve)
    run(tool, "view_app")
    text = refused(tool, "rejected_edit", project)
    assert "The user rejected this change" in text
    assert "keep the signature untyped for now" in text
    assert "+def greet(name: str) -> str:" in seen[0]
    assert workspace.history() == []
    assert not run(tool, "after_rejection_view")["is_error"]


def test_callable_approval_true_applies(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace, approval=lambda plan: True)
    run(tool, "view_app")
    assert not run(tool, "rejected_edit")["is_error"]
    assert "def greet(name: str) -> str:" in (project / "app.py").read_text()


def test_dry_run_returns_the_diff_and_never_writes(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace, approval="dry-run")
    run(tool, "view_app")
    before = snapshot(project)
    result = run(tool, "exact_edit")
    assert not result["is_error"]
    assert "Dry run: nothing was written" in result["content"]
    assert '+    return f"hello {name}"' in result["content"]
    assert snapshot(project) == before and workspace.history() == []


def test_create_and_insert(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    assert not run(tool, "create_file")["is_error"]
    assert (project / "util.py").read_bytes() == b"def double(x):\n    return 2 * x\n"
    assert not run(tool, "insert_top")["is_error"]
    assert not run(tool, "insert_end")["is_error"]
    assert (project / "util.py").read_bytes() == (
        b"import math\ndef double(x):\n    return 2 * x\n\n\ndef half(x):\n    return x / 2\n"
    )
    text = refused(tool, "insert_past_end", project)
    assert "insert_line must be a whole number from 0" in text and "to 7" in text
    origins = [entry.origin for entry in workspace.history()]
    assert origins == [
        "agent:str_replace_based_edit_tool:toolu_01I2insert",
        "agent:str_replace_based_edit_tool:toolu_01I1insert",
        "agent:str_replace_based_edit_tool:toolu_01H1create",
    ]


def test_create_keeps_bytes_exact_without_final_newline(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    block = {"type": "tool_use", "id": "toolu_x", "name": "str_replace_based_edit_tool",
             "input": {"command": "create", "path": "raw.txt", "file_text": "a\r\nb"}}  # fmt: skip
    assert not tool.run(block)["is_error"]
    assert (project / "raw.txt").read_bytes() == b"a\r\nb"


def test_insert_keeps_crlf_and_a_missing_final_newline(workspace: Workspace, project: Path) -> None:
    (project / "crlf.txt").write_bytes(b"one\r\ntwo")
    tool = TextEditorTool(workspace, require_view=False)

    def insert(line: int, text: str) -> dict:
        return tool.run({"id": f"toolu_{line}", "name": "str_replace_based_edit_tool",
                         "input": {"command": "insert", "path": "crlf.txt", "insert_line": line, "new_str": text}})  # fmt: skip

    assert not insert(1, "between")["is_error"]
    assert (project / "crlf.txt").read_bytes() == b"one\r\nbetween\r\ntwo"
    assert not insert(3, "last")["is_error"]
    assert (project / "crlf.txt").read_bytes() == b"one\r\nbetween\r\ntwo\r\nlast"


def test_create_over_an_existing_file_needs_a_view(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    text = refused(tool, "create_existing", project)
    assert "has not been viewed" in text
    tool.run(
        {
            "id": "toolu_v",
            "name": "str_replace_based_edit_tool",
            "input": {"command": "view", "path": "README.md"},
        }
    )
    assert not run(tool, "create_existing")["is_error"]
    assert (project / "README.md").read_bytes() == b"# replaced\n"


def test_notebook_cell_edit_keeps_outputs(workspace: Workspace, project: Path) -> None:
    import nbformat

    tool = TextEditorTool(workspace)
    run(tool, "view_notebook")
    result = run(tool, "notebook_edit")
    assert not result["is_error"], result["content"]
    notebook = nbformat.reads((project / "analysis.ipynb").read_text(), as_version=4)
    assert notebook.cells[1].source == "threshold = 20\nprint(threshold)"
    assert notebook.cells[1].outputs[0]["text"] == "10\n" and notebook.cells[1].execution_count == 1


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("outside_root", "outside the workspace root"),
        ("bad_range", "view_range [30, 40] is outside the file, which has 19 lines"),
        ("unknown_command", "unknown command 'delete'"),
        ("missing_old_str", "needs 'old_str'"),
        ("view_missing_file", "does not exist; create it"),
        ("undo_edit_20250728", "undo_edit is not available in text_editor_20250728"),
    ],
)
def test_bad_calls_are_model_readable_errors(
    name: str, expected: str, workspace: Workspace, project: Path
) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    text = refused(tool, name, project)
    assert text.startswith("Error")
    assert expected in text


def test_wrong_tool_name_and_sdk_objects(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    block = SimpleNamespace(
        id="toolu_sdk", name="str_replace_based_edit_tool", input={"command": "view", "path": "app.py"}
    )
    result = tool.run(block)
    assert not result["is_error"] and result["tool_use_id"] == "toolu_sdk"
    wrong = dict(CALLS["view_app"], name="bash")
    assert "this tool is 'str_replace_based_edit_tool', not 'bash'" in tool.run(wrong)["content"]


def test_undo_edit_of_the_20250124_version_takes_back_the_tool_s_edit(
    workspace: Workspace, project: Path
) -> None:
    calls = recorded("anthropic_tool_use_20250124")
    tool = TextEditorTool(workspace, version="text_editor_20250124")
    original = (project / "app.py").read_bytes()
    tool.run(calls["view_app"])
    assert not tool.run(calls["exact_edit"])["is_error"]
    result = tool.run(calls["undo_edit"])
    assert not result["is_error"], result["content"]
    assert (project / "app.py").read_bytes() == original
    entry = workspace.history()[0]
    assert entry.origin == "agent:str_replace_editor:toolu_02C1undo" and entry.undoes is not None
    again = tool.run(calls["undo_again"])
    assert again["is_error"] and "no edit of it that is not undone" in again["content"]
    assert (project / "app.py").read_bytes() == original


def test_history_undo_takes_back_a_model_edit(workspace: Workspace, project: Path) -> None:
    original = (project / "app.py").read_bytes()
    tool = TextEditorTool(workspace)
    run(tool, "view_app")
    run(tool, "exact_edit")
    workspace.undo()
    assert (project / "app.py").read_bytes() == original


def test_insert_at_the_top_of_a_one_line_file_without_newline(workspace: Workspace, project: Path) -> None:
    (project / "one.txt").write_bytes(b"only")
    tool = TextEditorTool(workspace, require_view=False)
    block = {"id": "toolu_top", "name": "str_replace_based_edit_tool",
             "input": {"command": "insert", "path": "one.txt", "insert_line": 0, "new_str": "first\n"}}  # fmt: skip
    assert not tool.run(block)["is_error"]
    assert (project / "one.txt").read_bytes() == b"first\nonly"


def test_insert_into_a_notebook_is_refused(workspace: Workspace, project: Path) -> None:
    tool = TextEditorTool(workspace)
    run(tool, "view_notebook")
    before = snapshot(project)
    block = {"id": "toolu_nbins", "name": "str_replace_based_edit_tool",
             "input": {"command": "insert", "path": "analysis.ipynb", "insert_line": 1, "new_str": "x = 1"}}  # fmt: skip
    result = tool.run(block)
    assert result["is_error"] and "in a notebook use str_replace" in result["content"]
    assert snapshot(project) == before


def test_binary_file_and_empty_create(workspace: Workspace, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    tool = TextEditorTool(workspace)
    view = tool.run({"id": "toolu_bin", "name": "str_replace_based_edit_tool",
                     "input": {"command": "view", "path": "blob.bin"}})  # fmt: skip
    assert view["is_error"] and "BinaryFile" in view["content"]
    create = tool.run({"id": "toolu_empty", "name": "str_replace_based_edit_tool",
                       "input": {"command": "create", "path": "empty.txt", "file_text": ""}})  # fmt: skip
    assert not create["is_error"], create["content"]
    assert (project / "empty.txt").read_bytes() == b""


def test_a_typo_is_not_reported_as_applied_when_new_text_happens_to_exist(workspace: Workspace) -> None:
    tool = TextEditorTool(workspace, require_view=False)
    block = {"id": "toolu_typo", "name": "str_replace_based_edit_tool",
             "input": {"command": "str_replace", "path": "app.py", "old_str": "def totl(prices):",
                       "new_str": "def total(prices):"}}  # fmt: skip
    result = tool.run(block)
    # the engine's verdict: new text present, old text absent -> already applied; the model is told how to check
    assert not result["is_error"]
    assert "No change" in result["content"] and "view the file" in result["content"]
