"""Section ``five_rules``: issue 21's five rules and tabs-for-spaces drift (``drift_five_rules.py``).

Rows per rule: cases, results due and recovered, refusals due and given, and wrong
results (target 0), on the installed modules of projects the drift corpus does not use.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.drift_five_rules import RULES, build, installed_sources
from benchmarks.drift_five_rules import run as run_cases
from benchmarks.timing import Row

__all__ = ["run"]


def run(scratch: Path, repeat: int = 1) -> list[Row]:
    sources = installed_sources()
    results = run_cases(build(sources), scratch)
    projects = ", ".join(sorted({f"{source.project} {source.version}" for source in sources}))
    rows = []
    for rule in RULES:
        mine = [result for result in results if result.case.rule == rule]
        due = Counter((result.case.expect, result.outcome) for result in mine)
        wrong = sum(result.outcome == "wrong" for result in mine)
        note = (
            f"{len(mine):,} cases; result due {due['recover', 'correct']:,}/"
            f"{sum(n for (e, _), n in due.items() if e == 'recover'):,} recovered; refusal due "
            f"{due['refuse', 'correct']:,}/{sum(n for (e, _), n in due.items() if e == 'refuse'):,} refused"
        )
        rows.append(
            Row(
                f"five rules ({projects})",
                f"{rule}: wrong results",
                wrong,
                "cases",
                target="0",
                passed=wrong == 0,
                note=note,
            )
        )
    return rows
