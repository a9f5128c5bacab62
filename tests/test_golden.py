"""Golden cases: tests/data/cases/<case>/{before/, change.txt, after/ | error.txt}.

Each case is a real folder tree: the change is applied with the real workspace,
and the resulting tree must equal ``after/`` byte for byte (or the named error
is raised and the tree equals ``before/``, byte for byte).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import nbedit

CASES = Path(__file__).parent / "data" / "cases"


def snapshot(root: Path) -> dict[str, bytes]:
    # bytecode a tool may have cached beside a case's .py files is not part of the case
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()), ids=str)
def test_golden_case(case: str, tmp_path: Path) -> None:
    folder = CASES / case
    work = tmp_path / "work"
    shutil.copytree(folder / "before", work, ignore=shutil.ignore_patterns("__pycache__"))
    change = (folder / "change.txt").read_bytes().decode("utf-8")
    options = json.loads((folder / "options.json").read_text()) if (folder / "options.json").exists() else {}
    workspace = nbedit.Workspace(work, **options)
    error_file = folder / "error.txt"
    if error_file.exists():
        expected = getattr(nbedit, error_file.read_text().strip())
        with pytest.raises(expected) as raised:
            workspace.apply(workspace.plan_patch(change))
        assert str(raised.value).strip(), "an error always says what happened"
        assert snapshot(work) == snapshot(folder / "before"), "a refused change leaves every byte"
        return
    plan = workspace.plan_patch(change)
    workspace.apply(plan)
    assert snapshot(work) == snapshot(folder / "after")
