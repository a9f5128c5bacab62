"""Codex's own apply_patch scenarios, run through the real Workspace.

The data in ``tests/data/codex-apply-patch`` is a verbatim copy of the upstream
fixtures (see its SOURCE.md). Each scenario runs the way the upstream runner
does: copy ``input/`` into an empty directory, apply ``patch.txt`` there, then
compare a snapshot of the whole tree (file bytes and directories) with
``expected/``.

Where we knowingly differ, we differ toward safety, and the test says so:

- ``015`` expects the file created by the first operation to survive the failure
  of the second; nbedit applies a patch all-or-nothing, so the tree must be
  left exactly as it was.
- ``010`` and ``011`` overwrite an existing file; nbedit only does that with
  ``overwrite=True`` and otherwise refuses with ``FileExists``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import (
    FileExists,
    FileMissing,
    MatchError,
    NbeditError,
    NotAFile,
    PatchSyntaxError,
)

SCENARIOS = Path(__file__).parent / "data" / "codex-apply-patch" / "scenarios"
NAMES = sorted(path.name for path in SCENARIOS.iterdir() if path.is_dir())

OVERWRITING = {"010_move_overwrites_existing_destination", "011_add_overwrites_existing_file"}
ALL_OR_NOTHING = "015_failure_after_partial_success_leaves_changes"
# Scenarios whose patch must be rejected, and the kind of error that says why.
REJECTED: dict[str, type[NbeditError]] = {
    "005_rejects_empty_patch": PatchSyntaxError,
    "006_rejects_missing_context": MatchError,
    "007_rejects_missing_file_delete": FileMissing,
    "008_rejects_empty_update_hunk": PatchSyntaxError,
    "009_requires_existing_file_for_update": FileMissing,
    "012_delete_directory_fails": NotAFile,
    "013_rejects_invalid_hunk_header": PatchSyntaxError,
    ALL_OR_NOTHING: FileMissing,
}

Snapshot = dict[str, bytes | None]  # relative path -> file bytes, or None for a directory


def snapshot(root: Path) -> Snapshot:
    if not root.exists():
        return {}
    result: Snapshot = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        result[relative] = None if path.is_dir() else path.read_bytes()
    return result


def prepare(name: str, tmp_path: Path) -> tuple[Path, str]:
    scenario = SCENARIOS / name
    work = tmp_path / "work"
    work.mkdir()
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", work, dirs_exist_ok=True)
    return work, (scenario / "patch.txt").read_text(encoding="utf-8")


def run(work: Path, patch: str, *, overwrite: bool) -> NbeditError | None:
    workspace = nbedit.Workspace(root=work, history=False, overwrite=overwrite)
    try:
        workspace.apply(workspace.plan_patch(patch))
    except NbeditError as error:
        return error
    return None


def test_every_scenario_is_collected() -> None:
    assert len(NAMES) == 23  # two upstream names share the prefix 020
    for name in REJECTED:
        assert name in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_scenario(name: str, tmp_path: Path) -> None:
    work, patch = prepare(name, tmp_path)
    before = snapshot(work)

    error = run(work, patch, overwrite=name in OVERWRITING)

    if name in REJECTED:
        assert isinstance(error, REJECTED[name]), f"expected {REJECTED[name].__name__}, got {error!r}"
        assert str(error)
    else:
        assert error is None, f"scenario {name} failed: {error}"
    if name == ALL_OR_NOTHING:
        assert snapshot(work) == before  # our divergence: nothing of a failed patch is written
    else:
        assert snapshot(work) == snapshot(SCENARIOS / name / "expected")


@pytest.mark.parametrize("name", sorted(OVERWRITING))
def test_overwriting_scenarios_are_refused_without_overwrite(name: str, tmp_path: Path) -> None:
    work, patch = prepare(name, tmp_path)
    before = snapshot(work)

    error = run(work, patch, overwrite=False)

    assert isinstance(error, FileExists), repr(error)
    assert snapshot(work) == before
