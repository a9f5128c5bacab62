"""Replay real model replies through nbedit and judge every result against what was committed.

The cases are aider's own history (``tests/data/real-replies``, see its SOURCE.md): a model's
reply (SEARCH/REPLACE blocks, aider's unified diffs, or the old/new pair an agent's
``str_replace`` would carry), the files as they were when the reply was written, and the files
as committed. Nothing is perturbed: this is how real models get edits wrong, which is not the
drift a synthetic corpus imagines.

Each case is written to a temporary folder as real files and applied through the public API
(``Workspace.plan_patch`` / ``Workspace.plan_edit``, then ``Workspace.apply``, history off). The
folder afterwards is compared with the expected folder, file by file, by SHA-256:

- **right**: every file is as the oracle says (``after``, or one of ``accepted``; where ``label``
  is ``oracle-wrong`` the committed result is itself wrong, so only ``accepted`` counts;
  ``cosmetic`` compares ignoring trailing blanks, blank-line runs and the final newline);
- **wrong**: any other bytes, a file created that the oracle does not have, a success where
  ``expect_refuse`` says a refusal is due, a silent "already applied" where the oracle changed
  the files, or an exception that is not an ``NbeditError``;
- **refused**: an ``NbeditError`` (its class is the reason; planning and applying leave every
  file as it was, which is checked too: a refusal that changed a file is wrong);
- **already-applied**: nbedit found nothing to do and the oracle agrees (the files are as before);
- **unjudged**: applied where there is no oracle (``no-oracle``).

``benchmarks/bench_real_replies.py`` runs the whole set and prints the table;
``tests/test_real_replies.py`` runs a stratified sample.
"""

from __future__ import annotations

import json
import lzma
import random
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nbedit.errors import NbeditError
from nbedit.workspace import Workspace

__all__ = [
    "DATA",
    "Outcome",
    "RealCase",
    "load_cases",
    "replay",
    "replay_case",
    "stratified_sample",
    "summary",
]

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "real-replies"

# labels whose cases have a right result to reach (the denominator of "applied right")
RIGHT_LABELS = ("oracle", "oracle-wrong", "nbedit-wrong", "cosmetic", "ambiguous")


@dataclass(frozen=True, slots=True)
class RealCase:
    """One real edit: the reply, the files before, and every result judged right."""

    id: str
    dialect: str
    label: str
    expect_refuse: bool
    before: dict[str, str | None]  # path -> text (None: the file did not exist)
    right: tuple[dict[str, str | None], ...]  # acceptable results, path -> text
    text: str | None = None
    path: str | None = None
    old: str | None = None
    new: str | None = None
    label_reason: str | None = None
    baselines: dict = field(default_factory=dict)
    source: str = ""

    @property
    def right_labelled(self) -> bool:
        """A case whose right answer is a result (not a refusal, not unknown)."""
        return not self.expect_refuse and bool(self.right) and self.label in RIGHT_LABELS


@dataclass(frozen=True, slots=True)
class Outcome:
    case: RealCase
    kind: str  # right | wrong | refused | already-applied | unjudged
    reason: str = ""  # the error's class for a refusal; what went wrong for a wrong result
    message: str = ""
    tiers: tuple[str, ...] = ()  # the match tiers of the located hunks

    @property
    def correct(self) -> bool:
        if self.kind == "refused":
            return self.case.expect_refuse
        return self.kind in ("right", "already-applied")


def _read_jsonl(path: Path) -> Iterable[dict]:
    with lzma.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _read_by_hand(folder: Path) -> dict[str, dict]:
    """Labels read by hand after the corpus was made (``read-by-hand.json``, see SOURCE.md), by id.

    An entry labels its case and the case's old/new pair (``<id>:old_new``, the same block).
    """
    path = folder / "read-by-hand.json"
    if not path.exists():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {key: entry for entry in entries for key in (entry["id"], entry["id"] + ":old_new")}


def _replaced(
    before: dict[str, str | None], replacements: dict[str, list[list[str]]]
) -> dict[str, str | None]:
    """``before`` with each (old, new) pair replaced; every old text must occur exactly once."""
    state = dict(before)
    for path, pairs in replacements.items():
        text = state[path]
        assert text is not None, path
        for old, new in pairs:
            assert text.count(old) == 1, (path, old[:60], text.count(old))
            text = text.replace(old, new)
        state[path] = text
    return state


def load_cases(folder: Path = DATA, *, read_by_hand: bool = True) -> list[RealCase]:
    """Every case; ``read_by_hand=False``: the corpus's own labels only (no ``read-by-hand.json``,
    and cases whose files the corpus lacks keep their label)."""
    blobs = {row["sha256"]: row["text"] for row in _read_jsonl(folder / "blobs.jsonl.xz")}
    by_hand = _read_by_hand(folder) if read_by_hand else {}

    def texts(hashes: dict[str, str | None]) -> dict[str, str | None]:
        return {path: (None if digest is None else blobs[digest]) for path, digest in hashes.items()}

    cases = []
    for row in _read_jsonl(folder / "cases.jsonl.xz"):
        before = texts(row["before"])
        right: list[dict[str, str | None]] = []
        hand = by_hand.get(row["id"])
        if hand is not None:
            row = {
                **row,
                "label": hand["label"],
                "expect_refuse": hand["expect_refuse"],
                "label_reason": hand["reason"],
            }
            if "replacements" in hand:
                right.append(_replaced(before, hand["replacements"]))
        elif read_by_hand and all(text is None for text in before.values()) and all(
            digest is None for digest in (row.get("after") or {}).values()
        ):
            # the corpus holds none of the files the reply edits (it keyed them by a misread
            # path): nothing can be judged
            row = {
                **row,
                "label": "no-oracle",
                "expect_refuse": False,
                "label_reason": "the corpus does not hold the edited file",
            }
        if row.get("after") is not None and row["label"] not in ("oracle-wrong", "no-oracle"):
            right.append({**before, **texts(row["after"])})
        for accepted in row.get("accepted") or ():
            candidate = {**before, **texts(accepted)}
            if candidate not in right:
                right.append(candidate)
        cases.append(
            RealCase(
                id=row["id"],
                dialect=row["dialect"],
                label=row["label"],
                expect_refuse=bool(row.get("expect_refuse")),
                before=before,
                right=tuple(right),
                text=row.get("text"),
                path=row.get("path"),
                old=row.get("old"),
                new=row.get("new"),
                label_reason=row.get("label_reason"),
                baselines=row.get("baselines") or {},
                source=row.get("source", ""),
            )
        )
    return cases


def _cosmetic(text: str | None) -> str | None:
    if text is None:
        return None
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{2,}", "\n", "\n".join(lines)).strip("\n")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".nbedit" not in path.relative_to(root).parts
    }


def _expected(state: dict[str, str | None]) -> dict[str, bytes]:
    return {path: text.encode("utf-8") for path, text in state.items() if text is not None}


def _same(found: dict[str, bytes], wanted: dict[str, bytes], cosmetic: bool) -> bool:
    if not cosmetic:
        return found == wanted
    if set(found) != set(wanted):
        return False
    return all(_cosmetic(found[p].decode("utf-8", "replace")) == _cosmetic(wanted[p].decode()) for p in found)


def _plan(workspace: Workspace, case: RealCase):  # type: ignore[no-untyped-def]
    if case.dialect == "old_new":
        assert case.path is not None and case.old is not None and case.new is not None
        return workspace.plan_edit(case.path, case.old, case.new)
    assert case.text is not None
    return workspace.plan_patch(case.text)


def replay_case(case: RealCase, scratch: Path | None = None) -> Outcome:
    """Apply one case to real files in a temporary folder and judge the result."""
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        root = Path(folder)
        for path, text in case.before.items():
            if text is None:
                continue
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        original = _snapshot(root)
        workspace = Workspace(root, history=False, live=None)
        tiers: tuple[str, ...] = ()
        try:
            plan = _plan(workspace, case)
            tiers = tuple(
                str(getattr(hunk.match.tier, "value", hunk.match.tier))
                for file_plan in plan.files
                for hunk in file_plan.hunks
                if getattr(hunk, "match", None) is not None
            )
            noop = all(file_plan.already_applied or not file_plan.changed for file_plan in plan.files)
            if not noop:
                workspace.apply(plan)
        except NbeditError as error:
            if _snapshot(root) != original:
                return Outcome(case, "wrong", "a refusal changed a file", str(error), tiers)
            return Outcome(case, "refused", type(error).__name__, str(error), tiers)
        except Exception as error:  # noqa: BLE001 -- a crash is a wrong result, reported as such
            return Outcome(case, "wrong", f"crash: {type(error).__name__}", str(error), tiers)
        finally:
            workspace.close()
        found = _snapshot(root)
    if case.expect_refuse:
        return Outcome(case, "wrong", "applied where a refusal is due", "", tiers)
    if not case.right:
        return Outcome(case, "unjudged", "no oracle", "", tiers)
    cosmetic = case.label == "cosmetic"
    if any(_same(found, _expected(state), cosmetic) for state in case.right):
        if noop:
            return Outcome(case, "already-applied", "", "", tiers)
        return Outcome(case, "right", "", "", tiers)
    if noop:
        return Outcome(case, "wrong", "reported already applied, the oracle changed the files", "", tiers)
    return Outcome(case, "wrong", "other bytes than the oracle", "", tiers)


def replay(cases: Sequence[RealCase], scratch: Path | None = None) -> list[Outcome]:
    return [replay_case(case, scratch) for case in cases]


def _stratum(case: RealCase) -> tuple[str, str, str]:
    exact = case.baselines.get("exact", {})
    return (case.dialect, case.label if case.label != "oracle" else "oracle", str(exact.get("outcome")))


# real replies recovered by a reading of issue 21 (``nbedit.engine.readings``), always in the sample:
# elisions expanded, pasted line numbers dropped, one block given once per place, kept blank runs,
# lines the reply's context skipped, a line the reply joined
ALWAYS_SAMPLED = (
    "aider-repo:9beebc366d:t1",
    "aider-repo:d996fbe1c3:t1",
    "aider-repo:d996fbe1c3:t1:old_new",
    "aider-repo:f21857655e:t3",
    "aider-repo:091bcaa1a2:t1",
    "aider-repo:108abe4a49:t1",
    "aider-repo:4bb043f5c0:t3",
    "aider-repo:84421d8651:t1",
    "aider-repo:cac627ae5f:t1",
    "aider-repo:695299be3d:t0",
    "aider-repo:743179a4bd:t13",
    "aider-repo:fca8ea3c21:t1",
    "aider-repo:4dee2ab2f4:t1",
    "aider-repo:bd1c8b625d:t3",
)


def stratified_sample(cases: Sequence[RealCase], size: int = 80, seed: int = 21) -> list[RealCase]:
    """About ``size`` cases, every stratum (dialect x label x exact-baseline outcome) represented,
    every case labelled by hand as nbedit-wrong, ambiguous or cosmetic kept, the cases in
    ``ALWAYS_SAMPLED`` kept, the rest in proportion."""
    strata: dict[tuple[str, str, str], list[RealCase]] = defaultdict(list)
    always = [case for case in cases if case.id in ALWAYS_SAMPLED]
    for case in cases:
        if case.id not in ALWAYS_SAMPLED:
            strata[_stratum(case)].append(case)
    rng = random.Random(seed)
    chosen: list[RealCase] = list(always)
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda case: case.id)
        if key[1] in ("nbedit-wrong", "ambiguous", "cosmetic"):
            take = len(members)
        else:
            take = max(1, round(size * len(members) / len(cases)))
        chosen.extend(rng.sample(members, min(take, len(members))))
    return sorted(chosen, key=lambda case: case.id)


def summary(outcomes: Sequence[Outcome]) -> dict[str, object]:
    """The figures of a run: applied right among right-labelled cases, wrong, refusals by reason."""
    right_labelled = [o for o in outcomes if o.case.right_labelled]
    kinds = Counter(o.kind for o in outcomes)
    refusals = Counter(o.reason for o in outcomes if o.kind == "refused")
    fuzzy = [o for o in outcomes if "fuzzy" in o.tiers]
    exact_baseline = sum(
        1
        for o in right_labelled
        if o.case.baselines.get("exact", {}).get("outcome") == "applied"
        and o.case.baselines.get("exact", {}).get("equals_oracle")
        and o.case.label == "oracle"
    )
    first_baseline = sum(
        1
        for o in right_labelled
        if o.case.baselines.get("first_occurrence", {}).get("outcome") == "applied"
        and o.case.baselines.get("first_occurrence", {}).get("equals_oracle")
        and o.case.label == "oracle"
    )
    return {
        "cases": len(outcomes),
        "right_labelled": len(right_labelled),
        "applied_right": sum(1 for o in right_labelled if o.kind in ("right", "already-applied")),
        "wrong": kinds["wrong"],
        "refused": kinds["refused"],
        "refused_when_due": sum(1 for o in outcomes if o.kind == "refused" and o.case.expect_refuse),
        "already_applied": kinds["already-applied"],
        "unjudged": kinds["unjudged"],
        "refusals": dict(refusals.most_common()),
        "fuzzy_used": len(fuzzy),
        "fuzzy_wrong": sum(1 for o in fuzzy if o.kind == "wrong"),
        "baseline_exact_right": exact_baseline,
        "baseline_first_occurrence_right": first_baseline,
    }
