"""Section: scale. The same work at 1x, 10x and 100x, so the growth shows, peers in the same run.

Three rows of sizes (issue 27):

* a notebook of many small cells, one cell edited: 1,000 / 10,000 / 100,000 cells
  (``--big``: 10,000 / 100,000 / 1,000,000); peer ``nbformat.read`` + ``nbformat.write``;
* a notebook of many small cells with every tenth cell edited, as one unified diff of its cell
  view (``nbedit view``, the diff written by nbedit's ``text_diff``): 1,000 / 10,000 / 100,000
  cells, so 100 / 1,000 / 10,000 cell edits (``--big``: 10x); no peer edits a notebook's cells
  from a diff;
* a unified diff of one-line hunks spread over a file, 20 lines apart: 1,000 / 10,000 /
  100,000 hunks (``--big``: 2,000 / 20,000 / 200,000, the hunk limit); peer whatthepatch
  (``parse_patch`` + ``apply_diff`` + writing the file);
* the same at 10 lines apart, so every hunk's diff block joins the next: 1,000 / 10,000 /
  100,000 hunks (``--big``: 2,000 / 20,000 / 200,000); CPU, wall and peak memory of
  parse+plan+apply, peer whatthepatch;
* SEARCH/REPLACE blocks applied in order: 100 / 1,000 / 10,000 blocks in a file and in a
  notebook that grow with them (``bench_blocks``), peer Aider's exact replace.

Every figure is measured as users run nbedit: history on, in a home that already exists
(a seed file was edited there first, in another process), the target file new to the
history (cold); then the same file edited again in the same process (warm). Each size
runs in a fresh process, so its peak memory is its own: the growth of ``VmHWM`` over the
process right after its imports, as a multiple of the input (the notebook file, or the
patch). A patch size is timed twice against whatthepatch, each side the median of five runs at
1x (for the first of the two, the sides' runs in turn): in a process that has done the same work before (the same patch applied to a copy of the
file in another folder, so the timed file is still new to the history: a kernel after its first
``%%patch``, and what the in-process 918-hunk rows of ``bench_patch`` measure), which carries
the ">= 2x" target; and as the first call of a fresh process, every import on the clock on both
sides (whatthepatch's ``import`` included), which must be faster than the peer. The issue's
memory targets name their sizes (< 3x the patch for 10^5 hunks, < 4x the file from 10^5 cells):
the smaller sizes show their growth without a target, as fixed costs are most of it there. A patch size also gets a second memory figure: the same growth less that of applying
the patch's first hunk alone to the same file (the file as read, modules, SQLite's cache), which
is what the hunks themselves cost. The machine's load average is recorded with every row: on a
shared machine only the ratio to the peer, measured minutes apart in the same run, means much. A notebook row
also splits its plan's wall time into the main thread's time on a CPU and its time waiting
for one (Linux ``schedstat``): on a loaded machine the wait is the whole difference.

    python -m benchmarks.bench_scale [--big] [--json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.bench_notebook import _PEAK as _NOTEBOOK_PEAK
from benchmarks.timing import Row

__all__ = ["run"]

NOTEBOOK_CELLS = (1_000, 10_000, 100_000)
NOTEBOOK_CELLS_BIG = (10_000, 100_000, 1_000_000)
PATCH_HUNKS = (1_000, 10_000, 100_000)
PATCH_HUNKS_BIG = (2_000, 20_000, 200_000)
LINES_PER_HUNK = 20
# the memory targets name their sizes (a 10^5-hunk patch: < 3x the patch; 2x10^5 and 10^6
# cells: < 4x the file); below them the fixed costs (modules imported on the way, OpenSSL, SQLite's
# page cache, thread stacks: ~7 MiB) are most of the growth, shown, with the growth beyond a 1-hunk
# apply beside it for patches
MEMORY_FROM_HUNKS = 100_000
MEMORY_FROM_CELLS = 100_000
_MEMORY_TARGET = "< 3x the patch"
_SMALL_MEMORY = (
    "; no target at this size: the issue's < 3x is for 10^5 hunks and more; here fixed costs dominate"
)
PEER_TIMEOUT = 20.0  # s: whatthepatch is quadratic in hunks (220 s at 100,000), nbformat takes 40 s

# the child's peak memory (VmHWM), as the notebook benchmark reads it
_PEAK = _NOTEBOOK_PEAK + "import json, os, sys, time\n"

_NBEDIT_NOTEBOOK = (
    _PEAK
    + r"""
root, name, home, old, new = sys.argv[1:6]
from nbedit.workspace import Workspace
import nbedit.engine.notebook, nbedit.storage.history  # imports are not the work
def scheduled():
    # this thread's time on a CPU and waiting for one (Linux): what a plan's wall time is made of
    try:
        with open("/proc/thread-self/schedstat") as stat:
            running, waiting = stat.read().split()[:2]
        return int(running) / 1e9, int(waiting) / 1e9
    except (OSError, ValueError):
        return time.thread_time(), 0.0
baseline = peak_kib()
# the --big notebook (10^6 cells, 303 MB) is over the default 256 MiB file limit: raised, as its user
# would (with room for the edit, which makes it 4 bytes longer before the warm edit back)
size = os.path.getsize(os.path.join(root, name))
ran, waited = scheduled()
start = time.perf_counter()
workspace = Workspace(root, history=True, home=home, max_file_size=max(size + 1024, 256 << 20))
plan = workspace.plan_edit(name, old, new)
planned = time.perf_counter() - start
ran, waited = (now - before for now, before in zip(scheduled(), (ran, waited)))
workspace.apply(plan)
cold = time.perf_counter() - start
grown = peak_kib() - baseline
start = time.perf_counter()
workspace.apply(workspace.plan_edit(name, new, old))
warm = time.perf_counter() - start
print(json.dumps({"plan": planned, "plan_cpu": ran, "plan_waiting": waited, "cold": cold, "warm": warm,
                  "grown_kib": grown}))
"""
)

_NBEDIT_CELL_EDITS = (
    _PEAK
    + r"""
root, name, home, patch_path, reverse_path = sys.argv[1:6]
from nbedit.workspace import Workspace
import nbedit.engine.notebook, nbedit.engine.formats.unified, nbedit.storage.history  # not the work
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
with open(reverse_path, encoding="utf-8") as handle:
    reverse = handle.read()
size = os.path.getsize(os.path.join(root, name))
cpu = time.process_time()
start = time.perf_counter()
workspace = Workspace(root, history=True, home=home, max_file_size=max(size, 256 << 20))
plan = workspace.plan_patch(patch)
planned, planned_cpu = time.perf_counter() - start, time.process_time() - cpu
hunks = len(plan.files[0].hunks)
workspace.apply(plan)
cold = time.perf_counter() - start
start = time.perf_counter()
workspace.apply(workspace.plan_patch(reverse))
warm = time.perf_counter() - start
print(json.dumps({"plan": planned, "plan_cpu": planned_cpu, "cold": cold, "warm": warm, "hunks": hunks}))
"""
)

_NBFORMAT = (
    _PEAK
    + r"""
path = sys.argv[1]
import nbformat
baseline = peak_kib()
start = time.perf_counter()
notebook = nbformat.read(path, as_version=4)
nbformat.write(notebook, path)
seconds = time.perf_counter() - start
print(json.dumps({"cold": seconds, "grown_kib": peak_kib() - baseline}))
"""
)

_NBEDIT_PATCH = (
    _PEAK
    + r"""
root, name, home, patch_path, before_path = sys.argv[1:6]
first_cpu, first_start = time.process_time(), time.perf_counter()  # a first call: its imports count
from nbedit.workspace import Workspace
import nbedit.engine.formats.unified, nbedit.storage.history
with open(before_path, "rb") as handle:
    before = handle.read()
baseline = peak_kib()  # the memory rows: what the work holds, beyond the modules every call imports
cpu, start = time.process_time(), time.perf_counter()
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
workspace = Workspace(root, history=True, home=home)
plan = workspace.plan_patch(patch)
planned = time.perf_counter() - start
workspace.apply(plan)
end = time.perf_counter()
cold, first = end - start, end - first_start
cpu, first_cpu = time.process_time() - cpu, time.process_time() - first_cpu
grown = peak_kib() - baseline
with open(os.path.join(root, name), "wb") as handle:  # back to the start: the history knows it now
    handle.write(before)
start = time.perf_counter()
workspace.apply(workspace.plan_patch(patch))
warm = time.perf_counter() - start
print(json.dumps({"plan": planned, "cold": cold, "cpu": cpu, "first": first, "first_cpu": first_cpu,
                  "warm": warm, "grown_kib": grown}))
"""
)

# The same patch in a process that has done this work before: applied first to a copy of the file in
# another folder (so the timed file is still new to the history), as in a kernel after its first
# %%patch, or the in-process rows of bench_patch (best of several, each file new). Any patch (its
# paths relative to a root) goes: the spread rows and the close rows.
_NBEDIT_PATCH_AGAIN = (
    _PEAK
    + r"""
root, home, patch_path, rehearsal_root = sys.argv[1:5]
from nbedit.workspace import Workspace
with open(patch_path, encoding="utf-8") as handle:
    rehearsal = handle.read()
workspace = Workspace(rehearsal_root, history=True, home=home)
workspace.apply(workspace.plan_patch(rehearsal))
del workspace, rehearsal
cpu, start = time.process_time(), time.perf_counter()
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
workspace = Workspace(root, history=True, home=home)
workspace.apply(workspace.plan_patch(patch))
print(json.dumps({"cold": time.perf_counter() - start, "cpu": time.process_time() - cpu}))
"""
)

# The patch reader alone: what parsing holds besides the patch text, as the peak resident memory
# measured from a reset high-water mark (Linux clear_refs; tracemalloc where that is refused).
_NBEDIT_PARSE = (
    _PEAK
    + r"""
patch_path = sys.argv[1]
from nbedit.engine.formats import parse
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
def resident_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
try:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the high-water mark starts again from the resident size
    baseline, measure = resident_kib(), peak_kib
except OSError:
    import tracemalloc
    tracemalloc.start()
    baseline, measure = 0, lambda: tracemalloc.get_traced_memory()[1] // 1024
start = time.perf_counter()
change = parse(patch)
seconds = time.perf_counter() - start
print(json.dumps({"parse": seconds, "grown_kib": measure() - baseline}))
"""
)

_WHATTHEPATCH = (
    _PEAK
    + r"""
path, patch_path, mode = sys.argv[1:4]
def apply(path):
    with open(patch_path, encoding="utf-8") as handle:
        patch = handle.read()
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    diff = next(iter(whatthepatch.parse_patch(patch)))
    lines = whatthepatch.apply_diff(diff, text.split("\n"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
first_cpu, first_start = time.process_time(), time.perf_counter()  # a first call: its import counts
import whatthepatch
if mode == "again":  # the same work done before, on a copy (as the nbedit child does it)
    rehearsal = path + ".rehearsal"
    with open(path, "rb") as source, open(rehearsal, "wb") as copy:
        copy.write(source.read())
    apply(rehearsal)
    os.remove(rehearsal)
baseline = peak_kib()
cpu, start = time.process_time(), time.perf_counter()
apply(path)
end = time.perf_counter()
print(json.dumps({"cold": end - start, "cpu": time.process_time() - cpu, "first": end - first_start,
                  "first_cpu": time.process_time() - first_cpu, "grown_kib": peak_kib() - baseline}))
"""
)


def small_cells_notebook(cells: int, edit_every: int = 0) -> bytes:
    """``cells`` small code cells (about 300 bytes each, one printed line of output), nbformat's layout.

    ``edit_every``: the notebook after ``CELL_EDITS``' change, every such cell's first line edited."""
    parts = []
    for index in range(cells):
        first = f"x_{index} = {index}\n"
        if edit_every and index % edit_every == 0:
            first = f"x_{index} = {index} + 1\n"
        parts.append(
            {
                "cell_type": "code",
                "execution_count": index + 1,
                "id": f"c{index:07d}",
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"value {index}\n"]}],
                "source": [first, f"print(x_{index})"],
            }
        )
    notebook = {
        "cells": parts,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def spread_patch(name: str, hunks: int) -> tuple[bytes, bytes, str]:
    """(before, after, patch): one changed line every ``LINES_PER_HUNK`` lines, three lines of context."""
    return close_patch(name, hunks, LINES_PER_HUNK)


CLOSE_HUNKS = (1_000, 10_000, 100_000)
CLOSE_HUNKS_BIG = (2_000, 20_000, 200_000)
CLOSE_APART = 10  # lines from one changed line to the next: each hunk's context touches the next one's

# parse+plan+apply of a patch whose hunks join into one diff block: the history's +/- counts
# align that block (quadratic before issue 27: 1,000 hunks took 2.3 s of CPU, 200,000 never ended)
_NBEDIT_CLOSE = (
    _PEAK
    + r"""
root, home, patch_path = sys.argv[1:4]
first_cpu, first_start = time.process_time(), time.perf_counter()  # a first call: its imports count
from nbedit.workspace import Workspace
import nbedit.engine.formats.unified, nbedit.storage.history
baseline = peak_kib()  # the memory row: what the work holds, beyond the modules every call imports
cpu, start = time.process_time(), time.perf_counter()
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
workspace = Workspace(root, history=True, home=home)
plan = workspace.plan_patch(patch)
planned = time.process_time() - cpu
workspace.apply(plan)
end = time.perf_counter()
print(json.dumps({"plan_cpu": planned, "cpu": time.process_time() - cpu, "cold": end - start,
                  "first": end - first_start, "first_cpu": time.process_time() - first_cpu,
                  "grown_kib": peak_kib() - baseline}))
"""
)


def close_patch(name: str, hunks: int, apart: int = CLOSE_APART) -> tuple[bytes, bytes, str]:
    """(before, after, patch): one changed line every ``apart`` lines, each its own hunk with
    three lines of context; at 10 lines apart the hunks' diff blocks join into one."""
    lines = [f"value_{number} = compute({number}, scale=2)\n" for number in range(hunks * apart)]
    after = list(lines)
    parts = [f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n"]
    for hunk in range(hunks):
        changed = hunk * apart + apart // 2
        after[changed] = f"value_{changed} = compute({changed}, scale=3)\n"
        first = changed - 3
        parts.append(f"@@ -{first + 1},7 +{first + 1},7 @@\n")
        parts.extend(" " + line for line in lines[first:changed])
        parts.append("-" + lines[changed])
        parts.append("+" + after[changed])
        parts.extend(" " + line for line in lines[changed + 1 : changed + 4])
    return "".join(lines).encode(), "".join(after).encode(), "".join(parts)


def _close_rows(scratch: Path, home: str, sizes: tuple[int, ...]) -> list[Row]:
    rows: list[Row] = []
    for scale, hunks in zip(("1x", "10x", "100x"), sizes, strict=False):
        name = f"close-{hunks}.py"
        before, after, patch = close_patch(name, hunks)
        patch_path = scratch / f"{name}.diff"
        patch_path.write_text(patch, encoding="utf-8")
        load = _load()
        runs, correct = [], True
        for run in range(_repeats(hunks)):
            work = scratch / f"close-{hunks}-{run}"
            work.mkdir()
            (work / name).write_bytes(before)
            runs.append(_child(_NBEDIT_CLOSE, str(work), home, str(patch_path)))
            correct = correct and (work / name).read_bytes() == after
        ours = _median(runs, "first")
        target = scratch / f"close-{hunks}-0" / name
        again, peer, peer_again = _again(
            scratch, home, name, before, after, patch_path, f"close-{hunks}", _repeats(hunks), target
        )
        size = len(patch.encode())
        section = f"scale: {hunks:,} close hunks, {CLOSE_APART} lines apart ({size / 1e6:.1f} MB, {scale})"
        note = f"{load}; plan {ours['plan_cpu']:.2f} s CPU" + ("" if correct else "; result WRONG")
        rows.extend(_speed_rows(section, ours, again, peer, peer_again, note))
        rows.append(
            Row(
                section,
                "peak memory growth, x the patch",
                ours["grown_kib"] * 1024 / size,
                "x patch",
                "whatthepatch",
                peer["grown_kib"] * 1024 / size if "grown_kib" in peer else None,
                _MEMORY_TARGET if hunks >= MEMORY_FROM_HUNKS else "-",
                ours["grown_kib"] * 1024 < 3 * size if hunks >= MEMORY_FROM_HUNKS else None,
                note=_SMALL_MEMORY.removeprefix("; ") if hunks < MEMORY_FROM_HUNKS else "",
            )
        )
    return rows


def _child(script: str, *arguments: str, timeout: float | None = None) -> dict[str, float]:
    """The child's figures; for a peer stopped after ``timeout`` s, ``{"stopped": timeout}``."""
    try:
        finished = subprocess.run(
            [sys.executable, "-c", script, *arguments],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"stopped": float(timeout or 0)}
    if finished.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{finished.stderr[-3000:]}")
    return json.loads(finished.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _stopped(peer: dict[str, float]) -> str:
    return f"; peer stopped after {peer['stopped']:.0f} s (so slower than that)" if "stopped" in peer else ""


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""


def _seed_home(scratch: Path, name: str = "home") -> str:
    """A home that exists, with a history in it (another file edited in another process: what a
    user's is): the rows edit files new to it. ``name``: the home's folder in ``scratch``."""
    home = scratch / name
    seed = scratch / "seed"
    seed.mkdir()
    (seed / "seed.txt").write_text("a\n")
    script = (
        "import sys\nfrom nbedit.workspace import Workspace\n"
        "w = Workspace(sys.argv[1], history=True, home=sys.argv[2])\n"
        "w.apply(w.plan_edit('seed.txt', 'a', 'b'))\n"
    )
    subprocess.run([sys.executable, "-c", script, str(seed), str(home)], check=True)
    return str(home)


def _notebook_rows(scratch: Path, home: str, sizes: tuple[int, ...]) -> list[Row]:
    rows: list[Row] = []
    work = scratch / "notebooks"
    work.mkdir()
    for scale, cells in zip(("1x", "10x", "100x"), sizes, strict=False):
        data = small_cells_notebook(cells)
        name = f"cells-{cells}.ipynb"
        path = work / name
        path.write_bytes(data)
        edited = cells // 2
        old, new = f"x_{edited} = {edited}\n", f"x_{edited} = {edited} + 1\n"
        load = _load()
        ours = _child(_NBEDIT_NOTEBOOK, str(work), name, home, old, new)
        correct = path.read_bytes() == data
        path.write_bytes(data)
        peer = _child(_NBFORMAT, str(path), timeout=PEER_TIMEOUT)
        section = f"scale: notebook of {cells:,} small cells ({len(data) / 1e6:.1f} MB), {scale}"
        # on a shared machine the plan's wall time is its time on a CPU plus its wait for one
        # (the main thread never waits for the disk there): both are shown
        plan = f"plan {ours['plan']:.2f} s (main thread on a CPU {ours['plan_cpu']:.2f} s"
        plan += f", waiting for a CPU {ours['plan_waiting']:.2f} s)" if ours["plan_waiting"] else ")"
        note = f"{load}; {plan}" + ("" if correct else "; result WRONG") + _stopped(peer)
        target = "< 1 s per 100,000 cells, linear"
        rows.append(
            Row(
                section,
                "one cell edit, history on, existing home, file new (cold)",
                ours["cold"],
                "s",
                "nbformat read+write",
                peer.get("cold"),
                target,
                ours["plan"] <= max(1.0, cells / 100_000) and correct,
                note,
            )
        )
        rows.append(Row(section, "the same edit again, warm", ours["warm"], "s", note=_load()))
        rows.append(
            Row(
                section,
                "peak memory growth, x the file",
                ours["grown_kib"] * 1024 / len(data),
                "x file",
                "nbformat read+write",
                peer["grown_kib"] * 1024 / len(data) if "grown_kib" in peer else None,
                "< 4x the file" if cells >= MEMORY_FROM_CELLS else "-",
                ours["grown_kib"] * 1024 < 4 * len(data) if cells >= MEMORY_FROM_CELLS else None,
                note=""
                if cells >= MEMORY_FROM_CELLS
                else "no target at this size: the issue's < 4x is for 10^5 cells and more; here fixed costs "
                "(modules, SQLite's page cache, thread stacks: ~7 MiB) dominate",
            )
        )
    return rows


CELL_EDIT_EVERY = 10


def _cell_edit_rows(scratch: Path, home: str, sizes: tuple[int, ...]) -> list[Row]:
    """Every tenth cell edited, as one unified diff of the cell view: hunks and cells grow together."""
    from nbedit.engine.whole_diff import text_diff
    from nbedit.workspace import Workspace

    rows: list[Row] = []
    work = scratch / "cell-edits"
    work.mkdir()
    for scale, cells in zip(("1x", "10x", "100x"), sizes, strict=False):
        data = small_cells_notebook(cells)
        expected = small_cells_notebook(cells, CELL_EDIT_EVERY)
        name = f"edits-{cells}.ipynb"
        path = work / name
        path.write_bytes(expected)
        edited_view = Workspace(work, history=False, max_file_size=max(len(expected), 256 << 20)).view(name)
        path.write_bytes(data)
        view = Workspace(work, history=False, max_file_size=max(len(data), 256 << 20)).view(name)
        patch_path, reverse_path = scratch / f"{name}.diff", scratch / f"{name}.reverse.diff"
        patch_path.write_text(text_diff(view, edited_view, name), encoding="utf-8")
        reverse_path.write_text(text_diff(edited_view, view, name), encoding="utf-8")
        load = _load()
        ours = _child(_NBEDIT_CELL_EDITS, str(work), name, home, str(patch_path), str(reverse_path))
        correct = path.read_bytes() == data  # edited, then edited back
        hunks = int(ours["hunks"])
        section = f"scale: notebook of {cells:,} small cells, {hunks:,} cell edits in one view diff, {scale}"
        note = f"{load}; plan {ours['plan']:.2f} s (CPU {ours['plan_cpu']:.2f} s)"
        note += "" if correct and hunks == -(-cells // CELL_EDIT_EVERY) else "; result WRONG"
        rows.append(
            Row(
                section,
                "parse+plan+apply, history on, existing home, file new (cold)",
                ours["cold"],
                "s",
                target="linear: < 1 s per 1,000 cell edits",
                passed=ours["plan_cpu"] <= max(1.0, hunks / 1_000) and correct,
                note=note,
            )
        )
        rows.append(Row(section, "the reverse diff, warm", ours["warm"], "s", note=_load()))
    return rows


def _patch_child(
    scratch: Path, work: Path, home: str, hunks: int, *, first_only: bool = False
) -> tuple[bytes, bytes, str, dict[str, float]]:
    """(before, after, patch, the ``_NBEDIT_PATCH`` child's figures) for a spread patch of ``hunks``;
    ``first_only``: the child applies only the patch's first hunk, to the same file."""
    name = f"spread-{hunks}.py"
    before, after, patch = spread_patch(name, hunks)
    if first_only:
        second = patch.find("\n@@ ", patch.index("\n@@ ") + 1)
        patch = patch if second == -1 else patch[: second + 1]
    patch_path = scratch / f"{name}.diff"
    patch_path.write_text(patch, encoding="utf-8")
    before_path = scratch / f"{name}.before"
    before_path.write_bytes(before)
    (work / name).write_bytes(before)
    figures = _child(_NBEDIT_PATCH, str(work), name, home, str(patch_path), str(before_path))
    return before, after, patch, figures


def _median(runs: list[dict[str, float]], key: str) -> dict[str, float]:
    """The run whose ``key`` is the median (a peer stopped in any run: stopped)."""
    stopped = [run for run in runs if "stopped" in run]
    if stopped:
        return stopped[0]
    return sorted(runs, key=lambda run: run[key])[len(runs) // 2]


def _repeats(hunks: int) -> int:
    """Runs a size gets (the median is shown): a 1x run takes tens of milliseconds, where one
    scheduling hiccup on a shared machine is the whole difference; the big sizes run once."""
    return 5 if hunks <= 2_000 else 1


def _again(
    scratch: Path,
    home: str,
    name: str,
    before: bytes,
    after: bytes,
    patch_path: Path,
    tag: str,
    repeats: int,
    target: Path,
) -> tuple[dict, dict, dict]:
    """(ours, whatthepatch first, whatthepatch again): ``_NBEDIT_PATCH_AGAIN``'s figures (the median of
    ``repeats`` runs, and whether every run wrote ``after``: each run's file is new to the history, in a
    folder of its own) and whatthepatch's, "first" (a fresh process, its import timed) and "again" (after
    the same work on a copy). The "again" runs of both sides, which carry the ">= 2x" target, go in
    turn, one of each per round and the order alternating: a slow stretch of a shared machine then
    falls on both sides of the ratio, not on one side's five runs."""
    peer = _peer(target, before, patch_path, "first", repeats)
    runs, peer_runs, correct = [], [], True
    for run in range(repeats):
        root, rehearsal = scratch / f"{tag}-again-{run}", scratch / f"{tag}-rehearsal-{run}"
        for folder in (root, rehearsal):
            folder.mkdir()
            (folder / name).write_bytes(before)
        sides = ["ours", "peer"] if "stopped" not in peer else ["ours"]
        for side in sides if run % 2 == 0 else sides[::-1]:
            if side == "ours":
                runs.append(_child(_NBEDIT_PATCH_AGAIN, str(root), home, str(patch_path), str(rehearsal)))
                correct = correct and (root / name).read_bytes() == after
                correct = correct and (rehearsal / name).read_bytes() == after
            else:
                target.write_bytes(before)
                peer_runs.append(
                    _child(_WHATTHEPATCH, str(target), str(patch_path), "again", timeout=PEER_TIMEOUT)
                )
    peer_again = _median(peer_runs, "cold") if peer_runs else {}
    return {**_median(runs, "cold"), "correct": correct}, peer, peer_again


def _peer(target: Path, before: bytes, patch_path: Path, mode: str, repeats: int) -> dict[str, float]:
    """whatthepatch's figures, ``mode`` "first" (a fresh process, its import timed) or "again" (after
    the same work on a copy): the median of ``repeats`` runs, each on the file as it was before."""
    runs = []
    for _ in range(repeats):
        target.write_bytes(before)
        runs.append(_child(_WHATTHEPATCH, str(target), str(patch_path), mode, timeout=PEER_TIMEOUT))
        if "stopped" in runs[-1]:
            break
    return _median(runs, "first" if mode == "first" else "cold")


def _speed_rows(section: str, ours: dict, again: dict, peer: dict, peer_again: dict, note: str) -> list[Row]:
    """A patch size's two speed rows against whatthepatch: the process has done this work before
    (what the in-process 918-hunk row measures; the target), and a fresh process's first call,
    every import on the clock on both sides."""
    stopped = _stopped(peer)
    cpu = f"; CPU {again['cpu'] * 1e3:.0f} ms"
    if "cpu" in peer_again:
        cpu += f" vs whatthepatch {peer_again['cpu'] * 1e3:.0f} ms ({peer_again['cpu'] / again['cpu']:.2f}x)"
    first_cpu = f"; CPU {ours['first_cpu'] * 1e3:.0f} ms"
    if "first_cpu" in peer:
        first_cpu += f" vs whatthepatch {peer['first_cpu'] * 1e3:.0f} ms ({peer['first_cpu'] / ours['first_cpu']:.2f}x)"
    # a peer stopped by its timeout took longer than that: the bound is its value (the "again" run
    # of a peer stopped in its first call is not made: it would do that work twice)
    peer_value = peer_again.get("cold", peer_again.get("stopped", peer.get("stopped")))
    return [
        Row(
            section,
            "parse+plan+apply, history on, existing home, file new, in a process that did this before",
            again["cold"],
            "s",
            "whatthepatch",
            peer_again.get("cold"),
            ">= 2x whatthepatch",
            bool(peer_value) and again["cold"] * 2 <= peer_value and again["correct"],
            note + cpu + ("" if again["correct"] else "; result WRONG") + stopped,
        ),
        Row(
            section,
            "the same, first call in a fresh process (imports timed on both sides)",
            ours["first"],
            "s",
            "whatthepatch",
            peer.get("first"),
            "faster than whatthepatch",
            ours["first"] < peer.get("first", peer.get("stopped", 0)),
            note + first_cpu + stopped,
        ),
    ]


def _patch_rows(scratch: Path, home: str, sizes: tuple[int, ...]) -> list[Row]:
    rows: list[Row] = []
    for scale, hunks in zip(("1x", "10x", "100x"), sizes, strict=False):
        work = scratch / f"patches-{hunks}"
        work.mkdir()
        # what the same apply costs whatever the patch (the file held as read, modules imported on
        # the way such as OpenSSL's hashing, SQLite's cache, thread stacks): its first hunk alone
        alone = _patch_child(scratch, work, home, hunks, first_only=True)[3]["grown_kib"]
        load = _load()
        runs = []
        for run in range(_repeats(hunks)):
            folder = work / f"fresh-{run}"
            folder.mkdir()
            before, after, patch, figures = _patch_child(scratch, folder, home, hunks)
            runs.append({**figures, "correct": (folder / f"spread-{hunks}.py").read_bytes() == after})
        ours = _median(runs, "first")
        correct = all(run["correct"] for run in runs)  # each run's warm apply left the patched file
        name = f"spread-{hunks}.py"
        patch_path = scratch / f"{name}.diff"
        target = work / name
        again, peer, peer_again = _again(
            scratch, home, name, before, after, patch_path, f"spread-{hunks}", _repeats(hunks), target
        )
        # the target holds what whatthepatch's last run wrote (ours run in folders of their own)
        peer_correct = "stopped" in peer or target.read_bytes().rstrip(b"\n") == after.rstrip(b"\n")
        size = len(patch.encode())
        megabytes = f"{size / 1e6:.1f} MB) on {len(before) / 1e6:.1f} MB"
        section = f"scale: patch of {hunks:,} hunks ({megabytes}, {scale}"
        note = f"{load}; plan {ours['plan']:.2f} s" + ("" if correct else "; result WRONG")
        if not peer_correct:
            note += "; whatthepatch result wrong"
        rows.extend(_speed_rows(section, ours, again, peer, peer_again, note))
        rows.append(Row(section, "the same patch again, warm", ours["warm"], "s", note=_load()))
        rows.append(
            Row(
                section,
                "peak memory growth, x the patch",
                ours["grown_kib"] * 1024 / size,
                "x patch",
                "whatthepatch",
                peer["grown_kib"] * 1024 / size if "grown_kib" in peer else None,
                _MEMORY_TARGET if hunks >= MEMORY_FROM_HUNKS else "-",
                ours["grown_kib"] * 1024 < 3 * size if hunks >= MEMORY_FROM_HUNKS else None,
                note=f"the file is {len(before) / size:.1f}x the patch: from 16 MiB it is never held (read in "
                "chunks, proved unchanged by its SHA-256), below that held once, as read (from 4 MiB its new "
                "bytes are written piece by piece); a big patch's hunks are places in its text; the child's "
                "own read of the patch (its bytes decoded: 2x the patch for a moment) counts"
                + (_SMALL_MEMORY if hunks < MEMORY_FROM_HUNKS else ""),
            )
        )
        rows.append(
            Row(
                section,
                "peak memory growth beyond a 1-hunk patch's of the same file, x the patch",
                (ours["grown_kib"] - alone) * 1024 / size,
                "x patch",
                note=f"the row above less the growth of applying the patch's first hunk alone "
                f"({alone / 1024:.1f} MiB: imports, OpenSSL's hashing, SQLite's cache, thread stacks, and "
                "the file as read when it is under 16 MiB): what the hunks (and the child's read of the "
                "patch) cost",
            )
        )
        parsed = _child(_NBEDIT_PARSE, str(patch_path))
        rows.append(
            Row(
                section,
                "the patch reader alone: peak memory growth while parsing, x the patch",
                parsed["grown_kib"] * 1024 / size,
                "x patch",
                target=_MEMORY_TARGET if hunks >= MEMORY_FROM_HUNKS else "-",
                passed=parsed["grown_kib"] * 1024 < 3 * size if hunks >= MEMORY_FROM_HUNKS else None,
                note=f"parse {parsed['parse']:.2f} s; {_load()}",
            )
        )
    return rows


def run(scratch: Path, repeat: int = 5, *, big: bool | None = None) -> list[Row]:
    """The scaling rows; ``big`` (default: ``NBEDIT_BENCH_BIG=1``) runs the biggest sizes."""
    del repeat  # one run per size: each is a fresh process, and 100x runs for seconds
    if big is None:
        big = os.environ.get("NBEDIT_BENCH_BIG") == "1"
    home = _seed_home(scratch)
    rows = _notebook_rows(scratch, home, NOTEBOOK_CELLS_BIG if big else NOTEBOOK_CELLS)
    rows += _cell_edit_rows(scratch, home, NOTEBOOK_CELLS_BIG if big else NOTEBOOK_CELLS)
    rows += _patch_rows(scratch, home, PATCH_HUNKS_BIG if big else PATCH_HUNKS)
    rows += _close_rows(scratch, home, CLOSE_HUNKS_BIG if big else CLOSE_HUNKS)
    from benchmarks.bench_blocks import run as blocks  # its own module (it builds on this one's helpers)

    rows += blocks(scratch)
    return rows


if __name__ == "__main__":
    import argparse
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.timing import format_table

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale")
    parser.add_argument("--big", action="store_true", help="10x every size (a 1,000,000-cell notebook)")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nbedit-scale-") as folder:
        result = run(Path(folder), big=arguments.big)
    if arguments.json:
        print(json.dumps([row.as_json() for row in result], indent=2))
    else:
        print(format_table(result))
