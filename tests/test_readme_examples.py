"""Every magic, API and command-line example of README.md runs as written.

The examples are read from README.md itself (fenced blocks), so a merge that drops lines from
one (the ``%%edit`` example once lost its ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE``
lines: git read them as conflict markers) fails here. Each kind runs where a reader would run it:

* magic cells in a real IPython shell, through ``run_cell`` (input transformers included);
* Python blocks with ``exec`` in a fresh namespace, in a folder holding the files they name;
* shell lines with ``bash``, where ``nbedit`` is this checkout's command.

What the README leaves to the reader is filled in here and nowhere else: the sample files the
examples name (``src/app.py``, ``analysis.ipynb``, ``change.diff`` ...), the Python names
``text``/``old``/``new`` and the model's tool calls, and ``ID`` (an entry id from the history)
in shell lines. Every fenced block is either run or listed in ``NOT_RUN`` with the reason, so a
new example cannot go untested unnoticed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_jupyter_support

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

ipython = test_jupyter_support.ipython  # the shared real IPython shell

# blocks that are not examples to run, by their first line, with the reason
NOT_RUN = {
    "NbeditError": "the error tree (checked against nbedit.errors below)",
    "# %% nbedit cell 0 [code] id=1a2b3c": "a sample of the cell view's text, not a command",
    "nbedit/": "the package layout",
}
# shell lines that set up or run this very suite: not run from inside it
SETUP_COMMANDS = ("pip install -e .", "bash scripts/test")

APP = 'def greet(name):\n    return "hi " + name\n\n\ndef answer():\n    return 1\n'
UTIL = "def double(x):\n    return x * 2\n"


def blocks() -> list[tuple[int, str, str]]:
    """(line, language, body) of every fenced block of README.md."""
    found = []
    lines = README.read_text(encoding="utf-8").split("\n")
    index = 0
    while index < len(lines):
        opening = re.fullmatch(r"```(\w*)\s*", lines[index])
        if opening:
            end = lines.index("```", index + 1)
            found.append((index + 1, opening.group(1), "\n".join(lines[index + 1 : end]) + "\n"))
            index = end
        index += 1
    return found


def kind(language: str, body: str) -> str:
    first = body.split("\n", 1)[0]
    if first in NOT_RUN:
        return "not run"
    if first.startswith("%"):
        return "magic"
    if language == "python":
        return "python"
    if language == "bash":
        return "shell"
    return "unknown"


def of_kind(wanted: str) -> list[tuple[int, str]]:
    return [(line, body) for line, language, body in blocks() if kind(language, body) == wanted]


def make_project(root: Path) -> Path:
    """The files the README's examples name."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text(APP, encoding="utf-8")
    (root / "src" / "util.py").write_text(UTIL, encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Analysis"), nbformat.v4.new_code_cell(APP)]
    notebook.cells[0]["id"], notebook.cells[1]["id"] = "9f8e7d", "a1b2c3"
    nbformat.write(notebook, str(root / "analysis.ipynb"))
    (root / "change.diff").write_text(
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        '-    return "hi " + name\n+    return "hello " + name\n',
        encoding="utf-8",
    )
    (root / "change.patch").write_text(
        "--- a/src/util.py\n+++ b/src/util.py\n@@ -1,2 +1,2 @@\n def double(x):\n-    return x * 2\n+    return 2 * x\n",
        encoding="utf-8",
    )
    (root / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (root / "b.txt").write_text("one\n2\n", encoding="utf-8")
    return root


def test_every_block_is_run_or_says_why_not() -> None:
    kinds = {line: kind(language, body) for line, language, body in blocks()}
    assert "unknown" not in kinds.values(), {line: k for line, k in kinds.items() if k == "unknown"}
    assert sorted(set(kinds.values())) == ["magic", "not run", "python", "shell"]
    assert len(of_kind("magic")) == 3 and len(of_kind("python")) == 2 and len(of_kind("shell")) == 2


def test_the_edit_example_holds_its_search_replace_markers() -> None:
    (edit,) = [body for _, body in of_kind("magic") if body.startswith("%%edit")]
    assert re.search(r"^<<<<<<< SEARCH\n(.+\n)+=======\n(.+\n)+>>>>>>> REPLACE\n$", edit, re.MULTILINE), edit


# --- the magics ----------------------------------------------------------------------------------


def test_the_magic_examples_run_in_a_real_shell(
    ipython: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbedit.jupyter.review import ReviewWidget

    monkeypatch.chdir(make_project(tmp_path))
    monkeypatch.delenv("NBEDIT_SESSION", raising=False)
    load, edit, patch = (body for _, body in of_kind("magic"))
    try:
        results = [ipython.run_cell(cell) for cell in (load, edit)]
        assert all(result.success for result in results), [result.error_in_exec for result in results]
        preview = results[1].result
        assert isinstance(preview, ReviewWidget) and preview.status != "applied", preview
        assert '+    return f"hello {name}"' in preview.plan.diff  # the SEARCH/REPLACE block was read
        assert (tmp_path / "src" / "app.py").read_text() == APP  # a preview writes nothing
        result = ipython.run_cell(patch)
        assert result.success, result.error_in_exec
        assert result.result.status == "applied", result.result.plain_text()
        assert (tmp_path / "src" / "app.py").read_text() == APP.replace('"hi " + name', 'f"hello {name}"')
    finally:
        ipython.run_cell("%unload_ext nbedit")


def line_magic_examples() -> list[str]:
    """The ``%nbedit ...`` forms the README's prose gives (and ``%%edit?``/``%nbedit?``), every
    optional part both left out and given, ``[A|B]`` each way; placeholders in capitals stay."""
    spans = re.findall(r"`(%nbedit[^`]*|%%edit\?)`", README.read_text(encoding="utf-8"))
    forms: list[str] = []
    for span in dict.fromkeys(spans):
        expanded = [""]
        for literal, optional in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", span):
            choices = ["", *optional.split("|")] if optional else [""]
            expanded = [f"{done}{literal}{choice}" for done in expanded for choice in choices]
        forms.extend(" ".join(form.split()) for form in expanded)
    return list(dict.fromkeys(forms))


def test_the_line_magic_forms_of_the_prose_run(
    ipython: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbedit.storage.history import HistoryStore

    forms = line_magic_examples()
    assert {"%nbedit history", "%nbedit history --all", "%nbedit undo", "%nbedit restore ID --after"} <= set(
        forms
    )
    assert len([form for form in forms if form.startswith("%nbedit config")]) == 12
    monkeypatch.chdir(make_project(tmp_path))
    monkeypatch.delenv("NBEDIT_SESSION", raising=False)
    try:
        assert ipython.run_cell("%load_ext nbedit").success
        setup = (
            "%%edit src/app.py --yes\n<<<<<<< SEARCH\ndef answer():\n=======\ndef reply():\n>>>>>>> REPLACE\n"
        )
        assert ipython.run_cell(setup).success
        with HistoryStore(Path(os.environ["NBEDIT_HOME"])) as store:
            entry_id = store.entries()[0].id
        values = {"ID": entry_id, "NOTEBOOK": "analysis.ipynb", "DIR": ".", "F": "0.8"}
        # config last: it changes the options of every later magic in this shell
        for form in sorted(forms, key=lambda form: form.startswith("%nbedit config")):
            cell = " ".join(values.get(word, word) for word in form.split(" "))
            result = ipython.run_cell(cell)
            assert result.success, (cell, result.error_before_exec or result.error_in_exec)
            assert getattr(result.result, "status", None) != "error", (cell, result.result)  # a refusal shown
        assert "def reply():" in (tmp_path / "src" / "app.py").read_text()  # previews wrote nothing
    finally:
        ipython.run_cell("%unload_ext nbedit")


# --- the Python API --------------------------------------------------------------------------------


def test_the_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    (api, _) = (body for _, body in of_kind("python"))
    assert api.startswith("import nbedit\n")
    monkeypatch.chdir(make_project(tmp_path))
    monkeypatch.delenv("NBEDIT_SESSION", raising=False)
    namespace: dict[str, Any] = {
        "text": (tmp_path / "change.patch").read_text(),
        "old": '    return "hi " + name\n',
        "new": '    return f"hello {name}"\n',
    }
    exec(compile(api, "README.md (Python API)", "exec"), namespace)
    assert "src/app.py 2 exact 1.0" in capsys.readouterr().out  # the loop printed each hunk
    assert namespace["entry_id"] and namespace["result"].written == ("src/app.py",)
    # undo took back the latest entry (nbedit.patch's), restore(which="before") the first edit
    assert (tmp_path / "src" / "util.py").read_text() == UTIL
    assert (tmp_path / "src" / "app.py").read_text() == APP


def test_the_agents_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (_, agents) = (body for _, body in of_kind("python"))
    assert agents.startswith("from nbedit import Workspace\n")
    monkeypatch.chdir(make_project(tmp_path))
    (tmp_path / "app.py").write_text(UTIL, encoding="utf-8")
    namespace: dict[str, Any] = {
        "tool_use_block": {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "str_replace_based_edit_tool",
            "input": {"command": "view", "path": "app.py"},
        },
        "apply_patch_call": {
            "type": "apply_patch_call",
            "call_id": "call_1",
            "operation": {
                "type": "update_file",
                "path": "src/util.py",
                "diff": "@@ def double(x):\n-    return x * 2\n+    return x + x\n",
            },
        },
    }
    exec(compile(agents, "README.md (Let a model edit)", "exec"), namespace)
    assert namespace["result"]["is_error"] is False and "return x * 2" in namespace["result"]["content"]
    assert namespace["output"]["status"] == "completed", namespace["output"]
    assert (tmp_path / "src" / "util.py").read_text() == "def double(x):\n    return x + x\n"
    assert {schema["name"] for schema in namespace["functions"].schemas("openai")} >= {"edit", "patch"}
    assert namespace["text"].startswith("Error:")  # "..." is in no file: errors start with "Error:"
    assert (tmp_path / "app.py").read_text() == UTIL


def test_the_error_tree_is_the_real_one() -> None:
    import nbedit.errors as errors

    (tree,) = (body for _, _, body in blocks() if body.startswith("NbeditError\n"))
    parents: dict[int, type] = {}
    seen = 0
    for line in tree.splitlines():
        name_start = len(line) - len(line.lstrip("│├└─ "))
        names = line[name_start:].split("  ")[0]  # the names, then (after two spaces) their fields
        head, _, rest = names.partition(": ")
        cls = getattr(errors, head.strip())
        depth = name_start // 4
        assert issubclass(cls, parents.get(depth - 1, errors.NbeditError)), line
        parents[depth] = cls
        for child in filter(None, (part.strip() for part in rest.split(","))):
            assert issubclass(getattr(errors, child), cls), line
            seen += 1
        seen += 1
    assert seen > 20


# --- the command line --------------------------------------------------------------------------------


def shell_lines(body: str) -> list[str]:
    lines = []
    for line in body.splitlines():
        command = line.split("  #", 1)[0].strip() if not line.startswith("#") else ""
        for part in filter(None, (piece.strip() for piece in command.split("&&"))):
            if not part.startswith(SETUP_COMMANDS):
                lines.append(part)
    return lines


def run_shell(command: str, cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
        "NO_COLOR": "1",
    }
    environment.pop("NBEDIT_SESSION", None)
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A folder whose ``nbedit`` and ``python`` are this checkout's, run by this interpreter."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "nbedit").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nbedit "$@"\n')
    (folder / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for script in folder.iterdir():
        script.chmod(0o755)
    return folder


def test_the_command_line_examples_run(tmp_path: Path, bin_dir: Path) -> None:
    quick_start, cli = (body for _, body in of_kind("shell"))
    project = make_project(tmp_path / "project")
    commands = shell_lines(quick_start) + shell_lines(cli)
    assert commands[0] == "python -m nbedit demo" and commands[1].startswith("nbedit apply change.diff")
    entry_id = None
    for command in commands:
        if "ID" in command.split():
            if entry_id is None:
                listing = run_shell("nbedit history --json", project, bin_dir)
                assert listing.returncode == 0, listing.stderr
                entry_id = json.loads(listing.stdout)[0]["id"]
            command = " ".join(entry_id if word == "ID" else word for word in command.split(" "))
        stdin_note = "" if "mcp" not in command else " (stdin closed: the server ends)"
        completed = run_shell(command, project, bin_dir)
        report = f"{command}{stdin_note}\n{completed.stdout}\n{completed.stderr}"
        words = command.split()
        if words[1] in ("apply", "edit", "undo", "restore") and not {"--yes", "--dry-run"} & set(words):
            # it asks on a terminal; here there is none, so it previews, writes nothing and says so (1)
            assert completed.returncode == 1 and "preview only, nothing written" in completed.stderr, report
            if words[1] == "undo":  # the entry the listing named: the patch of src/util.py, taken back
                assert "+++ b/src/util.py" in completed.stdout and "this undoes history entry" in completed.stdout
            else:
                assert "+++ b/src/app.py" in completed.stdout, report
            continue
        if words[1] == "diff":  # like diff(1): 1 when the files differ
            assert completed.returncode == 1 and "-two\n+2\n" in completed.stdout, report
            continue
        assert completed.returncode == 0, report
        if command == "nbedit view analysis.ipynb":
            assert "# %% nbedit cell 1 [code] id=a1b2c3" in completed.stdout
    # previews wrote nothing; change.patch was applied, undone, then restored to its "after"
    assert (project / "src" / "app.py").read_text() == APP
    assert (project / "src" / "util.py").read_text() == "def double(x):\n    return 2 * x\n"
