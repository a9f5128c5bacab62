"""Dialect detection, the registry, and the promise that parsers raise nothing but PatchSyntaxError."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbedit.engine import formats
from nbedit.engine.models import Change
from nbedit.errors import PatchSyntaxError

UNIFIED = (
    "diff --git a/src/app.py b/src/app.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -1,3 +1,3 @@\n"
    " import os\n"
    "-x = 1\n"
    "+x = 2\n"
    " print(x)\n"
    "@@ -10 +10,2 @@\n"
    "-tail\n"
    "+tail\n"
    "+more\n"
    "\\ No newline at end of file\n"
    "diff --git a/old name.txt b/new name.txt\n"
    "similarity index 100%\n"
    "rename from old name.txt\n"
    "rename to new name.txt\n"
    "--- /dev/null\n"
    "+++ b/added.txt\n"
    "@@ -0,0 +1 @@\n"
    "+hello\n"
)
APPLY_PATCH = (
    "*** Begin Patch\n"
    "*** Add File: notes/new.md\n"
    "+# Title\n"
    "+\n"
    "*** Update File: src/app.py\n"
    "*** Move to: src/main.py\n"
    "@@ class App:\n"
    "@@     def run(self):\n"
    "-        return 1\n"
    "+        return 2\n"
    "\n"
    "@@\n"
    " last\n"
    "+appended\n"
    "*** End of File\n"
    "*** Delete File: obsolete.txt\n"
    "*** End Patch\n"
)
SEARCH_REPLACE = (
    "Some prose first.\n\n"
    "src/app.py\n"
    "```python\n"
    "<<<<<<< SEARCH\n"
    "x = 1\n"
    "=======\n"
    "x = 2\n"
    ">>>>>>> REPLACE\n"
    "```\n\n"
    "```python\n"
    "<<<<<<< SEARCH\n"
    "=======\n"
    "# appended\n"
    ">>>>>>> REPLACE\n"
    "```\n"
)
VALID = {"unified": UNIFIED, "apply_patch": APPLY_PATCH, "search_replace": SEARCH_REPLACE}


@pytest.mark.parametrize(("name", "text"), VALID.items())
def test_detect_and_parse_each_dialect(name: str, text: str) -> None:
    assert formats.detect(text) == name
    change = formats.parse(text)
    assert change.dialect == name
    assert formats.parse(text, dialect=name) == change


def test_registry_describes_every_dialect() -> None:
    assert formats.dialect_names() == ("unified", "apply_patch", "search_replace")
    for description in formats.FORMATS:
        assert description.looks_like(VALID[description.name])
        for other_name, other_text in VALID.items():
            if other_name != description.name:
                assert not description.looks_like(other_text), (description.name, other_name)


def test_earliest_marker_wins() -> None:
    # A SEARCH/REPLACE block that edits a diff file.
    text = "changes.diff\n<<<<<<< SEARCH\n--- a/x\n+++ b/x\n=======\n--- a/y\n+++ b/y\n>>>>>>> REPLACE\n"
    assert formats.detect(text) == "search_replace"
    assert formats.parse(text).files[0].hunks[0].new == "--- a/y\n+++ b/y\n"
    # A diff that adds a file containing SEARCH/REPLACE blocks.
    text = "--- /dev/null\n+++ b/prompt.txt\n@@ -0,0 +1,3 @@\n+<<<<<<< SEARCH\n+=======\n+>>>>>>> REPLACE\n"
    assert formats.detect(text) == "unified"
    # A Codex patch that adds a diff file.
    text = "*** Begin Patch\n*** Add File: p.diff\n+--- a/x\n+++ b/x\n*** End Patch\n"
    assert formats.detect(text) == "apply_patch"


def test_detect_failure_lists_the_dialects() -> None:
    with pytest.raises(PatchSyntaxError) as info:
        formats.detect("please change x to y\n")
    assert info.value.line is None
    for name in formats.dialect_names():
        assert name in (info.value.hint or "")
    with pytest.raises(PatchSyntaxError, match="empty"):
        formats.parse("")


def test_unknown_dialect_and_aliases() -> None:
    with pytest.raises(PatchSyntaxError) as info:
        formats.parse(UNIFIED, dialect="svn")
    assert "svn" in str(info.value)
    assert "apply_patch" in (info.value.hint or "")
    assert formats.parse(UNIFIED, dialect="git").dialect == "unified"
    assert formats.parse(APPLY_PATCH, dialect="codex").dialect == "apply_patch"
    assert formats.parse(SEARCH_REPLACE, dialect="aider").dialect == "search_replace"


def test_explicit_dialect_that_does_not_fit_is_a_syntax_error() -> None:
    with pytest.raises(PatchSyntaxError) as info:
        formats.parse(SEARCH_REPLACE, dialect="apply_patch")
    assert info.value.dialect == "apply_patch"


def test_default_path_reaches_the_parser() -> None:
    body = "<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n"
    assert formats.parse(body, default_path="cell.py").files[0].path == "cell.py"
    hunk_only = "@@ -1 +1 @@\n-old\n+new\n"
    assert formats.parse(hunk_only, default_path="cell.py").files[0].path == "cell.py"


# -- fuzzing: any input string gives a Change or a PatchSyntaxError, never another exception ----------

MARKER_LINES = [
    "*** Begin Patch",
    "*** End Patch",
    " *** End Patch ",
    "*** Add File: a.txt",
    "*** Delete File: b.txt",
    "*** Update File: c.txt",
    "*** Move to: d.txt",
    "*** End of File",
    "@@",
    "@@ def f():",
    "@@ -1,2 +1,2 @@",
    "@@ -0,0 +1 @@",
    "@@ -1 +0,0 @@",
    "@@@ -1 -1 +1 @@@",
    "--- a/x",
    "+++ b/x",
    "--- /dev/null",
    "+++ /dev/null",
    '--- "a/\\303\\251\\t"',
    '+++ "b/\\777"',
    "diff --git a/x b/x",
    'diff --git "a/x y" "b/x y"',
    "new file mode 100644",
    "deleted file mode 100755",
    "new mode 120000",
    "old mode 99",
    "rename from x",
    "rename to y",
    "copy from x",
    "Binary files a/x and b/x differ",
    "\\ No newline at end of file",
    "-- ",
    "<<<<<<< SEARCH",
    "=======",
    ">>>>>>> REPLACE",
    "```python",
    "```",
    "x.py",
    "apply_patch <<'EOF'",
    "EOF",
    "",
    " ",
    "\r",
    "+",
    "-",
    " context",
    "+added",
    "-removed",
    # what real replies carry around and inside blocks
    "@@ ... @@",
    "@@ @@",
    "--",
    "<<<<<<< ORIGINAL",
    ">>>>>>> UPDATED",
    "<source>python",
    "</source>",
    "~~~",
    "**File: src/x.py**",
    "### Changes to `x.py`",
    "x.py (new file)",
    "src\\x.py",
    "Fix:",
]

lines_strategy = st.lists(
    st.one_of(st.sampled_from(MARKER_LINES), st.text(max_size=12)),
    max_size=25,
)


def check_total(text: str, default_path: str | None = None) -> None:
    try:
        change = formats.parse(text, default_path=default_path)
    except PatchSyntaxError as error:
        assert error.line is None or 1 <= error.line <= max(1, text.count("\n") + 1)
        return
    assert isinstance(change, Change)
    assert change.files
    for file_change in change.files:
        assert file_change.path
        for hunk in file_change.hunks:
            assert isinstance(hunk.old, str) and isinstance(hunk.new, str)
    for name in formats.dialect_names():  # forcing a dialect must not crash either
        with contextlib.suppress(PatchSyntaxError):
            formats.parse(text, dialect=name, default_path=default_path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400), st.sampled_from([None, "default.py"]))
def test_fuzz_arbitrary_text(text: str, default_path: str | None) -> None:
    check_total(text, default_path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines_strategy, st.sampled_from(["\n", "\r\n"]), st.sampled_from([None, "default.py"]))
def test_fuzz_marker_soup(lines: list[str], newline: str, default_path: str | None) -> None:
    check_total(newline.join(lines), default_path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(VALID)),
    st.lists(
        st.tuples(
            st.sampled_from(["delete", "duplicate", "insert", "truncate", "edit"]),
            st.integers(min_value=0, max_value=200),
            st.one_of(st.sampled_from(MARKER_LINES), st.text(max_size=6)),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_fuzz_mutated_valid_changes(name: str, mutations: list[tuple[str, int, str]]) -> None:
    lines = VALID[name].split("\n")
    for kind, position, payload in mutations:
        if not lines:
            break
        index = position % len(lines)
        if kind == "delete":
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, lines[index])
        elif kind == "insert":
            lines.insert(index, payload)
        elif kind == "truncate":
            lines = lines[:index]
        else:
            line = lines[index]
            cut = position % (len(line) + 1)
            lines[index] = line[:cut] + payload + line[cut + 1 :]
    check_total("\n".join(lines))


@pytest.mark.parametrize(
    ("text", "line", "quoted"),
    [
        ("f.py\n<<<<<<< SEARCH\na\nb\n", 2, "'<<<<<<< SEARCH'"),
        ("--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n", 6, "'+B'"),
        ("*** Begin Patch\n*** Update File: f\n*** End Patch\n", 2, "'*** Update File: f'"),
    ],
)
def test_a_syntax_error_quotes_the_line_it_names(text: str, line: int, quoted: str) -> None:
    with pytest.raises(PatchSyntaxError) as info:
        formats.parse(text)
    assert info.value.line == line
    assert quoted in str(info.value)
    assert info.value.hint


def test_a_line_the_message_shows_already_is_not_quoted_twice() -> None:
    text = "--- a/f.py\n+++ b/f.py\n@@ ... @@\n def f():\n-    x = 1\nreturn x\n-    y = 2\n"
    with pytest.raises(PatchSyntaxError) as info:
        formats.parse(text)
    assert str(info.value).count("'return x'") == 1


def test_the_lazy_dialects_are_their_modules() -> None:
    """The registry names and sniffs the dialects it imports only when needed, as their modules do."""
    from nbedit.engine.formats import apply_patch, search_replace

    by_name = {description.name: description for description in formats.FORMATS}
    for module in (apply_patch, search_replace):
        assert module.DIALECT in by_name
        description = by_name[module.DIALECT]
        for text in [*VALID.values(), "<<<<<<< SEARCH", "x\n*** Begin Patch\n", "<<<<<<<  ORIGINAL\n"]:
            assert description.marker_line(text) == module.marker_line(text)
            with contextlib.suppress(PatchSyntaxError):
                assert description.parse(text, default_path="f") == module.parse(text, default_path="f")


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["<<<<<<< SEARCH", "<<<<< ORIGINAL>", "*** Begin Patch", "x", "@@", "+a"])))
def test_the_registry_sniffs_as_the_modules_do(lines: list[str]) -> None:
    from nbedit.engine.formats import apply_patch, search_replace

    text = "\n".join(lines)
    by_name = {description.name: description for description in formats.FORMATS}
    for module in (apply_patch, search_replace):
        assert by_name[module.DIALECT].marker_line(text) == module.marker_line(text)


def test_a_unified_diff_is_read_without_the_other_dialects() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom nbedit.engine import formats\n"
        f"formats.parse({UNIFIED!r})\n"
        "print(sorted(n for n in sys.modules if n.startswith('nbedit.engine.formats.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "apply_patch" not in loaded and "search_replace" not in loaded
    assert "unified" in loaded
