"""Issue 21: "already applied", anchors, context-free hunks and tab widths decided on strong evidence only.

Each test is a minimal file and reply for one wrong result the five-rules drift corpus
(``benchmarks/drift_five_rules.py``) found: the fix must make it right or a refusal that
leaves the file byte-identical and says both places (or what to regenerate).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch


def workspace(tmp_path: Path, **files: str) -> nbedit.Workspace:
    for name, text in files.items():
        (tmp_path / name.replace("_", ".", 1)).write_bytes(text.encode())
    return nbedit.Workspace(tmp_path, history=False)


def blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# ------------------------------------------------------------------ rule 2: already applied


def test_new_text_elsewhere_with_a_miscopied_old_text_is_not_applied(tmp_path: Path) -> None:
    text = "alpha = 1\nbeta = 2\n\nalpha = 1\nbeta = 3\n"
    ws = workspace(tmp_path, a_py=text)
    with pytest.raises(NoMatch) as caught:
        ws.plan_edit("a.py", "alpha = 1\nbetta = 2\n", "alpha = 1\nbeta = 3\n")
    message = str(caught.value)
    assert "lines 1-2 are close to it" in message and "already stands at lines 4-5" in message
    assert (tmp_path / "a.py").read_text() == text


def test_a_wrap_already_made_is_applied_not_nested_twice(tmp_path: Path) -> None:
    text = "with ctx:\n    from __future__ import annotations\n\nimport os\n"
    ws = workspace(tmp_path, w_py=text)
    old = "from __future__ import annotations\n\n"
    plan = ws.plan_edit("w.py", old, "with ctx:\n    " + old)
    assert plan.files[0].already_applied and plan.files[0].after == text


def test_a_deletion_made_and_a_sibling_at_another_indentation_is_ambiguous(tmp_path: Path) -> None:
    # the deletion is already made in b() (depth 8); a() still has the lines at depth 4, where
    # the indentation tier finds the old text: deleting there would hit the sibling
    text = (
        "def a():\n    call(\n        one,\n    )\n    other(\n        two,\n    )\n\n"
        "def b():\n    if x:\n        call(\n            one,\n        )\n            two,\n        )\n"
    )
    ws = workspace(tmp_path, s_py=text)
    old = "        call(\n            one,\n        )\n        other(\n            two,\n        )\n"
    new = "        call(\n            one,\n        )\n            two,\n        )\n"
    with pytest.raises(AmbiguousMatch) as caught:
        ws.plan_edit("s.py", old, new)
    assert "already stands exactly at lines 11-15" in str(caught.value)
    assert (tmp_path / "s.py").read_text() == text


# ------------------------------------------------------------------ rule 3: an anchor twice


def test_an_anchor_twice_with_the_change_made_under_one_is_not_called_applied(tmp_path: Path) -> None:
    text = 'def f():\n    x = "hrefs"\n    return x\n\ndef f():\n    x = "href"\n    return x\n'
    ws = workspace(tmp_path, d_py=text)
    patch = (
        "*** Begin Patch\n*** Update File: d.py\n@@ def f():\n"
        '-        x = "href"\n+        x = "hrefs"\n         return x\n*** End Patch\n'
    )
    with pytest.raises(AmbiguousMatch) as caught:
        ws.plan_patch(patch)
    assert "looks already applied" in str(caught.value)


# ------------------------------------------------------------------ rule 5: context-free hunks

SHIFTED = "# added above\none = 1\ntwo = 2\nthree = 3\nfour = 4\n"
BASE = "one = 1\ntwo = 2\nthree = 3\nfour = 4\n"
INSERT = "@@ -2,0 +3 @@\n+two_and_a_half = 2.5\n"


def git_header(path: str, pre: str) -> str:
    return f"diff --git a/{path} b/{path}\nindex {pre[:7]}..1234567 100644\n--- a/{path}\n+++ b/{path}\n"


def test_a_context_free_insertion_needs_the_base(tmp_path: Path) -> None:
    ws = workspace(tmp_path, c_py=SHIFTED)
    for patch in (f"--- a/c.py\n+++ b/c.py\n{INSERT}", git_header("c.py", blob(BASE)) + INSERT):
        with pytest.raises(AmbiguousMatch) as caught:
            ws.plan_patch(patch)
        assert "git diff -U3" in str(caught.value)
    assert (tmp_path / "c.py").read_text() == SHIFTED


def test_a_context_free_insertion_on_its_base_by_the_index_line_applies(tmp_path: Path) -> None:
    ws = workspace(tmp_path, c_py=BASE)
    plan = ws.plan_patch(git_header("c.py", blob(BASE)) + INSERT)
    assert plan.files[0].after == "one = 1\ntwo = 2\ntwo_and_a_half = 2.5\nthree = 3\nfour = 4\n"


def test_a_context_free_insertion_confirmed_by_a_neighbour_or_the_end(tmp_path: Path) -> None:
    ws = workspace(tmp_path, c_py=BASE)
    header = "--- a/c.py\n+++ b/c.py\n"
    plan = ws.plan_patch(header + "@@ -1,0 +2 @@\n+x = 0\n@@ -4 +5 @@\n-four = 4\n+four = 44\n")
    assert plan.files[0].after == "one = 1\nx = 0\ntwo = 2\nthree = 3\nfour = 44\n"
    plan = ws.plan_patch("--- a/c.py\n+++ b/c.py\n@@ -4,0 +5 @@\n+five = 5\n")
    assert plan.files[0].after == BASE + "five = 5\n"
    with pytest.raises(MatchError):  # lines added above: the end is no longer where the count says
        workspace(tmp_path, c_py=SHIFTED).plan_patch("--- a/c.py\n+++ b/c.py\n@@ -4,0 +5 @@\n+five = 5\n")


def test_context_free_removed_lines_repeated_need_the_very_line_or_the_base(tmp_path: Path) -> None:
    text = "a = 1\nx = 0\nb = 2\nx = 0\nc = 3\n"
    ws = workspace(tmp_path, r_py=text)
    hunk = "@@ -3 +2,0 @@\n-x = 0\n"  # line 3 is next to both copies of 'x = 0' (lines 2 and 4)
    with pytest.raises(AmbiguousMatch):
        ws.plan_patch("--- a/r.py\n+++ b/r.py\n" + hunk)
    plan = ws.plan_patch("--- a/r.py\n+++ b/r.py\n@@ -4 +3,0 @@\n-x = 0\n")  # the very line named
    assert plan.files[0].after == "a = 1\nx = 0\nb = 2\nc = 3\n"
    with pytest.raises(AmbiguousMatch):  # ... unless the index line says this file is another
        ws.plan_patch(git_header("r.py", blob("other")) + "@@ -4 +3,0 @@\n-x = 0\n")
    unique = ws.plan_patch(git_header("r.py", blob("other")) + "@@ -9 +9 @@\n-b = 2\n+b = 22\n")
    assert unique.files[0].after == text.replace("b = 2", "b = 22")  # removed lines place it


# ------------------------------------------------------------------ tabs: mixed widths


def test_old_lines_mixing_tab_widths_land_at_their_own_place_or_are_refused(tmp_path: Path) -> None:
    block = "\tdef get(self, name):\n\t\tif value is None:\n\t\t\t{body}\n\t\treturn value\n\n"
    between = "\t# between\n" * 30
    text = block.format(body="return default") + between + block.format(body="raise KeyError(name)")
    ws = workspace(tmp_path, m_py=text)
    head = "--- a/m.py\n+++ b/m.py\n@@ -2,3 +2,3 @@\n         if value is None:\n"
    # the reply's lines: 4 spaces a tab, then 8 a tab (24 spaces for 3 tabs), then 4 again
    mixed = head + "                         return default\n-        return value\n"
    # a new line at 4 spaces is one tab by the only width that reads it whole: the first block,
    # never the look-alike below
    plan = ws.plan_patch(mixed + "+    return value\n")
    assert plan.files[0].after == text.replace("\t\treturn value\n", "\treturn value\n", 1)
    # ... a new line at 8 spaces is one tab (8 a tab) or two (4 a tab): refused, saying both
    with pytest.raises(MatchError) as caught:
        ws.plan_patch(mixed + "+        return value or default\n")
    assert "could mean 2 tabs or 1 tab" in str(caught.value)
    assert (tmp_path / "m.py").read_text() == text
