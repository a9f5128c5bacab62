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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass, replace
from nbedit.checkpoints import Checkpoint, Start, author, find_start, group, sequence
from nbedit.engine.merge import Merge, located_hunks, merge_bytes, mergeable
from nbedit.engine.models import FilePlan, LocatedHunk, Plan, is_notebook_path
from nbedit.engine.text import decode, encode, fingerprint
from nbedit.errors import NbeditError, NothingToUndo, OptionError, RewindConflict, option
from nbedit.history_ops import _display, _root, _store, _versioned_states
from nbedit.storage.records import Entry

if TYPE_CHECKING:
    # the workspace as a Protocol: nbedit.workspace calls into this module, so importing it here,
    # even for type checkers, would make the two a circle (tests/test_architecture.py)
    from nbedit.history_ops import ApplyResult, Workspace
    from nbedit.storage.history import HistoryStore

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


# -- reading the history -----------------------------------------------------------------


def _root_entries(workspace: Workspace, store: HistoryStore) -> list[Entry]:
    """Applied entries recorded in this workspace's root, oldest first."""
    return [entry for entry in reversed(store.entries(root=_root(workspace))) if entry.status == "applied"]


class _Recorded:
    """The recorded versions of entries, read once each (a rewind asks for a file's ends only)."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store
        self._states: dict[tuple[str, str], dict[str, State]] = {}
        self._modes: dict[str, tuple[dict[str, State], dict[str, State]]] = {}

    def state(self, entry_id: str, which: Literal["before", "after"], location: str) -> State:
        key = (entry_id, which)
        if key not in self._states:
            versions = self.store.file_versions(entry_id, sides=(which,))
            self._states[key] = _versioned_states(versions, which)
        return self._states[key][location]

    def mode(self, entry_id: str, which: Literal["before", "after"], location: str) -> int | None:
        """A location's recorded mode on one side, without rebuilding any bytes."""
        if entry_id not in self._modes:
            versions = self.store.file_versions(entry_id, sides=())
            self._modes[entry_id] = (
                _versioned_states(versions, "before"),
                _versioned_states(versions, "after"),
            )
        sides = self._modes[entry_id][0 if which == "before" else 1]
        return sides.get(location, (None, None))[1]

    def fingerprints(self, entry_id: str) -> dict[str, tuple[str | None, str | None]]:
        """Location -> (before, after) fingerprints of one entry, without reading any bytes."""
        states: dict[str, tuple[str | None, str | None]] = {}
        for path, new_path, before, after in self.store.file_fingerprints(entry_id):
            if new_path is not None and new_path != path:
                states[path] = (before, None)
                states[new_path] = (None, after)
            else:
                states[path] = (before, after)
        return states


@dataclass(frozen=True, slots=True)
class _Touch:
    entry: Entry
    before: str | None  # fingerprints
    after: str | None


def _timeline(recorded: _Recorded, entries: Sequence[Entry]) -> dict[str, list[_Touch]]:
    """Location -> the entries that wrote it, oldest first."""
    timeline: dict[str, list[_Touch]] = {}
    for entry in entries:
        for location, (before, after) in recorded.fingerprints(entry.id).items():
            timeline.setdefault(location, []).append(_Touch(entry, before, after))
    return timeline


def _runs(touches: Sequence[_Touch]) -> list[tuple[_Touch, _Touch]]:
    """Consecutive touches where each starts from what the previous left, as (first, last)."""
    runs: list[tuple[_Touch, _Touch]] = []
    for touch in touches:
        if runs and runs[-1][1].after == touch.before:
            runs[-1] = (runs[-1][0], touch)
        else:
            runs.append((touch, touch))
    return runs


def _fingerprint(data: bytes | None) -> str | None:
    return fingerprint(data) if data is not None else None


def checkpoints(workspace: Workspace, *, all_sessions: bool = False) -> list[Checkpoint]:
    """The checkpoints (cell runs, agent turns, lone entries) of this root, oldest first."""
    entries = _root_entries(workspace, _store(workspace))
    if not all_sessions:
        entries = [entry for entry in entries if entry.session == workspace.session]
    return group(entries)


# -- plans of whole files ----------------------------------------------------------------


def _file_plan(
    workspace: Workspace,
    path: str,
    current: bytes | None,
    goal: bytes | None,
    goal_mode: int | None,
    notes: tuple[str, ...],
    *,
    hunks: bool = True,
) -> FilePlan:
    """current -> goal as a plan; a text file's changed runs of lines become toggleable hunks."""
    operation = "add" if current is None else "delete" if goal is None else "update"
    notebook = is_notebook_path(path)
    current_mode = workspace._source.mode(path) if current is not None else None
    before_text = after_text = None
    located: tuple[LocatedHunk, ...] = ()
    encoding = None
    if current is not None and goal is not None and not notebook:
        try:
            before_text, codec = decode(current, path)
            after_text, _ = decode(goal, path)
            if encode(after_text, codec, path) != goal:
                raise ValueError("the goal is not in the file's encoding")
            encoding = codec.encoding if codec.encoding != "utf-8" else None
            if hunks:
                located = located_hunks(before_text, after_text)
        except (NbeditError, ValueError, LookupError):
            before_text = after_text = None
            located = ()
    elif current is not None and goal is not None and hunks:
        located = _notebook_hunks(current, goal, path)
        if located:  # the plan is then read as the notebook planner's: texts are cell views
            before_text, after_text = _display(current, path), _display(goal, path)
    return FilePlan(
        path=path,
        operation=operation,  # type: ignore[arg-type]
        before=before_text if before_text is not None else _plain(current, path, notebook),
        after=after_text if after_text is not None else _plain(goal, path, notebook),
        before_bytes=current,
        after_bytes=goal,
        fingerprint=_fingerprint(current),
        hunks=located,
        mode=(goal_mode if goal_mode is not None else current_mode) if goal is not None else None,
        before_mode=current_mode,
        notebook=notebook,
        display_before=_display(current, path) if notebook else None,
        display_after=_display(goal, path) if notebook else None,
        notes=notes,
        encoding=encoding,
    )


def _notebook_hunks(current: bytes, goal: bytes, path: str) -> tuple[LocatedHunk, ...]:
    """Per-hunk toggles for a notebook: the changed runs of its cell view, when editing the view
    with all of them gives exactly the goal's bytes (else the file is one toggle: a change
    outside the cell view, such as outputs or metadata, cannot be split by the view)."""
    from nbedit.engine.notebook.document import NotebookDocument
    from nbedit.engine.plan import splice

    try:
        document = NotebookDocument.parse(current, path)
        located = located_hunks(document.view, NotebookDocument.parse(goal, path).view)
        if not located or document.edit(splice(document.view, located)).data != goal:
            return ()
    except NbeditError:
        return ()
    return located


def _plain(data: bytes | None, path: str, notebook: bool) -> str | None:
    if data is None:
        return None
    if notebook:
        return data.decode("utf-8", "replace")
    return _display(data, path)


# -- what changed since ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileChanges:
    """What nbedit wrote to one file since a checkpoint."""

    path: str
    before: bytes | None  # before the first entry since (None: no file)
    after: bytes | None  # what the last entry left
    current: bytes | None  # on disk now
    authors: tuple[str, ...]  # In[12], agent:<tool>:<call id>, cli, ... in order
    entries: tuple[str, ...]
    changed_outside: bool  # the file on disk is not what nbedit's last entry left
    gaps: tuple[tuple[str, str], ...] = ()  # (entry, next entry) between which it changed outside nbedit


@dataclass(frozen=True, slots=True)
class Changes:
    """Everything nbedit wrote since a checkpoint: per file, and as one plan-shaped diff for review."""

    since: str
    files: tuple[FileChanges, ...]
    plan: Plan  # each file from before the first entry to after the last (shown, never applied)
    checkpoints: tuple[Checkpoint, ...]

    @property
    def diff(self) -> str:
        return self.plan.diff

    def text(self) -> str:
        if not self.files:
            return f"nbedit wrote nothing since {self.since}\n"
        lines = [
            f"nbedit changes since {self.since}: {len(self.files)} file(s), {len(self.checkpoints)} checkpoint(s)"
        ]
        diffs = dict(zip((f.path for f in self.plan.files), self.plan.file_diffs, strict=True))
        for file in self.files:
            lines.append(f"== {file.path}  written by {', '.join(file.authors)} ({', '.join(file.entries)})")
            lines.extend(f"   note: {note}" for note in _change_notes(file)[1:])
            shown = diffs.get(file.path)
            lines.append(shown.rstrip("\n") if shown else "   (no net change)")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from html import escape

        from nbedit.render.html import plan_to_html, wrap

        head = wrap(
            f'<div class="nb-headline">nbedit changes since {escape(self.since)}: '
            f"{len(self.files)} file(s), {len(self.checkpoints)} checkpoint(s)</div>"
        )
        if not self.plan.files:
            return head + wrap('<div class="nb-note">no net change</div>')
        return head + plan_to_html(self.plan)


def _author(entry: Entry, session: str) -> str:
    """Who wrote an entry, with its session when that is not the one asking (another kernel)."""
    who = author(entry)
    return who if entry.session == session else f"{who} [{entry.session}]"


def _change_notes(file: FileChanges) -> tuple[str, ...]:
    notes = [f"written by {', '.join(file.authors)} (entries {', '.join(file.entries)})"]
    if file.changed_outside:
        notes.append(
            f"changed outside nbedit since its last entry {file.entries[-1]}: the file on disk is not "
            "what nbedit wrote (a person, an editor or a tab changed it since)"
        )
    for earlier, later in file.gaps:
        notes.append(
            f"changed outside nbedit between {earlier} and {later} (that change is in this diff too)"
        )
    return tuple(notes)


def changes_since(workspace: Workspace, since: str | Checkpoint, *, session: str | None = None) -> Changes:
    """Everything nbedit wrote in this root since ``since`` (every session's, or one ``session``'s)."""
    store = _store(workspace)
    entries = _root_entries(workspace, store)
    start = find_start(since, entries, session=workspace.session, now=time.time())
    window = [
        entry
        for entry in entries
        if sequence(entry.id) >= start.seq and (session is None or entry.session == session)
    ]
    recorded = _Recorded(store)
    files: list[FileChanges] = []
    plans: list[FilePlan] = []
    for location, touches in _timeline(recorded, window).items():
        before = recorded.state(touches[0].entry.id, "before", location)[0]
        current = workspace._source.read(location)
        after_mode = recorded.mode(touches[-1].entry.id, "after", location)
        unchanged = _fingerprint(current) == touches[-1].after  # then "after" need not be rebuilt
        after = current if unchanged else recorded.state(touches[-1].entry.id, "after", location)[0]
        file = FileChanges(
            path=location,
            before=before,
            after=after,
            current=current,
            authors=tuple(dict.fromkeys(_author(touch.entry, workspace.session) for touch in touches)),
            entries=tuple(touch.entry.id for touch in touches),
            changed_outside=not unchanged,
            gaps=tuple(
                (earlier.entry.id, later.entry.id)
                for earlier, later in zip(touches, touches[1:], strict=False)
                if earlier.after != later.before
            ),
        )
        files.append(file)
        if before != after:
            plans.append(
                _file_plan(workspace, location, before, after, after_mode, _change_notes(file), hunks=False)
            )
    plan = Plan(files=tuple(plans), dialect="changes", root=str(workspace.root))
    return Changes(start.description, tuple(files), plan, tuple(group(window)))


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
