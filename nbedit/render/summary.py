"""What the header of a plan says, as data, so every renderer says the same thing.

A reviewer must see at a glance which files change, by how much, and which hunks
were *not* found verbatim: every non-exact tier is listed with the reason in
plain words (``Tier.explanation``), fuzzy matches with their score, and unified
diff hunks that landed away from the line they claimed with the distance. The
renderers only decide how to draw these facts: ``header_lines`` even gives
the header's words as (text, role) pieces, so the coloured terminal header and
the plain one a pipe gets cannot drift apart.

Added/removed counts normally come from the rendered rows (``file_view``);
``summarize(plan, from_diff=True)`` counts them in the plan's unified diff
instead, for output that shows that diff and must not pay for building rows.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.models import FilePlan, Plan

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal, TypeVar

    from nbedit.render.labels import HunkFlag
    from nbedit.render.rows import FileView

    T = TypeVar("T")

__all__ = [
    "FileSummary",
    "HunkFlag",  # noqa: F822 - given by __getattr__ (render.labels)
    "PlanSummary",
    "Role",
    "cached_view",
    "header_lines",
    "plain_diff",
    "summarize",
    "summarize_file",
]

# What a piece of the header is, for renderers to style: the headline, a path, the
# added/removed counts, secondary detail, an informational flag, a warning flag.
if TYPE_CHECKING:
    Role = Literal["headline", "path", "added", "removed", "detail", "note", "warning"]
else:
    # the aliases for a program that reads them at run time, made with typing then
    from nbedit._dataclass import literal_aliases

    _TYPE_ALIASES = {
        "Role": ("headline", "path", "added", "removed", "detail", "note", "warning"),
    }
    _aliases = literal_aliases(__name__, _TYPE_ALIASES)

    def __getattr__(name: str) -> object:
        # ``HunkFlag`` lives in render/labels.py: made for a plan that flags a hunk (start-up)
        if name == "HunkFlag":
            from nbedit.render.labels import HunkFlag

            return HunkFlag
        return _aliases(name)


@dataclass(frozen=True, slots=True)
class FileSummary:
    """What the header says about one file: counts, status, notes and the hunks to look at twice."""

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
    mode_change: str | None = None  # "mode 100644 -> 100755" when the change sets the permission bits

    @property
    def title(self) -> str:
        return f"{self.path} → {self.new_path}" if self.new_path and self.new_path != self.path else self.path

    @property
    def status(self) -> str:
        """One phrase for what happens to the file (and to its mode, when that changes)."""
        phrase = self._content_status
        if self.mode_change and not self.already_applied:
            return self.mode_change if phrase == "unchanged" else f"{phrase}, {self.mode_change}"
        return phrase

    @property
    def _content_status(self) -> str:
        if self.already_applied:
            return "already applied, nothing to write"
        if self.operation == "add":
            return "new file"
        if self.operation == "delete":
            return "deleted"
        if self.new_path and self.new_path != self.path:
            return "renamed"
        if not self.changed or (self.mode_change and not self.added and not self.removed):
            return "unchanged"
        return "modified"

    @property
    def non_exact(self) -> tuple[HunkFlag, ...]:
        return tuple(flag for flag in self.flags if not flag.exact)

    @property
    def tiers_note(self) -> str:
        """``all exact``, ``2 exact, 1 not exact`` or ``not exact``; empty for a file without hunks."""
        if not self.hunk_count:
            return ""
        inexact = len(self.non_exact)
        if not inexact:
            return "exact" if self.hunk_count == 1 else "all exact"
        if inexact == self.hunk_count:
            return "not exact" if inexact == 1 else f"{inexact} not exact"
        return f"{self.hunk_count - inexact} exact, {inexact} not exact"


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """What the header says about a whole plan, file by file."""

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


def _last_64(function: Callable[[FilePlan], T]) -> Callable[[FilePlan], T]:
    """``functools.lru_cache(maxsize=64)`` of ``function``, made by its first call: a command that
    draws no rows never imports ``functools`` (nor the ``collections`` it imports: start-up)."""
    made: list[Callable[[FilePlan], T]] = []

    def cached(file_plan: FilePlan) -> T:
        if not made:
            import functools

            made.append(functools.lru_cache(maxsize=64)(function))
        return made[0](file_plan)

    def cache_clear() -> None:
        if made:
            made[0].cache_clear()  # type: ignore[attr-defined]

    cached.__name__, cached.__qualname__ = function.__name__, function.__qualname__
    cached.__doc__ = function.__doc__
    cached.__wrapped__ = function  # type: ignore[attr-defined]
    cached.cache_clear = cache_clear  # type: ignore[attr-defined]  # as lru_cache's
    return cached


def _dialect_name(dialect: str) -> str:
    return _DIALECT_NAMES.get(dialect, dialect)


@_last_64
def cached_view(file_plan: FilePlan) -> FileView:
    """``file_view`` once per plan, although header and body both need it."""
    from nbedit.render.rows import file_view  # the row builder loads only when rows are drawn

    return file_view(file_plan)


def _counts(file_plan: FilePlan) -> tuple[int, int]:
    """The (added, removed) lines of the file's rows. A notebook's review is drawn cell by cell,
    not from its line view: its counts are taken without building that view's rows."""
    if file_plan.notebook and file_plan.display_before is not None and file_plan.display_after is not None:
        return _cached_counts(file_plan)
    view = cached_view(file_plan)
    return view.added, view.removed


@_last_64
def _cached_counts(file_plan: FilePlan) -> tuple[int, int]:
    from nbedit.render.rows import view_counts

    return view_counts(file_plan)


def _flags(file_plan: FilePlan) -> tuple[HunkFlag, ...]:
    flags = []
    for index, located in enumerate(file_plan.hunks):
        match = located.match
        if match.exact and not match.offset:  # (offset_note gives None for no offset)
            continue
        # a flagged hunk: the enum and the labels are not loaded for exact ones in place (start-up)
        from nbedit.engine.tier import Tier
        from nbedit.render.labels import HunkFlag, offset_note, tier_label

        note = offset_note(match.offset)
        line, place = match.line, None
        if file_plan.notebook and located.cell:
            from nbedit.engine.explain import cell_place, hunk_place

            within = cell_place(file_plan, located)  # the line within the cell, as the cell's box numbers it
            if isinstance(within, tuple):
                line = within[0]
            elif within is not None:  # across cells (a change of the structure): both ends, in words
                place = hunk_place(located, within)
        flags.append(
            HunkFlag(
                index=index,
                line=line,
                cell=located.cell,
                label=tier_label(match.tier, match.score),
                explanation=match.tier.explanation
                + (f" (similarity {match.score:.2f})" if match.tier is Tier.FUZZY else ""),
                exact=match.tier is Tier.EXACT,
                offset=note,
                place=place,
            )
        )
    return tuple(flags)


def summarize_file(file_plan: FilePlan, counts: tuple[int, int] | None = None) -> FileSummary:
    """The file's facts; ``counts`` (added, removed) instead of counting the rendered rows."""
    if counts is None:
        counts = _counts(file_plan)
    return FileSummary(
        path=file_plan.path,
        new_path=file_plan.new_path,
        operation=file_plan.operation,
        added=counts[0],
        removed=counts[1],
        hunk_count=len(file_plan.hunks),
        flags=_flags(file_plan),
        already_applied=file_plan.already_applied,
        notebook=file_plan.notebook,
        changed=file_plan.changed,
        notes=file_plan.notes,
        mode_change=_mode_change(file_plan),
    )


def _mode_change(file_plan: FilePlan) -> str | None:
    if file_plan.operation == "delete" or file_plan.mode is None:
        return None
    if file_plan.before_mode is None or file_plan.mode == file_plan.before_mode:
        return None
    return f"mode {0o100000 | file_plan.before_mode:o} -> {0o100000 | file_plan.mode:o}"


def summarize(plan: Plan, *, from_diff: bool = False) -> PlanSummary:
    """The plan's facts; ``from_diff`` counts lines in ``plan.diff`` rather than in rendered rows."""
    if from_diff:
        stats = plan.stats()
        files = tuple(summarize_file(file, stats[file.target_path]) for file in plan.files)
    else:
        files = tuple(summarize_file(file) for file in plan.files)
    return PlanSummary(dialect=plan.dialect, files=files)


if TYPE_CHECKING:
    Piece = tuple[str, Role]


def header_lines(summary: PlanSummary) -> list[list[Piece]]:
    """The header as lines of (text, role): headline, each file when there are several, flagged hunks."""
    lines: list[list[Piece]] = [[(summary.headline, "headline")]]
    if len(summary.files) > 1:
        for file in summary.files:
            hunks = "1 hunk" if file.hunk_count == 1 else f"{file.hunk_count} hunks"
            detail = f"{file.status}, {hunks} ({file.tiers_note})" if file.hunk_count else file.status
            lines.append(
                [
                    (f"  {file.title}", "path"),
                    (f"  +{file.added}", "added"),
                    (f" -{file.removed}", "removed"),
                    (f"  {detail}", "detail"),
                ]
            )
    if len(summary.files) == 1 and summary.files[0].mode_change and not summary.files[0].already_applied:
        lines.append([(f"  {summary.files[0].title}: {summary.files[0].mode_change}", "detail")])
    for file in summary.files:
        for flag in file.flags:
            mark = "ℹ" if flag.exact else "⚠"
            text = f"  {mark} {file.path}: {flag.describe_with_label()}"
            lines.append([(text, "note" if flag.exact else "warning")])
    return lines


def plain_diff(plan: Plan) -> str:
    """Header lines, file notes, a blank line, then the unified diff (ends with a newline): what
    ``nbedit apply`` prints when stdout is not a terminal (``render.text.plan_to_plain_diff``, which
    says why). Here, beside the header it is made of, so that a command loads one module for both."""
    diff = plan.diff  # first: the counts below (and the history entry's) then come from its text
    summary = summarize(plan, from_diff=True)
    lines = ["".join(text for text, _ in pieces) for pieces in header_lines(summary)]
    lines.extend(f"  note: {file.path}: {note}" for file in summary.files for note in file.notes)
    header = "\n".join(lines) + "\n"
    return header + "\n" + diff if diff else header
