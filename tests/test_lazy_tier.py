"""``Tier`` is made when first read (``engine/tier.py``): an exact diff's matches hold a stand-in.

Importing :mod:`enum` and making the class cost about 3 ms of every ``nbedit`` process; a diff
whose hunks all stand where they say never needs it. The exact paths mark their matches with
``models.EXACT_WHEN_READ``, which ``Match.tier`` turns into ``Tier.EXACT`` on first read. Every
reader must see exactly what it saw when the enum was stored: the tier, equality, hashing,
``repr``, ``replace``, pickling, copying; what reads only a tier's name or whether a match is
exact does so without the enum.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from itertools import repeat
from pathlib import Path

import nbedit
from nbedit._dataclass import _slot, fields, made_in_bulk, replace
from nbedit.engine import models, text_edit
from nbedit.engine.models import EXACT_WHEN_READ, FilePlan, Hunk, LocatedHunk, Match, Tier

REPO = Path(__file__).resolve().parents[1]


def _match(tier: object, start: int = 3) -> Match:
    return Match(start, start + 4, "new\n", tier, 1.0, 2, 1, 0)  # type: ignore[arg-type]


def test_the_class_is_one_object_under_every_name() -> None:
    from nbedit.engine.tier import Tier as defined

    assert Tier is defined is nbedit.Tier is models.Tier
    assert [tier.value for tier in Tier][:2] == ["exact", "line-endings"]
    assert Tier.FUZZY.explanation == "fuzzy match"
    assert pickle.loads(pickle.dumps(Tier.READING)) is Tier.READING
    # a pickle made when the class was defined in models names it there: it still loads
    old = pickle.dumps(Tier.FUZZY, protocol=2).replace(b"nbedit.engine.tier", b"nbedit.engine.models")
    assert b"nbedit.engine.models" in old
    assert pickle.loads(old) is Tier.FUZZY


def test_a_stand_in_reads_as_the_exact_tier_everywhere() -> None:
    made, stored = _match(EXACT_WHEN_READ), _match(Tier.EXACT)
    assert made.exact and stored.exact
    assert models.tier_value(made) == models.tier_value(stored) == "exact"
    assert hash(made) == hash(stored)
    assert made == stored and repr(made) == repr(stored)
    assert made.tier is Tier.EXACT  # read: the slot now holds the enum itself
    assert models.held_tier(made) is Tier.EXACT
    for fresh in (_match(EXACT_WHEN_READ), _match(EXACT_WHEN_READ)):
        for same in (
            pickle.loads(pickle.dumps(fresh)),
            copy.copy(fresh),
            copy.deepcopy(fresh),
            replace(fresh, start=3),
        ):
            assert same == stored and same.tier is Tier.EXACT
    assert [item.name for item in fields(Match)][3] == "tier"
    assert replace(_match(EXACT_WHEN_READ), tier=Tier.FUZZY).tier is Tier.FUZZY


def test_other_tiers_and_other_values_are_kept_as_they_are() -> None:
    fuzzy = _match(Tier.FUZZY)
    assert not fuzzy.exact and fuzzy.tier is Tier.FUZZY and models.tier_value(fuzzy) == "fuzzy"
    assert _match(EXACT_WHEN_READ) != fuzzy
    odd = _match("exact")  # not a tier: stored and read back as it is, as any slot would
    assert odd.tier == "exact" and not odd.exact
    assert models.held_tier(_match(EXACT_WHEN_READ)) is EXACT_WHEN_READ
    assert EXACT_WHEN_READ in models.exact_tiers() and Tier.EXACT in models.exact_tiers()


def test_tier_names_of_a_file_plan() -> None:
    hunk = Hunk("a\n", "b\n")
    located = (
        LocatedHunk(hunk, _match(EXACT_WHEN_READ)),
        LocatedHunk(hunk, _match(Tier.EXACT, 20)),
        LocatedHunk(hunk, Match(30, 31, "c", Tier.FUZZY, 0.91, 5, 1)),
        LocatedHunk(hunk, _match(Tier.LINE_ENDINGS, 40)),
    )
    plan = FilePlan("a.py", "update", "x", "y", b"x", b"y", "0" * 64, located)
    assert plan.tiers() == ("exact", "fuzzy 0.91", "line-endings")
    assert models.tier_values(located) == ["exact", "fuzzy", "line-endings"]
    assert not plan.exact
    assert FilePlan("a.py", "update", "x", "y", b"x", b"y", "0" * 64, located[:2]).exact


def test_structure_keeping_is_still_the_tiers() -> None:
    structure_keeping = frozenset({Tier.EXACT, Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE})
    assert structure_keeping == text_edit.STRUCTURE_KEEPING
    hunk = Hunk("a\n", "b\n")
    kept = text_edit.TextEdit("", (LocatedHunk(hunk, _match(EXACT_WHEN_READ)),), False, ())
    moved = text_edit.TextEdit("", (LocatedHunk(hunk, _match(Tier.INDENTATION)),), False, ())
    assert not kept.placed_leniently and moved.placed_leniently


def test_bulk_made_matches_fill_the_tier_slot_itself() -> None:
    # made_in_bulk and __init__ store through the slot under Match.tier's reader (C speed)
    assert _slot(Match, "tier") is Match.__dict__["tier"].slot
    columns = ([0, 5, 9], [4, 8, 12], ["x"] * 3, repeat(EXACT_WHEN_READ), repeat(1.0), [1, 2, 3])
    made = made_in_bulk(Match, 3, *columns, repeat(1), repeat(0), repeat(()))
    assert [match.tier for match in made] == [Tier.EXACT] * 3
    assert made[1] == Match(5, 8, "x", Tier.EXACT, 1.0, 2, 1, 0)


_EXACT_PLAN = """
import sys
from nbedit.workspace import Workspace
with open("f.txt", "w") as handle:
    handle.write("".join(f"line {n}\\n" for n in range(40)))
diff = "--- a/f.txt\\n+++ b/f.txt\\n@@ -3,3 +3,3 @@\\n line 2\\n-line 3\\n+line three\\n line 4\\n"
plan = Workspace(".", history=False).plan_patch(diff)
file_plan = plan.files[0]
assert file_plan.tiers() == ("exact",) and file_plan.exact and plan.exact, file_plan.tiers()
assert "enum" not in sys.modules and "nbedit.engine.tier" not in sys.modules, "the enum was made"
assert repr(file_plan.hunks[0].match.tier) == "<Tier.EXACT: 'exact'>"
print("ok")
"""


def test_an_exact_plan_does_not_make_the_enum(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _EXACT_PLAN],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
        timeout=60,
    )
    assert completed.stdout.strip() == "ok", completed.stderr
