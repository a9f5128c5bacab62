"""Run the benchmarks: nbedit against its peers, in the same run, on the same inputs.

    python -m benchmarks.run                 # every section, a table
    python -m benchmarks.run --section patch --section fuzzy
    python -m benchmarks.run --json          # machine-readable rows

Inputs are generated from fixed seeds in a temporary folder (no network), so
runs are comparable across machines; the peers (whatthepatch, patch-ng, git
apply, GNU patch, difflib, nbformat, Aider's fuzzy search) run in the same
process or on the same machine minutes apart, so a ratio means something even
when absolute times do not. Sections: patch, fuzzy, drift, five_rules, syntax, notebook, history,
widget, encoding, agents, live, rewind, scale (1x/10x/100x; ``--big`` for 10x more).
The exit status is 1 when any target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import Row, format_table  # noqa: E402

__all__ = ["main"]


SECTIONS = (
    "patch",
    "fuzzy",
    "drift",
    "five_rules",
    "syntax",
    "notebook",
    "history",
    "widget",
    "encoding",
    "agents",
    "live",
    "rewind",
    "scale",
)


def _section(name: str) -> Callable[[Path, int], list[Row]]:
    """The ``run(scratch, repeat)`` of ``benchmarks/bench_<name>.py``, imported on demand."""
    import importlib

    module = importlib.import_module(f"benchmarks.bench_{name}")
    return module.run  # type: ignore[no-any-return]


def _machine() -> dict[str, object]:
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--section", action="append", choices=SECTIONS, help="run only this section (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per in-process timing (best is reported)")
    parser.add_argument("--json", action="store_true", help="print rows as JSON instead of a table")
    parser.add_argument(
        "--big",
        action="store_true",
        help="scale section: 10x every size (a 1,000,000-cell notebook, 200,000 hunks)",
    )
    args = parser.parse_args(argv)

    chosen = args.section or list(SECTIONS)
    if args.big:
        os.environ["NBEDIT_BENCH_BIG"] = "1"
    rows: list[Row] = []
    started = time.perf_counter()
    durations: dict[str, float] = {}
    os.environ.setdefault("NBEDIT_SESSION", "benchmark")
    with tempfile.TemporaryDirectory(prefix="nbedit-bench-") as scratch_name:
        scratch = Path(scratch_name)
        os.environ["NBEDIT_HOME"] = str(scratch / "nbedit-home")
        for name in chosen:
            section_start = time.perf_counter()
            folder = scratch / name
            folder.mkdir()
            if not args.json:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            rows.extend(_section(name)(folder, args.repeat))
            durations[name] = time.perf_counter() - section_start
    machine = _machine()
    total = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "machine": machine,
                    "seconds": total,
                    "section_seconds": durations,
                    "rows": [row.as_json() for row in rows],
                },
                indent=2,
            )
        )
    else:
        print(
            f"{machine['date']}  Python {machine['python']}  {machine['cpus']} CPUs  "
            f"load {machine['load_average']}  total {total:.0f} s"
        )
        print(format_table(rows))
    return 1 if any(row.passed is False for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
