"""``_dataclass.made_in_bulk``: many instances at once, each the value its ``__init__`` makes.

The unified run reader and the exact-run locator make a thousand hunks, matches and located
hunks at a time; they fill each field for all of them in one C-level map. What comes out must
be indistinguishable from the ``__init__``-made values: equal, hashing alike, frozen, picklable,
every slot set; a column of the wrong length refused before anything is made.
"""

from __future__ import annotations

import copy
import pickle
from itertools import repeat

import pytest

from nbedit._dataclass import dataclass, field, made_in_bulk
from nbedit.engine.models import Hunk, LocatedHunk, Match, Tier


def _hunk_columns(count: int) -> tuple[object, ...]:
    return (
        [f"old {n}\n" for n in range(count)],
        (f"new {n}\n" for n in range(count)),  # any iterable of ``count`` values
        repeat(True),
        list(range(1, count + 1)),
        repeat(()),
        repeat(False),
        repeat(False),
        repeat(False),
        list(range(10, 10 + count)),
        repeat(()),
        [(1, 1) if n % 2 else None for n in range(count)],
    )


def test_bulk_hunks_are_the_hunks_init_makes() -> None:
    made = made_in_bulk(Hunk, 50, *_hunk_columns(50))
    expected = list(map(Hunk, *_hunk_columns(50)))
    assert made == expected
    assert [hash(item) for item in made] == [hash(item) for item in expected]
    assert [item.changed_lines for item in made] == [item.changed_lines for item in expected]  # not compared
    assert all(type(item) is Hunk for item in made)
    assert made[3] == Hunk("old 3\n", "new 3\n", True, 4, source_line=13, changed_lines=(1, 1))
    assert pickle.loads(pickle.dumps(made[7])) == made[7]
    assert copy.deepcopy(made[7]) == made[7]
    assert repr(made[0]) == repr(expected[0])
    with pytest.raises(AttributeError):
        made[0].old = "x"  # type: ignore[misc]


def test_bulk_matches_and_located_hunks() -> None:
    hunks = made_in_bulk(Hunk, 3, *_hunk_columns(3))
    matches = made_in_bulk(
        Match, 3, [0, 10, 20], [5, 15, 25], ["a", "b", "c"], repeat(Tier.EXACT), repeat(1.0), [1, 2, 3],
        repeat(1), repeat(0), repeat(()),
    )  # fmt: skip
    located = made_in_bulk(LocatedHunk, 3, hunks, matches, repeat(None))
    assert located[1] == LocatedHunk(hunks[1], Match(10, 15, "b", Tier.EXACT, 1.0, 2, 1, 0))
    assert located[2].tier is Tier.EXACT and located[2].cell is None


def test_a_column_of_another_length_is_refused_before_anything_is_made() -> None:
    columns = list(_hunk_columns(4))
    columns[3] = [1, 2, 3]  # one start line short
    with pytest.raises(ValueError, match="3 values for 4"):
        made_in_bulk(Hunk, 4, *columns)
    columns = list(_hunk_columns(4))
    columns[1] = iter(["a\n", "b\n"])  # an iterator that ends early
    with pytest.raises(ValueError, match="2 values for 4"):
        made_in_bulk(Hunk, 4, *columns)
    with pytest.raises(TypeError, match="one column a field"):
        made_in_bulk(Hunk, 4, *_hunk_columns(4)[:-1])


def test_no_rows_and_other_classes() -> None:
    assert made_in_bulk(Hunk, 0, *_hunk_columns(0)) == []

    @dataclass(frozen=True)
    class Frozen:  # not slotted: made by its __init__
        a: int
        b: str = "x"

    @dataclass(slots=True)
    class Open:  # not frozen: made by its __init__
        a: int
        b: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class Own:  # its own __init__ does more than set the fields: it is called
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", a * 10)

    assert made_in_bulk(Own, 2, [1, 2]) == [Own(1), Own(2)]
    assert [item.a for item in made_in_bulk(Own, 2, [1, 2])] == [10, 20]
    assert made_in_bulk(Frozen, 2, [1, 2], repeat("y")) == [Frozen(1, "y"), Frozen(2, "y")]
    assert made_in_bulk(Open, 2, [1, 2], [[3], [4]]) == [Open(1, [3]), Open(2, [4])]
