"""The ``nbedit`` command, run as a real process on real files.

Every refusal, failure, dry run and unconfirmed preview must leave the files
byte-identical; exit codes are 0 ok, 1 refused/failed, 2 usage.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(
    *arguments: str, cwd: Path, stdin: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit.cli", *arguments],
        cwd=cwd,
        input=data if data is not None else b"",
        capture_output=True,
        env=environment,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        completed.args,
        completed.returncode,
        completed.stdout.decode("utf-8"),
        completed.stderr.decode("utf-8"),
    )


PATCH = (
    "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n import os\n-DEBUG = False\n+DEBUG = True\n print(DEBUG)\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_bytes(b"import os\nDEBUG = False\nprint(DEBUG)\n")
    (tmp_path / "change.diff").write_text(PATCH, encoding="utf-8")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


# --- apply ---------------------------------------------------------------------------------------


def test_apply_yes_writes_and_shows_the_diff(project: Path) -> None:
    result = run("apply", "change.diff", "--yes", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "app.py").read_bytes() == b"import os\nDEBUG = True\nprint(DEBUG)\n"
    # not a terminal: the header line, the plain unified diff, then what was written
    assert result.stdout.startswith("unified diff: 1 file, +1 -1\n\n" + PATCH + "\napplied: wrote app.py")


def test_piped_preview_is_plain_text_without_colour_codes(project: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    environment.update(PYTHONPATH=str(REPO), TERM="xterm-256color")
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit.cli", "apply", "change.diff", "--dry-run"],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "\x1b[" not in completed.stdout
    assert "-DEBUG = False\n+DEBUG = True\n" in completed.stdout


def test_piped_preview_names_offsets_and_tiers(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"".join(b"line %d\n" % number for number in range(1, 31)))
    # the hunk claims line 3 but its context is at line 23
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 22\n-line 23\n+line twenty-three\n line 24\n"
    result = run("apply", "-", "--yes", cwd=tmp_path, stdin=patch)
    assert result.returncode == 0, result.stderr
    assert "ℹ f.txt: hunk 1 (line 22): applied 20 lines below where the diff said" in result.stdout
    assert "-line 23\n+line twenty-three\n" in result.stdout
    assert b"line twenty-three\n" in (tmp_path / "f.txt").read_bytes()


def test_apply_without_a_terminal_only_previews(project: Path) -> None:
    before = snapshot(project)
    result = run("apply", "change.diff", cwd=project)
    assert result.returncode == 1
    assert "+DEBUG = True" in result.stdout
    assert "re-run with --yes" in result.stderr
    assert snapshot(project) == before


def test_dry_run_never_writes_even_with_yes(project: Path) -> None:
    before = snapshot(project)
    result = run("apply", "change.diff", "--dry-run", "--yes", cwd=project)
    assert result.returncode == 0
    assert "dry run: nothing written" in result.stdout
    assert snapshot(project) == before


def test_patch_from_stdin(project: Path) -> None:
    result = run("apply", "-", "--yes", cwd=project, stdin=PATCH)
    assert result.returncode == 0, result.stderr
    assert b"DEBUG = True" in (project / "app.py").read_bytes()


def test_patch_from_stdin_without_yes_previews(project: Path) -> None:
    before = snapshot(project)
    result = run("apply", cwd=project, stdin=PATCH)
    assert result.returncode == 1 and "re-run with --yes" in result.stderr
    assert snapshot(project) == before


def test_root_option_confines_paths(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = run("apply", str(project / "change.diff"), "--root", str(project), "--yes", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert b"DEBUG = True" in (project / "app.py").read_bytes()
    escape = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n"
    before = snapshot(project)
    refused = run("apply", "-", "--root", str(project), "--yes", cwd=elsewhere, stdin=escape)
    assert refused.returncode == 1 and "OutsideWorkspace" in refused.stderr
    assert snapshot(project) == before
    assert not (project.parent / "outside.txt").exists()


def test_no_match_is_refused_with_candidates(project: Path) -> None:
    before = snapshot(project)
    patch = "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n import os\n-DEBUG = Flase\n+DEBUG = True\n print(DEBUG)\n"
    result = run("apply", "-", "--yes", "--exact", cwd=project, stdin=patch)
    assert result.returncode == 1
    assert "NoMatch" in result.stderr and "app.py" in result.stderr
    assert snapshot(project) == before


def test_ambiguous_edit_is_refused_with_locations(project: Path) -> None:
    (project / "twice.py").write_bytes(b"x = 1\ny = 2\nx = 1\n")
    before = snapshot(project)
    result = run("edit", "twice.py", "--old", "x = 1", "--new", "x = 3", "--yes", cwd=project)
    assert result.returncode == 1
    assert "AmbiguousMatch" in result.stderr
    assert "line 1, column 1" in result.stderr and "line 3, column 1" in result.stderr
    assert snapshot(project) == before


def test_unparseable_patch_reports_line_and_hint(project: Path) -> None:
    before = snapshot(project)
    result = run(
        "apply", "-", "--yes", cwd=project, stdin="*** Begin Patch\n*** Frobnicate File: x\n*** End Patch\n"
    )
    assert result.returncode == 1
    assert "PatchSyntaxError" in result.stderr and "line: 2" in result.stderr
    assert snapshot(project) == before


def test_non_exact_match_is_flagged_and_exact_refuses_it(project: Path) -> None:
    (project / "quote.py").write_bytes("msg = “hi”\n".encode())
    block = 'quote.py\n<<<<<<< SEARCH\nmsg = "hi"\n=======\nmsg = "bye"\n>>>>>>> REPLACE\n'
    before = snapshot(project)
    refused = run("apply", "-", "--yes", "--exact", cwd=project, stdin=block)
    assert refused.returncode == 1 and "NoMatch" in refused.stderr
    assert snapshot(project) == before
    result = run("apply", "-", "--yes", cwd=project, stdin=block)
    assert result.returncode == 0, result.stderr
    assert "⚠" in result.stdout and "unicode-punctuation" in result.stdout


def test_already_applied_exits_zero_and_writes_nothing(project: Path) -> None:
    assert run("apply", "change.diff", "--yes", cwd=project).returncode == 0
    before = snapshot(project)
    again = run("apply", "change.diff", "--yes", cwd=project)
    assert again.returncode == 0 and "already applied" in again.stdout
    assert snapshot(project) == before


def test_new_file_refused_without_overwrite(project: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: app.py\n+replaced\n*** End Patch\n"
    before = snapshot(project)
    refused = run("apply", "-", "--yes", cwd=project, stdin=patch)
    assert refused.returncode == 1 and "FileExists" in refused.stderr
    assert snapshot(project) == before
    allowed = run("apply", "-", "--yes", "--overwrite", cwd=project, stdin=patch)
    assert allowed.returncode == 0, allowed.stderr
    assert (project / "app.py").read_bytes() == b"replaced\n"


def test_history_is_recorded_unless_disabled(project: Path, nbedit_home: Path) -> None:
    recorded = run("apply", "change.diff", "--yes", cwd=project)
    assert "history entry" in recorded.stdout
    (project / "app.py").write_bytes(b"import os\nDEBUG = False\nprint(DEBUG)\n")
    silent = run("apply", "change.diff", "--yes", "--no-history", cwd=project)
    assert silent.returncode == 0 and "history entry" not in silent.stdout


# --- edit ----------------------------------------------------------------------------------------


def test_edit_old_new(project: Path) -> None:
    result = run("edit", "app.py", "--old", "False", "--new", "None", "--yes", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "app.py").read_bytes() == b"import os\nDEBUG = None\nprint(DEBUG)\n"


def test_edit_from_files_keeps_crlf_and_multiline_text(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (tmp_path / "old.txt").write_bytes(b"one\r\ntwo\r\n")
    (tmp_path / "new.txt").write_bytes(b"one\r\n2\r\n")
    result = run("edit", "w.txt", "--old-file", "old.txt", "--new-file", "new.txt", "--yes", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


def test_edit_replace_all(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\nx = 1\n")
    result = run("edit", "a.py", "--old", "x = 1", "--new", "x = 2", "--replace-all", "--yes", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.py").read_bytes() == b"x = 2\nx = 2\n"


def test_edit_missing_file_fails_cleanly(tmp_path: Path) -> None:
    result = run("edit", "nope.py", "--old", "a", "--new", "b", "--yes", cwd=tmp_path)
    assert result.returncode == 1
    assert "FileMissing" in result.stderr or "does not exist" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- usage errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        (),
        ("frobnicate",),
        ("apply", "missing.diff"),
        ("apply", "change.diff", "--threshold", "1.5"),
        ("apply", "change.diff", "--threshold", "high"),
        ("edit", "app.py", "--new", "x"),
        ("edit", "app.py", "--old", "a", "--old-file", "f", "--new", "x"),
        ("edit", "app.py", "--old-file", "missing.txt", "--new", "x"),
        ("diff", "app.py"),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(project: Path, arguments: tuple[str, ...]) -> None:
    before = snapshot(project)
    result = run(*arguments, cwd=project)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "usage:" in result.stderr
    assert snapshot(project) == before


def test_help_lists_the_subcommands(tmp_path: Path) -> None:
    result = run("--help", cwd=tmp_path)
    assert result.returncode == 0
    for command in ("apply", "edit", "diff", "view", "history", "show", "undo", "restore"):
        assert command in result.stdout


# --- diff and view -------------------------------------------------------------------------------


def test_diff_exit_codes_like_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\n")
    (tmp_path / "b.txt").write_bytes(b"one\nTWO\n")
    (tmp_path / "c.txt").write_bytes(b"one\ntwo\n")
    same = run("diff", "a.txt", "c.txt", cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, "")
    different = run("diff", "a.txt", "b.txt", cwd=tmp_path)
    assert different.returncode == 1
    assert different.stdout == "--- a.txt\n+++ b.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    missing = run("diff", "a.txt", "nope.txt", cwd=tmp_path)
    assert missing.returncode == 2 and "nope.txt" in missing.stderr


def test_view_prints_a_text_file_as_is(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"hello\nworld\n")
    result = run("view", "a.txt", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "hello\nworld\n")


def test_view_of_a_missing_file_fails(tmp_path: Path) -> None:
    result = run("view", "nope.ipynb", cwd=tmp_path)
    assert result.returncode == 1 and "nope.ipynb" in result.stderr


# --- the confirmation prompt on a real terminal ----------------------------------------------------


def _run_on_terminal(
    arguments: list[str],
    cwd: Path,
    answer: bytes,
    prompt: bytes = b"Apply? [y/N]",
    *,
    meanwhile: Callable[[], object] | None = None,
    environment: dict[str, str] | None = None,
) -> tuple[int, str]:
    """``nbedit ARGUMENTS`` on a pseudo-terminal: at ``prompt``, run ``meanwhile`` (something that
    happens while the question is on screen), then type ``answer``."""
    import pty
    import select

    primary, secondary = pty.openpty()
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "TERM": "dumb", **(environment or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "nbedit.cli", *arguments],
        cwd=cwd,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=environment,
    )
    os.close(secondary)
    output = b""
    answered = False
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            process.kill()
            raise AssertionError(f"no output from the CLI; so far: {output!r}")
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if not answered and prompt in output:
            if meanwhile is not None:
                meanwhile()
            os.write(primary, answer)
            answered = True
    os.close(primary)
    assert answered or meanwhile is None, output
    return process.wait(timeout=60), output.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_terminal_prompt_yes_applies(project: Path) -> None:
    code, output = _run_on_terminal(["apply", "change.diff"], project, b"y\n")
    assert code == 0, output
    assert "Apply? [y/N]" in output
    # a terminal gets the numbered rows (old and new line numbers, then the marker)
    assert re.search(r"2 +- DEBUG = False", output) and re.search(r"2 \+ DEBUG = True", output)
    assert b"DEBUG = True" in (project / "app.py").read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_terminal_prompt_default_is_no(project: Path) -> None:
    before = snapshot(project)
    code, output = _run_on_terminal(["apply", "change.diff"], project, b"\n")
    assert code == 1, output
    assert "not applied" in output
    assert snapshot(project) == before


# --- startup cost ----------------------------------------------------------------------------------


def test_apply_does_not_import_the_jupyter_stack(project: Path) -> None:
    probe = (
        "import sys\n"
        "from nbedit.cli import main\n"
        "code = main(['apply', 'change.diff', '--yes'])\n"
        "heavy = sorted(name for name in ('IPython', 'ipywidgets', 'nbformat', 'ipykernel') if name in sys.modules)\n"
        "print('HEAVY', heavy, code)\n"
        "print('PIPED', sorted(name for name in ('rich', 'nbedit.render.rows') if name in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert "HEAVY [] 0" in result.stdout, result.stdout + result.stderr
    # stdout is a pipe here: the plain preview needs neither rich nor the row builder
    assert "PIPED []" in result.stdout, result.stdout + result.stderr


def test_help_does_not_import_rich(tmp_path: Path) -> None:
    probe = (
        "import sys\nfrom nbedit.cli import build_parser\nbuild_parser()\n"
        "print('LOADED', sorted(n for n in ('rich', 'IPython', 'ipywidgets', 'nbformat') if n in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert "LOADED []" in result.stdout, result.stdout + result.stderr


def test_python_dash_m_nbedit_passes_arguments_to_the_cli(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nbedit", "apply", "change.diff", "--yes"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert b"DEBUG = True" in (project / "app.py").read_bytes()


def _notebook(path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("x = 1\ny = 2")]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"c{index}"
    nbformat.write(notebook, path)


def test_view_prints_the_cell_view_of_a_notebook(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb")
    result = run("view", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "# %% nbedit cell 0 [code] id=c0\nx = 1\n" in result.stdout
    assert '"cells"' not in result.stdout


def test_edit_a_notebook_cell_by_id_and_by_index(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb")
    before = snapshot(tmp_path)
    ambiguous = run("edit", "nb.ipynb", "--old", "x = 1", "--new", "x = 5", "--yes", cwd=tmp_path)
    assert ambiguous.returncode == 1 and "AmbiguousMatch" in ambiguous.stderr
    assert snapshot(tmp_path) == before
    by_id = run("edit", "nb.ipynb", "--old", "x = 1", "--new", "x = 5", "--cell", "c1", "--yes", cwd=tmp_path)
    assert by_id.returncode == 0, by_id.stderr
    assert "c1" in by_id.stdout
    by_index = run(
        "edit", "nb.ipynb", "--old", "x = 1", "--new", "x = 7", "--cell", "0", "--yes", cwd=tmp_path
    )
    assert by_index.returncode == 0, by_index.stderr
    import nbformat

    cells = nbformat.read(tmp_path / "nb.ipynb", as_version=4).cells
    assert [cell.source for cell in cells] == ["x = 7", "x = 5\ny = 2"]


# --- history, show, undo, restore -------------------------------------------------------------------


def test_history_show_undo_restore_round_trip(tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_bytes(b"a = 1\n")
    assert run("edit", "t.py", "--old", "a = 1", "--new", "a = 2", "--yes", cwd=tmp_path).returncode == 0
    assert run("edit", "t.py", "--old", "a = 2", "--new", "a = 3", "--yes", cwd=tmp_path).returncode == 0
    listed = run("history", cwd=tmp_path)
    assert listed.returncode == 0
    ids = re.findall(r"\be\d{8}\b", listed.stdout)
    assert len(ids) == 2 and "cli" in listed.stdout
    first = ids[-1]  # newest first
    shown = run("show", first, cwd=tmp_path)
    assert (shown.returncode, shown.stdout) == (0, "--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n")
    undone = run("undo", "--yes", cwd=tmp_path)
    assert undone.returncode == 0 and "undone: wrote t.py" in undone.stdout
    assert target.read_bytes() == b"a = 2\n"
    restored = run("restore", first, "--yes", cwd=tmp_path)
    assert restored.returncode == 0
    assert target.read_bytes() == b"a = 1\n"
    assert run("restore", first, "--after", "--yes", cwd=tmp_path).returncode == 0
    assert target.read_bytes() == b"a = 2\n"
    assert "undoes" in run("history", cwd=tmp_path).stdout


def test_undo_with_nothing_recorded_fails_readably(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_bytes(b"a = 1\n")
    assert (
        run("edit", "t.py", "--old", "1", "--new", "2", "--yes", "--no-history", cwd=tmp_path).returncode == 0
    )
    result = run("undo", cwd=tmp_path)
    assert result.returncode == 1 and "NothingToUndo" in result.stderr
    # an empty history is not "every edit is already undone"
    assert "no recorded edits" in result.stderr and "already undone" not in result.stderr
    assert "nbedit history --all" in result.stderr and "all_sessions" not in result.stderr
    assert (tmp_path / "t.py").read_bytes() == b"a = 2\n"
    empty = run("history", cwd=tmp_path)
    assert empty.returncode == 0 and "no edits recorded" in empty.stdout


def test_undo_refuses_when_the_file_changed_since_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_bytes(b"a = 1\n")
    assert run("edit", "t.py", "--old", "1", "--new", "2", "--yes", cwd=tmp_path).returncode == 0
    target.write_bytes(b"a = 2\nedited by hand\n")
    refused = run("undo", "--yes", cwd=tmp_path)
    assert refused.returncode == 1
    assert "--force" in refused.stderr and "force=True" not in refused.stderr
    assert target.read_bytes() == b"a = 2\nedited by hand\n"
    forced = run("undo", "--force", "--yes", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert target.read_bytes() == b"a = 1\n"


def test_show_unknown_id_fails(tmp_path: Path) -> None:
    result = run("show", "e99999999", cwd=tmp_path)
    assert result.returncode == 1 and "e99999999" in result.stderr


def test_history_path_filter_and_all_sessions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a\n")
    (tmp_path / "b.txt").write_bytes(b"b\n")
    assert run("edit", "a.txt", "--old", "a", "--new", "A", "--yes", cwd=tmp_path).returncode == 0
    assert run("edit", "b.txt", "--old", "b", "--new", "B", "--yes", cwd=tmp_path).returncode == 0
    only_a = run("history", "--path", "a.txt", cwd=tmp_path)
    assert "a.txt" in only_a.stdout and "b.txt" not in only_a.stdout
    other_session = run("history", cwd=tmp_path, env={"NBEDIT_SESSION": "someone-else"})
    assert "no edits recorded" in other_session.stdout
    everything = run("history", "--all", cwd=tmp_path, env={"NBEDIT_SESSION": "someone-else"})
    assert "a.txt" in everything.stdout and "b.txt" in everything.stdout


# --- undo and restore preview and ask like apply ----------------------------------------------------


def _two_edits(tmp_path: Path) -> tuple[Path, str, str]:
    target = tmp_path / "t.py"
    target.write_bytes(b"a = 1\nb = 1\n")
    assert run("edit", "t.py", "--old", "a = 1", "--new", "a = 2", "--yes", cwd=tmp_path).returncode == 0
    assert run("edit", "t.py", "--old", "b = 1", "--new", "b = 2", "--yes", cwd=tmp_path).returncode == 0
    newest, oldest = re.findall(r"\be\d{8}\b", run("history", cwd=tmp_path).stdout)
    return target, oldest, newest


def test_undo_without_a_terminal_or_yes_only_previews(tmp_path: Path) -> None:
    target, _, newest = _two_edits(tmp_path)
    before = snapshot(tmp_path)
    preview = run("undo", cwd=tmp_path)
    assert preview.returncode == 1 and "re-run with --yes" in preview.stderr
    assert "-b = 2" in preview.stdout and "+b = 1" in preview.stdout and newest in preview.stdout
    dry = run("undo", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "dry run: nothing written" in dry.stdout and "-b = 2" in dry.stdout
    assert snapshot(tmp_path) == before
    assert run("undo", "--yes", cwd=tmp_path).returncode == 0
    assert target.read_bytes() == b"a = 2\nb = 1\n"


def test_restore_without_a_terminal_or_yes_only_previews(tmp_path: Path) -> None:
    _, oldest, _ = _two_edits(tmp_path)
    before = snapshot(tmp_path)
    preview = run("restore", oldest, cwd=tmp_path)
    assert preview.returncode == 1 and "re-run with --yes" in preview.stderr
    assert run("restore", oldest, "--dry-run", cwd=tmp_path).returncode == 0
    assert snapshot(tmp_path) == before


def test_restore_says_which_later_entries_it_discards(tmp_path: Path) -> None:
    target, oldest, newest = _two_edits(tmp_path)
    dry = run("restore", oldest, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert f"later history entries to these files: {newest}" in dry.stdout
    assert f"later history entries changed in this file: {newest}" in dry.stdout  # the file's note
    # restoring the state after the newest entry discards nothing later
    quiet = run("restore", newest, "--after", "--dry-run", cwd=tmp_path)
    assert "later history entries" not in quiet.stdout
    assert target.read_bytes() == b"a = 2\nb = 2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_undo_asks_on_a_terminal(tmp_path: Path) -> None:
    target, _, _ = _two_edits(tmp_path)
    code, output = _run_on_terminal(["undo"], tmp_path, b"n\n", prompt=b"Undo? [y/N]")
    assert code == 1 and "not undone; nothing written" in output
    assert target.read_bytes() == b"a = 2\nb = 2\n"
    code, output = _run_on_terminal(["undo"], tmp_path, b"y\n", prompt=b"Undo? [y/N]")
    assert code == 0 and "undone: wrote t.py" in output, output
    assert target.read_bytes() == b"a = 2\nb = 1\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_restore_asks_on_a_terminal(tmp_path: Path) -> None:
    target, oldest, newest = _two_edits(tmp_path)
    code, output = _run_on_terminal(["restore", oldest], tmp_path, b"y\n", prompt=b"Restore? [y/N]")
    assert code == 0 and "restored: wrote t.py" in output, output
    assert newest in output
    assert target.read_bytes() == b"a = 1\nb = 1\n"


# --- a closed stdout never changes the outcome of a write ------------------------------------------


def test_closed_stdout_after_a_write_keeps_exit_status_zero(project: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "nbedit.cli", "apply", "change.diff", "--yes"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before nbedit prints anything (like `| head -0`)
    errors = process.stderr.read().decode("utf-8")
    assert process.wait(timeout=120) == 0, errors
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    assert (project / "app.py").read_bytes() == b"import os\nDEBUG = True\nprint(DEBUG)\n"


def test_apply_piped_into_head_exits_with_the_write_status(project: Path) -> None:
    command = (
        f"{sys.executable} -m nbedit.cli apply change.diff --yes | head -1; echo status=${{PIPESTATUS[0]}}"
    )
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    completed = subprocess.run(
        ["bash", "-c", command], cwd=project, capture_output=True, text=True, env=environment, timeout=120
    )
    assert "status=0" in completed.stdout and "Traceback" not in completed.stderr, completed
    assert b"DEBUG = True" in (project / "app.py").read_bytes()


# --- piped history is complete; --json for scripts --------------------------------------------------


def test_piped_history_is_complete_and_tab_separated(tmp_path: Path) -> None:
    names = [f"analysis_of_the_quarterly_results_{number}_with_a_long_name.py" for number in range(5)]
    for name in names:
        (tmp_path / name).write_bytes(b"x = 1\n")
    patch = "".join(f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" for name in names)
    assert run("apply", "-", "--yes", cwd=tmp_path, stdin=patch).returncode == 0
    listed = run("history", cwd=tmp_path)
    assert listed.returncode == 0
    header, row = listed.stdout.splitlines()
    assert header.split("\t") == [
        "id",
        "time",
        "cell",
        "files",
        "added",
        "removed",
        "origin",
        "status",
        "flags",
    ]
    fields = row.split("\t")
    assert fields[3] == ", ".join(names)  # every name, none cut
    assert fields[4:8] == ["5", "5", "cli", "applied"]
    as_json = run("history", "--json", cwd=tmp_path)
    import json

    (entry,) = json.loads(as_json.stdout)
    assert [file["path"] for file in entry["files"]] == names and entry["origin"] == "cli"


def test_paths_with_brackets_are_never_rich_markup(tmp_path: Path) -> None:
    folder = tmp_path / "app" / "[slug]"
    folder.mkdir(parents=True)
    (folder / "page.tsx").write_bytes(b"export default 1\n")
    refused = run("edit", "app/[slug]/page.tsx", "--old", "missing", "--new", "qqq", cwd=tmp_path)
    assert refused.returncode == 1 and "MarkupError" not in refused.stderr
    assert "app/[slug]/page.tsx" in refused.stderr
    (tmp_path / "[").mkdir()  # the path "[/]x.txt" holds rich's closing tag "[/]"
    (tmp_path / "[" / "]x.txt").write_bytes(b"a\n")
    assert run("edit", "[/]x.txt", "--old", "a", "--new", "b", "--yes", cwd=tmp_path).returncode == 0
    odd = run("edit", "[/]x.txt", "--old", "zzz", "--new", "qqq", cwd=tmp_path)
    assert odd.returncode == 1 and "MarkupError" not in odd.stderr and "[/]x.txt" in odd.stderr
    assert (
        run("edit", "app/[slug]/page.tsx", "--old", "1", "--new", "2", "--yes", cwd=tmp_path).returncode == 0
    )
    listed = run("history", cwd=tmp_path)
    assert "[/]x.txt" in listed.stdout and "app/[slug]/page.tsx" in listed.stdout


# --- the command's own surface ----------------------------------------------------------------------


def test_version_and_demo_subcommand(tmp_path: Path) -> None:
    import nbedit

    version = run("--version", cwd=tmp_path)
    assert (version.returncode, version.stdout.strip()) == (0, f"nbedit {nbedit.__version__}")
    demo = run("demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "nbedit --help" in demo.stdout and list(tmp_path.iterdir()) == []


def test_edit_help_offers_clear_outputs_and_not_overwrite(tmp_path: Path) -> None:
    helped = run("edit", "--help", cwd=tmp_path)
    assert "--clear-outputs" in helped.stdout and "--overwrite" not in helped.stdout
    assert "--encoding" in helped.stdout
    assert "--overwrite" in run("apply", "--help", cwd=tmp_path).stdout
    for command in ("undo", "restore"):
        text = run(command, *(["ID"] if command == "restore" else []), "--help", cwd=tmp_path).stdout
        assert "--yes" in text and "--dry-run" in text


def test_edit_clear_outputs_clears_the_edited_cell(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1\nprint(x)")
    cell.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    notebook.cells = [cell]
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    result = run(
        "edit", "n.ipynb", "--old", "x = 1", "--new", "x = 2", "--clear-outputs", "--yes", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    written = nbformat.read(str(tmp_path / "n.ipynb"), as_version=4)
    assert written.cells[0].source == "x = 2\nprint(x)" and written.cells[0].outputs == []


def test_ambiguity_hint_is_spelled_for_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_bytes(b"x = 1\nx = 1\n")
    result = run("edit", "t.py", "--old", "x = 1", "--new", "x = 2", cwd=tmp_path)
    assert result.returncode == 1 and "AmbiguousMatch" in result.stderr
    assert "--replace-all" in result.stderr and "replace_all" not in result.stderr


# --- legacy encodings -------------------------------------------------------------------------------


LATIN1_CSV = "name;city\nJosé;München\nAnn;Zürich\n".encode("cp1252")


def test_latin1_csv_is_detected_and_edited_byte_exactly(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_bytes(LATIN1_CSV)
    result = run("edit", "data.csv", "--old", "Ann;Zürich", "--new", "Anaïs;Genève", "--yes", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data.csv").read_bytes() == "name;city\nJosé;München\nAnaïs;Genève\n".encode("cp1252")


def test_declared_encoding_on_the_command_line(tmp_path: Path) -> None:
    data = "Grüße – “quoted” €5\n".encode("cp1252")
    (tmp_path / "note.txt").write_bytes(data)
    result = run(
        "edit", "note.txt", "--old", "€5", "--new", "€6", "--encoding", "cp1252", "--yes", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "note.txt").read_bytes() == data.replace("€5".encode("cp1252"), "€6".encode("cp1252"))
    bad = run("edit", "note.txt", "--old", "€6", "--new", "€7", "--encoding", "no-such-codec", cwd=tmp_path)
    assert bad.returncode == 1 and "OptionError" in bad.stderr and "no-such-codec" in bad.stderr


def test_notebook_ambiguity_suggests_the_cell_option_as_the_cli_spells_it(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    before = (tmp_path / "n.ipynb").read_bytes()
    result = run("edit", "n.ipynb", "--old", "x = 1", "--new", "x = 2", cwd=tmp_path)
    assert result.returncode == 1 and "AmbiguousMatch" in result.stderr
    flat = " ".join(result.stderr.split())  # the panel wraps long lines
    assert "--cell ID|INDEX" in flat and "--replace-all" in flat
    assert "cell=" not in flat and "replace_all" not in flat
    assert (tmp_path / "n.ipynb").read_bytes() == before


def test_apply_reads_a_whole_reply_and_path_names_the_file_in_scope(project: Path) -> None:
    reply = "Turn debugging on:\n\n```diff\n@@ ... @@\n import os\n-DEBUG = False\n+DEBUG = True\n```\n\nThat's it.\n"
    before = snapshot(project)
    refused = run("apply", "-", "--yes", cwd=project, stdin=reply)
    assert refused.returncode != 0 and "default" in refused.stderr
    assert snapshot(project) == before
    result = run("apply", "-", "--yes", "--path", "app.py", cwd=project, stdin=reply)
    assert result.returncode == 0, result.stderr
    assert (project / "app.py").read_bytes() == b"import os\nDEBUG = True\nprint(DEBUG)\n"
