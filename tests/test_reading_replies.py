"""Issue 21: a reply's old text that is not the file's, read as a careful person reads it.

Shapes taken from real replies (aider's history, ``tests/data/real-replies``), rebuilt on small
files of their own: an elision line standing for the lines between two others, line numbers a
file viewer pasted before every line, one SEARCH/REPLACE block given once for each place, a
context line the reply left out, a call the reply joined into one line, a blank-line run the
reply kept at another length. Each reading must place the change exactly or refuse with the
reason, leaving the file byte-identical (``nbedit.engine.readings``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import nbedit
from nbedit.engine.models import Tier
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch

PARSER = '''import os


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--history-file",
        default=os.environ.get("HISTORY_FILE", ".history"),
        help="Specify the history file (default: .history)",
    )
    parser.add_argument(
        "--model",
        default="gpt-4",
        help="Specify the model to use",
    )
    parser.add_argument(
        "--no-pretty",
        action="store_false",
        help="Disable pretty output",
    )
    return parser
'''


def reply(path: str, old: str, new: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


def workspace(tmp_path: Path, name: str, text: str, newline: str = "\n") -> nbedit.Workspace:
    (tmp_path / name).write_bytes(text.replace("\n", newline).encode())
    return nbedit.Workspace(tmp_path, history=False)


def applied(tmp_path: Path, name: str, text: str, change: str, newline: str = "\n") -> tuple[str, list[Tier]]:
    ws = workspace(tmp_path, name, text, newline)
    plan = ws.plan_patch(change)
    tiers = [hunk.match.tier for file in plan.files for hunk in file.hunks]
    ws.apply(plan)
    return (tmp_path / name).read_bytes().decode(), tiers


def refused(tmp_path: Path, name: str, text: str, change: str, error: type[MatchError] = MatchError) -> str:
    ws = workspace(tmp_path, name, text)
    with pytest.raises(error) as caught:
        ws.plan_patch(change)
    assert (tmp_path / name).read_bytes() == text.encode()
    return str(caught.value)


# ------------------------------------------------------------------ elisions


def test_an_elision_line_stands_for_the_files_lines_between_its_neighbours(tmp_path: Path) -> None:
    old = (
        '        help="Specify the history file (default: .history)",\n    )\n    ...\n'
        '        help="Disable pretty output",\n'
    )
    new = (
        '        help="Specify the history file (default: .history, env: HISTORY_FILE)",\n    )\n    ...\n'
        '        help="Disable pretty output (env: PRETTY)",\n'
    )
    after, tiers = applied(tmp_path, "args.py", PARSER, reply("args.py", old, new))
    assert after == PARSER.replace("(default: .history)", "(default: .history, env: HISTORY_FILE)").replace(
        "Disable pretty output", "Disable pretty output (env: PRETTY)"
    )
    assert tiers == [Tier.READING]


def test_a_commented_elision_in_a_crlf_file_keeps_the_files_line_endings(tmp_path: Path) -> None:
    old = "def get_parser():\n    # ... existing code ...\n    return parser\n"
    added = "    parser.set_defaults(pretty=True)\n"
    new = "def get_parser():\n    # ... existing code ...\n" + added + "    return parser\n"
    after, _ = applied(tmp_path, "args.py", PARSER, reply("args.py", old, new), newline="\r\n")
    wanted = PARSER.replace("    return parser\n", added + "    return parser\n")
    assert after == wanted.replace("\n", "\r\n")


def test_an_elision_whose_lines_after_it_occur_twice_is_refused_with_the_reason(tmp_path: Path) -> None:
    old = "    parser.add_argument(\n        ...\n    )\n"
    new = "    parser.add_argument(\n        ...\n    )  # noqa\n"
    message = refused(tmp_path, "args.py", PARSER, reply("args.py", old, new), AmbiguousMatch)
    assert "will not guess how far the elision reaches" in message and "found at lines" in message


def test_an_elision_in_the_old_text_only_is_never_matched_as_text(tmp_path: Path) -> None:
    old = "def get_parser():\n    ...\n    return parser\n"
    new = "def get_parser():\n    return build_parser()\n"
    message = refused(tmp_path, "args.py", PARSER, reply("args.py", old, new), NoMatch)
    assert "its old text has an elision line ('...', line 2), which is never matched as text" in message


def test_elided_lines_that_fit_two_places_are_ambiguous(tmp_path: Path) -> None:
    text = "def a():\n    start()\n    step()\n    stop()\n\n\ndef b():\n"
    text += "    start()\n    other()\n    stop()\n"
    old = "    start()\n    ...\n    stop()\n"
    new = "    start()\n    ...\n    stop(now=True)\n"
    message = refused(tmp_path, "m.py", text, reply("m.py", old, new), AmbiguousMatch)
    assert "lines 4, 10" in message


# ------------------------------------------------------------------ pasted line numbers


def test_line_numbers_a_viewer_pasted_are_dropped(tmp_path: Path) -> None:
    old = "  1\timport os\n  2\t\n  3\t\n  4\tdef get_parser():\n"
    new = "  1\timport os\n  2\timport argparse\n  3\t\n  4\t\n  5\tdef get_parser():\n"
    after, tiers = applied(tmp_path, "args.py", PARSER, reply("args.py", old, new))
    assert after == PARSER.replace("import os\n", "import os\nimport argparse\n", 1)
    assert tiers == [Tier.READING]


def test_line_numbers_with_a_space_keep_the_indentation_after_them(tmp_path: Path) -> None:
    old = " 12     parser.add_argument(\n 13         \"--model\",\n"
    new = " 12     parser.add_argument(\n 13         \"--model\",\n 14         \"-m\",\n"
    after, _ = applied(tmp_path, "args.py", PARSER, reply("args.py", old, new))
    assert after == PARSER.replace('        "--model",\n', '        "--model",\n        "-m",\n')


def test_line_numbers_that_do_not_count_up_are_not_taken_for_pasted_ones(tmp_path: Path) -> None:
    old = "  1 import os\n  7 def get_parser():\n"
    new = "  1 import os\n  7 def get_parser(argv=None):\n"
    refused(tmp_path, "args.py", PARSER, reply("args.py", old, new), NoMatch)


# ------------------------------------------------------------------ one block per place


def test_one_block_given_once_for_each_place_changes_each_place_once(tmp_path: Path) -> None:
    text = "def a():\n    time.sleep(1)\n    go()\n\n\ndef b():\n    time.sleep(1)\n    stop()\n"
    block = reply("m.py", "    time.sleep(1)\n", "    backoff.wait()\n")
    after, _ = applied(tmp_path, "m.py", text, block + "\n" + block)
    assert after == text.replace("time.sleep(1)", "backoff.wait()")


def test_one_block_given_fewer_times_than_its_places_is_ambiguous(tmp_path: Path) -> None:
    text = "a()\nx = 1\nb()\nx = 1\nc()\nx = 1\n"
    block = reply("m.py", "x = 1\n", "x = 2\n")
    refused(tmp_path, "m.py", text, block + "\n" + block, AmbiguousMatch)


# ------------------------------------------------------------------ context the reply skipped


def test_a_context_line_the_reply_left_out_stays_where_it_is(tmp_path: Path) -> None:
    text = (
        "def undo(self):\n    last = self.repo.head.commit\n    dump(last)\n"
        "    changed = {item.a_path for item in last.diff(None)}\n"
        "    dirty = self.dirty()\n    return changed & dirty\n"
    )
    old = (
        "def undo(self):\n    last = self.repo.head.commit\n"
        "    changed = {item.a_path for item in last.diff(None)}\n    dirty = self.dirty()\n"
    )
    new = old.replace("last.diff(None)", "last.diff(last.parents[0])")
    after, tiers = applied(tmp_path, "undo.py", text, reply("undo.py", old, new))
    assert after == text.replace("last.diff(None)", "last.diff(last.parents[0])")
    assert tiers == [Tier.READING]


def test_lines_added_where_the_reply_skipped_file_lines_are_refused(tmp_path: Path) -> None:
    text = "if message:\n    history.add(message)\n    output()\n    run(message)\nelse:\n    run()\n"
    old = "if message:\n    output()\n    run(message)\nelse:\n"
    new = "if message:\n    log(message)\n    output()\n    run(message)\nelse:\n"  # added at the gap
    refused(tmp_path, "main.py", text, reply("main.py", old, new), NoMatch)


# ------------------------------------------------------------------ a line joined or split


def test_a_call_the_reply_joined_into_one_line_is_replaced_whole(tmp_path: Path) -> None:
    text = (
        'if interrupted:\n    console.print(\n        "[red]Unable to get a message. Try again."\n'
        "    )\n    return\n"
    )
    old = '    console.print("[red]Unable to get a message. Try again.")\n'
    new = '    io.tool_error("Unable to get a message. Try again.")\n'
    after, tiers = applied(tmp_path, "c.py", text, reply("c.py", old, new))
    assert after == 'if interrupted:\n    io.tool_error("Unable to get a message. Try again.")\n    return\n'
    assert tiers == [Tier.READING]


def test_a_joined_line_the_change_keeps_is_refused_even_when_its_text_stands_below(tmp_path: Path) -> None:
    """The kept joined line's text also stands, unsplit, further down: that is no licence to rewrite
    the split one above (found by ``benchmarks/bench_readings.py`` on the email package)."""
    text = (
        "            if last_charset is not None:\n                chunks.append((SPACE.join(last_chunk),\n"
        "                    last_charset))\n            last_chunk = [string]\n        if last_chunk:\n"
        "            chunks.append((SPACE.join(last_chunk), last_charset))\n        self._chunks = chunks\n"
    )
    old = (
        "                chunks.append((SPACE.join(last_chunk), last_charset))\n"
        "            last_chunk = [string]\n        if last_chunk:\n"
        "            chunks.append((SPACE.join(last_chunk), last_charset))\n"
    )
    new = old[: -len("\n")] + "  # changed\n"
    refused(tmp_path, "c.py", text, reply("c.py", old, new), NoMatch)


def test_a_joined_line_the_change_keeps_is_refused(tmp_path: Path) -> None:
    """Writing the reply's joined line would change a line the reply did not mean to change."""
    text = "result = compute(\n    first,\n    second,\n)\nshow(result)\n"
    old = "result = compute(first, second)\nshow(result)\n"
    new = "result = compute(first, second)\nshow(result)\nsave(result)\n"
    refused(tmp_path, "c.py", text, reply("c.py", old, new), NoMatch)


# ------------------------------------------------------------------ blank lines next to added lines


def test_lines_added_next_to_a_blank_run_of_another_length_are_refused_saying_so(tmp_path: Path) -> None:
    text = "import sys\n\nimport httpx\nfrom bs4 import BeautifulSoup\n"
    change = "--- scrape.py\n+++ scrape.py\n@@ ... @@\n import sys\n+import pypandoc\n import httpx\n"
    message = refused(tmp_path, "scrape.py", text, change, NoMatch)
    assert "with 1 blank line after line 1 where the old text has 0" in message
    assert "copy the blank lines from the file" in message
