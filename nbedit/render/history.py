"""History entries as a rich table (terminal), tab-separated lines or JSON (pipes and scripts),
and a plain HTML table (notebook, static output).

Entries come from the snapshot history; this module reads only the attributes
it shows (``id``, ``time``, ``execution_count``, ``files`` with ``path``,
``new_path``, ``added``, ``removed``, ``origin``, ``status``, ``tiers``), so any
object with those attributes renders, and a missing optional attribute shows as
blank instead of failing.

The table is for people and fits the terminal; a pipe gets every file name in
full, because a cut name (``analys…``) is useless to ``grep`` or ``cut``. Every
table cell is a rich ``Text``: file names are never read as markup, so
``app/[slug]/page.tsx`` shows as it is.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from nbedit._dataclass import dataclass
from nbedit.render.html import wrap

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["HistoryRow", "history_json", "history_rows", "history_table", "history_to_html", "history_tsv"]

_MAX_PATHS = 3


@dataclass(frozen=True, slots=True)
class HistoryRow:
    id: str
    time: str
    cell: str  # "In[12]" or ""
    files: str
    added: int
    removed: int
    origin: str
    status: str
    flags: str  # non-exact tiers, "" when every hunk matched exactly


def _time(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        value = datetime.datetime.fromtimestamp(value)
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def _file_name(file: Any) -> str:
    path = str(getattr(file, "path", file))
    new_path = getattr(file, "new_path", None)
    return f"{path} → {new_path}" if new_path and new_path != path else path


def _files(files: Sequence[Any]) -> str:
    names = [_file_name(file) for file in files]
    if len(names) > _MAX_PATHS:
        return ", ".join(names[:_MAX_PATHS]) + f" and {len(names) - _MAX_PATHS} more"
    return ", ".join(names)


def _flags(tiers: Iterable[Any]) -> str:
    names = []
    for tier in tiers or ():
        name = str(getattr(tier, "value", tier))
        if name != "exact" and name not in names:
            names.append(name)
    return ", ".join(names)


def _status(entry: Any) -> str:
    status = str(getattr(entry, "status", "") or "")
    undoes = getattr(entry, "undoes", None)
    return f"{status}, undoes {undoes}" if undoes else status


def history_rows(entries: Iterable[Any]) -> list[HistoryRow]:
    """The displayed facts of each entry, in the order given."""
    rows = []
    for entry in entries:
        files = tuple(getattr(entry, "files", ()) or ())
        count = getattr(entry, "execution_count", None)
        rows.append(
            HistoryRow(
                id=str(getattr(entry, "id", "")),
                time=_time(getattr(entry, "time", None)),
                cell=f"In[{count}]" if count is not None else "",
                files=_files(files),
                added=sum(int(getattr(file, "added", 0) or 0) for file in files),
                removed=sum(int(getattr(file, "removed", 0) or 0) for file in files),
                origin=str(getattr(entry, "origin", "") or ""),
                status=_status(entry),
                flags=_flags(getattr(entry, "tiers", ()) or ()),
            )
        )
    return rows


def history_table(entries: Iterable[Any], *, title: str | None = None) -> Table:
    """A rich ``Table`` with one row per entry.

    Every cell is a ``Text``, never markup: a file named ``app/[slug]/page.tsx``
    is shown as it is and cannot break the table.
    """
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("id", no_wrap=True)
    table.add_column("time", no_wrap=True)
    table.add_column("cell", no_wrap=True)
    table.add_column("files")
    table.add_column("+/-", justify="right", no_wrap=True)
    table.add_column("origin")
    table.add_column("status")
    entries = list(entries)
    keys, labels, sizes = _checkpoints(entries)
    previous = None
    for key, row in zip(keys, history_rows(entries), strict=True):
        if sizes[key] > 1 and key != previous:  # a cell run or agent turn of several entries: a heading
            table.add_row(
                Text(f"▾ {labels[key]}", style="bold"), Text(""), Text(""), Text(f"{sizes[key]} entries")
            )
        inside = sizes[key] > 1
        previous = key
        status = row.status + (f" (⚠ {row.flags})" if row.flags else "")
        counts = Text()
        counts.append(f"+{row.added}", style="green")
        counts.append(" ")
        counts.append(f"-{row.removed}", style="red")
        table.add_row(
            Text(("  " if inside else "") + row.id),
            Text(row.time),
            Text(row.cell),
            Text(row.files),
            counts,
            Text(row.origin),
            Text(status),
        )
    return table


def _checkpoints(entries: Sequence[Any]) -> tuple[list[str], dict[str, str], dict[str, int]]:
    """Each entry's checkpoint key (``nbedit.checkpoints``), the keys' labels, and entries per key."""
    from nbedit.checkpoints import checkpoint_of

    keys: list[str] = []
    labels: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for entry in entries:
        try:
            _kind, key, label = checkpoint_of(entry)
        except AttributeError:  # not a history entry: it stands alone
            key, label = str(getattr(entry, "id", id(entry))), ""
        keys.append(key)
        labels.setdefault(key, label)
        sizes[key] = sizes.get(key, 0) + 1
    return keys, labels, sizes


_TSV_COLUMNS = ("id", "time", "cell", "files", "added", "removed", "origin", "status", "flags")


def _tsv_field(value: object) -> str:
    # A tab or newline inside a file name would shift the columns; write them as escapes.
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def history_tsv(entries: Iterable[Any]) -> str:
    """Tab-separated lines, a header first: every file of every entry, never cut to a width.

    For pipes and scripts (``nbedit history | cut -f4``). Files are joined with
    ``", "``; tabs, newlines and backslashes inside values are backslash-escaped.
    """
    lines = ["\t".join(_TSV_COLUMNS)]
    for entry in entries:
        files = tuple(getattr(entry, "files", ()) or ())
        row = history_rows([entry])[0]
        values = (
            row.id,
            row.time,
            row.cell,
            ", ".join(_file_name(file) for file in files),
            row.added,
            row.removed,
            row.origin,
            row.status,
            row.flags,
        )
        lines.append("\t".join(_tsv_field(value) for value in values))
    return "\n".join(lines) + "\n"


def history_json(entries: Iterable[Any]) -> str:
    """A JSON array with one object per entry (every file, its +/- counts, ISO time), for scripts."""
    import json

    records = []
    for entry in entries:
        time = getattr(entry, "time", None)
        count = getattr(entry, "execution_count", None)
        records.append(
            {
                "id": str(getattr(entry, "id", "")),
                "time": datetime.datetime.fromtimestamp(time, datetime.timezone.utc).isoformat()
                if isinstance(time, (int, float))
                else time,
                "session": getattr(entry, "session", None),
                "execution_count": count,
                "origin": getattr(entry, "origin", None),
                "status": getattr(entry, "status", None),
                "undoes": getattr(entry, "undoes", None),
                "turn": getattr(entry, "turn", None),
                "tiers": list(getattr(entry, "tiers", ()) or ()),
                "files": [
                    {
                        "path": str(getattr(file, "path", file)),
                        "new_path": getattr(file, "new_path", None),
                        "added": int(getattr(file, "added", 0) or 0),
                        "removed": int(getattr(file, "removed", 0) or 0),
                    }
                    for file in getattr(entry, "files", ()) or ()
                ],
            }
        )
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


def history_to_html(entries: Iterable[Any], *, empty: str = "no edits recorded yet") -> str:
    """A styled HTML ``<table>`` with one row per entry (or a short note when there are none)."""
    rows = history_rows(entries)
    if not rows:
        return wrap(f'<div class="nb-note">{escape(empty)}</div>')
    body = []
    for row in rows:
        flags = (
            f' <span class="nb-badge" title="matched non-exactly">⚠ {escape(row.flags)}</span>'
            if row.flags
            else ""
        )
        body.append(
            "<tr>"
            f"<td><code>{escape(row.id)}</code></td><td>{escape(row.time)}</td><td>{escape(row.cell)}</td>"
            f'<td class="nb-path">{escape(row.files)}</td>'
            f'<td class="num"><span class="nb-plus">+{row.added}</span><span class="nb-minus">-{row.removed}</span></td>'
            f"<td>{escape(row.origin)}</td><td>{escape(row.status)}{flags}</td>"
            "</tr>"
        )
    head = "".join(f"<th>{name}</th>" for name in ("id", "time", "cell", "files", "+/-", "origin", "status"))
    return wrap(
        f'<table class="nb-history"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
