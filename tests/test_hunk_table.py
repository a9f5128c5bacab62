"""A big patch's hunks as places in its text, a big file's located hunks and splice as arrays.

``engine.hunk_table``: the unified reader keeps a big patch's hunks as a ``HunkTable`` (made
again from the patch's lines when read), and ``exact_run.located_table`` keeps a big file's
located hunks as a ``LocatedTable`` and its new bytes as arrays of trimmed spans
(``Spliced.of_spans``). These tests lower both thresholds so small inputs take those paths, and
check every value they make against the one the ordinary path makes: the same hunks, the same
plan, the same bytes on disk, the same history (undo, restore), the same +/- counts.
"""

from __future__ import annotations

import difflib
import pickle
from pathlib import Path

import pytest

import nbedit
from nbedit.engine import exact_run
from nbedit.engine.diff import file_stats
from nbedit.engine.formats import unified, unified_runs
from nbedit.engine.hunk_table import HunkTable, LocatedTable
from nbedit.engine.models import unjoined_after
from nbedit.engine.spliced import Spliced
from nbedit.storage import versions
from nbedit.storage.delta import Regions, apply_deltas, decode_regions, region_delta


def lines_of(count: int, newline: str = "\n") -> list[str]:
    return [f"value_{number} = compute({number}){newline}" for number in range(count)]


def edited(lines: list[str], newline: str = "\n") -> list[str]:
    """Every kind of hunk: one line changed, lines inserted, lines removed, two changes with
    context between them (counts not known to the parser), a non-ASCII new line, hunks close
    enough that their diff blocks join, and a last line without its newline."""
    changed = list(lines)
    for number in range(5, len(lines) - 40, 60):
        kind = number // 60 % 6
        if kind == 0:
            changed[number] = f"value_{number} = 'changed'{newline}"
        elif kind == 1:
            changed[number] = lines[number] + f"inserted = {number}{newline}" + f"more = {number}{newline}"
        elif kind == 2:
            changed[number] = ""
            changed[number + 1] = ""
        elif kind == 3:
            changed[number] = f"first_{number} = 1{newline}"
            changed[number + 3] = f"second_{number} = 2{newline}"
        elif kind == 4:
            changed[number] = f"café_{number} = 'é'{newline}"
        else:
            for step in range(0, 24, 8):
                changed[number + step] = f"close_{number + step} = 0{newline}"
    return "".join(changed).splitlines(keepends=True)


def diff_of(lines: list[str], changed: list[str], name: str = "big.py") -> str:
    """A unified diff, with git's marker after a line that has no newline."""
    marked = "\n\\ No newline at end of file\n"
    diff = difflib.unified_diff(lines, changed, f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith("\n") else line + marked for line in diff)


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small patches read through the line index (so their hunks are a HunkTable), small files
    located into a LocatedTable."""
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1)
    monkeypatch.setattr(unified_runs, "RUN_LINES", 50)
    monkeypatch.setattr(exact_run, "STREAMED_FROM", 1)


def test_a_hunk_table_makes_the_hunks_the_list_reader_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of(3_000)
    changed = edited(lines)
    changed[-1] = changed[-1].rstrip("\n")  # a '\ No newline' hunk: read by the careful reader
    patch = diff_of(lines, changed)
    expected = unified.parse(patch).files[0].hunks
    assert isinstance(expected, tuple)
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1)
    monkeypatch.setattr(unified_runs, "RUN_LINES", 50)
    hunks = unified.parse(patch).files[0].hunks
    assert isinstance(hunks, HunkTable) and len(hunks) == len(expected) > 40
    assert hunks == expected and expected == hunks and tuple(hunks) == expected
    assert [hunk.changed_lines for hunk in hunks] == [hunk.changed_lines for hunk in expected]
    assert [hunks.changed_lines(index) for index in range(len(hunks))] == [h.changed_lines for h in expected]
    assert [hunk.source_line for hunk in hunks] == [hunk.source_line for hunk in expected]
    assert any(hunk.changed_lines is None for hunk in expected)  # both kinds are compared
    assert hunks[-1] == expected[-1] and hunks[3:7] == expected[3:7] and hash(hunks) == hash(expected)
    with pytest.raises(IndexError):
        hunks[len(hunks)]
    copied = pickle.loads(pickle.dumps(hunks))
    assert copied == expected


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_located_table_plans_what_the_ordinary_path_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: str
) -> None:
    lines = lines_of(3_000, newline)
    changed = edited(lines, newline)
    patch = diff_of(lines, changed)
    (tmp_path / "big.py").write_bytes("".join(lines).encode())
    workspace = nbedit.Workspace(tmp_path, history=False)
    expected = workspace.plan_patch(patch).files[0]
    assert isinstance(expected.hunks, tuple)
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1)
    monkeypatch.setattr(unified_runs, "RUN_LINES", 50)
    monkeypatch.setattr(exact_run, "STREAMED_FROM", 1)
    file_plan = workspace.plan_patch(patch).files[0]
    assert isinstance(file_plan.hunks, LocatedTable) and isinstance(unjoined_after(file_plan), Spliced)
    assert file_stats(file_plan) == file_stats(expected)  # counted from the table's arrays
    assert file_plan.hunks == expected.hunks and tuple(file_plan.hunks) == expected.hunks
    assert [located.match for located in file_plan.hunks] == [located.match for located in expected.hunks]
    assert file_plan.tiers() == expected.tiers() == ("exact",)
    assert file_plan == expected  # every field (the new bytes joined when read)
    assert file_plan.after_bytes == "".join(changed).encode()


def test_the_trimmed_spans_replay_to_the_new_bytes(tmp_path: Path, tables: None) -> None:
    lines = lines_of(2_000)
    changed = edited(lines)
    (tmp_path / "big.py").write_bytes("".join(lines).encode())
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(diff_of(lines, changed)).files[0]
    spliced = unjoined_after(file_plan)
    assert isinstance(spliced, Spliced)
    data, out, cursor = spliced.data, [], 0
    spans = spliced.spans()
    for start, end, new in spans:
        assert cursor <= start <= end
        out += [data[cursor:start], new]
        cursor = end
    assert b"".join([*out, data[cursor:]]) == "".join(changed).encode() == spliced.join()
    assert spliced.replays(data, spans) and spliced.replays(data, list(spans)) and spans == tuple(spans)
    assert not spliced.replays(data, [(0, 0, b"x"), *list(spans)[1:]])
    # only the changed middle is kept: the context lines are the file's own
    assert len(spliced.inserted) < sum(len(located.hunk.new) for located in file_plan.hunks) / 4


def test_a_big_patch_applies_records_and_undoes_from_the_tables(tmp_path: Path, tables: None) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lines = lines_of(3_000, "\r\n")
    changed = edited(lines, "\r\n")
    changed[-1] = changed[-1].rstrip("\r\n")  # no newline at the end: that hunk is read carefully
    before, after = "".join(lines).encode(), "".join(changed).encode()
    path = root / "big.py"
    path.write_bytes(before)
    path.chmod(0o751)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff_of(lines, changed))
    assert isinstance(plan.files[0].hunks, LocatedTable)
    result = workspace.apply(plan)
    assert path.read_bytes() == after and path.stat().st_mode & 0o777 == 0o751
    workspace.undo()
    assert path.read_bytes() == before and path.stat().st_mode & 0o777 == 0o751
    workspace.restore(result.entry_id or "", which="after")  # the region delta the history stored
    assert path.read_bytes() == after
    assert sorted(item.name for item in root.iterdir()) == ["big.py"]


def test_a_hunk_not_where_it_says_takes_the_full_search(tmp_path: Path, tables: None) -> None:
    lines = lines_of(2_000)
    changed = edited(lines)
    patch = diff_of(lines, changed)
    moved = ["# a line the diff did not know\n", *lines]  # every hunk one line further down
    (tmp_path / "big.py").write_bytes("".join(moved).encode())
    workspace = nbedit.Workspace(tmp_path, history=False)
    file_plan = workspace.plan_patch(patch).files[0]
    assert not isinstance(file_plan.hunks, LocatedTable)
    assert {located.match.offset for located in file_plan.hunks} == {1}
    workspace.apply(workspace.plan_patch(patch))
    expected = "".join(["# a line the diff did not know\n", *changed]).encode()
    assert (tmp_path / "big.py").read_bytes() == expected


def test_a_stale_file_is_refused_and_left_as_it_is(tmp_path: Path, tables: None) -> None:
    lines = lines_of(2_000)
    patch = diff_of(lines, edited(lines))
    path = tmp_path / "big.py"
    path.write_bytes("".join(lines).encode())
    workspace = nbedit.Workspace(tmp_path, history=True, home=tmp_path / ".home")
    plan = workspace.plan_patch(patch)
    assert isinstance(plan.files[0].hunks, LocatedTable)
    touched = "".join(lines).replace("value_7 ", "value_7b", 1).encode()  # same size
    path.write_bytes(touched)
    with pytest.raises(nbedit.errors.StaleFile):
        workspace.apply(plan)
    assert path.read_bytes() == touched


def test_a_plan_of_tables_previews_as_the_ordinary_plan_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everything shown of a plan (diff, explanation, notebook view, review data, summary) and
    what the review toggles make, the same whichever way its hunks are held."""
    from nbedit.render.review_data import review_document

    lines = lines_of(3_000)
    patch = diff_of(lines, edited(lines))
    (tmp_path / "big.py").write_bytes("".join(lines).encode())
    workspace = nbedit.Workspace(tmp_path, history=False)
    expected = workspace.plan_patch(patch)
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1)
    monkeypatch.setattr(unified_runs, "RUN_LINES", 50)
    monkeypatch.setattr(exact_run, "STREAMED_FROM", 1)
    plan = workspace.plan_patch(patch)
    assert isinstance(plan.files[0].hunks, LocatedTable)
    assert plan.diff == expected.diff and plan.explain() == expected.explain()
    assert plan._repr_html_() == expected._repr_html_() and repr(plan) == repr(expected)
    assert review_document(plan) == review_document(expected)
    assert plan.stats() == expected.stats()
    kept = plan.without_hunks({(0, 1), (0, 5)})
    assert kept == expected.without_hunks({(0, 1), (0, 5)})
    assert len(kept.files[0].hunks) == len(plan.files[0].hunks) - 2
    assert pickle.loads(pickle.dumps(plan)) == expected


def test_a_region_delta_of_the_spans_is_stored_as_their_tuples_would_be(tmp_path: Path, tables: None) -> None:
    """The history's region delta of a big file's spans: its new bytes handed over as the one buffer
    they are in (no object a span), encoded, packed and replayed as the tuples of the spans are."""
    lines = lines_of(20_000)
    (tmp_path / "big.py").write_bytes("".join(lines).encode())
    patch = diff_of(lines, edited(lines))
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(patch).files[0]
    spliced = unjoined_after(file_plan)
    assert isinstance(spliced, Spliced)
    data, spans = spliced.data, spliced.spans()
    regions = region_delta(data, spliced, spans)  # type: ignore[arg-type]
    assert regions is not None and regions.spans is spans
    plain = Regions(tuple((start, end, bytes(new)) for start, end, new in spans))
    whole = regions.encode()
    assert whole == plain.encode() and regions.size == plain.size == len(whole)
    assert decode_regions(whole) == plain
    assert apply_deltas(data, [decode_regions(whole)]) == spliced.join()
    method, packed = versions._pack_pieces(regions.chunks, regions.size, delta=True)
    assert versions._unpack(method, packed) == whole
