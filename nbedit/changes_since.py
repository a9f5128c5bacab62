"""What changed since a checkpoint: per file one diff of everything nbedit wrote, and who wrote it.

``changes_since`` (``Workspace.changes``, ``nbedit changes --since``) shows, per file, the
change from before the checkpoint to what nbedit last recorded, the authors of the entries in
between, and whether the file changed outside nbedit since its last entry. It only reads; the
rewind (``nbedit.rewind``) builds on the same timeline (``nbedit.rewind_timeline``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass
from nbedit.checkpoints import Checkpoint, author, find_start, group, sequence
from nbedit.engine.models import FilePlan, Plan
from nbedit.history_ops import _store
from nbedit.storage.records import Entry

if TYPE_CHECKING:
    # the workspace as a Protocol: nbedit.workspace calls into this module, so importing it here,
    # even for type checkers, would make the two a circle (tests/test_architecture.py)
    from nbedit.history_ops import Workspace
from nbedit.rewind_timeline import _file_plan, _fingerprint, _Recorded, _root_entries, _timeline

__all__ = ["Changes", "FileChanges", "changes_since"]

Resolution = Literal["keep", "rewind"]
State = tuple["bytes | None", "int | None"]  # a file's bytes (None: no file) and mode (None: unknown)


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
