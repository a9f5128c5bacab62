"""The SEARCH/REPLACE (Aider edit block) parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine.formats import search_replace
from nbedit.engine.models import Hunk
from nbedit.errors import PatchSyntaxError

FENCE = "```"


def parse_error(text: str, **kwargs: object) -> PatchSyntaxError:
    with pytest.raises(PatchSyntaxError) as info:
        search_replace.parse(text, **kwargs)  # type: ignore[arg-type]
    assert info.value.dialect == "search_replace"
    return info.value


def block(search: str, replace: str, *, head: str = "<<<<<<< SEARCH", tail: str = ">>>>>>> REPLACE") -> str:
    return f"{head}\n{search}=======\n{replace}{tail}\n"


A_TO_B_ASSIGN = block("a = 1\n", "a = 2\n")
A_TO_B = block("a\n", "b\n")
ONE = block("1\n", "one\n")
TWO = block("2\n", "two\n")
THREE = block("3\n", "three\n")


def test_fenced_block_with_path_line() -> None:
    text = f"Here is the change.\n\nsrc/app.py\n{FENCE}python\n{A_TO_B_ASSIGN}{FENCE}\n"
    change = search_replace.parse(text)
    assert change.dialect == "search_replace"
    (file_change,) = change.files
    assert (file_change.path, file_change.operation, file_change.source_line) == ("src/app.py", "update", 5)
    assert file_change.hunks == (Hunk(old="a = 1\n", new="a = 2\n", whole_lines=True, source_line=5),)


def test_unfenced_block() -> None:
    (file_change,) = search_replace.parse("notes.md\n" + block("x\n", "y\n")).files
    assert file_change.path == "notes.md"
    assert file_change.hunks[0].source_line == 2


@pytest.mark.parametrize(
    "path_line",
    ["`src/app.py`", "**src/app.py**", "src/app.py:", "### src/app.py", "`src/app.py`:", "  src/app.py  "],
)
def test_path_decorations_are_stripped(path_line: str) -> None:
    text = f"{path_line}\n{FENCE}python\n{A_TO_B}{FENCE}\n"
    assert search_replace.parse(text).files[0].path == "src/app.py"


def test_path_in_fence_info_string() -> None:
    text = f"{FENCE}src/app.py\n{A_TO_B}{FENCE}\n"
    assert search_replace.parse(text).files[0].path == "src/app.py"


def test_quoted_path_with_space() -> None:
    text = f"`my notes.md`\n{A_TO_B}"
    assert search_replace.parse(text).files[0].path == "my notes.md"


def test_several_blocks_grouped_per_file_in_order_of_first_appearance() -> None:
    text = (
        f"a.py\n{FENCE}python\n{ONE}{FENCE}\n\n"
        f"b.py\n{FENCE}python\n{TWO}{FENCE}\n\n"
        f"a.py\n{FENCE}python\n{THREE}{FENCE}\n"
    )
    files = search_replace.parse(text).files
    assert [f.path for f in files] == ["a.py", "b.py"]
    assert [h.old for h in files[0].hunks] == ["1\n", "3\n"]
    assert [h.source_line for h in files[0].hunks] == [3, 21]
    assert files[0].source_line == 3


def test_block_without_path_uses_previous_block_path() -> None:
    text = f"a.py\n{FENCE}python\n{ONE}{FENCE}\n\n{FENCE}python\n{TWO}{FENCE}\n"
    (file_change,) = search_replace.parse(text).files
    assert [h.old for h in file_change.hunks] == ["1\n", "2\n"]
    text = "a.py\n" + block("1\n", "one\n") + block("2\n", "two\n")
    (file_change,) = search_replace.parse(text).files
    assert len(file_change.hunks) == 2


def test_body_without_any_path_uses_default_path() -> None:
    text = block("old line\n", "new line\n")
    (file_change,) = search_replace.parse(text, default_path="cell.py").files
    assert file_change.path == "cell.py"
    explicit = search_replace.parse("other.py\n" + text, default_path="cell.py").files[0]
    assert explicit.path == "other.py"


def test_missing_path_without_default_is_an_error() -> None:
    error = parse_error("\n" + block("a\n", "b\n"))
    assert error.line == 2
    assert "path" in (error.hint or "")


def test_prose_is_not_a_path() -> None:
    text = "Here is the fix:\n" + block("a\n", "b\n")
    assert search_replace.parse(text, default_path="x.py").files[0].path == "x.py"
    assert "path" in (parse_error(text).hint or "")


def test_prose_naming_another_file_is_an_error() -> None:
    text = "a.py\n" + block("1\n", "one\n") + "\nNow update bar.py as well:\n" + block("2\n", "two\n")
    error = parse_error(text)
    assert error.line == 9
    assert "bar.py" in str(error)
    same = "a.py\n" + block("1\n", "one\n") + "\nAnd again in a.py:\n" + block("2\n", "two\n")
    assert len(search_replace.parse(same).files[0].hunks) == 2


def test_empty_search_appends_or_creates() -> None:
    (file_change,) = search_replace.parse("new.txt\n" + block("", "hello\n")).files
    (hunk,) = file_change.hunks
    assert (hunk.old, hunk.new, hunk.at_end) == ("", "hello\n", True)


def test_empty_replace_deletes_lines() -> None:
    (hunk,) = search_replace.parse("f\n" + block("gone\n", "")).files[0].hunks
    assert (hunk.old, hunk.new, hunk.at_end) == ("gone\n", "", False)


@pytest.mark.parametrize(
    ("head", "divider", "tail"),
    [
        ("<<<<< SEARCH", "=====", ">>>>> REPLACE"),
        ("<<<<<<<<< SEARCH", "=========", ">>>>>>>>> REPLACE"),
        ("<<<<<<< SEARCH>", "=======", ">>>>>>> REPLACE"),
        ("  <<<<<<< SEARCH  ", " ======= ", "  >>>>>>> REPLACE "),
    ],
)
def test_marker_variants(head: str, divider: str, tail: str) -> None:
    text = f"f.py\n{head}\na\n{divider}\nb\n{tail}\n"
    (hunk,) = search_replace.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a\n", "b\n")


def test_too_few_or_many_marker_characters_are_not_markers() -> None:
    text = "f.py\n<<<< SEARCH\na\n====\nb\n>>>> REPLACE\n"
    assert "no '<<<<<<< SEARCH' block" in str(parse_error(text))
    text = "f.py\n<<<<<<<<<< SEARCH\na\n==========\nb\n>>>>>>>>>> REPLACE\n"
    assert "no '<<<<<<< SEARCH' block" in str(parse_error(text))


def test_divider_inside_replace_is_content() -> None:
    text = "doc.rst\n" + block("Title\n", "Title\n=======\n")
    (hunk,) = search_replace.parse(text).files[0].hunks
    assert hunk.new == "Title\n=======\n"


def test_fences_inside_a_block_are_content() -> None:
    text = "README.md\n" + block(f"{FENCE}\nold\n{FENCE}\n", f"{FENCE}python\nnew\n{FENCE}\n")
    (hunk,) = search_replace.parse(text).files[0].hunks
    assert hunk.old == f"{FENCE}\nold\n{FENCE}\n"


def test_crlf_text_keeps_carriage_returns() -> None:
    text = "f.txt\r\n<<<<<<< SEARCH\r\na\r\n=======\r\nb\r\n>>>>>>> REPLACE\r\n"
    file_change = search_replace.parse(text).files[0]
    assert file_change.path == "f.txt"
    assert (file_change.hunks[0].old, file_change.hunks[0].new) == ("a\r\n", "b\r\n")


def test_whitespace_and_blank_lines_in_sections_are_kept() -> None:
    text = "f.py\n" + block("    x = 1\n\n", "\tx = 2\n  \n")
    (hunk,) = search_replace.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("    x = 1\n\n", "\tx = 2\n  \n")


# -- errors ------------------------------------------------------------------------------------------


def test_unterminated_search_section() -> None:
    error = parse_error("f.py\n<<<<<<< SEARCH\na\nb\n")
    assert error.line == 2
    assert "=======" in str(error)


def test_unterminated_replace_section() -> None:
    error = parse_error("f.py\n<<<<<<< SEARCH\na\n=======\nb\n")
    assert error.line == 2
    assert ">>>>>>> REPLACE" in str(error)


def test_nested_search_marker_means_a_lost_replace_line() -> None:
    text = "f.py\n<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n"
    error = parse_error(text)
    assert error.line == 6
    assert "line 2" in str(error)


def test_replace_before_divider() -> None:
    error = parse_error("f.py\n<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n")
    assert error.line == 4


def test_stray_replace_marker() -> None:
    error = parse_error("f.py\n" + block("a\n", "b\n") + ">>>>>>> REPLACE\n")
    assert error.line == 7


def test_no_blocks() -> None:
    error = parse_error("nothing here\n")
    assert error.line is None


def test_looks_like() -> None:
    assert search_replace.looks_like("f\n" + block("a\n", "b\n"))
    assert not search_replace.looks_like("<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
    assert not search_replace.looks_like("*** Begin Patch\n")


def test_a_diff_between_blocks_is_refused_not_dropped() -> None:
    from nbedit.engine.formats import parse
    from nbedit.errors import PatchSyntaxError

    text = (
        "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-y = 1\n+y = 2\n"
    )
    with pytest.raises(PatchSyntaxError, match="mixes SEARCH/REPLACE blocks with a unified diff") as error:
        parse(text)
    assert error.value.line == 7


# -- reading real replies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "opener",
    [
        "<source>python",
        "<source>",
        "<source lang='python'>",
        "<code>",
        "<pre>",
        "```python",
        "````py",
        "~~~python",
    ],
)
def test_a_code_block_opener_is_never_a_path(opener: str) -> None:
    closer = {"<": "</source>", "`": FENCE, "~": "~~~"}[opener[0]]
    body = block("", "def f():\n    pass\n")
    text = f"aider/coders/editblock_coder.py\n{opener}\n{body}{closer}\n"
    (file_change,) = search_replace.parse(text).files
    assert file_change.path == "aider/coders/editblock_coder.py"
    assert file_change.hunks[0].at_end


def test_an_opener_alone_does_not_name_a_file() -> None:
    body = block("", "x = 1\n")
    error = parse_error(f"Here it is:\n<source>python\n{body}</source>\n")
    assert error.line == 3
    assert "does not say which file" in str(error)


def test_a_closing_tag_ends_the_previous_block() -> None:
    text = f"a.py\n<source>python\n{ONE}</source>\n<source>python\n{TWO}</source>\n"
    (file_change,) = search_replace.parse(text).files
    assert [hunk.old for hunk in file_change.hunks] == ["1\n", "2\n"]


@pytest.mark.parametrize(
    "info", ["src/app.py", "python src/app.py", "python:src/app.py", 'python title="src/app.py"']
)
def test_a_path_in_the_info_string(info: str) -> None:
    assert search_replace.parse(f"{FENCE}{info}\n{A_TO_B}{FENCE}\n").files[0].path == "src/app.py"


@pytest.mark.parametrize(
    "above",
    [
        "Here's the change to `src/app.py`:",
        "### Changes to src/app.py",
        "**File: src/app.py**",
        "2. Then, in your `src/app.py` file, import the theme:",
    ],
)
def test_the_one_file_prose_names_when_nothing_else_does(above: str) -> None:
    text = f"{above}\n\n{FENCE}python\n{A_TO_B}{FENCE}\n"
    assert search_replace.parse(text).files[0].path == "src/app.py"


def test_prose_naming_two_files_is_not_guessed() -> None:
    error = parse_error(f"Move it from `app.py` to `lib.py`:\n{A_TO_B}")
    assert "app.py, lib.py" in str(error)


def test_prose_naming_another_file_than_the_default_is_an_error() -> None:
    error = parse_error(f"Now in `other.py`:\n{A_TO_B}", default_path="cell.py")
    assert "other.py" in str(error)
    text = f"Now in `cell.py`:\n{A_TO_B}"
    assert search_replace.parse(text, default_path="cell.py").files[0].path == "cell.py"


@pytest.mark.parametrize("path", ["src\\app.py", "src\\my\\_module.py", "C:\\work\\app.py"])
def test_backslash_paths_are_kept_as_written_for_the_planner(path: str) -> None:
    assert search_replace.parse(f"{path}\n{A_TO_B}").files[0].path == path


def test_original_and_updated_markers() -> None:
    text = "f.py\n<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED\n"
    assert search_replace.marker_line(text) == 1
    (hunk,) = search_replace.parse(text).files[0].hunks
    assert (hunk.old, hunk.new) == ("a\n", "b\n")


@pytest.mark.parametrize("search", ["\n", "\n\n", "  \n\t\n"])
def test_a_search_of_blank_lines_appends_or_creates(search: str) -> None:
    (hunk,) = search_replace.parse("f.md\n" + block(search, "text\n")).files[0].hunks
    assert (hunk.old, hunk.new, hunk.at_end) == ("", "text\n", True)


def test_a_stray_second_divider_is_never_written_into_code() -> None:
    # the reading that would write '=======' into f.py is dropped; what is left is refused by the
    # planner unless the file really holds it (see test_real_reply_parsing.py)
    (hunk,) = search_replace.parse("f.py\n" + block("a = 1\n", "a = 2\n=======\n")).files[0].hunks
    assert (hunk.old, hunk.new, hunk.alternatives) == ("a = 1\n=======\na = 2\n", "", ())
    (hunk,) = search_replace.parse("f.py\n" + block("a = 1\n", "=======\na = 2\n")).files[0].hunks
    assert (hunk.old, hunk.new, hunk.alternatives) == ("a = 1\n=======\n", "a = 2\n", ())


def test_a_divider_under_a_title_in_a_document_is_text() -> None:
    (hunk,) = search_replace.parse("doc.rst\n" + block("Intro\n", "Intro\n=======\n")).files[0].hunks
    assert (hunk.old, hunk.new) == ("Intro\n", "Intro\n=======\n")
    # not under a title, under a title longer than it, or in a file without such titles: a stray
    for path, new in [
        ("doc.rst", "\n=======\n"),
        ("doc.rst", "A long title\n=======\n"),
        ("doc.md", "Intro\n=======\n"),
    ]:
        (hunk,) = search_replace.parse(f"{path}\n" + block("Intro\n", new)).files[0].hunks
        assert hunk.new == "" and "=======" in hunk.old, path


def test_a_divider_in_the_old_text_too_is_the_file_text() -> None:
    old = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\n"
    new = "<<<<<<< HEAD\nours\n=======\nTHEIRS\n>>>>>>> topic\n"
    (hunk,) = search_replace.parse("fixture.py\n" + block(old, new)).files[0].hunks
    readings = [(hunk.old, hunk.new), *hunk.alternatives]
    assert (old, new) in readings
    assert all(
        "=======" not in reading_new or "=======" in reading_old for reading_old, reading_new in readings
    )


@pytest.mark.parametrize("above", ["python", "Python", "bash", "Fix:", "Example:", "Change:"])
def test_a_language_name_or_a_label_alone_is_not_a_path(above: str) -> None:
    body = block("", "x = 1\n")
    text = f"{above}\n{FENCE}\n{body}{FENCE}\n"
    assert search_replace.parse(text, default_path="cell.py").files[0].path == "cell.py"
    assert "does not say which file" in str(parse_error(text))


@pytest.mark.parametrize("name", ["Makefile", "Makefile:", "Dockerfile", "LICENSE:", "`notes`:", "Notes"])
def test_files_without_an_extension_are_still_paths(name: str) -> None:
    expected = name.strip("`:")
    assert search_replace.parse(f"{name}\n{A_TO_B}").files[0].path == expected


def test_a_file_named_in_prose_must_fit_the_block_language() -> None:
    text = f"This uses the new `config.json`:\n{FENCE}python\n{A_TO_B}{FENCE}\n"
    assert "config.json" in str(parse_error(text))
    assert "names another file" in str(parse_error(text, default_path="app.py"))
    for opener in (f"{FENCE}json", f"{FENCE}", f"{FENCE}text", "<source>json"):
        text = f"Create `config.json`:\n{opener}\n{A_TO_B}{FENCE}\n"
        assert search_replace.parse(text).files[0].path == "config.json", opener


@pytest.mark.parametrize(
    "label",
    [
        "**src/b.py**",
        "**File: src/b.py**",
        "**`src/b.py`**:",
        "### Changes to `src/b.py`",
        "#### 2. Update src/b.py",
        "File: src/b.py",
        "Path: `src/b.py`",
        "Updated file: src/b.py",
        "src/b.py (new file)",
        "**`src/b.py` (updated)**",
    ],
)
def test_a_heading_bold_or_label_line_names_the_next_block_file(label: str) -> None:
    text = f"**src/a.py**\n{FENCE}python\n{ONE}{FENCE}\n\n{label}\n{FENCE}python\n{TWO}{FENCE}\n"
    first, second = search_replace.parse(text).files
    assert (first.path, second.path) == ("src/a.py", "src/b.py")
    assert second.hunks[0].old == "2\n"


@pytest.mark.parametrize(
    "line",
    ["### Moving code from `src/a.py` to `src/b.py`", "Note: see the docs", "Fix: typo", "Note: `src/b.py`"],
)
def test_a_heading_or_label_that_names_no_single_file_is_prose(line: str) -> None:
    text = f"src/a.py\n{ONE}\n{line}\n{TWO}"
    if "src/b.py" in line:  # prose that names another file is not guessed either way
        assert "names another file" in str(parse_error(text))
    else:
        (file_change,) = search_replace.parse(text).files
        assert file_change.path == "src/a.py" and len(file_change.hunks) == 2


# -- property: the wrapping a chat reply adds never changes what the blocks say --------------------


_LINE = st.text(alphabet="abc xyz_()=:#'\"\t", min_size=0, max_size=12).filter(
    lambda line: line.strip() not in ("", "...") and not line.lstrip().startswith(("#", "`", "~", "<"))
)
_PATHS = st.sampled_from(["app.py", "src/app.py", "docs/index.rst", "a/b/c.txt", "Makefile"])
_OPENERS = st.sampled_from(["", "```", "```python", "````py", "~~~", "<source>python", "<source>", "<code>"])
_PROSE = st.sampled_from(["", "Here is the change:", "I'll update it.\n\nSee below:", "1. Then:"])


@settings(max_examples=150, deadline=None)
@given(
    blocks=st.lists(
        st.tuples(_PATHS, st.lists(_LINE, max_size=3), st.lists(_LINE, max_size=3), _OPENERS, _PROSE),
        min_size=1,
        max_size=4,
    ),
    decorate=st.sampled_from(["{}", "`{}`", "**{}**", "### {}", "{}:", "**File: {}**", "File: {}"]),
)
def test_prose_fences_and_tags_around_blocks_never_change_them(blocks: list, decorate: str) -> None:
    bare, wrapped = [], []
    for path, old, new, opener, prose in blocks:
        body = block("".join(line + "\n" for line in old), "".join(line + "\n" for line in new))
        bare.append(f"{path}\n{body}")
        closer = {
            "`": opener.split("p")[0].rstrip("y"),
            "~": "~~~",
            "<": "</" + opener[1:].split(">")[0] + ">",
        }
        close = closer.get(opener[:1], "")
        named = decorate.format(path)
        wrapped.append(
            f"{prose}\n\n{named}\n{opener}\n{body}{close}\n\nDone.\n"
            if opener
            else f"{prose}\n\n{named}\n{body}\n"
        )
    expected = search_replace.parse("".join(bare))
    got = search_replace.parse("".join(wrapped))
    assert [(f.path, [(h.old, h.new, h.at_end) for h in f.hunks]) for f in got.files] == [
        (f.path, [(h.old, h.new, h.at_end) for h in f.hunks]) for f in expected.files
    ]


def test_underscores_of_a_file_name_in_a_bold_label_are_kept() -> None:
    text = f"**a.py**\n{ONE}\n**File: pkg/__init__.py**\n{TWO}\n__File: __main__.py__\n{THREE}"
    assert [f.path for f in search_replace.parse(text).files] == ["a.py", "pkg/__init__.py", "__main__.py"]
