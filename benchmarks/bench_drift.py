"""Section 3: the offset-and-drift cases (see ``drift.py``) through three tools.

Correctness, not speed: for each case, does the tool produce exactly the
intended file? GNU patch runs with its default fuzz factor (2), ``git apply``
with its defaults. For nbedit we also check that every drifted case is reported
as non-exact (some hunk's tier is not ``exact``), so nothing drifted is
presented as a clean apply.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from benchmarks.drift import PATH, DriftCase, drift_cases
from benchmarks.timing import Row

__all__ = ["outcomes", "run"]


def _nbedit(case: DriftCase, folder: Path) -> tuple[bool, bool]:
    from nbedit.errors import NbeditError
    from nbedit.workspace import Workspace

    workspace = Workspace(folder, history=False)
    try:
        plan = workspace.plan_patch(case.patch)
        workspace.apply(plan)
    except NbeditError:
        return False, False
    return (folder / PATH).read_text(encoding="utf-8") == case.intended, not plan.exact


def _process(command: list[str], case: DriftCase, folder: Path) -> bool:
    (folder / "change.diff").write_text(case.patch, encoding="utf-8")
    finished = subprocess.run(command, cwd=folder, capture_output=True, check=False)
    return finished.returncode == 0 and (folder / PATH).read_text(encoding="utf-8") == case.intended


def outcomes(scratch: Path) -> dict[str, dict[str, bool]]:
    """Per tool, per case: exact result? Plus nbedit's non-exact flags under "nbedit-flagged"."""
    results: dict[str, dict[str, bool]] = {
        "nbedit": {},
        "nbedit-flagged": {},
        "GNU patch": {},
        "git apply": {},
    }
    for case in drift_cases():
        for tool in ("nbedit", "GNU patch", "git apply"):
            folder = scratch / f"drift-{case.name}-{tool.replace(' ', '-')}"
            folder.mkdir()
            (folder / PATH).write_text(case.target, encoding="utf-8")
            if tool == "nbedit":
                exact_result, flagged = _nbedit(case, folder)
                results["nbedit"][case.name] = exact_result
                results["nbedit-flagged"][case.name] = flagged
            elif tool == "GNU patch":
                if shutil.which("patch"):
                    command = ["patch", "-p1", "--batch", "--no-backup-if-mismatch", "-i", "change.diff"]
                    results[tool][case.name] = _process(command, case, folder)
            else:
                results[tool][case.name] = _process(["git", "apply", "change.diff"], case, folder)
    return results


def run(scratch: Path, repeat: int = 1) -> list[Row]:
    results = outcomes(scratch)
    cases = list(results["nbedit"])
    section = "offset 50 + drift, 5-hunk patch"
    nbedit_count = sum(results["nbedit"].values())

    def passed(tool: str) -> str:
        return ", ".join(name for name in cases if results[tool].get(name))

    rows = [
        Row(
            section,
            "cases giving exactly the intended file",
            nbedit_count,
            f"/{len(cases)}",
            "GNU patch (fuzz 2)",
            sum(results["GNU patch"].values()) if results["GNU patch"] else None,
            "nbedit 4/4",
            nbedit_count == len(cases),
            note=f"nbedit: {passed('nbedit')}; GNU patch: {passed('GNU patch')}",
        ),
        Row(
            section,
            "cases giving exactly the intended file",
            nbedit_count,
            f"/{len(cases)}",
            "git apply",
            sum(results["git apply"].values()),
            note=f"git apply: {passed('git apply')}",
        ),
    ]
    drifted = [case.name for case in drift_cases() if case.drifted]
    flagged = sum(results["nbedit-flagged"][name] for name in drifted)
    clean_flagged = [
        case.name for case in drift_cases() if not case.drifted and results["nbedit-flagged"][case.name]
    ]
    rows.append(
        Row(
            section,
            "drifted cases reported non-exact",
            flagged,
            f"/{len(drifted)}",
            target=f"{len(drifted)}/{len(drifted)}, as-is reported exact",
            passed=flagged == len(drifted) and not clean_flagged,
        )
    )
    return rows
