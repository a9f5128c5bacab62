"""Section: the snapshot history on big files and long histories.

Three costs a person feels: the extra time an apply takes to record its entry
(a one-line edit of a 10 MB file, measured as apply with history on minus apply
with history off, after the file's first snapshot is stored), listing a history
of 10,000 entries, and restoring a version from the far end of a delta chain.
There is no peer that keeps per-edit snapshots in process; the figures stand
against the targets alone. The storage row makes 100 one-line edits of the same
10 MB file in a new home and counts every file in it (the database, its
write-ahead log and shared-memory index, the id floor), with the store still open
as a kernel keeps it, and again after it is closed.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from benchmarks.corpus import code_lines, join_lines, write_text
from benchmarks.timing import Row

__all__ = ["run"]

FILE_LINES = 250_000  # about 10 MB of code-like text
EDITS = 12
ENTRIES = 10_000


def _one_line_edit(workspace: object, path: str, text: str, line: int) -> tuple[str, float]:
    """Change one line, apply; (new text, apply seconds)."""
    lines = text.split("\n")
    old = lines[line]
    new = old + "  # edited"
    plan = workspace.plan_edit(
        path, "\n".join(lines[line - 1 : line + 2]), "\n".join([lines[line - 1], new, lines[line + 1]])
    )  # type: ignore[attr-defined]
    start = time.perf_counter()
    workspace.apply(plan)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    lines[line] = new
    return "\n".join(lines), seconds


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    from nbedit.engine.text import fingerprint
    from nbedit.storage.history import EntryDraft, FileRecord, HistoryStore
    from nbedit.workspace import Workspace

    section = "history"
    rows: list[Row] = []
    work = scratch / "files"
    work.mkdir()
    text = join_lines(code_lines(FILE_LINES, seed=5))
    size = len(text.encode())
    write_text(str(work / "big.py"), text)
    home = scratch / "home"
    recorded = Workspace(work, history=True, home=home, session="bench")
    plain = Workspace(work, history=False, home=home, session="bench")

    text, first_seconds = _one_line_edit(recorded, "big.py", text, 1_000)
    with_history, without_history = [], []
    for number in range(EDITS):
        line = 2_000 + number * (FILE_LINES // (EDITS + 2))
        text, seconds = _one_line_edit(recorded, "big.py", text, line)
        with_history.append(seconds)
        text, seconds = _one_line_edit(plain, "big.py", text, line + 7)
        without_history.append(seconds)
    record_cost = statistics.median(with_history) - statistics.median(without_history)
    rows.append(
        Row(
            section,
            f"record an entry: one-line edit of a {size / 1e6:.0f} MB file",
            record_cost,
            "s",
            target="< 50 ms",
            passed=record_cost < 0.05,
            note=f"median apply {statistics.median(with_history) * 1000:.0f} ms with history, "
            f"{statistics.median(without_history) * 1000:.0f} ms without; first entry (full snapshot) "
            f"{first_seconds * 1000:.0f} ms",
            samples={"with": with_history, "without": without_history},
        )
    )

    entries = recorded.history()
    oldest, middle = entries[-1], entries[len(entries) // 2]
    restore_times = []
    for entry in (oldest, middle, entries[0]):
        start = time.perf_counter()
        recorded.restore(entry.id, force=True)
        restore_times.append(time.perf_counter() - start)
    rows.append(
        Row(
            section,
            f"restore a version ({size / 1e6:.0f} MB file, {len(entries)} entries)",
            max(restore_times),
            "s",
            target="< 200 ms (slowest of oldest, middle, newest)",
            passed=max(restore_times) < 0.2,
            samples={"nbedit": restore_times},
        )
    )

    store = HistoryStore.open_or_recreate(scratch / "long-home")
    start = time.perf_counter()
    for number in range(ENTRIES):
        before = f"value = {number}\n".encode()
        after = f"value = {number + 1}\n".encode()
        record = FileRecord(
            path=f"file{number % 50}.py",
            new_path=None,
            before=before,
            after=after,
            before_fingerprint=fingerprint(before),
            after_fingerprint=fingerprint(after),
            added=1,
            removed=1,
        )
        entry_id = store.begin(
            EntryDraft(
                session="bench",
                origin="api",
                execution_count=None,
                files=(record,),
                tiers=("exact",),
                summary=record.path,
            )
        )
        store.commit(entry_id)
    fill_seconds = time.perf_counter() - start
    long_history = Workspace(work, history=True, home=scratch / "long-home", session="bench")
    listed: list[object] = []
    timings = []
    for _ in range(repeat):
        begin = time.perf_counter()
        listed = long_history.history(all=True)
        timings.append(time.perf_counter() - begin)
    rows.append(
        Row(
            section,
            f"list {ENTRIES:,} entries (Workspace.history)",
            min(timings),
            "s",
            target="< 100 ms",
            passed=min(timings) < 0.1 and len(listed) == ENTRIES,
            note=f"listed {len(listed)}; filling took {fill_seconds:.1f} s",
            samples={"nbedit": timings},
        )
    )
    rows.append(_storage_row(scratch, size))
    return rows


STORAGE_EDITS = 100


def _home_bytes(home: Path) -> int:
    return sum(path.stat().st_size for path in home.rglob("*") if path.is_file())


def _storage_row(scratch: Path, size: int) -> Row:
    from nbedit.errors import AmbiguousMatch
    from nbedit.workspace import Workspace

    work = scratch / "storage"
    work.mkdir()
    text = join_lines(code_lines(FILE_LINES, seed=7))
    write_text(str(work / "big.py"), text)
    home = scratch / "storage-home"
    workspace = Workspace(work, history=True, home=home, session="bench")
    largest = 0
    for number in range(STORAGE_EDITS):
        line = 500 + number * (FILE_LINES // (STORAGE_EDITS + 2))
        while True:  # generated code repeats now and then: move down to a line the edit names uniquely
            try:
                text, _ = _one_line_edit(workspace, "big.py", text, line)
                break
            except AmbiguousMatch:
                line += 1
        largest = max(largest, _home_bytes(home))
    open_bytes = _home_bytes(home)
    wal = home / "history.sqlite3-wal"
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    workspace._store().close()  # as a process ending would
    closed_bytes = _home_bytes(home)
    megabytes = open_bytes / 1e6
    return Row(
        "history",
        f"home growth: {STORAGE_EDITS} one-line edits of a {size / 1e6:.0f} MB file (all files, store open)",
        megabytes,
        "MB",
        target="< 3 MB",
        passed=megabytes < 3 and (work / "big.py").read_text(encoding="utf-8") == text,
        note=f"largest during the run {largest / 1e6:.2f} MB; write-ahead log at the end {wal_bytes / 1e6:.2f} MB; "
        f"after close {closed_bytes / 1e6:.2f} MB",
    )
