"""The ``nbedit`` command: preview a change in the terminal, then apply it.

Each subcommand is thin: parse arguments, call one ``Workspace`` method, render
the result. Nothing is written unless the person said yes: on a terminal
``apply``/``edit`` ask "Apply? [y/N]"; without one they only preview unless
``--yes`` is given, and ``--dry-run`` never writes.

Exit codes: 0 applied (or nothing to do, or ``--dry-run``), 1 refused or failed
(the error is printed on stderr, nothing was written; this includes declining the
prompt and a preview without a terminal or ``--yes``), 2 usage error. ``nbedit diff`` follows diff(1): 0 same, 1 different, 2 trouble.

Imports stay lazy so ``nbedit apply --yes`` starts fast: the workspace, rich and
the renderers load only inside the subcommand that needs them.

The preview has two forms. On a terminal it is rich's coloured, numbered rows.
Anywhere else (a pipe, a log, CI) it is plain text written in one call: the
header's facts (counts, hunks not found verbatim, offsets) and the plan's
unified diff, with no ANSI codes. Piped output is read by tools and scrolled
back through by people, and the rows cost seconds for a 1,000-hunk change
(rich printed them line by line) where the diff is already in the plan.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["build_parser", "main"]

OK, FAILED, USAGE = 0, 1, 2


class _Usage(Exception):
    """A usage problem found after parsing (unreadable input file, missing patch)."""


# --- helpers ---------------------------------------------------------------------------------------


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    # Diff rows are never wrapped (soft_wrap); panels on stderr wrap inside their box.
    return Console(stderr=stderr, highlight=False, soft_wrap=not stderr)


def _warn(message: str) -> None:
    """A plain line on stderr (never wrapped, so scripts can grep it)."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _read_text(source: str, what: str) -> str:
    """Read change text exactly (no newline translation); ``-`` is stdin."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise _Usage(f"cannot read {what} {source!r}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8-sig") if data.startswith(b"\xef\xbb\xbf") else data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Usage(f"{what} {source!r} is not UTF-8 text (byte {error.start})") from None


def _workspace(args: argparse.Namespace) -> Workspace:
    from nbedit.workspace import Workspace

    root = args.root
    session = os.environ.get("NBEDIT_SESSION") or f"cli:{os.path.realpath(root)}"
    return Workspace(
        root,
        exact=getattr(args, "exact", False),
        overwrite=getattr(args, "overwrite", False),
        history=not getattr(args, "no_history", False),
        session=session,
        origin="cli",
        **({"threshold": args.threshold} if getattr(args, "threshold", None) is not None else {}),
    )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _interactive() -> bool:
    return _is_terminal(sys.stdin) and _is_terminal(sys.stdout)


def _say(message: str) -> None:
    sys.stdout.write(message + "\n")
    sys.stdout.flush()


def _confirm() -> bool:
    sys.stdout.write("Apply? [y/N] ")
    sys.stdout.flush()
    try:
        answer = sys.stdin.readline()
    except (KeyboardInterrupt, EOFError):
        _say("")
        return False
    return answer.strip().lower() in {"y", "yes"}


def _preview(plan: Plan) -> Callable[[str], None]:
    """Print the plan (rows on a terminal, plain diff elsewhere); return how to print what follows."""
    if not _is_terminal(sys.stdout):
        from nbedit.render.text import plan_to_plain_diff

        sys.stdout.write(plan_to_plain_diff(plan) + "\n")
        return _say
    from nbedit.render.terminal import print_plan

    console = _console()
    print_plan(plan, console)
    console.print()
    return lambda message: console.print(message, markup=False)


def _review_and_apply(workspace: Workspace, plan: Plan, args: argparse.Namespace, stdin_used: bool) -> int:
    """Show the plan, then write it only if the person (or --yes) agreed."""
    say = _preview(plan)
    if plan.already_applied:
        say("already applied: the files already contain this change; nothing to do")
        return OK
    if not any(file_plan.changed for file_plan in plan.files):
        say("nothing to change")
        return OK
    if args.dry_run:
        say("dry run: nothing written")
        return OK
    if not args.yes:
        if stdin_used or not _interactive():
            _warn(
                "preview only, nothing written: no terminal to ask for confirmation; re-run with --yes to apply"
            )
            return FAILED
        if not _confirm():
            say("not applied; nothing written")
            return FAILED
    result = workspace.apply(plan)
    written = ", ".join(result.written) or "nothing"
    recorded = f" (history entry {result.entry_id}; undo with: nbedit undo)" if result.entry_id else ""
    say(f"applied: wrote {written}{recorded}")
    return OK


# --- subcommands -----------------------------------------------------------------------------------


def _apply(args: argparse.Namespace) -> int:
    source = args.patch
    if source is None:
        if sys.stdin.isatty():
            raise _Usage("give a patch file, or '-' to read the patch from stdin")
        source = "-"
    text = _read_text(source, "patch")
    workspace = _workspace(args)
    plan = workspace.plan_patch(text)
    return _review_and_apply(workspace, plan, args, stdin_used=source == "-")


def _edit(args: argparse.Namespace) -> int:
    old = args.old if args.old is not None else _read_text(args.old_file, "--old-file")
    new = args.new if args.new is not None else _read_text(args.new_file, "--new-file")
    workspace = _workspace(args)
    plan = workspace.plan_edit(args.file, old, new, replace_all=args.replace_all, cell=args.cell)
    stdin_used = "-" in (args.old_file, args.new_file)
    return _review_and_apply(workspace, plan, args, stdin_used=stdin_used)


def _diff(args: argparse.Namespace) -> int:
    from nbedit.engine.plan import text_diff
    from nbedit.engine.text import decode
    from nbedit.errors import NbeditError

    texts = []
    for path in (args.a, args.b):
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            _warn(f"nbedit diff: {path}: {error.strerror or error}")
            return USAGE
        try:
            texts.append(decode(data, path)[0])
        except NbeditError as error:
            _warn(f"nbedit diff: {error.message}")
            return USAGE
    if texts[0] == texts[1]:
        return OK
    diff = text_diff(texts[0], texts[1], args.a, args.b)
    diff = diff.replace(f"--- a/{args.a}\n", f"--- {args.a}\n", 1).replace(
        f"+++ b/{args.b}\n", f"+++ {args.b}\n", 1
    )
    _print_diff(diff)
    return FAILED


def _print_diff(diff: str) -> None:
    if not sys.stdout.isatty():
        sys.stdout.write(diff)
        return
    from nbedit.render.terminal import unified_diff_text

    _console().print(unified_diff_text(diff))


def _view(args: argparse.Namespace) -> int:
    text = _workspace(args).view(args.notebook)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    return OK


def _history_call(workspace: Workspace, name: str) -> Any:
    method = getattr(workspace, name, None)
    if method is None:
        from nbedit.errors import HistoryError

        raise HistoryError(f"this nbedit has no history support yet (Workspace.{name} is missing)")
    return method


def _history(args: argparse.Namespace) -> int:
    from nbedit.render.history import history_table

    workspace = _workspace(args)
    entries = _history_call(workspace, "history")(all=args.all, path=args.path)
    if not entries:
        scope = "" if args.all else " in this session (use --all to see every session)"
        _console().print(f"no edits recorded{scope}", markup=False)
        return OK
    _console().print(history_table(entries))
    return OK


def _show(args: argparse.Namespace) -> int:
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


def _undo(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    result = _history_call(workspace, "undo")(force=args.force)
    _report(result, "undone")
    return OK


def _restore(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    result = _history_call(workspace, "restore")(args.id, after=args.after, force=args.force)
    _report(result, "restored")
    return OK


def _report(result: Any, verb: str) -> None:
    written = getattr(result, "written", None)
    entry_id = getattr(result, "entry_id", None)
    files = ", ".join(written) if written else "nothing to write"
    recorded = f" (history entry {entry_id})" if entry_id else ""
    _console().print(f"{verb}: {files}{recorded}", markup=False)


# --- parser ----------------------------------------------------------------------------------------


def _threshold(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0.0 < number <= 1.0:
        raise argparse.ArgumentTypeError("must be greater than 0 and at most 1 (e.g. 0.9)")
    return number


def _common(write: bool) -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--root", default=".", help="workspace root; paths are confined to it (default: .)")
    if write:
        parent.add_argument("--dry-run", action="store_true", help="preview only; never write")
        parent.add_argument("-y", "--yes", action="store_true", help="apply without asking")
        parent.add_argument(
            "--exact", action="store_true", help="accept exact matches only (no normalised or fuzzy tiers)"
        )
        parent.add_argument(
            "--threshold", type=_threshold, help="fuzzy match threshold in (0, 1] (default 0.9)"
        )
        parent.add_argument("--overwrite", action="store_true", help="let added files replace existing ones")
        parent.add_argument("--no-history", action="store_true", help="do not record a snapshot for undo")
    return parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nbedit",
        description="Review and apply edits (diffs, apply_patch, SEARCH/REPLACE, old/new pairs) to files and notebooks.",
        epilog="exit status: 0 applied/ok, 1 refused, failed or not confirmed (nothing written), 2 usage error",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    writing, reading = _common(write=True), _common(write=False)

    apply = commands.add_parser(
        "apply", parents=[writing], help="preview and apply a patch (any dialect, auto-detected)"
    )
    apply.add_argument(
        "patch", nargs="?", metavar="PATCH", help="patch file, or - for stdin (default: stdin)"
    )
    apply.set_defaults(handler=_apply)

    edit = commands.add_parser("edit", parents=[writing], help="replace old text with new text in one file")
    edit.add_argument("file", metavar="FILE")
    old = edit.add_mutually_exclusive_group(required=True)
    old.add_argument("--old", help="the text to replace, exactly as it is in the file")
    old.add_argument("--old-file", metavar="PATH", help="read the old text from a file (- for stdin)")
    new = edit.add_mutually_exclusive_group(required=True)
    new.add_argument("--new", help="the replacement text")
    new.add_argument("--new-file", metavar="PATH", help="read the new text from a file (- for stdin)")
    edit.add_argument(
        "--replace-all", action="store_true", help="replace every occurrence, not just a unique one"
    )
    edit.add_argument("--cell", metavar="ID|INDEX", help="limit the edit to one notebook cell")
    edit.set_defaults(handler=_edit)

    diff = commands.add_parser("diff", help="unified diff of two files (exit 0 same, 1 different)")
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.set_defaults(handler=_diff)

    view = commands.add_parser("view", parents=[reading], help="show a notebook as its editable cell view")
    view.add_argument("notebook", metavar="NOTEBOOK")
    view.set_defaults(handler=_view)

    history = commands.add_parser("history", parents=[reading], help="list recorded edits")
    history.add_argument("--all", action="store_true", help="every session, not just this root's CLI edits")
    history.add_argument("--path", help="only edits that touched this file")
    history.set_defaults(handler=_history)

    show = commands.add_parser("show", parents=[reading], help="show what a history entry changed")
    show.add_argument("id", metavar="ID")
    show.set_defaults(handler=_show)

    undo = commands.add_parser("undo", parents=[reading], help="undo the last edit of this session")
    undo.add_argument("--force", action="store_true", help="undo even if the files changed since")
    undo.set_defaults(handler=_undo)

    restore = commands.add_parser(
        "restore", parents=[reading], help="put files back as they were before an entry"
    )
    restore.add_argument("id", metavar="ID")
    restore.add_argument("--after", action="store_true", help="restore the state after the entry instead")
    restore.add_argument("--force", action="store_true", help="restore even if the files changed since")
    restore.set_defaults(handler=_restore)

    mcp = commands.add_parser("mcp", help="serve view/edit/patch/history/undo to an MCP client over stdio")
    mcp.add_argument("--root", default=".", help="workspace root; paths are confined to it (default: .)")
    mcp.add_argument("--approval", choices=("auto", "dry-run"), default="auto", help="dry-run never writes")
    mcp.add_argument("--no-history", action="store_true", help="do not record a snapshot for undo")
    mcp.set_defaults(handler=_mcp)
    return parser


def _mcp(args: argparse.Namespace) -> int:
    try:
        from nbedit.agents.mcp_server import serve
    except ImportError as error:
        _warn(f"nbedit mcp needs the mcp package ({error}); install it with: pip install 'nbedit[agents]'")
        return FAILED
    serve(args.root, args.approval, history=not args.no_history)
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except _Usage as problem:
        parser.error(str(problem))  # exits with status 2
    except KeyboardInterrupt:
        _warn("interrupted; nothing written")
        return FAILED
    except Exception as error:
        from nbedit.errors import NbeditError

        if not isinstance(error, NbeditError):
            raise
        from nbedit.render.errors import error_panel

        _console(stderr=True).print(error_panel(error))
        return FAILED
    return USAGE  # not reached: parser.error exits


if __name__ == "__main__":
    sys.exit(main())
