"""nbedit's abilities as plain JSON-schema function tools, for any function-calling model.

Four functions: ``view`` (numbered lines, a range, a folder listing or a
notebook's cell view), ``edit`` (old/new, ``replace_all``, ``cell``),
``patch`` (a change in any dialect nbedit reads) and ``undo`` (the latest
change a model made in this workspace session, or an entry by id).
``schemas(flavor)`` gives the declarations in the OpenAI Responses shape
(``"openai"``), the Chat Completions shape (``"openai-chat"``) or Anthropic's
(``"anthropic"``); ``run(name, arguments)`` returns text, with failures as
text starting ``Error:`` because that is what a function result can carry.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Approval
from nbedit.agents.session import ToolFailure, ToolSession, describe_decision, error_text, run_async
from nbedit.agents.text_editor import TextEditorTool
from nbedit.errors import NbeditError, NothingToUndo
from nbedit.storage.records import AGENT_ORIGIN_PREFIX

if TYPE_CHECKING:
    from nbedit.workspace import Workspace

__all__ = ["FUNCTIONS", "FunctionTools"]

_PATH = {"type": "string", "description": "file path relative to the workspace root"}
FUNCTIONS: dict[str, dict[str, Any]] = {
    "view": {
        "description": "Show a file with 1-based line numbers (a notebook as its cell view; a folder as a "
        "list of files). View a file before editing it.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": _PATH,
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "optional [start, end] lines, 1-based; end -1 means to the end",
                },
            },
            "required": ["path"],
        },
    },
    "edit": {
        "description": "Replace old text with new text in one file. old must occur exactly once (copy it "
        "from the file with enough context to be unique) unless replace_all is true.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": _PATH,
                "old": {"type": "string", "description": "the text to replace, as it is in the file"},
                "new": {"type": "string", "description": "the replacement text"},
                "replace_all": {"type": "boolean", "description": "change every occurrence (default false)"},
                "cell": {"type": "string", "description": "notebooks only: limit to a cell id or index"},
            },
            "required": ["path", "old", "new"],
        },
    },
    "patch": {
        "description": "Apply a change to one or more files: a unified or git diff, a '*** Begin Patch' "
        "block, or SEARCH/REPLACE blocks with file names. All or nothing.",
        "parameters": {
            "type": "object",
            "properties": {"patch": {"type": "string", "description": "the change text"}},
            "required": ["patch"],
        },
    },
    "undo": {
        "description": "Undo the latest change a model made in this session (or the history entry entry_id).",
        "parameters": {
            "type": "object",
            "properties": {"entry_id": {"type": "string", "description": "optional history entry id"}},
            "required": [],
        },
    },
}


class FunctionTools:
    """``view``/``edit``/``patch``/``undo`` as function tools over a ``Workspace``."""

    def __init__(
        self,
        workspace: Workspace,
        approval: Approval = "auto",
        *,
        require_view: bool = False,
        origin_prefix: str = "",
        review_timeout: float | None = None,
    ) -> None:
        self.origin_prefix = origin_prefix
        self.session = ToolSession(workspace, f"{origin_prefix}functions", approval, require_view)
        self.session.review_timeout = review_timeout
        # views share the text editor's rendering (and its record of what was viewed)
        self._viewer = TextEditorTool(workspace, "dry-run", require_view=False)
        self._viewer.session = self.session

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    def schemas(self, flavor: str = "openai") -> list[dict[str, Any]]:
        """The function declarations for a model's ``tools=[...]``."""
        if flavor == "openai":
            return [{"type": "function", "name": name, **spec} for name, spec in FUNCTIONS.items()]
        if flavor == "openai-chat":
            return [
                {"type": "function", "function": {"name": name, **spec}} for name, spec in FUNCTIONS.items()
            ]
        if flavor == "anthropic":
            return [
                {"name": name, "description": spec["description"], "input_schema": spec["parameters"]}
                for name, spec in FUNCTIONS.items()
            ]
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
            arguments = dict(arguments or {})
            if name not in FUNCTIONS:
                raise ToolFailure(f"Error: unknown function {name!r}; use {', '.join(FUNCTIONS)}.")
            missing = [key for key in FUNCTIONS[name]["parameters"]["required"] if key not in arguments]
            if missing:
                raise ToolFailure(f"Error: {name} needs {', '.join(missing)}.")
            return str(getattr(self, f"_{name}")(arguments, call_id))
        except _Refused as refusal:
            return refusal.text
        except (ToolFailure, NbeditError) as error:
            text = error_text(error)
            return text if text.startswith("Error") else "Error: " + text

    async def arun(self, name: str, arguments: Any = None, *, call_id: str | None = None) -> str:
        """``run`` for async cells (what ``approval="review"`` needs on ipykernel 7)."""
        return await run_async(self.session, self.run, name, arguments, call_id=call_id)

    # ------------------------------------------------------------------ functions

    def _view(self, arguments: dict[str, Any], call_id: str | None) -> str:
        return self._viewer._view(_string(arguments, "path"), arguments.get("view_range"))

    def _edit(self, arguments: dict[str, Any], call_id: str | None) -> str:
        path = _string(arguments, "path")
        normalised = self.session.normalise(path)
        self.session.check_viewed(path, normalised)
        replace_all = arguments.get("replace_all") or False
        if not isinstance(replace_all, bool):
            raise ToolFailure("Error: replace_all must be true or false.")
        cell = arguments.get("cell")
        plan = self.workspace.plan_edit(
            normalised,
            _string(arguments, "old"),
            _string(arguments, "new"),
            replace_all=replace_all,
            cell=str(cell) if cell is not None else None,
        )
        return self._decide("edit", plan, call_id, f"Edited {path}.")

    def _patch(self, arguments: dict[str, Any], call_id: str | None) -> str:
        text = _string(arguments, "patch")
        plan = self.workspace.plan_patch(text)
        for file_plan in plan.files:
            if file_plan.before_bytes is not None:
                self.session.check_viewed(file_plan.path, file_plan.path)
        return self._decide("patch", plan, call_id, f"Patched {', '.join(plan.paths)}.")

    def _undo(self, arguments: dict[str, Any], call_id: str | None) -> str:
        entry_id = arguments.get("entry_id")
        if entry_id is None:
            entry_id = self._last_model_entry()
        plan = self.workspace.plan_undo(_string({"entry_id": entry_id}, "entry_id"))
        return self._decide("undo", plan, call_id, f"Undid {entry_id}.", undoes=entry_id)

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
        entries = self.workspace.history()[:limit]
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
        is_error, text = describe_decision(decision, done)
        if is_error:
            raise _Refused("Error: " + text)
        if decision.outcome == "applied" and decision.result is not None and decision.result.entry_id:
            text += f"\nHistory entry {decision.result.entry_id} (undo it with the undo function)."
        return text


class _Refused(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _string(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ToolFailure(f"Error: {name} must be a string.")
    return value
