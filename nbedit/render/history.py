"""History entries as a rich table (CLI) and a plain HTML table (notebook, static output).

Entries come from the snapshot history; this module reads only the attributes
it shows (``id``, ``time``, ``execution_count``, ``files`` with ``path``,
``new_path``, ``added``, ``removed``, ``origin``, ``status``, ``tiers``), so any
object with those attributes renders, and a missing optional attribute shows as
blank instead of failing.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from nbedit.render.html import wrap

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["HistoryRow", "history_rows", "history_table", "history_to_html"]

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
    """A rich ``Table`` with one row per entry."""
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("id", no_wrap=True)
    table.add_column("time", no_wrap=True)
    table.add_column("cell", no_wrap=True)
    table.add_column("files")
    table.add_column("+/-", justify="right", no_wrap=True)
    table.add_column("origin")
    table.add_column("status")
    for row in history_rows(entries):
        status = row.status + (f" (⚠ {row.flags})" if row.flags else "")
        table.add_row(
            row.id,
            row.time,
            row.cell,
            row.files,
            f"[green]+{row.added}[/green] [red]-{row.removed}[/red]",
            escape_markup(row.origin),
            escape_markup(status),
        )
    return table


def escape_markup(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


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
