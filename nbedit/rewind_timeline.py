"""The history read file by file: what each session recorded, as runs, and whole-file plans.

``changes_since`` and ``rewind`` both read the root's applied entries as a timeline per file
(who touched it, in order), take the recorded bytes and modes of any entry (``_Recorded``,
which caches what it rebuilt), and turn "this file should become these bytes" into a reviewed
``FilePlan``. This module is that shared reading; the two stages that use it sit above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass
from nbedit.checkpoints import Checkpoint, group
from nbedit.engine.merge import located_hunks
from nbedit.engine.models import FilePlan, LocatedHunk, is_notebook_path
from nbedit.engine.text import decode, encode, fingerprint
from nbedit.errors import NbeditError
from nbedit.history_ops import _display, _root, _store, _versioned_states
from nbedit.storage.records import Entry

if TYPE_CHECKING:
    # the workspace as a Protocol: nbedit.workspace calls into this module, so importing it here,
    # even for type checkers, would make the two a circle (tests/test_architecture.py)
    from nbedit.history_ops import Workspace
    from nbedit.storage.history import HistoryStore

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
    from nbedit.engine.text_edit import splice

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
