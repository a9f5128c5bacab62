"""Real drift with a line-number locator: the evidence for the fuzzy tier's floor.

A unified diff carries line numbers, and the fuzzy tier trusts them: with a
locator, the context around a hunk may score below the normal threshold (the
hunk's changed lines must still be in the file exactly). How low may it go?
This script measures it on *real* drift, not made-up drift:

- for releases A < B < C of click and packaging (the archives in
  ``tests/data/real-history``; C follows B, A is one to three releases before B),
  the diff B -> C of each source file is applied to the file as it was in
  release A, whose lines drifted for real between A and B;
- the oracle is ``git merge-file`` (a three-way merge of A and C over B): when it
  merges cleanly, that is the intended file; conflicting files are left out;
- every case is planned at several floors; the outcome is correct (the planned
  file equals the merge), refused (an nbedit error) or wrong (anything else), and
  the score of every hunk the fuzzy tier placed is recorded.

``python -m benchmarks.locator_floor`` prints, per floor, the outcome counts and
a histogram of the fuzzy scores of correct and wrong placements.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nbedit.engine.match import fuzzy
from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "real-history"
FLOORS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
SUFFIXES = (".py", ".rst", ".txt", ".toml", ".cfg", ".md")


@dataclass(frozen=True, slots=True)
class DriftedDiff:
    name: str  # project version-triple and path
    drifted: str  # the file in release A
    diff: str  # the change B -> C of that file, as a unified diff
    intended: str  # git merge-file of A and C over B


def _releases(folder: Path) -> list[str]:
    return (folder / "versions.txt").read_text().split()


def drifted_diffs(root: Path) -> Iterator[DriftedDiff]:
    """Every source file changed B -> C that also drifted A -> B and merges cleanly."""
    for archive in sorted(DATA.glob("*-history.tar.xz")):
        project = archive.name.split("-history")[0]
        target = root / project
        with tarfile.open(archive) as opened:
            opened.extractall(target, filter="data")
        releases = _releases(target)
        triples = [
            (releases[number - gap], releases[number], releases[number + 1])
            for gap in (1, 2, 3)
            for number in range(gap, len(releases) - 1)
        ]
        for first, middle, last in triples:
            trees = [target / "trees" / version for version in (first, middle, last)]
            for path in sorted(trees[1].rglob("*")):
                relative = path.relative_to(trees[1])
                if not path.is_file() or path.suffix not in SUFFIXES:
                    continue
                files = [tree / relative for tree in trees]
                if not all(file.is_file() for file in files):
                    continue
                texts = [file.read_text(encoding="utf-8") for file in files]
                if texts[0] == texts[1] or texts[1] == texts[2] or "\r" in "".join(texts):
                    continue
                merged = subprocess.run(
                    ["git", "merge-file", "-p", str(files[0]), str(files[1]), str(files[2])],
                    capture_output=True,
                    check=False,
                )
                if merged.returncode != 0:
                    continue  # conflicts: no single intended result
                diff = "".join(
                    difflib.unified_diff(
                        texts[1].splitlines(keepends=True),
                        texts[2].splitlines(keepends=True),
                        f"a/{relative}",
                        f"b/{relative}",
                    )
                )
                if "\\ No newline" in diff or not diff:
                    continue
                yield DriftedDiff(
                    f"{project} {first}/{middle}/{last} {relative}", texts[0], diff, merged.stdout.decode()
                )


def run(cases: list[DriftedDiff], floor: float, root: Path) -> tuple[Counter[str], list[tuple[float, str]]]:
    fuzzy.LOCATOR_CONTEXT_FLOOR = floor
    outcomes: Counter[str] = Counter()
    scores: list[tuple[float, str]] = []
    for number, case in enumerate(cases):
        folder = root / f"case{number}"
        folder.mkdir(parents=True, exist_ok=True)
        relative = case.diff.split("\n", 1)[0][len("--- a/") :]
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(case.drifted)
        try:
            plan = Workspace(folder, history=False).plan_patch(case.diff)
        except NbeditError:
            outcomes["refused"] += 1
            continue
        outcome = "correct" if plan.files[0].after == case.intended else "wrong"
        outcomes[outcome] += 1
        scores.extend((hunk.score, outcome) for hunk in plan.files[0].hunks if hunk.tier.value == "fuzzy")
    return outcomes, scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--floors", type=float, nargs="*", default=list(FLOORS))
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        cases = list(drifted_diffs(root / "data"))
        hunks = sum(case.diff.count("\n@@ ") for case in cases)
        print(f"{len(cases)} real drifted file diffs ({hunks} hunks): release B->C applied to release A\n")
        print(
            "| floor | correct | refused | wrong | fuzzy hunks (correct / wrong) | lowest correct fuzzy score |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        histogram: list[tuple[float, str]] = []
        for floor in arguments.floors:
            outcomes, scores = run(cases, floor, root / f"floor{floor}")
            right = [score for score, outcome in scores if outcome == "correct"]
            wrong = [score for score, outcome in scores if outcome == "wrong"]
            lowest = f"{min(right):.2f}" if right else "-"
            print(
                f"| {floor:.2f} | {outcomes['correct']} | {outcomes['refused']} | {outcomes['wrong']} | "
                f"{len(right)} / {len(wrong)} | {lowest} |"
            )
            if floor == min(arguments.floors):
                histogram = scores
        print("\nfuzzy scores at the lowest floor (hunks in correct / wrong files):")
        bins = [
            (0.0, 0.5),
            (0.5, 0.6),
            (0.6, 0.7),
            (0.7, 0.8),
            (0.8, 0.85),
            (0.85, 0.9),
            (0.9, 0.95),
            (0.95, 1.01),
        ]
        for low, high in bins:
            inside = [outcome for score, outcome in histogram if low <= score < high]
            print(f"  {low:.2f}-{min(high, 1.0):.2f}: {inside.count('correct')} / {inside.count('wrong')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
