"""The drift corpus: real edits, drifted the way models drift, against an exact oracle.

``python -m benchmarks.drift_corpus`` builds every case (``drift_edits`` cuts the
base edits from real diffs and stdlib modules, ``drift_cases`` perturbs them and
defines each oracle), writes every file variant once into a temporary workspace,
plans each case through four dialects without applying it, and prints a table of
category x dialect: cases, correct, refused, wrong, and the recovery (or refusal)
rate against the issue's targets. ``--sample N`` runs a stratified sample of about
N runs instead (the test suite runs one, ``tests/test_drift_corpus.py``), ``--json``
prints the rows and wrong cases for machines. Exit status 1 when a target fails.
``--dump FILE`` writes one line a run (case number, dialect, category, outcome, detail,
a hash of the planned bytes or of the refusal's message, tiers, scores, lines, CPU ms of
planning): two trees' dumps compared line by line prove a change of the engine changed
no outcome and no byte, and give the time a run by category and outcome.

The outcome of one run:

- **correct**: the plan succeeds and its ``after_bytes`` equal the oracle's bytes;
- **refused**: an ``NbeditError`` is raised (planning writes nothing);
- **guarded**: the syntax guard refused, and the oracle is Python that does not parse
  (checked here with ``ast``): the corpus's made edits are not always valid code, and a
  leniently placed change that breaks parsing is refused by design (kept out of the
  recovery rate, counted as a refusal where one is due);
- **wrong**: anything else: other bytes (including "no change" reported as
  success), a success where a refusal is due, or an exception that is not an
  ``NbeditError``.

Dialects: ``edit`` (``Workspace.plan_edit``; a third of the pairs without their
final newline, as agents send them, and up to a third starting mid-line, after the
first line's indentation, where that line is not drifted), ``search_replace`` (an Aider block through
``Workspace.plan_patch``), ``apply_patch`` (a Codex ``*** Begin Patch``) and
``unified`` (a diff with line numbers: the locator case). For the unified dialect
the fuzzy tier's score of every fuzzy-located hunk is kept, split by correct and
wrong: the evidence for the floor of "fuzzy with a locator".
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.drift_cases import CATEGORIES, DIALECTS, Case, build_cases, expectation, render
from benchmarks.drift_edits import BaseEdit, base_edits
from nbedit.errors import NbeditError, UnsafeChange
from nbedit.workspace import Workspace

__all__ = [
    "Result",
    "Row",
    "full_runs",
    "kind_rows",
    "fuzzy_scores",
    "main",
    "repro",
    "rows",
    "run",
    "run_case",
    "sample_runs",
    "summary_rows",
    "write_variants",
]

SAMPLE_SEED = 20261124


@dataclass(frozen=True, slots=True)
class Result:
    case: Case
    dialect: str
    outcome: str  # "correct", "refused", "guarded" or "wrong"
    detail: str  # the error's class, or why the result is wrong
    tiers: tuple[str, ...]
    scores: tuple[float, ...]
    got: str | None = None  # the planned text, kept for wrong results only
    lines: tuple[int, ...] = ()  # 1-based first line of each located hunk
    digest: str = ""  # sha256 of the planned bytes, or of the refusal's message (``--dump``)
    seconds: float = 0.0  # CPU time of planning this run


@dataclass(frozen=True, slots=True)
class Row:
    category: str
    dialect: str
    expect: str
    cases: int
    correct: int
    refused: int
    wrong: int
    target: float | None
    # refused by the syntax guard where the oracle itself does not parse as Python (the corpus's
    # edits are made, not always valid code): a right refusal, out of a recovery rate's count
    guarded: int = 0

    @property
    def rate(self) -> float:
        """Recovered share (refused share for a category that must be refused)."""
        if self.expect == "recover":
            judged = self.cases - self.guarded
            return self.correct / judged if judged else 1.0
        if not self.cases:
            return 1.0
        return (self.refused + self.guarded) / self.cases

    @property
    def passed(self) -> bool:
        return self.wrong == 0 and (self.target is None or self.rate >= self.target)


def write_variants(root: Path, cases: Iterable[Case]) -> None:
    """Write each file variant the cases use once, byte for byte."""
    written: set[str] = set()
    for case in cases:
        variant = case.variant
        if variant.path in written:
            continue
        written.add(variant.path)
        path = root / variant.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(variant.text.encode("utf-8"))


def plan_case(workspace: Workspace, case: Case, dialect: str):  # type: ignore[no-untyped-def]
    rendered = render(case, dialect)
    if isinstance(rendered, tuple):
        old, new = rendered
        return workspace.plan_edit(case.variant.path, old, new)
    return workspace.plan_patch(rendered)


def _guarded(case: Case, error: NbeditError) -> bool:
    """The syntax guard refused, and rightly: the oracle is Python that does not parse (checked here)."""
    if not isinstance(error, UnsafeChange) or not error.reason.startswith("the result would not parse"):
        return False
    if not case.variant.path.endswith(".py"):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(case.oracle())
    except SyntaxError:
        return True
    return False


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def run_case(workspace: Workspace, case: Case, dialect: str) -> Result:
    expect = expectation(case, dialect)
    started = time.process_time()
    try:
        plan = plan_case(workspace, case, dialect)
    except NbeditError as error:
        seconds = time.process_time() - started
        message = f"{type(error).__name__}: {error}".replace(str(workspace.root), "<root>")
        digest = _digest(message.encode("utf-8", "surrogatepass"))
        if _guarded(case, error):
            return Result(
                case, dialect, "guarded", str(error).split("\n")[0], (), (), digest=digest, seconds=seconds
            )
        return Result(case, dialect, "refused", type(error).__name__, (), (), digest=digest, seconds=seconds)
    except Exception as error:  # anything else escaping the engine is a bug
        return Result(case, dialect, "wrong", f"{type(error).__name__}: {error}", (), ())
    seconds = time.process_time() - started
    result = _judge(case, dialect, expect, plan)
    digest = _digest(b"".join(file_plan.after_bytes or b"" for file_plan in plan.files))
    return Result(
        result.case,
        result.dialect,
        result.outcome,
        result.detail,
        result.tiers,
        result.scores,
        result.got,
        result.lines,
        digest,
        seconds,
    )


def _judge(case: Case, dialect: str, expect: str, plan) -> Result:  # type: ignore[no-untyped-def]
    hunks = [hunk for file_plan in plan.files for hunk in file_plan.hunks]
    tiers = tuple(hunk.tier.value for hunk in hunks)
    scores = tuple(hunk.score for hunk in hunks)
    lines = tuple(hunk.line for hunk in hunks)
    if len(plan.files) != 1 or plan.files[0].path != case.variant.path:
        return Result(case, dialect, "wrong", f"planned {plan.paths}", tiers, scores)
    file_plan = plan.files[0]
    got = (file_plan.after_bytes or b"").decode("utf-8")
    if expect == "refuse":
        unchanged = file_plan.after_bytes == file_plan.before_bytes
        reason = (
            "no change (already applied?) where it must be refused"
            if unchanged
            else "applied where it must be refused"
        )
        return Result(case, dialect, "wrong", reason, tiers, scores, got, lines)
    if got == case.oracle():
        return Result(case, dialect, "correct", "", tiers, scores, None, lines)
    reason = (
        "no change reported as success" if file_plan.after_bytes == file_plan.before_bytes else "bytes differ"
    )
    return Result(case, dialect, "wrong", reason, tiers, scores, got, lines)


def run(runs: Sequence[tuple[Case, str]], root: Path) -> list[Result]:
    """Plan every (case, dialect) against the variants written under ``root``."""
    write_variants(root, (case for case, _ in runs))
    workspace = Workspace(root, history=False)
    return [run_case(workspace, case, dialect) for case, dialect in runs]


def full_runs(cases: Sequence[Case], every_dialect: bool = False) -> list[tuple[Case, str]]:
    """Each case in one dialect, in turn (or in every dialect: four times the time)."""
    if every_dialect:
        return [(case, dialect) for case in cases for dialect in DIALECTS]
    return [(case, DIALECTS[case.number % len(DIALECTS)]) for case in cases]


def sample_runs(edits: Sequence[BaseEdit], per_cell: int, seed: int = SAMPLE_SEED) -> list[tuple[Case, str]]:
    """``per_cell`` runs of every (category, dialect), each a different case, from seeded edits.

    The cases come from a seeded sample of the edits (enough for the rarest
    category), so the sample costs a fraction of building the whole corpus.
    """
    rng = random.Random(seed)
    pool = rng.sample(list(edits), min(len(edits), max(600, per_cell * len(DIALECTS) * 12)))
    by_category: dict[str, list[Case]] = {}
    for case in build_cases(pool):
        by_category.setdefault(case.category, []).append(case)
    runs: list[tuple[Case, str]] = []
    for category in CATEGORIES:
        cases = by_category.get(category.name, [])
        chosen = rng.sample(cases, min(len(cases), per_cell * len(DIALECTS)))
        runs.extend((case, DIALECTS[n % len(DIALECTS)]) for n, case in enumerate(chosen))
    return runs


def rows(results: Iterable[Result]) -> list[Row]:
    """One row per (category, dialect) in the corpus's order, plus an "all" row per category."""
    tally: dict[tuple[str, str], Counter[str]] = {}
    expects: dict[tuple[str, str], str] = {}
    for result in results:
        key = (result.case.category, result.dialect)
        tally.setdefault(key, Counter())[result.outcome] += 1
        expects[key] = expectation(result.case, result.dialect)
    table: list[Row] = []
    for category in CATEGORIES:
        for dialect in DIALECTS:
            key = (category.name, dialect)
            if key not in tally:
                continue
            count = tally[key]
            expect = expects[key]
            # a refusal due in one dialect only is due every time
            target = category.target if expect == category.expect else (1.0 if expect == "refuse" else None)
            table.append(
                Row(
                    category.name,
                    dialect,
                    expect,
                    sum(count.values()),
                    count["correct"],
                    count["refused"],
                    count["wrong"],
                    target,
                    count["guarded"],
                )
            )
    return table


def summary_rows(table: Sequence[Row]) -> list[Row]:
    """The table summed over dialects: one row per category (and expectation)."""
    summed: dict[tuple[str, str], Row] = {}
    for row in table:
        key = (row.category, row.expect)
        if key not in summed:
            summed[key] = Row(row.category, row.dialect, row.expect, 0, 0, 0, 0, row.target)
        total = summed[key]
        dialects = total.dialect
        if row.dialect not in dialects.split("+"):
            dialects = f"{dialects}+{row.dialect}"
        if set(dialects.split("+")) == set(DIALECTS):
            dialects = "all"
        summed[key] = Row(
            total.category,
            dialects,
            total.expect,
            total.cases + row.cases,
            total.correct + row.correct,
            total.refused + row.refused,
            total.wrong + row.wrong,
            total.target,
            total.guarded + row.guarded,
        )
    return list(summed.values())


def kind_rows(results: Iterable[Result]) -> list[tuple[str, Counter[str]]]:
    """Outcomes of the drift categories (not exact, ambiguous or absent) by kind of base edit."""
    counts: dict[str, Counter[str]] = {}
    for result in results:
        if result.case.category in ("exact", "ambiguous", "absent"):
            continue
        counts.setdefault(result.case.edit.kind, Counter())[result.outcome] += 1
    return sorted(counts.items(), key=lambda item: (item[0] != "real-diff", item[0]))


def format_kinds(kinds: Sequence[tuple[str, Counter[str]]]) -> str:
    lines = [
        "| base edit kind (drift categories) | runs | correct | refused | wrong |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, count in kinds:
        total = sum(count.values())
        cells = " | ".join(
            f"{count[o]:,} ({_percent(count[o] / total)})" for o in ("correct", "refused", "wrong")
        )
        lines.append(f"| {kind} | {total:,} | {cells} |")
    return "\n".join(lines)


def fuzzy_scores(results: Iterable[Result], dialect: str = "unified") -> dict[str, list[float]]:
    """Scores of fuzzy-located hunks in one dialect: correct, wrong at the edit's own
    line ("wrong-here": located right, written wrong) and wrong elsewhere."""
    scores: dict[str, list[float]] = {"correct": [], "wrong-here": [], "wrong-elsewhere": []}
    for result in results:
        if result.dialect != dialect or result.outcome == "refused":
            continue
        for tier, score, line in zip(result.tiers, result.scores, result.lines, strict=True):
            if tier != "fuzzy":
                continue
            if result.outcome == "correct":
                scores["correct"].append(score)
            elif line == result.case.edit.start + 1:
                scores["wrong-here"].append(score)
            else:
                scores["wrong-elsewhere"].append(score)
    return scores


def _region(text: str, start: int, end: int, lines: int = 1) -> str:
    """``text[start:end]`` widened to whole lines plus ``lines`` lines each side."""
    for _ in range(lines + 1):
        start = text.rfind("\n", 0, max(start - 1, 0)) + 1 if start > 0 else 0
    for _ in range(lines + 1):
        found = text.find("\n", end)
        end = len(text) if found < 0 else found + 1
    return text[start:end]


def repro(result: Result) -> dict[str, str]:
    """A compact reproduction of a wrong result: the file around the edit, old, new, got, expected."""
    case = result.case
    rendered = render(case, result.dialect)
    change = {"old": rendered[0], "new": rendered[1]} if isinstance(rendered, tuple) else {"change": rendered}
    before = case.variant.text
    start = case.variant.offset(case.edit.start)
    end = case.variant.offset(case.edit.end)
    out = {
        "category": case.category,
        "dialect": result.dialect,
        "source": f"{case.edit.source} (line {case.edit.start + 1})",
        "file": case.variant.path,
        "detail": result.detail,
        "tiers": ",".join(result.tiers),
        "file_around_edit": _region(before, start, end),
        **change,
    }
    if result.got is not None:
        expected = case.oracle() if expectation(case, result.dialect) == "recover" else before
        got = result.got
        prefix = 0
        limit = min(len(got), len(expected))
        while prefix < limit and got[prefix] == expected[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and got[-1 - suffix] == expected[-1 - suffix]:
            suffix += 1
        out["expected"] = _region(expected, prefix, len(expected) - suffix)
        out["got"] = _region(got, prefix, len(got) - suffix)
    return out


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def format_table(table: Sequence[Row]) -> str:
    lines = [
        "| category | dialect | cases | correct | refused | guarded | wrong | rate | target | result |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in table:
        kind = "recovered" if row.expect == "recover" else "refused"
        target = f">= {_percent(row.target)}" if row.target is not None else "0 wrong"
        lines.append(
            f"| {row.category} | {row.dialect} | {row.cases:,} | {row.correct:,} | {row.refused:,} | "
            f"{row.guarded:,} | {row.wrong:,} | {_percent(row.rate)} {kind} | {target} | {'pass' if row.passed else '**FAIL**'} |"
        )
    return "\n".join(lines)


_BINS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.94, 0.96, 0.98, 1.0)


def format_histogram(scores: dict[str, list[float]]) -> str:
    lines = [
        "| fuzzy score (unified diff, line number as locator) | correct | wrong, at the edit's line "
        "| wrong, elsewhere |",
        "|---|---:|---:|---:|",
    ]
    for low, high in zip(_BINS, _BINS[1:], strict=False):
        last = high == _BINS[-1]
        counts = [
            sum(1 for s in values if low <= s < high or (last and s == high)) for values in scores.values()
        ]
        lines.append(f"| {low:.2f}-{high:.2f} | " + " | ".join(f"{count:,}" for count in counts) + " |")
    below = [sum(1 for s in values if s < _BINS[0]) for values in scores.values()]
    lines.append("| below 0.50 | " + " | ".join(f"{count:,}" for count in below) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.drift_corpus", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sample", type=int, metavar="N", help="run a stratified sample of about N runs")
    parser.add_argument(
        "--every-dialect", action="store_true", help="run every case in all four dialects (4x the time)"
    )
    parser.add_argument("--json", action="store_true", help="print rows and wrong cases as JSON")
    parser.add_argument("--wrong", type=int, default=5, metavar="N", help="wrong cases to show per cell")
    parser.add_argument(
        "--dump",
        metavar="FILE",
        help="write one line a run (case, dialect, category, outcome, detail, sha256 of the planned bytes "
        "or of the refusal's message, CPU ms), to compare two trees' outcomes run by run",
    )
    arguments = parser.parse_args(argv)

    started = time.perf_counter()
    edits = base_edits()
    if arguments.sample:
        runs = sample_runs(edits, max(1, arguments.sample // (len(CATEGORIES) * len(DIALECTS))))
    else:
        runs = full_runs(build_cases(edits), arguments.every_dialect)
    cases = {case.number: case for case, _ in runs}
    built = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nbedit-drift-") as folder:
        results = run(runs, Path(folder))
    finished = time.perf_counter()
    if arguments.dump:
        with open(arguments.dump, "w", encoding="utf-8") as dump:
            for result in results:
                detail = result.detail.split("\n")[0].replace("\t", " ")
                dump.write(
                    f"{result.case.number}\t{result.dialect}\t{result.case.category}\t{result.outcome}\t"
                    f"{detail}\t{result.digest}\t{','.join(result.tiers)}\t"
                    f"{','.join(f'{score:.6f}' for score in result.scores)}\t"
                    f"{','.join(map(str, result.lines))}\t{1000 * result.seconds:.3f}\n"
                )

    table = rows(results)
    wrong: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        if result.outcome == "wrong":
            wrong.setdefault((result.case.category, result.dialect), []).append(result)
    shown = [repro(result) for cell in wrong.values() for result in cell[: arguments.wrong]]
    history = sum(1 for edit in edits if edit.kind == "real-diff")
    summary = {
        "base_edits": len(edits),
        "real_diff_edits": history,
        "stdlib_edits": len(edits) - history,
        "cases": len(cases),
        "runs": len(results),
        "build_seconds": round(built - started, 2),
        "run_seconds": round(finished - built, 2),
        "wrong": sum(row.wrong for row in table),
    }
    if arguments.json:
        payload = {
            "summary": summary,
            "rows": [
                {
                    "category": row.category,
                    "dialect": row.dialect,
                    "expect": row.expect,
                    "cases": row.cases,
                    "correct": row.correct,
                    "refused": row.refused,
                    "wrong": row.wrong,
                    "rate": row.rate,
                    "target": row.target,
                    "passed": row.passed,
                }
                for row in table
            ],
            "fuzzy_scores": fuzzy_scores(results),
            "kinds": {kind: dict(count) for kind, count in kind_rows(results)},
            "wrong_cases": shown,
        }
        json.dump(payload, sys.stdout, indent=1)
        print()
    else:
        print(
            f"{summary['base_edits']:,} base edits ({history:,} from real diffs, "
            f"{summary['stdlib_edits']:,} on stdlib modules) -> {len(cases):,} cases, {len(results):,} runs; "
            f"built in {summary['build_seconds']} s, run in {summary['run_seconds']} s\n"
        )
        print(format_table(summary_rows(table)))
        print()
        print(format_table(table))
        print()
        print(format_kinds(kind_rows(results)))
        print()
        print(format_histogram(fuzzy_scores(results)))
        print(f"\n{summary['wrong']:,} wrong results")
        for item in shown:
            print("\n" + "-" * 72)
            for key, value in item.items():
                print(f"{key}: {value!r}" if "\n" in value or key in ("old", "new") else f"{key}: {value}")
    return 0 if all(row.passed for row in table) else 1


if __name__ == "__main__":
    sys.exit(main())
