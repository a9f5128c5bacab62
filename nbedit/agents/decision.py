"""What happened to a planned change: the value the approval gate and the review gate share.

It lives apart from both so that neither gate imports the other: ``approval``
chooses a gate and ``review_gate`` (the notebook's human gate) builds a
``Decision`` from the widget, and both import only this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass
from nbedit.errors import NbeditError

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import ApplyResult

__all__ = ["Decision", "ReviewUnavailable", "hunk_names"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What happened to a planned change.

    ``outcome``: ``applied`` (``result`` is the ApplyResult), ``rejected``
    (``reason`` says why), or ``dry-run`` (nothing written by design).
    ``applied_hunks``/``left_out``: hunk names ("app.py hunk 2") when a
    reviewer unticked some hunks; both empty when the whole change went in.
    """

    outcome: Literal["applied", "rejected", "dry-run"]
    plan: Plan
    result: ApplyResult | None = None
    reason: str = ""
    applied_hunks: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        return bool(self.left_out)


def hunk_names(plan: Plan, keys: set[tuple[int, int]] | None = None) -> tuple[str, ...]:
    """Readable names of a plan's hunks ("app.py hunk 2 (line 14)"), all or only ``keys``."""
    names = []
    for file_index, file_plan in enumerate(plan.files):
        for hunk_index, located in enumerate(file_plan.hunks):
            if keys is None or (file_index, hunk_index) in keys:
                where = f"{located.cell}, line {located.line}" if located.cell else f"line {located.line}"
                names.append(f"{file_plan.target_path} hunk {hunk_index + 1} ({where})")
    return tuple(names)


class ReviewUnavailable(NbeditError):
    """``approval="review"`` cannot wait for a click here (no kernel, or one that can neither poll nor
    route a click to a subshell). A mistake of the program that set the tool up: adapters raise it to
    the program and never send it to the model as a tool result."""
