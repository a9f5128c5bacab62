"""Issue 21 item 4: tab/space indentation drift, uniform and mixed, recovered only when unambiguous.

Real-shaped files: a Python 2 module indenting with 4 spaces, then a tab, then a tab and 4 spaces
(a tab is 8 columns); a Go function (gofmt: tabs to indent, spaces to align after them); a Makefile
recipe (tabs, with continuation lines aligned by spaces); a tab-indented Python module edited by a
reply that re-indents with 4 spaces a tab on some lines and 8 on others. Each change is written in
the file's indentation by the mapping the old lines were found with; where a new line's
indentation has two readings, or the reply's levels do not map to the file's one to one, it is
refused and the file is left byte-identical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import nbedit
from nbedit.errors import MatchError, NbeditError, NoMatch, UnsafeChange

PY2 = (
    "class Cache(object):\n"
    "    def get(self, key, default=None):\n"
    "\ttry:\n"
    "\t    value = self._data[key]\n"
    "\texcept KeyError:\n"
    "\t    return default\n"
    "\treturn value\n"
)

GO = (
    "package cache\n"
    "\n"
    "func (c *Cache) Get(key string) (string, bool) {\n"
    "\tc.mu.Lock()\n"
    "\tdefer c.mu.Unlock()\n"
    "\tvalue, ok := c.items[key]\n"
    "\tif !ok {\n"
    "\t\treturn \"\", fmt.Errorf(\"no key %q in %d items\",\n"
    "\t\t    key, len(c.items))\n"
    "\t}\n"
    "\treturn value, true\n"
    "}\n"
)

MAKEFILE = (
    ".PHONY: install\n"
    "install: build\n"
    "\tpip install -e . \\\n"
    "\t    --no-deps\n"
    "\t@echo done\n"
)

TABBED = (
    "def lookup(table, key):\n"
    "\tfor row in table:\n"
    "\t\tif row.key == key:\n"
    "\t\t\treturn row\n"
    "\treturn None\n"
)


def workspace(tmp_path: Path, name: str, text: str) -> nbedit.Workspace:
    (tmp_path / name).write_bytes(text.encode())
    return nbedit.Workspace(tmp_path, history=False)


def unified(path: str, line: int, body: str) -> str:
    lines = body.splitlines()
    old = sum(1 for row in lines if not row.startswith("+"))
    new = sum(1 for row in lines if not row.startswith("-"))
    return f"--- a/{path}\n+++ b/{path}\n@@ -{line},{old} +{line},{new} @@\n{body}"


def test_python2_tabs_and_spaces_recovered_from_a_reply_in_spaces(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "cache.py", PY2)
    old = (
        "        try:\n            value = self._data[key]\n"
        "        except KeyError:\n            return default\n"
    )
    new = (
        "        try:\n            value = self._data[key]\n        except KeyError:\n"
        "            if default is None:\n                raise\n            return default\n"
    )
    plan = ws.plan_edit("cache.py", old, new)
    # 8 columns are a tab, 12 a tab and 4 spaces, 16 two tabs: the module's own style
    assert plan.files[0].after == PY2.replace(
        "\t    return default\n", "\t    if default is None:\n\t\traise\n\t    return default\n"
    )
    ws.apply(plan)
    assert (tmp_path / "cache.py").read_text().count("\t\traise\n") == 1


def test_go_tabs_with_alignment_spaces_recovered_from_a_reply_in_spaces(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "cache.go", GO)
    patch = unified(
        "cache.go",
        7,
        "     if !ok {\n"
        "         return \"\", fmt.Errorf(\"no key %q in %d items\",\n"
        "             key, len(c.items))\n"
        "+        c.misses++\n"
        "     }\n",
    )
    plan = ws.plan_patch(patch)
    assert plan.files[0].after == GO.replace("len(c.items))\n\t}", "len(c.items))\n\t\tc.misses++\n\t}")


def test_go_new_line_at_the_alignment_width_is_refused_naming_both_readings(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "cache.go", GO)
    old = "        return \"\", fmt.Errorf(\"no key %q in %d items\",\n            key, len(c.items))\n"
    new = old.replace("len(c.items))\n", "len(c.items),\n            c.name)\n")
    with pytest.raises(UnsafeChange) as caught:
        ws.plan_edit("cache.go", old, new)
    message = str(caught.value)
    assert "12 spaces could mean" in message and "2 tabs and 4 spaces" in message and "3 tabs" in message
    assert (tmp_path / "cache.go").read_text() == GO


def test_makefile_recipe_line_written_with_a_tab(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "Makefile", MAKEFILE)
    block = (
        "<<<<<<< SEARCH\n    pip install -e . \\\n        --no-deps\n    @echo done\n=======\n"
        "    pip install -e . \\\n        --no-deps\n    @echo done\n    @echo installed\n>>>>>>> REPLACE\n"
    )
    plan = ws.plan_patch(f"Makefile\n```\n{block}```\n")
    assert plan.files[0].after == MAKEFILE + "\t@echo installed\n"  # a recipe line needs its tab


def test_reply_mixing_4_and_8_spaces_a_tab(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "lookup.py", TABBED)
    # the reply's old lines: "for" at 8 spaces (1 tab: 8 a tab), "if" copied with its tabs,
    # "return" at 12 spaces (3 tabs: 4 a tab); a new line at 12 spaces has one reading
    old = "        for row in table:\n\t\tif row.key == key:\n            return row\n"
    new = old.replace("            return row\n", "            row.hits += 1\n            return row\n")
    plan = ws.plan_edit("lookup.py", old, new)
    made = TABBED.replace("\t\t\treturn row\n", "\t\t\trow.hits += 1\n\t\t\treturn row\n")
    assert plan.files[0].after == made
    # a new line at 8 spaces: one tab (as the "for" line) or two (4 a tab, as the "return" line)
    ambiguous = new.replace("            row.hits += 1\n", "        row.hits += 1\n")
    with pytest.raises(UnsafeChange) as caught:
        ws.plan_edit("lookup.py", old, ambiguous)
    assert "8 spaces could mean 1 tab or 2 tabs" in str(caught.value)
    assert caught.value.reason and "write the change in the file's indentation" in caught.value.reason
    assert (tmp_path / "lookup.py").read_text() == TABBED


@pytest.mark.parametrize(
    ("old", "why"),
    [
        # 16 spaces deeper than 12 in the reply, but 2 tabs shallower than 3 in the file
        (
            "    for row in table:\n                if row.key == key:\n            return row\n",
            "is deeper than its 12 spaces, but the file's 2 tabs is not deeper",
        ),
        # 8 spaces for the "for" (one tab) and for the "if" (two tabs)
        (
            "        for row in table:\n        if row.key == key:\n            return row\n",
            "stands for both 1 tab and 2 tabs",
        ),
    ],
)
def test_reply_levels_that_do_not_map_one_to_one_are_refused(tmp_path: Path, old: str, why: str) -> None:
    ws = workspace(tmp_path, "lookup.py", TABBED)
    new = old.replace("return row\n", "return row.value\n")
    with pytest.raises(NoMatch) as caught:
        ws.plan_edit("lookup.py", old, new)
    assert why in str(caught.value) and "not level by level" in str(caught.value)
    assert (tmp_path / "lookup.py").read_text() == TABBED


def test_the_syntax_guard_still_holds_for_a_mixed_mapping(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "lookup.py", TABBED)
    old = "    for row in table:\n        if row.key == key:\n                        return row\n"
    # the "if" loses its body: placed leniently (mixed widths), the result would not parse
    new = "    for row in table:\n        if row.key == key:\n    row = None\n"
    with pytest.raises(NbeditError) as caught:
        ws.plan_edit("lookup.py", old, new)
    assert "would not parse" in str(caught.value)
    assert (tmp_path / "lookup.py").read_text() == TABBED


def test_uniform_tabs_for_spaces_is_still_recovered(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "lookup.py", TABBED)
    old = "    for row in table:\n        if row.key == key:\n            return row\n"
    new = old.replace("            return row\n", "            if row.live:\n                return row\n")
    plan = ws.plan_edit("lookup.py", old, new)
    made = TABBED.replace("\t\t\treturn row\n", "\t\t\tif row.live:\n\t\t\t\treturn row\n")
    assert plan.files[0].after == made
    with pytest.raises(MatchError):  # 6 spaces: no whole number of tabs
        ws.plan_edit("lookup.py", old, new.replace("                return", "      return"))
    assert (tmp_path / "lookup.py").read_text() == TABBED
