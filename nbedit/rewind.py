"""Rewind to a checkpoint, and "what changed since": the history read by cell run and agent turn.

``changes_since`` shows, per file, everything nbedit wrote since a checkpoint (``In[12]``,
an entry id, ``turn:ID``, ``10min``) as one review-style diff, who wrote it, and whether
the file changed outside nbedit since its last entry.

``plan_rewind`` takes every file back to how it was before a checkpoint, as one ``Plan``
reviewed like any other (per-file and per-hunk toggles) and applied as one history entry
(origin ``rewind``) that can itself be undone, which brings the later state back exactly.

What is taken back is the checkpoint's session's own entries since (a cell run's kernel,
or, for ``ToolSession.rewind``, one agent's calls). Everything else written since is
*kept*: another kernel's edits, a person's edit in an editor, a JupyterLab tab's save.
Each run of the session's consecutive entries on a file is reverted newest first with a
three-way merge (``nbedit.engine.merge``): base = what nbedit recorded after the run,
ours = what it recorded before, theirs = the file as it is at that point of the unwinding
(on disk, for the newest run). Lines only others changed come through byte-exact; lines
both changed are a conflict: the file is shown with the overlapping lines marked and is
not written unless the person chooses (``resolve``: ``"keep"`` leaves it as it is,
``"rewind"`` takes the rewind's side in the overlapping lines and keeps the rest).

Nothing here writes: the plan goes through ``Workspace.apply`` (locks, stale checks
against the bytes the plan was made from, atomic all-or-nothing write, history entry),
so a file changed between the plan and the apply is refused, never overwritten.

The history read file by file (``_Recorded``, the per-file timeline, whole-file plans) lives in
``nbedit.rewind_timeline``, and "what changed since" in ``nbedit.changes_since``; both stay
importable from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass, replace
from nbedit.checkpoints import Checkpoint, Start, author, find_start, sequence
from nbedit.engine.merge import Merge, merge_bytes, mergeable
from nbedit.engine.models import FilePlan, Plan, is_notebook_path
from nbedit.errors import NothingToUndo, OptionError, RewindConflict, option
from nbedit.history_ops import _store
from nbedit.storage.records import Entry

if TYPE_CHECKING:
    # the workspace as a Protocol: nbedit.workspace calls into this module, so importing it here,
    # even for type checkers, would make the two a circle (tests/test_architecture.py)
    from nbedit.history_ops import ApplyResult, Workspace
from nbedit.changes_since import Changes, FileChanges, changes_since
from nbedit.rewind_timeline import (  # noqa: F401 - re-exported: tests and callers name them here
    _file_plan,
    _fingerprint,
    _notebook_hunks,
    _plain,
    _Recorded,
    _root_entries,
    _runs,
    _timeline,
    _Touch,
    checkpoints,
)

__all__ = [
    "Changes",
    "FileChanges",
    "FileConflict",
    "RewindPlan",
    "changes_since",
    "checkpoints",
    "plan_rewind",
    "rewind",
]

Resolution = Literal["keep", "rewind"]
State = tuple["bytes | None", "int | None"]  # a file's bytes (None: no file) and mode (None: unknown)

# -- rewind ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileConflict:
    """A file someone changed after the checkpoint in lines the rewind takes back (or a file
    created or deleted on one side and changed on the other): not written unless chosen."""

    path: str
    reason: str
    recorded: bytes | None  # what nbedit recorded after its change (the merge's base)
    rewound: bytes | None  # what the rewind would put there
    current: bytes | None  # what is there at that point (on disk, for the newest change)
    merge: Merge | None = None

    def text(self) -> str:
        """The conflict for a person: each overlapping stretch with the rewind's lines, nbedit's
        recorded lines and the lines on disk, between git-style markers."""
        lines = [f"{self.path}: {self.reason}"]
        if self.merge is None:
            return lines[0] + "\n"
        for conflict in self.merge.conflicts:
            lines.append(f"@@ recorded line {conflict.line}")
            lines.append("<<<<<<< rewind (as before the checkpoint)")
            lines.extend(_shown(conflict.ours))
            lines.append("||||||| recorded by nbedit")
            lines.extend(_shown(conflict.base))
            lines.append("=======")
            lines.extend(_shown(conflict.theirs))
            lines.append(">>>>>>> on disk now")
        return "\n".join(lines) + "\n"


def _shown(lines: tuple[bytes, ...]) -> list[str]:
    return [line.decode("utf-8", "replace").rstrip("\r\n") for line in lines]


def _valid_notebook(data: bytes) -> bool:
    import json

    try:
        loaded = json.loads(data)
    except ValueError:
        return False
    return isinstance(loaded, dict) and isinstance(loaded.get("cells"), list)


def _revert(
    path: str, before: bytes | None, after: bytes | None, current: bytes | None, prefer: str | None
) -> tuple[bytes | None, FileConflict | None, bool]:
    """One run of entries taken back from ``current``: (result, conflict, kept others' edits)."""
    if current in (after, before):
        return before, None, False
    merge = None
    if after is None:
        reason = "nbedit deleted this file and it was created again since; rewinding would replace that file"
    elif before is None:
        reason = "nbedit created this file and it was edited since; rewinding would delete those edits"
    elif current is None:
        reason = "this file was deleted since nbedit wrote it; rewinding would create it again"
    elif not mergeable(before, after, current):
        reason = "this file changed since nbedit wrote it and has no text lines to merge (binary or UTF-16)"
    else:
        merge = merge_bytes(after, before, current)
        merged = merge.merged
        if merged is not None:
            if not is_notebook_path(path) or _valid_notebook(merged):
                return merged, None, True
            reason = "the later edits merge by lines but the notebook would not be valid JSON"
        else:
            where = ", ".join(str(conflict.line) for conflict in merge.conflicts)
            reason = f"lines changed on disk since nbedit wrote them overlap what the rewind takes back (recorded line {where})"
    conflict = FileConflict(path, reason, after, before, current, merge)
    if prefer != "rewind":
        return current, conflict, False
    if merge is not None:
        resolved = merge.resolved("ours")
        if not is_notebook_path(path) or _valid_notebook(resolved):
            return resolved, conflict, True
    return before, conflict, False


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """A rewind, planned but not written: review ``plan``, then ``apply`` it.

    ``plan`` holds every file the rewind would write; a conflicted file is in it with the
    rewind's side taken in the overlapping lines, and is left out of ``apply`` unless
    ``resolve`` says ``"rewind"`` for it (``conflicted`` are the indexes into ``plan.files``).
    """

    plan: Plan
    start: Start
    entries: tuple[str, ...]  # the entries taken back, oldest first
    conflicts: tuple[FileConflict, ...] = ()
    conflicted: tuple[int, ...] = ()
    kept: tuple[str, ...] = ()  # files where later edits by others were kept by the merge
    origin: str = "rewind"

    @property
    def apply_options(self) -> dict[str, object]:
        return {"origin": self.origin}

    def describe(self) -> str:
        """One paragraph: what is taken back, what is kept, what conflicts."""
        parts = [f"rewind to before {self.start.description}: takes back entries {', '.join(self.entries)}"]
        if self.kept:
            parts.append(f"keeps the later edits others made in {', '.join(self.kept)}")
        if self.conflicts:
            parts.append(
                f"CONFLICT in {', '.join(conflict.path for conflict in self.conflicts)}: left as it is unless "
                f"you choose ({option('resolve')})"
            )
        return "; ".join(parts)

    def selected(self, resolve: Resolution | Mapping[str, Resolution] | None = None) -> Plan:
        """The plan to write: conflicted files only where ``resolve`` says ``"rewind"``.

        Raises ``RewindConflict`` when a conflicted file has no resolution (nothing written).
        """
        _check_resolve(resolve)
        chosen = {conflict.path: _resolution(resolve, conflict.path) for conflict in self.conflicts}
        missing = [conflict for conflict in self.conflicts if chosen[conflict.path] is None]
        if missing:
            shown = "".join(conflict.text() for conflict in missing)
            raise RewindConflict(
                f"the rewind to before {self.start.description} overlaps later edits in "
                f"{', '.join(conflict.path for conflict in missing)}; nothing was written. Choose per file: "
                f"{option('resolve')} ('keep' leaves the file as it is, 'rewind' takes the rewind's side in "
                f"the overlapping lines and keeps the rest).\n{shown}",
                conflicts=missing,
            )
        left_out = {index for index in self.conflicted if chosen.get(self.plan.files[index].path) != "rewind"}
        if not left_out:
            return self.plan
        files = tuple(file for index, file in enumerate(self.plan.files) if index not in left_out)
        return replace(self.plan, files=files, _diff_cache=[])

    def apply(
        self, workspace: Workspace, resolve: Resolution | Mapping[str, Resolution] | None = None
    ) -> ApplyResult:
        return workspace.apply(self.selected(resolve), origin=self.origin)


def _resolution(resolve: Resolution | Mapping[str, Resolution] | None, path: str) -> Resolution | None:
    chosen = resolve.get(path) if isinstance(resolve, Mapping) else resolve
    return chosen


def _check_resolve(resolve: object) -> None:
    values = list(resolve.values()) if isinstance(resolve, Mapping) else [resolve]
    for value in values:
        if value not in (None, "keep", "rewind"):
            raise OptionError(
                f"resolve must be 'keep' or 'rewind' (for every file, or per path in a dict), not {value!r}; "
                "nothing was written",
                option="resolve",
            )


def plan_rewind(
    workspace: Workspace,
    to: str | Checkpoint,
    *,
    all_sessions: bool = False,
    own: Callable[[Entry], bool] | None = None,
) -> RewindPlan:
    """Plan taking every file back to before ``to``: the checkpoint's session's entries since are
    taken back, every other later edit is kept where it does not overlap (see the module docstring).

    ``all_sessions``: take back every session's nbedit entries since (only edits made outside
    nbedit are kept). ``own``: a further filter on the entries taken back (an agent's own calls).
    """
    store = _store(workspace)
    entries = _root_entries(workspace, store)
    start = find_start(to, entries, session=workspace.session, now=time.time())
    session = start.session or workspace.session

    def taken_back(entry: Entry) -> bool:
        if sequence(entry.id) < start.seq:
            return False
        if not all_sessions and entry.session != session:
            return False
        return own is None or own(entry)

    taken = [entry for entry in entries if taken_back(entry)]
    if not taken:
        whose = "no session" if all_sessions else f"session {session!r}"
        raise NothingToUndo(
            f"nothing to rewind: {whose} recorded no edits in this root since {start.description} "
            "(list the history to see the checkpoints)"
        )
    recorded = _Recorded(store)
    files: list[FilePlan] = []
    conflicts: list[FileConflict] = []
    conflicted: list[int] = []
    kept: list[str] = []
    for location, touches in _timeline(recorded, taken).items():
        runs = _runs(touches)
        current = workspace._source.read(location)
        goal, conflict, merged = _unwind(recorded, location, runs, current, None)
        notes = [f"takes back {', '.join(dict.fromkeys(author(touch.entry) for touch in touches))}"]
        if conflict is not None:
            goal, _, merged = _unwind(recorded, location, runs, current, "rewind")
            notes.append(f"CONFLICT: {conflict.reason}; left out unless you choose to take the rewind's side")
        if merged:
            notes.append("keeps the later edits made by others where they do not overlap")
        if goal == current and not _mode_back(workspace, recorded, location, runs, goal, current):
            if conflict is not None:
                conflicts.append(conflict)
            continue
        if conflict is not None:
            conflicts.append(conflict)
            conflicted.append(len(files))
        elif merged:
            kept.append(location)
        goal_mode = _mode_back(workspace, recorded, location, runs, goal, current)
        files.append(
            _file_plan(workspace, location, current, goal, goal_mode, tuple(notes), hunks=conflict is None)
        )
    plan = Plan(files=tuple(files), dialect="rewind", root=str(workspace.root))
    return RewindPlan(
        plan, start, tuple(entry.id for entry in taken), tuple(conflicts), tuple(conflicted), tuple(kept)
    )


def _unwind(
    recorded: _Recorded,
    location: str,
    runs: list[tuple[_Touch, _Touch]],
    current: bytes | None,
    prefer: str | None,
) -> tuple[bytes | None, FileConflict | None, bool]:
    """Take back each run, newest first, from ``current``: the file's goal, its first conflict,
    and whether others' edits were kept."""
    state = current
    merged_any = False
    first_conflict = None
    for first, last in reversed(runs):
        seen = _fingerprint(state)
        if seen == first.before:
            continue  # already as it was before this run
        before = recorded.state(first.entry.id, "before", location)[0]
        if seen == last.after:  # as nbedit left it: the run's "after" need not be rebuilt
            state = before
            continue
        after = recorded.state(last.entry.id, "after", location)[0]
        state, conflict, merged = _revert(location, before, after, state, prefer)
        merged_any = merged_any or merged
        if conflict is not None:
            first_conflict = first_conflict or conflict
            if prefer is None:
                return current, first_conflict, merged_any
    return state, first_conflict, merged_any


def _mode_back(
    workspace: Workspace,
    recorded: _Recorded,
    location: str,
    runs: list[tuple[_Touch, _Touch]],
    goal: bytes | None,
    current: bytes | None,
) -> int | None:
    """The mode the rewound file gets: the recorded one before the checkpoint, when the file still
    has the mode nbedit's last entry gave it (a chmod made since by someone else is kept)."""
    if goal is None or current is None:
        return None
    before_mode = recorded.mode(runs[0][0].entry.id, "before", location)
    after_mode = recorded.mode(runs[-1][1].entry.id, "after", location)
    now = workspace._source.mode(location)
    if before_mode is not None and now == after_mode and before_mode != now:
        return before_mode
    return None


def rewind(
    workspace: Workspace,
    to: str | Checkpoint,
    *,
    all_sessions: bool = False,
    resolve: Resolution | Mapping[str, Resolution] | None = None,
) -> ApplyResult:
    """Plan and apply a rewind (see ``plan_rewind``); ``RewindConflict`` if a conflict has no ``resolve``."""
    return plan_rewind(workspace, to, all_sessions=all_sessions).apply(workspace, resolve)
