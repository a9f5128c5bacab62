"""Properties: applying a unified diff of (a, b) to a gives b, byte for byte; failures change nothing."""

from __future__ import annotations

import difflib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbedit
from nbedit.engine.text import Codec, encode, split_lines

WORDS = ["alpha", "beta", "", "  indented", "\ttab", "x = 1", "return y", "“curly”", "é€", "same", "same"]

line = st.sampled_from(WORDS)
newline = st.sampled_from(["\n", "\r\n"])
codecs = st.sampled_from(
    [Codec("utf-8"), Codec("utf-8", True), Codec("utf-16-le", True), Codec("utf-16-be", True)]
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(line, newline), max_size=30))
    text = "".join(body + end for body, end in lines)
    if text and draw(st.booleans()):
        text = text[: -len(lines[-1][1])]  # no final newline
    return text


def unified(a: str, b: str, path: str) -> str:
    """An independent unified diff writer (difflib), keeping \\r and marking missing final newlines."""
    out = []
    for row in difflib.unified_diff(split_lines(a), split_lines(b), f"a/{path}", f"b/{path}", n=2):
        out.append(row if row.endswith("\n") else row + "\n\\ No newline at end of file\n")
    return "".join(out)


settings.register_profile(
    "nbedit", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("nbedit")


@given(a=texts(), b=texts(), codec=codecs)
def test_applying_a_diff_gives_the_target_bytes(tmp_path_factory, a: str, b: str, codec: Codec) -> None:
    root = tmp_path_factory.mktemp("prop")
    target = root / "file.txt"
    target.write_bytes(encode(a, codec))
    diff = unified(a, b, "file.txt")
    if not diff:
        return
    workspace = nbedit.Workspace(root, history=False, exact=True)
    workspace.apply(workspace.plan_patch(diff))
    assert target.read_bytes() == encode(b, codec)


@given(a=texts(), b=texts(), c=texts())
def test_a_failed_apply_leaves_every_byte(tmp_path_factory, a: str, b: str, c: str) -> None:
    """A diff made against a different text either applies cleanly or changes nothing."""
    root = tmp_path_factory.mktemp("prop")
    target = root / "file.txt"
    other = root / "other.txt"
    target.write_bytes(a.encode())
    other.write_bytes(b"untouched\r\n")
    diff = unified(c, b, "file.txt") + unified("untouched\n", "touched\n", "other.txt")
    if not diff:
        return
    workspace = nbedit.Workspace(root, history=False, exact=True)
    try:
        workspace.apply(workspace.plan_patch(diff))
    except nbedit.NbeditError:
        assert target.read_bytes() == a.encode()
        assert other.read_bytes() == b"untouched\r\n"
    assert sorted(p.name for p in root.iterdir()) == ["file.txt", "other.txt"], "no temp files left"


@given(a=texts(), b=texts())
def test_plan_diff_round_trips(tmp_path_factory, a: str, b: str) -> None:
    """The plan's own diff, applied to the original, gives the planned result."""
    root = tmp_path_factory.mktemp("prop")
    (root / "f.txt").write_bytes(a.encode())
    diff = unified(a, b, "f.txt")
    if not diff:
        return
    workspace = nbedit.Workspace(root, history=False)
    plan = workspace.plan_patch(diff)
    again = workspace.plan_patch(plan.diff)
    assert again.files[0].after_bytes == plan.files[0].after_bytes == b.encode()


def test_unified_helper_marks_missing_newline() -> None:
    assert "\\ No newline at end of file" in unified("a", "b", "x")
    assert Path  # keep import used for type checkers


@given(a=texts(), b=texts())
def test_text_diff_matches_difflib_and_round_trips(tmp_path_factory, a: str, b: str) -> None:
    """The trimmed whole-text diff (restores, adds, deletes) is a correct unified diff."""
    from nbedit.engine.whole_diff import text_diff

    diff = text_diff(a, b, "f.txt")
    if a == b:
        assert diff == ""
        return
    root = tmp_path_factory.mktemp("prop")
    (root / "f.txt").write_bytes(a.encode())
    workspace = nbedit.Workspace(root, history=False, exact=True)
    workspace.apply(workspace.plan_patch(diff))
    assert (root / "f.txt").read_bytes() == b.encode()


@given(
    a=st.lists(st.sampled_from(["x\n", "y\n", "z\n", "w\n", "u\n", "v\n", "t\n"]), max_size=60),
    b=st.lists(st.sampled_from(["x\n", "y\n", "z\n", "w\n", "u\n", "v\n", "t\n"]), max_size=60),
)
def test_resync_opcodes_rebuild_the_new_side(a: list[str], b: list[str]) -> None:
    from nbedit.engine.resync import ResyncMatcher

    rebuilt: list[str] = []
    covered_old = covered_new = 0
    for tag, a0, a1, b0, b1 in ResyncMatcher(a, b).get_opcodes():
        assert (a0, b0) == (covered_old, covered_new), "opcodes are contiguous"
        if tag == "equal":
            assert a[a0:a1] == b[b0:b1]
        rebuilt.extend(b[b0:b1])
        covered_old, covered_new = a1, b1
    assert (covered_old, covered_new) == (len(a), len(b)) and rebuilt == b


@given(st.text(alphabet="ab\n\r\x0b\x0c\x1c\x85\u2028 ", max_size=40))
def test_split_lines_splits_on_newline_only(text: str) -> None:
    from nbedit.engine.text import split_lines

    lines = split_lines(text)
    assert "".join(lines) == text
    assert all(line.endswith("\n") for line in lines[:-1])
    assert all("\n" not in line[:-1] for line in lines)


@given(a=texts(), b=texts())
def test_counted_stats_equal_the_counts_of_the_written_diff(tmp_path_factory, a: str, b: str) -> None:
    """``Plan.stats`` counts lines without writing the diff; the counts are the diff's own."""
    from nbedit.engine.diff import diff_stats, file_diff

    root = tmp_path_factory.mktemp("prop")
    (root / "file.txt").write_text(a, newline="")
    diff = unified(a, b, "file.txt")
    if not diff:
        return
    plan = nbedit.Workspace(root, history=False, exact=True).plan_patch(diff)
    counted = plan.stats()  # before anything wrote the diff
    assert counted == {"file.txt": diff_stats(file_diff(plan.files[0]))}
    assert counted == plan.stats()  # once the diff is cached, from its text
