"""The real release histories in ``tests/data/real-history`` (see its SOURCE.md), as the tests read them:
each project's archive unpacked once, and a tree of files as a mapping of paths to bytes."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "real-history"
ARCHIVES = sorted(DATA.glob("*-history.tar.xz"))


def unpack(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each project's archive, unpacked in a folder of its own: {project: folder}."""
    folders = {}
    for archive_path in ARCHIVES:
        project = archive_path.name[: -len("-history.tar.xz")]
        target = tmp_path_factory.mktemp(project)
        with tarfile.open(archive_path) as archive:
            archive.extractall(target, filter="data")
        folders[project] = target
    return folders


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root``: its path relative to ``root`` (``/``-separated) and its bytes."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }
