"""``common_ends`` of two texts (halving with slice comparisons) is the per-item walk's answer.

A notebook plan trims every hunk's context with it (issue 27: 10,000 hunks in one diff of a
cell view); the walk of a list of characters is the reference, and the number of slices
taken grows with the logarithm of the text, not with its length.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbedit.engine.text import common_ends

texts = st.text(alphabet="ab\n\r é", max_size=40)


@given(old=texts, new=texts, shared_head=texts, shared_tail=texts)
def test_texts_agree_with_the_walk_of_their_characters(
    old: str, new: str, shared_head: str, shared_tail: str
) -> None:
    for first, second in ((old, new), (shared_head + old + shared_tail, shared_head + new + shared_tail)):
        assert common_ends(first, second) == common_ends(list(first), list(second))
        assert common_ends(second, first) == common_ends(list(second), list(first))
        assert common_ends(first, first) == (len(first), 0)


class _Counted(str):
    """A text that counts the slices taken of it."""

    taken = 0

    def __getitem__(self, key: object) -> str:  # type: ignore[override]
        _Counted.taken += 1
        return str.__getitem__(self, key)  # type: ignore[index]


def test_the_slices_taken_grow_with_the_logarithm_of_the_length() -> None:
    for size in (1_000, 1_000_000):
        old = "x = 1\n" * size + "changed\n" + "y = 2\n" * size
        new = "x = 1\n" * size + "CHANGED!\n" + "y = 2\n" * size
        _Counted.taken = 0
        assert common_ends(_Counted(old), _Counted(new)) == (6 * size, 6 * size + 1)
        bits = (len(old)).bit_length()
        assert _Counted.taken <= 4 * (bits + 1)  # two slices a halving, two ends
