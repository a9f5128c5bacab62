"""The drift corpus sample: real edits, drifted as models drift, never applied wrongly.

About 2,000 runs (33 per category and dialect, fixed seed) of the corpus built by
``benchmarks/drift_corpus.py`` from the release diffs in ``tests/data/real-history``
and the running Python's stdlib modules; ``python -m benchmarks.drift_corpus`` runs
the whole corpus. Each category must give **0 wrong results** in every dialect and
reach the issue's rate: recovered >= 97% for whitespace, quote, indentation and
CRLF drift, >= 85% for one changed token (where a context token changed on both
sides, only in a unified diff: elsewhere that is a conflict, issue 21, refused every
time), 100% of ambiguous and absent edits refused (a unified diff's line number places
an ambiguous edit, so there it must be applied at that line, or refused, never elsewhere).

The oracles are checked here too, against ground truth that does not involve
nbedit: an oracle is the true edit's exact replacement in the file as written to
disk. A sample of the runs is also applied to disk for real, through
``Workspace.apply``, ``nbedit.edit`` and ``nbedit.patch``.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from pathlib import Path

import pytest

import nbedit
from benchmarks.drift_cases import CATEGORIES, DIALECTS, Case, build_cases, expectation, render
from benchmarks.drift_corpus import (
    Result,
    format_table,
    plan_case,
    repro,
    rows,
    run,
    sample_runs,
    summary_rows,
)
from benchmarks.drift_edits import BaseEdit, base_edits
from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

# one worker builds the module's fixtures once (tests/conftest.py: _server_group)
pytestmark = pytest.mark.xdist_group("drift_corpus")

PER_CELL = 33  # runs per (category, dialect): 15 x 4 x 33 = 1,980


@pytest.fixture(scope="module")
def edits() -> list[BaseEdit]:
    return base_edits()


@pytest.fixture(scope="module")
def sample(edits: list[BaseEdit]) -> list[tuple[Case, str]]:
    return sample_runs(edits, PER_CELL)


@pytest.fixture(scope="module")
def results(sample: list[tuple[Case, str]], tmp_path_factory: pytest.TempPathFactory) -> list[Result]:
    return run(sample, tmp_path_factory.mktemp("drift"))


def _lines(text: str) -> list[str]:
    return text.split("\n")


# ---------------------------------------------------------------------------- the corpus itself


def test_base_edits_come_from_real_diffs_and_the_stdlib(edits: list[BaseEdit]) -> None:
    kinds = Counter(edit.kind for edit in edits)
    assert kinds["real-diff"] >= 4000, kinds
    for kind in ("token", "delete", "insert", "wrap-with", "wrap-try", "dedent", "punctuation", "rename"):
        assert kinds[kind] >= 100, kinds
    for edit in edits:
        assert edit.file.text.count(edit.old) == 1, edit.source
        assert edit.old != edit.new


@pytest.mark.slow
def test_the_full_corpus_has_at_least_20000_cases_in_every_dialect(edits: list[BaseEdit]) -> None:
    cases = build_cases(edits)
    assert len(cases) >= 20_000
    per_category = Counter(case.category for case in cases)
    assert all(per_category[category.name] >= 1500 for category in CATEGORIES), per_category
    # the benchmark runs each case in one dialect in turn: every cell gets hundreds of cases
    assert min(Counter((case.category, case.number % len(DIALECTS)) for case in cases).values()) >= 300


def test_the_sample_is_stratified_and_deterministic(
    edits: list[BaseEdit], sample: list[tuple[Case, str]]
) -> None:
    cells = Counter((case.category, dialect) for case, dialect in sample)
    assert set(cells) == {(category.name, dialect) for category in CATEGORIES for dialect in DIALECTS}
    assert set(cells.values()) == {PER_CELL}
    again = sample_runs(edits, PER_CELL)
    assert [(c.category, c.variant.path, c.old, c.new, d) for c, d in again] == [
        (c.category, c.variant.path, c.old, c.new, d) for c, d in sample
    ]


def test_every_oracle_is_the_true_edit_replaced_exactly(sample: list[tuple[Case, str]]) -> None:
    """Ground truth without nbedit: the base edit's old -> new on the file as written."""
    checked: Counter[str] = Counter()
    for case, _ in sample:
        edit, variant = case.edit, case.variant
        newline = variant.newline
        true_old = edit.old.replace("\n", newline)
        true_new = edit.new.replace("\n", newline)
        if case.expect == "refuse" and case.category != "ambiguous":
            continue
        if case.category in ("trailing-ws-stripped", "combined"):
            # the file's trailing blanks stay on context lines; compare with them stripped
            expected = edit.file.text.replace(edit.old, edit.new, 1)
            assert [line.rstrip() for line in _lines(case.oracle().replace(newline, "\n"))] == [
                line.rstrip() for line in _lines(expected)
            ]
            assert case.oracle().count("\n") == case.oracle().count(newline)
        else:
            # the first occurrence is the original place: an ambiguous copy is appended after it
            assert case.oracle() == variant.text.replace(true_old, true_new, 1), case.edit.source
        checked[case.category] += 1
    assert len(checked) == len(CATEGORIES) - 1  # all but "absent", which has no result to write


def test_drifted_old_text_is_not_in_the_file_and_refusals_are_due(sample: list[tuple[Case, str]]) -> None:
    for case, _ in sample:
        occurrences = case.variant.text.count(case.old)
        if case.category == "exact":
            assert occurrences == 1
        elif case.category == "ambiguous":
            shifted = case.old != case.edit.old
            assert occurrences == 0 if shifted else occurrences >= 2
            assert case.variant.text.count(case.edit.old) >= 2  # the region really is there twice
        else:
            assert occurrences == 0, case.category
        if case.category == "absent":
            assert case.new == case.edit.new and case.removed != case.edit.removed


# ---------------------------------------------------------------------------- nbedit on the corpus


@pytest.mark.parametrize("category", [category.name for category in CATEGORIES])
def test_no_wrong_result_and_the_rate_is_met(category: str, results: list[Result]) -> None:
    table = [row for row in rows(results) if row.category == category]
    assert len(table) == len(DIALECTS)
    # no wrong result in any dialect; the rate is the category's over all dialects (33 runs per
    # dialect are too few to hold each one to 97%: a single refusal is 3%)
    failing = [row for row in table if row.wrong] + [row for row in summary_rows(table) if not row.passed]
    wrong = [
        repro(result) for result in results if result.case.category == category and result.outcome == "wrong"
    ]
    assert not failing, (
        format_table(table)
        + "\n\nfirst wrong results:\n"
        + "\n\n".join("\n".join(f"{key}: {value!r}" for key, value in item.items()) for item in wrong[:3])
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_sample_applies_to_disk_exactly_or_leaves_the_file_alone(
    sample: list[tuple[Case, str]], tmp_path: Path
) -> None:
    """Every 10th run for real: the bytes on disk are the plan's, a refusal changes no byte."""
    outcomes: Counter[str] = Counter()
    for number, (case, dialect) in enumerate(sample[::10]):
        root = tmp_path / str(number)
        path = root / case.variant.path
        path.parent.mkdir(parents=True)
        before = case.variant.text.encode("utf-8")
        path.write_bytes(before)
        mode = _mode(path)
        workspace = Workspace(root, history=False)
        try:
            plan = plan_case(workspace, case, dialect)
        except NbeditError:
            # the one-call API refuses the same way and writes nothing either
            rendered = render(case, dialect)
            with pytest.raises(NbeditError):
                if isinstance(rendered, tuple):
                    nbedit.edit(case.variant.path, rendered[0], rendered[1], root=str(root), history=False)
                else:
                    nbedit.patch(rendered, root=str(root), history=False)
            assert path.read_bytes() == before
            assert _mode(path) == mode
            outcomes["refused"] += 1
            continue
        workspace.apply(plan)
        assert path.read_bytes() == plan.files[0].after_bytes
        assert _mode(path) == mode
        if expectation(case, dialect) == "recover" and plan.files[0].after == case.oracle():
            assert path.read_bytes() == case.oracle().encode("utf-8")
            outcomes["correct"] += 1
        else:
            outcomes["other"] += 1
    assert sum(outcomes.values()) >= 190
    assert outcomes["correct"] >= 100 and outcomes["refused"] >= 20, outcomes
