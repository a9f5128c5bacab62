"""The release diffs of ``tests/data/real-history``, for tests that compare a fast path with its reference.

Each archive holds the source trees of consecutive releases of a real project and the
``git diff`` between each pair (``patches/<n>-<old>-<new>.diff``; see the folder's
SOURCE.md). Tests read the patch texts alone, or the extracted tree each patch applies to.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["release_patch_texts", "release_patches"]

ARCHIVES = Path(__file__).parent / "data" / "real-history"


def _archives() -> list[Path]:
    found = sorted(ARCHIVES.glob("*-history.tar.xz"))
    assert found, "the release history data is missing"
    return found


def release_patch_texts() -> Iterator[tuple[str, str]]:
    """(member name, patch text) of every release patch, read from the archives without extracting them."""
    for archive_path in _archives():
        with tarfile.open(archive_path) as archive:
            for member in archive.getmembers():
                if member.name.startswith("patches/"):
                    handle = archive.extractfile(member)
                    assert handle is not None
                    yield member.name, handle.read().decode("utf-8")


def release_patches(scratch: Path) -> Iterator[tuple[Path, Path]]:
    """(the release tree a patch applies to, the patch file) for every release patch, extracted under ``scratch``."""
    for archive_path in _archives():
        folder = scratch / archive_path.name
        with tarfile.open(archive_path) as archive:
            archive.extractall(folder, filter="data")
        for patch in sorted((folder / "patches").iterdir()):
            old = patch.stem.split("-", 2)[1]
            yield folder / "trees" / old, patch
