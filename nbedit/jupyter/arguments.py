"""Reading a magic's argument line: IPython's ``magic_arguments``, with every failure a ``UsageError``.

Shared by ``magics`` and ``rewind_magics``; it sits below both so that neither has to
import the other for it (tests/test_architecture.py refuses import circles).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring

__all__ = ["usage"]


def _parse(function: Callable[..., Any], line: str) -> Any:
    """Parse a magic's arguments; every failure is a UsageError that shows the usage line."""
    try:
        arguments = parse_argstring(function, line)
    except (UsageError, ValueError) as error:  # ValueError: unbalanced quotes in the argument line
        raise UsageError(f"{error}\n{usage(function)}") from None
    # IPython splits magic arguments without removing quotes ("my dir" stays quoted); paths need them gone.
    for name, value in vars(arguments).items():
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            setattr(arguments, name, value[1:-1])
    return arguments


def usage(function: Callable[..., Any]) -> str:
    """The one-line usage of a magic (IPython's formatter adds reST decoration; drop it)."""
    text = function.parser.format_usage().replace("::", "")  # type: ignore[attr-defined]
    return "usage: " + " ".join(text.split())
