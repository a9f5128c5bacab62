"""What the header of a plan says, as data, so every renderer says the same thing.

A reviewer must see at a glance which files change, by how much, and which hunks
were *not* found verbatim: every non-exact tier is listed with the reason in
plain words (``Tier.explanation``), fuzzy matches with their score, and unified
diff hunks that landed away from the line they claimed with the distance. The
renderers only decide how to draw these facts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from nbedit.engine.models import FilePlan, Plan, Tier
from nbedit.render.rows import FileView, file_view, offset_note, tier_label

__all__ = ["FileSummary", "HunkFlag", "PlanSummary", "cached_view", "summarize"]


@dataclass(frozen=True, slots=True)
class HunkFlag:
    """A hunk the reviewer should look at twice: a non-exact tier or an offset."""

    index: int
    line: int
    cell: str | None
    label: str  # "fuzzy 0.93", "unicode-punctuation", "exact" (exact hunks flag only offsets)
    explanation: str
    exact: bool
    offset: str | None

    @property
    def where(self) -> str:
        place = f"line {self.line}"
        return f"{self.cell}, {place}" if self.cell else place

    def describe(self) -> str:
        details = [] if self.exact else [self.explanation]
        if self.offset:
            details.append(self.offset)
        return f"hunk {self.index + 1} ({self.where}): " + "; ".join(details)


@dataclass(frozen=True, slots=True)
class FileSummary:
    path: str
    new_path: str | None
    operation: str
    added: int
    removed: int
    hunk_count: int
    flags: tuple[HunkFlag, ...]
    already_applied: bool
    notebook: bool
    changed: bool
    notes: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{self.path} → {self.new_path}" if self.new_path and self.new_path != self.path else self.path

    @property
    def status(self) -> str:
        """One phrase for what happens to the file."""
        if self.already_applied:
            return "already applied, nothing to write"
        if self.operation == "add":
            return "new file"
        if self.operation == "delete":
            return "deleted"
        if self.new_path and self.new_path != self.path:
            return "renamed"
        if not self.changed:
            return "unchanged"
        return "modified"

    @property
    def non_exact(self) -> tuple[HunkFlag, ...]:
        return tuple(flag for flag in self.flags if not flag.exact)

    @property
    def tiers_note(self) -> str:
        """``all exact`` or ``2 exact, 1 not exact``; empty for a file without hunks."""
        if not self.hunk_count:
            return ""
        inexact = len(self.non_exact)
        if not inexact:
            return "exact" if self.hunk_count == 1 else "all exact"
        return f"{self.hunk_count - inexact} exact, {inexact} not exact"


@dataclass(frozen=True, slots=True)
class PlanSummary:
    dialect: str
    files: tuple[FileSummary, ...]

    @property
    def added(self) -> int:
        return sum(file.added for file in self.files)

    @property
    def removed(self) -> int:
        return sum(file.removed for file in self.files)

    @property
    def non_exact(self) -> int:
        return sum(len(file.non_exact) for file in self.files)

    @property
    def headline(self) -> str:
        count = len(self.files)
        files = "1 file" if count == 1 else f"{count} files"
        text = f"{_dialect_name(self.dialect)}: {files}, +{self.added} -{self.removed}"
        if self.files and all(file.already_applied for file in self.files):
            text += ", already applied"
        elif self.non_exact:
            hunks = "1 hunk" if self.non_exact == 1 else f"{self.non_exact} hunks"
            text += f", {hunks} not matched exactly (review them)"
        return text


_DIALECT_NAMES = {
    "edit": "edit",
    "unified": "unified diff",
    "git": "git diff",
    "apply_patch": "apply_patch",
    "search_replace": "SEARCH/REPLACE",
}


def _dialect_name(dialect: str) -> str:
    return _DIALECT_NAMES.get(dialect, dialect)


@functools.lru_cache(maxsize=64)
def cached_view(file_plan: FilePlan) -> FileView:
    """``file_view`` once per plan, although header and body both need it."""
    return file_view(file_plan)


def _flags(file_plan: FilePlan) -> tuple[HunkFlag, ...]:
    flags = []
    for index, located in enumerate(file_plan.hunks):
        match = located.match
        note = offset_note(match.offset)
        if match.tier is Tier.EXACT and note is None:
            continue
        flags.append(
            HunkFlag(
                index=index,
                line=match.line,
                cell=located.cell,
                label=tier_label(match.tier, match.score),
                explanation=match.tier.explanation
                + (f" (similarity {match.score:.2f})" if match.tier is Tier.FUZZY else ""),
                exact=match.tier is Tier.EXACT,
                offset=note,
            )
        )
    return tuple(flags)


def summarize_file(file_plan: FilePlan) -> FileSummary:
    view = cached_view(file_plan)
    return FileSummary(
        path=file_plan.path,
        new_path=file_plan.new_path,
        operation=file_plan.operation,
        added=view.added,
        removed=view.removed,
        hunk_count=len(file_plan.hunks),
        flags=_flags(file_plan),
        already_applied=file_plan.already_applied,
        notebook=file_plan.notebook,
        changed=file_plan.changed,
        notes=file_plan.notes,
    )


def summarize(plan: Plan) -> PlanSummary:
    return PlanSummary(dialect=plan.dialect, files=tuple(summarize_file(file) for file in plan.files))
