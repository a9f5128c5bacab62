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
