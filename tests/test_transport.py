"""Transport properties: the change written is exactly what old -> new says.

For any old -> new and any located region:
- a region equal to old gives exactly new (the exact replacement);
- a region that drifted only in ways the lenient tiers forgive (a uniform
  indentation offset, trailing blanks, curly punctuation in context) gives new
  moved by the offset, with context lines copied from the file;
- a region where a line the change removes or rewrites is really different is
  refused, unless new keeps exactly the file's line (the mis-copied old line).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine.transport import Offset, Refusal, align, indentation_offset, transport

WORDS = ["x = 1", "return x", "if ok:", "pass", "name = 'it'", 'print("hi")', "a - b", ""]
INDENTS = ["", "    ", "        ", "\t"]

line = st.builds(
    lambda indent, word: indent + word if word else "", st.sampled_from(INDENTS), st.sampled_from(WORDS)
)
lines = st.lists(line, min_size=1, max_size=8)


@st.composite
def edits(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    old = draw(lines)
    new = list(old)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "reindent"]))
        position = draw(st.integers(0, max(len(new) - 1, 0)))
        if kind == "replace" and new:
            new[position] = draw(line)
        elif kind == "insert":
            new.insert(position, draw(line))
        elif kind == "delete" and len(new) > 1:
            del new[position]
        elif kind == "reindent" and new and new[position]:
            new[position] = draw(st.sampled_from(INDENTS)) + new[position].lstrip()
    return old, new


def text(lines_: list[str], final: bool = True) -> str:
    return "\n".join(lines_) + ("\n" if final else "")


@settings(max_examples=300, deadline=None)
@given(edits(), st.booleans(), st.booleans())
def test_a_region_equal_to_old_gives_exactly_new(
    edit: tuple[list[str], list[str]], old_final: bool, new_final: bool
) -> None:
    old, new = edit
    old_text = text(old, old_final)
    if not old_text:
        return  # no old text: an insertion, placed by the matcher without transport
    region = old_text.splitlines(keepends=True)
    result = transport(old_text, text(new, new_final), region, newline="\n")
    assert result == text(new, new_final)


def _shared_lines(old: list[str], new: list[str]) -> set[int]:
    """Indices of old lines that old and new share exactly (context), as the transport aligns them."""
    shared: set[int] = set()
    for tag, first, last, _, _ in align(old, new):
        if tag == "equal":
            shared.update(range(first, last))
    return shared


@settings(max_examples=400, deadline=None)
@given(edits(), st.sampled_from(["    ", "\t", "  "]), st.data())
def test_a_drifted_region_gets_new_moved_by_the_offset(
    edit: tuple[list[str], list[str]], prefix: str, data: st.DataObject
) -> None:
    old, new = edit
    if not any(item.strip() for item in old):
        return  # blank old text: no lenient tier locates it (nothing to read an offset from)
    shared = _shared_lines(old, new)
    region = []
    for number, item in enumerate(old):
        drifted = prefix + item if item else item
        if number in shared and data.draw(st.booleans()):
            drifted = drifted.replace("'", "\u2019").replace(" - ", " \u2013 ") + "  "  # context may drift
        region.append(drifted + "\r\n")
    result = transport(text(old), text(new), region, newline="\r\n")
    if isinstance(result, Refusal):
        assert result.kind == "indentation"  # only when a new line is shallower than the offset to remove
        return
    out = result.split("\r\n")
    assert out.pop() == ""
    assert len(out) == len(new)
    for produced, wanted in zip(out, new, strict=True):
        if produced == (prefix + wanted if wanted else wanted):
            continue
        # a context line copied from the file: the same line, up to the forgiven drift
        assert (
            produced.rstrip().replace("\u2019", "'").replace(" \u2013 ", " - ") == (prefix + wanted).rstrip()
        )
        assert wanted in (old[n] for n in shared)


@settings(max_examples=300, deadline=None)
@given(edits(), st.data())
def test_a_changed_line_that_is_not_in_the_file_is_refused(
    edit: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    old, new = edit
    changed = [n for n in range(len(old)) if n not in _shared_lines(old, new) and old[n].strip()]
    if not changed:
        return
    victim = data.draw(st.sampled_from(changed))
    region = [item + "\n" for item in old]
    region[victim] = old[victim] + " + 1\n"  # really different, not just drift
    result = transport(text(old), text(new), region, newline="\n")
    if region[victim][:-1] in new:
        return  # new keeps the file's line: the mis-copy case, allowed
    assert isinstance(result, Refusal) and result.line == victim


def test_the_mis_copied_old_line_takes_the_files_line() -> None:
    old = "a = 1\nif lines:\n    go()\n"
    new = "a = 1\nif line:\n    stop()\n"
    region = ["a = 1\n", "if line:\n", "    go()\n"]
    assert transport(old, new, region, newline="\n") == "a = 1\nif line:\n    stop()\n"


def test_curly_punctuation_the_edit_left_alone_is_kept() -> None:
    region = ["print(\u201chello\u201d, x)\n"]
    assert (
        transport('print("hello", x)\n', 'print("hello", y)\n', region, newline="\n")
        == "print(\u201chello\u201d, y)\n"
    )
    # a changed character is always new's
    assert transport("a \u2013 b\n", "a - b\n", ["    a \u2013 b\n"], newline="\n") == "    a - b\n"


def test_offsets_are_read_from_lines_that_agree() -> None:
    assert indentation_offset(["x", "  y"], ["    x", "      y"]) == Offset(added="    ")
    assert indentation_offset(["        x"], ["    x"]) == Offset(removed="    ")
    refusal = indentation_offset(["x", "  y"], ["    x", "  y"])
    assert isinstance(refusal, Refusal) and refusal.kind == "indentation"


@settings(max_examples=300, deadline=None)
@given(edits(), st.sampled_from(["    ", "\t"]))
def test_old_and_new_written_deeper_than_the_file_are_moved_back(
    edit: tuple[list[str], list[str]], prefix: str
) -> None:
    old, new = edit
    if not any(item.strip() for item in old):
        return
    deeper_old = [prefix + item if item else item for item in old]
    deeper_new = [prefix + item if item else item for item in new]
    result = transport(text(deeper_old), text(deeper_new), [item + "\n" for item in old], newline="\n")
    assert result == text(new)


def test_alignment_pairs_a_repeated_line_with_its_own_neighbour() -> None:
    old = ["    ]", "", "    def f(self):"]
    new = ["    ]", "", "    x = [", "    ]", "", "    def f(self):"]
    assert align(old, new)[0] == ("equal", 0, 2, 0, 2)
