"""Line numbers of exact hits, counted on from the previous hit (issue 27).

``FileIndex.newlines_before`` is ``text.count("\\n", 0, offset)`` for any order of offsets;
asked in file order (the hunks of a diff or an apply_patch block), the characters it counts
add up to the text once, not once a hunk.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from nbedit import Workspace
from nbedit.engine.match.tiers import FileIndex


@given(text=st.text(alphabet="a\n\r", max_size=60), offsets=st.lists(st.integers(0, 60), max_size=12))
def test_it_is_the_count_from_the_start_in_any_order(text: str, offsets: list[int]) -> None:
    index = FileIndex(text)
    for offset in offsets:
        offset = min(offset, len(text))
        assert index.newlines_before(offset) == text.count("\n", 0, offset)


class _Counted(str):
    """A text that adds up the characters its ``count`` calls look at."""

    looked_at = 0

    def count(self, sub: str, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        stop = len(self) if end is None else end
        _Counted.looked_at += max(0, stop - start)
        return str.count(self, sub, start, end)


def test_offsets_in_file_order_count_the_text_once() -> None:
    text = _Counted("".join(f"line {number}\n" for number in range(20_000)))
    index = FileIndex(text)
    _Counted.looked_at = 0
    for offset in range(0, len(text), 997):
        assert index.newlines_before(offset) == str.count(text, "\n", 0, offset)
    assert _Counted.looked_at <= len(text)


def test_hunks_out_of_file_order_land_where_they_say(tmp_path: Path) -> None:
    # SEARCH/REPLACE blocks out of file order: each is found from the start of the text again
    original = "".join(f"value_{number} = {number}\n" for number in range(300))
    (tmp_path / "f.py").write_text(original)
    picked = [250, 120, 7, 299, 0]
    blocks = "".join(
        f"<<<<<<< SEARCH\nvalue_{n} = {n}\n=======\nvalue_{n} = -{n}\n>>>>>>> REPLACE\n" for n in picked
    )
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(f"f.py\n```python\n{blocks}```\n")
    assert sorted(hunk.match.line for hunk in plan.files[0].hunks) == sorted(n + 1 for n in picked)
    workspace.apply(plan)
    expected = original
    for n in picked:
        expected = expected.replace(f"value_{n} = {n}\n", f"value_{n} = -{n}\n")
    assert (tmp_path / "f.py").read_text() == expected
