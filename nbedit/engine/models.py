"""The values that flow through the engine: parse -> match -> plan.

Everything here is a small frozen value. Parsers turn change text into a
``Change`` (a tuple of ``FileChange``); the matcher turns each ``Hunk`` into a
``Match``; the planner bundles per-file before/after text and located hunks into
a ``Plan``. No I/O happens here, so a plan can be shown, tested and thrown away
without touching disk.

Text conventions: hunk ``old``/``new`` are ``str`` whose lines are separated by
``"\\n"``; a ``"\\r"`` before the ``"\\n"`` is kept when the change text carried it
(a git diff of a CRLF file). File text (``FilePlan.before``/``after``) is the
decoded file exactly, line endings included, so encoding it again gives the
original bytes.

The conveniences (``plan.diff``, ``plan.explain()``, ``plan.without_hunks()``, a plan
drawing itself in a notebook) are computed by ``engine/diff.py``, ``engine/explain.py``,
``engine/plan.py`` and ``render/html.py``, which import this module: the values reach them
through ``nbedit._conveniences``, filled by the package's root, and never import them.
"""

from __future__ import annotations

import sys
from _operator import attrgetter  # operator.attrgetter, without operator.py (start-up)

from nbedit import _conveniences as conveniences
from nbedit._dataclass import dataclass, field

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, Literal

    from nbedit.engine.tier import Tier as Tier

if TYPE_CHECKING:
    Operation = Literal["update", "add", "delete"]
else:
    # the aliases for a program that reads them at run time, made with typing then
    from nbedit._dataclass import literal_aliases

    _TYPE_ALIASES = {
        "Operation": ("update", "add", "delete"),
    }
    _aliases = literal_aliases(__name__, _TYPE_ALIASES)

    def __getattr__(name: str) -> Any:
        # ``Tier`` lives in engine/tier.py, imported on first use (enum costs milliseconds of a start)
        if name == "Tier":
            from nbedit.engine.tier import Tier

            return Tier
        return _aliases(name)


class _TierWhenRead:
    """A ``Match.tier`` not made yet: the value of the ``Tier`` it stands for (``"exact"``).

    ``Tier`` is an enum, and :mod:`enum` costs milliseconds of a start (``engine/tier.py``). The
    planner's exact paths mark their matches with ``EXACT_WHEN_READ``; ``Match.tier`` gives
    ``Tier.EXACT`` for it, made the first time any match's tier is read (a preview, equality,
    ``repr``, ``replace``, pickling: every reader sees the enum). What reads only whether a match is
    exact, or its tier's name (``Match.exact``, ``tier_value``), does not make it.
    """

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"<Tier.EXACT: {self.value!r} (when read)>"


EXACT_WHEN_READ: Tier = _TierWhenRead("exact")  # type: ignore[assignment]


def _made_tier(value: object) -> object:
    # the Tier a stand-in means (the enum is imported then); any other value as it is
    if value.__class__ is _TierWhenRead:
        from nbedit.engine.tier import Tier

        return Tier(value.value)
    return value


_MATCH = attrgetter("match")


def _loaded_exact() -> object:
    # Tier.EXACT when the enum has been made, else a value no match holds
    module = sys.modules.get("nbedit.engine.tier")
    return module.Tier.EXACT if module is not None else EXACT_WHEN_READ


NOTEBOOK_SUFFIX = ".ipynb"
# the fuzzy tier's least similarity, by default (``match.options.MatchOptions``, ``PlanOptions``); here so
# that the planner's options need not load the matcher's package to name it
DEFAULT_THRESHOLD = 0.9


def is_notebook_path(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook (``.ipynb`` in any case: ``Report.IPYNB`` is one)."""
    return path[-len(NOTEBOOK_SUFFIX) :].lower() == NOTEBOOK_SUFFIX


@dataclass(frozen=True, slots=True)
class CellSelector:
    """Limits an edit to one notebook cell, by id or by 0-based index."""

    id: str | None = None
    index: int | None = None

    def __str__(self) -> str:
        return f"cell id {self.id}" if self.id is not None else f"cell {self.index}"


@dataclass(frozen=True, slots=True)
class Hunk:
    """One change inside one file, before it is located.

    ``whole_lines``: old/new are complete lines (diffs, apply_patch, SEARCH/REPLACE);
    the match must start and end on line boundaries. False for a plain old/new
    pair, which may start and end mid-line.
    ``start_line``: 1-based line the change text claims (unified diffs); the
    nearest match wins and the offset is reported. None: uniqueness decides.
    ``anchors``: apply_patch ``@@ scope`` lines, outermost first; the hunk is
    searched after them. ``at_end``: the hunk must match at the end of the file.
    ``search_from_previous``: apply_patch semantics, the hunk lies after the
    previous hunk of the same file.
    """

    old: str
    new: str
    whole_lines: bool = True
    start_line: int | None = None
    anchors: tuple[str, ...] = ()
    at_end: bool = False
    replace_all: bool = False
    search_from_previous: bool = False
    source_line: int | None = None  # where the hunk starts in the change text
    # other (old, new) readings of the same block: a SEARCH/REPLACE block with more than
    # one '=======' line; the reading whose old text is in the file is the one meant
    alternatives: tuple[tuple[str, str], ...] = ()
    # (added, removed): the lines a unified diff of old -> new marks '+' and '-', when the parser
    # that made old and new knows them for certain (its changed lines are one run between the
    # context lines, and no removed line equals an added one); None: not known, count them.
    # A fact about old and new: a copy that changes either must leave it None.
    changed_lines: tuple[int, int] | None = field(default=None, compare=False, repr=False)


def context_free(hunk: Hunk) -> bool:
    """A diff hunk with a line number and no context lines (``git diff -U0``, or a model's bare hunk).

    Its old text is only the lines it removes (none for a pure insertion), so nothing but
    those lines and the line number says where it goes. The number is the diff's base's:
    in any other file it is evidence only where the removed lines confirm it (issue 21,
    rule 5; see ``match.evidence.removed_lines_unique`` and the planner's use of git's ``index``
    line). Here, with the hunk, because the planner asks it of every hunk of a git diff before it
    locates any (``match.context`` and ``match.evidence`` give it too): a diff whose hunks all
    stand where they say never loads the matcher's package (start-up, tests/test_startup.py).
    """
    if hunk.start_line is None or hunk.anchors or hunk.replace_all:
        return False
    if not hunk.old or not hunk.new:
        return True
    if hunk.old.partition("\n")[0] == hunk.new.partition("\n")[0]:
        return False  # leading context (the common case, decided without splitting the texts)
    old_lines, new_lines = hunk.old.removesuffix("\n").split("\n"), hunk.new.removesuffix("\n").split("\n")
    # context lines are shared at an edge (a blank one too)
    return old_lines[0] != new_lines[0] and old_lines[-1] != new_lines[-1]


@dataclass(frozen=True, slots=True)
class FileChange:
    """What a change does to one path.

    ``content`` is the whole new text for an ``add``. ``new_path`` renames (moves)
    the file, with or without hunks. ``new_mode`` is a git file mode (0o755) when
    the change sets one. ``sequential`` hunks are located one after another,
    each against the text the previous ones left (SEARCH/REPLACE replies, as
    Aider applies them); other hunks are all located against the original.
    """

    path: str
    operation: Operation = "update"
    hunks: tuple[Hunk, ...] = ()
    content: str | None = None
    new_path: str | None = None
    new_mode: int | None = None
    cell: CellSelector | None = None
    source_line: int | None = None
    sequential: bool = False  # each hunk applies to the result of the previous ones (SEARCH/REPLACE)
    # git's ``index <pre>..<post>`` line: the (abbreviated) blob hash of the file the diff was made
    # against. It tells whether this file is the diff's base, which is what makes a context-free
    # (``-U0``) hunk's line number evidence of its place (issue 21, rule 5). None: not given.
    base_blob: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A parsed change: one or more files, and the dialect it came from."""

    files: tuple[FileChange, ...]
    dialect: str


@dataclass(frozen=True, slots=True)
class Match:
    """Where a hunk landed: ``text[start:end]`` becomes ``replacement``."""

    start: int  # character offsets into the file text
    end: int
    replacement: str
    tier: Tier
    score: float  # 1.0 for all but the fuzzy tier
    line: int  # 1-based first line of the matched span
    line_count: int  # lines in the matched span
    offset: int | None = None  # lines away from the hunk's claimed start_line
    # how the matcher decided, as (label, text) rows: the tiers tried, the score and the
    # runner-up, the offset, the lines expected vs in the file (empty for a plain exact match)
    explanation: tuple[tuple[str, str], ...] = ()

    @property
    def exact(self) -> bool:
        tier = _TIER_SLOT.__get__(self, Match)
        return tier is EXACT_WHEN_READ or tier is _loaded_exact()


_TIER_SLOT = Match.__dict__["tier"]
# ``match.tier`` as held, in C: a ``Tier``, or ``EXACT_WHEN_READ`` (what a loop over many matches reads)
held_tier: Callable[[Match], object] = _TIER_SLOT.__get__


def exact_tiers() -> tuple[object, object]:
    """What an exact match's tier is held as (``held_tier``): ``EXACT_WHEN_READ``, and ``Tier.EXACT``
    once the enum is made (until then a second ``EXACT_WHEN_READ``)."""
    return EXACT_WHEN_READ, _loaded_exact()


def tier_value(match: Match) -> str:
    """``match.tier.value`` (``"exact"``, ``"fuzzy"`` ...) without making the ``Tier`` (see
    ``EXACT_WHEN_READ``)."""
    value: str = _TIER_SLOT.__get__(match, Match).value
    return value


def tier_values(located: Iterable[LocatedHunk]) -> list[str]:
    """The distinct ``tier.value`` of located hunks, in order, without making the ``Tier``: each
    hunk's tier is read in C (from its match's slot), the value only of the few distinct ones."""
    held = dict.fromkeys(map(_TIER_SLOT.__get__, map(_MATCH, located)))
    return list(dict.fromkeys([tier.value for tier in held]))


@dataclass(frozen=True, slots=True)
class LocatedHunk:
    """A hunk and the place the matcher found for it (``cell``: the notebook cell it lies in)."""

    hunk: Hunk
    match: Match
    cell: str | None = None  # notebook cell label, filled by the notebook planner

    @property
    def tier(self) -> Tier:
        return self.match.tier

    @property
    def score(self) -> float:
        return self.match.score

    @property
    def line(self) -> int:
        return self.match.line


@dataclass(frozen=True, slots=True)
class FilePlan:
    """Everything needed to review and write one file.

    ``before``/``after`` are full texts (None when the file does not exist on that
    side). ``before_bytes``/``after_bytes`` are what is on disk now and what will
    be written; ``fingerprint`` is the SHA-256 of ``before_bytes`` (None: the file
    must not exist) and is re-checked at apply time. ``target_fingerprint`` is the same
    for the file at ``new_path`` (a rename's target) when the plan was made: None, no
    file was there and none may be there when it is written (a move never lands on a
    file the preview did not show it replacing).
    ``already_applied``: every hunk's new text is present and its old text gone.
    """

    path: str
    operation: Operation
    before: str | None
    after: str | None
    before_bytes: bytes | None
    after_bytes: bytes | None
    fingerprint: str | None
    hunks: tuple[LocatedHunk, ...] = ()
    new_path: str | None = None
    mode: int | None = None  # permission bits to give the written file
    before_mode: int | None = None  # permission bits the file has now
    already_applied: bool = False
    notebook: bool = False
    display_before: str | None = None  # what previews diff (the cell view for notebooks)
    display_after: str | None = None
    notes: tuple[str, ...] = ()
    encoding: str | None = None  # the codec the text was decoded with when not plain UTF-8 ("cp1252")
    target_fingerprint: str | None = None  # what was at new_path when planned (None: no file)

    @property
    def target_path(self) -> str:
        return self.new_path or self.path

    @property
    def changed(self) -> bool:
        mode_changed = (
            self.mode is not None and self.before_mode is not None and self.mode != self.before_mode
        )
        after = _AFTER_BYTES_SLOT.__get__(self, FilePlan)  # unjoined new bytes differ (the planner saw to it)
        differs = after.__class__ is _BytesWhenRead or self.before_bytes != after
        return differs or self.new_path is not None or mode_changed

    @property
    def exact(self) -> bool:
        return all(h.match.exact for h in self.hunks)

    def tiers(self) -> tuple[str, ...]:
        """How the hunks matched, each tier once ("exact", "fuzzy 0.93", ...)."""
        values = [tier_value(h.match) for h in self.hunks]  # without making the Tier (EXACT_WHEN_READ)
        names = (
            f"{value} {h.score:.2f}" if value == "fuzzy" else value
            for value, h in zip(values, self.hunks, strict=True)
        )
        return tuple(dict.fromkeys(names))

    def summary(self) -> str:
        """``update app.py +2 -1 (2 hunks: exact)``: what a repr shows instead of the whole text."""
        added, removed = conveniences.diff_stats(conveniences.file_diff(self))
        name = (
            f"{self.path} -> {self.new_path}" if self.new_path and self.new_path != self.path else self.path
        )
        count = len(self.hunks)
        hunks = f" ({count} hunk{'s' if count != 1 else ''}: {', '.join(self.tiers())})" if count else ""
        return f"{self.operation} {name} +{added} -{removed}{hunks}"

    def __repr__(self) -> str:
        return f"<FilePlan {self.summary()}>"


class _TextWhenRead:
    """A ``FilePlan.after`` (or ``before``) not decoded yet: the UTF-8 bytes it is decoded from."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _BytesWhenRead:
    """A ``FilePlan.after_bytes`` not joined yet: an ``engine.spliced.Spliced`` (``join()`` joins it)."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: Any) -> None:
        self.pieces = pieces


class _DigestWhenRead:
    """A ``FilePlan.fingerprint`` still being hashed on another thread: the call that joins it."""

    __slots__ = ("join",)

    def __init__(self, join: Callable[[], str]) -> None:
        self.join = join


def decoded_when_read(data: bytes) -> str:
    """``data.decode()`` for ``FilePlan(after=...)``, done the first time the field is read.

    A patch of a big file is planned, written and recorded from the new bytes alone;
    decoding them into a text nobody reads costs a fresh allocation the size of the
    file. The field holds the bytes until it is first read, then the text: every
    reader (``plan.after``, equality, hashing, ``repr``, ``replace``, pickling) sees
    the decoded text. ``data`` must be UTF-8 (the planner's byte splice makes it so).
    """
    return _TextWhenRead(data)  # type: ignore[return-value]


def joined_when_read(pieces: Any) -> bytes:
    """``pieces.join()`` for ``FilePlan(after_bytes=...)``, done the first time the field is read.

    A 100,000-hunk patch of an 80 MB file is written and recorded from its pieces
    (``engine.spliced.Spliced``: the old bytes and the spans that replace parts of them),
    without ever holding the joined new bytes next to the old ones; ``unjoined_after``
    hands those readers the pieces. Any other reader of the field (a preview, ``repr``,
    equality, ``replace``, pickling) sees the joined bytes, joined once and kept.
    """
    return _BytesWhenRead(pieces)  # type: ignore[return-value]


def unjoined_after(file_plan: FilePlan) -> Any:
    """``file_plan.after_bytes`` as it is held: its pieces (``Spliced``) while not joined yet,
    else the bytes (or None); for the readers that take either (the writer, the history)."""
    value = _AFTER_BYTES_SLOT.__get__(file_plan, FilePlan)
    return value.pieces if value.__class__ is _BytesWhenRead else value


def unjoined_before(file_plan: FilePlan) -> Any:
    """``file_plan.before_bytes`` as it is held: a big file's stand-in while it is not read
    (``storage.streamed_file``: its size, its SHA-256, and its bytes read again in chunks when
    needed), else the bytes (or None); for the readers that take either (the writer, the history)."""
    value = _BEFORE_BYTES_SLOT.__get__(file_plan, FilePlan)
    return value.pieces if value.__class__ is _BytesWhenRead else value


def digested_when_read(join: Callable[[], str]) -> str:
    """``join()`` for ``FilePlan(fingerprint=...)``, called the first time the field is read.

    The SHA-256 of a big file's bytes is hashed on another thread while its hunks are
    located (``engine.digest.fingerprint_meanwhile``); the plan is handed back without
    waiting for it, and the hash goes on while ``apply`` locks, checks and starts writing
    (on a 4 MB file, about 10 ms of hashing on a core that is otherwise idle). Whoever
    reads the field first (the history entry, a stale check, equality, ``repr``,
    pickling) waits for the digest and sees a plain string from then on.
    """
    return _DigestWhenRead(join)  # type: ignore[return-value]


class _DecodedOnRead:
    """A slot of ``FilePlan`` whose value may be computed late: decoding a ``_TextWhenRead``
    (``after``, ``before``), joining a ``_DigestWhenRead`` (``fingerprint``) or a ``_BytesWhenRead``
    (``after_bytes``) the first time it is read; ``Match.tier``'s, making the ``Tier`` a
    ``_TierWhenRead`` stands for. The value read is kept in the slot (the frozen value keeps what it
    always meant)."""

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = self.slot.__get__(instance, owner)
        kind = value.__class__
        if kind is _TextWhenRead:
            value = value.data.decode()
            self.slot.__set__(instance, value)  # the frozen value keeps what it always meant
        elif kind is _DigestWhenRead:
            value = value.join()
            self.slot.__set__(instance, value)
        elif kind is _BytesWhenRead:
            value = value.pieces.join()
            self.slot.__set__(instance, value)
        elif kind is _TierWhenRead:
            value = _made_tier(value)
            self.slot.__set__(instance, value)
        return value

    def __set__(self, instance: object, value: object) -> None:
        self.slot.__set__(instance, value)

    def __delete__(self, instance: object) -> None:
        self.slot.__delete__(instance)


type.__setattr__(Match, "tier", _DecodedOnRead(_TIER_SLOT))  # (a Tier made when read: EXACT_WHEN_READ)
type.__setattr__(FilePlan, "after", _DecodedOnRead(FilePlan.__dict__["after"]))
type.__setattr__(FilePlan, "fingerprint", _DecodedOnRead(FilePlan.__dict__["fingerprint"]))
type.__setattr__(FilePlan, "before", _DecodedOnRead(FilePlan.__dict__["before"]))
type.__setattr__(FilePlan, "after_bytes", _DecodedOnRead(FilePlan.__dict__["after_bytes"]))
type.__setattr__(FilePlan, "before_bytes", _DecodedOnRead(FilePlan.__dict__["before_bytes"]))


def undecoded_before(file_plan: FilePlan) -> bytes | None:
    """The UTF-8 bytes ``file_plan.before`` will be decoded from, while it is not decoded yet
    (None once it is, or when it never was lazy): what reads the text of an ASCII file can
    read these bytes instead, at the same offsets, without making the text."""
    value = _BEFORE_SLOT.__get__(file_plan, FilePlan)
    # a big file not held (``storage.streamed_file``) has no bytes to read at offsets
    return value.data if value.__class__ is _TextWhenRead and isinstance(value.data, bytes) else None


def undecoded_after(file_plan: FilePlan) -> bytes | None:
    """``undecoded_before``'s twin for ``file_plan.after``."""
    value = _AFTER_SLOT.__get__(file_plan, FilePlan)
    return value.data if value.__class__ is _TextWhenRead else None


_BEFORE_SLOT = FilePlan.__dict__["before"].slot
_AFTER_BYTES_SLOT = FilePlan.__dict__["after_bytes"].slot
_BEFORE_BYTES_SLOT = FilePlan.__dict__["before_bytes"].slot
_AFTER_SLOT = FilePlan.__dict__["after"].slot


@dataclass(frozen=True, slots=True)
class Plan:
    """A reviewed-before-written change to one or more files."""

    files: tuple[FilePlan, ...]
    dialect: str = "edit"
    root: str = "."
    _diff_cache: list[tuple[str, ...]] = field(default_factory=list, compare=False, repr=False)

    @property
    def file_diffs(self) -> tuple[str, ...]:
        """Unified diff of each file, built once from the located hunks."""
        if not self._diff_cache:
            file_diff = conveniences.file_diff
            self._diff_cache.append(tuple(file_diff(file_plan) for file_plan in self.files))
        return self._diff_cache[0]

    @property
    def diff(self) -> str:
        """Unified diff of the whole change, built from the located hunks."""
        return "".join(self.file_diffs)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.target_path for f in self.files)

    @property
    def exact(self) -> bool:
        return all(f.exact for f in self.files)

    @property
    def already_applied(self) -> bool:
        return bool(self.files) and all(f.already_applied for f in self.files)

    def stats(self) -> dict[str, tuple[int, int]]:
        """Lines added and removed per target path."""
        diff_stats, file_stats = conveniences.diff_stats, conveniences.file_stats
        if self._diff_cache:
            return {
                f.target_path: diff_stats(text) for f, text in zip(self.files, self.file_diffs, strict=True)
            }
        return {f.target_path: file_stats(f) for f in self.files}

    def summary(self) -> str:
        """One line per file (operation, path, +/- counts, match tiers), not the files' text."""
        if not self.files:
            return "no files"
        return "\n".join(file_plan.summary() for file_plan in self.files)

    def __repr__(self) -> str:
        count = len(self.files)
        lines = self.summary().replace("\n", "; ")
        return f"<Plan ({self.dialect}) {count} file{'s' if count != 1 else ''}: {lines}>"

    def __rich_repr__(self) -> Iterator[tuple[str, object]]:
        """rich's pretty printer shows the summary, not the before/after text."""
        yield "dialect", self.dialect
        yield "files", tuple(file_plan.summary() for file_plan in self.files)

    def _repr_html_(self) -> str:
        """In a notebook: the static diff the review widget also shows (header, tiers, hunks)."""
        return conveniences.plan_to_html(self)

    def explain(self) -> str:
        """Why each hunk landed where it did: tiers tried, scores, runner-up, offset, expected vs found.

        The teaching view of a plan: the same rows the review widget's "Why here?"
        disclosure and ``nbedit apply --explain`` show.
        """
        return conveniences.explain_plan(self)

    def without_hunks(self, excluded: set[tuple[int, int]]) -> Plan:
        """A plan with some hunks left out, keyed by (file index, hunk index)."""
        kept: Plan = conveniences.exclude_hunks(self, excluded)
        return kept
