"""A real JupyterLab in a headless Chromium, for the end-to-end tests.

Why the real thing: the review widget is an ipywidgets view rendered by
JupyterLab's widget manager, and a click travels page -> comm -> kernel ->
``Workspace.apply`` -> disk. Only a browser proves that chain; the unit tests
already cover each piece alone.

The harness keeps the run hermetic and quiet:

* the server runs with HOME, JUPYTER_CONFIG_DIR, JUPYTER_DATA_DIR,
  JUPYTER_RUNTIME_DIR and NBEDIT_HOME inside a temporary folder, so the
  user's settings, workspaces and history are never read or written; the
  virtual environment's kernelspec and lab extensions (ipywidgets' manager
  ships in ``jupyterlab_widgets``) stay visible because Jupyter always searches
  ``sys.prefix``;
* the announcements/news and extension-manager plugins are disabled and the
  page may only talk to 127.0.0.1: the browser sends every other request to a
  proxy that is not there (``LOCAL_ONLY``), so it fails at once, no popup covers
  the notebook and nothing leaves the machine. Not a ``route`` handler: that runs
  each request of the page through this process, and a test blocked in a
  synchronous call (``Workspace.apply``, a CLI run) then stalls every request of
  the page until it returns (the live tabs' reply waited 3 s for its file's
  ``contents.get`` each time);
* the app is exposed as ``window.jupyterapp`` so tests drive JupyterLab's own
  commands (run all cells, change theme) instead of hunting menus by pixel.

Availability policy: on CI (``CI`` set to a true value) a missing Chromium or
a server that does not start FAILS the browser tests; elsewhere they SKIP with
a message that says how to enable them. Server and browser are always stopped,
whatever the tests did.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
ARTIFACTS = REPOSITORY / "test-artifacts"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGUMENTS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-extensions",
]
# every request that is not to this machine goes to port 9 of 127.0.0.1, where nothing listens:
# it fails at once; Chromium never sends loopback requests through a proxy
LOCAL_ONLY = {"server": "http://127.0.0.1:9", "bypass": "127.0.0.1,localhost"}
SERVER_START_TIMEOUT = 90.0  # seconds; a cold JupyterLab on a busy 2-core machine takes ~10-20
DISABLED_LAB_PLUGINS = [
    "@jupyterlab/apputils-extension:announcements",
    "@jupyterlab/extensionmanager-extension",
]
HOW_TO_ENABLE = (
    "the browser tests need Chromium and JupyterLab: install Chromium (Debian/Ubuntu: "
    "`apt-get install chromium`; or point NBEDIT_CHROMIUM at a Chrome/Chromium binary) and the test "
    "extras (`pip install -e '.[test]'`). Playwright's own browser download is not needed"
)


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def unavailable(reason: str) -> None:
    """Fail on CI (the tests must run there), skip elsewhere with how to enable them."""
    message = f"{reason}; {HOW_TO_ENABLE}"
    if on_ci():
        pytest.fail(f"browser tests cannot run on CI: {message}", pytrace=False)
    pytest.skip(message)


def find_chromium() -> str | None:
    configured = os.environ.get("NBEDIT_CHROMIUM")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LabServer:
    """A running JupyterLab: its notebook folder, its URL, its process and log."""

    root: Path
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    nbedit_home: Path  # where the kernels' history lives

    def log_tail(self, characters: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-characters:]
        except OSError:
            return "(no log)"

    def shutdown_kernels(self) -> None:
        """Stop every kernel (between tests: each test opens a notebook with a kernel of its own)."""
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=5) as response:
                kernels = json.load(response)
            for kernel in kernels:
                request = urllib.request.Request(f"{self.url}/api/kernels/{kernel['id']}", method="DELETE")
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(request, timeout=10).close()

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        # the server runs in its own process group, so its kernels go down with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)


def _write_lab_config(config_dir: Path) -> None:
    labconfig = config_dir / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in DISABLED_LAB_PLUGINS}}), encoding="utf-8"
    )
    settings = config_dir / "lab" / "user-settings" / "@jupyterlab"
    (settings / "apputils-extension").mkdir(parents=True, exist_ok=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8"
    )
    # no autosave: a test saves with Ctrl+S when it means to. On a loaded machine a test outlives the
    # two-minute autosave, which could save a tab while nbedit writes its file and raise JupyterLab's
    # "File Changed" dialog in the middle of an unrelated step.
    (settings / "docmanager-extension").mkdir(parents=True, exist_ok=True)
    (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
        json.dumps({"autosave": False}), encoding="utf-8"
    )


def start_lab(base: Path, python: str = sys.executable, extra_arguments: tuple[str, ...] = ()) -> LabServer:
    """Start JupyterLab serving ``base / "lab"``; raise RuntimeError with the log if it never answers.

    ``python`` is the interpreter whose environment runs the server (and, through its
    kernelspec, the kernels); ``extra_arguments`` go to ``jupyter lab`` after ours.
    """
    root = base / "lab"
    home = base / "home"
    for folder in (root, home):
        folder.mkdir(parents=True, exist_ok=True)
    config_dir = home / "jupyter-config"
    _write_lab_config(config_dir)
    environment = dict(os.environ)
    environment.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_DATA_DIR=str(home / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter-runtime"),
        NBEDIT_HOME=str(home / "nbedit"),
        PYTHONUNBUFFERED="1",
    )
    # kernels must import this checkout even if it is not installed in the environment
    environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPOSITORY), environment.get("PYTHONPATH", "")) if part
    )
    environment.pop("JUPYTER_PATH", None)
    if python != sys.executable:  # `jupyter lab` dispatches to the `jupyter-lab` found first on PATH
        environment["PATH"] = os.pathsep.join((str(Path(python).parent), environment.get("PATH", "")))
    port = free_port()
    command = [
        python,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.token=",
        "--ServerApp.password=",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.extension_manager=readonly",
        "--ServerApp.open_browser=False",
        *extra_arguments,
    ]
    log = base / "jupyterlab.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=environment,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LabServer(
        root=root, url=f"http://127.0.0.1:{port}", process=process, log=log, nbedit_home=home / "nbedit"
    )
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/api/status", timeout=2) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_TIMEOUT:.0f} s:\n{server.log_tail()}")


# ---------------------------------------------------------------------- fixtures


# One JupyterLab and one Chromium serve every stock browser test of the session (each test gets a
# fresh browser context and page, and its kernels are shut down after it): starting them costs
# some 15-30 s on a loaded 2-core machine, once instead of once per module. Each test works on
# files of its own names in ``lab.root``; history entries of earlier tests are in ``lab.nbedit_home``.


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        unavailable("no Chromium found (looked for /usr/bin/chromium, $NBEDIT_CHROMIUM and chromium on PATH)")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Iterator[LabServer]:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        unavailable("JupyterLab is not installed in this environment")
    base = tmp_path_factory.mktemp("jupyterlab")
    try:
        server = start_lab(base)
    except RuntimeError as error:
        unavailable(str(error))
        raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def playwright_driver() -> Iterator[Any]:
    """Playwright's sync driver, once per session: it cannot be started again while it runs, so
    every browser of the session (the stock one below, the collaboration tests') comes from it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install playwright; no browser download)")
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(chromium_path: str, lab: LabServer, playwright_driver: Any) -> Iterator[Any]:
    try:
        launched = playwright_driver.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGUMENTS, proxy=LOCAL_ONLY
        )
    except Exception as error:  # playwright raises its own Error type for a broken binary
        unavailable(f"Chromium at {chromium_path} did not start: {error}")
        raise
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def page(browser: Any, lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, device_scale_factor=1)
    context.set_default_timeout(30_000)
    opened = context.new_page()
    messages: list[str] = []
    opened.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    opened.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
    failures_before = request.session.testsfailed
    try:
        yield opened
    finally:
        if request.session.testsfailed > failures_before:
            ARTIFACTS.mkdir(exist_ok=True)
            with contextlib.suppress(Exception):
                opened.screenshot(path=str(ARTIFACTS / f"failure-{request.node.name}.png"), full_page=True)
            (ARTIFACTS / f"failure-{request.node.name}.console.txt").write_text("\n".join(messages))
        context.close()
        lab.shutdown_kernels()


# ---------------------------------------------------------------------- notebooks and the page


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    """Write a minimal nbformat 4 notebook; ``cells`` are (cell_type, source) pairs."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for kind, source in cells:
        cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
        notebook.cells.append(cell)
    nbformat.write(notebook, str(path))


def open_notebook(page: Any, lab: LabServer, name: str) -> None:
    """Open ``name`` in a fresh workspace and wait until its kernel is idle."""
    page.goto(f"{lab.url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    wait_kernel_idle(page, timeout=90_000)


def wait_kernel_idle(page: Any, timeout: float = 60_000) -> None:
    page.wait_for_function(
        """() => {
            const widget = window.jupyterapp.shell.currentWidget;
            const session = widget && widget.sessionContext;
            const kernel = session && session.session && session.session.kernel;
            return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
        }""",
        timeout=timeout,
    )


def run_all_cells(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # every code cell shows a number once executed ("[*]" while queued or running)
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=90_000,
    )
    wait_kernel_idle(page)


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme ('JupyterLab Light' or 'JupyterLab Dark') and wait until it is applied."""
    page.evaluate("theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    light = "true" if "Light" in theme else "false"
    page.wait_for_function(
        f"() => document.body.dataset.jpThemeLight === '{light}'"
        f" && document.body.dataset.jpThemeName === {json.dumps(theme)}",
        timeout=30_000,
    )
    page.wait_for_timeout(500)  # let the theme's stylesheet settle before screenshots


def cell_outputs_text(page: Any) -> str:
    return str(
        page.evaluate(
            "() => [...document.querySelectorAll('.jp-OutputArea')].map(e => e.innerText).join('\\n')"
        )
    )
