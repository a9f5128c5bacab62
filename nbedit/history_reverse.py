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

``plan_entry_undo`` is the one undo every surface calls (``Workspace.undo``/``plan_undo``,
``%nbedit undo``, ``nbedit undo``, the history table, the agents' undo tools): the exact
undo while the files still hold what the entry wrote (the newest entry, the usual case),
the reverse when later changes are in its files. Choosing in one place means the same
entry gets the same plan, the same refusal and the same recording wherever it is undone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbedit._dataclass import replace
from nbedit.engine.text import fingerprint
from nbedit.errors import AmbiguousMatch, HistoryError, NoMatch, NothingToUndo, StaleFile, option
from nbedit.history_ops import (
    HistoryPlan,
    _check_root,
    _display,
    _file_plan,
    _later_entries,
    _read,
    _root,
    _store,
    _undo_target,
    interrupted_undo,
    plan_undo,
)

if TYPE_CHECKING:
    from nbedit.engine.models import FilePlan
    from nbedit.history_ops import Workspace
    from nbedit.storage.history import HistoryStore
    from nbedit.storage.records import FileVersion

__all__ = ["plan_entry_undo", "plan_reverse"]


def _refused(store: HistoryStore, entry_id: str, path: str, what: str, current: bytes | None) -> StaleFile:
    later = _later_entries(store, entry_id, path)
    entries = f"entr{'ies' if len(later) > 1 else 'y'} that changed this file: {', '.join(later)}"
    by = f" (later history {entries})" if later else ""
    return StaleFile(
        f"cannot undo history entry {entry_id}: {path}: {what}{by}",
        path=path,
        actual=fingerprint(current) if current is not None else None,
        advice=(
            f"nothing was written. Undo the later entries first, newest first ({option('undo_entry')}), "
            f"then this one; or restore the file as it was before this entry ({option('restore_entry')}), "
            "which discards what came after"
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


def _what_it_did(version: FileVersion, where: str) -> str:
    """The entry's first changed line in words, for a refusal: "it wrote line 15: 'x = 1500'"."""
    from nbedit.engine.diff_counts import ALIGN_LINES  # refusals only

    after = (_display(version.after, where) or "").splitlines()
    before = (_display(version.before, where) or "").splitlines()
    if len(before) + len(after) > ALIGN_LINES:  # one difflib call over it all is quadratic (issue 27)
        from nbedit.engine.resync import aligned_opcodes

        changes = aligned_opcodes(before, after, ALIGN_LINES)
    else:
        import difflib

        changes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    changed = [change for change in changes if change[0] != "equal"]
    if not changed:
        return "it changed this file"
    tag, i1, i2, j1, j2 = changed[0]
    count = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in changed)
    more = f" (and {count - 1} more changed line{'s' if count > 2 else ''})" if count > 1 else ""
    if tag == "delete":
        return f"it removed line {i1 + 1}: {before[i1][:80]!r}{more}"
    return f"it wrote line {j1 + 1}: {after[j1][:80]!r}{more}"


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
    except NoMatch:
        raise _refused(
            store, entry_id, where,
            f"{_what_it_did(version, where)}, and the file reads differently there now (changed again "
            "since), so its change cannot be taken back out", current,
        ) from None  # fmt: skip
    except AmbiguousMatch as error:
        raise _refused(
            store, entry_id, where,
            f"{_what_it_did(version, where)}, and that text is now in {len(error.locations) or 'several'} "
            "places, so where to take its change out is unclear", current,
        ) from None  # fmt: skip
    if file_plan is not None and file_plan.already_applied:
        file_plan = None  # its change is out of the file already (undone, or a later change took it out)
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
            later = _later_entries(store, entry.id, version.target_path)
            kept = f"; what later entries changed stays ({', '.join(later)})" if later else ""
            note = f"undoes older history entry {entry.id}: its change is taken out of the file as it is now"
            note += kept
            files.append(replace(file_plan, notes=(*file_plan.notes, note)))
    plan = Plan(files=tuple(files), dialect="undo", root=str(workspace.root))
    return HistoryPlan(plan, "undo", entry.id, False)


def plan_entry_undo(workspace: Workspace, entry_id: str | None = None, *, force: bool = False) -> HistoryPlan:
    """The undo of ``entry_id`` (None: the session's latest edit not yet undone) every surface uses.

    The newest entry of its files gets the exact undo (``history_ops.plan_undo``: every file back
    to its recorded bytes; a file changed by hand since is refused as stale, ``force`` overwrites).
    An older one, whose files a later applied entry changed, gets the exact undo while its files
    still hold what it wrote, else the reverse of what it did located in the files as they are now
    (``plan_reverse``), refused with nothing written when a later change is in its way. ``force``
    always means the exact undo. An undo a crash cut short is finished by the exact path only (its
    files hold either side, which the reverse cannot tell from a later change).
    """
    store = _store(workspace)
    if entry_id is not None:
        entry = store.entry(entry_id)
    else:
        entry = _undo_target(store, workspace.session, _root(workspace))
    try:
        return plan_undo(workspace, entry.id, force=force)
    except StaleFile as stale:
        if force or interrupted_undo(store, entry.id) is not None or not _is_older(store, entry.id):
            raise
        reverse = plan_reverse(workspace, entry.id)
        if not reverse.plan.files:
            undone = [undoing.id for undoing in store.undone_by(entry.id) if undoing.status == "applied"]
            by = f" (undone by history entry {', '.join(undone)})" if undone else ""
            raise NothingToUndo(
                f"nothing to undo: what history entry {entry.id} changed is no longer in its files{by}; "
                "it was undone already or later changes took it out. Nothing was written"
            ) from stale
        return reverse


def _is_older(store: HistoryStore, entry_id: str) -> bool:
    """Whether a later applied entry changed one of the files ``entry_id`` touched."""
    for version in store.file_versions(entry_id, sides=()):
        if any(_later_entries(store, entry_id, path) for path in {version.path, version.target_path}):
            return True
    return False
