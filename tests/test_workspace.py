"""Workspace safety: confinement, refusals, stale checks, modes, encodings, all-or-nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nbedit
from nbedit.engine.text import decode


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b"alpha\nbeta\n")
    return tmp_path


def ws(root: Path, **options) -> nbedit.Workspace:
    return nbedit.Workspace(root, history=False, **options)


def test_parent_escape_is_refused(root: Path) -> None:
    with pytest.raises(nbedit.OutsideWorkspace, match="outside the workspace root"):
        ws(root).plan_edit("../a.txt", "alpha", "x")


def test_absolute_path_outside_is_refused_inside_is_fine(root: Path, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "x.txt"
    elsewhere.write_text("alpha\n")
    with pytest.raises(nbedit.OutsideWorkspace):
        ws(root).plan_edit(str(elsewhere), "alpha", "x")
    assert elsewhere.read_text() == "alpha\n"
    plan = ws(root).plan_edit(str(root / "a.txt"), "alpha", "ALPHA")
    assert plan.files[0].path == "a.txt"


def test_symlink_escaping_the_root_is_refused(root: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("alpha\n")
    (root / "link.txt").symlink_to(outside)
    with pytest.raises(nbedit.OutsideWorkspace):
        ws(root).plan_edit("link.txt", "alpha", "x")
    assert outside.read_text() == "alpha\n"


def test_symlink_inside_root_edits_the_target_and_keeps_the_link(root: Path) -> None:
    (root / "link.txt").symlink_to(root / "a.txt")
    workspace = ws(root)
    workspace.apply(workspace.plan_edit("link.txt", "alpha", "ALPHA"))
    assert (root / "link.txt").is_symlink()
    assert (root / "a.txt").read_bytes() == b"ALPHA\nbeta\n"


def test_binary_and_undecodable_files_are_refused(root: Path) -> None:
    (root / "img.bin").write_bytes(b"\x89PNG\x00\x01alpha")
    (root / "cyrillic.txt").write_bytes("Привет мир alpha\n".encode("cp1251"))
    with pytest.raises(nbedit.BinaryFile, match="NUL"):
        ws(root).plan_edit("img.bin", "alpha", "x")
    # not UTF-8 and not recognisably Western: refused, with the way to declare the encoding
    with pytest.raises(nbedit.BinaryFile, match=r"declare its encoding \(encoding=NAME"):
        ws(root).plan_edit("cyrillic.txt", "alpha", "x")


def test_size_limit(root: Path) -> None:
    with pytest.raises(nbedit.FileTooLarge, match="max_file_size"):
        ws(root, max_file_size=4).plan_edit("a.txt", "alpha", "x")


def test_missing_and_directory_targets(root: Path) -> None:
    (root / "folder").mkdir()
    with pytest.raises(nbedit.FileMissing):
        ws(root).plan_patch("--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(nbedit.NotAFile, match="directory"):
        ws(root).plan_patch("*** Begin Patch\n*** Delete File: folder\n*** End Patch\n")
    with pytest.raises(nbedit.FileMissing):
        ws(root).plan_patch("*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n")
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "folder"]


def test_stale_file_is_refused_and_the_other_writer_wins(root: Path) -> None:
    workspace = ws(root)
    plan = workspace.plan_edit("a.txt", "alpha", "ALPHA")
    (root / "a.txt").write_bytes(b"alpha\nbeta\ngamma\n")
    with pytest.raises(nbedit.StaleFile) as error:
        workspace.apply(plan)
    assert "+gamma" in error.value.diff and "re-plan" in str(error.value)
    assert (root / "a.txt").read_bytes() == b"alpha\nbeta\ngamma\n"


def test_stale_when_an_added_file_appeared(root: Path) -> None:
    workspace = ws(root)
    plan = workspace.plan_patch("*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch\n")
    (root / "new.txt").write_text("someone else\n")
    with pytest.raises(nbedit.StaleFile, match="created since the preview"):
        workspace.apply(plan)
    assert (root / "new.txt").read_text() == "someone else\n"


def test_mode_is_preserved_and_git_mode_applied(root: Path) -> None:
    script = root / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o750)
    workspace = ws(root)
    workspace.apply(workspace.plan_edit("run.sh", "hi", "hello"))
    assert script.stat().st_mode & 0o777 == 0o750
    diff = "diff --git a/run.sh b/run.sh\nold mode 100750\nnew mode 100755\n"
    workspace.apply(workspace.plan_patch(diff))
    assert script.stat().st_mode & 0o777 == 0o755
    assert script.read_text() == "echo hello\n"


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfone\r\ntwo\r\nthree",
        "one\ntwo\r\nthree\n".encode("utf-16-le"),
        b"\xff\xfe" + "one\r\ntwo\nthree".encode("utf-16-le"),
        b"one\ttwo\rthree\x0cfour\ntwo\n",
    ],
    ids=["utf8-bom-crlf-no-final-newline", "utf16-no-bom-is-binary", "utf16-bom-mixed", "tabs-cr-formfeed"],
)
def test_bytes_outside_the_edit_never_change(root: Path, data: bytes) -> None:
    target = root / "f.txt"
    target.write_bytes(data)
    workspace = ws(root)
    try:
        text, codec = decode(data)
    except nbedit.BinaryFile:
        with pytest.raises(nbedit.BinaryFile):
            workspace.plan_edit("f.txt", "two", "2")
        assert target.read_bytes() == data
        return
    workspace.apply(workspace.plan_edit("f.txt", "three", "3"))
    expected_text = text.replace("three", "3")
    from nbedit.engine.text import encode

    assert target.read_bytes() == encode(expected_text, codec)


def test_all_or_nothing_when_a_later_write_fails(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection at the filesystem: the second replace fails, the first is rolled back."""
    (root / "b.txt").write_bytes(b"bee\n")
    workspace = ws(root)
    plan = workspace.plan_patch(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n"
    )
    import nbedit.storage.atomic as atomic

    real_replace = os.replace
    calls = []

    def flaky_replace(source, target, *args, **kwargs):
        calls.append(target)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(atomic.os, "replace", flaky_replace)
    with pytest.raises(nbedit.WriteError):
        workspace.apply(plan)
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert (root / "a.txt").read_bytes() == b"alpha\nbeta\n"
    assert (root / "b.txt").read_bytes() == b"bee\n"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt"], "no temp files left behind"


def test_already_applied_is_reported_not_failed(root: Path) -> None:
    workspace = ws(root)
    workspace.apply(workspace.plan_edit("a.txt", "alpha\n", "ALPHA\n"))
    plan = workspace.plan_edit("a.txt", "alpha\n", "ALPHA\n")
    assert plan.already_applied
    result = workspace.apply(plan)
    assert result.already_applied and not result.written


def test_identical_old_and_new_is_a_clear_error(root: Path) -> None:
    with pytest.raises(nbedit.PatchSyntaxError, match="identical"):
        ws(root).plan_edit("a.txt", "alpha", "alpha")


def test_empty_old_creates_a_missing_file_only(root: Path) -> None:
    workspace = ws(root)
    workspace.apply(workspace.plan_edit("new/created.txt", "", "hello\n"))
    assert (root / "new" / "created.txt").read_text() == "hello\n"
    with pytest.raises(nbedit.PatchSyntaxError, match="empty"):
        workspace.plan_edit("a.txt", "", "x")


def test_exact_option_refuses_normalised_matches(root: Path) -> None:
    (root / "w.txt").write_text("value = 1   \n")
    with pytest.raises(nbedit.NoMatch):
        ws(root, exact=True).plan_edit("w.txt", "value = 1\n", "value = 2\n")
    plan = ws(root).plan_edit("w.txt", "value = 1\n", "value = 2\n")
    assert plan.files[0].hunks[0].tier is nbedit.Tier.TRAILING_WHITESPACE


def test_nothing_touches_disk_while_planning(root: Path) -> None:
    before = {p: p.read_bytes() for p in root.iterdir()}
    ws(root).plan_patch("*** Begin Patch\n*** Add File: x.txt\n+x\n*** Delete File: a.txt\n*** End Patch\n")
    assert {p: p.read_bytes() for p in root.iterdir()} == before


def test_module_level_helpers(root: Path) -> None:
    nbedit.edit("a.txt", "beta", "BETA", root=str(root), history=False)
    nbedit.patch(
        "a.txt\n<<<<<<< SEARCH\nalpha\n=======\nALPHA\n>>>>>>> REPLACE\n", root=str(root), history=False
    )
    assert (root / "a.txt").read_bytes() == b"ALPHA\nBETA\n"


def test_history_off_creates_no_history(root: Path, nbedit_home: Path) -> None:
    workspace = ws(root)
    workspace.apply(workspace.plan_edit("a.txt", "alpha", "A"))
    assert not (nbedit_home / "history.sqlite3").exists()


def test_history_on_records_entry(root: Path, nbedit_home: Path) -> None:
    workspace = nbedit.Workspace(root)
    result = workspace.apply(workspace.plan_edit("a.txt", "alpha", "A"))
    assert result.entry_id
    assert (nbedit_home / "history.sqlite3").exists()


def test_retention_cap_prunes_old_entries_and_keeps_the_rest_usable(root: Path) -> None:
    workspace = nbedit.Workspace(root, keep_per_file=5)
    for number in range(30):
        workspace.apply(workspace.plan_edit("a.txt", "beta\n", f"beta\n{number}\n"))
    entries = workspace.history()
    assert 5 <= len(entries) < 30
    for entry in entries:
        assert workspace.show(entry.id)  # every kept entry still has its diff
    workspace.undo()
    assert (
        (root / "a.txt")
        .read_bytes()
        .endswith(
            b"28\n27\n26\n25\n24\n23\n22\n21\n20\n19\n18\n17\n16\n15\n14\n13\n12\n11\n10\n9\n8\n7\n6\n5\n4\n3\n2\n1\n0\n"
        )
    )


def test_plan_patch_replace_all(root: Path) -> None:
    (root / "r.txt").write_text("x = 1\ny = 2\nx = 1\n")
    block = "r.txt\n<<<<<<< SEARCH\nx = 1\n=======\nx = 3\n>>>>>>> REPLACE\n"
    with pytest.raises(nbedit.AmbiguousMatch):
        ws(root).plan_patch(block)
    plan = ws(root).plan_patch(block, replace_all=True)
    assert plan.files[0].after == "x = 3\ny = 2\nx = 3\n"


def test_plan_undo_is_a_reviewable_plan(root: Path) -> None:
    workspace = nbedit.Workspace(root)
    workspace.apply(workspace.plan_edit("a.txt", "alpha", "ALPHA"))
    plan = workspace.plan_undo()
    assert "-ALPHA" in plan.diff and "+alpha" in plan.diff
    assert (root / "a.txt").read_bytes() == b"ALPHA\nbeta\n", "planning an undo writes nothing"
    workspace.apply(plan, origin="undo")
    assert (root / "a.txt").read_bytes() == b"alpha\nbeta\n"


# --- options are validated as nbedit errors -----------------------------------------------------


@pytest.mark.parametrize("threshold", [-1, 0, 5, 1.5, float("nan"), "0.9", True])
def test_bad_thresholds_are_option_errors_everywhere(root: Path, threshold: object) -> None:
    before = (root / "a.txt").read_bytes()
    with pytest.raises(nbedit.OptionError, match="threshold") as raised:
        nbedit.Workspace(root, threshold=threshold)  # type: ignore[arg-type]
    assert isinstance(raised.value, nbedit.NbeditError) and raised.value.option == "threshold"
    with pytest.raises(nbedit.OptionError, match="threshold"):
        ws(root).plan_edit("a.txt", "alpha", "ALPHA", threshold=threshold)  # type: ignore[arg-type]
    with pytest.raises(nbedit.OptionError, match="threshold"):
        ws(root).plan_patch(
            "<<<<<<< SEARCH\nalpha\n=======\nALPHA\n>>>>>>> REPLACE\n",
            default_path="a.txt",
            threshold=threshold,  # type: ignore[arg-type]
        )
    with pytest.raises(nbedit.OptionError, match="threshold"):
        nbedit.edit("a.txt", "alpha", "ALPHA", root=str(root), threshold=threshold)
    assert (root / "a.txt").read_bytes() == before


def test_a_valid_threshold_is_accepted(root: Path) -> None:
    assert ws(root, threshold=1).options.threshold == 1.0
    assert ws(root).plan_edit("a.txt", "alpha", "ALPHA", threshold=0.5).files


# --- hints spelled for Python ----------------------------------------------------------------------


def test_python_errors_spell_options_as_keywords(root: Path) -> None:
    (root / "twice.txt").write_bytes(b"x\nx\n")
    with pytest.raises(nbedit.AmbiguousMatch) as raised:
        ws(root).plan_edit("twice.txt", "x", "y")
    assert "replace_all=True" in str(raised.value) and "--replace-all" not in str(raised.value)
    assert "--replace-all" in raised.value.spelled("cli")
    (root / "added.txt").write_bytes(b"here\n")
    with pytest.raises(nbedit.FileExists) as exists:
        ws(root).plan_patch("*** Begin Patch\n*** Add File: added.txt\n+new\n*** End Patch\n")
    assert "overwrite=True" in str(exists.value) and "--overwrite" in exists.value.spelled("magic")


def test_an_empty_history_says_there_is_nothing_rather_than_all_undone(root: Path) -> None:
    with pytest.raises(nbedit.NothingToUndo, match="no recorded edits yet") as raised:
        nbedit.Workspace(root, session="fresh").undo()
    assert "already undone" not in str(raised.value)
    assert "history(all_sessions=True)" in str(raised.value)
    workspace = nbedit.Workspace(root, session="used")
    workspace.apply(workspace.plan_edit("a.txt", "alpha", "ALPHA"))
    workspace.undo()
    with pytest.raises(nbedit.NothingToUndo, match="already undone"):
        workspace.undo()


# --- short reprs ------------------------------------------------------------------------------------


def test_plan_and_result_reprs_are_short_summaries(root: Path) -> None:
    big = "".join(f"line {number}\n" for number in range(5000))
    (root / "big.txt").write_text(big + "alpha\n", encoding="utf-8")
    (root / "b.txt").write_bytes(b"value = 1\nother = 2\n")
    workspace = nbedit.Workspace(root, session="reprs")
    plan = workspace.plan_patch(
        "big.txt\n<<<<<<< SEARCH\nalpha\n=======\nomega\n>>>>>>> REPLACE\n"
        "b.txt\n<<<<<<< SEARCH\nvalue = 1   \n=======\nvalue = 2\n>>>>>>> REPLACE\n"
    )
    text = repr(plan)
    assert text == (
        "<Plan (search_replace) 2 files: update big.txt +1 -1 (1 hunk: exact); "
        "update b.txt +1 -1 (1 hunk: trailing-whitespace)>"
    )
    assert repr(plan.files[0]) == "<FilePlan update big.txt +1 -1 (1 hunk: exact)>"
    assert "line 4999" not in repr(plan.files[0])
    html = plan._repr_html_()
    assert "big.txt" in html and "omega" in html
    from rich.pretty import pretty_repr

    assert "line 4999" not in pretty_repr(plan) and "big.txt +1 -1" in pretty_repr(plan)
    result = workspace.apply(plan)
    assert repr(result).startswith(f"<ApplyResult wrote big.txt, b.txt (history entry {result.entry_id}): ")
    assert len(repr(result)) < 300 and "b.txt" in result._repr_html_()
    again = workspace.plan_edit("b.txt", "value = 1", "value = 2")
    assert repr(workspace.apply(again)) == "<ApplyResult already applied: nothing written>"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("be\udce9ta", "b'\\xe9'"),  # a Latin-1 byte smuggled in by surrogateescape
        ("be\ud800ta", "'\\ud800'"),  # half of a broken surrogate pair: no byte behind it
        ("be\udfffta", "'\\udfff'"),
    ],
)
def test_texts_that_cannot_be_utf8_are_a_clear_error(root: Path, text: str, shown: str) -> None:
    before = (root / "a.txt").read_bytes()
    for old, new in ((text, "gamma"), ("beta", text)):
        with pytest.raises(nbedit.PatchSyntaxError) as caught:
            ws(root).plan_edit("a.txt", old, new)
        assert f"contains bytes that are not UTF-8 ({shown} at character 3)" in str(caught.value)
        assert "UTF-8 locale" in caught.value.hint
    with pytest.raises(nbedit.PatchSyntaxError, match="not UTF-8"):
        ws(root).plan_patch(f"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+{text}\n")
    assert (root / "a.txt").read_bytes() == before
