"""``nbedit changes --since ...`` and ``nbedit rewind ...``: the command line's side of ``nbedit.rewind``.

Apart from ``cli.py`` so the two commands add one call there. Like every command they
are thin: the workspace does the work, ``cli_support._review_and_apply`` shows the plan and asks
(or takes ``--yes``). A rewind with a conflict and no ``--resolve`` prints the conflict
(the overlapping lines between markers) and writes nothing, exit status 1.
"""

from __future__ import annotations

import sys

from nbedit.cli_support import OK, _print_diff, _review_and_apply, _say, _warn, _workspace

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_commands"]

_SINCE = "In[12] (a cell run), an entry id, turn:ID (an agent turn), last, or a time (10min, 2h)"


def add_commands(command: Any, parents: Any, wanted: Any) -> None:
    """Add ``changes`` and ``rewind`` to the ``nbedit`` parser (``cli.build_parser``'s helpers)."""
    changes = command(
        "changes",
        parents=parents(write=False) if wanted("changes") else [],
        help="show what nbedit wrote since a cell run, entry or time: one diff per file, who wrote it",
    )
    if wanted("changes"):
        changes.add_argument("--since", required=True, metavar="WHEN", help=_SINCE)
        changes.add_argument("--session", help="only this session's writes (default: every session's)")
        changes.add_argument("--json", action="store_true", help="print the files, authors and flags as JSON")
    changes.set_defaults(handler=_changes)

    rewind = command(
        "rewind",
        parents=parents(write=True, overwrite=False, matching=False, recording=False)
        if wanted("rewind")
        else [],
        help="preview, then take files back to before a checkpoint, keeping others' later edits",
    )
    if wanted("rewind"):
        rewind.add_argument("to", metavar="CHECKPOINT", help=_SINCE)
        rewind.add_argument(
            "--all-sessions",
            action="store_true",
            help="take back every session's edits since, not just its own",
        )
        rewind.add_argument(
            "--resolve",
            choices=("keep", "rewind"),
            help="where a later edit overlaps: keep it (file left as it is) or take the rewind's side",
        )
    rewind.set_defaults(handler=_rewind)


def _changes(args: Any) -> int:
    found = _workspace(args).changes(args.since, session=args.session)
    if args.json:
        import json

        records = [
            {
                "path": file.path,
                "authors": list(file.authors),
                "entries": list(file.entries),
                "changed_outside": file.changed_outside,
                "gaps": [list(gap) for gap in file.gaps],
                "net_change": file.before != file.after,
            }
            for file in found.files
        ]
        sys.stdout.write(json.dumps({"since": found.since, "files": records}, indent=2) + "\n")
        return OK
    if not found.files:
        _say(f"nbedit wrote nothing since {found.since}")
        return OK
    diffs = dict(zip((f.path for f in found.plan.files), found.plan.file_diffs, strict=True))
    _say(
        f"nbedit changes since {found.since}: {len(found.files)} file(s), {len(found.checkpoints)} checkpoint(s)"
    )
    for file in found.files:
        _say(f"== {file.path}: written by {', '.join(file.authors)} ({', '.join(file.entries)})")
        if file.changed_outside:
            _say(f"   changed outside nbedit since its last entry {file.entries[-1]}")
        for earlier, later in file.gaps:
            _say(f"   changed outside nbedit between {earlier} and {later} (in the diff below)")
        shown = diffs.get(file.path)
        if shown:
            _print_diff(shown)
        else:
            _say("   (no net change)")
    return OK


def _rewind(args: Any) -> int:
    workspace = _workspace(args)
    planned = workspace.plan_rewind(args.to, all_sessions=args.all_sessions)
    if planned.conflicts:
        for conflict in planned.conflicts:
            _warn(conflict.text().rstrip("\n"))
    plan = planned.selected(args.resolve)  # RewindConflict (exit 1, nothing written) without --resolve
    return _review_and_apply(
        workspace,
        plan,
        args,
        stdin_used=False,
        write=lambda: planned.apply(workspace, args.resolve),
        verb="rewound",
        question="Rewind?",
        warning=planned.describe(),
    )
