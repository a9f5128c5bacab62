"""The suite writes nothing into the user's home (``tests/conftest.py`` sets the folders).

A run once left ``~/.ipython``, ``~/.jupyter`` and ``~/.local/share/jupyter`` behind. The check
here is exact even on a machine where other programs write to the real home meanwhile: real
processes (an IPython shell running the magics, a Jupyter kernel, the command line, Chromium) run
with the session's folders but with HOME pointing at an empty folder of their own, and that
folder must still be empty afterwards: nothing fell back to a path under HOME.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from home_folders import HOME_FOLDERS

REAL_HOME = Path(os.environ["NBEDIT_TESTS_REAL_HOME"])  # set by conftest.py
SESSION_FOLDER = Path(os.environ["NBEDIT_TESTS_SESSION_FOLDER"])

REPO = Path(__file__).resolve().parents[1]


def inside(path: str | Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def test_every_home_folder_of_the_session_is_temporary() -> None:
    from IPython.paths import get_ipython_dir
    from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir, jupyter_runtime_dir

    for name in HOME_FOLDERS:
        assert inside(os.environ[name], SESSION_FOLDER), name
    for folder in (get_ipython_dir(), jupyter_config_dir(), jupyter_data_dir(), jupyter_runtime_dir()):
        assert inside(folder, SESSION_FOLDER), folder
    assert not inside(SESSION_FOLDER, REAL_HOME)


def test_real_processes_leave_an_empty_home_empty(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n", encoding="utf-8")
    environment = {
        **os.environ,
        "HOME": str(home),
        "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
    }
    run = {"cwd": project, "env": environment, "capture_output": True, "text": True, "timeout": 180}

    # an IPython shell running the magics (IPython makes its profile folder on start)
    shell = (
        "from IPython.testing.globalipapp import get_ipython\n"
        "ip = get_ipython()\n"
        "assert ip.run_cell('%load_ext nbedit').success\n"
        "assert ip.run_cell('%%edit app.py --yes\\n<<<<<<< SEARCH\\nx = 1\\n=======\\nx = 2\\n>>>>>>> REPLACE\\n').success\n"
    )
    completed = subprocess.run([sys.executable, "-c", shell], **run)
    assert completed.returncode == 0, completed.stderr
    assert (project / "app.py").read_text() == "x = 2\n"

    # a real kernel (its connection file, the runtime folder) running the extension
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext nbedit\n%nbedit history")]
    (project / "run.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    kernel = "import nbclient, nbformat\nnbclient.execute(nbformat.read('run.ipynb', 4), cwd='.')\n"
    completed = subprocess.run([sys.executable, "-c", kernel], **run)
    assert completed.returncode == 0, completed.stderr

    # the command line, history on
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "edit", "app.py", "--old", "x = 2", "--new", "x = 3", "--yes"], **run
    )
    assert completed.returncode == 0, completed.stderr

    chromium = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if chromium:
        arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "data:text/html,<p>hi</p>"]
        completed = subprocess.run([chromium, *arguments], **run)
        assert "<p>hi</p>" in completed.stdout, completed.stderr

    assert sorted(path.relative_to(home).as_posix() for path in home.rglob("*")) == []
