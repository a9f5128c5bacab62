"""Issue 21's rules on projects the drift corpus does not use: never a wrong result.

``benchmarks/drift_rules.py`` makes the cases from the installed sources of traitlets,
tornado, jupyter_client and pygments: a far-off line number between two identical lines,
a Codex ``@@`` anchor that occurs twice, an elision line in the old text.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks.drift_rules import cases, judge, sources

CASES = cases(sources(limit_per_project=6))


def test_every_rule_has_cases() -> None:
    assert {case.rule for case in CASES} == {"far-line-number", "anchor-twice", "elision"}


@pytest.mark.parametrize("rule", ["far-line-number", "anchor-twice", "elision"])
def test_no_rule_case_is_applied_wrongly(rule: str, tmp_path: Path) -> None:
    outcomes = Counter(
        judge(case, tmp_path / str(number)) for number, case in enumerate(CASES) if case.rule == rule
    )
    assert outcomes["wrong"] == 0, outcomes
    if rule == "anchor-twice":
        assert outcomes["right"] >= 1, outcomes  # the exact fit after the second occurrence wins
