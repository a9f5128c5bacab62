"""``nbedit demo`` and ``nbedit mcp``: the commands that run a program rather than one change.

``demo`` is the guided tour (``nbedit.demo``); ``mcp`` serves the workspace to agents over the
Model Context Protocol (``nbedit.agents.mcp_server``, in the ``agents`` extra). Both end the
usual way (``cli._USUAL_EXIT``), not with the quick exit of a one-change command.
"""

from __future__ import annotations

from nbedit.cli_support import (
    FAILED,
    OK,
    _warn,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    Arguments = argparse.Namespace | SimpleNamespace  # the quick path makes a SimpleNamespace

__all__ = ["demo", "mcp"]


def demo(args: Arguments) -> int:
    from nbedit.demo import run

    return int(run())


def mcp(args: Arguments) -> int:
    try:
        from nbedit.agents.mcp_server import serve
    except ImportError as error:
        _warn(f"nbedit mcp needs the mcp package ({error}); install it with: pip install 'nbedit[agents]'")
        return FAILED
    serve(args.root, args.approval, history=not args.no_history, require_view=args.require_view)
    return OK
