"""What every ``nbedit`` command shares: the workspace it opens, how it talks, how it asks before writing.

``cli.py`` (the parser, the quick argument reader, ``main``) and the command modules beside
it (``cli_rewind.py``) import these; this module imports neither, so the commands can live
in modules of their own without a circle (tests/test_architecture.py). It is on the path of
every call, so it imports only what ``cli.py`` already paid for: the workspace, rich and the
renderers load inside the helper that needs them (tests/test_startup.py).

Exit codes: ``OK`` 0, ``FAILED`` 1 (refused or failed; nothing written), ``USAGE`` 2.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from types import SimpleNamespace
    from typing import Any

    from rich.console import Console

    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace

__all__ = ["FAILED", "OK", "USAGE"]

OK, FAILED, USAGE = 0, 1, 2


class _Usage(Exception):
    """A usage problem found after parsing (unreadable input file, missing patch): ``cli`` shows it
    as argparse shows its own, exit status 2."""


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    # Diff rows are never wrapped (soft_wrap); panels on stderr wrap inside their box.
    return Console(stderr=stderr, highlight=False, soft_wrap=not stderr)


def _warn(message: str) -> None:
    """A plain line on stderr (never wrapped, so scripts can grep it)."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


_opened: list[Workspace] | None = None  # under ``run``: the workspaces to close before the process ends


def _workspace(args: Arguments) -> Workspace:
    from nbedit.workspace import Workspace

    root = args.root
    session = os.environ.get("NBEDIT_SESSION") or f"cli:{os.path.realpath(root)}"
    workspace = Workspace(
        root,
        exact=getattr(args, "exact", False),
        overwrite=getattr(args, "overwrite", False),
        clear_outputs=getattr(args, "clear_outputs", False),
        history=not getattr(args, "no_history", False),
        session=session,
        origin="cli",
        encoding=getattr(args, "encoding", None),
        **({"threshold": args.threshold} if getattr(args, "threshold", None) is not None else {}),
    )
    if _opened is not None:
        _opened.append(workspace)
    return workspace


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


def _confirm(question: str = "Apply?") -> bool:
    sys.stdout.write(f"{question} [y/N] ")
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
        from nbedit.render.summary import plain_diff  # (render.text.plan_to_plain_diff: one module less)

        sys.stdout.write(plain_diff(plan) + "\n")
        return _say
    from nbedit.render.terminal import print_plan

    console = _console()
    print_plan(plan, console)
    console.print()
    return lambda message: console.print(message, markup=False)


def _review_and_apply(
    workspace: Workspace,
    plan: Plan,
    args: Arguments,
    stdin_used: bool,
    *,
    write: Callable[[], Any] | None = None,
    verb: str = "applied",
    question: str = "Apply?",
    warning: str = "",
) -> int:
    """Show the plan, then write it only if the person (or --yes) agreed.

    ``write`` does the writing (default ``workspace.apply(plan)``; an undo passes
    its own, which records what it undoes); ``warning`` is said before asking.
    """
    say = _preview(plan)
    if getattr(args, "explain", False):
        say("why here (how each hunk was located):\n" + plan.explain())
    if plan.already_applied:
        say("already applied: the files already contain this change; nothing to do")
        return OK
    if not any(file_plan.changed for file_plan in plan.files):
        say("nothing to change")
        return OK
    if warning:
        say(warning)
    if args.dry_run:
        say("dry run: nothing written")
        return OK
    if not args.yes:
        if stdin_used or not _interactive():
            _warn(
                "preview only, nothing written: no terminal to ask for confirmation; re-run with --yes to apply"
            )
            return FAILED
        if not _confirm(question):
            say(f"not {verb}; nothing written")
            return FAILED
    result = write() if write is not None else workspace.apply(plan, force=getattr(args, "force", False))
    written = ", ".join(result.written) or "nothing"
    # a plain `nbedit undo` walks back past undo entries: an undo is undone by its id
    again = f"nbedit undo {result.entry_id}" if verb == "undone" else "nbedit undo"
    recorded = f" (history entry {result.entry_id}; undo with: {again})" if result.entry_id else ""
    say(f"{verb}: wrote {written}{recorded}")
    return OK


def _print_diff(diff: str) -> None:
    if not sys.stdout.isatty():
        sys.stdout.write(diff)
        return
    from nbedit.render.terminal import unified_diff_text

    _console().print(unified_diff_text(diff))


class _ClosedStdoutGuard:
    """``sys.stdout`` that drops output once the reader has gone (EPIPE) instead of raising.

    The first failed write points file descriptor 1 at ``/dev/null`` so the
    interpreter's own flush at exit cannot fail either; everything else is
    passed to the real stream (rich asks for ``isatty``, ``encoding``, ...).
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _gone(self) -> None:
        self.closed_by_reader = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def write(self, text: str) -> int:
        if self.closed_by_reader:
            return len(text)
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        if self.closed_by_reader:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
