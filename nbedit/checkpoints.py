"""Checkpoints: the history's entries grouped the way people think of them, by cell run and agent turn.

A person does not remember entry ``e0000002a``; they remember "the cell I ran as In[12]"
or "what the model did in its last answer". The history already records, per entry,
the kernel session, the cell's ``In[n]`` and the origin (``agent:<tool>:<call id>`` for
a model's tool call, plus the turn id a ``ToolSession`` turn gives its calls). A
checkpoint is one such group:

* ``cell``: every entry one kernel session recorded for one ``In[n]`` (a cell that
  edited three files, or ran ``%%edit`` then ``%nbedit undo``);
* ``turn``: every entry of one agent turn (all tool calls of one model response, under
  their call ids); a call made outside a turn is a turn of its own;
* ``entry``: anything else (a CLI run, an API call) stands alone.

A checkpoint sits in time at its first entry: "before In[12]" is the state just before
the first entry In[12] recorded, and "since In[12]" starts there. ``find_start`` reads
what a person types for that (``In[12]``, an entry id, a checkpoint key, ``10min``).

Pure: it reads ``Entry`` values and returns values; the history store is read by the
caller (``nbedit.rewind``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from nbedit._dataclass import dataclass
from nbedit.errors import HistoryError
from nbedit.storage.records import AGENT_ORIGIN_PREFIX, Entry

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Kind = Literal["cell", "turn", "entry"]

__all__ = ["Checkpoint", "Start", "author", "checkpoint_of", "find_start", "group", "sequence"]

_CELL = re.compile(r"^\s*in\s*\[\s*(\d+)\s*\]\s*(?:@\s*(\S+))?\s*$", re.IGNORECASE)
_ENTRY = re.compile(r"^\s*e[0-9a-f]{1,15}\s*$", re.IGNORECASE)
_TIME = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)\s*(?:ago)?\s*$",
    re.IGNORECASE,
)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
FORMS = "In[12] (a cell run), an entry id (e0000002a), a checkpoint (turn:ID), last, or a time such as 10min or 2h"


def sequence(entry_id: str) -> int:
    """The counter inside an entry id (``e0000002a`` -> 42): ids sort by it."""
    return int(entry_id.strip().lower().removeprefix("e"), 16)


def checkpoint_of(entry: Entry) -> tuple[Kind, str, str]:
    """(kind, key, label) of the checkpoint an entry belongs to."""
    turn = getattr(entry, "turn", None)
    if turn:
        return "turn", f"turn:{turn}", f"agent turn {turn}"
    if entry.origin.startswith(AGENT_ORIGIN_PREFIX):
        return "turn", f"call:{entry.id}", entry.origin
    if entry.execution_count is not None:
        return "cell", f"In[{entry.execution_count}]@{entry.session}", f"In[{entry.execution_count}]"
    return "entry", entry.id, f"{entry.origin} {entry.id}"


def author(entry: Entry) -> str:
    """Who wrote an entry: ``In[12]``, ``agent:<tool>:<call id>``, ``cli``, ``undo (In[14])`` ..."""
    if entry.origin.startswith(AGENT_ORIGIN_PREFIX):
        return entry.origin
    if entry.execution_count is not None:
        cell = f"In[{entry.execution_count}]"
        return cell if entry.origin == "magic" else f"{entry.origin} ({cell})"
    return entry.origin


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A cell run, an agent turn or a lone entry: its entries oldest first."""

    kind: Kind
    key: str  # what ``find_start`` accepts back: In[12]@<session>, turn:<id>, call:<entry id>, <entry id>
    label: str  # what a table shows: In[12], agent turn t1, agent:edit:call_1, cli e0000002a
    session: str
    entries: tuple[Entry, ...]

    @property
    def id(self) -> str:
        """The first entry's id: where the checkpoint sits in time."""
        return self.entries[0].id

    @property
    def time(self) -> float:
        return self.entries[0].time

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(file.target_path for entry in self.entries for file in entry.files))


def group(entries: Iterable[Entry]) -> list[Checkpoint]:
    """The checkpoints of ``entries`` (any order), oldest first, each with its entries oldest first."""
    groups: dict[str, list[Entry]] = {}
    kinds: dict[str, tuple[Kind, str]] = {}
    for entry in sorted(entries, key=lambda entry: sequence(entry.id)):
        kind, key, label = checkpoint_of(entry)
        groups.setdefault(key, []).append(entry)
        kinds.setdefault(key, (kind, label))
    return [
        Checkpoint(kinds[key][0], key, kinds[key][1], members[0].session, tuple(members))
        for key, members in sorted(groups.items(), key=lambda item: sequence(item[1][0].id))
    ]


@dataclass(frozen=True, slots=True)
class Start:
    """Where "since ..." begins: the first entry counted (``seq``), and how to say it."""

    seq: int  # entries with this counter or higher are "since"; beyond every entry: nothing since
    description: str
    checkpoint: Checkpoint | None = None  # when a checkpoint (or an entry of one) was named
    session: str | None = None  # the session the reference names (a cell's kernel, an entry's session)


def find_start(spec: str | Checkpoint, entries: Sequence[Entry], *, session: str, now: float) -> Start:
    """Read what a person typed for "since"/"rewind to": ``In[12]`` (this session's, else the one
    session that has it; ``In[12]@<session>`` picks one), an entry id (the checkpoint it belongs
    to), a checkpoint key, ``last`` (this session's newest checkpoint), or a time (``10min``)."""
    checkpoints = group(entries)
    if isinstance(spec, Checkpoint):
        return Start(sequence(spec.id), f"{spec.label} ({spec.id})", spec, spec.session)
    text = str(spec).strip()
    if not text:
        raise HistoryError(f"say since when: {FORMS}")
    end = max((sequence(entry.id) for entry in entries), default=0) + 1
    cell = _CELL.match(text)
    if cell:
        return _cell_start(int(cell.group(1)), cell.group(2), checkpoints, session)
    if text.lower() == "last":
        own = [checkpoint for checkpoint in checkpoints if checkpoint.session == session]
        if not own:
            raise HistoryError(f"session {session!r} has recorded no edits in this root; nothing is 'last'")
        return Start(sequence(own[-1].id), f"{own[-1].label} ({own[-1].id})", own[-1], session)
    timed = _TIME.match(text)
    if timed:
        seconds = float(timed.group(1)) * _SECONDS[timed.group(2)[0].lower()]
        after = [entry for entry in entries if entry.time >= now - seconds]
        first = min((sequence(entry.id) for entry in after), default=end)
        return Start(first, f"the last {text}")
    for checkpoint in checkpoints:
        if checkpoint.key == text:
            return Start(
                sequence(checkpoint.id),
                f"{checkpoint.label} ({checkpoint.id})",
                checkpoint,
                checkpoint.session,
            )
    if _ENTRY.match(text):
        return _entry_start(text, checkpoints)
    raise HistoryError(f"{text!r} names no checkpoint of this root's history; use {FORMS}")


def _cell_start(count: int, named: str | None, checkpoints: list[Checkpoint], session: str) -> Start:
    cells = [c for c in checkpoints if c.kind == "cell" and c.entries[0].execution_count == count]
    if named is not None:
        cells = [c for c in cells if c.session == named]
    else:
        own = [c for c in cells if c.session == session]
        cells = own or cells
    if not cells:
        where = f"session {named!r}" if named else f"this session ({session}) or any other"
        raise HistoryError(
            f"no edit was recorded by cell In[{count}] in {where} in this root; list the history "
            "(%nbedit history --all / nbedit history --all) to see the cells that edited files"
        )
    if len(cells) > 1:
        keys = ", ".join(c.key for c in cells[:5])
        raise HistoryError(f"In[{count}] ran in several kernel sessions ({keys}); name one of them")
    chosen = cells[0]
    return Start(sequence(chosen.id), f"{chosen.label} ({chosen.id})", chosen, chosen.session)


def _entry_start(text: str, checkpoints: list[Checkpoint]) -> Start:
    digits = text.strip().lower().removeprefix("e")
    found = [
        (checkpoint, entry)
        for checkpoint in checkpoints
        for entry in checkpoint.entries
        if f"{sequence(entry.id):08x}".startswith(digits) or sequence(entry.id) == int(digits, 16)
    ]
    exact = [pair for pair in found if sequence(pair[1].id) == int(digits, 16)]
    if len(found) > 1 and len(exact) == 1:
        found = exact
    if not found:
        raise HistoryError(f"no history entry {text!r} in this root; list the history to see the ids")
    if len(found) > 1:
        shown = ", ".join(entry.id for _, entry in found[:5])
        raise HistoryError(f"entry id {text!r} is ambiguous ({shown}); give more characters")
    checkpoint, entry = found[0]
    # an entry names the checkpoint it belongs to: a rewind to it takes back the whole cell run or turn
    return Start(sequence(checkpoint.id), f"{checkpoint.label} ({entry.id})", checkpoint, checkpoint.session)
