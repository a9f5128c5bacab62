"""Apply a change to the server's live shared document under real-time collaboration.

With ``jupyter-collaboration`` installed, an open notebook or text file is not the file on
disk: it is a shared document in a "room" of the ``jupyter_server_ydoc`` server extension,
which every connected tab edits and which the room saves to disk a moment after each
change. Writing the file ourselves would make the room see an out-of-band change and
reload the document from disk, throwing away what people typed since the last save. So for
a path a room holds, nbedit never writes the disk; the server extension (``server``) calls:

* ``prepare``: does a room hold the path, and does the live document still hold, at every
  place the change rewrites, the text the plan was computed from? Anything else is somebody's
  unsaved typing there, which nbedit must not overwrite: state ``"conflict"``, with the live
  document so the change can be re-planned against it.
* ``commit``: check again and apply in ONE transaction (``shared_document`` says how: only
  the edited cells' sources, lines, cells or metadata keys), so every connected client
  updates in place and outputs are kept; then have the room save now (what Ctrl+S in a
  collaborative tab does), wait for it, and return the sha256 of the bytes it wrote.

The room writes the whole document, as any save from a tab does: text typed in other cells
is saved with the change, and the notebook is written in Jupyter's own JSON formatting.

Runs in the Jupyter server's event loop; reaches jupyter_server_ydoc only through the
extension object the server already holds (no import of it here).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from typing import Any

from nbedit._dataclass import dataclass
from nbedit.errors import LiveConflict, LiveDifference, WriteError
from nbedit.live.protocol import LiveChange, saved_holds
from nbedit.live.shared_document import Check, check_notebook, check_text, live_cells

__all__ = ["Committed", "apply_and_save", "available", "commit", "prepare"]

EXTENSION_SETTING = "jupyter_server_ydoc"  # the ExtensionApp registers itself under its name
SAVE_POLL_INTERVAL = 0.02  # seconds between checks while the room saves


def _extension(serverapp: Any) -> Any | None:
    settings = getattr(getattr(serverapp, "web_app", None), "settings", None) or {}
    extension = settings.get(EXTENSION_SETTING)
    if extension is None or not hasattr(extension, "get_document"):
        return None
    if settings.get("page_config_data", {}).get("disableRTC"):
        return None
    return extension


def available(serverapp: Any) -> bool:
    """Is real-time collaboration running in this server (may rooms hold documents)?"""
    return _extension(serverapp) is not None


@dataclass(frozen=True)
class _Room:
    room: Any
    document: Any  # the room's own YNotebook or YUnicode (not a fork)


async def _live_room(serverapp: Any, change: LiveChange) -> _Room | None:
    """The room holding ``change.path`` right now; None if no tab or client has it open."""
    extension = _extension(serverapp)
    if extension is None:
        return None
    content_type, file_format = ("notebook", "json") if change.kind == "notebook" else ("file", "text")
    try:
        document = await extension.get_document(
            path=change.path, content_type=content_type, file_format=file_format, copy=False
        )
    except (KeyError, ValueError, LookupError):
        return None
    if document is None:
        return None
    for room in list(extension.ywebsocket_server.rooms.values()):
        if getattr(room, "_document", None) is document:
            return _Room(room, document)
    return None


def _os_path(serverapp: Any, path: str) -> str | None:
    """The file behind the server path ``path``; None if it would lie outside the server's root."""
    root = os.path.abspath(os.path.expanduser(serverapp.contents_manager.root_dir))
    full = os.path.normpath(os.path.join(root, *path.split("/")))
    return full if full.startswith(root + os.sep) else None


def _read(serverapp: Any, path: str) -> bytes | None:
    full = _os_path(serverapp, path)
    if full is None:
        return None
    try:
        with open(full, "rb") as file:
            return file.read()
    except OSError:
        return None


def _check(serverapp: Any, live: _Room, change: LiveChange) -> Check:
    if change.operation != "update" or change.new_path:
        return Check(unsupported=f"a {change.operation} of a document open in a collaborative session")
    before = _read(serverapp, change.path)  # the plan was computed from it (the kernel checked)
    if change.kind == "notebook":
        return check_notebook(live.document, change, before)
    return check_text(live.document, change, before)


def _document(live: _Room, change: LiveChange) -> object:
    """The live document for a re-plan: a text file's text, or a notebook's cells."""
    if change.kind == "notebook":
        return live_cells(live.document)
    return str(live.document.get())


async def prepare(serverapp: Any, change: LiveChange) -> dict[str, Any] | None:
    """How ``change`` meets the live document; None when no room holds the path.

    ``{"state": "live"}``: ``commit`` will apply it. ``{"state": "conflict", "detail",
    "conflicts": [{"where", "expected", "live"}], "document"}``: the live text differs where
    the change writes; nothing may be applied. ``{"state": "unsupported", "detail"}``: a room
    holds the document but cannot take this change in place (CRLF text, a type-only change):
    the file must not be written behind the room either.
    """
    live = await _live_room(serverapp, change)
    if live is None:
        return None
    checked = _check(serverapp, live, change)
    if checked.unsupported:
        return {
            "state": "unsupported",
            "detail": f"{change.path} is open in a collaborative session and {checked.unsupported}; "
            "close its tabs (the server lets the shared document go a minute later) and apply again",
        }
    if checked.differences:
        return {
            "state": "conflict",
            "detail": f"{change.path}: the live document differs in "
            + ", ".join(item.where for item in checked.differences),
            "conflicts": [
                {"where": item.where, "expected": item.expected, "live": item.live}
                for item in checked.differences
            ],
            "document": _document(live, change),
        }
    return {
        "state": "live",
        "detail": f"{change.path} is a live collaborative document: the server applies it",
    }


async def _save_now(room: Any, deadline: float) -> None:
    """Have the room write the document now, as Ctrl+S in a collaborative tab does."""
    if not hasattr(room, "_save_to_disc"):
        return  # another jupyter-collaboration: its autosave writes the file, the caller waits for it
    while time.monotonic() < deadline:
        save = room._save_to_disc()
        if save is not None:
            await asyncio.wait_for(asyncio.shield(save), timeout=max(0.0, deadline - time.monotonic()))
            return
        await asyncio.sleep(SAVE_POLL_INTERVAL)  # the room is loading or reloading: its lock is held


def _as_saved(document: Any, kind: str) -> bytes | None:
    """The bytes the room's save would write for the live document now (what Jupyter's
    contents manager writes for its content); None if that cannot be said."""
    if kind != "notebook":
        return str(document.get()).encode("utf-8")
    try:
        import nbformat

        text = nbformat.writes(nbformat.from_dict(document.get()), version=nbformat.NO_CONVERT)
    except Exception:  # any failure only costs the refinement of the history's "before"
        return None
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def _same_content(disk: bytes | None, live: bytes | None, kind: str) -> bool:
    """Does the live document hold what the file holds (a notebook: the same cells; the room
    may add metadata of its own, which is no one's unsaved work)?"""
    if disk is None or live is None:
        return False
    if kind != "notebook":
        return disk == live
    try:
        return bool(json.loads(disk).get("cells") == json.loads(live).get("cells"))
    except (ValueError, AttributeError):
        return False


@dataclass(frozen=True)
class Committed:
    """What a commit did: the sha256 of the bytes the server saved, and the bytes the live
    document would have been saved as just before the change (None if unknown).

    The two differ by exactly the change, also when people had unsaved typing elsewhere in
    the document (the room saves it with the change): a history entry recorded from them
    undoes the change and nothing else."""

    sha256: str
    saved: bytes
    live_before: bytes | None


async def commit(serverapp: Any, change: LiveChange, timeout: float = 5.0) -> str:
    """Apply ``change`` to the live document in one transaction, have the room save, wait.

    Returns the sha256 of the bytes the server wrote. Raises ``LiveConflict`` (nothing
    applied) when the live document differs where the change writes, and ``WriteError``
    when no room holds the path, the change cannot be applied in place (nothing applied),
    or the file did not hold the change within ``timeout`` seconds.
    """
    return (await apply_and_save(serverapp, change, timeout)).sha256


async def apply_and_save(serverapp: Any, change: LiveChange, timeout: float = 5.0) -> Committed:
    """``commit``, with the live document's bytes before the change as well."""
    deadline = time.monotonic() + timeout
    live = await _live_room(serverapp, change)
    if live is None:
        raise WriteError(
            f"{change.path} is no longer open in a collaborative session; plan and apply again",
            path=change.path,
        )
    checked = _check(serverapp, live, change)
    if checked.unsupported:
        raise WriteError(f"{change.path}: {checked.unsupported}; nothing was applied", path=change.path)
    if checked.differences or checked.apply is None:
        raise LiveConflict(
            [
                LiveDifference(change.path, item.where, item.expected, item.live)
                for item in checked.differences
            ],
            documents={change.path: _document(live, change)},
        )
    # no await between the check and the transaction: no other edit can land in between
    live_before = _as_saved(live.document, change.kind)
    if _same_content(_read(serverapp, change.path), live_before, change.kind):
        live_before = None  # nothing unsaved: the file on disk is the exact "before"
    with live.document.ydoc.transaction(origin="nbedit"):
        checked.apply()
    live_after = _as_saved(live.document, change.kind)
    with contextlib.suppress(asyncio.TimeoutError):  # the file is checked below, and we say so
        await _save_now(live.room, deadline)
    while True:
        saved = _read(serverapp, change.path)
        if saved is not None and saved_holds(change, saved):
            return Committed(
                sha256=hashlib.sha256(saved).hexdigest(),
                saved=saved,
                # only when the room wrote exactly what we serialised (nobody typed meanwhile)
                live_before=live_before if saved == live_after else None,
            )
        if time.monotonic() >= deadline:
            raise WriteError(
                f"the change to {change.path} is in the open collaborative document, but the server did "
                f"not save it within {timeout:g} s; save the document from its tab",
                path=change.path,
            )
        await asyncio.sleep(SAVE_POLL_INTERVAL)
