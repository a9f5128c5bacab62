"""``nbedit diff`` and ``nbedit view``: the commands that only read.

``diff`` compares two files as nbedit reads them (encodings, BOM, newline styles), exit status
as diff(1); ``view`` prints a notebook's editable cell view, the text edits are written against.
"""

from __future__ import annotations

import sys

from nbedit.cli_support import (
    FAILED,
    OK,
    USAGE,
    _print_diff,
    _Usage,
    _warn,
    _workspace,
)
from nbedit.commands.write import read_bounded

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace


__all__ = ["diff", "view"]


def diff(args: Arguments) -> int:
    from nbedit.engine.text import decode
    from nbedit.engine.whole_diff import text_diff
    from nbedit.errors import NbeditError

    texts = []
    for path in (args.a, args.b):
        try:
            data = read_bounded(path, "file")
        except _Usage as error:
            _warn(f"nbedit diff: {error}")
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


def view(args: Arguments) -> int:
    text = _workspace(args).view(args.notebook)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    return OK
