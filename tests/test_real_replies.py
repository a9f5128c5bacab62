"""A stratified sample of real model replies, replayed on real files: never a wrong result.

About 90 of the 982 real edits in ``tests/data/real-replies`` (aider's history: SEARCH/REPLACE
replies, aider's unified diffs, old/new pairs), every dialect x label x exact-baseline stratum
represented and every case labelled by hand kept (``benchmarks.real_replies.stratified_sample``).
Each is written to a temporary folder, applied through ``Workspace.plan_patch``/``plan_edit`` and
``Workspace.apply``, and the folder compared with the committed result (see
``benchmarks/real_replies.py`` for how a result is judged). ``python -m benchmarks.bench_real_replies``
runs the whole set.
"""

from __future__ import annotations

import pytest

from benchmarks.real_replies import ALWAYS_SAMPLED, load_cases, replay_case, stratified_sample, summary

CASES = load_cases()
SAMPLE = stratified_sample(CASES)

# cases nbedit still gets wrong: each is an xfail that fails the test once it is right (take it out then);
# the set never grows. Empty: d02506db16:t3 (an empty SEARCH under a `<source>python` fence) edits a
# file the corpus does not hold, so it has no oracle now (benchmarks.real_replies.load_cases).
KNOWN_WRONG: frozenset[str] = frozenset()
KNOWN_WRONG_REASON: dict[str, str] = {}

# applied right among the sample's cases whose right result is known (measured, then held)
RIGHT_FLOOR = 0.95


def test_the_sample_covers_every_dialect_and_the_hand_labelled_cases() -> None:
    assert 60 <= len(SAMPLE) <= 120
    assert {case.dialect for case in SAMPLE} == {"search_replace", "udiff", "old_new"}
    hand_labelled = {case.id for case in CASES if case.label in ("nbedit-wrong", "ambiguous", "cosmetic")}
    assert hand_labelled <= {case.id for case in SAMPLE}


@pytest.mark.parametrize("case", SAMPLE, ids=lambda case: case.id)
def test_a_real_reply_is_never_applied_wrongly(case, tmp_path) -> None:
    outcome = replay_case(case, tmp_path)
    if case.id in KNOWN_WRONG:
        assert outcome.kind == "wrong", f"{case.id} is right now: take it out of KNOWN_WRONG"
        pytest.xfail(f"known wrong: {KNOWN_WRONG_REASON.get(case.id, case.label_reason)}")
    assert outcome.kind != "wrong", f"{case.id} ({case.source}): {outcome.reason}; tiers {outcome.tiers}"
    if case.expect_refuse:
        assert outcome.kind == "refused"


def test_most_real_replies_are_applied_right(tmp_path) -> None:
    outcomes = [replay_case(case, tmp_path) for case in SAMPLE if case.id not in KNOWN_WRONG]
    figures = summary(outcomes)
    assert figures["applied_right"] >= RIGHT_FLOOR * figures["right_labelled"], figures
    # every refusal says what to do next (a message, not a bare class)
    for outcome in outcomes:
        if outcome.kind == "refused":
            assert len(outcome.message) > 40, (outcome.case.id, outcome.message)


def test_the_replies_recovered_by_reading_them_as_meant_are_right(tmp_path) -> None:
    """Elisions, pasted line numbers, one block per place: each real reply lands as its oracle says."""
    recovered = [case for case in SAMPLE if case.id in ALWAYS_SAMPLED]
    assert len(recovered) == len(ALWAYS_SAMPLED)
    for case in recovered:
        outcome = replay_case(case, tmp_path)
        assert outcome.kind == "right", (case.id, outcome.reason, outcome.message[:300])
