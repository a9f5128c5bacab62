"""The unified / git diff parser: values it produces, errors it raises, and real git output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine.formats import unified
from nbedit.engine.models import Hunk
from nbedit.errors import PatchSyntaxError


def parse_error(text: str, **kwargs: object) -> PatchSyntaxError:
    with pytest.raises(PatchSyntaxError) as info:
        unified.parse(text, **kwargs)  # type: ignore[arg-type]
    assert info.value.dialect == "unified"
    return info.value


# -- plain diff -u -----------------------------------------------------------------------------------

SIMPLE = """\
--- a/src/app.py\t2024-01-01 10:00:00.000000000 +0100
+++ b/src/app.py\t2024-01-02 10:00:00.000000000 +0100
@@ -2,3 +2,4 @@ def main():
 one
-two
+TWO
+two and a half
 three
"""


def test_simple_hunk_values() -> None:
    change = unified.parse(SIMPLE)
    assert change.dialect == "unified"
    (file_change,) = change.files
    assert file_change.path == "src/app.py"  # a/ b/ stripped, timestamps dropped
    assert file_change.operation == "update"
    assert file_change.new_path is None
    assert file_change.source_line == 1
    assert file_change.hunks == (
        Hunk(
            old="one\ntwo\nthree\n",
            new="one\nTWO\ntwo and a half\nthree\n",
            whole_lines=True,
            start_line=2,
            source_line=3,
        ),
    )


def test_prefixes_kept_when_only_one_side_has_them() -> None:
    text = "--- a/x.txt\n+++ x.txt\n@@ -1 +1 @@\n-a\n+b\n"
    (file_change,) = unified.parse(text).files
    assert file_change.path == "x.txt"  # the new name, unstripped
    text = "--- a/x.txt\n+++ a/x.txt\n@@ -1 +1 @@\n-a\n+b\n"
    assert unified.parse(text).files[0].path == "a/x.txt"


def test_different_plain_names_target_the_new_name() -> None:
    text = "--- notes.txt.orig\n+++ notes.txt\n@@ -1 +1 @@\n-a\n+b\n"
    (file_change,) = unified.parse(text).files
    assert file_change.path == "notes.txt"
    assert file_change.new_path is None


def test_omitted_counts_mean_one() -> None:
    text = "--- a/f\n+++ b/f\n@@ -3 +3 @@\n-x\n+y\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line) == ("x\n", "y\n", 3)


def test_several_hunks_and_files_in_order() -> None:
    text = (
        "--- a/one.txt\n+++ b/one.txt\n"
        "@@ -1,2 +1,2 @@\n-a\n+A\n b\n"
        "@@ -10,2 +10,2 @@\n c\n-d\n+D\n"
        "--- a/two.txt\n+++ b/two.txt\n"
        "@@ -1 +1 @@\n-x\n+y\n"
    )
    change = unified.parse(text)
    assert [f.path for f in change.files] == ["one.txt", "two.txt"]
    assert [h.start_line for h in change.files[0].hunks] == [1, 10]
    assert [h.source_line for h in change.files[0].hunks] == [3, 7]
    assert change.files[1].source_line == 11


def test_blank_lines_between_hunks_of_one_file() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n\n\n@@ -9 +9 @@\n-b\n+B\n"
    (file_change,) = unified.parse(text).files
    assert [hunk.old for hunk in file_change.hunks] == ["a\n", "b\n"]


def test_pure_insertion_start_line_is_the_line_before_which_new_lines_go() -> None:
    text = "--- a/f\n+++ b/f\n@@ -5,0 +6,2 @@\n+new 1\n+new 2\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert hunk.old == ""
    assert hunk.new == "new 1\nnew 2\n"
    assert hunk.start_line == 6
    text = "--- a/f\n+++ b/f\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert hunk.start_line == 1


def test_pure_deletion_hunk() -> None:
    text = "--- a/f\n+++ b/f\n@@ -4,2 +3,0 @@\n-gone\n-also gone\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line) == ("gone\nalso gone\n", "", 4)


def test_no_newline_at_end_of_file_markers() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"  # the old file lacked the final newline, the new one has it
    (hunk,) = unified.parse(text).files[0].hunks
    assert hunk.old == "a\nb"
    assert hunk.new == "a\nb\n"
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+c\n\\ No newline at end of file\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("b\n", "c")
    text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n z\n\\ No newline at end of file\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a\nz", "A\nz")  # a context line ends both sides


def test_crlf_lines_keep_their_carriage_return() -> None:
    text = "--- a/f\r\n+++ b/f\r\n@@ -1,2 +1,2 @@\r\n one\r\n-two\r\n+TWO\r\n"
    (file_change,) = unified.parse(text).files
    assert file_change.path == "f"
    (hunk,) = file_change.hunks
    assert hunk.old == "one\r\ntwo\r\n"
    assert hunk.new == "one\r\nTWO\r\n"


def test_empty_context_line_whose_space_was_stripped() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert hunk.old == "a\n\nb\n"
    assert hunk.new == "a\n\nB\n"


def test_text_without_final_newline() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a\n", "b\n")


def test_removed_line_that_looks_like_a_header_inside_a_hunk() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n--- x\n-+++ y\n+z\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("-- x\n+++ y\n", "z\n")


def test_preamble_and_email_signature_are_skipped() -> None:
    text = (
        "From 1234 Mon Sep 17 00:00:00 2001\n"
        "From: Someone <someone@example.org>\n"
        "Subject: [PATCH] fix\n"
        "\n"
        "Explain the fix; @@ in prose is fine.\n"
        "---\n"
        " f | 2 +-\n"
        " 1 file changed\n"
        "\n"
        "diff --git a/f b/f\n"
        "index 1111111..2222222 100644\n"
        "--- a/f\n"
        "+++ b/f\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
        "-- \n"
        "2.43.0\n"
        "\n"
    )
    (file_change,) = unified.parse(text).files
    assert file_change.path == "f"
    assert file_change.hunks[0].old == "a\n"
    assert file_change.source_line == 10


def test_git_log_p_with_two_commits() -> None:
    text = (
        "commit aaaa\nAuthor: A <a@example.org>\n\n    first\n\n"
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
        "\ncommit bbbb\nAuthor: A <a@example.org>\n\n    second\n\n"
        "diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-c\n+d\n"
    )
    assert [f.path for f in unified.parse(text).files] == ["f", "g"]


def test_add_and_delete_via_dev_null() -> None:
    text = (
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-now\n"
    )
    added, deleted = unified.parse(text).files
    assert (added.path, added.operation, added.content, added.hunks) == (
        "new.txt",
        "add",
        "hello\nworld\n",
        (),
    )
    assert (deleted.path, deleted.operation, deleted.content) == ("old.txt", "delete", None)
    assert [(h.old, h.new) for h in deleted.hunks] == [("bye\nnow\n", "")]


def test_hunk_without_header_uses_default_path() -> None:
    text = "@@ -2,2 +2,2 @@\n x\n-y\n+z\n"
    (file_change,) = unified.parse(text, default_path="cell.py").files
    assert file_change.path == "cell.py"
    assert file_change.hunks[0].old == "x\ny\n"
    error = parse_error(text)
    assert error.line == 1
    assert "default" in (error.hint or "")


def test_quoted_git_paths_with_escapes() -> None:
    text = (
        'diff --git "a/sp ace\\t.txt" "b/sp ace\\t.txt"\n'
        "index 1111111..2222222 100644\n"
        '--- "a/sp ace\\t.txt"\n'
        '+++ "b/sp ace\\t.txt"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    assert unified.parse(text).files[0].path == "sp ace\t.txt"
    text = '--- "a/caf\\303\\251.txt"\n+++ "b/caf\\303\\251.txt"\n@@ -1 +1 @@\n-a\n+b\n'
    assert unified.parse(text).files[0].path == "café.txt"


def test_unquoted_path_with_space_and_git_trailing_tab() -> None:
    text = "diff --git a/my file.txt b/my file.txt\n--- a/my file.txt\t\n+++ b/my file.txt\t\n@@ -1 +1 @@\n-a\n+b\n"
    assert unified.parse(text).files[0].path == "my file.txt"


def test_git_rename_with_change_mode_change_and_pure_rename() -> None:
    text = (
        "diff --git a/old.py b/new.py\n"
        "similarity index 90%\n"
        "rename from old.py\n"
        "rename to new.py\n"
        "index 1111111..2222222 100644\n"
        "--- a/old.py\n"
        "+++ b/new.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/run.sh b/run.sh\n"
        "old mode 100644\n"
        "new mode 100755\n"
        "diff --git a/x b/y\n"
        "similarity index 100%\n"
        "rename from x\n"
        "rename to y\n"
    )
    renamed, chmodded, pure = unified.parse(text).files
    assert (renamed.path, renamed.new_path, len(renamed.hunks)) == ("old.py", "new.py", 1)
    assert (chmodded.path, chmodded.new_mode, chmodded.hunks) == ("run.sh", 0o755, ())
    assert (pure.path, pure.new_path, pure.hunks, pure.operation) == ("x", "y", (), "update")


def test_git_new_and_deleted_empty_files() -> None:
    text = (
        "diff --git a/empty b/empty\nnew file mode 100755\nindex 0000000..e69de29\n"
        "diff --git a/gone b/gone\ndeleted file mode 100644\nindex e69de29..0000000\n"
    )
    added, deleted = unified.parse(text).files
    assert (added.path, added.operation, added.content, added.new_mode) == ("empty", "add", "", 0o755)
    # no hunk: the file must be empty (an empty old text is checked against the file when planned)
    assert (deleted.path, deleted.operation) == ("gone", "delete")
    assert [(hunk.old, hunk.new) for hunk in deleted.hunks] == [("", "")]


def test_mnemonic_prefixes_in_git_diffs() -> None:
    text = (
        "diff --git i/my file.txt w/my file.txt\n--- i/my file.txt\n+++ w/my file.txt\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert unified.parse(text).files[0].path == "my file.txt"
    text = "diff --git i/e w/e\nnew file mode 100644\nindex 0000000..e69de29\n"
    assert unified.parse(text).files[0].path == "e"
    # Outside a git diff only a/ and b/ are prefixes.
    text = "--- i/x\n+++ w/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert unified.parse(text).files[0].path == "w/x"


def test_no_prefix_git_diff_keeps_names() -> None:
    text = (
        "diff --git src/f.py src/f.py\nindex 1..2 100644\n--- src/f.py\n+++ src/f.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert unified.parse(text).files[0].path == "src/f.py"


# -- errors ------------------------------------------------------------------------------------------


def test_binary_patch_is_refused() -> None:
    text = "diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n"
    error = parse_error(text)
    assert error.line == 3
    assert "binary" in str(error)
    text = "diff --git a/img.png b/img.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\n"
    assert "binary" in str(parse_error(text))


@pytest.mark.parametrize(("mode", "word"), [("120000", "symbolic links"), ("160000", "submodules")])
def test_symlinks_and_submodules_are_refused(mode: str, word: str) -> None:
    text = f"diff --git a/l b/l\nnew file mode {mode}\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n"
    error = parse_error(text)
    assert word in str(error)
    assert error.line == 2


def test_copy_is_refused() -> None:
    text = "diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n"
    error = parse_error(text)
    assert "copy" in str(error)
    assert error.line == 3


def test_wrong_counts_are_read_from_the_body_and_located_by_content() -> None:
    # a model's counts that do not fit the body: the body is what it meant, its line number is not evidence
    text = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n@@ -9 +9 @@\n-x\n+y\n"
    first, second = unified.parse(text).files[0].hunks
    assert (first.old, first.new, first.start_line, first.source_line) == ("a\nb\n", "a\nB\n", None, 3)
    assert (second.old, second.new, second.start_line) == ("x\n", "y\n", 9)


def test_truncated_final_hunk() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n"
    error = parse_error(text)
    assert "truncated" in str(error)
    assert error.line == 6


def test_too_many_body_lines_are_read_as_the_body_says() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line) == ("a\n", "b\nc\n", None)
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n extra context\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a\nextra context\n", "b\nextra context\n")


def test_garbled_hunk_header_is_read_without_line_numbers() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,x +1 @@\n-a\n+b\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line, hunk.source_line) == ("a\n", "b\n", None, 3)


def test_combined_diff_is_refused() -> None:
    text = "diff --cc f\n--- a/f\n+++ b/f\n@@@ -1,1 -1,1 +1,1 @@@\n- a\n -b\n++c\n"
    assert "combined" in str(parse_error(text))


def test_no_newline_marker_in_the_middle_is_an_error() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n+d\n"
    assert parse_error(text).line == 6


def test_no_file_sections() -> None:
    error = parse_error("just some text\nwithout a diff\n")
    assert error.line is None
    assert "no file sections" in str(error)
    assert "no file sections" in str(parse_error(""))


def test_header_without_hunks() -> None:
    error = parse_error("--- a/f\n+++ b/f\n\nsome text\n")
    assert error.line == 1
    assert "without any hunk" in str(error)


def test_git_names_that_differ_without_rename_header() -> None:
    text = "diff --git a/x b/y\nindex 1..2 100644\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n"
    assert "rename" in str(parse_error(text))


def test_add_with_old_lines_is_an_error() -> None:
    text = "--- /dev/null\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
    assert "new file" in str(parse_error(text))


def test_looks_like() -> None:
    assert unified.looks_like(SIMPLE)
    assert unified.looks_like("diff --git a/x b/x\n")
    assert unified.looks_like("@@ -1 +1 @@\n-a\n+b\n")
    assert not unified.looks_like("--- just a rule\nnot a diff\n")
    assert not unified.looks_like("<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n")


# -- real git output ---------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "core.quotepath=true", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return result.stdout.decode("utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.email", "test@example.org")
    git(path, "config", "user.name", "Test")
    return path


def commit_all(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "state")


def test_real_git_diff_of_everything(repo: Path) -> None:
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (repo / "nofinal.txt").write_bytes(b"alpha\nbeta")
    (repo / "moved.py").write_bytes(b"".join(b"line %d\n" % n for n in range(1, 21)))
    (repo / "tool.sh").write_bytes(b"echo hi\n")
    (repo / "doomed.txt").write_bytes(b"bye\nnow\n")
    (repo / "sp ace.txt").write_bytes(b"x\n")
    commit_all(repo)

    (repo / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\n")
    (repo / "nofinal.txt").write_bytes(b"alpha\nbeta\ngamma")
    (repo / "moved.py").unlink()
    (repo / "renamed.py").write_bytes(
        b"".join(b"line %d\n" % n for n in range(1, 21)).replace(b"line 7", b"LINE 7")
    )
    (repo / "tool.sh").chmod(0o755)
    (repo / "doomed.txt").unlink()
    (repo / "fresh.txt").write_bytes(b"brand\nnew\n")
    (repo / "sp ace.txt").write_bytes(b"y\n")
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", "-M")

    files = {f.path: f for f in unified.parse(diff).files}
    assert set(files) == {
        "crlf.txt",
        "nofinal.txt",
        "moved.py",
        "tool.sh",
        "doomed.txt",
        "fresh.txt",
        "sp ace.txt",
    }

    (crlf_hunk,) = files["crlf.txt"].hunks
    assert crlf_hunk.old == "one\r\ntwo\r\nthree\r\n"
    assert crlf_hunk.new == "one\r\nTWO\r\nthree\r\n"

    (tail_hunk,) = files["nofinal.txt"].hunks
    assert tail_hunk.old == "alpha\nbeta"
    assert tail_hunk.new == "alpha\nbeta\ngamma"

    moved = files["moved.py"]
    assert moved.new_path == "renamed.py"
    (moved_hunk,) = moved.hunks
    assert "-line 7" not in moved_hunk.old and "line 7\n" in moved_hunk.old
    assert "LINE 7\n" in moved_hunk.new
    assert moved_hunk.start_line == 4

    assert files["tool.sh"].new_mode == 0o755
    assert files["tool.sh"].hunks == ()

    assert files["doomed.txt"].operation == "delete"
    assert files["doomed.txt"].hunks[0].old == "bye\nnow\n"

    assert files["fresh.txt"].operation == "add"
    assert files["fresh.txt"].content == "brand\nnew\n"
    assert files["fresh.txt"].new_mode == 0o644

    assert files["sp ace.txt"].hunks[0].new == "y\n"


def test_real_git_diff_round_trip_reconstructs_the_new_files(repo: Path) -> None:
    """Applying parsed hunks naively (exact text replace at claimed lines) gives git's new text."""
    before = "".join(f"row {n}\n" for n in range(1, 60))
    (repo / "data.txt").write_text(before)
    commit_all(repo)
    after = (
        before.replace("row 5\n", "row five\n").replace("row 30\n", "").replace("row 58\n", "row 58\nextra\n")
    )
    (repo / "data.txt").write_text(after)
    diff = git(repo, "diff", "-U1")

    (file_change,) = unified.parse(diff).files
    assert len(file_change.hunks) == 3
    lines = before.splitlines(keepends=True)
    for hunk in reversed(file_change.hunks):
        start = (hunk.start_line or 1) - 1
        old_lines = hunk.old.splitlines(keepends=True)
        assert lines[start : start + len(old_lines)] == old_lines
        lines[start : start + len(old_lines)] = hunk.new.splitlines(keepends=True)
    assert "".join(lines) == after


def test_real_git_diff_quoted_unicode_path(repo: Path) -> None:
    name = "naïve file.txt"
    (repo / name).write_text("a\n")
    commit_all(repo)
    (repo / name).write_text("b\n")
    diff = git(repo, "diff")
    assert '"' in diff  # core.quotepath quotes the non-ASCII name
    assert unified.parse(diff).files[0].path == name


def test_real_git_diff_with_mnemonic_prefixes(repo: Path) -> None:
    (repo / "f.txt").write_text("a\n")
    commit_all(repo)
    (repo / "f.txt").write_text("b\n")
    (repo / "g.txt").write_text("new\n")
    git(repo, "add", "g.txt")
    diff = git(repo, "-c", "diff.mnemonicPrefix=true", "diff", "HEAD")
    assert "--- c/f.txt" in diff
    change = unified.parse(diff)
    assert [(f.path, f.operation) for f in change.files] == [("f.txt", "update"), ("g.txt", "add")]


def test_real_git_format_patch(repo: Path) -> None:
    (repo / "f.txt").write_text("a\nb\n")
    commit_all(repo)
    (repo / "f.txt").write_text("a\nB\n")
    commit_all(repo)
    patch = git(repo, "format-patch", "-1", "--stdout")
    (file_change,) = unified.parse(patch).files
    assert file_change.path == "f.txt"
    assert file_change.hunks[0].new == "a\nB\n"


def tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def test_real_git_diff_applied_through_the_workspace_reproduces_git(repo: Path, tmp_path: Path) -> None:
    """Parse real git output and apply it with the Workspace: the result is git's new tree, byte for byte."""
    import shutil

    import nbedit

    twenty = b"".join(b"line %d\n" % n for n in range(1, 21))
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (repo / "nofinal.txt").write_bytes(b"alpha\nbeta")
    (repo / "moved.py").write_bytes(twenty)
    (repo / "doomed.txt").write_bytes(b"bye\nnow\n")
    (repo / "empty_gone").write_bytes(b"")
    (repo / "sp ace.txt").write_bytes(b"x\n")
    commit_all(repo)
    before = tmp_path / "before"
    shutil.copytree(repo, before, ignore=shutil.ignore_patterns(".git"))

    (repo / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\n")
    (repo / "nofinal.txt").write_bytes(b"alpha\nbeta\ngamma")
    (repo / "moved.py").unlink()
    (repo / "renamed.py").write_bytes(twenty.replace(b"line 7", b"LINE 7"))
    (repo / "doomed.txt").unlink()
    (repo / "empty_gone").unlink()
    (repo / "fresh.txt").write_bytes(b"brand\nnew\n")
    (repo / "empty_new").write_bytes(b"")
    (repo / "sp ace.txt").write_bytes(b"y\n")
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", "-M")

    workspace = nbedit.Workspace(root=before, history=False)
    workspace.apply(workspace.plan_patch(diff))
    assert tree(before) == tree(repo)


def test_real_git_mode_change_applied_through_the_workspace(repo: Path) -> None:
    import nbedit

    (repo / "tool.sh").write_bytes(b"echo hi\n")
    (repo / "tool.sh").chmod(0o644)
    commit_all(repo)
    (repo / "tool.sh").chmod(0o755)
    diff = git(repo, "diff")
    (repo / "tool.sh").chmod(0o644)

    workspace = nbedit.Workspace(root=repo, history=False)
    workspace.apply(workspace.plan_patch(diff))
    assert (repo / "tool.sh").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize(
    "stamp",
    ["1970-01-01 00:00:00.000000000 +0000", "1970-01-01 01:00:00 +0100", "1969-12-31 19:00:00 -0500"],
)
def test_diff_n_epoch_dated_side_means_absent_file(stamp: str) -> None:
    from nbedit.engine.formats import parse

    deleted = (
        f"--- a/gone.txt\t2024-05-01 10:00:00 +0000\n+++ b/gone.txt\t{stamp}\n@@ -1,2 +0,0 @@\n-one\n-two\n"
    )
    assert parse(deleted).files[0].operation == "delete"
    created = f"--- a/new.txt\t{stamp}\n+++ b/new.txt\t2024-05-01 10:00:00 +0000\n@@ -0,0 +1 @@\n+hi\n"
    assert parse(created).files[0].operation == "add"


# -- model-written diffs: hunks without usable line numbers ------------------------------------------

AIDER_REPLY = """\
Here are the changes:

```diff
--- aider/coders/base_coder.py
+++ aider/coders/base_coder.py
@@ ... @@
     def check(self):
-        self.io.tool_error(f"The LLM did not conform.")
+        self.io.tool_error("The LLM did not conform.")

         return
@@ ... @@
-            self.io.tool_error(f"Exception while updating files:")
+            self.io.tool_error("Exception while updating files:")
@@ ... @@
```

These changes remove the unnecessary f-string prefixes.
"""


def test_aider_hunks_without_line_numbers_are_located_by_content() -> None:
    (file_change,) = unified.parse(AIDER_REPLY).files
    assert file_change.path == "aider/coders/base_coder.py"
    first, second = file_change.hunks  # the empty last '@@ ... @@' adds nothing
    assert (
        first.old
        == '    def check(self):\n        self.io.tool_error(f"The LLM did not conform.")\n\n        return\n'
    )
    assert (
        first.new
        == '    def check(self):\n        self.io.tool_error("The LLM did not conform.")\n\n        return\n'
    )
    assert (first.start_line, first.source_line, second.start_line, second.source_line) == (None, 6, None, 12)
    assert second.old == '            self.io.tool_error(f"Exception while updating files:")\n'


def test_the_loose_header_is_a_unified_diff_marker_but_a_bare_one_is_not() -> None:
    assert unified.marker_line("Fix:\n@@ ... @@\n-a\n+b\n") == 1
    assert unified.marker_line("@@ @@\n x\n") == 0
    assert unified.marker_line("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\n") is None


@pytest.mark.parametrize(
    "header", ["@@", "@@ ... @@", "@@ @@", "@@ -1,3 +1,3", "@@ -x +y @@", "@@ def f(): @@"]
)
def test_any_header_without_usable_numbers_reads_the_body(header: str) -> None:
    text = f"--- a/f.py\n+++ b/f.py\n{header}\n a\n-b\n+c\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line, hunk.at_end) == ("a\nb\n", "a\nc\n", None, False)


def test_headerless_hunks_use_the_path_in_scope() -> None:
    text = "@@ ... @@\n-x = 1\n+x = 2\n"
    (file_change,) = unified.parse(text, default_path="cell.py").files
    assert (file_change.path, file_change.hunks[0].old, file_change.hunks[0].start_line) == (
        "cell.py",
        "x = 1\n",
        None,
    )
    assert parse_error(text).line == 1
    (file_change,) = unified.parse("@@\n-x = 1\n+x = 2\n", default_path="cell.py").files
    assert file_change.hunks[0].new == "x = 2\n"


@pytest.mark.parametrize(
    "header", ["--- src/app.py", "+++ src/app.py", "+++ b/src/app.py", "--- a/src/app.py"]
)
def test_a_lone_file_header_line_names_the_file(header: str) -> None:
    (file_change,) = unified.parse(f"{header}\n@@ ... @@\n-x\n+y\n").files
    assert file_change.path == "src/app.py"
    assert file_change.hunks[0].old == "x\n"


def test_a_loose_hunk_ends_at_the_next_file_and_keeps_both_files() -> None:
    text = "--- a.py\n+++ a.py\n@@ ... @@\n-1\n+one\n--- b.py\n+++ b.py\n@@ ... @@\n-2\n+two\n"
    first, second = unified.parse(text).files
    assert (first.path, first.hunks[0].new, second.path, second.hunks[0].new) == (
        "a.py",
        "one\n",
        "b.py",
        "two\n",
    )


def test_a_wrong_count_before_a_fence_is_read_from_the_body() -> None:
    text = "```diff\n--- a/f\n+++ b/f\n@@ -10,9 +10,9 @@\n a\n-b\n+c\n```\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line) == ("a\nb\n", "a\nc\n", None)


def test_a_text_line_inside_a_loose_hunk_is_an_error_not_an_end() -> None:
    # the unchanged line lost its leading space; ending the hunk there would drop '-    y = 2'
    text = "--- a/f.py\n+++ b/f.py\n@@ ... @@\n def f():\n-    x = 1\nreturn x\n-    y = 2\n+    y = 3\n"
    error = parse_error(text)
    assert error.line == 6
    assert "'return x'" in str(error) and "leading space" in (error.hint or "")


def test_prose_after_a_loose_hunk_ends_it() -> None:
    text = "--- a/f.py\n+++ b/f.py\n@@ ... @@\n-x\n+y\n\nThis changes:\n- x to y\n"
    (file_change,) = unified.parse(text).files
    assert [(hunk.old, hunk.new) for hunk in file_change.hunks] == [("x\n", "y\n")]


def test_a_loose_hunk_of_added_lines_only_appends_or_creates() -> None:
    (hunk,) = unified.parse("--- new.py\n+++ new.py\n@@ ... @@\n+print(1)\n").files[0].hunks
    assert (hunk.old, hunk.new, hunk.at_end) == ("", "print(1)\n", True)
    (created,) = unified.parse("--- /dev/null\n+++ new.py\n@@ ... @@\n+print(1)\n").files
    assert (created.operation, created.content) == ("add", "print(1)\n")


def test_no_newline_marker_in_a_loose_hunk() -> None:
    text = "--- a/f\n+++ b/f\n@@ ... @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a", "b")
    text = "--- a/f\n+++ b/f\n@@ ... @@\n-a\n\\ No newline at end of file\n-b\n+c\n"
    assert parse_error(text).line == 6


def test_a_section_of_empty_loose_hunks_only_is_an_error() -> None:
    error = parse_error("--- a/f\n+++ b/f\n@@ ... @@\n```\n")
    assert "without any hunk" in str(error)


def test_a_signature_separator_whose_space_was_stripped_ends_the_last_hunk() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--\n2.43.0\n"
    (hunk,) = unified.parse(text).files[0].hunks
    assert (hunk.old, hunk.new, hunk.start_line) == ("a\n", "b\n", 1)


_BODY_LINE = st.tuples(st.sampled_from([" ", "-", "+"]), st.text(alphabet="ab =()\t", max_size=8))


@settings(max_examples=200, deadline=None)
@given(
    hunks=st.lists(st.lists(_BODY_LINE, min_size=1, max_size=6), min_size=1, max_size=4),
    header=st.sampled_from(["@@ ... @@", "@@", "@@ @@", "@@ -1,99 +1,99 @@"]),
    fenced=st.booleans(),
)
def test_a_hunk_reads_the_same_with_or_without_usable_line_numbers(
    hunks: list[list[tuple[str, str]]], header: str, fenced: bool
) -> None:
    numbered, loose = ["--- a/f", "+++ b/f"], ["--- a/f", "+++ b/f"]
    line = 1
    for body in hunks:
        olds = sum(marker != "+" for marker, _ in body)
        news = sum(marker != "-" for marker, _ in body)
        numbered.append(f"@@ -{line},{olds} +{line},{news} @@")
        loose.append(header)
        rows = [marker + text for marker, text in body]
        numbered += rows
        loose += rows
        line += olds + 5
    expected = unified.parse("\n".join(numbered) + "\n").files[0].hunks
    text = "\n".join(loose) + "\n"
    if fenced:
        text = "Here:\n\n```diff\n" + text + "```\n\nDone.\n"
    if not fenced and header == "@@ -1,99 +1,99 @@":
        with pytest.raises(PatchSyntaxError, match="truncated"):
            unified.parse(text)  # counts that want more than the text has: cut off, not miscounted
        return
    got = unified.parse(text).files[0].hunks
    assert [(h.old, h.new) for h in got] == [(h.old, h.new) for h in expected]
    assert all(h.start_line is None for h in got)
