"""``%nbedit changes --since In[12]`` and ``%nbedit rewind In[12]``: the magics' side of ``nbedit.rewind``.

Kept apart from ``magics.py`` so the two subcommands add one line each there. Both are
thin: parse the arguments, make the kernel's workspace (``NbeditMagics.workspace``), call
one function of ``nbedit.rewind`` and return what to display. A rewind is reviewed like
any change (``NbeditMagics.review``: diff, per-file and per-hunk toggles, Apply/Reject);
a file where someone's later edit overlaps the rewind arrives unticked, with the conflict
in its notes, so Apply leaves it as it is unless the person ticks it. That unticking
(``untick_conflicts``) and the history table's Rewind button (``rewind_request``) live in
``history_widget``, below this module, so the imports point one way.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments

from nbedit.errors import NbeditError
from nbedit.jupyter.arguments import _parse
from nbedit.jupyter.review import ErrorView, Proposal

__all__ = ["changes", "rewind"]


@magic_arguments(name="nbedit changes")
@argument(
    "--since", required=True, help="In[12], an entry id, a checkpoint (turn:ID), last, or a time (10min)"
)
@argument("--session", help="only this session's writes (default: every session's)")
@argument("--root", help="workspace root")
def _changes_arguments() -> None:
    """Show everything nbedit wrote since a cell run, entry or time: one diff per file, who wrote it."""


def changes(magics: Any, rest: str) -> Any:
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
    from nbedit.jupyter.history_widget import untick_conflicts  # with the widgets: paid on first use

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
