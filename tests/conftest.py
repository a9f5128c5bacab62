"""Shared test setup: every test runs with its own history home, never the user's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_nbedit_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("nbedit-home")
    monkeypatch.setenv("NBEDIT_HOME", str(home))
    return home


@pytest.fixture
def nbedit_home() -> Path:
    return Path(os.environ["NBEDIT_HOME"])


# The agents' tests share a small project and a workspace over it (a module may define its own).
@pytest.fixture
def project(tmp_path: Path) -> Path:
    from tests.agents_support import make_project

    root = tmp_path / "project"
    root.mkdir()
    return make_project(root)


@pytest.fixture
def workspace(project: Path, tmp_path: Path) -> object:
    from nbedit import Workspace

    return Workspace(project, home=tmp_path / "home", session="agent-test")
