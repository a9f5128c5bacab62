"""What a one-entry process packs without loading zstd, and what it does not check at all.

A patch of a thousand hunks ten lines apart changes lines all over a file of a few hundred
kilobytes: its hunks' spans are most of the file, so the "after" is stored as a keyframe, not
a delta. A process that records one entry and exits (the command line's) packs such a keyframe
with zlib's fastest level instead of importing zstd (~15 ms) for it; the version reads back, and
undo and redo give the exact bytes. Spans whose new texts are alone over half the file are not
checked as a region delta first (it could never be kept).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nbedit.storage.history import HistoryStore


def _close_patch(hunks: int) -> tuple[bytes, bytes, str]:
    lines = [f"value_{number} = compute({number}, scale=2)\n" for number in range(hunks * 10)]
    after = list(lines)
    parts = ["--- a/close.py\n+++ b/close.py\n"]
    for hunk in range(hunks):
        changed = hunk * 10 + 5
        after[changed] = f"value_{changed} = compute({changed}, scale=3)\n"
        parts.append(f"@@ -{changed - 2},7 +{changed - 2},7 @@\n")
        parts += [" " + line for line in lines[changed - 3 : changed]]
        parts += ["-" + lines[changed], "+" + after[changed]]
        parts += [" " + line for line in lines[changed + 1 : changed + 4]]
    return "".join(lines).encode(), "".join(after).encode(), "".join(parts)


_APPLY = (
    "import sys\n"
    "from nbedit.workspace import Workspace\n"
    "workspace = Workspace(sys.argv[1], history=True, home=sys.argv[2])\n"
    "result = workspace.apply(workspace.plan_patch(open(sys.argv[3]).read()))\n"
    "print(result.entry_id, 'zstandard' in sys.modules)\n"
)


def test_a_keyframe_recorded_in_a_process_without_zstd_is_zlib(tmp_path: Path) -> None:
    before, after, patch = _close_patch(1_000)
    assert (256 << 10) <= len(after) < (1 << 20)  # between zstd's threshold and the cold limit
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    (root / "close.py").write_bytes(before)
    (tmp_path / "change.diff").write_text(patch)
    finished = subprocess.run(
        [sys.executable, "-c", _APPLY, str(root), str(home), str(tmp_path / "change.diff")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    entry_id, zstd_loaded = finished.stdout.split()
    assert zstd_loaded == "False"
    assert (root / "close.py").read_bytes() == after
    import sqlite3

    with sqlite3.connect(home / "history.sqlite3") as connection:
        after_row = connection.execute(
            "SELECT v.base, v.compressed FROM files AS f JOIN versions AS v ON v.id = f.after_version"
        ).fetchone()
    assert after_row == (None, 1)  # a keyframe, zlib
    with HistoryStore(home) as store:
        versions = store.file_versions(entry_id)[0]
        assert (versions.before, versions.after) == (before, after)


def test_a_keyframe_recorded_after_zstd_was_loaded_is_zstd(tmp_path: Path) -> None:
    """Once zstd is loaded (a kernel, a server) it packs the keyframe, as before."""
    before, after, patch = _close_patch(1_000)
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    (root / "close.py").write_bytes(before)
    (tmp_path / "change.diff").write_text(patch)
    script = "import zstandard\n" + _APPLY
    finished = subprocess.run(
        [sys.executable, "-c", script, str(root), str(home), str(tmp_path / "change.diff")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    entry_id = finished.stdout.split()[0]
    import sqlite3

    with sqlite3.connect(home / "history.sqlite3") as connection:
        after_row = connection.execute(
            "SELECT v.base, v.compressed FROM files AS f JOIN versions AS v ON v.id = f.after_version"
        ).fetchone()
    assert after_row == (None, 2)  # a keyframe, zstd
    with HistoryStore(home) as store:
        assert store.file_versions(entry_id)[0].after == after


def test_spans_that_cover_most_of_the_file_are_not_checked_as_a_region_delta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A region delta is kept only under half the file: spans whose new texts alone are more than
    that are refused before they are checked against the bytes (what the check would conclude)."""
    from nbedit.engine.models import Match, Tier
    from nbedit.engine.spans import EncodedSpans
    from nbedit.storage import delta, versions

    before = b"".join(b"line %05d\n" % number for number in range(4_000))
    matches = [
        Match(start, start + 11, f"LINE {start // 11:05d}\n", Tier.EXACT, 1.0, start // 11 + 1, 1)
        for start in range(0, len(before), 11)
    ]
    dense = EncodedSpans(matches[::2], "utf-8")  # half the lines: over half the file with the table
    sparse = EncodedSpans(matches[::40], "utf-8")
    assert dense.least_payload() == sum(len(span[2]) for span in dense)

    def replayed(spans: EncodedSpans) -> bytes:
        pieces, cursor = [], 0
        for start, end, replacement in spans:
            pieces += [before[cursor:start], replacement]
            cursor = end
        return b"".join([*pieces, before[cursor:]])

    checked: list[int] = []
    real = delta.region_delta

    def counting(base, target, spans):  # type: ignore[no-untyped-def]
        checked.append(len(spans))
        return real(base, target, spans)

    monkeypatch.setattr(delta, "region_delta", counting)
    assert versions.pack_regions(before, replayed(dense), dense) is None
    assert checked == []  # refused before the check
    packed = versions.pack_regions(before, replayed(sparse), sparse)
    assert packed is not None and checked == [len(sparse)]
    wrong = replayed(sparse)[:-1] + b"?"
    assert versions.pack_regions(before, wrong, sparse) is None  # the check still refuses wrong spans
