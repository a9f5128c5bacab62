""""Why here?" gives every tier a score, a one-line summary, and whitespace made visible.

Real plans on real files, one per tier of the matcher's cascade; the score is the similarity of
the text the change expected and the text found (1.00 exactly when they are equal), the fuzzy
tier's own window score where that tier decided.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit.engine.explain import cell_line, found_text, reason, similarity
from nbedit.engine.models import Tier
from nbedit.render.review_data import review_document
from nbedit.workspace import Workspace

# (file bytes, old, new, tier, lowest and highest score, words of the summary)
CASES = {
    "exact": (b"a = 1\nb = 2\n", "b = 2\n", "b = 3\n", Tier.EXACT, 1.0, 1.0, "Found verbatim at line 2"),
    "line-endings": (
        b"a = 1\r\nb = 2\r\nc = 3\r\n", "a = 1\nb = 2\n", "a = 1\nb = 3\n", Tier.LINE_ENDINGS, 0.85, 0.99,
        "other line endings",
    ),
    "trailing-whitespace": (
        b"def f():\n    x = 1  \n    return x\n", "    x = 1\n    return x\n", "    x = 2\n    return x\n",
        Tier.TRAILING_WHITESPACE, 0.9, 0.99, "trailing spaces are ignored",
    ),
    "unicode": (
        "y = \u201cq\u201d\nz = 1\n".encode(), 'y = "q"\n', 'y = "r"\n', Tier.UNICODE, 0.5, 0.95,
        "curly quotes",
    ),
    "indentation": (
        b"if True:\n\tif x:\n\t\tdo(1)\n\t\tdo(2)\n", "if x:\n    do(1)\n    do(2)\n",
        "if x:\n    do(1)\n    do(3)\n", Tier.INDENTATION, 0.5, 0.95, "another indentation",
    ),
    "fuzzy": (
        "".join(f"line_{n} = {n}\n" for n in range(1, 40)).encode(),
        "line_10 = 10\nline_11 = 1l\nline_12 = 12\nline_13 = 13\n",
        "line_10 = 10\nline_11 = 11\nline_12 = 120\nline_13 = 13\n",
        Tier.FUZZY, 0.9, 0.99, "the closest text",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_tier_has_a_score_and_a_plain_summary(tmp_path: Path, name: str) -> None:
    data, old, new, tier, low, high, words = CASES[name]
    (tmp_path / "f.py").write_bytes(data)
    plan = Workspace(tmp_path, history=False).plan_edit("f.py", old, new)
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    assert located.tier is tier
    found = found_text(file_plan, located)
    shown = reason(located, found)
    assert low <= shown.score <= high, shown
    assert (shown.score == 1.0) == (tier is Tier.EXACT)
    assert words in shown.summary and "\n" not in shown.summary
    assert shown.summary.startswith("Found verbatim" if tier is Tier.EXACT else "Not found verbatim; placed at")
    explained = plan.explain().split("\n")
    word = "similarity" if tier not in (Tier.EXACT, Tier.FUZZY) else "score"
    assert explained[1].endswith(f"{word} {shown.score:.2f}")
    assert explained[2].strip() == shown.summary
    if tier is not Tier.FUZZY:
        assert shown.score == pytest.approx(similarity(old, found))
    assert (tmp_path / "f.py").read_bytes() == data  # explaining never writes


def test_blank_lines_tier_scores_the_text_as_found(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("def run():\n    work()\n\n\nif __name__ == '__main__':\n    run()\n")
    old = "    work()\n\nif __name__ == '__main__':\n    run()\n"  # one blank line where the file has two
    new = "if __name__ == '__main__':\n    run()\n"  # removes the lines, blank run included
    plan = Workspace(tmp_path, history=False).plan_edit("f.txt", old, new)
    (located,) = plan.files[0].hunks
    assert located.tier is Tier.BLANK_LINES
    shown = reason(located, found_text(plan.files[0], located))
    assert 0.9 < shown.score < 1.0 and "blank lines" in shown.summary


def test_whitespace_only_differences_are_made_visible(tmp_path: Path) -> None:
    data, old, new, *_ = CASES["indentation"]
    (tmp_path / "f.py").write_bytes(data)
    plan = Workspace(tmp_path, history=False).plan_edit("f.py", old, new)
    (located,) = plan.files[0].hunks
    shown = reason(located, found_text(plan.files[0], located))
    comparison = dict(shown.rows)["expected (-) vs in the file (+)"].split("\n")
    # the three expected lines pair with the three found lines (a run of - then a run of +)
    assert [comparison[index] for index in shown.whitespace] == [
        "-if x:", "-    do(1)", "-    do(2)", "+\tif x:", "+\t\tdo(1)", "+\t\tdo(2)"
    ]
    text = plan.explain()
    assert "(· a space, → a tab):" in text and "-····do(1)" in text and "+→→do(1)" in text
    why = review_document(plan)["files"][0]["sections"][0]["hunks"][0]["why"]
    assert why["ws"] == list(shown.whitespace) and why["score"] == f"{shown.score:.2f} (similarity)"


def test_a_notebook_hunk_is_placed_by_its_line_within_the_cell(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"a_{n} = {n}\nb_{n} = {n}  ") for n in range(4)]
    for number, cell in enumerate(notebook.cells):
        cell.id = f"c{number}"
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    plan = Workspace(tmp_path, history=False).plan_edit("n.ipynb", "b_2 = 2", "b_2 = 20")
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    assert located.line > 6  # a line of the whole cell view
    assert cell_line(file_plan, located) == (2, 1)
    shown = reason(located, found_text(file_plan, located), (2, 1))
    assert shown.summary == "Found verbatim at line 2 of cell 2 (id c2, code): score 1.00."
    assert "hunk 1, line 2 of cell 2 (id c2, code): exact match, score 1.00" in plan.explain()
