"""Files holding SEARCH/REPLACE text keep their markers, and git marks them so merges do too.

A SEARCH/REPLACE block's ``<<<<<<< SEARCH``, ``=======`` and ``>>>>>>> REPLACE`` lines look
exactly like git's conflict markers; a merge once left the README's ``%%edit`` example without
them. ``.gitattributes`` gives these files ``conflict-marker-size=32``, so git's own markers
there are 32 characters long and cannot be mistaken for the examples' 7-character lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# every file that holds SEARCH/REPLACE blocks at the start of a line, and how many blocks
MARKED = {
    "README.md": 1,
    "nbedit/demo/__init__.py": 1,
    "nbedit/jupyter/magics.py": 1,
    "tests/data/cases/already_applied_is_not_a_failure/change.txt": 1,
    "tests/data/cases/ambiguous_refused/change.txt": 1,
    "tests/data/cases/curly_quotes_kept/change.txt": 1,
    "tests/data/cases/indentation_shifted_block/change.txt": 1,
    "tests/data/cases/lf_search_replace_on_crlf_file/change.txt": 1,
    "tests/data/cases/missing_final_newline_kept/change.txt": 1,
    "tests/data/cases/no_match_refused_with_candidates/change.txt": 1,
    "tests/data/cases/partly_applied_refused/change.txt": 2,
    "tests/data/cases/search_replace_append_keeps_missing_final_newline/change.txt": 1,
    "tests/data/cases/search_replace_blocks_apply_in_order/change.txt": 2,
    "tests/data/cases/search_replace_underline_in_old_text/change.txt": 1,
    "tests/data/cases/tabs_and_trailing_spaces_kept/change.txt": 1,
    "tests/data/cases/utf8_bom_kept/change.txt": 1,
    "tests/test_browser_review.py": 4,
    "tests/test_conflict_markers.py": 1,
}
MARKER_LINE = re.compile(rb"^(<<<<<<<|>>>>>>>)( |\r?$)", re.MULTILINE)
BLOCK = re.compile(rb"^<<<<<<< SEARCH\r?\n(?:.*\n)*?=======\r?\n(?:.*\n)*?>>>>>>> REPLACE", re.MULTILINE)

# (a block, for this file's own count: the markers below are content, as in the fixtures)
SAMPLE = """\
<<<<<<< SEARCH
    return "hi " + name
=======
    return f"hello {name}"
>>>>>>> REPLACE
"""


def git(*arguments: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    # HOME is a temporary folder during the tests (conftest.py): a checkout owned by another user
    # needs safe.directory, which the user's own ~/.gitconfig would have given
    command = ["git", "-c", "safe.directory=*", *arguments]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)


needs_git = pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs git and a git checkout"
)


@pytest.mark.parametrize("path", sorted(MARKED))
def test_the_fixtures_still_hold_their_markers(path: str) -> None:
    data = (REPO / path).read_bytes()
    blocks = BLOCK.findall(data)
    assert len(blocks) == MARKED[path], f"{path}: {len(blocks)} complete SEARCH/=======/REPLACE blocks"
    starts = len(re.findall(rb"^<<<<<<< SEARCH", data, re.MULTILINE))
    assert starts == len(re.findall(rb"^>>>>>>> REPLACE", data, re.MULTILINE)) == MARKED[path], path


@needs_git
def test_every_file_holding_markers_is_listed_and_marked() -> None:
    listed = git("ls-files", "-z").stdout.split("\0")
    holding = sorted(
        path
        for path in filter(None, listed)
        if (REPO / path).is_file() and MARKER_LINE.search((REPO / path).read_bytes())
    )
    assert holding == sorted(MARKED), (
        "update MARKED (and .gitattributes when a new kind of file holds blocks)"
    )
    attributes = git("check-attr", "conflict-marker-size", "--", *holding).stdout.splitlines()
    assert attributes == [f"{path}: conflict-marker-size: 32" for path in holding]


@needs_git
def test_a_real_merge_conflict_leaves_the_blocks_alone(tmp_path: Path) -> None:
    repository = tmp_path / "repository"
    repository.mkdir()
    (repository / ".gitattributes").write_bytes((REPO / ".gitattributes").read_bytes())
    example = repository / "README.md"
    example.write_text(f"intro\n\n{SAMPLE}\nend\n")
    config = ("-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false")
    for step in (
        ("init", "-q", "-b", "main"),
        (*config, "add", "-A"),
        (*config, "commit", "-qm", "base"),
        ("checkout", "-qb", "other"),
    ):
        assert git(*step, cwd=repository).returncode == 0, step
    example.write_text(f"intro from other\n\n{SAMPLE}\nend\n")
    assert git(*config, "commit", "-qam", "other", cwd=repository).returncode == 0
    assert git("checkout", "-q", "main", cwd=repository).returncode == 0
    example.write_text(f"intro from main\n\n{SAMPLE}\nend\n")
    assert git(*config, "commit", "-qam", "main", cwd=repository).returncode == 0
    merged = git(*config, "merge", "other", cwd=repository)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    text = example.read_text()
    assert text.startswith(
        "<" * 32 + " HEAD\nintro from main\n" + "=" * 32 + "\nintro from other\n" + ">" * 32
    )
    assert SAMPLE in text  # the block is intact, its 7-character lines distinct from git's markers
    check = git("diff", "--check", cwd=repository).stdout
    assert "<<<<<<< SEARCH" not in check and "leftover conflict marker" in check  # git's markers only
