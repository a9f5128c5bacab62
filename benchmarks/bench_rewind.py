"""Section: rewind and "changes since" over a long session (history on).

A kernel session of 50 cell runs, each editing 3 of 20 files (about 500 lines each,
one-line edits at seeded random places), with a person's edit to 5 of the files in the
middle of it (written to disk directly, outside nbedit, on lines nbedit never touches).
Timed: planning the rewind to before the first cell run (every file back, the person's
edits kept by the three-way merge), the same once the home also holds another project's
2,000 entries (a home is shared by every project), planning the rewind to the 25th, and
listing what changed since the first. The rewind is then applied once and checked: every file is
its original bytes plus the person's edit, and undoing it brings every later byte back.
There is no peer that rewinds with a merge in process; the figure stands against the
target alone.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from benchmarks.corpus import code_lines, join_lines, write_text
from benchmarks.timing import Row, best_of

__all__ = ["run"]

FILES = 20
LINES = 500
CHECKPOINTS = 50
FILES_PER_CHECKPOINT = 3
PERSON_FILES = 5
OTHER_PROJECT_ENTRIES = 2_000  # a home shared with another project's long history


def _build(scratch: Path) -> tuple[object, dict[str, bytes], dict[str, bytes]]:
    """The session; (workspace, the original files, the original files with the person's edits)."""
    from nbedit.workspace import Workspace

    root = scratch / "project"
    root.mkdir()
    rng = random.Random(26)
    texts: dict[str, list[str]] = {}
    for index in range(FILES):
        name = f"module_{index:02d}.py"
        lines = [f"{line}  # {index}:{number}" for number, line in enumerate(code_lines(LINES, seed=index))]
        texts[name] = lines
        write_text(str(root / name), join_lines(lines))
    original = {name: join_lines(lines).encode() for name, lines in texts.items()}
    workspace = Workspace(root, home=scratch / "home", session="bench-kernel", origin="magic")
    person_lines = {
        name: rng.randrange(0, 20) for name in sorted(texts)[:PERSON_FILES]
    }  # nbedit edits lines >= 40
    expected = dict(original)
    for count in range(1, CHECKPOINTS + 1):
        for name in rng.sample(sorted(texts), FILES_PER_CHECKPOINT):
            line = rng.randrange(40, LINES - 1)
            old = texts[name][line]
            new = f"{old}  # cell {count}"
            plan = workspace.plan_edit(name, old + "\n", new + "\n")  # type: ignore[attr-defined]
            workspace.apply(plan, execution_count=count)  # type: ignore[attr-defined]
            texts[name][line] = new
        if count == CHECKPOINTS // 2:  # a person edits five files in an editor
            for name, line in person_lines.items():
                texts[name][line] = texts[name][line] + "  # the person's edit"
                write_text(str(root / name), join_lines(texts[name]))
                lines = original[name].decode().split("\n")
                lines[line] = lines[line] + "  # the person's edit"
                expected[name] = "\n".join(lines).encode()
    return workspace, original, expected


def _other_project(home: Path) -> None:
    """Another project's long history in the same home (its entries name another root)."""
    from nbedit.engine.text import fingerprint
    from nbedit.storage.history import EntryDraft, FileRecord, HistoryStore

    with HistoryStore(home) as store:
        for number in range(OTHER_PROJECT_ENTRIES):
            before, after = f"v = {number}\n".encode(), f"v = {number + 1}\n".encode()
            record = FileRecord(
                path=f"f{number % 50}.py",
                new_path=None,
                before=before,
                after=after,
                before_fingerprint=fingerprint(before),
                after_fingerprint=fingerprint(after),
                added=1,
                removed=1,
            )
            draft = EntryDraft(
                session="other-kernel",
                origin="magic",
                execution_count=number + 1,
                files=(record,),
                root="/other",
            )
            store.commit(store.begin(draft))


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    section = "rewind"
    started = time.perf_counter()
    workspace, _original, expected = _build(scratch)
    build_seconds = time.perf_counter() - started
    root = Path(workspace.root)  # type: ignore[attr-defined]

    planned: list[object] = []
    first = best_of(lambda: planned.append(workspace.plan_rewind("In[1]")), repeat)  # type: ignore[attr-defined]
    middle = best_of(lambda: workspace.plan_rewind(f"In[{CHECKPOINTS // 2}]"), repeat)  # type: ignore[attr-defined]
    changes = best_of(lambda: workspace.changes("In[1]"), repeat)  # type: ignore[attr-defined]

    rewind = planned[-1]
    before = {path.name: path.read_bytes() for path in root.iterdir()}
    result = rewind.apply(workspace)  # type: ignore[attr-defined]
    after = {path.name: path.read_bytes() for path in root.iterdir()}
    correct = after == expected and len(rewind.plan.files) == FILES and not rewind.conflicts  # type: ignore[attr-defined]
    workspace.undo(result.entry_id)  # type: ignore[attr-defined]
    redone = {path.name: path.read_bytes() for path in root.iterdir()} == before
    workspace.close()  # type: ignore[attr-defined]
    _other_project(scratch / "home")
    shared = best_of(lambda: workspace.plan_rewind("In[1]"), repeat)  # type: ignore[attr-defined]
    workspace.close()  # type: ignore[attr-defined]
    note = (
        f"{CHECKPOINTS} cell runs x {FILES_PER_CHECKPOINT} of {FILES} files ({LINES} lines), a person's edit to "
        f"{PERSON_FILES} files kept; result byte-exact: {correct}, undo exact: {redone}; "
        f"building the session took {build_seconds:.1f} s"
    )
    return [
        Row(
            section,
            f"plan a rewind of {CHECKPOINTS} checkpoints over {FILES} files (history on)",
            first.seconds,
            "s",
            target="< 200 ms",
            passed=first.seconds < 0.2 and correct and redone,
            note=note,
            samples={"nbedit": list(first.samples)},
        ),
        Row(
            section,
            f"the same, in a home also holding {OTHER_PROJECT_ENTRIES:,} entries of another project",
            shared.seconds,
            "s",
            target="< 200 ms",
            passed=shared.seconds < 0.2,
            samples={"nbedit": list(shared.samples)},
        ),
        Row(
            section,
            f"plan a rewind of {CHECKPOINTS // 2 + 1} checkpoints (to the middle)",
            middle.seconds,
            "s",
            samples={"nbedit": list(middle.samples)},
        ),
        Row(
            section,
            f"changes since the first of {CHECKPOINTS} checkpoints ({FILES} files)",
            changes.seconds,
            "s",
            samples={"nbedit": list(changes.samples)},
        ),
    ]
