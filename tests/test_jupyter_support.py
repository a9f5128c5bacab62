"""Shared fixtures for the Jupyter front-end tests (no tests here): a real IPython shell with nbedit loaded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ipython() -> Any:
    from IPython.testing.globalipapp import get_ipython

    return get_ipython()


@pytest.fixture
def shell(ipython: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The shell with nbedit loaded, working in ``tmp_path``; unloaded again afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("NBEDIT_SESSION", raising=False)
    result = ipython.run_cell("%load_ext nbedit")
    assert result.success, result.error_in_exec
    yield ipython
    ipython.run_cell("%unload_ext nbedit")
    for name in ("__session__", "__vsc_ipynb_file__"):
        ipython.user_ns.pop(name, None)


def run(shell: Any, cell: str, *, store_history: bool = True) -> Any:
    """Run a cell through the shell's full input path (transformers included); return its value."""
    result = shell.run_cell(cell, store_history=store_history)
    if result.error_before_exec is not None:
        raise result.error_before_exec
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def history_entries(home: Any) -> list[Any]:
    from nbedit.storage.history import HistoryStore

    with HistoryStore(home) as store:
        return store.entries()
