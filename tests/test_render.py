"""Renderers on real plans: rows match the files, tiers are flagged, big changes stay small."""

from __future__ import annotations

import difflib
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from nbedit import Workspace
from nbedit.engine.models import FilePlan, Plan, Tier
from nbedit.engine.text import split_lines, strip_newline
from nbedit.render.html import (
    STYLE,
    file_to_html,
    hunk_to_html,
    hunks_to_html,
    plan_header_html,
    plan_to_html,
)
from nbedit.render.hunk_blocks import block_for_hunk, blocks_for_hunks
from nbedit.render.rows import Block, Gap, file_view
from nbedit.render.summary import summarize
from nbedit.render.terminal import plan_text, print_plan, unified_diff_text
from nbedit.render.text import plan_to_text


def write(root: Path, name: str, text: str, newline: str = "\n") -> Path:
    path = root / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def numbered(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {number}\n" for number in range(1, count + 1))


def unified(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(split_lines(before), split_lines(after), f"a/{name}", f"b/{name}")
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def terminal_text(plan: Plan) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_plan(plan, console)
    return console.export_text()


def texts(file_plan: FilePlan) -> tuple[list[str], list[str]]:
    if file_plan.notebook:
        before, after = file_plan.display_before, file_plan.display_after
    else:
        before, after = file_plan.before, file_plan.after
    return [strip_newline(line) for line in split_lines(before or "")], [
        strip_newline(line) for line in split_lines(after or "")
    ]


def assert_rows_match_files(file_plan: FilePlan) -> None:
    """Every old line is shown once (context/removed) or counted in a gap; same for new lines."""
    old_lines, new_lines = texts(file_plan)
    view = file_view(file_plan)
    old_seen: list[int] = []
    new_seen: list[int] = []
    for section in view.sections:
        if isinstance(section, Gap):
            old_seen.extend(range(section.old_line, section.old_line + section.count))
            new_seen.extend(range(section.new_line, section.new_line + section.count))
            for offset in range(section.count):
                assert old_lines[section.old_line - 1 + offset] == new_lines[section.new_line - 1 + offset]
            continue
        assert not section.truncated
        for row in section.rows:
            if row.old_line is not None:
                old_seen.append(row.old_line)
                if row.kind == "context" or "␊" not in row.text and "(no newline" not in row.text:
                    assert old_lines[row.old_line - 1] == row.text, (row, old_lines[row.old_line - 1])
            if row.new_line is not None:
                new_seen.append(row.new_line)
                if row.kind == "context" or "␊" not in row.text and "(no newline" not in row.text:
                    assert new_lines[row.new_line - 1] == row.text, (row, new_lines[row.new_line - 1])
    assert old_seen == list(range(1, len(old_lines) + 1))
    assert new_seen == list(range(1, len(new_lines) + 1))


def assert_hunk_blocks_match_files(file_plan: FilePlan) -> None:
    """Each hunk shown alone: every row is the line at its numbers on its side(s), numbers ascend.

    New-side numbers count every other hunk above as applied, so a wrong running
    delta or context that runs into a neighbouring hunk shows up as a mismatch.
    """
    old_lines, new_lines = texts(file_plan)
    blocks = blocks_for_hunks(file_plan)
    assert len(blocks) == len(file_plan.hunks)
    for index, block in enumerate(blocks):
        assert block == block_for_hunk(file_plan, index)
        assert block.hunk_indices == (index,)
        old_numbers = [row.old_line for row in block.rows if row.old_line is not None]
        new_numbers = [row.new_line for row in block.rows if row.new_line is not None]
        assert old_numbers == sorted(set(old_numbers)) and new_numbers == sorted(set(new_numbers))
        for row in block.rows:
            marked = "␊" in row.text or "(no newline" in row.text
            if row.old_line is not None and (row.kind == "context" or not marked):
                assert old_lines[row.old_line - 1] == row.text, (index, row)
            if row.new_line is not None and (row.kind == "context" or not marked):
                assert new_lines[row.new_line - 1] == row.text, (index, row)


# --- rows ----------------------------------------------------------------------------------------


def test_word_highlight_marks_only_the_changed_words(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = compute(alpha, beta)\ny = 2\n")
    plan = Workspace(tmp_path).plan_edit("a.py", "compute(alpha, beta)", "compute(alpha, gamma)")
    (block,) = file_view(plan.files[0]).blocks
    removed = next(row for row in block.rows if row.kind == "removed")
    added = next(row for row in block.rows if row.kind == "added")
    assert [segment.text for segment in removed.segments if segment.changed] == ["beta"]
    assert "".join(segment.text for segment in added.segments if segment.changed) == "gamma"
    html = plan_to_html(plan)
    assert '<span class="w">beta</span>' in html
    assert_rows_match_files(plan.files[0])


def test_unrelated_lines_get_no_word_highlight(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "completely different text here\nkeep\n")
    plan = Workspace(tmp_path).plan_edit("a.py", "completely different text here", "zzz 42")
    (block,) = file_view(plan.files[0]).blocks
    assert not any(segment.changed for row in block.rows for segment in row.segments)


def test_unchanged_regions_collapse_with_counts(tmp_path: Path) -> None:
    before = numbered(200)
    after = before.replace("line 100\n", "line one hundred\n").replace("line 150\n", "")
    write(tmp_path, "big.txt", before)
    plan = Workspace(tmp_path).plan_patch(unified(before, after, "big.txt"))
    view = file_view(plan.files[0])
    kinds = [type(section).__name__ for section in view.sections]
    assert kinds == ["Gap", "Block", "Gap", "Block", "Gap"]
    first_gap = view.sections[0]
    assert isinstance(first_gap, Gap) and first_gap.count == 96 and first_gap.old_line == 1
    assert (view.added, view.removed) == (1, 2)
    assert "⋯ 96 unchanged lines" in plan_to_html(plan)
    assert "⋯ 96 unchanged lines" in terminal_text(plan)
    assert_rows_match_files(plan.files[0])


def test_short_gaps_are_shown_not_collapsed(tmp_path: Path) -> None:
    before = numbered(9)
    after = before.replace("line 1\n", "line I\n").replace("line 9\n", "line IX\n")
    write(tmp_path, "a.txt", before)
    plan = Workspace(tmp_path).plan_patch(unified(before, after, "a.txt"))
    view = file_view(plan.files[0])
    gaps = [section for section in view.sections if isinstance(section, Gap)]
    assert all(gap.count >= 2 for gap in gaps)
    assert_rows_match_files(plan.files[0])


def test_line_numbers_shift_after_insertions(tmp_path: Path) -> None:
    before = numbered(60)
    after = before.replace("line 10\n", "line 10\nnew a\nnew b\nnew c\n").replace("line 50\n", "line fifty\n")
    write(tmp_path, "a.txt", before)
    plan = Workspace(tmp_path).plan_patch(unified(before, after, "a.txt"))
    blocks = file_view(plan.files[0]).blocks
    changed = next(row for row in blocks[-1].rows if row.kind == "added")
    assert (changed.text, changed.new_line) == ("line fifty", 53)
    assert_rows_match_files(plan.files[0])


def test_crlf_file_rows_hide_the_line_ending(tmp_path: Path) -> None:
    write(tmp_path, "w.txt", "one\ntwo\nthree\n", newline="\r\n")
    plan = Workspace(tmp_path).plan_edit("w.txt", "two", "TWO")
    rows = file_view(plan.files[0]).blocks[0].rows
    assert [row.text for row in rows] == ["one", "two", "TWO", "three"]
    assert_rows_match_files(plan.files[0])


def test_mid_line_replace_all_in_one_line_is_one_block(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "y = x + x * x\nprint(y)\n")
    plan = Workspace(tmp_path).plan_edit("a.py", "x", "z", replace_all=True)
    view = file_view(plan.files[0])
    (block,) = view.blocks
    assert len(block.hunk_indices) == len(plan.files[0].hunks) >= 3
    assert [row.text for row in block.rows if row.kind == "added"] == ["y = z + z * z"]
    assert_rows_match_files(plan.files[0])


def test_edit_without_final_newline(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "first\nlast")
    plan = Workspace(tmp_path).plan_edit("a.txt", "last", "last\nafter")
    rows = file_view(plan.files[0]).blocks[0].rows
    # the old last line had no newline and gains one: the row says so instead of showing two equal lines
    assert [(row.kind, row.text) for row in rows] == [
        ("context", "first"),
        ("removed", "last(no newline at end)"),
        ("added", "last␊"),
        ("added", "after"),
    ]
    assert_rows_match_files(plan.files[0])


def test_added_and_deleted_files_show_every_line(tmp_path: Path) -> None:
    write(tmp_path, "old.txt", "gone 1\ngone 2\n")
    patch = (
        "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Delete File: old.txt\n*** End Patch\n"
    )
    plan = Workspace(tmp_path).plan_patch(patch)
    added, deleted = (file_view(file_plan) for file_plan in plan.files)
    assert [(row.kind, row.new_line, row.text) for row in added.blocks[0].rows] == [
        ("added", 1, "hello"),
        ("added", 2, "world"),
    ]
    assert [(row.kind, row.old_line) for row in deleted.blocks[0].rows] == [("removed", 1), ("removed", 2)]
    summary = summarize(plan)
    assert [file.status for file in summary.files] == ["new file", "deleted"]
    text = terminal_text(plan)
    assert "new.txt  +2 -0  new file" in text and "old.txt  +0 -2  deleted" in text


def test_view_counts_agree_with_plan_stats(tmp_path: Path) -> None:
    before = numbered(300)
    after = before
    for number in (5, 80, 81, 200, 299):
        after = after.replace(f"line {number}\n", f"line {number} changed\nextra {number}\n")
    after = after.replace("line 150\n", "")
    write(tmp_path, "a.txt", before)
    plan = Workspace(tmp_path).plan_patch(unified(before, after, "a.txt"))
    view = file_view(plan.files[0])
    assert (view.added, view.removed) == plan.stats()["a.txt"]
    assert_rows_match_files(plan.files[0])


# --- one hunk at a time (the widget) --------------------------------------------------------------


def test_hunk_blocks_cover_each_hunk_and_stop_at_neighbours(tmp_path: Path) -> None:
    before = numbered(30)
    after = before.replace("line 10\n", "line ten\n").replace("line 12\n", "line twelve\n")
    write(tmp_path, "a.txt", before)
    workspace = Workspace(tmp_path)
    plan = workspace.plan_patch(unified(before, after, "a.txt"), exact=True)
    file_plan = plan.files[0]
    # difflib makes one hunk of both changes; an old/new edit per line gives two hunks
    plan = workspace.plan_patch(
        "a.txt\n<<<<<<< SEARCH\nline 10\n=======\nline ten\n>>>>>>> REPLACE\n"
        "a.txt\n<<<<<<< SEARCH\nline 12\n=======\nline twelve\n>>>>>>> REPLACE\n"
    )
    file_plan = plan.files[0]
    assert len(file_plan.hunks) == 2
    first, second = (block_for_hunk(file_plan, index) for index in range(2))
    assert [row.text for row in first.rows] == [
        "line 7",
        "line 8",
        "line 9",
        "line 10",
        "line ten",
        "line 11",
    ]
    assert [row.text for row in second.rows] == [
        "line 11",
        "line 12",
        "line twelve",
        "line 13",
        "line 14",
        "line 15",
    ]
    assert second.rows[2].new_line == 12
    html = hunk_to_html(file_plan, 1)
    assert "twelve" in html and ">ten<" not in html and "line 10" not in html
    with pytest.raises(IndexError):
        block_for_hunk(file_plan, 2)
    assert blocks_for_hunks(file_plan) == (first, second)
    assert_hunk_blocks_match_files(file_plan)


def test_hunk_blocks_number_lines_after_the_hunks_above(tmp_path: Path) -> None:
    before = numbered(60)
    after = (
        before.replace("line 5\n", "line 5\nextra a\nextra b\n")
        .replace("line 20\n", "")
        .replace("line 40\n", "line forty\nline forty-one bis\n")
        .replace("line 41\n", "line 41 changed\n")
    )
    write(tmp_path, "a.txt", before)
    plan = Workspace(tmp_path).plan_patch(unified(before, after, "a.txt"))
    file_plan = plan.files[0]
    assert len(file_plan.hunks) == 3
    blocks = blocks_for_hunks(file_plan)
    assert [row.new_line for row in blocks[1].rows if row.kind == "context"][0] == 17 + 2
    assert_hunk_blocks_match_files(file_plan)


def test_insertions_at_the_same_line_are_each_shown_alone(tmp_path: Path) -> None:
    """Zero-context hunks inserting at one spot: empty matches, each "above" the other."""
    write(tmp_path, "a.txt", numbered(12))
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n"
        "@@ -3,0 +4 @@\n+first insert\n"
        "@@ -6,0 +8 @@\n+second insert\n"
        "@@ -8 +10 @@\n-line 8\n+line eight\n"
    )
    plan = Workspace(tmp_path).plan_patch(patch)
    file_plan = plan.files[0]
    assert file_plan.after is not None and "line 3\nfirst insert\nline 4\n" in file_plan.after
    assert_hunk_blocks_match_files(file_plan)
    assert blocks_for_hunks(file_plan)[2].rows[0].new_line == 7 + 2


def test_widget_pieces_carry_no_style_sheet(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(40))
    plan = Workspace(tmp_path).plan_patch(
        "a.txt\n<<<<<<< SEARCH\nline 3\n=======\nline three\n>>>>>>> REPLACE\n"
        "a.txt\n<<<<<<< SEARCH\nline 30\n=======\nline thirty\n>>>>>>> REPLACE\n"
    )
    file_plan = plan.files[0]
    pieces = hunks_to_html(file_plan)
    assert len(pieces) == 2
    for index, piece in enumerate(pieces):
        assert "<style>" not in piece and piece.startswith('<div class="nbedit-view">')
        assert piece == hunk_to_html(file_plan, index, style=False)
        assert hunk_to_html(file_plan, index) == piece.replace(
            '<div class="nbedit-view">', f'<div class="nbedit-view"><style>{STYLE.strip()}</style>', 1
        )
    assert '<td class="n">3</td>' in pieces[0] and '<span class="w">three</span>' in pieces[0]
    for html in (plan_header_html(plan, style=False), file_to_html(file_plan, style=False)):
        assert "<style>" not in html and "line" in html


def test_toggles_carry_file_and_hunk_indices(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(40))
    write(tmp_path, "b.txt", "b\n")
    plan = Workspace(tmp_path).plan_patch(
        "a.txt\n<<<<<<< SEARCH\nline 3\n=======\nline three\n>>>>>>> REPLACE\n"
        "a.txt\n<<<<<<< SEARCH\nline 30\n=======\nline thirty\n>>>>>>> REPLACE\n"
        "b.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n"
    )
    html = plan_to_html(plan, include_toggles=True)
    found = re.findall(r'data-file="(\d+)" data-hunk="(\d+)"', html)
    assert found == [("0", "0"), ("0", "1"), ("1", "0")]
    assert "data-hunk" not in plan_to_html(plan)


# --- tiers, offsets, already applied ---------------------------------------------------------------


def test_unicode_drift_is_flagged_everywhere(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "title = “Report”\nkeep = 1\n")
    plan = Workspace(tmp_path).plan_patch(
        'a.py\n<<<<<<< SEARCH\ntitle = "Report"\n=======\ntitle = "Summary"\n>>>>>>> REPLACE\n'
    )
    assert plan.files[0].hunks[0].tier is Tier.UNICODE
    summary = summarize(plan)
    assert summary.non_exact == 1 and "not matched exactly" in summary.headline
    assert summary.files[0].tiers_note == "not exact"
    html = plan_to_html(plan)
    assert "⚠ unicode-punctuation" in html
    assert Tier.UNICODE.explanation in html
    text = terminal_text(plan)
    assert "⚠" in text and Tier.UNICODE.explanation in text
    assert Tier.UNICODE.explanation in plan_to_text(plan)


def test_exact_plans_have_no_warning_badges(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\n")
    plan = Workspace(tmp_path).plan_edit("a.py", "x = 1", "x = 2")
    html = plan_to_html(plan)
    assert "⚠" not in html and "⚠" not in terminal_text(plan)
    assert summarize(plan).headline == "edit: 1 file, +1 -1"
    assert summarize(plan).files[0].tiers_note == "exact"
    assert '<span class="nb-badge nb-ok" title="every hunk was found verbatim (score 1.00)">exact</span>' in html


def test_fuzzy_match_shows_its_score(tmp_path: Path) -> None:
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "iris", "juniper"]
    body = "".join(
        f"{word}_total = measure_{word}(basket, scale={number})\n" for number, word in enumerate(words)
    )
    write(tmp_path, "a.py", body)
    drifted = (
        "fig_total = measure_fig(basket, scale=5)\n"
        "grape_total = measure_grape( basket,scale=6 )\n"  # drifted in layout only
        "hazel_total = measure_hazel(basket, scale=7)\n"
    )
    replacement = drifted.replace("hazel_total = measure_hazel(basket, scale=7)", "hazel_total = 0")
    plan = Workspace(tmp_path).plan_patch(
        f"a.py\n<<<<<<< SEARCH\n{drifted}=======\n{replacement}>>>>>>> REPLACE\n", threshold=0.8
    )
    located = plan.files[0].hunks[0]
    assert located.tier is Tier.FUZZY
    label = f"fuzzy {located.score:.2f}"
    html = plan_to_html(plan)
    assert label in html and label in terminal_text(plan)
    # "Why here?" in the static HTML too: the summary line with the window score, the layout drift visible
    assert f"the closest text: score {located.score:.2f}" in html and "<summary>Why here?</summary>" in html
    assert "measure_grape(·basket,scale=6·)" in html


def test_offset_is_reported_in_lines(tmp_path: Path) -> None:
    before = numbered(100)
    write(tmp_path, "a.txt", before)
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -9,3 +9,3 @@\n line 59\n-line 60\n+line sixty\n line 61\n"
    plan = Workspace(tmp_path).plan_patch(patch)
    assert plan.files[0].hunks[0].match.offset == 50
    note = "applied 50 lines below where the diff said"
    assert note in plan_to_html(plan)
    assert note in terminal_text(plan)
    assert note in plan_header_html(plan)


def test_already_applied_file_says_so(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "alpha\nbeta\n")
    workspace = Workspace(tmp_path, history=False)
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"
    workspace.apply(workspace.plan_patch(patch))
    again = workspace.plan_patch(patch)
    assert again.already_applied
    assert "already applied" in plan_to_html(again)
    assert "already applied" in terminal_text(again)


# --- HTML ----------------------------------------------------------------------------------------


def test_html_is_self_contained_scoped_and_themed(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\n")
    html = plan_to_html(Workspace(tmp_path).plan_edit("a.py", "x = 1", "x = 2"))
    assert html.startswith('<div class="nbedit-view"><style>')
    style = html[html.index("<style>") + 7 : html.index("</style>")]
    selectors = [rule.split("{", 1)[0] for rule in style.replace("\n", "").split("}") if rule.strip()]
    assert selectors and all(
        all(part.strip().startswith(".nbedit-view") for part in selector.split(",")) for selector in selectors
    )
    assert "var(--jp-ui-font-color1," in style and "var(--jp-layout-color1," in style
    assert "<script" not in html and "http" not in html and "url(" not in html


def test_html_escapes_file_content(tmp_path: Path) -> None:
    write(tmp_path, "page.html", "<p>old & busted</p>\n")
    plan = Workspace(tmp_path).plan_edit("page.html", "<p>old & busted</p>", "<script>alert(1)</script>")
    html = plan_to_html(plan)
    assert "<script" not in html and "<p>" not in html
    plain = re.sub(r"<span[^>]*>|</span>", "", html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in plain
    assert "&lt;p&gt;old &amp; busted&lt;/p&gt;" in plain


def test_terminal_output_cannot_carry_escape_sequences_from_the_file(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "title = '\x1b]0;owned\x07'\ncolour = '\x1b[31m'\n")
    plan = Workspace(tmp_path).plan_edit("a.txt", "colour = ", "color = ")
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system="standard")
    print_plan(plan, console)
    printed = console.file.getvalue()
    # drawn, not sent: a reviewer sees the escape sequence and it does nothing
    assert "\x1b]0;" not in printed and "\x1b[31m'" not in printed and "\x07" not in printed
    assert "title = '␛]0;owned␇'" in printed and " = '␛[31m'" in printed
    assert "colour = '␛[31m'" in plan_to_text(plan) and "\x1b" not in plan_to_text(plan)
    diff = unified_diff_text(plan.diff).plain
    assert "\x1b" not in diff and "+color = '␛[31m'" in diff


def test_terminal_plan_ends_each_line_and_matches_the_plain_text(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(40))
    plan = Workspace(tmp_path).plan_patch(
        "a.txt\n<<<<<<< SEARCH\nline 3\n=======\nline three\n>>>>>>> REPLACE\n"
        "a.txt\n<<<<<<< SEARCH\nline 30\n=======\nline thirty\n>>>>>>> REPLACE\n"
    )
    printed = terminal_text(plan)
    assert printed.endswith("\n") and not printed.endswith("\n\n")
    assert [line.rstrip() for line in printed.split("\n")] == plan_to_text(plan).split("\n")
    assert [line.plain.rstrip() for line in plan_text(plan)] == plan_to_text(plan).split("\n")[:-1]


def test_big_change_renders_small(tmp_path: Path) -> None:
    before = numbered(100_000)
    lines = split_lines(before)
    # difflib over 100,000 lines is slow, so the diff is written out hunk by hunk
    patch = ["--- a/huge.txt\n", "+++ b/huge.txt\n"]
    for index in range(50, 100_000, 100):
        patch.append(f"@@ -{index - 2},7 +{index - 2},7 @@\n")
        patch.extend(" " + line for line in lines[index - 3 : index])
        patch.append("-" + lines[index])
        patch.append(f"+changed {index} {'x' * 20}\n")
        patch.extend(" " + line for line in lines[index + 1 : index + 4])
    write(tmp_path, "huge.txt", before)
    plan = Workspace(tmp_path, history=False).plan_patch("".join(patch))
    assert sum(len(file_plan.hunks) for file_plan in plan.files) == 1000
    html = plan_to_html(plan, include_toggles=True)
    assert len(html.encode("utf-8")) < 2_000_000
    view = file_view(plan.files[0])
    assert (view.added, view.removed) == (1000, 1000)
    assert len([section for section in view.sections if isinstance(section, Block)]) == 1000


def test_file_to_html_and_header_are_wrapped(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\n")
    plan = Workspace(tmp_path).plan_edit("a.py", "x = 1", "x = 2")
    for html in (plan_header_html(plan), file_to_html(plan.files[0])):
        assert html.startswith('<div class="nbedit-view"><style>') and html.endswith("</div>")
    # the file is named once, in its own box
    assert "+1 -1" in plan_header_html(plan) and "a.py" in file_to_html(plan.files[0])


# --- notebooks -----------------------------------------------------------------------------------


def _notebook(path: Path, sources: list[str]) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"c{index}"
    nbformat.write(notebook, path)


def test_notebook_hunks_show_the_cell_view_and_name_their_cell(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", ["a = 1", "b = 2\nprint(b)", "c = 3"])
    plan = Workspace(tmp_path).plan_edit("nb.ipynb", "b = 2", "b = 20")
    file_plan = plan.files[0]
    assert file_plan.notebook
    label = file_plan.hunks[0].cell
    assert label and "c1" in label
    view = file_view(file_plan)
    (block,) = view.blocks
    assert block.cell == label
    assert [row.text for row in block.rows if row.kind != "context"] == ["b = 2", "b = 20"]
    assert not any('"source"' in row.text for row in block.rows), "rows come from the cell view, not the JSON"
    assert_rows_match_files(file_plan)
    assert "<b>cell 1</b> · code · id c1" in plan_to_html(plan)  # the static view draws the cell itself
    assert label in terminal_text(plan)
    assert label in hunk_to_html(file_plan, 0)


def test_a_big_added_file_is_shown_in_part_and_counted_in_full(tmp_path: Path) -> None:
    body = "".join(f"+row {number}\n" for number in range(50_000))
    plan = Workspace(tmp_path).plan_patch(f"*** Begin Patch\n*** Add File: big.txt\n{body}*** End Patch\n")
    view = file_view(plan.files[0])
    (block,) = view.blocks
    assert (view.added, view.removed) == (50_000, 0) == plan.stats()["big.txt"]
    assert 0 < len(block.rows) < 1_000 and block.truncated == 50_000 - len(block.rows)
    html = plan_to_html(plan)
    assert len(html.encode("utf-8")) < 200_000
    assert f"⋯ {block.truncated} more lines not shown" in html
    assert "+50000 -0" in terminal_text(plan)


def test_removed_lines_that_look_like_headers_are_counted(tmp_path: Path) -> None:
    write(tmp_path, "q.sql", "select 1;\n-- old comment\n++ odd\nselect 2;\n")
    plan = Workspace(tmp_path).plan_patch(
        "q.sql\n<<<<<<< SEARCH\n-- old comment\n++ odd\n=======\n-- new comment\n>>>>>>> REPLACE\n"
    )
    assert plan.stats() == {"q.sql": (1, 2)}


def test_terminal_preview_shows_bracketed_paths_and_text_as_is(tmp_path: Path) -> None:
    from nbedit.render.terminal import print_plan

    (tmp_path / "app" / "[slug]").mkdir(parents=True)
    (tmp_path / "app" / "[slug]" / "page.tsx").write_bytes(b"export default 1\n")
    (tmp_path / "[").mkdir()
    (tmp_path / "[" / "]x[bold].txt").write_bytes(b"a\n")
    plan = Workspace(tmp_path, history=False).plan_patch(
        "--- a/app/[slug]/page.tsx\n+++ b/app/[slug]/page.tsx\n@@ -1 +1 @@\n-export default 1\n+export default 2\n"
        "--- a/[/]x[bold].txt\n+++ b/[/]x[bold].txt\n@@ -1 +1 @@\n-a\n+[/]b[red]\n"
    )
    console = Console(record=True, width=120, color_system=None)
    print_plan(plan, console)
    shown = console.export_text()
    assert "app/[slug]/page.tsx  +1 -1  modified" in shown
    assert "[/]x[bold].txt  +1 -1  modified" in shown and "+ [/]b[red]" in shown
