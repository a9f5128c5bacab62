"""What ``Workspace.apply`` did: a small frozen value, apart from the pipeline that makes it.

``ApplyResult`` is returned by the apply pipeline, undo, restore and rewind alike, and named by
the agents' decisions; living on its own, it can be imported (and typed) without the workspace.
Its notebook drawing imports the renderer only when a notebook asks for it.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.models import Plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ApplyResult"]


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What ``Workspace.apply`` did."""

    plan: Plan
    entry_id: str | None  # history entry, None when history is off or nothing changed
    written: tuple[str, ...]  # paths created, replaced or deleted
    already_applied: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.written)

    def __repr__(self) -> str:
        if self.already_applied:
            return "<ApplyResult already applied: nothing written>"
        if not self.written:
            return "<ApplyResult nothing written>"
        entry = f"history entry {self.entry_id}" if self.entry_id else "no history entry"
        return f"<ApplyResult wrote {', '.join(self.written)} ({entry}): {self.plan.summary().replace(chr(10), '; ')}>"

    def __rich_repr__(self) -> Iterator[tuple[str, object]]:
        yield "written", self.written
        yield "entry_id", self.entry_id
        yield "files", tuple(file_plan.summary() for file_plan in self.plan.files)

    def _repr_html_(self) -> str:
        from html import escape

        from nbedit.render.html import plan_to_html, wrap

        note = escape(repr(self)[1:-1], quote=False)
        return wrap(f'<div class="nb-note"><b>nbedit</b>: {note}</div>') + plan_to_html(self.plan)
