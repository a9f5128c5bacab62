"""Section 1: a 918-hunk ``git diff`` applied to a 100,000-line file.

The modified file is made by editing 918 spread-out places; the patch is real
``git diff`` output from a throw-away repository. nbedit runs the whole path the
API runs (parse, locate every hunk, splice, stale check, atomic write) and is
compared in the same run with whatthepatch and patch-ng in process, and with
``git apply`` and GNU ``patch`` as whole processes. nbedit runs as users run it,
with its history on: *cold* is a file the history has not seen, in a home that
exists (a copy of one where another file was edited, made before each run: the
entry keeps the whole file, as a link), *warm* a file it has seen (the before
version is already stored); the first use of a history (a new home, its database
made meanwhile) is a row of its own. History-off figures are kept for reference.
Every tool's result is checked against the modified file: a fast wrong answer is
reported as wrong.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.corpus import code_lines, edit_spread, git_diff, write_text
from benchmarks.timing import Process, Row, Run, Timing, best_of, interleaved_best, interleaved_medians

__all__ = ["run"]

LINES = 100_000
HUNKS = 918
NAME = "big.py"


def make_inputs(scratch: Path) -> tuple[str, str, str]:
    """(before, after, patch) with the patch produced by git itself."""
    edited = edit_spread(code_lines(LINES, seed=1), HUNKS, seed=2)
    repository = scratch / "repository"
    patch = git_diff(repository, NAME, edited.before, edited.after)
    if patch.count("\n@@ ") != HUNKS:
        raise RuntimeError(f"expected {HUNKS} hunks in the git diff, got {patch.count(chr(10) + '@@ ')}")
    return edited.before, edited.after, patch


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    from nbedit.engine.diff import plan_diff
    from nbedit.workspace import Workspace

    before, after, patch = make_inputs(scratch)
    work = scratch / "work"
    work.mkdir()
    target = work / NAME
    patch_file = scratch / "change.diff"
    write_text(str(patch_file), patch)
    after_bytes = after.encode()

    def reset() -> None:
        write_text(str(target), before)

    def correct() -> bool:
        return target.read_bytes() == after_bytes

    rows: list[Row] = []
    section = f"patch {LINES:,} lines, {HUNKS} hunks"

    # -- in process --------------------------------------------------------------------------------
    homes = iter(range(1_000_000))
    applied: list[Workspace] = []
    seeded = _seeded_home(scratch)
    next_home: list[Path] = []

    def nbedit_apply(history: bool, fresh_home: bool = False) -> None:
        home = next_home.pop() if next_home else scratch / (f"home-{next(homes)}" if fresh_home else "home")
        workspace = Workspace(work, history=history, home=home)
        workspace.apply(workspace.plan_patch(patch))
        applied.append(workspace)

    def reset_existing_home() -> None:
        # an existing home that has not seen the file: a copy of the seeded one, made untimed
        reset_and_pack()
        home = scratch / f"home-{next(homes)}"
        shutil.copytree(seeded, home)
        next_home.append(home)

    def reset_and_pack() -> None:
        # A cold entry links the old file and packs it later (when the process is idle): pack the
        # previous run's link here, untimed, so that work never lands inside a timed run of a peer.
        while applied:
            workspace = applied.pop()
            if workspace.history_enabled:
                workspace._store().compact()  # noqa: SLF001
        reset()

    def whatthepatch_apply() -> None:
        import whatthepatch

        text = target.read_text(encoding="utf-8")
        diff = next(iter(whatthepatch.parse_patch(patch)))
        lines = whatthepatch.apply_diff(diff, text.split("\n"))
        write_text(str(target), "\n".join(lines))

    def patch_ng_apply() -> None:
        import patch_ng

        patch_set = patch_ng.fromstring(patch.encode())  # it strips git's a/ b/ itself
        if not patch_set or not patch_set.apply(strip=0, root=str(work)):
            raise RuntimeError("patch-ng failed")

    reset()
    try:
        patch_ng_apply()  # loaded, and known to work here, before it is timed
        patch_ng_works = correct()
    except RuntimeError:
        patch_ng_works = False
    reset_and_pack()
    nbedit_apply(True)  # the shared home ("warm") has seen the file from here on
    reset_and_pack()
    whatthepatch_apply()  # both peers' imports happen before the timing, like nbedit's
    reset_and_pack()
    # nbedit and its peers run in turn, one of each per round: a slow stretch of a shared machine
    # falls on both sides of a ratio
    runs = {
        "plain": Run(lambda: nbedit_apply(False), reset_and_pack, correct),
        "cold": Run(lambda: nbedit_apply(True), reset_existing_home, correct),
        "whatthepatch": Run(whatthepatch_apply, reset_and_pack, correct),
        "first_use": Run(lambda: nbedit_apply(True, fresh_home=True), reset_and_pack, correct),
        "recorded": Run(lambda: nbedit_apply(True), reset_and_pack, correct),
    }
    if patch_ng_works:
        runs["patch_ng"] = Run(patch_ng_apply, reset_and_pack, correct)
    timed = interleaved_best(runs, repeat)
    reset_and_pack()
    plain, nbedit_ok = timed["plain"]
    cold, cold_ok = timed["cold"]
    first_use, first_use_ok = timed["first_use"]
    recorded, recorded_ok = timed["recorded"]
    whatthepatch_timing, whatthepatch_ok = timed["whatthepatch"]
    patch_ng_timing, patch_ng_ok = timed.get("patch_ng", (None, False))

    planned = Workspace(work, history=False)
    reset()
    plan = planned.plan_patch(patch)
    # the per-phase split, for the README: where the time goes
    plan_only = best_of(lambda: Workspace(work, history=False).plan_patch(patch), repeat, reset)

    def in_process_row(metric: str, timing: Timing, ok: bool) -> Row:
        return Row(
            section,
            metric,
            timing.seconds,
            "s",
            "whatthepatch",
            whatthepatch_timing.seconds,
            ">= 2x faster than whatthepatch",
            timing.seconds * 2 <= whatthepatch_timing.seconds and ok and whatthepatch_ok,
            note="" if ok and whatthepatch_ok else f"correct: nbedit {ok}, whatthepatch {whatthepatch_ok}",
            samples={"nbedit": list(timing.samples), "peer": list(whatthepatch_timing.samples)},
        )

    cold_metric = "parse+plan+apply in process, history on, existing home, cold (new file)"
    rows.append(in_process_row(cold_metric, cold, cold_ok))
    rows.append(in_process_row("parse+plan+apply in process, history on, warm", recorded, recorded_ok))
    rows.append(
        Row(
            section,
            "parse+plan+apply in process, history on, first use (new home)",
            first_use.seconds,
            "s",
            "whatthepatch",
            whatthepatch_timing.seconds,
            note="" if first_use_ok else "nbedit result WRONG",
            samples={"nbedit": list(first_use.samples)},
        )
    )
    rows.append(
        Row(
            section,
            "parse+plan+apply in process, history off",
            plain.seconds,
            "s",
            "whatthepatch",
            whatthepatch_timing.seconds,
            note="" if nbedit_ok else "nbedit result WRONG",
            samples={"nbedit": list(plain.samples)},
        )
    )
    rows.append(
        Row(
            section,
            "parse+plan only (no write)",
            plan_only.seconds,
            "s",
            "whatthepatch",
            whatthepatch_timing.seconds,
            samples={"nbedit": list(plan_only.samples)},
        )
    )
    rows.append(
        Row(
            section,
            "parse+plan+apply in process, history on, warm",
            recorded.seconds,
            "s",
            "patch-ng",
            patch_ng_timing.seconds if patch_ng_timing else None,
            note="" if patch_ng_ok else "patch-ng result WRONG or failed",
            samples={"peer": list(patch_ng_timing.samples)} if patch_ng_timing else {},
        )
    )

    # -- whole processes ---------------------------------------------------------------------------
    # An installed package has its bytecode compiled (pip does it at install time); an editable
    # checkout under PYTHONDONTWRITEBYTECODE would recompile every module on every run instead.
    import compileall

    import nbedit

    compileall.compile_dir(str(Path(nbedit.__file__).parent), quiet=1)
    nbedit_command = [sys.executable, "-m", "nbedit", "apply", "--yes", str(patch_file), "--root", str(work)]
    cli_homes = iter(range(1_000_000))

    def reset_cold() -> None:
        reset()
        os.environ["NBEDIT_HOME"] = str(scratch / f"cli-home-{next(cli_homes)}")

    def reset_warm() -> None:
        reset()
        os.environ["NBEDIT_HOME"] = str(scratch / "cli-home")

    git_command = ["git", "apply", str(patch_file)]
    gnu_command = ["patch", "-p1", "--batch", "--no-backup-if-mismatch", "-i", str(patch_file)]
    reset_warm()
    subprocess.run(nbedit_command, cwd=work, stdout=subprocess.DEVNULL, check=False)  # the home has seen it
    processes = {
        "cold": Process(nbedit_command, str(work), reset_cold, correct),
        "warm": Process(nbedit_command, str(work), reset_warm, correct),
        "git": Process(git_command, str(work), reset, correct),
        "python": Process([sys.executable, "-c", "pass"], str(work)),
    }
    if shutil.which("patch"):
        processes["gnu"] = Process(gnu_command, str(work), reset, correct)
    timed = interleaved_medians(processes, 5)
    (cli_cold, cli_cold_ok), (cli, cli_ok), (git_apply, git_ok) = timed["cold"], timed["warm"], timed["git"]
    startup = timed["python"][0]
    gnu, gnu_ok = timed.get("gnu", (None, False))
    for label, timing, ok in (("cold (new file)", cli_cold, cli_cold_ok), ("warm", cli, cli_ok)):
        rows.append(
            Row(
                section,
                f"`nbedit apply --yes` process, history on, {label}",
                timing.seconds,
                "s",
                "git apply",
                git_apply.seconds,
                "faster than git apply",
                timing.seconds < git_apply.seconds and ok and git_ok,
                note=f"python start-up alone {startup.seconds * 1000:.0f} ms"
                + ("" if ok and git_ok else f"; correct: nbedit {ok}, git {git_ok}"),
                samples={"nbedit": list(timing.samples), "peer": list(git_apply.samples)},
            )
        )
    if gnu is not None:
        rows.append(
            Row(
                section,
                "`nbedit apply --yes` process, history on, warm",
                cli.seconds,
                "s",
                "GNU patch -p1",
                gnu.seconds,
                note="" if gnu_ok else "GNU patch result WRONG",
                samples={"peer": list(gnu.samples)},
            )
        )
    rows.extend(_small_commit_rows(scratch))

    # -- preview diff ------------------------------------------------------------------------------
    preview = best_of(lambda: plan_diff(plan), repeat)
    before_lines = before.splitlines(keepends=True)
    after_lines = after.splitlines(keepends=True)
    difflib_timing = best_of(
        lambda: "".join(difflib.unified_diff(before_lines, after_lines, "a/x", "b/x")), 1
    )
    rows.append(
        Row(
            section,
            "preview diff (plan.diff)",
            preview.seconds,
            "s",
            "difflib.unified_diff",
            difflib_timing.seconds,
            "< 100 ms",
            preview.seconds < 0.1,
            samples={"nbedit": list(preview.samples), "peer": list(difflib_timing.samples)},
        )
    )
    return rows


def _seeded_home(scratch: Path) -> Path:
    """A history home with one entry (``bench_scale._seed_home``), beside this section's own homes."""
    from benchmarks.bench_scale import _seed_home

    return Path(_seed_home(scratch, "seeded-home"))


def _small_commit_rows(scratch: Path) -> list[Row]:
    """A real commit's diff of a few hunks (this repository's CLI module, edited in four places) and
    ``nbedit --help``, as processes, against a bare ``python -c pass``: the cost an agent that calls the
    CLI once per edit pays every time."""
    import nbedit.cli

    source = Path(nbedit.cli.__file__).read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    edited = list(lines)
    for place in (len(lines) // 5, 2 * len(lines) // 5, 3 * len(lines) // 5, 4 * len(lines) // 5):
        edited[place] = edited[place].rstrip("\n") + "  # reviewed\n"
    after = "".join(edited)
    repository = scratch / "small-repository"
    patch = git_diff(repository, "cli.py", source, after)
    hunks = patch.count("\n@@ ")
    folder = scratch / "small"
    folder.mkdir()
    target = folder / "cli.py"
    patch_file = scratch / "small.diff"
    write_text(str(patch_file), patch)
    os.environ["NBEDIT_HOME"] = str(scratch / "small-home")

    def reset() -> None:
        write_text(str(target), source)

    def correct() -> bool:
        return target.read_text(encoding="utf-8") == after

    # what a user runs: the console script pip installs beside the interpreter (no runpy, which
    # `python -m nbedit` loads, with contextlib, importlib and warnings); `-m` is timed beside it
    script = Path(sys.executable).with_name("nbedit")
    installed = script.is_file() and os.access(script, os.X_OK)
    program = [str(script)] if installed else [sys.executable, "-m", "nbedit"]
    arguments = ["apply", "--yes", str(patch_file), "--root", str(folder)]
    command = [*program, *arguments]
    reset()
    subprocess.run(command, cwd=folder, stdout=subprocess.DEVNULL, check=False)  # the home has seen the file
    processes = {
        "small": Process(command, str(folder), reset, correct),
        "help": Process([*program, "--help"], str(folder)),
        "python": Process([sys.executable, "-c", "pass"], str(folder)),
    }
    if installed:
        processes["small -m"] = Process([sys.executable, "-m", "nbedit", *arguments], str(folder), reset, correct)
    # 21 rounds: a slow spell of a shared machine that falls on some rounds moves a median of 9 by 10%
    timed = interleaved_medians(processes, 21)
    (small, small_ok), (help_timing, help_ok), (startup, _) = timed["small"], timed["help"], timed["python"]
    bare = startup.seconds
    note = f"{small.seconds / bare:.1f}x start-up" + ("" if installed else " (python -m nbedit: no console script)")
    if installed:
        module, module_ok = timed["small -m"]
        small_ok = small_ok and module_ok
        note += f"; python -m nbedit {module.seconds / bare:.1f}x"
    return [
        Row(
            f"small commit diff ({hunks} hunks, {len(lines):,} lines)",
            "`nbedit apply --yes` process (the console script), history on",
            small.seconds,
            "s",
            "python -c pass",
            bare,
            "within 3x of python -c pass",  # issue 27's target for a small patch as a process
            small.seconds <= 3 * bare and small_ok,
            note=note + ("" if small_ok else "; nbedit result WRONG"),
            samples={"nbedit": list(small.samples), "peer": list(startup.samples)},
        ),
        Row(
            "start-up",
            "`nbedit --help` process",
            help_timing.seconds,
            "s",
            "python -c pass",
            bare,
            "within 3x of python -c pass",
            help_timing.seconds <= 3 * bare and help_ok,
            note=f"{help_timing.seconds / bare:.1f}x start-up",
            samples={"nbedit": list(help_timing.samples), "peer": list(startup.samples)},
        ),
    ]
