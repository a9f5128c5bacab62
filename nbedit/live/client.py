"""The kernel's (or the CLI's) side of live tabs: ask the server, then tell it.

``connect()`` finds the Jupyter server this process runs under (``discovery``) and
returns a ``LiveClient`` for it, or None outside a server. The workspace calls
``prepare`` before writing (which files are open in a tab, in a collaboration room,
or have unsaved typing where the change lands), ``commit`` for the files a
collaboration room holds, and ``notify`` after it wrote the others.

Failure is quiet by design: a server without the nbedit extension (404), a server
that is gone, or one that answers slowly is the behaviour nbedit had before live
tabs (the file is written, the tab is not updated), with at most a one-line note.
Plain ``urllib``: no dependency, nothing to import at start-up.
"""

from __future__ import annotations

import hashlib
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nbedit._dataclass import replace
from nbedit.errors import LiveConflict, LiveDifference, WriteError
from nbedit.live.discovery import Server, find_server
from nbedit.live.protocol import LiveChange, changes_to_json, file_change, saved_holds

__all__ = ["LiveClient", "LiveUnavailable", "LiveWrite", "connect"]

PREPARE_TIMEOUT = 4.0  # the server waits up to 1.5 s for the tabs' answers
COMMIT_TIMEOUT = 15.0  # a collaboration room applies, saves and waits for the save
NOTIFY_TIMEOUT = 5.0

_noted: set[str] = set()


class LiveUnavailable(Exception):
    """The server cannot be asked (gone, no extension, refused): behave as without live tabs."""


def note(message: str, *, once: str | None = None) -> None:
    """A one-line note on stderr (a kernel shows it under the cell); ``once``: a key shown once."""
    if once is not None:
        if once in _noted:
            return
        _noted.add(once)
    print(f"nbedit: {message}", file=sys.stderr)


class LiveClient:
    """Talks to the nbedit server extension of one Jupyter server."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def __repr__(self) -> str:
        return f"<LiveClient {self.server.url}>"

    def relative(self, path: str) -> str | None:
        """The server-relative path of the absolute ``path``; None if the server does not serve it."""
        return self.server.relative(path)

    def _post(self, endpoint: str, changes: Sequence[LiveChange], timeout: float) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.server.url}/nbedit/live/{endpoint}",
            data=changes_to_json(changes).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        if self.server.token:
            request.add_header("Authorization", f"token {self.server.token}")
        results = self._send(request, timeout).get("results")
        if not isinstance(results, dict):
            raise LiveUnavailable("the Jupyter server's answer was not understood")
        return results

    def _send(self, request: urllib.request.Request, timeout: float) -> dict[str, Any]:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                raise LiveUnavailable(
                    f"the Jupyter server at {self.server.url} has no nbedit extension "
                    "(pip install nbedit into the server's environment and restart it)"
                ) from None
            raise LiveUnavailable(f"the Jupyter server refused ({error.code} {error.reason})") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise LiveUnavailable(
                f"the Jupyter server at {self.server.url} did not answer ({reason})"
            ) from None
        if not isinstance(body, dict):
            raise LiveUnavailable("the Jupyter server's answer was not understood")
        return body

    def info(self) -> dict[str, Any]:
        """The server's {root_dir, frontends}."""
        request = urllib.request.Request(f"{self.server.url}/nbedit/live/info")
        if self.server.token:
            request.add_header("Authorization", f"token {self.server.token}")
        return self._send(request, PREPARE_TIMEOUT)

    def prepare(self, changes: Sequence[LiveChange]) -> dict[str, dict[str, Any]]:
        """Per path: {"state": "closed"|"open"|"live"|"conflict", "detail", "conflicts"}."""
        return self._post("prepare", changes, PREPARE_TIMEOUT)

    def commit(self, changes: Sequence[LiveChange]) -> dict[str, dict[str, Any]]:
        """Apply ``changes`` to their collaboration rooms; per path {"state", "sha256"}."""
        return self._post("commit", changes, COMMIT_TIMEOUT)

    def notify(self, changes: Sequence[LiveChange]) -> dict[str, dict[str, Any]]:
        """After the disk was written: the tabs take the changes in place; per path {"state"}."""
        return self._post("notify", changes, NOTIFY_TIMEOUT)


def connect(server: Server | None = None) -> LiveClient | None:
    """A client for ``server`` (default: the Jupyter server this process runs under), or None."""
    server = server if server is not None else find_server()
    if server is None:
        return None
    if server.root_dir is None:  # NBEDIT_SERVER_URL alone: ask the server which folder it serves
        try:
            server = replace(server, root_dir=LiveClient(server).info()["root_dir"])
        except (LiveUnavailable, KeyError, TypeError) as error:
            note(f"{error}; open tabs will not show the change until reloaded", once=str(error))
            return None
    return LiveClient(server)


class LiveWrite:
    """One apply's conversation with the open tabs: prepare, then commit and/or notify.

    Paths are the workspace's (relative to its root); each change on the wire carries
    the server's path of the same file.
    """

    def __init__(
        self, client: Any, changes: dict[str, LiveChange], results: dict[str, dict[str, Any]]
    ) -> None:
        self.client = client
        self.changes = changes
        self.results = results
        # path -> the bytes a collaboration room held just before the change (typing elsewhere
        # included, saved along with the change): the history entry's "before"
        self.live_before: dict[str, bytes] = {}

    def state(self, path: str) -> str:
        return str(self.results.get(path, {}).get("state", "closed"))

    @property
    def in_rooms(self) -> set[str]:
        """Files a collaboration room holds: the server applies and saves them (not the writer)."""
        return {path for path in self.changes if self.state(path) == "live"}

    @classmethod
    def prepare(
        cls,
        client: Any,
        files: Sequence[Any],
        absolute: Callable[[str], Any],
        bases: Mapping[str, bytes] | None = None,
    ) -> LiveWrite | None:
        """Ask the server about the files of a plan; raise LiveConflict where a tab has typing
        in the edited text. None: the server serves none of them, or cannot be asked.
        ``bases``: files re-planned against a tab's live document, with its bytes (the
        tab holds those, not the disk's)."""
        bases = bases or {}
        changes: dict[str, LiveChange] = {}
        for file_plan in files:
            if file_plan.operation != "update" or file_plan.new_path or file_plan.before_bytes is None:
                continue  # created, deleted or renamed files: a tab reads them from disk as before
            if file_plan.after_bytes is None:
                continue
            server_path = client.relative(str(absolute(file_plan.path)))
            if server_path is None:
                continue
            before = bases.get(file_plan.path, file_plan.before_bytes)
            change = file_change(server_path, file_plan.notebook, before, file_plan.after_bytes)
            if change is not None and (change.cells or change.lines or change.metadata is not None):
                changes[file_plan.path] = change
        if not changes:
            return None
        try:
            answers = client.prepare(list(changes.values()))
        except LiveUnavailable as error:
            note(
                f"{error}; open tabs of the edited files will not show the change until reloaded",
                once=str(error),
            )
            return None
        results = {path: dict(answers.get(change.path) or {}) for path, change in changes.items()}
        conflicts = [
            LiveDifference(
                path=path,
                where=str(item.get("where", "")),
                expected=str(item.get("expected", "")),
                live=item.get("live"),
            )
            for path, result in results.items()
            if result.get("state") == "conflict"
            for item in (result.get("conflicts") or [{"where": result.get("detail", "")}])
        ]
        unsupported = [result for result in results.values() if result.get("state") == "unsupported"]
        if unsupported:
            # a collaboration room holds the file but cannot take this change in place; writing
            # the file behind the room would make it reload and drop what people typed
            raise WriteError(
                "; ".join(str(result.get("detail", "")) for result in unsupported) + " (nothing was written)"
            )
        if conflicts:
            documents = {
                path: result.get("document")
                for path, result in results.items()
                if result.get("state") == "conflict" and result.get("document") is not None
            }
            raise LiveConflict(conflicts, documents=documents)
        return cls(client, changes, results)

    def commit(self) -> dict[str, bytes]:
        """Apply the files in collaboration rooms; the bytes the server saved, per path."""
        paths = sorted(self.in_rooms)
        answers = self.client.commit([self.changes[path] for path in paths])
        saved: dict[str, bytes] = {}
        for path in paths:
            change = self.changes[path]
            result = answers.get(change.path) or {}
            if result.get("state") == "conflict":
                raise LiveConflict(
                    [LiveDifference(path=path, where=str(result.get("detail", "")), expected="", live=None)]
                )
            if result.get("state") != "committed":
                raise WriteError(
                    f"{path}: the collaboration room did not take the change "
                    f"({result.get('detail') or 'no answer for this file'}); nothing was recorded"
                )
            data = self.client.read(change.path) if hasattr(self.client, "read") else None
            if data is None:
                from pathlib import Path

                data = (Path(self.client.server.root_dir) / change.path).read_bytes()
            if result.get("sha256") and hashlib.sha256(data).hexdigest() != result["sha256"]:
                raise WriteError(
                    f"{path}: the file on disk is not what the collaboration room saved (someone wrote it "
                    "meanwhile); look at the file, then apply again"
                )
            if not saved_holds(change, data):
                raise WriteError(
                    f"{path}: the collaboration room saved the file without the change; nothing was "
                    "recorded. Look at the open tab, then apply again"
                )
            saved[path] = data
            if isinstance(result.get("live_before"), str):
                self.live_before[path] = result["live_before"].encode("utf-8")
        return saved

    def notify(self) -> None:
        """The files nbedit wrote that tabs show: they take the change in place."""
        paths = [path for path in self.changes if self.state(path) == "open"]
        if not paths:
            return
        try:
            answers = self.client.notify([self.changes[path] for path in paths])
        except LiveUnavailable as error:
            note(f"{error}; the open tabs of {', '.join(paths)} do not show the change: reload them")
            return
        for path in paths:
            result = answers.get(self.changes[path].path) or {}
            if result.get("state") in ("conflict", "failed"):
                note(
                    f"the open tab of {path} did not take the change ({result.get('detail') or 'it changed'}); "
                    "the file on disk has it: keep your typing elsewhere, then use File > Reload from Disk"
                )
