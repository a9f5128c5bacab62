"""Who decides whether a model's change is written: the approval gate.

Every adapter plans a change with the workspace (nothing written), then hands
the plan to ``decide``. The gate is the only place that calls
``Workspace.apply`` for a tool call, so the four approval modes behave the same
in every adapter:

* ``"auto"``: apply at once;
* ``"dry-run"``: never write; the result carries the diff;
* a callable ``approve(plan) -> bool``: a program decides (tests, policies);
* ``"review"``: the notebook's review widget, with the running cell blocked
  until the person clicks (``nbedit.agents.review_gate``; IPython and
  ipywidgets are imported only then).

A decision is a value (``nbedit.agents.decision``, shared with the review gate
without either gate importing the other), so adapters turn it into their own
result shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from nbedit.agents.decision import Decision, hunk_names

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["APPROVAL_MODES", "Approval", "Decision", "check_approval", "decide", "hunk_names"]

Approval = Literal["auto", "review", "dry-run"] | Callable[["Plan"], "bool | str"]
APPROVAL_MODES = ("auto", "review", "dry-run")
DEFAULT_REVIEW_TIMEOUT = 600.0


def check_approval(approval: object) -> Approval:
    if callable(approval) or approval in APPROVAL_MODES:
        return approval  # type: ignore[return-value]
    raise ValueError(f"approval must be one of {', '.join(APPROVAL_MODES)} or a callable, not {approval!r}")


def decide(
    approval: Approval,
    workspace: Workspace,
    plan: Plan,
    *,
    origin: str,
    title: str | None = None,
    timeout: float | None = None,
    **apply_options: Any,
) -> Decision:
    """Ask ``approval`` about ``plan`` and write it (through ``workspace.apply``) if approved."""
    if approval == "dry-run":
        return Decision("dry-run", plan)
    if approval == "auto":
        return Decision("applied", plan, workspace.apply(plan, origin=origin, **apply_options))
    if approval == "review":
        from nbedit.agents.review_gate import review

        return review(
            workspace,
            plan,
            origin=origin,
            title=title,
            timeout=DEFAULT_REVIEW_TIMEOUT if timeout is None else timeout,
            **apply_options,
        )
    if callable(approval):
        verdict = approval(plan)
        if verdict is True:
            return Decision("applied", plan, workspace.apply(plan, origin=origin, **apply_options))
        reason = verdict if isinstance(verdict, str) else ""
        return Decision("rejected", plan, reason=reason)
    raise ValueError(f"unknown approval {approval!r}")
