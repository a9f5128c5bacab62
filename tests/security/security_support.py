"""Helpers of the security suite (importable by its test modules)."""

from __future__ import annotations

import os
from pathlib import Path


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry under ``folder``: bytes and mode of files, targets of links, folders."""
    result: dict[str, object] = {}
    if not folder.exists():
        return result
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        info = path.lstat()
        if path.is_symlink():
            result[key] = ("link", os.readlink(path))
        elif path.is_dir():
            result[key] = ("dir", oct(info.st_mode))
        else:
            result[key] = ("file", path.read_bytes(), oct(info.st_mode), info.st_uid, info.st_gid)
    return result
