"""The matcher cascade: each tier, uniqueness at every tier, refusal with candidates."""

from __future__ import annotations

import pytest

from nbedit.engine.match import FileIndex, MatchOptions, locate
from nbedit.engine.models import Hunk, Tier
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch


def place(text: str, hunk: Hunk, **kwargs):
    (match,) = locate(FileIndex(text), hunk, **kwargs)
    return match, text[: match.start] + match.replacement + text[match.end :]


def lines_hunk(old: str, new: str, **kwargs) -> Hunk:
    return Hunk(old=old, new=new, whole_lines=True, **kwargs)


def test_exact_substring_mid_line():
    match, after = place("x = compute(a, b)\n", Hunk("compute(a, b)", "compute(b, a)", whole_lines=False))
    assert match.tier is Tier.EXACT and after == "x = compute(b, a)\n"


def test_line_endings_tier_keeps_crlf():
    text = "one\r\ntwo\r\nthree\r\n"
    match, after = place(text, lines_hunk("two\nthree\n", "TWO\nthree\n"))
    assert match.tier is Tier.LINE_ENDINGS
    assert after == "one\r\nTWO\r\nthree\r\n"


def test_mixed_endings_survive_line_by_line():
    text = "a\r\nb\nc\r\nd\n"
    match, after = place(text, lines_hunk("a\nb\nc\n", "a\nB\nc\n"))
    assert after == "a\r\nB\nc\r\nd\n"


def test_trailing_whitespace_tier_keeps_context_bytes():
    text = "keep   \nchange\t\nkeep too  \n"
    match, after = place(text, lines_hunk("keep\nchange\nkeep too\n", "keep\nchanged\nkeep too\n"))
    assert match.tier is Tier.TRAILING_WHITESPACE
    assert after == "keep   \nchanged\nkeep too  \n"


def test_unicode_tier_keeps_curly_quotes_in_replacement():
    text = "print(\u201chello\u201d)\nit\u2019s \u2014 fine\n"
    match, after = place(text, lines_hunk('print("hello")\n', 'print("goodbye")\n'))
    assert match.tier is Tier.UNICODE
    assert after == "print(\u201cgoodbye\u201d)\nit\u2019s \u2014 fine\n"


def test_indentation_tier_reindents_replacement():
    text = "class A:\n    def f(self):\n        return 1\n"
    match, after = place(
        text, lines_hunk("def f(self):\n    return 1\n", "def f(self):\n    x = 2\n    return x\n")
    )
    assert match.tier is Tier.INDENTATION
    assert after == "class A:\n    def f(self):\n        x = 2\n        return x\n"


def test_indentation_tier_dedents_when_file_is_less_indented():
    text = "def f():\n    return 1\n"
    match, after = place(
        text, lines_hunk("    def f():\n        return 1\n", "    def f():\n        return 2\n")
    )
    assert match.tier is Tier.INDENTATION
    assert after == "def f():\n    return 2\n"


def test_non_uniform_indent_is_not_the_indentation_tier():
    text = "if x:\n  a()\n      b()\n"
    with pytest.raises(NoMatch):
        locate(
            FileIndex(text),
            lines_hunk("if x:\n    a()\n    b()\n", "if x:\n    a()\n"),
            options=MatchOptions(threshold=0.99),
        )


def test_fuzzy_tier_finds_block_with_a_changed_token():
    body = [f"    value_{n} = compute({n}, alpha, beta)\n" for n in range(20)]
    text = "".join(f"line {n} of filler text\n" for n in range(500)) + "def target():\n" + "".join(body)
    query = "def target():\n" + "".join(body).replace("compute(7,", "compute(7 ,").replace(
        "alpha, beta)\n", "alpha,beta)\n", 1
    )
    new = query.replace("value_3 =", "renamed_3 =")
    match, after = place(text, lines_hunk(query, new))
    assert match.tier is Tier.FUZZY and 0.9 <= match.score < 1
    assert "    renamed_3 = compute(3, alpha, beta)\n" in after
    # the drifted context lines were kept as the file has them
    assert "    value_7 = compute(7, alpha, beta)\n" in after


def test_fuzzy_refuses_when_a_removed_line_is_not_really_there():
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    with pytest.raises(NoMatch) as error:
        locate(
            FileIndex(text), lines_hunk("a = 1\nb = 2\nTOTALLY DIFFERENT\nd = 4\n", "a = 1\nb = 2\nd = 4\n")
        )
    assert error.value.candidates, "closest candidates are reported"
    assert "TOTALLY DIFFERENT" in error.value.candidates[0].diff


def test_ambiguous_at_exact_tier_lists_locations():
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(AmbiguousMatch) as error:
        locate(FileIndex(text), lines_hunk("x = 1\n", "x = 9\n"))
    assert error.value.locations == ((1, 1), (3, 1))
    assert "1:1" in str(error.value) and "3:1" in str(error.value)


def test_ambiguous_at_normalised_tier():
    text = "x = 1   \ny = 2\nx = 1\t\n"
    with pytest.raises(AmbiguousMatch) as error:
        locate(FileIndex(text), lines_hunk("x = 1\n", "x = 9\n"))
    assert error.value.tier == "trailing-whitespace"


def test_ambiguous_fuzzy_needs_a_clear_margin():
    block = "".join(f"item_{n} = make({n})\n" for n in range(8))
    text = block + "\n" + block + "\n"
    query = block.replace("make(3)", "make( 3 )")  # drift in layout only: both places fit equally
    with pytest.raises(AmbiguousMatch):
        locate(FileIndex(text), lines_hunk(query, query.replace("item_0", "first")))


def test_replace_all_changes_every_place():
    index = FileIndex("a b a b a\n")
    matches = locate(index, Hunk("a", "c", whole_lines=False, replace_all=True))
    assert [m.start for m in matches] == [0, 4, 8]


def test_locator_next_to_one_place_decides_and_reports_offset():
    text = "".join(f"{'same' if n % 10 == 0 else n}\n" for n in range(100))
    match, _ = place(text, lines_hunk("same\n", "other\n", start_line=42), near_line=42)
    assert match.line == 41 and match.offset == -1


def test_a_far_off_line_number_does_not_pick_between_identical_places():
    """Issue 21: text at lines 11 and 42, a hunk saying line 40 whose author meant 11."""
    text = "".join(f"{'same' if n % 10 == 0 else n}\n" for n in range(100))
    with pytest.raises(AmbiguousMatch) as caught:
        place(text, lines_hunk("same\n", "other\n", start_line=45), near_line=45)
    assert {41, 51} <= {line for line, _ in caught.value.locations}


def test_exact_only_option_refuses_normalised_matches():
    with pytest.raises(NoMatch):
        locate(FileIndex("a  \n"), lines_hunk("a\n", "b\n"), options=MatchOptions(exact=True))


def test_whole_line_hunk_matches_last_line_without_newline_and_keeps_it_absent():
    match, after = place("a\nb", lines_hunk("b\n", "c\n"))
    assert after == "a\nc"


def test_whole_line_hunk_must_start_at_line_start():
    with pytest.raises(NoMatch):
        locate(FileIndex("xa\n"), lines_hunk("a\n", "b\n"), options=MatchOptions(exact=True))


def test_insertion_at_end_and_before_line():
    _, after = place("a\nb", lines_hunk("", "c\n", at_end=True))
    assert after == "a\nb\nc"  # the file had no final newline, and still has none
    _, after = place("a\nb\n", lines_hunk("", "c\n", at_end=True))
    assert after == "a\nb\nc\n"
    _, after = place("a\nb\n", lines_hunk("", "x\n", start_line=2), near_line=2)
    assert after == "a\nx\nb\n"


def test_anchor_scopes_the_search():
    text = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    hunk = lines_hunk("    return 1\n", "    return 2\n", anchors=("def b():",))
    _, after = place(text, hunk)
    assert after == "def a():\n    return 1\n\ndef b():\n    return 2\n"


def test_form_feed_and_unicode_line_separators_are_not_line_breaks():
    text = "a\x0cb\u2028c\nnext\n"
    _, after = place(text, Hunk("next", "NEXT", whole_lines=False))
    assert after == "a\x0cb\u2028c\nNEXT\n"


def test_already_applied_is_decided_before_the_fuzzy_tier():
    """Re-running an applied edit must not fuzzy-match its own result."""
    text = "total = compute_everything(items, 2)\nother = 1\n"
    hunk = lines_hunk("total = compute_everything(items, 1)\n", "total = compute_everything(items, 2)\n")
    assert locate(FileIndex(text), hunk) == []


def test_already_applied_only_counts_inside_the_region():
    text = "a = 1\n# cell\nb = 2\n"
    hunk = Hunk("b = 1", "a = 1", whole_lines=False)
    region = (text.index("# cell"), len(text))
    with pytest.raises(NoMatch):
        locate(FileIndex(text), hunk, region=region, options=MatchOptions(threshold=0.99))


def test_one_similar_line_is_never_a_fuzzy_match():
    """``alpha = 1`` is not ``alpha = 100``: short queries get NoMatch with the near miss."""
    with pytest.raises(NoMatch) as error:
        locate(FileIndex("alpha = 100\nbeta = 2\n"), lines_hunk("alpha = 1\n", "alpha = 2\n"))
    assert "alpha = 100" in error.value.candidates[0].diff


def test_blank_lines_tier_takes_the_files_blank_run_with_the_lines_the_change_removes():
    text = "def run():\n    work()\n\n\nif __name__ == '__main__':\n    run()\n"
    old = "    work()\n\nif __name__ == '__main__':\n    run()\n"  # one blank line where the file has two
    new = "if __name__ == '__main__':\n    run()\n"
    [match] = locate(FileIndex(text), lines_hunk(old, new))
    assert match.tier is Tier.BLANK_LINES
    assert text[: match.start] + match.replacement + text[match.end :] == "def run():\n" + new


def test_blank_lines_tier_keeps_the_files_run_where_the_change_keeps_it_untouched():
    """A run both texts keep, between kept lines, with nothing added next to it: the file's run stays."""
    text = "import os\n\n\nclass A:\n    x = 1\n"
    old = "import os\n\nclass A:\n    x = 1\n"
    (match,) = locate(FileIndex(text), lines_hunk(old, old.replace("x = 1", "x = 2")))
    assert match.tier is Tier.BLANK_LINES
    after = text[: match.start] + match.replacement + text[match.end :]
    assert after == "import os\n\n\nclass A:\n    x = 2\n"


def test_blank_lines_tier_refuses_a_differing_run_next_to_an_insertion():
    """Lines added next to a run the reply has at another length: above or below the file's extra
    blank lines is not said, so nbedit refuses."""
    text = "import os\n\n\nclass A:\n    x = 1\n"
    old = "import os\n\nclass A:\n"
    with pytest.raises(NoMatch):
        locate(FileIndex(text), lines_hunk(old, "import os\n\nimport sys\nclass A:\n"))
    with pytest.raises(NoMatch):
        locate(FileIndex(text), lines_hunk(old, "import os\nimport sys\n\nclass A:\n"))


def test_blank_lines_tier_is_ambiguous_in_two_places():
    block = "    work()\n\n\n    done()\n"
    text = f"def a():\n{block}\ndef b():\n{block}"
    old = "    work()\n\n    done()\n"
    with pytest.raises(AmbiguousMatch):
        locate(FileIndex(text), lines_hunk(old, "    work()\n"))


def test_a_deletion_is_not_already_applied_on_its_context_alone():
    """Issue 21: new text made only of context lines is weak evidence that the change was made."""
    text = "alpha()\nomega()\nrest()\n"
    with pytest.raises(NoMatch):
        locate(FileIndex(text), lines_hunk("alpha()\nbeta()\nomega()\n", "alpha()\nomega()\n"))


def test_a_change_whose_new_text_stands_alone_is_already_applied():
    text = "alpha()\nBETA()\nomega()\n"
    assert locate(FileIndex(text), lines_hunk("alpha()\nbeta()\nomega()\n", "alpha()\nBETA()\nomega()\n")) == []


def test_tabs_for_spaces_indentation_drift_is_recovered_when_uniform():
    text = "class A:\n\tdef f(self):\n\t\tif x:\n\t\t\treturn 1\n\t\treturn 2\n"
    old = "    def f(self):\n        if x:\n            return 1\n"
    new = "    def f(self):\n        if x:\n            y = 0\n            return 1\n"
    match, result = place(text, lines_hunk(old, new))
    assert match.tier is Tier.INDENTATION
    assert result == "class A:\n\tdef f(self):\n\t\tif x:\n\t\t\ty = 0\n\t\t\treturn 1\n\t\treturn 2\n"


def test_tabs_for_spaces_with_a_line_that_does_not_fit_the_width_is_refused():
    text = "class A:\n\tdef f(self):\n\t\tif x:\n\t\t\treturn 1\n"
    old = "    def f(self):\n        if x:\n            return 1\n"
    new = "    def f(self):\n        if x:\n              y = 0\n            return 1\n"  # 14 spaces: no whole tab
    with pytest.raises(MatchError):
        place(text, lines_hunk(old, new))


def test_a_blank_search_in_an_empty_file_fills_it():
    """A reply's empty SEARCH often keeps one blank line; an empty file has one place for it."""
    [match] = locate(FileIndex(""), lines_hunk("\n", "import os\n"))
    assert (match.start, match.end, match.replacement) == (0, 0, "import os\n")
    with pytest.raises(NoMatch):
        locate(FileIndex("x = 1\n"), lines_hunk("\n", "import os\n"))


def test_an_anchor_occurring_twice_takes_the_exact_fit_over_a_lenient_one():
    text = (
        "class A:\n    def run(self):\n        value = compute(1)\n        return value\n"
        "class B:\n    def run(self):\n        value = compute(1)\n        return  value\n"
    )
    hunk = lines_hunk(
        "        value = compute(1)\n        return value\n",
        "        value = compute(2)\n        return value\n",
        anchors=("    def run(self):",),
    )
    match, result = place(text, hunk)
    assert match.tier is Tier.EXACT and match.line == 3
    assert "compute(2)" in result.split("class B")[0]


def test_already_applied_with_a_line_number_needs_the_new_text_where_the_old_was():
    """Issue 21: new text found somewhere other than where the old text would be is not evidence."""
    filler = "".join(f"line_{n} = {n}\n" for n in range(40))
    text = filler + "value = compute(2)\nresult = value\n"
    hunk = lines_hunk("value = compute(1)\nresult = value\n", "value = compute(2)\nresult = value\n", start_line=3)
    with pytest.raises(NoMatch):
        locate(FileIndex(text), hunk, near_line=3)
    assert locate(FileIndex(text), hunk, near_line=41) == []
