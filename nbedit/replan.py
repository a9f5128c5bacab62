"""A stale preview re-planned by the three-way rule: the change moved onto the file as it is now.

A review shows a plan computed from the file's bytes at preview time. If the file changes
before Apply (a person typed, a tab saved, another kernel wrote), ``Workspace.apply``
refuses with ``StaleFile``, rightly: the plan no longer describes what would be written.
Often the change still fits: it touched lines the other edit did not. Then the same
three-way merge a rewind uses (``nbedit.engine.merge``; base = the previewed bytes, ours =
the plan's result, theirs = the file now) gives the change applied on top of the other
edit, byte-exact outside both.

``replan_stale`` returns that as a new plan, with what changed on disk, for the widget to
show and ask about again: it never writes, so nothing the person did not see is written.
It gives up (None) on anything the merge cannot carry safely: overlapping lines, a file
created, deleted or moved on either side, no text lines (binary, UTF-16), or a notebook
that would not be valid JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbedit._dataclass import dataclass, replace
from nbedit.engine.merge import merge_bytes, mergeable
from nbedit.engine.models import FilePlan, Plan, is_notebook_path, unjoined_before
from nbedit.engine.whole_diff import text_diff

if TYPE_CHECKING:
    from nbedit.workspace import Workspace

__all__ = ["Replanned", "replan_stale"]


@dataclass(frozen=True, slots=True)
class Replanned:
    """The plan moved onto the files as they are now, and per moved file what changed on disk."""

    plan: Plan
    disk_changes: tuple[tuple[str, str], ...]  # (path, unified diff previewed -> on disk now)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.disk_changes)


def replan_stale(workspace: Workspace, plan: Plan) -> Replanned | None:
    """``plan`` re-planned onto the files that changed since it was made, or None when any of
    them cannot be merged cleanly (then the person re-plans the request by hand)."""
    from nbedit.history_ops import _display
    from nbedit.rewind import _file_plan, _valid_notebook

    files: list[FilePlan] = []
    moved: list[tuple[str, str]] = []
    for file_plan in plan.files:
        held = unjoined_before(file_plan)
        if held is not None and not isinstance(held, (bytes, bytearray)):
            # a big file planned without holding it (``storage.streamed_file``): no old bytes to
            # merge from, so a file that changed cannot be moved onto; the person re-plans it
            if workspace._source.holds(file_plan.path, held):
                files.append(file_plan)
                continue
            return None
        current = workspace._source.read(file_plan.path)
        if current == file_plan.before_bytes:
            files.append(file_plan)
            continue
        base, ours = file_plan.before_bytes, file_plan.after_bytes
        if file_plan.operation != "update" or file_plan.new_path or not mergeable(base, ours, current):
            return None
        assert base is not None and ours is not None and current is not None
        merged = merge_bytes(base, ours, current).merged
        if merged is None or (is_notebook_path(file_plan.path) and not _valid_notebook(merged)):
            return None
        note = "re-planned: this file changed on disk since the preview; the change still applies to it"
        replanned = _file_plan(
            workspace, file_plan.path, current, merged, file_plan.mode, (*file_plan.notes, note)
        )
        files.append(replanned)
        moved.append(
            (
                file_plan.path,
                text_diff(_display(base, file_plan.path), _display(current, file_plan.path), file_plan.path),
            )
        )
    if not moved:
        return None
    return Replanned(replace(plan, files=tuple(files), _diff_cache=[]), tuple(moved))
