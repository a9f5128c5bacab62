"""The Jupyter server extension: the kernel's way into the open tabs.

A kernel (or the CLI) cannot reach a browser tab; the server that serves the tab can.
The kernel posts a change here before and after it writes; the server asks the
front-end extension of every connected JupyterLab (over the ``events`` websocket)
whether a tab shows the file and still holds the text the change replaces, then tells
them to take the change in place. With jupyter-collaboration installed, a document
that lives in a collaboration room is edited on the server instead
(``nbedit.live.collab``, imported only if present).

    POST /nbedit/live/prepare  {changes} -> {results: {path: {state, detail, conflicts}}}
         state: "closed" (no tab shows it), "open" (a stock tab shows it and can take it),
         "live" (a collaboration room holds it: commit applies it there),
         "conflict" (a tab has unsaved typing in the very cells/lines edited)
    POST /nbedit/live/commit   {changes} -> {results: {path: {sha256}}}   ("live" paths only)
    POST /nbedit/live/notify   {changes} -> {results: {path: {state, detail}}}  after nbedit wrote
         the disk: the tabs take the change in place and catch up with the file on disk
    GET  /nbedit/live/events   websocket of the front-end extension
    GET  /nbedit/live/info     {root_dir, frontends}: the folder the server serves (for a client
         given only NBEDIT_SERVER_URL) and how many front-ends listen
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from tornado import web, websocket

from nbedit.live.protocol import PROTOCOL_VERSION, LiveChange

FRONTEND_TIMEOUT = 1.5  # seconds a query waits for the front-ends' answers
NOTIFY_TIMEOUT = 3.0

_counter = itertools.count(1)


def _collab() -> Any:
    """``nbedit.live.collab`` when it and jupyter-collaboration are importable, else None."""
    try:
        from nbedit.live import collab
    except ImportError:
        return None
    return collab


class LiveHub:
    """The connected front-ends and the questions waiting for their answers."""

    def __init__(self) -> None:
        self.sockets: set[Any] = set()  # the EventsHandler websockets
        self.waiting: dict[str, tuple[asyncio.Future[None], dict[int, dict[str, Any]], set[int]]] = {}

    async def ask(self, kind: str, changes: list[LiveChange], timeout: float) -> list[dict[str, Any]]:
        """Send ``kind`` ("query" or "apply") to every front-end; their replies (per path results)."""
        sockets = list(self.sockets)
        if not sockets or not changes:
            return []
        request = f"r{next(_counter)}"
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        replies: dict[int, dict[str, Any]] = {}
        expected = {id(socket) for socket in sockets}
        self.waiting[request] = (done, replies, expected)
        message = json.dumps(
            {
                "type": kind,
                "id": request,
                "version": PROTOCOL_VERSION,
                "changes": [change.to_json() for change in changes],
            }
        )
        for socket in sockets:
            try:
                socket.write_message(message)
            except websocket.WebSocketClosedError:
                self.sockets.discard(socket)
                expected.discard(id(socket))
        if not expected:
            done.set_result(None)
        try:
            await asyncio.wait_for(asyncio.shield(done), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self.waiting.pop(request, None)
        return list(replies.values())

    def answer(self, socket: Any, message: dict[str, Any]) -> None:
        waiting = self.waiting.get(str(message.get("id")))
        if waiting is None:
            return  # too late: the kernel went on without this tab
        done, replies, expected = waiting
        results = message.get("results")
        replies[id(socket)] = results if isinstance(results, dict) else {}
        if expected <= set(replies) and not done.done():
            done.set_result(None)

    def gone(self, socket: Any) -> None:
        self.sockets.discard(socket)
        for done, replies, expected in self.waiting.values():
            expected.discard(id(socket))
            if expected <= set(replies) and not done.done():
                done.set_result(None)


_PRECEDENCE = {"conflict": 4, "failed": 3, "applied": 2, "open": 1, "closed": 0}


def merge(changes: list[LiveChange], replies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One result per path from every front-end's: a conflict anywhere wins, then an open tab."""
    results: dict[str, dict[str, Any]] = {}
    for change in changes:
        merged: dict[str, Any] = {
            "state": "closed",
            "detail": "no open tab shows it",
            "conflicts": [],
            "tabs": 0,
        }
        for reply in replies:
            result = reply.get(change.path)
            if not isinstance(result, dict):
                continue
            state = str(result.get("state", "closed"))
            merged["tabs"] += int(result.get("tabs", 0) or 0)
            merged["conflicts"].extend(result.get("conflicts") or [])
            if state == "conflict" and "document" in result:
                merged["document"] = result["document"]  # the tab's live text, to re-plan against
            if _PRECEDENCE.get(state, 0) > _PRECEDENCE.get(merged["state"], 0):
                merged["state"] = state
                merged["detail"] = str(result.get("detail", ""))
        results[change.path] = merged
    return results


def _changes(handler: web.RequestHandler) -> list[LiveChange]:
    try:
        body = json.loads(handler.request.body or b"{}")
        return [LiveChange.from_json(item) for item in body["changes"]]
    except (ValueError, KeyError, TypeError) as error:
        raise web.HTTPError(400, f"expected {{'changes': [...]}}: {error}") from None


def make_handlers(hub: LiveHub) -> list[tuple[str, type, dict[str, Any]]]:
    """The handler classes (made here so importing this module does not import jupyter_server)."""
    from jupyter_core.utils import ensure_async
    from jupyter_server.auth.decorator import authorized, ws_authenticated
    from jupyter_server.base.handlers import APIHandler, JupyterHandler

    class LiveHandler(APIHandler):  # type: ignore[misc]
        auth_resource = "contents"

        def initialize(self, hub: LiveHub) -> None:
            self.hub = hub

        def reply(self, results: dict[str, Any]) -> None:
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"version": PROTOCOL_VERSION, "results": results}))

    class PrepareHandler(LiveHandler):
        @web.authenticated
        @authorized
        async def post(self) -> None:
            changes = _changes(self)
            results: dict[str, dict[str, Any]] = {}
            rest: list[LiveChange] = []
            collab = _collab()
            usable = collab is not None and collab.available(self.serverapp)
            for change in changes:
                found = await collab.prepare(self.serverapp, change) if usable else None
                if found is not None:
                    results[change.path] = dict(found)
                else:
                    rest.append(change)
            replies = await self.hub.ask("query", rest, FRONTEND_TIMEOUT)
            results.update(merge(rest, replies))
            self.reply(results)

    class CommitHandler(LiveHandler):
        @web.authenticated
        @authorized
        async def post(self) -> None:
            changes = _changes(self)
            collab = _collab()
            if collab is None or not collab.available(self.serverapp):
                raise web.HTTPError(409, "no collaboration rooms on this server: write the file instead")
            from nbedit.errors import LiveConflict, NbeditError

            results: dict[str, dict[str, Any]] = {}
            # every document is checked before any is changed: a conflict in the second file
            # must not leave the first one applied and saved
            for change in changes:
                found = await collab.prepare(self.serverapp, change)
                if found is None or found.get("state") != "live":
                    state = "conflict" if found is not None and found.get("state") == "conflict" else "failed"
                    detail = found["detail"] if found else f"{change.path} is no longer open in a room"
                    self.reply({change.path: {"state": state, "detail": detail}})
                    return
            for change in changes:
                try:
                    committed = await collab.apply_and_save(self.serverapp, change)
                except LiveConflict as error:
                    results[change.path] = {"state": "conflict", "detail": str(error)}
                    break  # the rest is not applied: the kernel writes nothing more
                except NbeditError as error:
                    results[change.path] = {"state": "failed", "detail": str(error)}
                    break
                results[change.path] = {"state": "committed", "sha256": committed.sha256}
                if committed.live_before is not None and committed.live_before != committed.saved:
                    # what the room held before the change, typing elsewhere included: the history
                    # entry's "before", so that undoing the change undoes nothing else
                    results[change.path]["live_before"] = committed.live_before.decode("utf-8")
            self.reply(results)

    class NotifyHandler(LiveHandler):
        @web.authenticated
        @authorized
        async def post(self) -> None:
            changes = _changes(self)
            replies = await self.hub.ask("apply", changes, NOTIFY_TIMEOUT)
            self.reply(merge(changes, replies))

    class InfoHandler(LiveHandler):
        @web.authenticated
        @authorized
        def get(self) -> None:
            import os

            self.set_header("Content-Type", "application/json")
            root = os.path.realpath(os.path.expanduser(self.serverapp.root_dir))
            self.finish(
                json.dumps(
                    {"version": PROTOCOL_VERSION, "root_dir": root, "frontends": len(self.hub.sockets)}
                )
            )

    class EventsHandler(JupyterHandler, websocket.WebSocketHandler):  # type: ignore[misc]
        auth_resource = "contents"

        def initialize(self, hub: LiveHub) -> None:
            self.hub = hub

        async def pre_get(self) -> None:
            authorized = await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, "write", "contents")
            )
            if not authorized:
                raise web.HTTPError(403)

        @ws_authenticated
        async def get(self, *args: Any, **kwargs: Any) -> None:
            await ensure_async(self.pre_get())
            result = super().get(*args, **kwargs)
            if result is not None:
                await result

        def open(self, *args: Any, **kwargs: Any) -> None:
            self.hub.sockets.add(self)

        def on_message(self, message: str | bytes) -> None:
            try:
                data = json.loads(message)
            except ValueError:
                return
            if isinstance(data, dict) and data.get("type") == "reply":
                self.hub.answer(self, data)

        def on_close(self) -> None:
            self.hub.gone(self)

    options = {"hub": hub}
    return [
        (r"/nbedit/live/prepare", PrepareHandler, options),
        (r"/nbedit/live/commit", CommitHandler, options),
        (r"/nbedit/live/notify", NotifyHandler, options),
        (r"/nbedit/live/events", EventsHandler, options),
        (r"/nbedit/live/info", InfoHandler, options),
    ]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "nbedit.live.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    hub = LiveHub()
    serverapp.web_app.settings["nbedit_live_hub"] = hub
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, pattern), handler, options)
            for pattern, handler, options in make_handlers(hub)
        ],
    )
    serverapp.log.info("nbedit live tabs: /nbedit/live/* ready")


load_jupyter_server_extension = _load_jupyter_server_extension  # the pre-2.0 spelling
