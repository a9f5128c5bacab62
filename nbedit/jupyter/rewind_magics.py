"""``%nbedit changes --since In[12]`` and ``%nbedit rewind In[12]``: the magics' side of ``nbedit.rewind``.

Kept apart from ``magics.py`` so the two subcommands add one line each there. Both are
thin: parse the arguments, make the kernel's workspace (``NbeditMagics.workspace``), call
one function of ``nbedit.rewind`` and return what to display. A rewind is reviewed like
any change (``NbeditMagics.review``: diff, per-file and per-hunk toggles, Apply/Reject);
a file where someone's later edit overlaps the rewind arrives unticked, with the conflict
in its notes, so Apply leaves it as it is unless the person ticks it.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments

from nbedit.errors import NbeditError
from nbedit.jupyter.review import ErrorView, Proposal, ReviewWidget

__all__ = ["changes", "rewind", "rewind_request", "untick_conflicts"]


@magic_arguments(name="nbedit changes")
@argument(
    "--since", required=True, help="In[12], an entry id, a checkpoint (turn:ID), last, or a time (10min)"
)
@argument("--session", help="only this session's writes (default: every session's)")
@argument("--root", help="workspace root")
def _changes_arguments() -> None:
    """Show everything nbedit wrote since a cell run, entry or time: one diff per file, who wrote it."""


def changes(magics: Any, rest: str) -> Any:
    from nbedit.jupyter.magics import _parse

    args = _parse(_changes_arguments, rest)
    try:
        return magics.workspace(args.root).changes(args.since, session=args.session)
    except NbeditError as error:
        return ErrorView(error)


@magic_arguments(name="nbedit rewind")
@argument(
    "to", help="the checkpoint to go back before: In[12], an entry id, turn:ID, last, or a time (10min)"
)
@argument(
    "--all-sessions", action="store_true", help="take back every session's edits since, not just its own"
)
@argument(
    "--resolve",
    choices=("keep", "rewind"),
    help="for overlapping later edits: keep them, or take the rewind's side",
)
@argument("--yes", "-y", action="store_true", help="apply at once, without waiting for Apply")
@argument("--root", help="workspace root")
def _rewind_arguments() -> None:
    """Take every file back to before a checkpoint, keeping later edits by others (shown for review first)."""


def rewind(magics: Any, rest: str) -> Any:
    from nbedit.jupyter.magics import _parse

    args = _parse(_rewind_arguments, rest)
    planned: list[Any] = []

    def make_plan(workspace: Any) -> Proposal:
        rewound = workspace.plan_rewind(args.to, all_sessions=args.all_sessions)
        planned[:] = [rewound]
        plan = rewound.selected(args.resolve) if args.yes else rewound.plan
        return Proposal(plan, rewound.apply_options)

    title = f"rewind to before {args.to}"
    if args.yes:
        return magics.review(make_plan, root=args.root, yes=True, title=title)
    widget = magics.review(make_plan, root=args.root, title=title)
    return widget if args.resolve == "rewind" else untick_conflicts(widget, planned)


def rewind_request(checkpoint: str, *, all_sessions: bool = False) -> tuple[Any, list[Any]]:
    """A history request for the table's Rewind button, and the list that receives its plan."""
    from nbedit.jupyter.history_widget import HistoryRequest

    planned: list[Any] = []

    def operation(workspace: Any) -> Any:
        rewound = workspace.plan_rewind(checkpoint, all_sessions=all_sessions)
        planned[:] = [rewound]
        return rewound

    return HistoryRequest(f"rewind to before {checkpoint}", operation), planned


def untick_conflicts(review: Any, planned: list[Any]) -> Any:
    """Leave a rewind's conflicted files out of Apply until the person ticks them: now, and
    again whenever the review loads a new plan (Re-plan after a stale preview)."""
    if not isinstance(review, ReviewWidget):
        return review

    def untick(*_: object) -> None:
        if not planned:
            return
        conflicted = {conflict.path for conflict in planned[-1].conflicts}
        for index, file_plan in enumerate(review.plan.files):
            if file_plan.path in conflicted and not file_plan.hunks:
                review.set_included((index, None), False)

    untick()
    review.on_loaded(untick)
    return review
