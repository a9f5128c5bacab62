"""Replies curled by a chat interface, on real files and notebooks: never a wrong result.

A sample of ``benchmarks/curled_replies.py`` (the whole run: ``python -m
benchmarks.bench_curled_replies``): made edits (a string changed, a keyword argument with
a string added, a line with a string added) on real ``.py`` files and on the code cells of
the real notebooks in ``tests/data/notebooks``, and real model replies to ``.py`` files,
each with its quotes curled. Every result is the straight edit's result, or a refusal;
the made edits are all applied.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.curled_replies import NOTEBOOKS, curl, made_cases, real_reply_cases, run
from benchmarks.real_replies import load_cases

CASES = load_cases()


def _python_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for case in CASES:
        for path, text in case.before.items():
            if text is not None and path.endswith(".py"):
                files[path] = text
    return files


def test_curl_renders_quotes_as_chat_interfaces_do() -> None:
    assert curl('print("it\'s", end="")') == "print(\u201cit\u2019s\u201d, end=\u201c\u201d)"
    assert curl("x = 'a'") == "x = \u2018a\u2019"


@pytest.fixture(scope="module")
def outcomes():  # type: ignore[no-untyped-def]
    rng = random.Random(21)
    files = _python_files()
    chosen = dict(rng.sample(sorted(files.items()), 4))
    made = made_cases(chosen, sorted(NOTEBOOKS.glob("*.ipynb"))[:6], per_file=6)
    real = rng.sample(real_reply_cases(CASES), 20)
    return run(made, real)


def test_no_curled_reply_is_applied_wrongly(outcomes) -> None:  # type: ignore[no-untyped-def]
    wrong = [outcome for outcome in outcomes if outcome.outcome == "wrong"]
    assert not wrong, wrong
    assert {outcome.source for outcome in outcomes} == {"python", "notebooks", "real-replies"}


def test_curled_made_edits_land_in_the_files_quotes(outcomes) -> None:  # type: ignore[no-untyped-def]
    made = [outcome for outcome in outcomes if outcome.source != "real-replies"]
    assert len(made) >= 30
    assert sum(outcome.outcome == "right" for outcome in made) >= 0.95 * len(made)
