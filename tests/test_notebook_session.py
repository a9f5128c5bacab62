"""running_notebook_path: what the kernel knows of its own notebook, and the engine's import hygiene."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nbedit.jupyter.session import running_notebook_path


@pytest.fixture(autouse=True)
def _no_session_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


def test_session_variable_in_the_namespace_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    other = tmp_path / "other.ipynb"
    other.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(other))
    shell = SimpleNamespace(user_ns={"__session__": str(notebook)})
    assert running_notebook_path(shell) == str(notebook.resolve())


def test_vscode_variable_comes_first(tmp_path: Path) -> None:
    vscode = tmp_path / "vs.ipynb"
    vscode.write_text("{}")
    session = tmp_path / "s.ipynb"
    session.write_text("{}")
    shell = SimpleNamespace(user_ns={"__vsc_ipynb_file__": str(vscode), "__session__": str(session)})
    assert running_notebook_path(shell) == str(vscode.resolve())


def test_environment_is_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = tmp_path / "env.ipynb"
    notebook.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    assert running_notebook_path(SimpleNamespace(user_ns={})) == str(notebook.resolve())


def test_relative_session_name_is_resolved_against_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rel.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path)
    shell = SimpleNamespace(user_ns={"__session__": "rel.ipynb"})
    assert running_notebook_path(shell) == str((tmp_path / "rel.ipynb").resolve())


@pytest.mark.parametrize("value", ["missing.ipynb", "a-console-session", 42, None])
def test_hints_that_name_no_existing_notebook_are_ignored(tmp_path: Path, value: object) -> None:
    shell = SimpleNamespace(
        user_ns={"__session__": value if value != "missing.ipynb" else str(tmp_path / value)}
    )
    assert running_notebook_path(shell) is None


def test_without_a_shell_only_the_environment_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert running_notebook_path() is None
    notebook = tmp_path / "n.ipynb"
    notebook.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    assert running_notebook_path() == str(notebook.resolve())


def test_engine_and_session_import_neither_ipython_nor_nbformat() -> None:
    code = (
        "import sys\n"
        "import nbedit.engine.notebook, nbedit.jupyter.session\n"
        "print(sorted(name for name in ('IPython', 'ipywidgets', 'jsonschema', 'nbformat') if name in sys.modules))\n"
    )
    # importing nbedit.engine.notebook runs nbedit/__init__, so this checks the whole import chain;
    # nbformat (for validation) is imported only when an edit is validated
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
