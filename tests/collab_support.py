"""A real Jupyter server with real-time collaboration (``jupyter-collaboration``), for the tests.

Collaboration changes how every tab of the server works (documents become shared rooms),
so it must not leak into the stock browser tests: it lives in a virtual environment of its
own, ``.venv-collab`` (``scripts/test`` makes it and exports its interpreter as
``NBEDIT_COLLAB_PYTHON``). The tests run in the main environment and start the *server* with
that interpreter; the kernels it starts come from the same environment (its kernelspec).

Availability policy, as for the browser tests: on CI a missing ``NBEDIT_COLLAB_PYTHON`` (or
one without jupyter-collaboration) FAILS; elsewhere the tests SKIP and say how to enable them.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import LabServer, on_ci, start_lab

HOW_TO_ENABLE = (
    "the collaboration tests need a virtual environment with jupyter-collaboration: run "
    "`bash scripts/test` (it creates .venv-collab) or point NBEDIT_COLLAB_PYTHON at an interpreter "
    "that has this project, jupyterlab and jupyter-collaboration installed"
)
TEST_EXTENSION = "tests.live_collab_server"


def unavailable(reason: str) -> None:
    message = f"{reason}; {HOW_TO_ENABLE}"
    if on_ci():
        pytest.fail(f"collaboration tests cannot run on CI: {message}", pytrace=False)
    pytest.skip(message)


def collab_python() -> str:
    python = os.environ.get("NBEDIT_COLLAB_PYTHON", "")
    if not python:
        unavailable("NBEDIT_COLLAB_PYTHON is not set")
    if not os.access(python, os.X_OK):
        unavailable(f"NBEDIT_COLLAB_PYTHON={python} is not an executable")
    probe = subprocess.run(
        [python, "-c", "import jupyter_collaboration, jupyter_server_ydoc, jupyterlab"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        unavailable(f"{python} cannot import jupyter_collaboration: {probe.stderr.strip()[-300:]}")
    return python


def disable_autosave(lab: LabServer) -> None:
    """Tabs opened from now on keep typing unsaved until Ctrl+S (the room then never autosaves)."""
    settings = lab.root.parent / "home" / "jupyter-config" / "lab" / "user-settings" / "@jupyterlab"
    folder = settings / "docmanager-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}), encoding="utf-8")


# One collaboration server serves the session (the room tests and the browser tests; each works on
# files of its own names): starting it costs 5-10 s, and it is stopped once at the end.
@pytest.fixture(scope="session")
def collab_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    python = collab_python()
    base = tmp_path_factory.mktemp("jupyterlab-collab")
    try:
        server = start_lab(
            base,
            python=python,
            extra_arguments=(
                f"--ServerApp.jpserver_extensions={TEST_EXTENSION}=True",
                "--YDocExtension.document_cleanup_delay=600",
            ),
        )
    except RuntimeError as error:
        unavailable(str(error))
        raise
    try:
        yield server
    finally:
        # the server's own shutdown stops the rooms at once; a SIGTERM makes it wait 15 s for them
        with contextlib.suppress(OSError):
            request = urllib.request.Request(f"{server.url}/api/shutdown", data=b"", method="POST")
            urllib.request.urlopen(request, timeout=10).close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(timeout=10)
        server.stop()


def call(lab: LabServer, name: str, body: dict[str, Any] | None = None, timeout: float = 30) -> Any:
    """POST (GET when ``body`` is None) to the test extension; the decoded JSON reply."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{lab.url}/nbedit-test/collab/{name}",
        data=data,
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


def relative(lab: LabServer, path: Path) -> str:
    return path.relative_to(lab.root).as_posix()
