"""Apply a change to the server's live shared document under real-time collaboration.

With ``jupyter-collaboration`` installed, an open notebook or text file is not the file on
disk: it is a shared document (a pycrdt ``Doc`` in a "room" of the ``jupyter_server_ydoc``
server extension) that every connected tab edits and that the room saves to disk a moment
after each change. Writing the file ourselves would make the room see an out-of-band change
and reload the document from disk, throwing away what people typed since the last save. So
for a path that has a room, nbedit never writes the disk: the server extension calls this
module to

* ``prepare``: check that the live text of every edited cell (or run of lines) still equals
  the text the plan was computed from. Anything else is somebody's unsaved typing there, and
  nbedit must not overwrite it: the state is ``"conflict"`` and the live text comes back so
  the change can be re-planned against it.
* ``commit``: check again and, in ONE transaction, replace only the edited cells' sources
  (or lines) in the shared document, so every connected client updates in place, outputs and
  other cells untouched; then have the room save now (what Ctrl+S in a collaborative tab
  does), wait for it, and return the sha256 of the bytes the server wrote.

Cells are found by their nbformat 4.5 id when the change carries one, else by position. A
change that inserts, deletes or retypes cells or changes notebook metadata ("structural")
is not applied to a live document here: the wire form carries only cell sources, and an
insertion placed by index into a document others are editing could land in the wrong place.
The same holds for a text file whose bytes the room cannot write back unchanged (CRLF line
endings: the room normalises them to LF when it loads the file, so its save would rewrite
every line ending).

Everything here runs in the Jupyter server's event loop and imports ``jupyter_server_ydoc``
(and pycrdt) only through the extension object the server already holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from nbedit.errors import LiveConflict, WriteError
from nbedit.live.protocol import CellEdit, LiveChange, TextEdit

EXTENSION_SETTING = "jupyter_server_ydoc"  # the ExtensionApp registers itself under its name
SAVE_POLL_INTERVAL = 0.02  # seconds between checks while the room saves


def _extension(serverapp: Any) -> Any | None:
    web_app = getattr(serverapp, "web_app", None)
    settings = getattr(web_app, "settings", None) or {}
    extension = settings.get(EXTENSION_SETTING)
    if extension is None or not hasattr(extension, "get_document"):
        return None
    if extension.serverapp.web_app.settings.get("page_config_data", {}).get("disableRTC"):
        return None
    return extension


def available(serverapp: Any) -> bool:
    """Is real-time collaboration running in this server (rooms may hold documents)?"""
    return _extension(serverapp) is not None


@dataclass(frozen=True)
class _Room:
    """A document room that holds ``path`` right now, and its shared document."""

    room: Any
    document: Any  # jupyter_ydoc YNotebook or YUnicode, the live one (not a fork)


async def _live_room(serverapp: Any, change: LiveChange) -> _Room | None:
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


def _os_path(serverapp: Any, path: str) -> str:
    root = os.path.abspath(os.path.expanduser(serverapp.contents_manager.root_dir))
    return os.path.join(root, *path.split("/"))


# ---------------------------------------------------------------------- notebooks


def _cell_source(ycell: Any) -> str:
    source = ycell.get("source", "") if hasattr(ycell, "get") else ""
    return str(source)


def _find_cell(ycells: Any, edit: CellEdit) -> int | None:
    """The live index of the cell ``edit`` rewrites: by id when it has one, else by position."""
    if edit.cell_id:
        for index, ycell in enumerate(ycells):
            if ycell.get("id") == edit.cell_id:
                return index
        return None
    return edit.index if 0 <= edit.index < len(ycells) else None


@dataclass(frozen=True)
class _Check:
    """What the live document says about a change: where each edit goes, and what disagrees."""

    targets: tuple[tuple[int, CellEdit], ...] = ()
    line_targets: tuple[TextEdit, ...] = ()
    conflicts: tuple[str, ...] = ()  # one human-readable line per cell or run of lines
    conflict_cells: tuple[int, ...] = ()
    conflict_lines: tuple[int, ...] = ()
    unsupported: str = ""


def _describe_cell(edit: CellEdit) -> str:
    return f"cell {edit.index + 1}" + (f" (id {edit.cell_id})" if edit.cell_id else "")


def _check_notebook(document: Any, change: LiveChange) -> _Check:
    if change.structural or any(edit.operation != "replace" for edit in change.cells):
        return _Check(
            unsupported=(
                "the change inserts, deletes or retypes cells or changes the notebook's metadata; "
                "only cell sources are applied to a live collaborative notebook"
            )
        )
    ycells = document.ycells
    targets: list[tuple[int, CellEdit]] = []
    conflicts: list[str] = []
    conflict_cells: list[int] = []
    for edit in change.cells:
        index = _find_cell(ycells, edit)
        if index is None:
            conflicts.append(f"{_describe_cell(edit)} is no longer in the live notebook")
            conflict_cells.append(edit.index)
            continue
        ycell = ycells[index]
        if ycell.get("cell_type") != edit.cell_type:
            conflicts.append(
                f"{_describe_cell(edit)} is a {ycell.get('cell_type')} cell in the live notebook"
            )
            conflict_cells.append(edit.index)
        elif _cell_source(ycell) != edit.old_source:
            conflicts.append(f"{_describe_cell(edit)} has unsaved text in the live notebook")
            conflict_cells.append(edit.index)
        else:
            targets.append((index, edit))
    return _Check(targets=tuple(targets), conflicts=tuple(conflicts), conflict_cells=tuple(conflict_cells))


def _replace_text(text: Any, old: str, new: str, offset: int = 0) -> None:
    """Rewrite the shared ``text`` (holding ``old``) into ``new`` by one splice of the middle.

    The common prefix and suffix stay untouched, so a collaborator's cursor outside the
    changed span keeps its place. pycrdt indexes text by UTF-8 byte offsets; ``old`` starts
    at byte ``offset`` of ``text``.
    """
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    start = offset + len(old[:prefix].encode("utf-8"))
    old_end = offset + len(old[: len(old) - suffix].encode("utf-8"))
    middle = new[prefix : len(new) - suffix]
    if old_end > start:
        del text[start:old_end]
    if middle:
        text.insert(start, middle)


def _notebook_json(document: Any) -> str:
    """The live notebook as nbformat writes it (what the room would save)."""
    return json.dumps(document.get(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- text files


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, character in enumerate(text):
        if character == "\n":
            starts.append(index + 1)
    return starts


def _check_text(document: Any, change: LiveChange, disk: bytes | None) -> _Check:
    if disk is not None and b"\r" in disk:
        return _Check(
            unsupported=(
                "the file has CR line endings, which the collaborative room turns into LF when it "
                "loads the file, so its save would rewrite every line"
            )
        )
    live = str(document.get())
    lines = live.splitlines(keepends=True)
    conflicts: list[str] = []
    conflict_lines: list[int] = []
    for edit in change.lines:
        count = len(edit.old_text.splitlines(keepends=True))
        if "".join(lines[edit.start_line : edit.start_line + count]) != edit.old_text or (
            count == 0 and edit.start_line > len(lines)
        ):
            first, last = edit.start_line + 1, edit.start_line + max(count, 1)
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            conflicts.append(f"{where} differ in the live document (unsaved typing there)")
            conflict_lines.append(edit.start_line)
    return _Check(line_targets=change.lines, conflicts=tuple(conflicts), conflict_lines=tuple(conflict_lines))


def _apply_text(document: Any, edits: tuple[TextEdit, ...]) -> None:
    text = document._ysource
    live = str(text)
    starts = _line_starts(live)
    # bottom-up, so the offsets of the earlier runs stay valid
    for edit in sorted(edits, key=lambda item: item.start_line, reverse=True):
        begin = starts[edit.start_line] if edit.start_line < len(starts) else len(live)
        _replace_text(text, edit.old_text, edit.new_text, offset=len(live[:begin].encode("utf-8")))


# ---------------------------------------------------------------------- the interface


async def _check(serverapp: Any, live: _Room, change: LiveChange) -> _Check:
    if change.operation != "update":
        return _Check(unsupported=f"a {change.operation} of an open collaborative document")
    if change.kind == "notebook":
        return _check_notebook(live.document, change)
    try:
        with open(_os_path(serverapp, change.path), "rb") as file:
            disk: bytes | None = file.read()
    except OSError:
        disk = None
    return _check_text(live.document, change, disk)


def _live_text(live: _Room, change: LiveChange) -> str:
    if change.kind == "notebook":
        return _notebook_json(live.document)
    return str(live.document.get())


async def prepare(serverapp: Any, change: LiveChange) -> dict[str, Any] | None:
    """How a change to ``change.path`` meets the live document: None when no room holds it.

    ``{"state": "live"}``: the server will apply it (``commit``). ``{"state": "conflict",
    "detail", "live_text", "cells"|"lines"}``: the live text of an edited cell or run of lines
    differs from the plan's old text; nothing may be applied. ``{"state": "unsupported",
    "detail"}``: a room holds the document but this kind of change cannot be applied to it
    in place (see the module docstring); the caller must not write the file behind the room.
    """
    live = await _live_room(serverapp, change)
    if live is None:
        return None
    checked = await _check(serverapp, live, change)
    if checked.unsupported:
        return {
            "state": "unsupported",
            "detail": f"{change.path} is open in a collaborative session and {checked.unsupported}; "
            "close its tabs (or wait until the server closes the shared document) and apply again",
        }
    if checked.conflicts:
        return {
            "state": "conflict",
            "detail": f"{change.path}: " + "; ".join(checked.conflicts),
            "live_text": _live_text(live, change),
            "cells": list(checked.conflict_cells),
            "lines": list(checked.conflict_lines),
        }
    return {
        "state": "live",
        "detail": f"{change.path} is a live collaborative document; the server applies the change",
    }


def _conflict(change: LiveChange, checked: _Check) -> LiveConflict:
    return LiveConflict(
        f"{change.path} changed in the open collaborative document: " + "; ".join(checked.conflicts),
        path=change.path,
        cells=checked.conflict_cells,
        lines=checked.conflict_lines,
    )


def _saved_matches(change: LiveChange, saved: bytes) -> bool:
    """Does the file the room wrote hold every new text of the change?"""
    try:
        if change.kind == "notebook":
            cells = json.loads(saved).get("cells", [])
            by_id = {cell.get("id"): cell for cell in cells if cell.get("id")}
            for edit in change.cells:
                cell = by_id.get(edit.cell_id) if edit.cell_id else None
                if cell is None and not edit.cell_id and 0 <= edit.index < len(cells):
                    cell = cells[edit.index]
                if cell is None:
                    return False
                source = cell.get("source", "")
                if ("".join(source) if isinstance(source, list) else source) != edit.new_source:
                    return False
            return True
        text = saved.decode("utf-8")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return False
    return all(edit.new_text in text for edit in change.lines)


async def _save_now(room: Any, deadline: float) -> None:
    """Have the room write the document now, as Ctrl+S in a collaborative tab does."""
    while time.monotonic() < deadline:
        save = room._save_to_disc() if hasattr(room, "_save_to_disc") else None
        if save is not None:
            await asyncio.wait_for(asyncio.shield(save), timeout=max(0.0, deadline - time.monotonic()))
            return
        await asyncio.sleep(SAVE_POLL_INTERVAL)  # the room is loading or reloading: its lock is held


async def commit(serverapp: Any, change: LiveChange, timeout: float = 5.0) -> str:
    """Apply ``change`` to the live document in one transaction, let the room save, wait.

    Returns the sha256 of the bytes the server wrote. Raises ``LiveConflict`` (nothing
    applied) when the live text of an edited cell or line is not the plan's old text, and
    ``WriteError`` when no room holds the path, the change cannot be applied in place, or
    the save did not produce the change within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    live = await _live_room(serverapp, change)
    if live is None:
        raise WriteError(
            f"{change.path} is no longer open in a collaborative session; plan and apply again",
            path=change.path,
        )
    checked = await _check(serverapp, live, change)
    if checked.unsupported:
        raise WriteError(f"{change.path}: {checked.unsupported}; nothing was applied", path=change.path)
    if checked.conflicts:
        raise _conflict(change, checked)
    document = live.document
    # no await between the check above and this transaction: nobody's edit can slip in between
    with document.ydoc.transaction(origin="nbedit"):
        if change.kind == "notebook":
            for index, edit in checked.targets:
                assert edit.old_source is not None and edit.new_source is not None
                _replace_text(document.ycells[index]["source"], edit.old_source, edit.new_source)
        else:
            _apply_text(document, checked.line_targets)
    with contextlib.suppress(asyncio.TimeoutError):  # then the file is checked below and we say so
        await _save_now(live.room, deadline)
    path = _os_path(serverapp, change.path)
    while True:
        with open(path, "rb") as file:
            saved = file.read()
        if _saved_matches(change, saved):
            return hashlib.sha256(saved).hexdigest()
        if time.monotonic() >= deadline:
            raise WriteError(
                f"the change to {change.path} is in the open collaborative document, but the server "
                f"did not save it within {timeout:g} s; save the document from its tab",
                path=change.path,
            )
        await asyncio.sleep(SAVE_POLL_INTERVAL)
