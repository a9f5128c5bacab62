"""Undo of an older history entry: the reverse of what it did, located in the files as they are now.

``history_ops.plan_undo`` puts an entry's files back to their recorded "before" bytes,
so it needs every file to still hold the entry's "after" bytes: once a later entry
changed one of them, it is stale. Undoing an *older* entry while later ones stay is
a different operation: each thing the entry did is reversed in place, and refused
when a later change is in its way.

Per file the entry touched (its ``FileVersion``), the reverse is:

* text it changed: the reversed diff of its two versions, planned as an ordinary
  unified diff against the file where it lives now (its hunks located like any
  change, so later edits elsewhere in the file stay); lines a later edit rewrote
  make it fail to locate, and the whole undo is refused;
* a rename (``path`` -> ``new_path``): moved back, refused when a file sits at the old
  name again or the renamed file is gone;
* a permission change: set back, refused when a later change set another mode since;
* a file it created: deleted, refused when the file changed since (deleting would lose
  that work); one already gone needs nothing;
* a file it deleted: written back, refused when a file exists there again.

Every refusal is a ``StaleFile`` naming the path, what is in the way, the later entries
that touched it, and what to do; nothing is written. The result is a ``HistoryPlan``
with ``undoes`` set, reviewed and applied like any other undo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbedit._dataclass import replace
from nbedit.engine.text import fingerprint
from nbedit.errors import AmbiguousMatch, HistoryError, NoMatch, StaleFile
from nbedit.history_ops import (
    HistoryPlan,
    _check_root,
    _display,
    _file_plan,
    _later_entries,
    _read,
    _store,
)

if TYPE_CHECKING:
    from nbedit.engine.models import FilePlan
    from nbedit.history_ops import Workspace
    from nbedit.storage.history import HistoryStore
    from nbedit.storage.records import FileVersion

__all__ = ["plan_reverse"]


def _refused(store: HistoryStore, entry_id: str, path: str, what: str, current: bytes | None) -> StaleFile:
    later = _later_entries(store, entry_id, path)
    entries = f"entr{'ies' if len(later) > 1 else 'y'} {', '.join(later)}"
    by = f" (changed since by history {entries})" if later else ""
    return StaleFile(
        f"cannot undo history entry {entry_id}: {path}: {what}{by}",
        path=path,
        actual=fingerprint(current) if current is not None else None,
        advice=(
            "nothing was written. Undo the later entries first (newest first), or restore the file as it "
            "was before this entry (%nbedit restore / Workspace.restore), which discards what came after"
        ),
    )


def _reversed_text(workspace: Workspace, version: FileVersion, where: str) -> FilePlan | None:
    """The file plan that takes the entry's text change back out of the file at ``where`` (None:
    the entry did not change the text)."""
    from nbedit.engine.whole_diff import text_diff

    after, before = _display(version.after, where), _display(version.before, where)
    if after == before:
        return None
    diff = text_diff(after, before, where, where)
    if not diff.strip():
        return None
    plan = workspace.plan_patch(diff, dialect="unified")
    (file_plan,) = plan.files
    return file_plan


def _reverse_file(
    workspace: Workspace, store: HistoryStore, entry_id: str, version: FileVersion
) -> FilePlan | None:
    moved = version.new_path is not None and version.new_path != version.path
    where = version.target_path
    current = _read(workspace, where)
    if version.before is None:  # the entry created the file: its undo deletes it
        if current is None:
            return None  # gone already: nothing left to undo
        if current != version.after:
            what = "it created this file, and the file changed since; deleting it would lose those changes"
            raise _refused(store, entry_id, where, what, current)
        return _file_plan(workspace, where, current, None)
    if version.after is None:  # the entry deleted the file: its undo writes it back
        if current is not None:
            what = "it deleted this file, and a file exists there again"
            raise _refused(store, entry_id, where, what, current)
        return _file_plan(workspace, where, None, version.before, version.before_mode)
    if current is None:
        gone = "it renamed the file to this name, and" if moved else "the file it changed"
        raise _refused(store, entry_id, where, f"{gone} is gone now (deleted or moved since)", None)
    if moved:
        occupied = _read(workspace, version.path)
        if occupied is not None:
            raise _refused(
                store, entry_id, version.path,
                f"it renamed {version.path} to {where}, and a file named {version.path} exists again; "
                "moving it back would overwrite that file", occupied,
            )  # fmt: skip
    mode_now = workspace._source.mode(where)
    before_mode, after_mode = version.before_mode, version.after_mode
    changed_mode = before_mode is not None and after_mode is not None and before_mode != after_mode
    if changed_mode and mode_now != after_mode:
        now = f"{mode_now:o}" if mode_now is not None else "unknown"
        what = f"it changed the file's mode from {before_mode:o} to {after_mode:o}, and the mode is {now} now"
        raise _refused(store, entry_id, where, what, current)
    try:
        file_plan = _reversed_text(workspace, version, where)
    except (NoMatch, AmbiguousMatch) as error:
        raise _refused(
            store, entry_id, where,
            "the lines it changed were changed again since, so its change cannot be taken back out "
            f"({str(error).splitlines()[0]})", current,
        ) from None  # fmt: skip
    if file_plan is None:
        if not moved and not changed_mode:
            return None
        file_plan = _file_plan(workspace, where, current, current)
    return replace(
        file_plan,
        new_path=version.path if moved else None,
        mode=version.before_mode if changed_mode else mode_now,
        before_mode=mode_now,
    )


def plan_reverse(workspace: Workspace, entry_id: str) -> HistoryPlan:
    """Undo entry ``entry_id`` by reversing each thing it did in the files as they are now (see the
    module docstring); ``StaleFile`` when a later change is in the way, and nothing is written."""
    from nbedit.engine.models import Plan

    store = _store(workspace)
    entry = store.entry(entry_id)
    _check_root(workspace, entry)
    if entry.status != "applied":
        raise HistoryError(
            f"entry {entry.id} was never applied (it is {entry.status}); there is nothing to undo"
        )
    files = []
    for version in store.file_versions(entry.id):
        file_plan = _reverse_file(workspace, store, entry.id, version)
        if file_plan is not None:
            files.append(file_plan)
    plan = Plan(files=tuple(files), dialect="undo", root=str(workspace.root))
    return HistoryPlan(plan, "undo", entry.id, False)
