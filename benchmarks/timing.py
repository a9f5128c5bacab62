"""Timing helpers and the result table shared by every benchmark section.

In-process timings report the *best* of several runs: on a shared machine
every slower run measures someone else's load, not the code (the reasoning of
the ``timeit`` documentation). Whole-process timings report the median of 5, as
process start-up varies more; processes compared with each other (nbedit against
``git apply``, or against a bare ``python -c pass``) run in turn, one of each per
round (``interleaved_medians``), so a burst of someone else's load falls on both
sides of a ratio instead of on one; in-process runs compared with a peer's do the
same (``interleaved_best``). Every sample is kept for ``--json``.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

__all__ = [
    "Process",
    "Row",
    "Run",
    "Timing",
    "best_of",
    "format_table",
    "interleaved_best",
    "interleaved_medians",
    "median_of_processes",
]


@dataclass(frozen=True, slots=True)
class Timing:
    seconds: float  # the reported figure (best or median)
    samples: tuple[float, ...]
    how: str  # "best of N" or "median of N"


@dataclass(frozen=True, slots=True)
class Row:
    section: str
    metric: str
    nbedit: float | None  # seconds, bytes or a count, see unit
    unit: str  # "s", "MB", "x file", "/4" ...
    peer_name: str = ""
    peer: float | None = None
    target: str = ""
    passed: bool | None = None  # None: no target for this row
    note: str = ""
    samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        """Peer divided by nbedit: for times, how many times faster nbedit is."""
        if self.nbedit is None or self.peer is None or self.nbedit == 0:
            return None
        return self.peer / self.nbedit

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        data["ratio"] = self.ratio
        return data


def best_of(run: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> Timing:
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return Timing(min(samples), tuple(samples), f"best of {repeat}")


@dataclass(frozen=True, slots=True)
class Run:
    """An in-process call to time: ``setup`` runs before each run (untimed), ``check`` after it
    (False: the run's result was wrong)."""

    call: Callable[[], object]
    setup: Callable[[], object] | None = None
    check: Callable[[], bool] | None = None


def interleaved_best(runs: dict[str, Run], repeat: int = 5) -> dict[str, tuple[Timing, bool]]:
    """Best time of each call, run one of each per round (the order reversed every other round,
    so neither side always runs right after the other); and whether every run passed its check.

    ``best_of`` run for each side in turn lets a slow minute of a shared machine fall on one side
    of a ratio only: nbedit against whatthepatch moved between 1.8x and 2.3x from one run of the
    table to the next that way."""
    samples: dict[str, list[float]] = {label: [] for label in runs}
    correct = dict.fromkeys(runs, True)
    labels = list(runs)
    for round_number in range(repeat):
        for label in labels if round_number % 2 == 0 else labels[::-1]:
            run = runs[label]
            if run.setup is not None:
                run.setup()
            start = time.perf_counter()
            run.call()
            samples[label].append(time.perf_counter() - start)
            correct[label] = correct[label] and (run.check is None or run.check())
    return {
        label: (Timing(min(times), tuple(times), f"best of {repeat}, interleaved"), correct[label])
        for label, times in samples.items()
    }


def median_of_processes(
    command: Sequence[str], cwd: str, repeat: int = 5, setup: Callable[[], object] | None = None
) -> tuple[Timing, int]:
    """Median wall time of ``command`` run ``repeat`` times; and the last exit code."""
    samples = []
    code = 0
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        finished = subprocess.run(
            command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append(time.perf_counter() - start)
        code = finished.returncode
    return Timing(statistics.median(samples), tuple(samples), f"median of {repeat}"), code


@dataclass(frozen=True, slots=True)
class Process:
    """A command to time as a whole process: ``setup`` runs before each run (untimed), ``check``
    after it (False: the run's result was wrong)."""

    command: Sequence[str]
    cwd: str
    setup: Callable[[], object] | None = None
    check: Callable[[], bool] | None = None


def interleaved_medians(processes: dict[str, Process], repeat: int = 5) -> dict[str, tuple[Timing, bool]]:
    """Median wall time of each process, run one of each per round; and whether every run of it
    exited 0 and passed its check."""
    samples: dict[str, list[float]] = {label: [] for label in processes}
    correct = dict.fromkeys(processes, True)
    for _ in range(repeat):
        for label, process in processes.items():
            if process.setup is not None:
                process.setup()
            start = time.perf_counter()
            finished = subprocess.run(
                process.command,
                cwd=process.cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            samples[label].append(time.perf_counter() - start)
            ok = finished.returncode == 0 and (process.check is None or process.check())
            correct[label] = correct[label] and ok
    return {
        label: (
            Timing(statistics.median(times), tuple(times), f"median of {repeat}, interleaved"),
            correct[label],
        )
        for label, times in samples.items()
    }


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 10 else f"{value:.1f} s"
    if unit.startswith("/"):
        return f"{value:g}{unit}"
    return f"{value:.3g} {unit}".strip()


def format_table(rows: Sequence[Row]) -> str:
    header = ("section", "metric", "nbedit", "peer", "peer value", "ratio", "target", "result")
    lines = []
    for row in rows:
        ratio = row.ratio
        result = "-" if row.passed is None else ("pass" if row.passed else "FAIL")
        lines.append(
            (
                row.section,
                row.metric,
                _value(row.nbedit, row.unit),
                row.peer_name or "-",
                _value(row.peer, row.unit),
                f"{ratio:.2f}x" if ratio is not None and row.unit == "s" else "-",
                row.target or "-",
                result + (f" ({row.note})" if row.note else ""),
            )
        )
    widths = [max(len(str(item[n])) for item in [header, *lines]) for n in range(len(header))]
    out = [" | ".join(str(cell).ljust(width) for cell, width in zip(header, widths, strict=True))]
    out.append("-|-".join("-" * width for width in widths))
    for line in lines:
        out.append(" | ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)))
    return "\n".join(out)
