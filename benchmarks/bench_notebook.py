"""Section: notebooks. One cell edited in a 50 MB, 2,000-cell notebook, end to end.

Two notebooks of the same size: image-heavy (modest sources, base64 PNG outputs)
and text-heavy (long printed outputs, as a training loop or a data dump leaves).
nbedit runs with its history on, as users run it, in a home that already exists
(made before the timed process starts, as every edit after a user's first finds
it): the first edit of a file the history has not seen stores the whole notebook
as a keyframe. The edit and the peer (``nbformat.read`` + ``nbformat.write``
of the same file, the round trip most tools do to change one cell) each start from
the notebook as Jupyter's save leaves it (written and flushed: ``_saved``) and run in a
fresh subprocess, so its peak memory is its own: ``VmHWM`` from
``/proc/self/status`` (``ru_maxrss`` is not used: Linux carries it over from the
parent through ``exec``, so a child of this big benchmark process would report
the parent's peak). The figure is the growth over the same process right after
its imports, in multiples of the file size. The nbedit edit runs three times in its
process: the first (cold) pays one-time imports and hashes the whole file; the
second (warm) is what every later edit in a kernel costs (it starts from what the
first one knew: ``engine.notebook.successor``, ``engine.digest``); the peak over all
three is reported too. CPU time (``time.process_time``, both cores) is reported
beside the wall time: on a shared machine it is the steady figure. The cell view is
timed in process.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.timing import Row

__all__ = ["run"]

CELLS = 2_000
IMAGE_BYTES = 20_500  # base64 makes ~27 KB per cell: ~50 MB in all
NAME = "big.ipynb"
EDITED_CELL = 1_234
TEXT_LINES = 480  # printed lines per cell of the text-heavy notebook: ~50 MB in all
KINDS = ("image", "text")

_PEAK = r"""
import resource
def peak_kib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

_EDIT_SCRIPT = (
    _PEAK
    + r"""
import json, sys, time
root, name, old, new, home, history = sys.argv[1:7]
from nbedit.workspace import Workspace
baseline = peak_kib()
start, cpu = time.perf_counter(), time.process_time()
workspace = Workspace(root, history=history == "on", home=home)
workspace.apply(workspace.plan_edit(name, old, new))
cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
grown = peak_kib() - baseline
start, cpu = time.perf_counter(), time.process_time()
workspace.apply(workspace.plan_edit(name, new, old + "  # again"))
warm, warm_cpu = time.perf_counter() - start, time.process_time() - cpu
workspace.apply(workspace.plan_edit(name, old + "  # again", new))
print(json.dumps({"seconds": cold, "warm": warm, "grown_kib": grown, "cpu": cold_cpu, "warm_cpu": warm_cpu,
                  "grown_all_kib": peak_kib() - baseline}))
"""
)

_NBFORMAT_SCRIPT = (
    _PEAK
    + r"""
import json, sys, time
root, name = sys.argv[1:3]
import nbformat
baseline = peak_kib()
start = time.perf_counter()
path = root + "/" + name
notebook = nbformat.read(path, as_version=4)
notebook.cells[1234].source += "\n# edited"
nbformat.write(notebook, path)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "grown_kib": peak_kib() - baseline}))
"""
)


def make_notebook(path: Path, kind: str = "image") -> None:
    """A 2,000-cell notebook of about 50 MB: ``image`` outputs (base64 PNG) or ``text`` outputs."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    rng = random.Random(11)
    cells = []
    for number in range(CELLS):
        if number % 10 == 0:
            cells.append(
                new_markdown_cell(f"## Step {number}\n\nWhat the next cells compute, part {number}.")
            )
            continue
        source = "\n".join(
            [
                f"# cell {number}",
                f"frame_{number} = load_frame('data/{number}.csv')",
                f"total_{number} = frame_{number}.sum()",
            ]
            + [f"plot(frame_{number}, column={rng.randint(0, 99)})" for _ in range(3)]
        )
        if kind == "image":
            image = base64.b64encode(rng.randbytes(IMAGE_BYTES)).decode()
            outputs = [
                new_output("stream", name="stdout", text=f"rows: {rng.randint(1, 10**6)}\n"),
                new_output("display_data", data={"image/png": image, "text/plain": "<Figure>"}),
            ]
        else:
            printed = "".join(
                f"epoch {number} step {step:4d} loss {rng.random():.6f} accuracy {rng.random():.4f}\n"
                for step in range(TEXT_LINES)
            )
            outputs = [new_output("stream", name="stdout", text=printed)]
        cells.append(new_code_cell(source, outputs=outputs, execution_count=number))
    notebook = new_notebook(cells=cells)
    path.write_text(nbformat.writes(notebook), encoding="utf-8")


def _subprocess(script: str, *arguments: str) -> dict[str, float]:
    repository = str(Path(__file__).resolve().parent.parent)
    finished = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "PYTHONPATH": repository},
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(scratch: Path, repeat: int = 3) -> list[Row]:
    rows: list[Row] = []
    for kind in KINDS:
        rows.extend(_edit_rows(scratch / kind, kind))
    rows.append(_view_row(scratch / KINDS[0], repeat))
    return rows


def _edit_rows(folder: Path, kind: str) -> list[Row]:
    folder.mkdir()
    section = f"notebook {CELLS:,} cells, {kind}-heavy"
    path = folder / NAME
    make_notebook(path, kind)
    size = path.stat().st_size
    original = path.read_bytes()
    old = f"total_{EDITED_CELL} = frame_{EDITED_CELL}.sum()"
    new = f"total_{EDITED_CELL} = frame_{EDITED_CELL}.mean()"

    edits: list[dict[str, float]] = []
    edits_off: list[dict[str, float]] = []
    peers: list[dict[str, float]] = []
    edit_ok = True
    for number in range(3):  # interleaved, so a burst of load on the machine hits every tool alike
        for history, results in (("on", edits), ("off", edits_off)):
            _saved(path, original)
            home = str(folder / f"home-{history}-{number}")  # the file is new to it: stored as a keyframe
            if history == "on":
                _existing_home(home)
            results.append(_subprocess(_EDIT_SCRIPT, str(folder), NAME, old, new, home, history))
            edited = path.read_bytes()
            edit_ok = edit_ok and edited == original.replace(old.encode(), new.encode(), 1)
        _saved(path, original)
        peers.append(_subprocess(_NBFORMAT_SCRIPT, str(folder), NAME))
    path.write_bytes(original)
    best_edit = min(edits, key=lambda item: item["seconds"])
    best_off = min(edits_off, key=lambda item: item["seconds"])
    best_peer = min(peers, key=lambda item: item["seconds"])
    memory = max(item["grown_kib"] for item in edits) * 1024 / size
    memory_all = max(item["grown_all_kib"] for item in edits) * 1024 / size
    cpu = f"CPU {min(item['cpu'] for item in edits):.3f} s cold / {min(item['warm_cpu'] for item in edits):.3f} s warm"
    peer_memory = max(item["grown_kib"] for item in peers) * 1024 / size
    best_warm = min(item["warm"] for item in edits)
    best_warm_off = min(item["warm"] for item in edits_off)
    return [
        Row(
            section,
            f"edit one cell, {size / 1e6:.0f} MB, history on, cold (first in a fresh process)",
            best_edit["seconds"],
            "s",
            "nbformat read+write",
            best_peer["seconds"],
            ">= 4x faster than nbformat read+write",
            best_edit["seconds"] * 4 <= best_peer["seconds"] and edit_ok,
            note=cpu if edit_ok else "the edited notebook is not what was asked",
            samples={
                "nbedit": [item["seconds"] for item in edits],
                "peer": [item["seconds"] for item in peers],
            },
        ),
        Row(
            section,
            f"edit one cell, {size / 1e6:.0f} MB, history on, warm (later edits)",
            best_warm,
            "s",
            "nbformat read+write",
            best_peer["seconds"],
            ">= 4x faster than nbformat read+write",  # issue 27: cold and warm alike
            best_warm * 4 <= best_peer["seconds"] and edit_ok,
            samples={"nbedit": [item["warm"] for item in edits]},
        ),
        Row(
            section,
            f"edit one cell, {size / 1e6:.0f} MB, history off, cold (the edit alone: plan, write, fsync)",
            best_off["seconds"],
            "s",
            "nbformat read+write",
            best_peer["seconds"],
            note="reference: the history's share is the difference to the history-on row",
            samples={"nbedit": [item["seconds"] for item in edits_off]},
        ),
        Row(
            section,
            f"edit one cell, {size / 1e6:.0f} MB, history off, warm",
            best_warm_off,
            "s",
            "nbformat read+write",
            best_peer["seconds"],
            samples={"nbedit": [item["warm"] for item in edits_off]},
        ),
        Row(
            section,
            "peak memory growth of the cold edit (VmHWM)",
            memory,
            "x file",
            "nbformat read+write",
            peer_memory,
            "well under 5x file size (< 4x)",
            memory < 4,
        ),
        Row(
            section,
            "peak memory growth over the cold and two warm edits (VmHWM)",
            memory_all,
            "x file",
            target="< 4x",
            passed=memory_all < 4,
        ),
    ]


def _saved(path: Path, data: bytes) -> None:
    """Put the notebook on disk as Jupyter's save leaves it: written and flushed (its
    ``atomic_writing`` fsyncs). A file written a moment ago and not flushed yet would cost the
    first edit's history a flush of all 50 MB (it keeps the old file as a link, made durable),
    and would let the peer's ``open(path, "w")`` truncate it without freeing blocks on disk,
    neither of which a saved notebook costs."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _existing_home(home: str) -> None:
    """Make the history home a user's earlier edits made (its database and folders)."""
    from nbedit.storage.history import HistoryStore

    HistoryStore(home).close()


def _view_row(folder: Path, repeat: int) -> Row:
    from nbedit.workspace import Workspace

    workspace = Workspace(folder, history=False)
    old = f"total_{EDITED_CELL} = frame_{EDITED_CELL}.sum()"
    timings = []
    view = ""
    for _ in range(repeat):
        start = time.perf_counter()
        view = workspace.view(NAME)
        timings.append(time.perf_counter() - start)
    return Row(
        f"notebook {CELLS:,} cells, {KINDS[0]}-heavy",
        "cell view (Workspace.view)",
        min(timings),
        "s",
        target="< 200 ms",
        passed=min(timings) < 0.2 and old in view,
        samples={"nbedit": timings},
    )
