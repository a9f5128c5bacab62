"""nbedit's abilities as plain JSON-schema function tools, for any function-calling model.

Five functions: ``view`` (numbered lines, a range, a folder listing or a
notebook's cell view; with ``anchors`` each line as ``N:hash|text``), ``edit``
(old/new, ``replace_all``, ``cell``), ``edit_lines`` (lines named by the
anchors of a view: replace a range, or insert after a line), ``patch`` (a
change in any dialect nbedit reads) and ``undo`` (the latest change a model
made in this session, or an entry by id that an agent of this session made or
a person allowed).

``schemas(flavor)`` gives the declarations in the OpenAI Responses shape
(``"openai"``), the Chat Completions shape (``"openai-chat"``) or Anthropic's
(``"anthropic"``). Every schema is valid in strict mode (``strict: true``,
``additionalProperties: false``, every property required, optional ones
nullable), which is what OpenAI's structured function calling and
Anthropic's strict tool use want; ``strict=False`` gives the same schemas
marked non-strict. ``run(name, arguments)`` returns text, with failures as
text starting ``Error:`` because that is what a function result can carry; a
``null`` for an optional argument means "not given".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Approval
from nbedit.agents.session import (
    ToolFailure,
    ToolSession,
    check_path,
    describe_decision,
    error_text,
    run_async,
)
from nbedit.agents.text_editor import DEFAULT_VIEW_LINES, TextEditorTool
from nbedit.errors import HistoryError, NbeditError, NothingToUndo
from nbedit.storage.records import AGENT_ORIGIN_PREFIX

if TYPE_CHECKING:
    from nbedit.workspace import Workspace

__all__ = ["FUNCTIONS", "FunctionTools"]

_PATH = {"type": "string", "description": "file path relative to the workspace root"}


def _optional(kind: str | dict[str, Any], description: str) -> dict[str, Any]:
    """An optional argument as strict mode wants it: required, and null when not given."""
    if isinstance(kind, dict):
        return {"anyOf": [kind, {"type": "null"}], "description": description}
    return {"type": [kind, "null"], "description": description}


FUNCTIONS: dict[str, dict[str, Any]] = {
    "view": {
        "description": "Show a file with 1-based line numbers (a notebook as its cell view; a folder as a "
        "list of files). View a file before editing it. Long files are shown in parts; the answer says "
        "which view_range shows the next part.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": _PATH,
                "view_range": _optional(
                    {"type": "array", "items": {"type": "integer"}},
                    "[start, end]: only these lines, 1-based and inclusive; end -1 means to the last line; "
                    "null for the whole file",
                ),
                "anchors": _optional(
                    "boolean",
                    "true: show each line as N:hash|text, whose N:hash anchors edit_lines takes; "
                    "null or false: numbered lines",
                ),
            },
            "required": ["path", "view_range", "anchors"],
            "additionalProperties": False,
        },
    },
    "edit": {
        "description": 'Replace old text with new text in one file (old "" on a missing file creates it). '
        "old must occur exactly once: copy it from the file with enough surrounding lines to be unique, "
        "unless replace_all is true.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": _PATH,
                "old": {"type": "string", "description": "the text to replace, exactly as it is in the file"},
                "new": {"type": "string", "description": "the replacement text"},
                "replace_all": _optional("boolean", "true: change every occurrence of old; null: false"),
                "cell": _optional(
                    "string",
                    "notebooks only: the cell to edit, by its id (as the view shows after id=) or its "
                    "0-based index; null: any cell",
                ),
            },
            "required": ["path", "old", "new", "replace_all", "cell"],
            "additionalProperties": False,
        },
    },
    "edit_lines": {
        "description": "Change lines named by the anchors of a view with anchors=true (N:hash, e.g. "
        "12:a3f): replace the lines from one anchor to another, or insert after one. The anchors are "
        "checked against the file; a stale one is refused with the current lines.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": _PATH,
                "replace": _optional(
                    "string",
                    "the lines to replace, 'FIRST..LAST' (e.g. '12:a3f..18:9b2') or one anchor for one "
                    "line; null when inserting",
                ),
                "insert_after": _optional(
                    "string", "the anchor of the line to insert after ('0' for the top); null when replacing"
                ),
                "new": {
                    "type": "string",
                    "description": "the new lines, without anchors or numbers ('' deletes the range)",
                },
            },
            "required": ["path", "replace", "insert_after", "new"],
            "additionalProperties": False,
        },
    },
    "patch": {
        "description": "Apply a change to one or more files: a unified or git diff, a '*** Begin Patch' "
        "block, or SEARCH/REPLACE blocks with file names. All or nothing.",
        "parameters": {
            "type": "object",
            "properties": {"patch": {"type": "string", "description": "the change text"}},
            "required": ["patch"],
            "additionalProperties": False,
        },
    },
    "undo": {
        "description": "Undo the latest change made by a model in this session, or the history entry "
        "entry_id (one a model made in this session, or one the user allowed). Later changes to the same "
        "files stay; if they rewrote the lines it changed, it is refused and nothing is written.",
        "parameters": {
            "type": "object",
            "properties": {
                "entry_id": _optional("string", "a history entry id like e0000002a; null: the latest")
            },
            "required": ["entry_id"],
            "additionalProperties": False,
        },
    },
}
# what a call must carry: the rest may be left out or null
NEEDED: dict[str, tuple[str, ...]] = {
    "view": ("path",),
    "edit": ("path", "old", "new"),
    "edit_lines": ("path", "new"),
    "patch": ("patch",),
    "undo": (),
}


def _non_strict(parameters: dict[str, Any]) -> dict[str, Any]:
    loose = copy.deepcopy(parameters)
    name_required = [key for key in loose["required"]]
    loose["required"] = [key for key in name_required if not _nullable(loose["properties"][key])]
    return loose


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (isinstance(kind, list) and "null" in kind) or any(
        option.get("type") == "null" for option in schema.get("anyOf", ())
    )


class FunctionTools:
    """``view``/``edit``/``edit_lines``/``patch``/``undo`` as function tools over a ``Workspace``."""

    def __init__(
        self,
        workspace: Workspace,
        approval: Approval = "auto",
        *,
        require_view: bool = False,
        origin_prefix: str = "",
        review_timeout: float | None = None,
        max_characters: int | None = None,
        max_lines: int = DEFAULT_VIEW_LINES,
    ) -> None:
        self.origin_prefix = origin_prefix
        self.session = ToolSession(workspace, f"{origin_prefix}functions", approval, require_view)
        self.session.review_timeout = review_timeout
        # views share the text editor's rendering (and its record of what was viewed)
        self._viewer = TextEditorTool(
            workspace, "dry-run", require_view=False, max_characters=max_characters, max_lines=max_lines
        )
        self._viewer.session = self.session
        self._viewer.missing_hint = 'to create it, call edit with old "" and new set to its text'
        self._allowed_undo: set[str] = set()

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    def allow_undo(self, *entry_ids: str) -> None:
        """Let the model undo these entries too (a person's own, or another session's)."""
        self._allowed_undo.update(entry_ids)

    def schemas(self, flavor: str = "openai", *, strict: bool = True) -> list[dict[str, Any]]:
        """The function declarations for a model's ``tools=[...]`` (strict mode unless ``strict=False``)."""

        def parameters(spec: dict[str, Any]) -> dict[str, Any]:
            return copy.deepcopy(spec["parameters"]) if strict else _non_strict(spec["parameters"])

        if flavor == "openai":
            return [
                {"type": "function", "name": name, "description": spec["description"],
                 "parameters": parameters(spec), "strict": strict}
                for name, spec in FUNCTIONS.items()
            ]  # fmt: skip
        if flavor == "openai-chat":
            return [
                {"type": "function", "function": {"name": name, "description": spec["description"],
                                                  "parameters": parameters(spec), "strict": strict}}
                for name, spec in FUNCTIONS.items()
            ]  # fmt: skip
        if flavor == "anthropic":
            declarations = []
            for name, spec in FUNCTIONS.items():
                entry = {"name": name, "description": spec["description"], "input_schema": parameters(spec)}
                if strict:
                    entry["strict"] = True
                declarations.append(entry)
            return declarations
        raise ValueError(f"unknown flavor {flavor!r}; use openai, openai-chat or anthropic")

    def run(self, name: str, arguments: Any = None, *, call_id: str | None = None) -> str:
        """Run function ``name`` with ``arguments`` (a dict or a JSON string); the result text."""
        try:
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except json.JSONDecodeError as error:
                    raise ToolFailure(
                        f"Error: the arguments are not valid JSON ({error}); send a JSON object."
                    ) from None
            if arguments is not None and not isinstance(arguments, dict):
                raise ToolFailure("Error: the arguments must be a JSON object of named arguments.")
            # null is "not given" (strict mode sends every optional argument, as null)
            arguments = {key: value for key, value in (arguments or {}).items() if value is not None}
            if name not in FUNCTIONS:
                raise ToolFailure(f"Error: unknown function {name!r}; use {', '.join(FUNCTIONS)}.")
            unknown = sorted(set(arguments) - set(FUNCTIONS[name]["parameters"]["properties"]))
            if unknown:
                known = ", ".join(FUNCTIONS[name]["parameters"]["properties"])
                raise ToolFailure(f"Error: {name} has no argument {', '.join(unknown)}; it takes {known}.")
            missing = [key for key in NEEDED[name] if key not in arguments]
            if missing:
                raise ToolFailure(f"Error: {name} needs {_and(missing)}.")
            return str(getattr(self, f"_{name}")(arguments, call_id))
        except _Refused as refusal:
            return refusal.text
        except (ToolFailure, NbeditError) as error:
            text = error_text(error, self.session.surface)
            return text if text.startswith("Error") else "Error: " + text

    async def arun(self, name: str, arguments: Any = None, *, call_id: str | None = None) -> str:
        """``run`` for async cells (what ``approval="review"`` needs on ipykernel 7)."""
        return await run_async(self.session, self.run, name, arguments, call_id=call_id)

    # ------------------------------------------------------------------ functions

    def _view(self, arguments: dict[str, Any], call_id: str | None) -> str:
        anchors = arguments.get("anchors") or False
        if not isinstance(anchors, bool):
            raise ToolFailure("Error: anchors must be true, false or null.")
        return self._viewer._view(_string(arguments, "path"), arguments.get("view_range"), anchors=anchors)

    def _edit(self, arguments: dict[str, Any], call_id: str | None) -> str:
        path = _string(arguments, "path")
        normalised = self.session.normalise(path)
        self.session.check_viewed(path, normalised)
        replace_all = arguments.get("replace_all") or False
        if not isinstance(replace_all, bool):
            raise ToolFailure("Error: replace_all must be true, false or null.")
        cell = arguments.get("cell")
        plan = self.workspace.plan_edit(
            normalised,
            _string(arguments, "old"),
            _string(arguments, "new"),
            replace_all=replace_all,
            cell=str(cell) if cell is not None else None,
        )
        return self._decide("edit", plan, call_id, f"Edited {path}.")

    def _edit_lines(self, arguments: dict[str, Any], call_id: str | None) -> str:
        from nbedit.agents.anchors import AnchorError, parse_anchor, parse_range, replacement_diff, verify
        from nbedit.engine.text import decode, split_lines, strip_newline

        path = _string(arguments, "path")
        new = _string(arguments, "new")
        replace, after = arguments.get("replace"), arguments.get("insert_after")
        if (replace is None) == (after is None):
            raise ToolFailure(
                "Error: edit_lines takes either replace (a range like '12:a3f..18:9b2') or insert_after "
                "(an anchor like '40:c1d'), not both and not neither."
            )
        normalised = self.session.normalise(path)
        if normalised.endswith(".ipynb"):
            raise ToolFailure("Error: edit_lines works on plain files; in a notebook use edit with a cell.")
        data = self.session.read(normalised)
        if data is None:
            raise ToolFailure(f"Error: {path} does not exist; {self._viewer.missing_hint}.")
        self.session.check_viewed(path, normalised)
        text, _ = decode(data, normalised)
        kept = split_lines(text)
        lines = [strip_newline(line) for line in kept]
        shown = self.session.anchored_lines.get(normalised)
        try:
            if replace is not None:
                first, last = parse_range(replace)
                verify(first, lines, shown)
                verify(last, lines, shown)
                start, end, what = (
                    first.line,
                    last.line,
                    f"Replaced lines {first.line}-{last.line} of {path}.",
                )
            else:
                anchor = parse_anchor(after, allow_top=True)
                verify(anchor, lines, shown)
                if new == "":
                    raise ToolFailure("Error: new is empty; an insertion needs the lines to insert.")
                start, end, what = (
                    anchor.line + 1,
                    anchor.line,
                    f"Inserted lines after line {anchor.line} of {path}.",
                )
        except AnchorError as error:
            raise ToolFailure(f"Error: {error}. Nothing was written.") from None
        if not kept:
            plan = self.workspace.plan_edit(normalised, "", new if new.endswith("\n") else new + "\n")
        else:
            plan = self.workspace.plan_patch(
                replacement_diff(normalised, kept, start, end, new), dialect="diff"
            )
        return self._decide("edit_lines", plan, call_id, what)

    def _patch(self, arguments: dict[str, Any], call_id: str | None) -> str:
        text = _string(arguments, "patch")
        plan = self.workspace.plan_patch(text)
        for file_plan in plan.files:
            for named in (file_plan.path, file_plan.target_path):
                check_path(named, "the patch's path")
        for file_plan in plan.files:
            if file_plan.before_bytes is not None:
                self.session.check_viewed(file_plan.path, file_plan.path)
        return self._decide("patch", plan, call_id, f"Patched {', '.join(plan.paths)}.")

    def _undo(self, arguments: dict[str, Any], call_id: str | None) -> str:
        entry_id = arguments.get("entry_id")
        if entry_id is None:
            entry_id = self._last_model_entry()
        else:
            entry_id = _string({"entry_id": entry_id}, "entry_id")
            self._check_undoable(entry_id)
        plan = self.workspace.plan_undo(entry_id)
        return self._decide("undo", plan, call_id, f"Undid {entry_id}.", undoes=entry_id)

    def _check_undoable(self, entry_id: str) -> None:
        """An agent may undo only what agents did in its own session, or what a person allowed."""
        if entry_id in self._allowed_undo:
            return
        mine = {entry.id: entry for entry in self.workspace.history()}
        entry = mine.get(entry_id)
        if entry is not None and entry.origin.startswith(AGENT_ORIGIN_PREFIX):
            return
        whose = "a person's change" if entry is not None else "not a change made in this session"
        raise ToolFailure(
            f"Error: {entry_id} is {whose}; you may undo only changes a model made in this session "
            "(call undo with entry_id null for the latest). Ask the user to undo it if it should go. "
            "Nothing was written."
        )

    def _last_model_entry(self) -> str:
        undone: set[str] = set()
        for entry in self.workspace.history():
            if entry.status != "applied":
                continue
            if entry.undoes:
                undone.add(entry.undoes)
            elif entry.origin.startswith(AGENT_ORIGIN_PREFIX) and entry.id not in undone:
                return str(entry.id)
        raise NothingToUndo("no change made by a model in this session is left to undo")

    def history_text(self, limit: int = 20) -> str:
        """This session's entries, newest first, one line each (what the MCP ``history`` tool returns)."""
        try:
            entries = self.workspace.history()[:limit]
        except HistoryError as error:
            return error_text(error, self.session.surface)
        if not entries:
            return "No changes recorded in this session."
        lines = []
        for entry in entries:
            files = ", ".join(f"{f.target_path} +{f.added}/-{f.removed}" for f in entry.files)
            undoes = f" (undoes {entry.undoes})" if entry.undoes else ""
            lines.append(f"{entry.id}  {entry.origin}  {entry.status}  {files}{undoes}")
        return "\n".join(lines)

    def _decide(self, function: str, plan: Any, call_id: str | None, done: str, **apply_options: Any) -> str:
        session = self.session
        session.tool = f"{self.origin_prefix}{function}"
        decision = session.decide(
            plan, call_id, f"{function} ({call_id or 'function call'})", **apply_options
        )
        is_error, text = describe_decision(decision, done, session.surface)
        if is_error:
            raise _Refused("Error: " + text)
        if decision.outcome == "applied" and decision.result is not None and decision.result.entry_id:
            text += f"\nHistory entry {decision.result.entry_id} (undo it with the undo function)."
        return text


class _Refused(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _and(names: Iterable[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _string(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ToolFailure(f"Error: {name} must be a string.")
    return value
