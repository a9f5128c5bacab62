"""The next edit of a big notebook starts from the document the last edit derived (``successor``).

A derived document must be exactly what a scan of the same bytes gives (every column, the
view, every offset), it must be used only for bytes equal to the ones it was derived for,
and anything it cannot prove (several cells changed, a type changed, an odd notebook) is
left to the scan. Bytes that differ, even by one byte of an output string, are scanned:
a broken string there is refused as before and the file stays byte-identical.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from nbedit.engine.notebook import scan as scan_module
from nbedit.engine.notebook import successor
from nbedit.engine.notebook.document import NotebookDocument
from nbedit.errors import NotebookError
from nbedit.workspace import Workspace

NAME = "big.ipynb"


@pytest.fixture(autouse=True)
def _nothing_kept() -> None:
    successor.forget()
    yield
    successor.forget()


def big_notebook(cells: int = 60, *, minor: int = 5, unicode: bool = False) -> bytes:
    """About 1.5 MB in nbformat's own layout: base64 images and printed lines."""
    rng = random.Random(cells)
    items = []
    for number in range(cells):
        if number % 7 == 0:
            items.append(
                {"cell_type": "markdown", "id": f"md-{number}", "metadata": {},
                 "source": [f"## Part {number}\n", "Notes ü\n" if unicode else "Notes\n"]}
            )  # fmt: skip
            continue
        outputs = [
            {"name": "stdout", "output_type": "stream", "text": [f"line {n}\n" for n in range(40)]},
            {
                "data": {"image/png": base64.b64encode(rng.randbytes(18_000)).decode(), "text/plain": ["<Figure>"]},
                "metadata": {},
                "output_type": "display_data",
            },
        ]
        items.append(
            {"cell_type": "code", "execution_count": number, "id": f"c-{number}", "metadata": {},
             "outputs": outputs, "source": f"total_{number} = frame_{number}.sum()\nplot(total_{number})"}
        )  # fmt: skip
    if minor < 5:
        for item in items:
            del item["id"]
    notebook = {"cells": items, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": minor}
    data = (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    assert len(data) >= successor.DERIVED_FROM
    return data


def assert_same(derived: NotebookDocument, parsed: NotebookDocument) -> None:
    assert derived.data == parsed.data
    assert derived.view == parsed.view
    assert list(derived.spans) == list(parsed.spans)
    assert list(derived.marker_starts) == list(parsed.marker_starts)
    for column in ("starts", "ends", "types", "ids", "kinds", "misshapen", "bad_sources"):
        assert list(getattr(derived.table, column)) == list(getattr(parsed.table, column)), column
    assert list(derived.table.sources) == list(parsed.table.sources)
    assert list(derived.cells) == list(parsed.cells)
    layout, expected = derived.layout, parsed.layout
    assert (layout.cells_start, layout.cells_end) == (expected.cells_start, expected.cells_end)
    assert (layout.top.start, layout.top.end) == (expected.top.start, expected.top.end)

    def offsets(members):  # type: ignore[no-untyped-def]
        return {key: (m.key_start, m.key_end, m.value_start, m.value_end) for key, m in members.items()}

    assert offsets(layout.top.members) == offsets(expected.top.members)
    for index in range(len(parsed.cells)):
        assert (layout.cells[index].start, layout.cells[index].end) == (
            expected.cells[index].start,
            expected.cells[index].end,
        )
        assert offsets(layout.cells[index].members) == offsets(expected.cells[index].members)
    assert (derived.top, derived.nbformat_minor, derived.body_start, derived.problems) == (
        parsed.top,
        parsed.nbformat_minor,
        parsed.body_start,
        parsed.problems,
    )


@pytest.mark.parametrize("proved", [False, True])  # compared here / taken from the plan's own check
@pytest.mark.parametrize("unicode", [False, True])
def test_a_chain_of_one_cell_edits_derives_exactly_what_the_scan_reads(
    unicode: bool, proved: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if proved:  # the plan's check compared every other byte: derive does not compare them again

        def not_again(*arguments: object) -> None:
            raise AssertionError("compared twice")

        monkeypatch.setattr(successor, "_first_difference", not_again)
        monkeypatch.setattr(successor, "_same_tail", not_again)
    rng = random.Random(27)
    document = NotebookDocument.parse(big_notebook(unicode=unicode), NAME)
    derived_count = 0
    for _ in range(14):
        index = rng.randrange(len(document.cells))
        span = document.spans[index]
        body = document.view[span.start : span.end]
        new = rng.choice(
            [
                body + "x = 1\n",
                "",
                body.replace("t", "ẗ", 1) + "é ☃\n",
                body[: len(body) // 2] + "\n",
                body + "\\# %% nbedit 3 [code]\n",  # an escaped marker-like line
                body + 'print("quote \\" and tab\t")\n',
            ]
        )
        edit = document.edit(document.view[: span.start] + new + document.view[span.end :])
        assert edit.rewritten_cell == index  # one cell's source: the one-cell path and its check
        derived = successor.derive(document, edit.data, proved_cell=edit.rewritten_cell if proved else None)
        parsed = NotebookDocument.parse(edit.data, NAME)
        assert derived is not None
        derived_count += 1
        assert_same(derived, parsed)
        document = derived  # the next edit starts from the derived document, as a kernel's does
    assert derived_count == 14


def test_edits_it_cannot_prove_are_left_to_the_scan() -> None:
    data = big_notebook()
    document = NotebookDocument.parse(data, NAME)
    view = document.view
    two = view.replace("total_1 = frame_1.sum()", "total_1 = 1", 1).replace("total_2 = frame_2.sum()", "x", 1)
    edited_two = document.edit(two)
    assert edited_two.rewritten_cell is None  # the general path: no one cell proved alone
    assert successor.derive(document, edited_two.data) is None  # two cells
    retyped = view.replace("# %% nbedit 1 [code] id=c-1", "# %% nbedit 1 [raw] id=c-1", 1)
    assert successor.derive(document, document.edit(retyped).data) is None  # a type changed
    outside = data.replace(b'"name": "python3"', b'"name": "python4"', 1)
    assert successor.derive(document, outside) is None  # the top-level metadata
    unshaped = data.replace(b'"execution_count": 1,', b'"execution_count": "one",', 1)
    assert successor.derive(document, unshaped) is None  # the cell's shape changed
    broken = data.replace(b'"total_1 = frame_1', b'"total_1 \\q frame_1', 1)
    assert successor.derive(document, broken) is None  # not JSON: the scan says why
    odd = NotebookDocument.parse(unshaped, NAME)  # a notebook with a misshapen cell: not derived at all
    edited = odd.edit(view.replace("total_3 = frame_3.sum()", "y", 1)).data
    assert successor.derive(odd, edited) is None


def test_only_equal_bytes_recall_the_derived_document() -> None:
    data = big_notebook()
    document = NotebookDocument.parse(data, NAME)
    after = document.edit(document.view.replace("total_5 = frame_5.sum()", "total_5 = frame_5.max()", 1)).data
    successor.remember(document, after)
    kept = successor.recall(bytes(bytearray(after)), NAME, None)  # equal bytes, another object
    assert kept is not None and kept.data == after
    assert successor.recall(after, "other.ipynb", None).path == "other.ipynb"  # type: ignore[union-attr]
    for position in (0, len(after) // 2, len(after) - 2):  # same size, one byte different
        changed = bytearray(after)
        changed[position] ^= 0x20
        assert successor.recall(bytes(changed), NAME, None) is None
    assert successor.recall(after, NAME, max_cells=10) is None  # over a limit: the scan refuses it


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scans: list[int] = []
    real = scan_module.scan_notebook

    def counting(data, *arguments, **keywords):  # type: ignore[no-untyped-def]
        scans.append(len(data))
        return real(data, *arguments, **keywords)

    monkeypatch.setattr("nbedit.engine.notebook.reading.scan_notebook", counting)
    return scans


def test_a_second_edit_in_the_same_process_does_not_scan_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scans = count_scans(monkeypatch)
    original = big_notebook()
    (tmp_path / NAME).write_bytes(original)
    workspace = Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_edit(NAME, "total_8 = frame_8.sum()", "total_8 = frame_8.mean()"))
    workspace.apply(workspace.plan_edit(NAME, "total_9 = frame_9.sum()", "total_9 = frame_9.min()"))
    assert len(scans) == 1  # the second plan started from the first plan's derived document
    view = workspace.view(NAME)  # viewing what was just written: the same document, no scan either
    assert len(scans) == 1 and "total_9 = frame_9.min()" in view
    successor.forget()
    assert workspace.view(NAME) == view and len(scans) == 2
    expected = original.replace(b"total_8 = frame_8.sum()", b"total_8 = frame_8.mean()", 1)
    expected = expected.replace(b"total_9 = frame_9.sum()", b"total_9 = frame_9.min()", 1)
    assert (tmp_path / NAME).read_bytes() == expected


def test_a_broken_output_written_behind_nbedits_back_is_refused_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = count_scans(monkeypatch)
    (tmp_path / NAME).write_bytes(big_notebook())
    workspace = Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_edit(NAME, "total_8 = frame_8.sum()", "total_8 = frame_8.mean()"))
    written = (tmp_path / NAME).read_bytes()
    image = written.index(b'"image/png": "') + len(b'"image/png": "') + 100
    for bad in (b"\\q", b"\x01x", b"\\uzz"):  # a bad escape, a control character, \\u without hex digits
        broken = written[:image] + bad + written[image + len(bad) :]  # same size: only the bytes differ
        (tmp_path / NAME).write_bytes(broken)
        with pytest.raises(NotebookError, match="is not valid JSON"):
            workspace.plan_edit(NAME, "total_9 = frame_9.sum()", "total_9 = frame_9.min()")
        assert (tmp_path / NAME).read_bytes() == broken
    assert len(scans) == 4  # each changed file scanned, never taken from the kept document
