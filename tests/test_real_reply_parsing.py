"""Whole real model replies pasted as they came, read the way a careful person reads them.

The replies are real (aider's history, ``tests/data/real-replies-parsing``): prose around
Markdown fences, ``<source>python`` tags under the path line, aider's unified diffs whose hunks
have no line numbers (``@@ ... @@``), a SEARCH of one blank line, a Windows path, the 2023
``ORIGINAL``/``UPDATED`` markers. Where the corpus holds the files, each reply is applied to them
through the public API and the folder must equal what was committed, byte for byte. Where it does
not (the reply's tag or path made aider itself edit a file of another name), the test writes a
file of its own that holds the reply's SEARCH text and checks where the edit lands.
Failure paths are checked as carefully: every file stays byte-identical and the error says what
to fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit.engine.formats import parse
from nbedit.errors import AmbiguousMatch, FileMissing, NoMatch, PatchSyntaxError

DATA = Path(__file__).parent / "data" / "real-replies-parsing" / "replies.json"
REPLIES = {reply["id"]: reply for reply in json.loads(DATA.read_text(encoding="utf-8"))}
WITH_FILES = [reply for reply in REPLIES.values() if reply["before"] is not None]


def _write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        if text is not None:
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))


def _tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }


def _apply(root: Path, text: str, **options: object) -> None:
    workspace = Workspace(root, history=False)
    workspace.apply(workspace.plan_patch(text, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize("reply", WITH_FILES, ids=lambda reply: reply["id"])
def test_a_real_reply_gives_the_committed_files(reply: dict, tmp_path: Path) -> None:
    _write(tmp_path, reply["before"])
    _apply(tmp_path, reply["text"])
    expected = {path: text.encode("utf-8") for path, text in reply["after"].items() if text is not None}
    assert _tree(tmp_path) == expected, reply["note"]


def test_aider_diffs_without_line_numbers_were_refused_before_and_now_read_by_content() -> None:
    diffs = [reply for reply in WITH_FILES if reply["dialect"] == "udiff"]
    assert len(diffs) >= 4
    for reply in diffs:
        change = parse(reply["text"])
        assert change.dialect == "unified"
        hunks = [hunk for file_change in change.files for hunk in file_change.hunks]
        assert hunks and all(hunk.start_line is None for hunk in hunks)


# -- '<source>python' under the path line ---------------------------------------------------------


def test_a_source_tag_is_not_a_file_name_for_an_empty_search(tmp_path: Path) -> None:
    # aider created a file named '<source>python'; the path line above the tag names the real file
    reply = REPLIES["aider-repo:d02506db16:t3"]["text"]
    coder = tmp_path / "aider" / "coders" / "editblock_coder.py"
    coder.parent.mkdir(parents=True)
    coder.write_bytes(b"import re\n")
    _apply(tmp_path, reply)
    assert sorted(_tree(tmp_path)) == ["aider/coders/editblock_coder.py"]
    text = coder.read_text()
    assert text.startswith(
        "import re\nfrom difflib import SequenceMatcher\n\ndef find_similar_text(original, content):\n"
    )
    assert text.endswith("    return best_match\n")


def test_a_source_tag_is_not_a_file_name_for_an_edit(tmp_path: Path) -> None:
    reply = REPLIES["aider-repo:045cfef59e:t1"]["text"]
    (file_change,) = parse(reply).files
    assert file_change.path == "aider/commands.py"
    before = (
        "class Commands:\n"
        + "".join(hunk.old for hunk in file_change.hunks)
        + "\n    def cmd_x(self):\n        pass\n"
    )
    _write(tmp_path, {"aider/commands.py": before})
    _apply(tmp_path, reply)
    assert sorted(_tree(tmp_path)) == ["aider/commands.py"]
    after = (tmp_path / "aider/commands.py").read_text()
    for hunk in file_change.hunks:
        assert hunk.new in after
    assert after.endswith("\n    def cmd_x(self):\n        pass\n")


# -- a Windows path ---------------------------------------------------------------------------------


def _dockerfile_reply() -> tuple[str, str, str]:
    reply = REPLIES["aider-repo:6f6eaf9f6d:t13"]["text"]
    (file_change,) = parse(reply).files
    assert file_change.path == "benchmark\\Dockerfile"
    (hunk,) = file_change.hunks
    return reply, hunk.old, hunk.new


def test_a_backslash_path_edits_the_one_file_it_names(tmp_path: Path) -> None:
    reply, old, new = _dockerfile_reply()
    _write(tmp_path, {"benchmark/Dockerfile": "# build\n" + old})
    _apply(tmp_path, reply)
    assert _tree(tmp_path) == {"benchmark/Dockerfile": ("# build\n" + new).encode()}


def test_a_backslash_path_that_names_two_files_is_refused(tmp_path: Path) -> None:
    reply, old, _ = _dockerfile_reply()
    _write(tmp_path, {"benchmark/Dockerfile": old, "benchmark\\Dockerfile": old})
    before = _tree(tmp_path)
    with pytest.raises(PatchSyntaxError) as info:
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert "benchmark/Dockerfile" in str(info.value) and "benchmark\\Dockerfile" in str(info.value)
    assert "'/'" in (info.value.hint or "")
    assert _tree(tmp_path) == before


def test_a_backslash_path_that_names_no_file_is_refused(tmp_path: Path) -> None:
    reply, _, _ = _dockerfile_reply()
    (tmp_path / "benchmark").mkdir()
    with pytest.raises(FileMissing) as info:
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert "'benchmark/Dockerfile'" in str(info.value)
    assert _tree(tmp_path) == {}


def test_a_new_file_with_a_backslash_path_is_not_guessed(tmp_path: Path) -> None:
    reply = "src\\new.py\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n"
    (tmp_path / "src").mkdir()
    with pytest.raises(PatchSyntaxError, match="backslashes"):
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert _tree(tmp_path) == {}
    # a Markdown-escaped underscore is no folder separator
    _apply(tmp_path, "**my\\_module.py**\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n")
    assert _tree(tmp_path) == {"my_module.py": b"x = 1\n"}


# -- stray dividers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "f.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n=======\n>>>>>>> REPLACE\n",
        "f.py\n<<<<<<< SEARCH\nx = 1\n=======\n=======\nx = 2\n>>>>>>> REPLACE\n",
        "f.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n=======\ny = 3\n>>>>>>> REPLACE\n",
    ],
)
def test_a_stray_divider_is_never_written(reply: str, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"x = 1\ny = 0\n")
    with pytest.raises(NoMatch):
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert (tmp_path / "f.py").read_bytes() == b"x = 1\ny = 0\n"


def test_a_divider_that_is_the_file_text_stays_editable(tmp_path: Path) -> None:
    fixture = "before\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\nafter\n"
    (tmp_path / "conflict.txt").write_text(fixture)
    reply = "conflict.txt\n<<<<<<< SEARCH\nours\n=======\ntheirs\n=======\nours\n=======\nTHEIRS\n>>>>>>> REPLACE\n"
    _apply(tmp_path, reply)
    assert (tmp_path / "conflict.txt").read_text() == fixture.replace("theirs", "THEIRS")
    (tmp_path / "doc.rst").write_text("Intro\n\nbody\n")
    _apply(tmp_path, "doc.rst\n<<<<<<< SEARCH\nIntro\n=======\nIntro\n=======\n>>>>>>> REPLACE\n")
    assert (tmp_path / "doc.rst").read_text() == "Intro\n=======\n\nbody\n"


# -- a whole reply in a dialect without file headers, the file in scope -----------------------------


def test_a_diff_without_file_headers_edits_the_file_in_scope(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    reply = "Change g:\n\n```diff\n@@ ... @@\n def g():\n-    return 2\n+    return 3\n```\n"
    with pytest.raises(PatchSyntaxError) as info:
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert info.value.line == 4 and "default" in (info.value.hint or "")
    _apply(tmp_path, reply, default_path="app.py")
    assert (tmp_path / "app.py").read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"


def test_a_hunk_whose_context_is_not_unique_is_refused_not_placed_by_a_guess(tmp_path: Path) -> None:
    text = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"
    (tmp_path / "app.py").write_text(text)
    # counts that do not fit the body: its line number is no evidence either, and the old line is twice there
    reply = "```diff\n--- app.py\n+++ app.py\n@@ -5,2 +5,9 @@\n-    return 1\n+    return 2\n```\n"
    with pytest.raises(AmbiguousMatch):
        Workspace(tmp_path, history=False).plan_patch(reply)
    assert (tmp_path / "app.py").read_text() == text
    # the same diff cut off inside the hunk is an error that says so
    with pytest.raises(PatchSyntaxError, match="truncated"):
        Workspace(tmp_path, history=False).plan_patch(reply.removeprefix("```diff\n").removesuffix("```\n"))


def test_the_refusal_of_a_stray_divider_says_so(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"x = 1\n")
    with pytest.raises(NoMatch, match="stray second divider, remove it"):
        Workspace(tmp_path, history=False).plan_patch(
            "f.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n=======\n>>>>>>> REPLACE\n"
        )
    with pytest.raises(NoMatch) as plain:
        Workspace(tmp_path, history=False).plan_patch(
            "f.py\n<<<<<<< SEARCH\nx = 3\n=======\nx = 2\n>>>>>>> REPLACE\n"
        )
    assert "divider" not in str(plain.value)
