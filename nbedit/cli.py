"""The ``nbedit`` command: preview a change in the terminal, then apply it.

Each subcommand is thin: parse arguments, call one ``Workspace`` method, render
the result. Nothing is written unless the person said yes: on a terminal
``apply``/``edit`` ask "Apply? [y/N]"; without one they only preview unless
``--yes`` is given, and ``--dry-run`` never writes.

``undo`` and ``restore`` are changes like any other: previewed, then asked
about (``--yes`` to skip, ``--dry-run`` to only look), and a restore says which
later history entries' changes it discards.

A closed stdout (``nbedit apply x.diff --yes | head -1``) never changes what
happens: output after the pipe closed is dropped, the write goes ahead, and the
exit status is the write's.

Exit codes: 0 applied (or nothing to do, or ``--dry-run``), 1 refused or failed
(the error is printed on stderr, nothing was written; this includes declining the
prompt and a preview without a terminal or ``--yes``), 2 usage error. ``nbedit diff`` follows diff(1): 0 same, 1 different, 2 trouble.

Start-up is most of the cost of one call (an agent runs ``nbedit`` once per
edit), so imports stay where they are used: the workspace, rich and the
renderers load only inside the subcommand that needs them. ``apply`` and
``edit`` with plain options are read without argparse (``_quick_parse``: only
argument lists argparse would read the same way; anything else, ``--help`` and
every error go through argparse), and argparse fills in only the subcommand
that was named, so ``nbedit --help`` does not build the other ten.

This module is the parser and the dispatch: each command's code is in ``nbedit.commands``
(one module per group: ``write``, ``reading``, ``history``, ``doctor``, ``programs``; and
``nbedit.cli_rewind``), imported by the command's handler when it runs. What every command
shares (the workspace it opens, ``_say``/``_warn``, the preview and the "Apply? [y/N]" step,
exit codes) is in ``nbedit.cli_support``, below this module and the command modules; the names
stay importable from here.

The preview has two forms. On a terminal it is rich's coloured, numbered rows.
Anywhere else (a pipe, a log, CI) it is plain text written in one call: the
header's facts (counts, hunks not found verbatim, offsets) and the plan's
unified diff, with no ANSI codes. Piped output is read by tools and scrolled
back through by people, and the rows cost seconds for a 1,000-hunk change
(rich printed them line by line) where the diff is already in the plan.
"""

from __future__ import annotations

import os
import sys

# the helpers every command shares (moved to nbedit.cli_support; still importable from here)
from nbedit import cli_support
from nbedit.cli_support import (  # noqa: F401
    FAILED,
    OK,
    USAGE,
    _ClosedStdoutGuard,
    _confirm,
    _console,
    _interactive,
    _is_terminal,
    _preview,
    _print_diff,
    _review_and_apply,
    _say,
    _Usage,
    _warn,
    _workspace,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Sequence
    from types import SimpleNamespace
    from typing import Any

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace
else:
    # types.SimpleNamespace is the type of sys.implementation (types.py takes it from there);
    # ``types`` itself is not imported by a command that needs nothing else of it (start-up)
    SimpleNamespace = type(sys.implementation)

__all__ = ["build_parser", "main", "run"]

# --- subcommands -----------------------------------------------------------------------------------
# Each command lives in nbedit.commands (one module per group); the handlers here import it when the
# command runs, so a call loads only its own command's code and ``nbedit --help`` none of them.


def _apply(args: Arguments) -> int:
    from nbedit.commands.write import apply

    return apply(args)


def _edit(args: Arguments) -> int:
    from nbedit.commands.write import edit

    return edit(args)


def _diff(args: Arguments) -> int:
    from nbedit.commands.reading import diff

    return diff(args)


def _view(args: Arguments) -> int:
    from nbedit.commands.reading import view

    return view(args)


def _history(args: Arguments) -> int:
    from nbedit.commands.history import history

    return history(args)


def _show(args: Arguments) -> int:
    from nbedit.commands.history import show

    return show(args)


def _undo(args: Arguments) -> int:
    from nbedit.commands.history import undo

    return undo(args)


def _restore(args: Arguments) -> int:
    from nbedit.commands.history import restore

    return restore(args)


def _doctor(args: Arguments) -> int:
    from nbedit.commands.doctor import doctor

    return doctor(args)


def _demo(args: Arguments) -> int:
    from nbedit.commands.programs import demo

    return demo(args)


def _mcp(args: Arguments) -> int:
    from nbedit.commands.programs import mcp

    return mcp(args)


# --- parser ----------------------------------------------------------------------------------------


def _threshold(value: str) -> float:
    import argparse  # only on the argparse path: the quick path checks the threshold itself

    number = _threshold_number(value)
    if number is None:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number")
    if not 0.0 < number <= 1.0:
        raise argparse.ArgumentTypeError("must be greater than 0 and at most 1 (e.g. 0.9)")
    return number


def _threshold_number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's formatter, given the width it would find itself (its own search imports shutil,
    and with it bz2, lzma and fnmatch, for one number)."""
    import argparse

    return argparse.HelpFormatter(prog, width=_terminal_columns() - 2)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, found the same way: $COLUMNS, else stdout's terminal
    (when $COLUMNS or $LINES is unset), else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(os.environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((80, 24))
        if columns <= 0:
            columns = size.columns or 80
    return columns


def _common(
    write: bool, *, overwrite: bool = True, matching: bool = True, recording: bool = True
) -> argparse.ArgumentParser:
    """Options shared by subcommands; ``matching``/``overwrite``/``recording`` drop the ones that
    mean nothing for a subcommand (an undo neither matches nor adds files, and needs the history)."""
    import argparse

    parent = argparse.ArgumentParser(add_help=False, formatter_class=_formatter)
    parent.add_argument("--root", default=".", help="workspace root; paths are confined to it (default: .)")
    if write:
        parent.add_argument("--dry-run", action="store_true", help="preview only; never write")
        parent.add_argument("-y", "--yes", action="store_true", help="apply without asking")
    if write and matching:
        parent.add_argument(
            "--exact", action="store_true", help="accept exact matches only (no normalised or fuzzy tiers)"
        )
        parent.add_argument(
            "--threshold", type=_threshold, help="fuzzy match threshold in (0, 1] (default 0.9)"
        )
        parent.add_argument(
            "--encoding",
            metavar="NAME",
            help="text encoding of the files (e.g. cp1252, latin-1, utf-16); default: UTF-8, "
            "or UTF-16 by its BOM, or detected when the file is not UTF-8",
        )
    if write and overwrite:
        parent.add_argument("--overwrite", action="store_true", help="let added files replace existing ones")
    if write and recording:
        parent.add_argument("--no-history", action="store_true", help="do not record a snapshot for undo")
        parent.add_argument(
            "--force", action="store_true", help="also replace files you could not write in place (read-only)"
        )
    return parent


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``nbedit`` parser. ``only`` names the subcommands whose arguments are added (default:
    all); the others keep their name and help line, which is all ``nbedit --help`` shows, so a
    call builds just what it reads."""
    import argparse

    def wanted(name: str) -> bool:
        return only is None or name in only

    def parents(write: bool, **options: bool) -> list[argparse.ArgumentParser]:
        return [_common(write, **options)]

    parser = argparse.ArgumentParser(
        prog="nbedit",
        formatter_class=_formatter,
        description="Review and apply edits (diffs, apply_patch, SEARCH/REPLACE, old/new pairs) to files and notebooks.",
        epilog="exit status: 0 applied/ok, 1 refused, failed or not confirmed (nothing written), 2 usage error",
    )
    from nbedit import __version__

    parser.add_argument("--version", action="version", version=f"nbedit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, **options: Any) -> argparse.ArgumentParser:
        return commands.add_parser(name, formatter_class=_formatter, **options)

    apply = command(
        "apply",
        parents=parents(write=True) if wanted("apply") else [],
        help="preview and apply a patch (any dialect, auto-detected)",
    )
    if wanted("apply"):
        apply.add_argument(
            "patch", nargs="?", metavar="PATCH", help="patch file, or - for stdin (default: stdin)"
        )
        apply.add_argument(
            "--explain", action="store_true", help="say how each hunk was located (tiers, scores)"
        )
        apply.add_argument(
            "--path",
            metavar="FILE",
            help="the file that blocks and hunks naming no file edit (a reply about one file)",
        )
    apply.set_defaults(handler=_apply)

    edit = command(
        "edit",
        parents=parents(write=True, overwrite=False) if wanted("edit") else [],
        help="replace old text with new text in one file",
    )
    if wanted("edit"):
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
        edit.add_argument(
            "--clear-outputs", action="store_true", help="clear the outputs of edited notebook code cells"
        )
        edit.add_argument(
            "--explain", action="store_true", help="say how the old text was located (tiers, scores)"
        )
    edit.set_defaults(handler=_edit)

    diff = command("diff", help="unified diff of two files (exit 0 same, 1 different)")
    if wanted("diff"):
        diff.add_argument("a", metavar="A")
        diff.add_argument("b", metavar="B")
    diff.set_defaults(handler=_diff)

    view = command(
        "view",
        parents=parents(write=False) if wanted("view") else [],
        help="show a notebook as its editable cell view",
    )
    if wanted("view"):
        view.add_argument("notebook", metavar="NOTEBOOK")
    view.set_defaults(handler=_view)

    history = command(
        "history", parents=parents(write=False) if wanted("history") else [], help="list recorded edits"
    )
    if wanted("history"):
        history.add_argument(
            "--all", action="store_true", help="every session, not just this root's CLI edits"
        )
        history.add_argument("--path", help="only edits that touched this file")
        history.add_argument(
            "--json",
            action="store_true",
            help="print the entries as JSON (for scripts); piped output is tab-separated",
        )
    history.set_defaults(handler=_history)

    show = command(
        "show",
        parents=parents(write=False) if wanted("show") else [],
        help="show what a history entry changed",
    )
    if wanted("show"):
        show.add_argument("id", metavar="ID")
    show.set_defaults(handler=_show)

    reverting = {"overwrite": False, "matching": False, "recording": False}
    undo = command(
        "undo",
        parents=parents(write=True, **reverting) if wanted("undo") else [],
        help="preview, then undo the last edit of this session (or the entry ENTRY)",
    )
    if wanted("undo"):
        undo.add_argument(
            "entry", metavar="ENTRY", nargs="?", help="history entry id; an older one is taken out in place"
        )
        undo.add_argument("--force", action="store_true", help="undo even if the files changed since")
    undo.set_defaults(handler=_undo)

    restore = command(
        "restore",
        parents=parents(write=True, **reverting) if wanted("restore") else [],
        help="preview, then put files back as they were before an entry",
    )
    if wanted("restore"):
        restore.add_argument("id", metavar="ID")
        restore.add_argument("--after", action="store_true", help="restore the state after the entry instead")
        restore.add_argument("--force", action="store_true", help="restore even if the files changed since")
    restore.set_defaults(handler=_restore)

    doctor = command(
        "doctor",
        parents=parents(write=False) if wanted("doctor") else [],
        help="check the history store; --repair sets a damaged one aside",
    )
    if wanted("doctor"):
        doctor.add_argument(
            "--repair", action="store_true", help="set a damaged history aside and start anew"
        )
    doctor.set_defaults(handler=_doctor, no_history=False)

    demo = command("demo", help="a guided tour on sample files in a temporary folder")
    demo.set_defaults(handler=_demo)

    mcp = command("mcp", help="serve view/edit/patch/history/undo to an MCP client over stdio")
    if wanted("mcp"):
        mcp.add_argument("--root", default=".", help="workspace root; paths are confined to it (default: .)")
        mcp.add_argument(
            "--approval", choices=("auto", "dry-run"), default="auto", help="dry-run never writes"
        )
        mcp.add_argument("--no-history", action="store_true", help="do not record a snapshot for undo")
        mcp.add_argument(
            "--require-view", action="store_true", help="refuse an edit of a file the agent has not viewed"
        )
    mcp.set_defaults(handler=_mcp)

    from nbedit.cli_rewind import add_commands

    add_commands(command, parents, wanted)
    return parser


# --- the quick path ---------------------------------------------------------------------------------
# ``apply`` and ``edit`` as agents call them, read without importing argparse (a few milliseconds of
# every call). Only argument lists that argparse reads in exactly one way are taken: every option
# spelled in full and separate from its value, values that do not start with "-" (but "-" itself),
# the right number of positionals, one of each required pair. Anything else (``--help``, ``--root=x``,
# abbreviations, ``--``, mistakes) returns None and argparse reads it, with its own messages.
# tests/test_startup.py checks these tables against the argparse parser, option by option.

_WRITING_OPTIONS = {  # option -> (destination, takes a value)
    "--root": ("root", True),
    "--dry-run": ("dry_run", False),
    "-y": ("yes", False),
    "--yes": ("yes", False),
    "--exact": ("exact", False),
    "--threshold": ("threshold", True),
    "--encoding": ("encoding", True),
    "--no-history": ("no_history", False),
    "--force": ("force", False),
}
_QUICK_OPTIONS = {
    "apply": {
        **_WRITING_OPTIONS,
        "--overwrite": ("overwrite", False),
        "--explain": ("explain", False),
        "--path": ("path", True),
    },
    "edit": {
        **_WRITING_OPTIONS,
        "--old": ("old", True),
        "--old-file": ("old_file", True),
        "--new": ("new", True),
        "--new-file": ("new_file", True),
        "--replace-all": ("replace_all", False),
        "--cell": ("cell", True),
        "--clear-outputs": ("clear_outputs", False),
        "--explain": ("explain", False),
    },
}
_QUICK_POSITIONAL = {"apply": ("patch", 0), "edit": ("file", 1)}  # destination, least given (most: 1)
_QUICK_ONE_OF = {"apply": (), "edit": (("old", "old_file"), ("new", "new_file"))}


def _quick_parse(arguments: Sequence[str]) -> SimpleNamespace | None:
    """``apply``/``edit`` arguments as argparse would read them, or None to let argparse read them."""
    if not arguments or arguments[0] not in _QUICK_OPTIONS:
        return None
    command = arguments[0]
    options = _QUICK_OPTIONS[command]
    values: dict[str, Any] = {
        destination: None if takes_value else False for destination, takes_value in options.values()
    }
    values["root"] = "."
    given: set[str] = set()
    positionals: list[str] = []
    tokens = iter(arguments[1:])
    for token in tokens:
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        option = options.get(token)
        if option is None:
            return None
        destination, takes_value = option
        given.add(destination)
        if not takes_value:
            values[destination] = True
            continue
        value = next(tokens, None)
        if value is None or (value.startswith("-") and value != "-"):
            return None
        if destination == "threshold":  # argparse checks each one given, not just the last
            number = _threshold_number(value)
            if number is None or not 0.0 < number <= 1.0:
                return None
            values[destination] = number
        else:
            values[destination] = value
    positional, least = _QUICK_POSITIONAL[command]
    if not least <= len(positionals) <= 1:
        return None
    values[positional] = positionals[0] if positionals else None
    for pair in _QUICK_ONE_OF[command]:
        if len(given.intersection(pair)) != 1:
            return None
    handler = _apply if command == "apply" else _edit
    return SimpleNamespace(command=command, handler=handler, **values)


def _parser_for(arguments: Sequence[str]) -> argparse.ArgumentParser:
    """The parser with only the named subcommand's arguments (all of them when that is unclear).

    The top level takes no option with a value, so the first argument that is not an option names
    the subcommand."""
    for argument in arguments:
        if argument == "--":
            break
        if not argument.startswith("-"):
            return build_parser(only=(argument,))
    else:
        return build_parser(only=())
    return build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = None
    args: Arguments | None = _quick_parse(arguments)
    if args is None:
        parser = _parser_for(arguments)
        args = parser.parse_args(arguments)
    stdout = sys.stdout
    sys.stdout = _ClosedStdoutGuard(stdout)  # type: ignore[assignment]
    try:
        return _run(parser, args)
    finally:
        sys.stdout.flush()  # through the guard: a reader that left must not fail the exit flush
        sys.stdout = stdout


def _run(parser: argparse.ArgumentParser | None, args: Arguments) -> int:
    try:
        return int(args.handler(args))
    except _Usage as problem:
        (parser or build_parser(only=())).error(str(problem))  # exits with status 2
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


# The commands that may leave a thread or an exit handler behind (the tour's temporary folder, the
# MCP server): their process ends the usual way. Every other command ends at once.
_USUAL_EXIT = frozenset({"demo", "mcp"})


def run() -> None:
    """The ``nbedit`` program (the console script, ``python -m nbedit``): ``main``, then exit.

    A process that runs one command pays for two things a library call does not. The cyclic
    garbage collector runs again and again while the imports create thousands of classes and
    functions: here it runs less often (it still runs; a big change can make cyclic garbage).
    And the interpreter's teardown frees every module object by object just before the system
    frees the whole process: once a short command has returned, its output flushed and its
    history stores let go, the process ends with ``os._exit``. The stores are let go without
    folding their write-ahead log into the database (``Workspace._close_before_exit``): every
    entry is already synced in the log, and folding it would cost this run two more syncs and
    the next run a new log. Errors that escape ``main``, ``demo`` and ``mcp`` exit the usual way.
    """
    import gc

    cli_support._opened = []
    gc.set_threshold(50_000, 20, 20)
    try:
        code = main()
    except SystemExit as exit:  # argparse: --help, --version, usage errors (it printed them)
        if not isinstance(exit.code, int | None):
            raise
        code = exit.code or 0
    if _USUAL_EXIT.intersection(sys.argv[1:2]):
        sys.exit(code)
    for workspace in cli_support._opened:
        workspace._close_before_exit()  # noqa: SLF001 - the history's log is left for the next run
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - not contextlib: ~0.8 ms of every command (tests/test_startup.py)
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
