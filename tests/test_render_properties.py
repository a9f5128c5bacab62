"""Property: the rendered rows account for every line of both sides, at the right numbers."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from test_render import assert_hunk_blocks_match_files, assert_rows_match_files

from nbedit import NbeditError, Workspace
from nbedit.engine.text import split_lines
from nbedit.render.html import hunk_to_html, plan_to_html
from nbedit.render.hunk_blocks import block_for_hunk

LINES = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "", "delta x", "  indented", "beta"]), max_size=25
)


def _text(lines: list[str], final_newline: bool) -> str:
    text = "\n".join(lines)
    return text + "\n" if lines and final_newline else text


def _unified(before: str, after: str, context: int = 3) -> str:
    out = []
    lines = difflib.unified_diff(split_lines(before), split_lines(after), "a/f.txt", "b/f.txt", n=context)
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _plan(before: str, change: str, **options: object):
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "f.txt").write_bytes(before.encode("utf-8"))
        try:
            return Workspace(folder, history=False).plan_patch(change, **options)
        except NbeditError:
            reject()  # the matcher's refusals are tested elsewhere; here only rendering counts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES, LINES, st.booleans(), st.booleans(), st.sampled_from([0, 1, 3]))
def test_rows_of_a_diff_cover_both_files(
    old: list[str], new: list[str], old_newline: bool, new_newline: bool, context: int
) -> None:
    before, after = _text(old, old_newline), _text(new, new_newline)
    if before == after or not before:
        reject()
    plan = _plan(before, _unified(before, after, context))
    file_plan = plan.files[0]
    assert file_plan.after == after
    assert_rows_match_files(file_plan)
    assert_hunk_blocks_match_files(file_plan)
    for index in range(len(file_plan.hunks)):
        block = block_for_hunk(file_plan, index)
        assert any(row.kind != "context" for row in block.rows) or file_plan.already_applied
        assert hunk_to_html(file_plan, index)
    assert plan_to_html(plan, include_toggles=True)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES, st.booleans(), st.data())
def test_rows_of_a_mid_line_edit_cover_both_files(
    old: list[str], final_newline: bool, data: st.DataObject
) -> None:
    before = _text(old, final_newline)
    if not before:
        reject()
    start = data.draw(st.integers(0, len(before) - 1))
    end = data.draw(st.integers(start + 1, len(before)))
    old_text = before[start:end]
    new_text = data.draw(st.text(alphabet="ab \n", max_size=8))
    if old_text == new_text:
        reject()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "f.txt").write_bytes(before.encode("utf-8"))
        try:
            plan = Workspace(folder, history=False).plan_edit(
                "f.txt", old_text, new_text, replace_all=True, exact=True
            )
        except NbeditError:
            reject()
    assert_rows_match_files(plan.files[0])
