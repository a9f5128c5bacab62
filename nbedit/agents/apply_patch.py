"""OpenAI's Responses API ``apply_patch`` tool, served by nbedit.

The model emits ``apply_patch_call`` items whose ``operation`` is
``create_file`` / ``update_file`` (each with a V4A ``diff``) or
``delete_file``. V4A is the body of a Codex ``*** Begin Patch`` block, so the
operation is wrapped in that envelope and planned by nbedit's own apply_patch
parser and matcher (``@@`` anchors scope the search, drift is recovered by
the tiers, ambiguity is refused). The plan goes through the approval gate;
the answer is an ``apply_patch_call_output`` item with ``status`` completed or
failed and an ``output`` text written for the model.

One call is one operation on one path. The path is checked at the boundary
(no newline or other control character, which would start another operation
in the envelope), a ``diff`` may not carry patch headers of its own
(``*** Delete File: ...``), and the plan must touch only the path named; a
refusal's line numbers count lines of the model's own ``diff``, not of the
envelope.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Approval
from nbedit.agents.session import ToolFailure, ToolSession, describe_decision, error_text, field, run_async
from nbedit.errors import NbeditError

if TYPE_CHECKING:
    from nbedit.workspace import Workspace

__all__ = ["ApplyPatchTool", "envelope"]

_HEADERS = {"create_file": "Add File", "update_file": "Update File", "delete_file": "Delete File"}
_ENVELOPE_LINES = 2  # "*** Begin Patch" and the operation's header come before the model's diff
_HEADER = re.compile(r"^\*\*\* (Begin Patch|End Patch|Add File:|Delete File:|Update File:|Move to:)")
_DONE = {"create_file": "Created {path}.", "update_file": "Updated {path}.", "delete_file": "Deleted {path}."}


def envelope(operation_type: str, path: str, diff: str | None) -> str:
    """The ``*** Begin Patch`` text an apply_patch operation stands for."""
    lines = ["*** Begin Patch", f"*** {_HEADERS[operation_type]}: {path}"]
    if operation_type != "delete_file" and diff:
        lines.append(diff[:-1] if diff.endswith("\n") else diff)
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


class ApplyPatchTool:
    """Serve ``apply_patch_call`` items against a ``Workspace``."""

    name = "apply_patch"

    def __init__(
        self,
        workspace: Workspace,
        approval: Approval = "auto",
        *,
        require_view: bool = False,
        review_timeout: float | None = None,
    ) -> None:
        self.session = ToolSession(workspace, self.name, approval, require_view, surface="apply_patch")
        self.session.review_timeout = review_timeout

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    @property
    def definition(self) -> dict[str, Any]:
        """The entry for the Responses API ``tools=[...]``."""
        return {"type": "apply_patch"}

    def run(self, call: Any) -> dict[str, Any]:
        """Run one ``apply_patch_call`` item (a dict or an SDK object); return its output item."""
        call_id = field(call, "call_id") or field(call, "id")
        try:
            output = self._apply(field(call, "operation"), call_id)
            status = "completed"
        except _Failed as failure:
            output, status = failure.text, "failed"
        except (ToolFailure, NbeditError) as error:
            output, status = error_text(error, "apply_patch", line_offset=_ENVELOPE_LINES), "failed"
            if not output.startswith("Error"):
                output = "Error: " + output
        return {"type": "apply_patch_call_output", "call_id": call_id, "status": status, "output": output}

    async def arun(self, call: Any) -> dict[str, Any]:
        """``run`` for async cells: ``await tool.arun(call)`` (what ``approval="review"`` needs on ipykernel 7)."""
        return await run_async(self.session, self.run, call)

    def _apply(self, operation: Any, call_id: str | None) -> str:
        if operation is None:
            raise ToolFailure("Error: the apply_patch_call has no operation.")
        kind = field(operation, "type")
        path = field(operation, "path")
        diff = field(operation, "diff")
        if kind not in _HEADERS:
            raise ToolFailure(
                f"Error: unknown operation type {kind!r}; use create_file, update_file or delete_file."
            )
        if path is None or (isinstance(path, str) and not path.strip()):
            raise ToolFailure("Error: the operation needs a 'path' (a file in the workspace).")
        normalised = self.session.normalise(path)  # refuses a control character in the path
        if kind == "update_file" and not (isinstance(diff, str) and diff.strip()):
            raise ToolFailure(f"Error: update_file of {path} needs a V4A 'diff' with the lines to change.")
        if kind == "create_file" and diff is not None and not isinstance(diff, str):
            raise ToolFailure("Error: create_file's 'diff' must be text (each line of the file after '+').")
        if kind != "delete_file" and isinstance(diff, str):
            _check_diff(kind, path, diff)
        if kind != "create_file":
            self.session.check_viewed(path, normalised)
        plan = self.workspace.plan_patch(envelope(kind, normalised, diff), dialect="apply-patch")
        touched = {name for file_plan in plan.files for name in (file_plan.path, file_plan.target_path)}
        if touched - {normalised}:  # never reached after _check_diff; kept as the last word on scope
            raise ToolFailure(
                f"Error: this operation would touch {', '.join(sorted(touched - {normalised}))} besides "
                f"{path}; one operation changes only its own path. Nothing was written."
            )
        decision = self.session.decide(plan, call_id, f"apply_patch {kind} {path}")
        is_error, text = describe_decision(decision, _DONE[kind].format(path=path), "apply_patch")
        if is_error:
            raise _Failed(text)
        return text


def _check_diff(kind: str, path: str, diff: str) -> None:
    """A diff is the body of one operation: no headers of its own, and a new file's lines after '+'."""
    for number, line in enumerate(diff.split("\n"), start=1):
        if _HEADER.match(line):
            raise ToolFailure(
                f"Error: line {number} of your diff is a patch header ({line[:60]!r}); a diff holds only "
                f"the lines of {path}'s change, and one operation changes only its own path. Send other "
                "files' changes as operations of their own. Nothing was written."
            )
        if kind == "create_file" and line and not line.startswith("+"):
            raise ToolFailure(
                f"Error: line {number} of your create_file diff ({line[:60]!r}) does not start with '+'; "
                f"in create_file every line of the new file is written after a '+' (e.g. '+{line[:20]}'). "
                "Nothing was written."
            )


class _Failed(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
