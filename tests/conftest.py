"""Shared test setup: the suite writes nothing into the user's home, and every test has its own
history home.

For the whole session HOME and every folder IPython, Jupyter and the XDG-minded tools (Chromium
among them) write to point into one temporary folder, set here, when pytest loads this file:
before any test module imports IPython or starts a kernel, a server or a browser, all of which
inherit them. A run once left ``~/.ipython``, ``~/.jupyter`` and ``~/.local/share/jupyter`` behind;
``tests/test_home_untouched.py`` checks real processes leave a home alone, and the summary at the
end of a run names anything the user's home gained meanwhile. Kernelspecs and lab extensions of
the virtual environment stay visible: Jupyter always searches ``sys.prefix`` too.

Parallel runs: ``NBEDIT_TEST_WORKERS=2 bash scripts/test`` runs the tests in two processes
(pytest-xdist, ``--dist loadgroup``); every browser test goes to one of them.

Property tests: ``NBEDIT_PROPERTY_EXAMPLES`` sets how many examples each hypothesis test runs.
Unset, each runs at most ``CI_EXAMPLES`` (its own count when smaller): sized for CI. Set it to a
number for that many per test (``NBEDIT_PROPERTY_EXAMPLES=2000 bash scripts/test -k properties``
for a long run), or to ``declared`` for the counts written in the tests.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from home_folders import HOME_FOLDERS  # a module of its own: tests import it too

REAL_HOME = Path(os.path.expanduser("~"))
SESSION_FOLDER = Path(tempfile.mkdtemp(prefix="nbedit-tests-"))

for _name, _folder in HOME_FOLDERS.items():
    (SESSION_FOLDER / _folder).mkdir(parents=True, exist_ok=True)
    os.environ[_name] = str(SESSION_FOLDER / _folder)
os.environ.pop("JUPYTER_PATH", None)  # nothing of the user's Jupyter setup leaks in
os.environ["NBEDIT_TESTS_REAL_HOME"] = str(REAL_HOME)
os.environ["NBEDIT_TESTS_SESSION_FOLDER"] = str(SESSION_FOLDER)

# what the user's home holds at the start, to name what it gained at the end (see the docstring)
WATCHED = (".", ".ipython", ".jupyter", ".local/share/jupyter", ".nbedit", ".cache", ".config", ".pki")


def home_entries(home: Path = REAL_HOME) -> set[str]:
    entries = set()
    for folder in WATCHED:
        try:
            entries.update(str(Path(folder) / name) for name in os.listdir(home / folder))
        except OSError:
            continue
    return entries


_HOME_BEFORE = home_entries()

CI_EXAMPLES = 100


def _property_examples(declared: int) -> int:
    wanted = os.environ.get("NBEDIT_PROPERTY_EXAMPLES", "").strip()
    if wanted == "declared":
        return declared
    if wanted:
        return int(wanted)
    return min(declared, CI_EXAMPLES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every hypothesis test runs the examples ``NBEDIT_PROPERTY_EXAMPLES`` asks for (see above)."""
    from hypothesis import settings

    if config.pluginmanager.hasplugin("xdist"):
        # in parallel runs (NBEDIT_TEST_WORKERS, scripts/test) the browser tests stay in one worker,
        # so they share its one JupyterLab and Chromium (tests/browser_support.py)
        for item in items:
            if item.get_closest_marker("browser"):
                item.add_marker(pytest.mark.xdist_group("browser"))
    for item in items:
        function = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        inner = getattr(function, "hypothesis", None)
        if inner is None:
            continue
        current = getattr(function, "_hypothesis_internal_use_settings", None) or settings()
        wanted = _property_examples(current.max_examples)
        if wanted != current.max_examples:
            function._hypothesis_internal_use_settings = settings(current, max_examples=wanted)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    gained = sorted(home_entries() - _HOME_BEFORE)
    if gained:  # other programs may write there meanwhile: named, not failed (the test is exact)
        terminalreporter.write_line(f"the home folder {REAL_HOME} gained during the run: {', '.join(gained)}")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(SESSION_FOLDER, ignore_errors=True)


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
