"""Replay every real model reply in ``tests/data/real-replies`` and print the figures.

``python -m benchmarks.bench_real_replies`` (about half a minute): applied right among the
cases whose committed result is right, wrong results (each listed), refusals by reason,
the fuzzy tier's precision, and the baselines recorded with the corpus (a strict exact-match
replacement and a first-occurrence replacement, counted right where they equal the oracle).
``--wrong`` also prints every wrong case's reply; ``--refused`` every refusal's message;
``--json`` the summary for machines; ``--sample`` the test suite's stratified sample only;
``--corpus-labels`` judges by the corpus's own labels, without the labels read by hand
(``tests/data/real-replies/read-by-hand.json``: committed results that are wrong, ambiguous
replies, cases whose files the corpus lacks).
Exit status 1 when any result is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from benchmarks.real_replies import load_cases, replay, stratified_sample, summary


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", action="store_true", help="the test suite's stratified sample only")
    parser.add_argument("--wrong", action="store_true", help="print every wrong case in full")
    parser.add_argument("--refused", action="store_true", help="print every refusal's message")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--id", action="append", default=[], help="replay these case ids only")
    parser.add_argument(
        "--corpus-labels",
        action="store_true",
        help="judge by the corpus's own labels (without tests/data/real-replies/read-by-hand.json)",
    )
    args = parser.parse_args(argv)

    cases = load_cases(read_by_hand=not args.corpus_labels)
    if args.sample:
        cases = stratified_sample(cases)
    if args.id:
        cases = [case for case in cases if case.id in set(args.id)]
    started = time.perf_counter()
    outcomes = replay(cases)
    seconds = time.perf_counter() - started
    figures = summary(outcomes)
    if args.json:
        print(json.dumps({**figures, "seconds": round(seconds, 2)}, indent=2))
        return 1 if figures["wrong"] else 0

    whole = int(figures["right_labelled"])  # type: ignore[call-overload]
    print(f"real replies: {figures['cases']} cases in {seconds:.1f} s; {whole} whose right result is known")
    print()
    print("| tool | applied right | of right-labelled | wrong |")
    print("|---|---|---|---|")
    print(
        f"| nbedit | {figures['applied_right']} | {_percent(figures['applied_right'], whole)} | "  # type: ignore[arg-type]
        f"{figures['wrong']} |"
    )
    print(
        f"| exact-match replacement (recorded) | {figures['baseline_exact_right']} | "
        f"{_percent(figures['baseline_exact_right'], whole)} | - |"  # type: ignore[arg-type]
    )
    print(
        f"| first-occurrence replacement (recorded) | {figures['baseline_first_occurrence_right']} | "
        f"{_percent(figures['baseline_first_occurrence_right'], whole)} | - |"  # type: ignore[arg-type]
    )
    print()
    print(
        f"refused {figures['refused']} ({figures['refused_when_due']} where a refusal is due), "
        f"already applied {figures['already_applied']}, unjudged {figures['unjudged']}; "
        f"fuzzy tier used {figures['fuzzy_used']} times, wrong {figures['fuzzy_wrong']}"
    )
    print("refusals by reason:")
    for reason, count in figures["refusals"].items():  # type: ignore[union-attr]
        print(f"  {count:4d}  {reason}")
    wrong = [outcome for outcome in outcomes if outcome.kind == "wrong"]
    if wrong:
        print("wrong:")
    for outcome in wrong:
        print(f"  {outcome.case.id} [{outcome.case.dialect}, {outcome.case.label}] {outcome.reason} {outcome.tiers}")
        if args.wrong:
            print("    " + (outcome.case.text or f"{outcome.case.old!r} -> {outcome.case.new!r}")[:3000])
    if args.refused:
        for outcome in outcomes:
            if outcome.kind == "refused":
                print(f"  {outcome.case.id} [{outcome.case.dialect}] {outcome.reason}: {outcome.message[:400]}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
