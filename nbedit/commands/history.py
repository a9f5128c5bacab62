"""``nbedit history``, ``show``, ``undo`` and ``restore``: the history's commands.

Listing renders with ``render.history`` (a table on a terminal, tab-separated lines in a pipe,
JSON with ``--json``); undo and restore are changes like any other, previewed and asked about
through ``cli_support._review_and_apply``.
"""

from __future__ import annotations

import sys

from nbedit.cli_support import (
    OK,
    _console,
    _is_terminal,
    _print_diff,
    _review_and_apply,
    _say,
    _workspace,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace
    from typing import Any

    from nbedit.workspace import Workspace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace

__all__ = ["history", "restore", "show", "undo"]


def _history_call(workspace: Workspace, name: str) -> Any:
    method = getattr(workspace, name, None)
    if method is None:
        from nbedit.errors import HistoryError

        raise HistoryError(f"this nbedit has no history support yet (Workspace.{name} is missing)")
    return method


def history(args: Arguments) -> int:
    from nbedit.render.history import history_json, history_table, history_tsv

    workspace = _workspace(args)
    entries = _history_call(workspace, "history")(all=args.all, path=args.path)
    if args.json:
        sys.stdout.write(history_json(entries))
        return OK
    if not entries:
        scope = "" if args.all else " in this session (use --all to see every session)"
        _say(f"no edits recorded{scope}")
        return OK
    if not _is_terminal(sys.stdout):
        # piped: complete lines (no column cut to a width), tab-separated for cut/awk
        sys.stdout.write(history_tsv(entries))
        return OK
    _console().print(history_table(entries))
    return OK


def show(args: Arguments) -> int:
    workspace = _workspace(args)
    shown = _history_call(workspace, "show")(args.id)
    _print_shown(shown)
    return OK


def _print_shown(shown: Any) -> None:
    """``Workspace.show`` returns a diff string, or an object with ``entry`` and ``diff``."""
    if isinstance(shown, str):
        _print_diff(shown if shown.endswith("\n") or not shown else shown + "\n")
        return
    entry = getattr(shown, "entry", None)
    if entry is not None:
        from nbedit.render.history import history_table

        _console().print(history_table([entry]))
    diff = getattr(shown, "diff", None)
    if isinstance(diff, str):
        _print_diff(diff)


def undo(args: Arguments) -> int:
    from nbedit.history_reverse import plan_entry_undo

    workspace = _workspace(args)
    planned = plan_entry_undo(workspace, getattr(args, "entry", None), force=args.force)
    return _review_and_apply(
        workspace,
        planned.plan,
        args,
        stdin_used=False,
        write=lambda: planned.apply(workspace),
        verb="undone",
        question="Undo?",
        warning=f"this undoes history entry {planned.undoes}",
    )


def restore(args: Arguments) -> int:
    from nbedit import history_ops

    workspace = _workspace(args)
    which = "after" if args.after else "before"
    planned = history_ops.plan_restore(workspace, args.id, which=which, force=args.force)
    return _review_and_apply(
        workspace,
        planned.plan,
        args,
        stdin_used=False,
        write=lambda: planned.apply(workspace),
        verb="restored",
        question="Restore?",
        warning=planned.describe_drops(),
    )
