"""``python -m nbedit`` runs the tour unattended, touching nothing but its own temporary folder."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from nbedit import Workspace
from nbedit.demo import APPLY_PATCH, GIT_DIFF, SAMPLES, SEARCH_REPLACE, copy_samples, run

REPO = Path(__file__).resolve().parents[1]


def test_demo_runs_unattended_and_leaves_the_working_directory_alone(
    tmp_path: Path, nbedit_home: Path
) -> None:
    (tmp_path / "inventory.py").write_bytes(b"mine\n")
    result = subprocess.run(
        [sys.executable, "-m", "nbedit"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout
    for expected in (
        "git diff",
        "apply_patch",
        "⚠ unicode-punctuation",
        "AmbiguousMatch",
        "line 14, column 13",
        "NoMatch",
        "similarity",
        "refused: nothing was written",
        "applied: wrote notes.md",
        "cell 1 (id cell-1, code)",
        "applied: wrote stock.ipynb",
        "undone: restored stock.ipynb",
        "stock.ipynb is byte for byte as before the cell edit",
    ):
        assert expected in output, expected
    assert [path.name for path in tmp_path.iterdir()] == ["inventory.py"]
    assert (tmp_path / "inventory.py").read_bytes() == b"mine\n"
    assert not any(nbedit_home.iterdir()), "the demo must keep its history in its own temporary folder"


def test_demo_argument_runs_the_demo(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nbedit", "demo"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "nbedit tour" in result.stdout


def test_run_in_process_returns_zero() -> None:
    buffer = io.StringIO()
    assert run(Console(file=buffer, width=120, color_system=None)) == 0
    assert "done" in buffer.getvalue()


def test_samples_take_the_documented_changes_exactly_where_promised(tmp_path: Path) -> None:
    copy_samples(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(SAMPLES)
    workspace = Workspace(tmp_path, history=False)
    for patch in (GIT_DIFF, APPLY_PATCH):
        plan = workspace.plan_patch(patch)
        assert plan.exact
        workspace.apply(plan)
    drift = workspace.plan_patch(SEARCH_REPLACE)
    assert not drift.exact
    workspace.apply(drift)
    text = (tmp_path / "inventory.py").read_text(encoding="utf-8")
    assert 'raise ValueError(f"only {available} {name} in stock")' in text
    assert "Return how many items are in stock" in text


def test_drift_replacement_keeps_its_straight_quotes(tmp_path: Path) -> None:
    # only the quotes the file really curled stay curly; the docstring's own quotes are Python
    copy_samples(tmp_path)
    workspace = Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(SEARCH_REPLACE))
    text = (tmp_path / "inventory.py").read_text(encoding="utf-8")
    assert '"""Return how many items are in stock, all names together."""' in text
