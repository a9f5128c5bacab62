"""Section: scale, many SEARCH/REPLACE blocks. 1x, 10x and 100x blocks and text together, so the growth shows.

Blocks apply in order, each to the text the blocks before it left. Located by searching the
whole text per block, that is blocks x characters: 1,000 blocks in a 20,000-cell notebook took
18 s before issue 27's fourth round. Three rows, each at 100 / 1,000 / 10,000 blocks:

* a Python file of 20 lines per block (2,000 / 20,000 / 200,000 lines), every block changing
  one line with the line after it as context; peer: Aider's exact block replacement
  (``aider_replace``, re-implemented), stopped after ``PEER_TIMEOUT`` s;
* the same file with CRLF lines and the same (LF) blocks, as models write them for a Windows
  file: placed by the line-endings tier; no peer (Aider's exact step does not match them);
* a notebook of small cells (``bench_scale.small_cells_notebook``: 2,000 / 20,000 / 200,000
  cells), every twentieth cell's first line changed by a block; no peer edits a notebook's
  cells from SEARCH/REPLACE blocks.

Measured as users run nbedit: parse+plan+apply in a fresh process, history on, in a home that
already exists, the file new to the history; CPU time (``process_time``) is the steady figure,
wall time and the load average beside it. Each child runs in the scratch folder, so the
``nbedit`` it imports is the one ``PYTHONPATH`` names (an A/B run of two checkouts runs this
same file with each).

    python -m benchmarks.bench_blocks [--json]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.bench_scale import _PEAK, _load, _seed_home, small_cells_notebook
from benchmarks.timing import Row

__all__ = ["run"]

BLOCKS = (100, 1_000, 10_000)
LINES_PER_BLOCK = 20
CELLS_PER_BLOCK = 20
PEER_TIMEOUT = 20.0  # s: Aider's exact step walks every line per block (10,000 blocks: hours)
REPO = Path(__file__).resolve().parent.parent

_NBEDIT_BLOCKS = (
    _PEAK
    + r"""
root, home, patch_path = sys.argv[1:4]
from nbedit.workspace import Workspace
from nbedit.errors import FileTooLarge
import nbedit.engine.notebook, nbedit.engine.formats, nbedit.storage.history  # imports are not the work
baseline = peak_kib()
cpu, start = time.process_time(), time.perf_counter()
with open(patch_path, encoding="utf-8") as handle:
    patch = handle.read()
workspace = Workspace(root, history=True, home=home)
try:
    plan = workspace.plan_patch(patch)
except FileTooLarge as error:  # the limit of the text searched per block
    print(json.dumps({"refused": error.unit, "cpu": time.process_time() - cpu}))
    raise SystemExit(0)
planned = time.process_time() - cpu
workspace.apply(plan)
print(json.dumps({"plan_cpu": planned, "cpu": time.process_time() - cpu, "cold": time.perf_counter() - start,
                  "grown_kib": peak_kib() - baseline}))
"""
)

_AIDER = (
    _PEAK
    + r"""
repo, path, blocks_path = sys.argv[1:4]
sys.path.insert(0, repo)
from benchmarks.aider_replace import apply_blocks
cpu, start = time.process_time(), time.perf_counter()
with open(blocks_path, encoding="utf-8") as handle:
    blocks = json.load(handle)
with open(path, encoding="utf-8") as handle:
    content = handle.read()
content = apply_blocks(content, blocks)
with open(path, "w", encoding="utf-8") as handle:
    handle.write(content)
print(json.dumps({"cpu": time.process_time() - cpu, "cold": time.perf_counter() - start}))
"""
)


def python_blocks(blocks: int) -> tuple[str, str, list[tuple[str, str]]]:
    """(before, after, blocks): ``LINES_PER_BLOCK`` lines per block, each block one changed line
    and the line after it."""
    lines = [f"value_{n} = compute({n}, scale=2)\n" for n in range(blocks * LINES_PER_BLOCK)]
    after = list(lines)
    pairs = []
    for block in range(blocks):
        changed = block * LINES_PER_BLOCK + LINES_PER_BLOCK // 2
        after[changed] = f"value_{changed} = compute({changed}, scale=3)\n"
        pairs.append((lines[changed] + lines[changed + 1], after[changed] + lines[changed + 1]))
    return "".join(lines), "".join(after), pairs


def notebook_blocks(blocks: int) -> list[tuple[str, str]]:
    """Every ``CELLS_PER_BLOCK``-th cell's first line of ``small_cells_notebook`` changed."""
    pairs = []
    for block in range(blocks):
        index = block * CELLS_PER_BLOCK
        pairs.append((f"x_{index} = {index}\n", f"x_{index} = {index} + 1\n"))
    return pairs


def reply(path: str, pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n" for old, new in pairs)
    return f"{path}\n```\n{body}```\n"


def _child(scratch: Path, script: str, *arguments: str, timeout: float | None = None) -> dict[str, float]:
    try:
        finished = subprocess.run(
            [sys.executable, "-c", script, *arguments],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            cwd=scratch,  # the nbedit imported is PYTHONPATH's, not a checkout in the working folder
        )
    except subprocess.TimeoutExpired:
        return {"stopped": float(timeout or 0)}
    if finished.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{finished.stderr[-3000:]}")
    return json.loads(finished.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _row(
    section: str, blocks: int, ours: dict[str, float], correct: bool, load: str, peer: dict[str, float] | None
) -> Row:
    if "refused" in ours:
        note = f"{load}; refused ({ours['refused']} limit) after {ours['cpu']:.2f} s CPU"
        return Row(
            section, "parse+plan+apply, history on, existing home, file new: CPU", None, "s", note=note
        )
    note = f"{load}; wall {ours['cold']:.2f} s; plan {ours['plan_cpu']:.2f} s CPU" + (
        "" if correct else "; result WRONG"
    )
    note += f"; peak memory +{ours['grown_kib'] / 1024:.0f} MB"
    if peer is not None and "stopped" in peer:
        note += f"; peer stopped after {peer['stopped']:.0f} s (so slower than that)"
    return Row(
        section,
        "parse+plan+apply, history on, existing home, file new: CPU",
        ours["cpu"],
        "s",
        "Aider's exact replace (CPU)" if peer is not None else "",
        None if peer is None else peer.get("cpu"),
        "linear: < 1 s CPU per 1,000 blocks",
        ours["cpu"] <= max(1.0, blocks / 1_000) and correct,
        note,
    )


def run(scratch: Path, repeat: int = 5, *, sizes: tuple[int, ...] = BLOCKS) -> list[Row]:
    del repeat  # one run per size: each is a fresh process
    home = _seed_home(scratch) if not (scratch / "home").exists() else str(scratch / "home")
    rows: list[Row] = []
    work = scratch / "blocks"
    work.mkdir(exist_ok=True)
    for scale, blocks in zip(("1x", "10x", "100x"), sizes, strict=False):
        name = f"blocks-{blocks}.py"
        before, after, pairs = python_blocks(blocks)
        target = work / name
        patch_path = scratch / f"{name}.reply"
        patch_path.write_text(reply(name, pairs), encoding="utf-8")
        (scratch / f"{name}.json").write_text(json.dumps(pairs), encoding="utf-8")
        target.write_text(before, encoding="utf-8")
        load = _load()
        ours = _child(scratch, _NBEDIT_BLOCKS, str(work), home, str(patch_path))
        correct = target.read_text(encoding="utf-8") == after
        target.write_text(before, encoding="utf-8")
        peer = _child(
            scratch, _AIDER, str(REPO), str(target), str(scratch / f"{name}.json"), timeout=PEER_TIMEOUT
        )
        lines = blocks * LINES_PER_BLOCK
        section = f"scale: {blocks:,} SEARCH/REPLACE blocks in a {lines:,}-line file ({len(before) / 1e6:.1f} MB, {scale})"
        rows.append(_row(section, blocks, ours, correct, load, peer))
    for scale, blocks in zip(("1x", "10x", "100x"), sizes, strict=False):
        # the same blocks (LF, as models write them) for the file with CRLF lines: the line-endings tier
        name = f"blocks-{blocks}-crlf.py"
        before, after, pairs = python_blocks(blocks)
        before_crlf, after_crlf = before.replace("\n", "\r\n"), after.replace("\n", "\r\n")
        target = work / name
        target.write_bytes(before_crlf.encode())
        patch_path = scratch / f"{name}.reply"
        patch_path.write_text(reply(name, pairs), encoding="utf-8")
        load = _load()
        ours = _child(scratch, _NBEDIT_BLOCKS, str(work), home, str(patch_path))
        correct = target.read_bytes() == after_crlf.encode()
        lines = blocks * LINES_PER_BLOCK
        section = f"scale: {blocks:,} SEARCH/REPLACE blocks (LF) in a {lines:,}-line CRLF file ({scale})"
        rows.append(_row(section, blocks, ours, correct, load, None))
    for scale, blocks in zip(("1x", "10x", "100x"), sizes, strict=False):
        cells = blocks * CELLS_PER_BLOCK
        name = f"blocks-{cells}.ipynb"
        data = small_cells_notebook(cells)
        target = work / name
        target.write_bytes(data)
        patch_path = scratch / f"{name}.reply"
        patch_path.write_text(reply(name, notebook_blocks(blocks)), encoding="utf-8")
        load = _load()
        ours = _child(scratch, _NBEDIT_BLOCKS, str(work), home, str(patch_path))
        edited = target.read_bytes()
        correct = "refused" in ours or (
            edited.count(b" + 1") == blocks and len(edited) == len(data) + 4 * blocks
        )
        section = f"scale: {blocks:,} SEARCH/REPLACE blocks in a notebook of {cells:,} small cells ({scale})"
        rows.append(_row(section, blocks, ours, correct, load, None))
    return rows


if __name__ == "__main__":
    import argparse
    import tempfile

    sys.path.insert(0, str(REPO))
    from benchmarks.timing import format_table

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_blocks")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sizes", default=",".join(map(str, BLOCKS)), help="blocks at 1x,10x,100x")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nbedit-blocks-") as folder:
        result = run(Path(folder), sizes=tuple(int(size) for size in arguments.sizes.split(",")))
    if arguments.json:
        print(json.dumps([row.as_json() for row in result], indent=2))
    else:
        print(format_table(result))
