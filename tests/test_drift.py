"""Offset and drift: one multi-hunk patch against a moved and drifted file.

The four cases (built by ``benchmarks/drift.py``, shared with the benchmark
that runs GNU patch and git apply on them) must all give exactly the intended
file, and nbedit must say so when it did not find the text exactly: a drifted
case reports a tier other than exact for the drifted hunks, and the exact-only
mode refuses it and leaves the file alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.drift import PATH, SHIFT, DriftCase, drift_cases
from nbedit.engine.models import Tier
from nbedit.errors import NoMatch
from nbedit.workspace import Workspace

CASES = drift_cases()


def _write(folder: Path, text: str) -> Path:
    path = folder / PATH
    path.write_bytes(text.encode("utf-8"))
    return path


def test_the_four_cases_are_distinct() -> None:
    assert [case.name for case in CASES] == ["as-is", "outer", "inner", "whitespace"]
    assert len({case.target for case in CASES}) == 4
    assert CASES[0].patch.count("\n@@ ") == 5
    assert all(case.patch == CASES[0].patch for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_patch_gives_exactly_the_intended_file(case: DriftCase, tmp_path: Path) -> None:
    path = _write(tmp_path, case.target)
    workspace = Workspace(tmp_path, history=False)

    plan = workspace.plan_patch(case.patch)
    workspace.apply(plan)

    assert path.read_bytes() == case.intended.encode("utf-8")
    located = [hunk for file_plan in plan.files for hunk in file_plan.hunks]
    assert len(located) == 5
    assert all(hunk.match.offset == SHIFT for hunk in located)
    tiers = [hunk.tier for hunk in located]
    if case.drifted:
        assert not plan.exact
        assert any(tier is not Tier.EXACT for tier in tiers)
    else:
        assert plan.exact
        assert all(tier is Tier.EXACT for tier in tiers)


@pytest.mark.parametrize("case", [case for case in CASES if case.drifted], ids=lambda case: case.name)
def test_exact_mode_refuses_drift_and_writes_nothing(case: DriftCase, tmp_path: Path) -> None:
    path = _write(tmp_path, case.target)
    workspace = Workspace(tmp_path, history=False, exact=True)

    with pytest.raises(NoMatch):
        workspace.plan_patch(case.patch)

    assert path.read_bytes() == case.target.encode("utf-8")


def test_drifted_hunks_and_only_those_are_non_exact(tmp_path: Path) -> None:
    """The 'inner' case drifts one context line of the second hunk: only that hunk is fuzzy."""
    inner = next(case for case in CASES if case.name == "inner")
    _write(tmp_path, inner.target)
    plan = Workspace(tmp_path, history=False).plan_patch(inner.patch)
    tiers = [hunk.tier for file_plan in plan.files for hunk in file_plan.hunks]
    assert tiers[1] is not Tier.EXACT
    assert [tier for number, tier in enumerate(tiers) if number != 1] == [Tier.EXACT] * 4
