"""``nbedit apply`` and ``nbedit edit``: read a change, plan it, preview it, write it when told.

The two commands agents run once per edit, so this module imports only what they need (the
workspace loads in ``cli_support._workspace``). Their inputs are read bounded: ``nbedit apply
/dev/zero`` stops at ``MAX_INPUT_BYTES`` with a usage error instead of reading until memory
runs out.
"""

from __future__ import annotations

import os
import sys

from nbedit.cli_support import (
    _review_and_apply,
    _Usage,
    _workspace,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace

__all__ = ["MAX_INPUT_BYTES", "apply", "edit", "read_bounded", "read_text"]

# the most bytes read as one change text (a patch, --old-file, --new-file) or compared by `diff`:
# `nbedit apply /dev/zero` stops here with a clear error instead of reading until memory runs out
MAX_INPUT_BYTES = 64 << 20


def _input_limit() -> int:
    """``MAX_INPUT_BYTES``, or ``$NBEDIT_MAX_INPUT_BYTES`` when set to a number."""
    configured = os.environ.get("NBEDIT_MAX_INPUT_BYTES", "").strip()
    return int(configured) if configured.isdigit() else MAX_INPUT_BYTES


def read_bounded(source: str, what: str) -> bytes:
    """At most ``_input_limit()`` bytes of a file (``-``: stdin); a longer input is a usage error."""
    limit = _input_limit()
    try:
        if source == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(limit + 1)
    except OSError as error:
        raise _Usage(f"cannot read {what} {source!r}: {error.strerror or error}") from None
    except MemoryError:
        raise _Usage(f"{what} {source!r} is too large to read into memory") from None
    if len(data) > limit:
        shown = "stdin" if source == "-" else repr(source)
        raise _Usage(
            f"{what} {shown} is over {limit:,} bytes, the most nbedit reads as one input; nothing was "
            "read further or written. Split the change, or set NBEDIT_MAX_INPUT_BYTES to a larger "
            "number of bytes if you really mean it"
        )
    return data


def read_text(source: str, what: str) -> str:
    """Read change text exactly (no newline translation); ``-`` is stdin."""
    data = read_bounded(source, what)
    try:
        return data.decode("utf-8-sig") if data.startswith(b"\xef\xbb\xbf") else data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Usage(f"{what} {source!r} is not UTF-8 text (byte {error.start})") from None


def apply(args: Arguments) -> int:
    source = args.patch
    if source is None:
        if sys.stdin.isatty():
            raise _Usage("give a patch file, or '-' to read the patch from stdin")
        source = "-"
    text = read_text(source, "patch")
    workspace = _workspace(args)
    plan = workspace.plan_patch(text, default_path=getattr(args, "path", None))
    return _review_and_apply(workspace, plan, args, stdin_used=source == "-")


def edit(args: Arguments) -> int:
    old = args.old if args.old is not None else read_text(args.old_file, "--old-file")
    new = args.new if args.new is not None else read_text(args.new_file, "--new-file")
    workspace = _workspace(args)
    plan = workspace.plan_edit(args.file, old, new, replace_all=args.replace_all, cell=args.cell)
    stdin_used = "-" in (args.old_file, args.new_file)
    return _review_and_apply(workspace, plan, args, stdin_used=stdin_used)
