"""Shared test setup: the suite writes nothing into the user's home, and every test has its own
history home.

For the whole session HOME and every folder IPython, Jupyter and the XDG-minded tools (Chromium
among them) write to point into one temporary folder, set here, when pytest loads this file:
before any test module imports IPython or starts a kernel, a server or a browser, all of which
inherit them. A run once left ``~/.ipython``, ``~/.jupyter`` and ``~/.local/share/jupyter`` behind;
``tests/test_home_untouched.py`` checks real processes leave a home alone, and the summary at the
end of a run names anything the user's home gained meanwhile. Kernelspecs and lab extensions of
the virtual environment stay visible: Jupyter always searches ``sys.prefix`` too.

Parallel runs: ``bash scripts/test`` runs the tests in two processes (pytest-xdist, ``--dist
loadgroup``; ``NBEDIT_TEST_WORKERS=1`` for one). Much of the suite waits on kernels, servers, a
browser and child processes, so a second worker uses the core the first leaves idle. The browser
tests on the stock JupyterLab go to one worker, where one JupyterLab and one Chromium serve them
all; the collaboration tests (their own server from ``.venv-collab``) to one worker too, maybe the
other. A worker inherits the controller's temporary HOME, so the user's real home is passed on in
``NBEDIT_TESTS_REAL_HOME``.

Property tests: ``NBEDIT_PROPERTY_EXAMPLES`` sets how many examples each hypothesis test runs, and
how many rounds the randomised tests that ask for ``property_examples`` run.
Unset, each runs at most ``CI_EXAMPLES`` (its own count when smaller): sized for CI. Set it to a
number for that many per test (``NBEDIT_PROPERTY_EXAMPLES=2000 bash scripts/test -k properties``
for a long run), or to ``declared`` for the counts written in the tests.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from home_folders import HOME_FOLDERS  # a module of its own: tests import it too

# an xdist worker starts with the controller's environment, HOME already temporary: the real one
# is the controller's
REAL_HOME = Path(os.environ.get("NBEDIT_TESTS_REAL_HOME") or os.path.expanduser("~"))
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


def _server_group(item: pytest.Item) -> str | None:
    if "collab_lab" in getattr(item, "fixturenames", ()):
        return "collab"
    if item.get_closest_marker("browser"):
        return "browser"
    # a module whose tests share an expensive module fixture names its own group: on both workers
    # it would be built twice (the real notebooks' replay: 17 s)
    marker = item.get_closest_marker("xdist_group")
    if marker is not None:
        return str(marker.args[0] if marker.args else marker.kwargs.get("name", "")) or None
    return None


# Parallel runs (scripts/test: -n 2 --dist loadgroup) keep the tests that share a server in one
# worker: the stock browser tests share its one JupyterLab and Chromium (tests/browser_support.py),
# the collaboration tests the collaboration server (tests/collab_support.py). xdist's own loadgroup
# passes a test's group from the worker to the scheduler by appending "@group" to the test's id,
# which pytest 9.2's structured ids ignore (pytest-dev/pytest-xdist#1386): every group would be
# spread over both workers, each starting its own JupyterLab, Chromium and collaboration server.
# So each worker writes the groups it collected into the controller's session folder, and the
# scheduler below reads them; xdist's "@group" ids (older pytest) are still honoured.
GROUPS_FILES = "xdist-groups"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # the controller, per worker it starts
    node.workerinput["nbedit_groups_folder"] = str(SESSION_FOLDER / GROUPS_FILES)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    folder = SESSION_FOLDER / GROUPS_FILES

    class ServerGroups(LoadGroupScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # the workers wrote them before they reported their collection
                self.groups = {}
                for path in sorted(folder.glob("*.json")):
                    self.groups.update(json.loads(path.read_text(encoding="utf-8")))
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

    return ServerGroups(config, log)


def _write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder = getattr(config, "workerinput", {}).get("nbedit_groups_folder")
    if folder is None:
        return
    groups = {item.nodeid: group for item in items if (group := _server_group(item))}
    Path(folder).mkdir(exist_ok=True)
    name = Path(folder) / f"{config.workerinput['workerid']}.json"  # type: ignore[attr-defined]
    name.write_text(json.dumps(groups), encoding="utf-8")


# tryfirst: before xdist's own hook sends the worker's collection to the scheduler (the items are
# final by now, -k and -m applied)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _write_groups(session.config, session.items)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every hypothesis test runs the examples ``NBEDIT_PROPERTY_EXAMPLES`` asks for (see above)."""
    from hypothesis import settings

    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            group = _server_group(item)
            if group:
                item.add_marker(pytest.mark.xdist_group(group))
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


@pytest.fixture(autouse=True)
def _no_running_loop_left_by_playwright(request: pytest.FixtureRequest) -> Iterator[None]:
    """Playwright's sync API (the session's driver, tests/browser_support.py) runs its event loop in
    a greenlet of the main thread, so once a browser test has run, the thread looks as if a loop
    were running and ``asyncio.run`` refuses to start (the MCP tests). Any later test that does not
    drive the browser gets the thread without it; the driver gets it back afterwards."""
    import asyncio

    loop = asyncio._get_running_loop()
    if loop is None or "playwright_driver" in request.fixturenames:
        yield
        return
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(loop)


@pytest.fixture
def property_examples() -> Callable[[int], int]:
    """``property_examples(declared)``: how many rounds a randomised test that is not a hypothesis
    test runs (kills at random moments, concurrent writers), sized like the property tests."""
    return _property_examples


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
