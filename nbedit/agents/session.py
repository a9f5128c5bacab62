"""What every adapter shares: the view record, the origin, and texts written for a model.

A model reads results, not tracebacks, so each outcome becomes a short text
that says what happened and what to do next: which matcher tier placed a
drifted edit, which hunks a reviewer applied, why a change was refused.
nbedit's errors already carry the specifics (closest candidates with line
numbers, every location of an ambiguity); this module adds the verdict and
the next step.

``require_view`` copies Claude Code's rule: the model may edit only a file it
has viewed in this tool's session, and only while the file on disk is still
what it viewed (or what its own last edit left). The record is the SHA-256
fingerprint of the bytes, so a person's edit in between is always noticed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nbedit.agents.approval import Approval, Decision, check_approval, decide
from nbedit.agents.decision import ReviewUnavailable
from nbedit.agents.messages import Surface, for_model
from nbedit.engine.text import fingerprint
from nbedit.errors import NbeditError
from nbedit.storage.records import AGENT_ORIGIN_PREFIX

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = [
    "ToolFailure",
    "ToolSession",
    "check_path",
    "describe_decision",
    "error_text",
    "field",
    "run_async",
]

Result = TypeVar("Result")


class ToolFailure(Exception):
    """A tool call the adapter refuses before planning (bad arguments, not viewed, stale)."""


def field(source: Any, name: str, default: Any = None) -> Any:
    """``source[name]`` for a dict, ``source.name`` for an SDK object."""
    if isinstance(source, dict):
        return source.get(name, default)
    return getattr(source, name, default)


def error_text(error: BaseException, surface: Surface = "functions", *, line_offset: int = 0) -> str:
    """A refusal as the model should read it, in ``surface``'s terms (``nbedit.agents.messages``).

    ``ReviewUnavailable`` is the program's mistake, not the model's: it is raised, never returned.
    """
    if isinstance(error, ReviewUnavailable):
        raise error
    if isinstance(error, ToolFailure):
        return str(error)
    if isinstance(error, NbeditError):
        return f"{for_model(error, surface, line_offset=line_offset)}\nNothing was written."
    return f"{type(error).__name__}: {error}\nNothing was written (this is a bug in nbedit; report it)."


def check_path(path: object, name: str = "path") -> str:
    """``path`` as a string, refused at the tool's boundary if it cannot name one file.

    A newline, NUL or other control character in a path never reaches a parser: in
    a patch envelope a newline would start a new operation (``*** Delete File: ...``)
    that the model never asked for, under a name the answer would not mention.
    """
    if not isinstance(path, str) or not path.strip():
        raise ToolFailure(f"Error: {name} must be a file path in the workspace (a non-empty string).")
    for position, character in enumerate(path):
        if ord(character) < 32 or 127 <= ord(character) < 160:
            raise ToolFailure(
                f"Error: {name} {path!r} contains a control character ({character!r} at position "
                f"{position + 1}); a path is one line of printable text. Nothing was written."
            )
    return path


_AS_SENT = {
    "text_editor": "exactly as your old_str -> new_str says",
    "apply_patch": "exactly as your diff's - and + lines say",
    "functions": "exactly as your old -> new text says",
}


def _tier_notes(plan: Plan, surface: Surface) -> list[str]:
    notes = []
    for file_plan in plan.files:
        for number, located in enumerate(file_plan.hunks, start=1):
            if located.match.exact:
                continue
            score = f" (similarity {located.score:.2f})" if located.score < 1.0 else ""
            hunk = f" hunk {number}" if len(file_plan.hunks) > 1 else ""
            where = f"{located.cell}, line {located.line}" if located.cell else f"line {located.line}"
            notes.append(
                f"note: {file_plan.target_path}{hunk} was not an exact match: {located.tier.explanation}"
                f"{score} at {where}; the change was made {_AS_SENT[surface]}"
            )
    return notes


def describe_decision(decision: Decision, done: str, surface: Surface = "functions") -> tuple[bool, str]:
    """(is_error, text) for a decision; ``done`` is the success sentence ("Edited app.py.")."""
    plan = decision.plan
    if decision.outcome == "dry-run":
        return False, f"Dry run: nothing was written. {done} would make this change:\n{plan.diff}"
    if decision.outcome == "rejected":
        why = f" Their reason: {decision.reason}" if decision.reason else ""
        return True, (
            f"The user rejected this change; nothing was written.{why}\n"
            "Do not retry the same change: ask the user what they want, or propose something different."
        )
    result = decision.result
    if result is not None and result.already_applied:
        return False, (
            f"No change: the new text is already in {', '.join(plan.paths)} and the old text is not, so "
            "nothing was written. If you meant another place, view the file and retry with its text."
        )
    lines = [done]
    if decision.partial:
        lines = [
            f"The user applied only part of this change: applied {', '.join(decision.applied_hunks) or 'nothing'}; "
            f"left out (not written) {', '.join(decision.left_out)}.",
            "View the file again before editing it further.",
        ]
    lines.extend(_tier_notes(plan, surface))
    return False, "\n".join(lines)


class ToolSession:
    """The state one adapter keeps: its workspace, approval mode, and what the model viewed."""

    def __init__(
        self,
        workspace: Workspace,
        tool: str,
        approval: Approval = "auto",
        require_view: bool = False,
        *,
        surface: Surface = "functions",
    ) -> None:
        self.workspace = workspace
        self.tool = tool
        self.surface: Surface = surface
        self.approval = check_approval(approval)
        self.require_view = require_view
        self.review_timeout: float | None = None
        self._viewed: dict[str, str | None] = {}  # normalised path -> fingerprint seen (None: absent)
        # normalised path -> {line number: full hash of the text shown there with anchors}
        self.anchored_lines: dict[str, dict[int, bytes]] = {}
        self.current_turn: str | None = None  # the turn the next calls' entries are recorded under
        self.turns: list[str] = []  # every turn this session began, oldest first
        self.written: list[str] = []  # the history entries this session's calls recorded

    def origin(self, call_id: str | None) -> str:
        return f"{AGENT_ORIGIN_PREFIX}{self.tool}:{call_id or 'call'}"

    # ------------------------------------------------------------------ turns and rewind

    def begin_turn(self, turn_id: str | None = None) -> str:
        """Start a turn (one model response): the calls until the next turn are one checkpoint.

        A call made outside any turn is a checkpoint of its own (by its call id).
        """
        import uuid

        self.current_turn = turn_id or f"{self.tool}-{uuid.uuid4().hex[:12]}"
        self.turns.append(self.current_turn)
        return self.current_turn

    def end_turn(self) -> None:
        self.current_turn = None

    @contextlib.contextmanager
    def turn(self, turn_id: str | None = None) -> Iterator[str]:
        """``with session.turn(): ...`` runs one model response's tool calls as one turn."""
        turn = self.begin_turn(turn_id)
        try:
            yield turn
        finally:
            self.end_turn()

    def owns(self, entry: Any) -> bool:
        """Whether a history entry was recorded by this session's own calls (or its turns)."""
        return entry.id in self.written or (entry.turn is not None and entry.turn in self.turns)

    def plan_rewind(self, to: str | None = None) -> Any:
        """The rewind of this session's own turns since ``to`` (default: its latest turn, or its
        latest call outside a turn); every edit it did not make is kept where it does not
        overlap. Returns a ``nbedit.rewind.RewindPlan`` (nothing written)."""
        from nbedit.rewind import plan_rewind

        target = to if to is not None else self._latest_checkpoint()
        return plan_rewind(self.workspace, target, own=self.owns)

    def rewind(self, to: str | None = None, *, resolve: Any = None) -> Any:
        """Take back this session's own turns since ``to`` (default: its latest one), through the
        session's approval like any change; ``resolve`` as in ``Workspace.rewind``.
        Returns the ``Decision``."""
        planned = self.plan_rewind(to)
        plan = planned.selected(resolve)
        decision = decide(
            self.approval, self.workspace, plan, origin="rewind", title="rewind", timeout=self.review_timeout
        )
        self.record_written(decision)
        return decision

    def _latest_checkpoint(self) -> str:
        from nbedit.checkpoints import group
        from nbedit.errors import NothingToUndo

        entries = [
            entry for entry in self.workspace.history() if entry.status == "applied" and self.owns(entry)
        ]
        if not entries:
            raise NothingToUndo("nothing to rewind: this tool session has recorded no edits")
        return group(entries)[-1].key

    # ------------------------------------------------------------------ paths and reads

    def normalise(self, path: str) -> str:
        return self.workspace._source.normalise(check_path(path))

    def read(self, normalised: str) -> bytes | None:
        return self.workspace._source.read(normalised)

    def directory(self, path: str) -> Path | None:
        """The absolute folder ``path`` names inside the root, or None if it is not a folder."""
        source = self.workspace._source
        raw = check_path(path).strip() or "."
        full = Path(raw) if Path(raw).is_absolute() else Path(source.root) / raw
        try:
            resolved = Path(full).resolve()
        except (RuntimeError, ValueError):  # a link loop, or a name no file has (normalise says why)
            return None
        try:
            resolved.relative_to(source.real_root)
        except ValueError:
            return None
        return resolved if resolved.is_dir() else None

    # ------------------------------------------------------------------ the view rule

    def saw(self, normalised: str, data: bytes | None) -> None:
        self._viewed[normalised] = fingerprint(data) if data is not None else None

    def check_viewed(self, path: str, normalised: str) -> None:
        """Refuse an edit of a file not viewed in this session, or changed since (``require_view``)."""
        if not self.require_view:
            return
        current = self.read(normalised)
        if normalised not in self._viewed:
            if current is None:
                return  # a new file: nothing to have viewed
            raise ToolFailure(
                f"Error: {path} has not been viewed in this session; view the file first, then retry "
                "with old text copied from what you saw. Nothing was written."
            )
        seen = self._viewed[normalised]
        now = fingerprint(current) if current is not None else None
        if seen != now:
            raise ToolFailure(
                f"Error: {path} changed on disk since you last viewed it (someone else edited it); "
                "view the file again and base your edit on what it holds now. Nothing was written."
            )

    def record_written(self, decision: Decision) -> None:
        """After the model's own change, what it wrote counts as seen (it may edit again).

        Not after a partial approval: the file is then neither what the model saw nor
        what it asked for, so its next edit must start from a fresh view.
        """
        if decision.outcome != "applied" or decision.partial:
            return
        for file_plan in decision.plan.files:
            for path in dict.fromkeys((file_plan.path, file_plan.target_path)):
                self.saw(path, self.read(path))

    # ------------------------------------------------------------------ deciding

    def decide(self, plan: Plan, call_id: str | None, title: str, **apply_options: Any) -> Decision:
        if self.current_turn is not None:
            apply_options.setdefault("turn", self.current_turn)
        decision = decide(
            self.approval,
            self.workspace,
            plan,
            origin=self.origin(call_id),
            title=title,
            timeout=self.review_timeout,
            **apply_options,
        )
        self.record_written(decision)
        if decision.result is not None and decision.result.entry_id:
            self.written.append(decision.result.entry_id)
        return decision


async def run_async(
    session: ToolSession, function: Callable[..., Result], *arguments: Any, **options: Any
) -> Result:
    """Run a tool call from an async cell so a review can wait without blocking the kernel.

    The call runs in a worker thread while the cell awaits; ipykernel 7 handles the
    widget's click meanwhile. A kernel that polls (jupyter-ui-poll) runs it in place.
    """
    if session.approval == "review":
        from nbedit.agents.review_gate import kernel_has_subshells, kernel_polls

        if kernel_polls() and not kernel_has_subshells():
            return function(*arguments, **options)
    return await asyncio.to_thread(function, *arguments, **options)
