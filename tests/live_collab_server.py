"""A test-only Jupyter server extension that reaches ``nbedit.live.collab`` over HTTP.

The collaboration tests start a real server with ``jupyter-collaboration`` and enable this
module next to it (``--ServerApp.jpserver_extensions``). It exposes the collab functions
one to one, so a test can drive them exactly as the server extension does, plus two helpers
a test needs to stand in for a collaborator without a browser:

* ``open``: have the server hold the live document of a path (a room, as when a tab opens it);
* ``type``: insert text into a cell (or at the end of a text file) of the live document, the
  way an update from a connected client lands in the room.

Never installed: it lives in ``tests/`` and the server imports it from the checkout.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from nbedit.errors import LiveConflict, NbeditError
from nbedit.live import collab
from nbedit.live.protocol import LiveChange


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "tests.live_collab_server"}]


class _Handler(APIHandler):
    def body(self) -> dict[str, Any]:
        return dict(json.loads(self.request.body or b"{}"))


class PrepareHandler(_Handler):
    @web.authenticated
    async def post(self) -> None:
        change = LiveChange.from_json(self.body()["change"])
        self.finish(json.dumps({"result": await collab.prepare(self.serverapp, change)}))


class CommitHandler(_Handler):
    @web.authenticated
    async def post(self) -> None:
        body = self.body()
        change = LiveChange.from_json(body["change"])
        try:
            sha256 = await collab.commit(self.serverapp, change, timeout=float(body.get("timeout", 5.0)))
        except LiveConflict as error:
            reply: dict[str, Any] = {
                "error": "LiveConflict",
                "message": str(error),
                "conflicts": [[item.path, item.where, item.expected, item.live] for item in error.conflicts],
                "documents": error.documents,
            }
        except NbeditError as error:
            reply = {"error": type(error).__name__, "message": str(error)}
        else:
            reply = {"sha256": sha256}
        self.finish(json.dumps(reply))


class StateHandler(_Handler):
    """``available`` and the rooms the server holds, for the tests' own checks."""

    @web.authenticated
    async def get(self) -> None:
        extension = self.settings.get("jupyter_server_ydoc")
        rooms = sorted(extension.ywebsocket_server.rooms) if extension is not None else []
        self.finish(json.dumps({"available": collab.available(self.serverapp), "rooms": rooms}))


async def _document(handler: _Handler, path: str, kind: str, create: bool) -> Any:
    extension = handler.settings["jupyter_server_ydoc"]
    content_type, file_format = ("notebook", "json") if kind == "notebook" else ("file", "text")
    return await extension.get_document(
        path=path, content_type=content_type, file_format=file_format, copy=False, create=create
    )


class OpenHandler(_Handler):
    @web.authenticated
    async def post(self) -> None:
        body = self.body()
        document = await _document(self, body["path"], body["kind"], create=True)
        self.finish(json.dumps({"opened": document is not None}))


class TypeHandler(_Handler):
    @web.authenticated
    async def post(self) -> None:
        body = self.body()
        document = await _document(self, body["path"], body["kind"], create=False)
        if document is None:
            raise web.HTTPError(404, "no live document")
        with document.ydoc.transaction(origin="collaborator"):
            if body["kind"] == "notebook":
                source = document.ycells[int(body["cell"])]["source"]
            else:
                source = document._ysource
            source += body["text"]  # appended, as typing at the end of the cell would
        self.finish(json.dumps({"live": document.get() if body["kind"] != "notebook" else None}))


class InsertHandler(_Handler):
    """A collaborator adds a cell (not saved)."""

    @web.authenticated
    async def post(self) -> None:
        body = self.body()
        document = await _document(self, body["path"], "notebook", create=False)
        if document is None:
            raise web.HTTPError(404, "no live document")
        cell = {
            "cell_type": "code",
            "source": body["source"],
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        }
        with document.ydoc.transaction(origin="collaborator"):
            document.ycells.insert(int(body["index"]), document.create_ycell(cell))
        self.finish(json.dumps({"cells": document.cell_number}))


class ReplaceHandler(_Handler):
    """A collaborator rewrites a text document (granularly, as typing does)."""

    @web.authenticated
    async def post(self) -> None:
        body = self.body()
        document = await _document(self, body["path"], "text", create=False)
        if document is None:
            raise web.HTTPError(404, "no live document")
        document.set(body["text"])
        self.finish(json.dumps({"live": document.get()}))


def _load_jupyter_server_extension(serverapp: Any) -> None:
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, "nbedit-test/collab", name), handler)
            for name, handler in (
                ("prepare", PrepareHandler),
                ("commit", CommitHandler),
                ("state", StateHandler),
                ("open", OpenHandler),
                ("type", TypeHandler),
                ("insert", InsertHandler),
                ("replace", ReplaceHandler),
            )
        ],
    )
