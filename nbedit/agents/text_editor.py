"""Anthropic's text editor tool, served by nbedit's matcher, writer and history.

The model sends ``tool_use`` blocks (``view``, ``str_replace``, ``create``,
``insert``, ``undo_edit``); the tool answers with ``tool_result`` blocks. The
commands keep the documented semantics, with nbedit's guarantees underneath:
``str_replace`` goes through ``Workspace.plan_edit`` (a drifted old_str is
found and the result names the tier; none or several matches is an error
listing the lines), ``insert`` is a one-hunk unified diff located by its line
number, every write passes the approval gate and lands in the history with
origin ``agent:<tool name>:<tool_use id>``, and ``undo_edit`` is a history
undo of this tool's last edit of the file.

Tool versions: ``text_editor_20250728`` (the default, name
``str_replace_based_edit_tool``, optional ``max_characters``),
``text_editor_20250429`` (same name) and ``text_editor_20250124`` (name
``str_replace_editor``, the one with ``undo_edit``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Approval
from nbedit.agents.session import ToolFailure, ToolSession, describe_decision, error_text, field, run_async
from nbedit.engine.text import decode, split_lines, strip_newline
from nbedit.errors import NbeditError, NothingToUndo
from nbedit.storage.records import AGENT_ORIGIN_PREFIX

if TYPE_CHECKING:
    from nbedit.workspace import Workspace

__all__ = ["DEFAULT_VIEW_CHARACTERS", "DEFAULT_VIEW_LINES", "TOOL_VERSIONS", "TextEditorTool"]

# version -> (tool name, has undo_edit)
TOOL_VERSIONS: dict[str, tuple[str, bool]] = {
    "text_editor_20250728": ("str_replace_based_edit_tool", False),
    "text_editor_20250429": ("str_replace_based_edit_tool", False),
    "text_editor_20250124": ("str_replace_editor", True),
}
_DIRECTORY_DEPTH = 2
_SNIPPET_CONTEXT = 4
DEFAULT_VIEW_CHARACTERS = 16_000
"""What one view returns at most unless ``max_characters`` says otherwise (about 4,000 tokens)."""
DEFAULT_VIEW_LINES = 2_000


def numbered(text: str, first: int = 1) -> str:
    """Lines prefixed with their 1-based number, as ``cat -n`` prints them (lines split on "\\n" only)."""
    lines = [strip_newline(line) for line in split_lines(text)]
    return "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, start=first))


def line_count(text: str) -> int:
    """Lines as nbedit counts them: split on "\\n" only (a form feed is not a line break)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def line_window(text: str, first: int, last: int, limit: int) -> list[str]:
    """Lines ``first..last`` (1-based) without their endings, stopping once ``limit`` characters are
    gathered: a view of a huge file never builds a list of all its lines."""
    position = 0
    for _ in range(first - 1):
        position = text.find("\n", position) + 1
        if position == 0:
            return []
    lines: list[str] = []
    size = 0
    while len(lines) < last - first + 1 and position < len(text) and size <= limit:
        end = text.find("\n", position)
        line = text[position:] if end < 0 else text[position:end]
        lines.append(strip_newline(line + "\n"))
        size += len(line) + 8
        position = len(text) if end < 0 else end + 1
    return lines


class TextEditorTool:
    """Serve Anthropic text editor tool calls against a ``Workspace``."""

    def __init__(
        self,
        workspace: Workspace,
        approval: Approval = "auto",
        require_view: bool = True,
        *,
        version: str = "text_editor_20250728",
        max_characters: int | None = None,
        max_lines: int = DEFAULT_VIEW_LINES,
        review_timeout: float | None = None,
    ) -> None:
        for name, value in (("max_characters", max_characters), ("max_lines", max_lines)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive whole number, not {value!r}")
        if version not in TOOL_VERSIONS:
            raise ValueError(
                f"unknown text editor version {version!r}; use one of {', '.join(TOOL_VERSIONS)}"
            )
        self.version = version
        self.name, self.has_undo = TOOL_VERSIONS[version]
        self.max_characters = max_characters
        self.max_lines = max_lines
        self.session = ToolSession(workspace, self.name, approval, require_view, surface="text_editor")
        # what a view of a missing file suggests: this tool's way to make one
        self.missing_hint = "create it with the create command"
        self.session.review_timeout = review_timeout

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    @property
    def definition(self) -> dict[str, Any]:
        """The entry for the Messages API ``tools=[...]``."""
        entry: dict[str, Any] = {"type": self.version, "name": self.name}
        if self.max_characters is not None and self.version == "text_editor_20250728":
            entry["max_characters"] = self.max_characters
        return entry

    def run(self, block: Any) -> dict[str, Any]:
        """Run one ``tool_use`` block (a dict or an SDK object); return its ``tool_result`` block."""
        call_id = field(block, "id")
        try:
            name = field(block, "name")
            if name is not None and name != self.name:
                raise ToolFailure(f"Error: this tool is {self.name!r}, not {name!r}.")
            arguments = field(block, "input") or {}
            if not isinstance(arguments, dict):
                arguments = dict(arguments)
            text = self._dispatch(arguments, call_id)
            is_error = False
        except _Refused as refusal:
            text, is_error = refusal.text, True
        except (ToolFailure, NbeditError) as error:
            text, is_error = error_text(error, self.session.surface), True
            if not text.startswith("Error"):
                text = "Error: " + text
        return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}

    async def arun(self, block: Any) -> dict[str, Any]:
        """``run`` for async cells: ``await tool.arun(block)`` (what ``approval="review"`` needs on ipykernel 7)."""
        return await run_async(self.session, self.run, block)

    # ------------------------------------------------------------------ commands

    def _dispatch(self, arguments: dict[str, Any], call_id: str | None) -> str:
        command = arguments.get("command")
        path = arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ToolFailure("Error: every command needs a 'path' (a file or folder in the workspace).")
        if command == "view":
            return self._view(path, arguments.get("view_range"))
        if command == "str_replace":
            old, new = _text(arguments, "old_str"), arguments.get("new_str") or ""
            return self._str_replace(path, old, _string(new, "new_str"), call_id)
        if command == "create":
            return self._create(path, _text(arguments, "file_text", allow_empty=True), call_id)
        if command == "insert":
            new = arguments.get("new_str", arguments.get("insert_text"))
            return self._insert(path, arguments.get("insert_line"), _string(new, "new_str"), call_id)
        if command == "undo_edit":
            if not self.has_undo:
                raise ToolFailure(
                    f"Error: undo_edit is not available in {self.version}; "
                    "undo the edit with str_replace (swap the old and new text)."
                )
            return self._undo(path, call_id)
        raise ToolFailure(
            f"Error: unknown command {command!r}; use view, str_replace, create, insert"
            + (" or undo_edit." if self.has_undo else ".")
        )

    def _view(self, path: str, view_range: Any, *, anchors: bool = False) -> str:
        folder = self.session.directory(path)
        if folder is not None:
            if view_range is not None:
                raise ToolFailure("Error: view_range applies to files only; this path is a folder.")
            return self._list(path, folder)
        normalised = self.session.normalise(path)
        data = self.session.read(normalised)
        if data is None:
            raise ToolFailure(f"Error: {path} does not exist; {self.missing_hint}.")
        text = (
            self.workspace.view(normalised) if normalised.endswith(".ipynb") else decode(data, normalised)[0]
        )
        self.session.saw(normalised, data)
        del data  # a big file: keep one copy (the text), and only the shown lines as a list
        total = line_count(text)
        first, last = 1, total
        if view_range is not None:
            first, last = _range(view_range, total)
        kind = "the cell view of notebook" if normalised.endswith(".ipynb") else "file"
        header = f"Here's the result of running `cat -n` on {kind} {path}:\n"
        if anchors:
            from nbedit.agents.anchors import anchored

            render = lambda chosen, start: anchored(chosen, start)  # noqa: E731
            header = f"{path} with anchors (N:hash|text; name lines by their N:hash in an anchored edit):\n"
        else:
            render = lambda chosen, start: "\n".join(  # noqa: E731
                f"{number:6}\t{line}" for number, line in enumerate(chosen, start=start)
            )
        shown_last = min(last, first + self.max_lines - 1)
        limit = self.max_characters if self.max_characters is not None else DEFAULT_VIEW_CHARACTERS
        lines = line_window(text, first, shown_last, limit)
        shown_last = min(shown_last, first + len(lines) - 1)
        if anchors:
            from nbedit.agents.anchors import full_hash

            remembered = self.session.anchored_lines.setdefault(normalised, {})
            remembered.update((first + index, full_hash(line)) for index, line in enumerate(lines))
        body = render(lines, first)
        if len(body) > limit:  # keep whole lines: a model must never see half a line as the line
            kept, size = 0, 0
            for line in body.split("\n"):
                if size + len(line) + 1 > limit:
                    break
                size += len(line) + 1
                kept += 1
            if kept == 0:
                line_text = lines[0]
                return (
                    f"{header}{render([line_text[: max(limit - 20, 1)]], first)}\n"
                    f"... line {first} alone is longer than {limit} characters; it was cut after "
                    f"{max(limit - 20, 1)} of its {len(line_text)} characters"
                )
            shown_last = first + kept - 1
            body = render(lines[:kept], first)
        if shown_last < last:
            following = min(last, shown_last + (shown_last - first + 1))
            body += (
                f"\n... showing lines {first}-{shown_last} of {total} (a view returns at most "
                f"{limit} characters and {self.max_lines} lines); to see more, view again with "
                f"view_range [{shown_last + 1}, {following}]"
            )
        return header + body

    def _list(self, path: str, folder: os.PathLike[str] | str) -> str:
        base = os.fspath(folder)
        found: list[str] = []
        for current, folders, files in os.walk(base):
            depth = os.path.relpath(current, base).count(os.sep) + (0 if current == base else 1)
            folders[:] = sorted(name for name in folders if not name.startswith("."))
            if depth >= _DIRECTORY_DEPTH:
                folders[:] = []
            for name in sorted(files):
                if not name.startswith("."):
                    found.append(os.path.relpath(os.path.join(current, name), base))
        listing = "\n".join(found) if found else "(no files)"
        return (
            f"Here are the files in {path}, up to {_DIRECTORY_DEPTH} levels deep "
            f"(hidden items excluded):\n{listing}"
        )

    def _str_replace(self, path: str, old: str, new: str, call_id: str | None) -> str:
        normalised = self.session.normalise(path)
        if self.session.read(normalised) is None:
            raise ToolFailure(f"Error: {path} does not exist; create it with the create command.")
        self.session.check_viewed(path, normalised)
        plan = self.workspace.plan_edit(normalised, old, new)
        return self._decide(
            plan, call_id, f"{self.name} str_replace in {path}", f"Edited {path}.", snippet=new
        )

    def _create(self, path: str, content: str, call_id: str | None) -> str:
        normalised = self.session.normalise(path)
        existing = self.session.read(normalised)
        if existing is None or not existing:
            plan = self.workspace.plan_edit(normalised, "", content) if content else None
            if plan is None:
                plan = self.workspace.plan_patch(
                    f"*** Begin Patch\n*** Add File: {normalised}\n*** End Patch\n"
                )
            return self._decide(plan, call_id, f"{self.name} create {path}", f"Created {path}.")
        self.session.check_viewed(path, normalised)
        current, _ = decode(existing, normalised)
        if current == content:
            return f"No change: {path} already holds exactly this text; nothing was written."
        plan = self.workspace.plan_edit(normalised, current, content, exact=True)
        return self._decide(plan, call_id, f"{self.name} create (overwrite) {path}", f"Overwrote {path}.")

    def _insert(self, path: str, line: Any, new: str, call_id: str | None) -> str:
        normalised = self.session.normalise(path)
        data = self.session.read(normalised)
        if data is None:
            raise ToolFailure(f"Error: {path} does not exist; create it with the create command.")
        self.session.check_viewed(path, normalised)
        if normalised.endswith(".ipynb"):
            raise ToolFailure(
                "Error: insert works on plain files; in a notebook use str_replace on a cell's text."
            )
        text, _ = decode(data, normalised)
        lines = split_lines(text)
        if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line <= len(lines):
            raise ToolFailure(
                f"Error: insert_line must be a whole number from 0 (top of the file) to {len(lines)} "
                f"(after the last line) for {path}; got {line!r}."
            )
        if not text:
            plan = self.workspace.plan_edit(normalised, "", new if new.endswith("\n") else new + "\n")
        else:
            plan = self.workspace.plan_patch(_insertion_diff(normalised, lines, line, new), dialect="diff")
        return self._decide(
            plan, call_id, f"{self.name} insert in {path}", f"Inserted text after line {line} of {path}.",
            snippet=new,
        )  # fmt: skip

    def _undo(self, path: str, call_id: str | None) -> str:
        normalised = self.session.normalise(path)
        prefix = f"{AGENT_ORIGIN_PREFIX}{self.name}:"
        undone: set[str] = set()
        target = None
        for entry in self.workspace.history(path=normalised):
            if entry.status != "applied":
                continue
            if entry.undoes:
                undone.add(entry.undoes)
            elif entry.origin.startswith(prefix) and entry.id not in undone:
                target = entry
                break
        if target is None:
            raise NothingToUndo(f"{path}: this tool has made no edit of it that is not undone already")
        plan = self.workspace.plan_undo(target.id)
        return self._decide(
            plan, call_id, f"{self.name} undo_edit of {path}", f"Undid the last edit of {path} ({target.id}).",
            undoes=target.id,
        )  # fmt: skip

    # ------------------------------------------------------------------ results

    def _decide(self, plan: Any, call_id: str | None, title: str, done: str, *, snippet: str | None = None,
                **apply_options: Any) -> str:  # fmt: skip
        decision = self.session.decide(plan, call_id, title, **apply_options)
        is_error, text = describe_decision(decision, done, self.session.surface)
        if is_error:
            raise _Refused(text)
        if decision.outcome == "applied" and snippet is not None and not decision.partial:
            text += "\n" + self._snippet(plan, snippet)
        return text

    def _snippet(self, plan: Any, new: str) -> str:
        """The edited region with line numbers, so the model can check its work without a view."""
        file_plan = plan.files[0]
        after = file_plan.display_after if file_plan.display_after is not None else file_plan.after
        if after is None or not file_plan.hunks:
            return ""
        located = file_plan.hunks[0]
        start = max(1, located.line - _SNIPPET_CONTEXT)
        end = located.line + new.count("\n") + _SNIPPET_CONTEXT
        lines = line_window(after, start, end, DEFAULT_VIEW_CHARACTERS)  # only the region, not the file
        shown = "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, start=start))
        return f"Here is the edited region (cat -n):\n{shown}"


class _Refused(Exception):
    """The change was planned but not written (rejected by the user); the text is the result."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ToolFailure(f"Error: {name} must be a string.")
    return value


def _text(arguments: dict[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = arguments.get(name)
    if value is None:
        raise ToolFailure(f"Error: this command needs {name!r}.")
    text = _string(value, name)
    if not text and not allow_empty:
        raise ToolFailure(f"Error: {name} is empty; copy the exact text to replace from the file.")
    return text


def _range(view_range: Any, count: int) -> tuple[int, int]:
    valid = (
        isinstance(view_range, (list, tuple))
        and len(view_range) == 2
        and all(isinstance(item, int) and not isinstance(item, bool) for item in view_range)
    )
    if not valid:
        raise ToolFailure("Error: view_range must be two line numbers [start, end] (end -1: to the end).")
    first, last = view_range
    last = count if last == -1 else last
    if not 1 <= first <= max(count, 1) or last < first or last > count:
        raise ToolFailure(
            f"Error: view_range {list(view_range)} is outside the file, which has {count} lines; "
            f"use 1 <= start <= end <= {count} (end -1 means to the end)."
        )
    return first, last


def _insertion_diff(path: str, lines: list[str], after: int, new: str) -> str:
    """A unified diff inserting ``new`` after line ``after`` (0: top), located by that line number.

    Context lines carry the file's own line ending, so the added lines are given
    the same one (a CRLF file stays CRLF), and a file without a final newline
    stays without one.
    """
    ending = next((line[len(line.rstrip("\r\n")) :] for line in lines if line.endswith("\n")), "\n")
    carriage = "\r" if ending == "\r\n" else ""
    inserted = new[:-1] if new.endswith("\n") else new
    added = ["+" + line.rstrip("\r") + carriage for line in inserted.split("\n")]
    no_newline = "\\ No newline at end of file"
    anchor = lines[0] if after == 0 else lines[after - 1]
    bare = anchor.rstrip("\r\n")
    if anchor.endswith("\n"):
        context = " " + anchor[:-1]
        body = [*added, context] if after == 0 else [context, *added]
    elif after == 0:  # a one-line file without a final newline: the insertion goes above it
        body = [*added, " " + bare, no_newline]
    else:  # the last line has no newline: it gains one, and the insertion ends the file without one
        added[-1] = added[-1][: len(added[-1]) - len(carriage)]
        body = ["-" + bare, no_newline, "+" + bare + carriage, *added, no_newline]
    start = 1 if after == 0 else after
    count_new = sum(1 for line in body if line[:1] in (" ", "+"))
    header = f"--- a/{path}\n+++ b/{path}\n@@ -{start},1 +{start},{count_new} @@\n"
    return header + "\n".join(body) + "\n"
