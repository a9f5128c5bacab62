"""The Codex apply_patch parser: values, tolerances Codex has, and the errors Codex raises."""

from __future__ import annotations

import pytest

from nbedit.engine.formats import apply_patch
from nbedit.engine.models import FileChange, Hunk
from nbedit.errors import PatchSyntaxError


def parse_error(text: str) -> PatchSyntaxError:
    with pytest.raises(PatchSyntaxError) as info:
        apply_patch.parse(text)
    assert info.value.dialect == "apply_patch"
    return info.value


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def test_add_delete_update_move() -> None:
    text = wrap(
        "*** Add File: path/add.py\n+abc\n+\n+def\n"
        "*** Delete File: path/delete.py\n"
        "*** Update File: path/update.py\n"
        "*** Move to: path/update2.py\n"
        "@@ def f():\n-    pass\n+    return 123\n"
    )
    change = apply_patch.parse(text)
    assert change.dialect == "apply_patch"
    assert change.files == (
        FileChange(path="path/add.py", operation="add", content="abc\n\ndef\n", source_line=2),
        FileChange(path="path/delete.py", operation="delete", source_line=6),
        FileChange(
            path="path/update.py",
            operation="update",
            new_path="path/update2.py",
            source_line=7,
            hunks=(
                Hunk(
                    old="    pass\n",
                    new="    return 123\n",
                    whole_lines=True,
                    anchors=("def f():",),
                    search_from_previous=True,
                    source_line=9,
                ),
            ),
        ),
    )


def test_context_and_several_chunks() -> None:
    text = wrap("*** Update File: m.txt\n@@\n a\n-b\n+B\n c\n@@\n-d\n+D\n")
    first, second = apply_patch.parse(text).files[0].hunks
    assert (first.old, first.new, first.source_line) == ("a\nb\nc\n", "a\nB\nc\n", 3)
    assert (second.old, second.new, second.source_line) == ("d\n", "D\n", 8)
    assert first.search_from_previous and second.search_from_previous
    assert not first.at_end and not second.at_end


def test_stacked_anchors_outermost_first() -> None:
    text = wrap(
        "*** Update File: a.py\n@@ class Greeter:\n@@     def hello(self):\n-        return 1\n+        return 2\n"
    )
    (hunk,) = apply_patch.parse(text).files[0].hunks
    assert hunk.anchors == ("class Greeter:", "    def hello(self):")
    assert hunk.source_line == 3


def test_end_of_file_marker_sets_at_end() -> None:
    text = wrap("*** Update File: t.txt\n@@\n first\n-second\n+second updated\n*** End of File\n")
    (hunk,) = apply_patch.parse(text).files[0].hunks
    assert hunk.at_end
    assert hunk.old == "first\nsecond\n"


def test_pure_addition_chunk_appends_at_end() -> None:
    text = wrap("*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n")
    (hunk,) = apply_patch.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.at_end) == ("", "added line 1\nadded line 2\n", True)


def test_first_chunk_without_header() -> None:
    text = wrap("*** Update File: file2.py\n import foo\n+bar\n")
    (hunk,) = apply_patch.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.anchors) == ("import foo\n", "import foo\nbar\n", ())


def test_update_followed_by_add() -> None:
    text = wrap("*** Update File: file.py\n@@\n+line\n*** Add File: other.py\n+content\n")
    update, add = apply_patch.parse(text).files
    assert update.hunks[0].new == "line\n"
    assert (add.path, add.content) == ("other.py", "content\n")


def test_empty_lines_inside_a_chunk_are_context_trailing_ones_separate_chunks() -> None:
    text = wrap("*** Update File: f.py\n@@\n def a():\n\n-    x\n+    y\n\n\n@@\n-z\n+Z\n\n")
    first, second = apply_patch.parse(text).files[0].hunks
    assert first.old == "def a():\n\n    x\n"
    assert first.new == "def a():\n\n    y\n"
    assert (second.old, second.new) == ("z\n", "Z\n")


def test_single_space_line_is_explicit_empty_context() -> None:
    text = wrap("*** Update File: f.py\n@@\n-x\n+y\n \n")
    (hunk,) = apply_patch.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("x\n\n", "y\n\n")


def test_whitespace_padded_markers() -> None:
    text = " *** Begin Patch \n  *** Update File: foo.txt  \n@@\n-old\n+new\n*** End Patch \n"
    (file_change,) = apply_patch.parse(text).files
    assert file_change.path == "foo.txt"


@pytest.mark.parametrize(
    "opener",
    [
        "<<'EOF'",
        "<<EOF",
        '<<"EOF"',
        "apply_patch <<'EOF'",
        "applypatch <<EOF",
        "cd src && apply_patch <<'EOF'",
        "cat <<'EOF' | apply_patch",
    ],
)
def test_heredoc_wrapping(opener: str) -> None:
    text = f"{opener}\n*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch\nEOF\n"
    (file_change,) = apply_patch.parse(text).files
    assert (file_change.path, file_change.content, file_change.source_line) == ("foo", "hi\n", 3)


def test_markdown_fence_around_heredoc() -> None:
    text = "```bash\napply_patch <<'PATCH'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nPATCH\n```\n"
    assert apply_patch.parse(text).files[0].operation == "delete"


def test_unclosed_heredoc() -> None:
    error = parse_error("apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\n")
    assert "heredoc" in str(error)
    assert error.line == 4


def test_crlf_patch_keeps_carriage_returns_in_content_only() -> None:
    text = "*** Begin Patch\r\n*** Update File: w.txt\r\n@@ anchor\r\n-a\r\n+b\r\n*** End Patch\r\n"
    (file_change,) = apply_patch.parse(text).files
    assert file_change.path == "w.txt"
    (hunk,) = file_change.hunks
    assert (hunk.old, hunk.new, hunk.anchors) == ("a\r\n", "b\r\n", ("anchor",))


def test_blank_lines_between_operations_are_tolerated() -> None:
    text = wrap("*** Add File: a\n+x\n\n*** Delete File: b\n\n")
    assert [f.operation for f in apply_patch.parse(text).files] == ["add", "delete"]


def test_add_without_lines_creates_an_empty_file() -> None:
    (file_change,) = apply_patch.parse(wrap("*** Add File: empty.txt\n")).files
    assert file_change.content == ""


# -- errors, as Codex raises them ---------------------------------------------------------------------


def test_empty_patch_is_an_error() -> None:
    error = parse_error("*** Begin Patch\n*** End Patch\n")
    assert "no file operations" in str(error)
    assert error.line == 1
    assert parse_error("").line is None
    assert parse_error("   \n\n").line is None


def test_update_without_chunks() -> None:
    error = parse_error(wrap("*** Update File: test.py\n"))
    assert error.line == 2
    assert "test.py" in str(error)
    error = parse_error(wrap("*** Update File: a.py\n*** Move to: b.py\n"))
    assert error.line == 2


def test_chunk_header_without_lines() -> None:
    error = parse_error(wrap("*** Update File: a.py\n@@\n-x\n+y\n@@ foo\n*** Delete File: b\n"))
    assert error.line == 6
    error = parse_error(wrap("*** Update File: a.py\n@@\n*** End of File\n"))
    assert error.line == 3


def test_invalid_operation_header() -> None:
    error = parse_error(wrap("*** Frobnicate File: foo\n"))
    assert error.line == 2
    assert "Frobnicate" in str(error)
    assert "Add File" in (error.hint or "")


def test_missing_begin_and_end() -> None:
    error = parse_error("bad\n")
    assert error.line == 1
    assert "Begin Patch" in str(error)
    error = parse_error("*** Begin Patch\n*** Add File: a\n+x\n")
    assert error.line == 3
    assert "End Patch" in str(error)
    error = parse_error("*** Begin Patch\n")
    assert "End Patch" in str(error)


def test_a_whole_reply_around_the_patch_is_skipped() -> None:
    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch\n"
    for text in (
        patch + "thanks!\n",
        "I'll fix it.\n\n```\n" + patch + "```\n\nThis:\n- returns 2\n",
        "Run this:\n\n```bash\napply_patch <<'EOF'\n" + patch + "EOF\n```\n",
    ):
        (file_change,) = apply_patch.parse(text).files
        assert (file_change.path, file_change.hunks[0].new) == ("src/app.py", "    return 2\n")


def test_a_change_outside_the_patch_is_an_error_not_skipped() -> None:
    error = parse_error("*** Begin Patch\n*** Delete File: a\n*** End Patch\n-x\n+y\n")
    assert error.line == 4
    assert "too early" in (error.hint or "")
    error = parse_error("Also:\n*** Delete File: b\n\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n")
    assert error.line == 2


def test_two_patches_in_one_text() -> None:
    text = wrap("*** Delete File: a\n") + wrap("*** Delete File: b\n")
    error = parse_error(text)
    assert error.line == 3
    assert "one patch at a time" in (error.hint or "")


def test_unexpected_line_at_chunk_start() -> None:
    error = parse_error(wrap("*** Update File: a.py\nnot a diff line\n"))
    assert error.line == 3
    assert "unexpected line" in str(error)
    error = parse_error(wrap("*** Update File: a.py\n@@\nnot a diff line\n"))
    assert error.line == 3
    assert "has no lines" in str(error)


def test_later_chunk_must_start_with_header() -> None:
    # After a chunk ends at a non-diff line, the next chunk needs '@@'.
    error = parse_error(wrap("*** Update File: a.py\n@@\n-x\n+y\n@nope\n-z\n"))
    assert error.line == 6


def test_empty_paths() -> None:
    assert parse_error(wrap("*** Add File: \n+x\n")).line == 2
    assert parse_error(wrap("*** Update File: a\n*** Move to:  \n@@\n-x\n+y\n")).line == 3


def test_looks_like() -> None:
    assert apply_patch.looks_like(wrap("*** Delete File: a\n"))
    assert apply_patch.looks_like("apply_patch <<'EOF'\n*** Begin Patch\n")
    assert not apply_patch.looks_like("--- a/x\n+++ b/x\n")
    assert not apply_patch.looks_like("+*** Begin Patch\n")
