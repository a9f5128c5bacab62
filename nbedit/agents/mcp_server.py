"""``nbedit mcp``: nbedit's tools for any MCP client, over stdio.

The server offers ``view``, ``edit``, ``edit_lines``, ``patch``, ``history``
and ``undo``; each is a ``FunctionTools`` call, so an external agent gets the
same matcher, anchored edits, approval (``auto`` or ``dry-run``: nobody can
click in a terminal client), view-before-edit (``require_view``), atomic
writes and history as a model in a notebook. Entries are recorded in the
shared history store (``$NBEDIT_HOME``) with origin
``agent:mcp.<tool>:<request id>``, so a person can list and undo the agent's
edits from a notebook (``%nbedit history --all``, ``Workspace.undo(entry_id)``).

Written for the model at the other end:

* every tool and every argument has a description, and annotations say which
  tools only read (``view``, ``history``) and which may destroy (``patch`` can
  delete a file; ``undo`` puts older text back);
* a refusal is an ``isError`` result whose text is nbedit's own ("Error:
  NoMatch: ..."), without the framework's "Error executing tool" prefix, and
  without a log line on stderr per refused call;
* arguments the schema rejects (a missing ``old``) are reported in one plain
  sentence naming them, not as the validator's text.

The results are text only (no output schema): a client then has nothing to
validate, which spares its first call a schema validator's import (seconds
on a loaded machine). The history store is opened on a thread when the
server starts, so the first call does not wait for it either.

The ``mcp`` package is an optional extra (``pip install nbedit[agents]``); it
is imported only here. mcp 2 names the high-level server ``MCPServer``;
mcp 1 called it ``FastMCP``: both are accepted.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated, Any

from pydantic import Field, ValidationError

from nbedit import __version__
from nbedit.agents.functions import FUNCTIONS, FunctionTools
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
from mcp.types import CallToolResult, TextContent, ToolAnnotations

INSTRUCTIONS = (
    "nbedit edits files under one root folder safely: view a file before editing it; edit replaces old "
    "text that must occur exactly once (errors list the closest candidates or every match, with line "
    "numbers); view with anchors=true shows N:hash anchors that edit_lines takes instead of old text; "
    "patch takes a unified diff, a '*** Begin Patch' block or SEARCH/REPLACE blocks; every change is "
    "recorded and can be undone."
)


def _described(function: str, argument: str) -> str:
    return str(FUNCTIONS[function]["parameters"]["properties"][argument]["description"])


_READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_EDITS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_MAY_DESTROY = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
PathArgument = Annotated[str, Field(description="file or folder path relative to the workspace root")]


class _Server_(_Server):  # type: ignore[misc, valid-type]
    """The SDK's server, with argument errors said in one sentence a model can act on."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(cause, ValidationError):
                return _error(_plain_validation(name, cause))
            if str(error).startswith("Unknown tool"):
                return _error(f"Error: unknown tool {name!r}; use {', '.join(sorted(_TOOL_NAMES))}.")
            raise


_TOOL_NAMES = ("view", "edit", "edit_lines", "patch", "history", "undo")


def _plain_validation(tool: str, error: ValidationError) -> str:
    missing, wrong = [], []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "missing":
            missing.append(where)
        else:
            wrong.append(f"{where} ({problem['msg'].lower()})")
    parts = []
    if missing:
        parts.append(f"{tool} needs {_and(missing)}")
    if wrong:
        parts.append(
            f"{'and ' if missing else ''}{_and(wrong)} {'is' if len(wrong) == 1 else 'are'} not valid"
        )
    again = "with every argument it needs" if missing else "with valid arguments"
    return f"Error: {' '.join(parts)}; nothing was done. Call {tool} again {again}."


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(
    workspace: Workspace,
    approval: str = "auto",
    *,
    require_view: bool = False,
    ready: threading.Event | None = None,
) -> Any:
    """An MCP server whose tools edit ``workspace`` (``approval``: ``auto`` or ``dry-run``).

    ``ready``: set once the history store is open (calls wait for it, so none opens it twice).
    """
    if approval not in ("auto", "dry-run"):
        raise ValueError("the MCP server takes approval 'auto' or 'dry-run' (nobody can click in a terminal)")
    tools = FunctionTools(workspace, approval, origin_prefix="mcp.", require_view=require_view)  # type: ignore[arg-type]
    server = _Server_("nbedit", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def call(name: str, arguments: dict[str, Any], context: Context) -> str | CallToolResult:
        if ready is not None:
            ready.wait()
        text = tools.run(name, arguments, call_id=str(context.request_id))
        return _error(text) if text.startswith("Error") else text

    def tool(name: str, annotations: ToolAnnotations, description: str | None = None) -> Any:
        return server.tool(
            name=name,
            description=description or FUNCTIONS[name]["description"],
            annotations=annotations,
            structured_output=False,
        )

    @tool("view", _READS)
    def view(
        path: PathArgument,
        ctx: Context,
        view_range: Annotated[list[int] | None, Field(description=_described("view", "view_range"))] = None,
        anchors: Annotated[bool | None, Field(description=_described("view", "anchors"))] = None,
    ) -> str | CallToolResult:
        return call("view", {"path": path, "view_range": view_range, "anchors": anchors}, ctx)

    @tool("edit", _EDITS)
    def edit(
        path: PathArgument,
        old: Annotated[str, Field(description=_described("edit", "old"))],
        new: Annotated[str, Field(description=_described("edit", "new"))],
        ctx: Context,
        replace_all: Annotated[bool | None, Field(description=_described("edit", "replace_all"))] = None,
        cell: Annotated[str | None, Field(description=_described("edit", "cell"))] = None,
    ) -> str | CallToolResult:
        arguments = {"path": path, "old": old, "new": new, "replace_all": replace_all, "cell": cell}
        return call("edit", arguments, ctx)

    @tool("edit_lines", _EDITS)
    def edit_lines(
        path: PathArgument,
        new: Annotated[str, Field(description=_described("edit_lines", "new"))],
        ctx: Context,
        replace: Annotated[str | None, Field(description=_described("edit_lines", "replace"))] = None,
        insert_after: Annotated[
            str | None, Field(description=_described("edit_lines", "insert_after"))
        ] = None,
    ) -> str | CallToolResult:
        arguments = {"path": path, "new": new, "replace": replace, "insert_after": insert_after}
        return call("edit_lines", arguments, ctx)

    @tool("patch", _MAY_DESTROY)
    def patch(
        patch: Annotated[str, Field(description=_described("patch", "patch"))], ctx: Context
    ) -> str | CallToolResult:
        return call("patch", {"patch": patch}, ctx)

    @tool("history", _READS, "List the changes recorded in this server's session, newest first, one a line: "
          "entry id, origin, status, files with lines added/removed.")  # fmt: skip
    def history(
        limit: Annotated[int, Field(description="at most this many entries (newest first)", ge=1)] = 20,
    ) -> str | CallToolResult:
        if ready is not None:
            ready.wait()
        text = tools.history_text(limit)
        return _error(text) if text.startswith(("Error", "HistoryError")) else text

    @tool("undo", _MAY_DESTROY)
    def undo(
        ctx: Context,
        entry_id: Annotated[str | None, Field(description=_described("undo", "entry_id"))] = None,
    ) -> str | CallToolResult:
        return call("undo", {"entry_id": entry_id}, ctx)

    return server


def serve(
    root: str = ".", approval: str = "auto", *, history: bool = True, require_view: bool = False
) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    session = os.environ.get("NBEDIT_SESSION") or f"mcp-{os.getpid()}"
    workspace = Workspace(root, session=session, history=history)
    ready = threading.Event()

    def open_store() -> None:
        try:
            if workspace.history_enabled:
                workspace.history()  # opens (or creates) the store and settles a crashed writer's entries
        except Exception:  # noqa: BLE001  # the first call that needs the store reports it
            pass
        finally:
            ready.set()

    threading.Thread(target=open_store, name="nbedit-mcp-history-open", daemon=True).start()
    build_server(workspace, approval, require_view=require_view, ready=ready).run("stdio")
