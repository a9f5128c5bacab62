"""``nbedit mcp``: nbedit's tools for any MCP client, over stdio.

The server offers ``view``, ``edit``, ``patch``, ``history`` and ``undo``; each
is a ``FunctionTools`` call, so an external agent gets the same matcher,
approval (``auto`` or ``dry-run``: nobody can click in a terminal client),
atomic writes and history as a model in a notebook. A refusal is raised as
the SDK's ``ToolError``, which MCP returns as an ``isError`` result carrying
the text for the model. Entries are recorded in the shared history store
(``$NBEDIT_HOME``) with origin ``agent:mcp.<tool>:<request id>``, so a
person can list and undo the agent's edits from a notebook
(``%nbedit history --all``, ``Workspace.undo(entry_id)``).

The ``mcp`` package is an optional extra (``pip install nbedit[agents]``); it
is imported only here. mcp 2 names the high-level server ``MCPServer``;
mcp 1 called it ``FastMCP``: both are accepted.
"""

from __future__ import annotations

import os
from typing import Any

from nbedit.agents.functions import FunctionTools
from nbedit.workspace import Workspace

__all__ = ["build_server", "serve"]

try:  # mcp 2
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1
    from mcp.server.fastmcp import Context  # type: ignore[no-redef, attr-defined, unused-ignore]
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef, attr-defined, unused-ignore]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, attr-defined, unused-ignore]

INSTRUCTIONS = (
    "nbedit edits files under one root folder safely: view a file before editing it; edit replaces old "
    "text that must occur exactly once (errors list the closest candidates or every match, with line "
    "numbers); patch takes a unified diff, a '*** Begin Patch' block or SEARCH/REPLACE blocks; every "
    "change is recorded and can be undone."
)


def build_server(workspace: Workspace, approval: str = "auto") -> Any:
    """An MCP server whose tools edit ``workspace`` (``approval``: ``auto`` or ``dry-run``)."""
    if approval not in ("auto", "dry-run"):
        raise ValueError("the MCP server takes approval 'auto' or 'dry-run' (nobody can click in a terminal)")
    tools = FunctionTools(workspace, approval, origin_prefix="mcp.")  # type: ignore[arg-type]
    server = _Server("nbedit", instructions=INSTRUCTIONS)

    def call(name: str, arguments: dict[str, Any], context: Context) -> str:
        text = tools.run(name, arguments, call_id=str(context.request_id))
        if text.startswith("Error"):
            raise ToolError(text)
        return text

    @server.tool(description=tools_description("view"))
    def view(path: str, ctx: Context, view_range: list[int] | None = None) -> str:
        arguments: dict[str, Any] = {"path": path}
        if view_range is not None:
            arguments["view_range"] = view_range
        return call("view", arguments, ctx)

    @server.tool(description=tools_description("edit"))
    def edit(
        path: str, old: str, new: str, ctx: Context, replace_all: bool = False, cell: str | None = None
    ) -> str:
        arguments: dict[str, Any] = {"path": path, "old": old, "new": new, "replace_all": replace_all}
        if cell is not None:
            arguments["cell"] = cell
        return call("edit", arguments, ctx)

    @server.tool(description=tools_description("patch"))
    def patch(patch: str, ctx: Context) -> str:
        return call("patch", {"patch": patch}, ctx)

    @server.tool(description="List the changes recorded in this server's session, newest first.")
    def history(limit: int = 20) -> str:
        return tools.history_text(limit)

    @server.tool(description=tools_description("undo"))
    def undo(ctx: Context, entry_id: str | None = None) -> str:
        return call("undo", {} if entry_id is None else {"entry_id": entry_id}, ctx)

    return server


def tools_description(name: str) -> str:
    from nbedit.agents.functions import FUNCTIONS

    return str(FUNCTIONS[name]["description"])


def serve(root: str = ".", approval: str = "auto", *, history: bool = True) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    session = os.environ.get("NBEDIT_SESSION") or f"mcp-{os.getpid()}"
    workspace = Workspace(root, session=session, history=history)
    build_server(workspace, approval).run("stdio")
