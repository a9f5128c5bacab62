"""Section 2: a drifted 20-line SEARCH block found in a 100,000-line file.

The block's text drifted the way model output drifts: one line with extra inner
whitespace, one with curly quotes, one with a token renamed. Only the fuzzy tier
can find it. nbedit is timed through ``match.locate`` (index built fresh each
time, so the cost of a one-off edit is counted) and through ``plan_edit`` end to
end; Aider's window search is the peer. Running Aider's search over the whole
file would take many minutes, so it runs on a slice around the block and its
time is scaled up linearly to the whole file (it is linear in the file length:
the same number of windows per line); the table says so.
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.aider_fuzzy import closest_window
from benchmarks.corpus import code_lines, join_lines, write_text
from benchmarks.timing import Row, best_of

__all__ = ["make_inputs", "run"]

LINES = 100_000
BLOCK = 20
SLICE = 600  # lines of the file Aider's search runs on
NAME = "big.py"


def make_inputs() -> tuple[str, int, str, str]:
    """(file text, 0-based first line of the block, drifted SEARCH, REPLACE)."""
    lines = code_lines(LINES, seed=3)
    first = 61_000
    while (
        not any('"' in line for line in lines[first + 2 : first + 8])
        or len(set(lines[first : first + BLOCK])) < BLOCK
    ):
        first += 1
    block = lines[first : first + BLOCK]
    drifted = list(block)
    quoted = next(n for n in range(2, 8) if '"' in block[n])
    opening = drifted[quoted].index('"')
    closing = drifted[quoted].index('"', opening + 1)
    drifted[quoted] = (
        drifted[quoted][:opening]
        + "\u201c"
        + drifted[quoted][opening + 1 : closing]
        + "\u201d"
        + drifted[quoted][closing + 1 :]
    )
    spaced = next(n for n in range(10, 14) if " = " in block[n] or ", " in block[n])
    drifted[spaced] = (
        drifted[spaced].replace(" = ", "  =  ", 1)
        if " = " in block[spaced]
        else drifted[spaced].replace(", ", " ,  ", 1)
    )
    renamed = 16
    body = drifted[renamed].lstrip()
    drifted[renamed] = (
        drifted[renamed][: len(drifted[renamed]) - len(body)] + body.replace("_", "_x", 1)
        if "_" in body
        else drifted[renamed] + " # x"
    )
    changed = 9  # the line the edit changes is not drifted: it must be there for real
    replacement = list(drifted)
    replacement[changed] = drifted[changed] + "  # fixed"
    return join_lines(lines), first, join_lines(drifted), join_lines(replacement)


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    from nbedit.engine.match import FileIndex, MatchOptions, locate
    from nbedit.engine.models import Hunk, Tier
    from nbedit.workspace import Workspace

    text, first, search, replace = make_inputs()
    section = f"fuzzy {BLOCK}-line block in {LINES:,} lines"
    hunk = Hunk(old=search, new=replace, whole_lines=True)
    found: list[object] = []

    def nbedit_locate() -> None:
        found[:] = locate(FileIndex(text), hunk, options=MatchOptions())

    located = best_of(nbedit_locate, repeat)
    match = found[0]
    located_ok = match.tier is Tier.FUZZY and match.line == first + 1  # type: ignore[attr-defined]

    work = scratch / "fuzzy"
    work.mkdir()
    write_text(str(work / NAME), text)
    workspace = Workspace(work, history=False)
    plans: list[object] = []
    end_to_end = best_of(lambda: plans.append(workspace.plan_edit(NAME, search, replace)), repeat)
    plan = plans[-1]
    hunks = [item for file_plan in plan.files for item in file_plan.hunks]  # type: ignore[attr-defined]
    plan_ok = len(hunks) == 1 and hunks[0].tier is Tier.FUZZY and hunks[0].match.line == first + 1

    file_lines = text.splitlines(keepends=True)
    low = first - SLICE // 2
    window = file_lines[low : low + SLICE]
    start = time.perf_counter()
    aider = closest_window(window, search)
    aider_seconds = time.perf_counter() - start
    aider_ok = aider is not None and aider[0] + low == first
    scaled = aider_seconds * LINES / SLICE
    note = f"Aider timed on {SLICE} lines ({aider_seconds:.2f} s), scaled x{LINES // SLICE}" + (
        "" if aider_ok else "; Aider picked the WRONG window"
    )
    rows = [
        Row(
            section,
            "fuzzy locate (match.locate, index built)",
            located.seconds,
            "s",
            "Aider SequenceMatcher windows",
            scaled,
            "< 100 ms",
            located.seconds < 0.1 and located_ok,
            note=note if located_ok else note + "; nbedit found the WRONG place or tier",
            samples={"nbedit": list(located.samples)},
        ),
        Row(
            section,
            "fuzzy edit end to end (Workspace.plan_edit)",
            end_to_end.seconds,
            "s",
            "Aider SequenceMatcher windows",
            scaled,
            "< 100 ms",
            end_to_end.seconds < 0.1 and plan_ok,
            note="" if plan_ok else "nbedit found the WRONG place or tier",
            samples={"nbedit": list(end_to_end.samples)},
        ),
    ]
    return rows
