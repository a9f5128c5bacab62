"""Start-up: the command line reads its arguments and imports only what the command needs.

An agent runs ``nbedit`` once per edit, so start-up is most of the cost of a call. These tests
are not timed (speed lives in ``benchmarks/``): they check *what* a real, fresh process imports
(``python -X importtime`` lists every module it loads), and that the quick argument reader, which
spares ``apply``/``edit`` the argparse import, reads every argument list it accepts exactly as
argparse does and hands every other one to argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit import cli, cli_support

REPO = Path(__file__).resolve().parents[1]

# never on the path of a plain apply/edit/--help (each is imported where it is needed)
HEAVY = (
    "rich",
    "rapidfuzz",
    "charset_normalizer",
    "nbformat",
    "jsonschema",
    "fastjsonschema",
    "IPython",
    "ipywidgets",
    "anywidget",
    "zstandard",
    "msgspec",
    "nbedit.engine.notebook",
    "nbedit.render.rows",
    "nbedit.render.terminal",
    "nbedit.render.html",
    "nbedit.jupyter",
    "nbedit.agents",
)
# the stdlib's data classes (and inspect, which they import) cost a bare start-up on their own, typing a
# few milliseconds, OpenSSL (_hashlib) some 3 ms (small files are hashed without it, see nbedit._hashing):
# nbedit's classes are made by nbedit._dataclass (tests/test_dataclass_compat.py checks they are alike)
# pathlib with what it imports (urllib.parse, ipaddress, fnmatch, ntpath) some 5 ms: the storage layer keeps
# paths as strings (nbedit._path_text) and makes a Path only when a public attribute is read
SLOW_STDLIB = (
    "dataclasses",
    "inspect",
    "dis",
    "ast",
    "typing",
    "_hashlib",
    "difflib",
    "json",
    "pathlib",
    "urllib",
    "ipaddress",
    "fnmatch",
    "ntpath",
)
# what a plain diff's reader needs no more: its header lines are read by hand (engine/diff_lines.py); re
# loads for an unusual line (a timestamp, a diff that starts with prose) or a text past 16 KiB. An edit
# of a Python file finds the statements around it by hand too (engine/syntax.py, _statement_end).
REGEX = ("re", "sre_compile", "re._compiler")


def imported(
    *arguments: str, cwd: Path, stdin: bytes = b""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``python -X importtime -m nbedit ARGUMENTS``; return the process and the modules it imported."""
    return _imported(["-m", "nbedit", *arguments], cwd=cwd, stdin=stdin)


# what the console script runs (``nbedit`` as pip installs it: no ``runpy``, which ``-m`` imports and
# which imports contextlib, importlib and warnings itself)
CONSOLE_SCRIPT = "import sys; from nbedit.cli import run; sys.argv[0] = 'nbedit'; sys.exit(run())"


def imported_by_the_program(*arguments: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``imported``, for the ``nbedit`` console script (what a user runs) rather than ``-m nbedit``."""
    return _imported(["-c", CONSOLE_SCRIPT, *arguments], cwd=cwd)


def _imported(
    command: list[str], *, cwd: Path, stdin: bytes = b""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        timeout=120,
    )
    stderr = completed.stderr.decode("utf-8", "replace")
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    messages = "\n".join(line for line in stderr.splitlines() if not line.startswith("import time:"))
    result = subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode("utf-8", "replace"), messages
    )
    return result, modules


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if name in modules or any(m.startswith(name + ".") for m in modules))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    lines = [f"def function_{index}(value):\n    return value + {index}\n\n\n" for index in range(40)]
    (tmp_path / "app.py").write_text("".join(lines), encoding="utf-8")
    patch = (
        "--- a/app.py\n+++ b/app.py\n"
        "@@ -5,2 +5,2 @@\n def function_1(value):\n-    return value + 1\n+    return value + 100\n"
        "@@ -81,2 +81,2 @@\n def function_20(value):\n-    return value + 20\n+    return value + 200\n"
    )
    (tmp_path / "change.diff").write_text(patch, encoding="utf-8")
    return tmp_path


# --- what a process imports --------------------------------------------------------------------


def test_apply_yes_imports_nothing_heavy(project: Path) -> None:
    result, modules = imported("apply", "--yes", "change.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 100" in (project / "app.py").read_text(encoding="utf-8")
    # history on: the entry was recorded (through sqlite's C module, without the package's extras)
    assert "_sqlite3" in modules and "sqlite3.dbapi2" not in modules and "datetime" not in modules
    assert loaded(modules, (*HEAVY, *SLOW_STDLIB, *REGEX)) == []
    # the quick argument reader: no argparse; undo/restore/listing code stays out too, and so
    # does the transport (what a leniently found place gets: every hunk here is exact)
    assert loaded(modules, ("argparse", "nbedit.history_ops", "nbedit.engine.transport", "shutil")) == []


# what a diff whose hunks all stand where they say never runs: the matcher's search, tiers of leniency
# and readings (the planner splices such a diff in the bytes, engine/exact_run.py)
MATCHER = (
    "nbedit.engine.locate_hunks",
    "nbedit.engine.match.cascade",
    "nbedit.engine.match.search",
    "nbedit.engine.match.fuzzy",
    "nbedit.engine.match.evidence",
    "nbedit.engine.match.candidates",
    "nbedit.engine.readings",
    # the tiers' tables and per-file index: the planner and the workspace read the options (and their
    # default threshold) from engine/match/options.py
    "nbedit.engine.match.tiers",
)


# what an in-place change never runs: the syntax guard (lenient matches, new files), a whole-file diff
# (restores, moves), the ``Tier`` enum (with ``enum``: ~3 ms; its matches hold
# ``models.EXACT_WHEN_READ`` until a tier is read, engine/tier.py), the matcher's package at all (the
# planner's first question, ``context_free``, and the default threshold are in engine/models.py), the
# ``FileSource`` protocol (typing only) and the tier/offset labels (for flagged hunks); each module
# kept off a command's way is some 0.1 ms of import machinery besides its own code
NOT_IN_PLACE = (
    "nbedit.engine.syntax_guard",
    "nbedit.engine.whole_diff",
    "enum",
    "nbedit.engine.tier",
    "nbedit.engine.match",
    "nbedit.engine.source",
    "nbedit.render.labels",
)


def test_a_git_commit_diff_in_place_imports_no_matcher(project: Path) -> None:
    # git's own header (the `index` line names the diff's base: the planner asks whether any hunk is
    # context-free), as `git diff` writes it
    patch = "diff --git a/app.py b/app.py\nindex 3b18e51..a1f2c3d 100644\n" + (
        project / "change.diff"
    ).read_text(encoding="utf-8")
    (project / "commit.diff").write_text(patch, encoding="utf-8")
    result, modules = imported("apply", "--yes", "commit.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 200" in (project / "app.py").read_text(encoding="utf-8")
    unwanted = (*HEAVY, *SLOW_STDLIB, *REGEX, *MATCHER, *NOT_IN_PLACE, "argparse", "weakref")
    assert loaded(modules, unwanted) == []


def test_a_diff_out_of_place_still_finds_its_hunks(project: Path) -> None:
    # the same diff with its line numbers off by 3: the matcher is imported where it is needed
    patch = (project / "change.diff").read_text(encoding="utf-8").replace("@@ -5,2 +5,2", "@@ -8,2 +8,2")
    (project / "moved.diff").write_text(patch, encoding="utf-8")
    result, modules = imported("apply", "--yes", "moved.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 100" in (project / "app.py").read_text(encoding="utf-8")
    assert "nbedit.engine.match.cascade" in modules


def test_a_reply_with_prose_before_its_diff_imports_no_regex(project: Path) -> None:
    # a model's reply: prose, then the diff in a fence (its first diff line is found by hand)
    reply = "Here is the fix:\n\n```diff\n" + (project / "change.diff").read_text(encoding="utf-8") + "```\n"
    (project / "reply.md").write_text(reply, encoding="utf-8")
    result, modules = imported("apply", "--yes", "reply.md", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 200" in (project / "app.py").read_text(encoding="utf-8")
    assert loaded(modules, (*HEAVY, *SLOW_STDLIB, *REGEX, "argparse")) == []


# what the program needs no more on a command's way, each some 0.2-1 ms of its start-up: threading (the
# background work starts ``_thread`` threads, nbedit.background; the history's "closed" flag makes its
# Event only when the idle compactor waits, storage/history_state.py), contextlib (``try``/``except``,
# and ``lock_paths`` is a class), warnings and importlib (imported where a warning is given, and
# ``__import__`` for a lazy name; nbedit's own warning class with them), bisect (``_bisect``'s
# function) and, for a change the history already holds, zlib (imported where a version is packed)
NOT_ON_A_COMMAND = (
    "threading",
    "contextlib",
    "warnings",
    "importlib",
    "bisect",
    "nbedit.warnings",
    "_weakrefset",  # the open databases are weak references in a dict (storage/database.py)
    "nbedit.storage.entries",  # Entry and FileSummary (namedtuples) are made when history is listed
    "nbedit.engine.hunk_table",  # a big patch's table of hunks (formats/unified.py imports it for one)
    "nbedit.storage.streamed_file",  # a big file's stand-in (root_source imports it past the size check)
    "nbedit.recovery",  # settles what a writer that died left pending: only when there is some
    "nbedit.render.text",  # the plain preview is render.summary.plain_diff
)


# what the console script's apply (history on) does not import: ``collections`` (nbedit's modules name
# ``collections.abc`` for type checkers only, ``_collections``/``_operator``/``_functools`` for the rest),
# ``functools`` (sqlite's C module gets a stand-in for its one import, storage/sqlite.py), ``types``,
# ``operator`` and what they import: ~14 M of ~103 M instructions of the whole call before (with
# an existing home, as every call after the first finds it)
PLUMBING = ("collections", "functools", "types", "operator", "reprlib", "keyword")


def test_the_program_applies_a_diff_without_the_modules_it_does_not_need(project: Path) -> None:
    before = (project / "app.py").read_bytes()
    patch = "diff --git a/app.py b/app.py\nindex 3b18e51..a1f2c3d 100644\n" + (
        project / "change.diff"
    ).read_text(encoding="utf-8")
    (project / "commit.diff").write_text(patch, encoding="utf-8")
    result, modules = imported_by_the_program("apply", "--yes", "commit.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    unwanted = (*HEAVY, *SLOW_STDLIB, *REGEX, *NOT_ON_A_COMMAND, *NOT_IN_PLACE, "argparse", "runpy")
    assert loaded(modules, unwanted) == []
    # the history has both versions now: the same change again (the benchmark's case) packs nothing
    (project / "app.py").write_bytes(before)
    result, modules = imported_by_the_program("apply", "--yes", "commit.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 200" in (project / "app.py").read_text(encoding="utf-8")
    assert "_sqlite3" in modules  # the entry was recorded
    # nor zlib (nothing is packed) or array: a diff read by hand builds no line index or hunk table,
    # and only a new version's region delta (storage/delta.py) needs one
    # nor the class of a packed region delta (a namedtuple: storage/packed_regions.py), nor the
    # plumbing above (the first call made the home: its store was opened on a thread meanwhile)
    unwanted = (*NOT_ON_A_COMMAND, *NOT_IN_PLACE, *PLUMBING, "zlib", "array", "nbedit.storage.packed_regions")
    assert loaded(modules, unwanted) == []
    # the interpreter's SHA-256 is asked for under this Python's name first (a missing name is a
    # search of every folder of the path, nbedit/_hashing.py): 3.11's is _sha256, 3.12's _sha2
    assert ("_sha2" in modules) == (sys.version_info >= (3, 12))


def test_the_program_edits_without_the_modules_it_does_not_need(project: Path) -> None:
    result, modules = imported_by_the_program(
        "edit", "app.py", "--old", "return value + 3\n", "--new", "return value + 33\n", "--yes", cwd=project
    )
    assert result.returncode == 0, result.stderr
    assert "return value + 33" in (project / "app.py").read_text(encoding="utf-8")
    # but warnings: the syntax guard compiles the edited Python with warnings silenced (engine/syntax.py)
    unwanted = tuple(name for name in NOT_ON_A_COMMAND if name != "warnings")
    assert loaded(modules, (*HEAVY, *SLOW_STDLIB, *REGEX, *unwanted, "argparse", "runpy")) == []


def test_apply_from_stdin_imports_nothing_heavy(project: Path) -> None:
    patch = (project / "change.diff").read_bytes()
    result, modules = imported("apply", "-", "--yes", "--root", ".", cwd=project, stdin=patch)
    assert result.returncode == 0, result.stderr
    assert loaded(modules, (*HEAVY, *SLOW_STDLIB, *REGEX, "argparse")) == []


def test_edit_imports_nothing_heavy(project: Path) -> None:
    result, modules = imported(
        "edit", "app.py", "--old", "return value + 3\n", "--new", "return value + 33\n", "--yes", cwd=project
    )
    assert result.returncode == 0, result.stderr
    assert "return value + 33" in (project / "app.py").read_text(encoding="utf-8")
    assert loaded(modules, (*HEAVY, *SLOW_STDLIB, *REGEX, "argparse")) == []


def test_the_program_leaves_its_history_log_for_the_next_run(project: Path, tmp_path: Path) -> None:
    # the process ends with os._exit after letting its history go without folding SQLite's
    # write-ahead log into the database (two syncs at the end, and a new synced log in the next
    # run): the next process reads every entry from the log, and the log stays bounded
    home = tmp_path / "home"
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NBEDIT_HOME": str(home)}
    original = (project / "app.py").read_bytes()
    runs = 9  # an entry is some 9 pages of log: more than wal_autocheckpoint's 64 pages in all
    for _ in range(runs):
        (project / "app.py").write_bytes(original)
        completed = subprocess.run(
            [sys.executable, "-m", "nbedit", "apply", "--yes", "change.diff"],
            cwd=project,
            capture_output=True,
            env=environment,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        assert (
            completed.stdout.decode().rstrip().endswith("undo with: nbedit undo)")
        )  # flushed before the end
        # the blob folder is made with the database (one fsync of the home for both); the log is left
        assert sorted(path.name for path in home.iterdir()) == [
            "blobs",
            "history.sqlite3",
            "history.sqlite3-shm",
            "history.sqlite3-wal",
            "history.sqlite3.last-id",
        ]
        assert (home / "history.sqlite3-wal").stat().st_size < 1 << 20
    listed = subprocess.run(
        [sys.executable, "-m", "nbedit", "history", "--all", "--json"],
        cwd=project,
        capture_output=True,
        env=environment,
        timeout=120,
    )
    assert listed.returncode == 0
    entries = json.loads(listed.stdout)
    assert len(entries) == runs and all(entry["status"] == "applied" for entry in entries), entries
    # a library's close still folds the log into the database and removes it
    from nbedit import Workspace

    workspace = Workspace(project, home=home)
    assert len(workspace.history(all_sessions=True)) == runs
    workspace.close()
    assert not (home / "history.sqlite3-wal").exists()


def test_a_history_set_aside_keeps_the_ids_its_left_log_handed_out(project: Path, tmp_path: Path) -> None:
    # the entry is only in the log the program left (one entry is far below an automatic
    # checkpoint): reading a database that is set aside counts it (ids are also reserved ahead
    # in the floor file, so none is used twice either way)
    from nbedit.storage.database import last_sequence, move_aside, read_sequence_floor

    home = tmp_path / "home"
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "apply", "--yes", "change.diff"],
        cwd=project,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "NBEDIT_HOME": str(home)},
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    database = home / "history.sqlite3"
    assert (home / "history.sqlite3-wal").stat().st_size > 0
    assert last_sequence(database) == 1
    move_aside(database)
    assert read_sequence_floor(database) >= 1
    assert not (home / "history.sqlite3-wal").exists()  # moved aside with its database


def test_main_called_in_a_program_returns_and_keeps_nothing_open(project: Path) -> None:
    code = cli.main(["apply", "--yes", str(project / "change.diff"), "--root", str(project)])
    assert code == 0
    assert cli_support._opened is None  # only ``run`` collects workspaces to close


def test_help_imports_only_argparse(project: Path) -> None:
    result, modules = imported("--help", cwd=project)
    assert result.returncode == 0
    assert result.stdout == cli.build_parser().format_help()
    assert "argparse" in modules
    assert (
        loaded(modules, (*HEAVY, *SLOW_STDLIB, "nbedit.workspace", "nbedit.engine", "nbedit.storage")) == []
    )


def test_a_refusal_still_explains_itself_without_the_heavy_modules(project: Path) -> None:
    before = (project / "app.py").read_bytes()
    result, modules = imported("edit", "app.py", "--old", "no such text", "--new", "x", "--yes", cwd=project)
    assert result.returncode == 1
    assert (
        "NoMatch" in result.stderr and "could not find the old text starting 'no such text'" in result.stderr
    )
    assert (project / "app.py").read_bytes() == before
    # the error panel is drawn with rich (stderr); the matcher's fuzzy search needs rapidfuzz
    assert loaded(modules, ("nbformat", "IPython", "anywidget", "charset_normalizer")) == []


def test_the_fuzzy_tier_imports_rapidfuzz_when_it_is_needed(project: Path) -> None:
    # the context lines drifted (a word changed), so only the fuzzy tier finds the place
    text = (project / "app.py").read_text(encoding="utf-8")
    (project / "app.py").write_text(text.replace("def function_7(value):", "def function_7(number):"))
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -29,4 +29,4 @@\n def function_7(value):\n-    return value + 7\n"
        "+    return value + 77\n \n \n"
    )
    (project / "drift.diff").write_text(patch, encoding="utf-8")
    result, modules = imported("apply", "--yes", "drift.diff", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "return value + 77" in (project / "app.py").read_text(encoding="utf-8")
    assert "rapidfuzz" in modules and "nbedit.engine.transport" in modules
    assert "fuzzy" in result.stdout


def test_a_western_8_bit_file_imports_the_detector(project: Path) -> None:
    (project / "latin.txt").write_bytes("caf\xe9 au lait\nna\xefve\n".encode("cp1252"))
    result, modules = imported("edit", "latin.txt", "--old", "lait", "--new", "miel", "--yes", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "latin.txt").read_bytes() == "caf\xe9 au miel\nna\xefve\n".encode("cp1252")
    assert "charset_normalizer" in modules


def test_a_notebook_edit_imports_the_notebook_code(project: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    notebook.cells[0]["id"] = "c0"
    nbformat.write(notebook, str(project / "n.ipynb"))
    result, modules = imported("edit", "n.ipynb", "--old", "x = 1", "--new", "x = 2", "--yes", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "nbedit.engine.notebook" in modules
    # json is the notebook's own parser; typing, dataclasses and the rest stay out as on every path
    slow = tuple(name for name in SLOW_STDLIB if name != "json")
    assert loaded(modules, ("rich", "IPython", "anywidget", "nbformat", "uuid", *slow)) == []


# what a kernel's or an agent's first edit of one cell of a big notebook runs (the row of
# benchmarks/bench_notebook.py, "cold"): the notebook engine and the history, nothing to render, no
# second reader of notebooks, no reading of a reply that did not match as written
_BIG_NOTEBOOK_EDIT = r"""
import sys
root, home = sys.argv[1:3]
from nbedit.workspace import Workspace
workspace = Workspace(root, history=True, home=home)
workspace.apply(workspace.plan_edit("big.ipynb", "total_7 = frame_7.sum()", "total_7 = frame_7.mean()"))
"""


def test_the_first_edit_of_a_big_notebook_imports_only_the_notebook_path(tmp_path: Path) -> None:
    import base64
    import random

    from nbedit.engine.digest import IN_BACKGROUND
    from nbedit.engine.notebook.successor import DERIVED_FROM
    from nbedit.storage.history import HistoryStore

    rng = random.Random(5)
    cells = [
        {"cell_type": "code", "execution_count": number, "id": f"c{number}", "metadata": {},
         "outputs": [{"data": {"image/png": base64.b64encode(rng.randbytes(30_000)).decode()},
                      "metadata": {}, "output_type": "display_data"}],
         "source": [f"total_{number} = frame_{number}.sum()\n", f"plot(total_{number})"]}
        for number in range(40)
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = (json.dumps(notebook, indent=1, sort_keys=True) + "\n").encode()
    assert len(data) >= max(IN_BACKGROUND, DERIVED_FROM)  # hashed beside the scan, the next document derived
    (tmp_path / "big.ipynb").write_bytes(data)
    home = tmp_path / "home"
    HistoryStore(home).close()  # an existing home, as every edit after a user's first finds it
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _BIG_NOTEBOOK_EDIT, str(tmp_path), str(home)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    stderr = completed.stderr.decode("utf-8", "replace")
    assert completed.returncode == 0, stderr[-2000:]
    assert (tmp_path / "big.ipynb").read_bytes() == data.replace(b"frame_7.sum()", b"frame_7.mean()", 1)
    lines = stderr.splitlines()
    modules = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "nbedit.engine.notebook.successor" in modules and "_sqlite3" in modules  # the path was taken
    # json reads the notebook and OpenSSL hashes its megabytes: the rest of the slow stdlib stays out
    slow = tuple(name for name in SLOW_STDLIB if name not in ("json", "_hashlib"))
    heavy = tuple(name for name in HEAVY if name != "nbedit.engine.notebook")
    # the exact search finds the old text; the readings of a reply that missed are imported on a miss
    readings = ("nbedit.engine.readings", "nbedit.engine.reading_lines", "nbedit.engine.transport")
    assert loaded(modules, (*heavy, *slow, *readings, "argparse", "uuid", "nbedit.history_ops")) == []


# --- the quick argument reader reads exactly as argparse does ----------------------------------


def _subcommand(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    (subparsers,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = subparsers.choices[command]
    return chosen


def _subparser(command: str) -> argparse.ArgumentParser:
    return _subcommand(cli.build_parser(), command)


@pytest.mark.parametrize("command", sorted(cli._QUICK_OPTIONS))
def test_the_quick_tables_are_the_argparse_options(command: str) -> None:
    actions = [
        action for action in _subparser(command)._actions if not isinstance(action, argparse._HelpAction)
    ]
    options = {
        string: (action.dest, action.nargs is None and not isinstance(action, argparse._StoreTrueAction))
        for action in actions
        for string in action.option_strings
    }
    assert options == cli._QUICK_OPTIONS[command]
    defaults = {action.dest: action.default for action in actions}
    quick = cli._quick_parse(
        [command, *(["x"] if cli._QUICK_POSITIONAL[command][1] else [])]
        + [token for pair in cli._QUICK_ONE_OF[command] for token in (f"--{pair[0].replace('_', '-')}", "v")]
    )
    assert quick is not None
    for destination, default in defaults.items():
        if destination in (cli._QUICK_POSITIONAL[command][0], *sum(cli._QUICK_ONE_OF[command], ())):
            continue
        assert getattr(quick, destination) == default, destination
    (positional,) = [action for action in actions if not action.option_strings]
    assert positional.dest == cli._QUICK_POSITIONAL[command][0]
    assert positional.nargs == ("?" if cli._QUICK_POSITIONAL[command][1] == 0 else None)
    groups = _subparser(command)._mutually_exclusive_groups
    assert sorted(tuple(action.dest for action in group._group_actions) for group in groups) == sorted(
        cli._QUICK_ONE_OF[command]
    )
    assert all(group.required for group in groups)


def _argparse_reading(arguments: list[str]) -> dict[str, object] | None:
    """What the full argparse parser makes of ``arguments`` (None: it refused them)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(cli.build_parser().parse_args(arguments))
    except SystemExit:
        return None


TOKENS = sorted({string for options in cli._QUICK_OPTIONS.values() for string in options}) + [
    "apply",
    "edit",
    "x.diff",
    "app.py",
    "-",
    "--",
    "",
    "a b",
    "-1",
    "0.5",
    "2",
    "nan",
    "cp1252",
    "--ye",
    "--root=x",
    "-yy",
    "-h",
    "--help",
    "--version",
    "--all",
    "-x",
    "--old=",
    "--threshold=0.5",
]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(["apply", "edit", "view", "--yes"]),
    st.lists(st.sampled_from(TOKENS), max_size=8),
)
def test_the_quick_reader_agrees_with_argparse_or_steps_aside(command: str, rest: list[str]) -> None:
    arguments = [command, *rest]
    quick = cli._quick_parse(arguments)
    if quick is None:
        return  # argparse reads it (and says what is wrong, if anything)
    assert vars(quick) == _argparse_reading(arguments)


VALUES = ["app.py", "-", "0.5", "1", "x y", "", "cp1252", "2"]


@st.composite
def well_formed(draw: st.DrawFn) -> list[str]:
    """Calls built the way agents write them: whole option names, each value after its option."""
    command = draw(st.sampled_from(sorted(cli._QUICK_OPTIONS)))
    options = cli._QUICK_OPTIONS[command]
    groups: list[list[str]] = []
    for string in draw(st.lists(st.sampled_from(sorted(options)), max_size=7)):
        takes_value = options[string][1]
        groups.append([string, draw(st.sampled_from(VALUES))] if takes_value else [string])
    for _ in range(draw(st.integers(0, 2))):
        groups.insert(draw(st.integers(0, len(groups))), [draw(st.sampled_from(VALUES))])
    return [command, *(token for group in groups for token in group)]


@settings(max_examples=800, deadline=None)
@given(well_formed())
def test_the_quick_reader_agrees_with_argparse_on_well_formed_calls(arguments: list[str]) -> None:
    quick = cli._quick_parse(arguments)
    if quick is None:
        return
    assert vars(quick) == _argparse_reading(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        ["apply", "--yes", "change.diff"],
        ["apply", "change.diff", "--yes", "--root", "project", "--no-history"],
        ["apply", "-", "-y", "--threshold", "0.8", "--explain", "--dry-run"],
        ["apply", "--yes"],
        ["apply", "--encoding", "cp1252", "--overwrite", "--force", "--exact", "p.diff"],
        ["edit", "app.py", "--old", "a", "--new", "b", "--yes"],
        ["edit", "--old-file", "-", "--new-file", "new.txt", "n.ipynb", "--cell", "2", "--clear-outputs"],
        ["edit", "app.py", "--old", "", "--new", "x", "--replace-all", "--root", "."],
    ],
)
def test_the_quick_reader_takes_the_usual_calls(arguments: list[str]) -> None:
    quick = cli._quick_parse(arguments)
    assert quick is not None
    assert vars(quick) == _argparse_reading(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        ["apply", "--ye", "x.diff"],  # an abbreviation argparse accepts
        ["apply", "--root=sub", "x.diff"],
        ["apply", "--threshold", "2"],  # argparse says why it is wrong
        ["apply", "a.diff", "b.diff"],
        ["edit", "app.py", "--old", "a"],  # --new missing
        ["edit", "app.py", "--old", "a", "--old-file", "f", "--new", "b"],
        ["edit", "app.py", "--old", "-a", "--new", "b"],  # argparse reads -a as an option
        ["apply", "--", "x.diff"],
        ["apply", "--help"],
    ],
)
def test_the_quick_reader_leaves_the_rest_to_argparse(arguments: list[str]) -> None:
    assert cli._quick_parse(arguments) is None


# --- the parser built for one subcommand reads like the whole parser ---------------------------


COMMANDS = ("apply", "edit", "diff", "view", "history", "show", "undo", "restore", "doctor", "demo", "mcp")


def _outcome(parser_factory: object, arguments: list[str]) -> tuple[object, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
            result: object = vars(parser_factory(arguments).parse_args(arguments))  # type: ignore[operator]
    except SystemExit as exit:
        result = ("exit", exit.code)
    return result, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        ["-h"],
        ["--version"],
        [],
        ["nosuch"],
        ["-x", "apply"],
        ["-", "apply"],
        *([command, "--help"] for command in COMMANDS),
        ["edit", "app.py"],
        ["apply", "--threshold", "2"],
        ["apply", "--threshold", "x"],
        ["apply", "--ye"],
        ["history", "--all", "--json"],
        ["restore", "e1", "--after", "--yes"],
        ["doctor"],
        ["mcp", "--approval", "never"],
        ["diff", "a"],
        ["--", "apply"],
    ],
)
def test_the_parser_for_one_subcommand_reads_like_the_whole_parser(
    arguments: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole = _outcome(lambda _arguments: cli.build_parser(), arguments)
    assert _outcome(cli._parser_for, arguments) == whole


# --- help is argparse's own, at the width argparse would choose -----------------------------------


@pytest.mark.parametrize(
    "environment",
    [
        {},
        {"COLUMNS": "60"},
        {"COLUMNS": "60", "LINES": "20"},
        {"COLUMNS": "0"},
        {"COLUMNS": "wide"},
        {"LINES": "5"},
    ],
)
def test_the_help_width_is_the_one_shutil_finds(
    environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert cli._terminal_columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("columns", ["50", "100", "200"])
def test_every_help_text_is_what_argparse_would_print(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = cli.build_parser()
    monkeypatch.setattr(cli, "_formatter", argparse.HelpFormatter)
    theirs = cli.build_parser()
    assert ours.format_help() == theirs.format_help()
    for command in COMMANDS:
        assert _subcommand(ours, command).format_help() == _subcommand(theirs, command).format_help()
        assert _subcommand(ours, command).format_usage() == _subcommand(theirs, command).format_usage()


def test_the_help_width_follows_a_real_terminal(tmp_path: Path) -> None:
    import pty

    primary, secondary = pty.openpty()
    os.set_blocking(primary, True)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 57, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [sys.executable, "-m", "nbedit", "apply", "--help"],
        cwd=tmp_path,
        stdout=secondary,
        stderr=secondary,
        env={**environment, "PYTHONPATH": str(REPO)},
    )
    os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(primary)
    assert process.wait(timeout=60) == 0
    lines = output.decode().replace("\r\n", "\n").splitlines()
    assert lines[0].startswith("usage: nbedit apply")
    assert max(len(line) for line in lines) <= 55  # argparse wraps at the terminal's width less 2


def test_the_summarys_row_caches_are_lru_caches_made_on_first_use(tmp_path: Path) -> None:
    """``render.summary`` makes its two ``lru_cache``s when first called (``functools`` stays out of a
    command that draws no rows): the same view for the same plan, and ``cache_clear`` as before."""
    import nbedit
    from nbedit.render import summary

    (tmp_path / "a.py").write_text("x = 1\n")
    plan = nbedit.Workspace(tmp_path, history=False).plan_edit("a.py", "x = 1", "x = 2")
    file_plan = plan.files[0]
    summary.cached_view.cache_clear()
    first = summary.cached_view(file_plan)
    assert summary.cached_view(file_plan) is first and (first.added, first.removed) == (1, 1)
    summary.cached_view.cache_clear()
    assert summary.cached_view(file_plan) is not first
    assert summary.cached_view.__wrapped__.__name__ == "cached_view" and summary.cached_view.__doc__
    summary._cached_counts.cache_clear()
