"""Rebuild ``packaging-history.tar.xz`` from released sdists (see SOURCE.md).

Usage: python make_data.py PROJECT SDIST_DIR OUTPUT.tar.xz

Each ``<project>-<version>.tar.gz`` in SDIST_DIR (name matched case-insensitively) is unpacked, binary files
(a NUL byte, or not UTF-8) are dropped, and ``diff -ruN`` is run between each
pair of consecutive versions. The archive holds the first text tree as
``trees/<version>/`` (every version: xz's large window stores the near-identical
trees almost for free) and the patches as ``patches/NNN-<old>-<new>.diff``, plus
``versions.txt``. The test applies each patch to its old tree and compares the
result with the new tree, byte for byte, so every step is checked on its own.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split("."))


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _unpack_text_tree(sdist: Path, target: Path) -> None:
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            parts = Path(member.name).parts[1:]  # drop "<project>-<version>/"
            if not parts:
                continue
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            if not _is_text(data):
                continue
            path = target.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    archive.addfile(info, io.BytesIO(data))


def main(project: str, sdist_directory: str, output: str) -> None:
    prefix = project.lower() + "-"

    def version_of(path: Path) -> str:
        return path.name[len(prefix) : -len(".tar.gz")]

    sdists = sorted(
        (p for p in Path(sdist_directory).glob("*.tar.gz") if p.name.lower().startswith(prefix)),
        key=lambda p: _version_key(version_of(p)),
    )
    versions = [version_of(p) for p in sdists]
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for version, sdist in zip(versions, sdists, strict=False):
            _unpack_text_tree(sdist, work / version)
        with tarfile.open(output, "w:xz", preset=9) as archive:
            _add(archive, "versions.txt", "".join(v + "\n" for v in versions).encode())
            for version in versions:
                for path in sorted(p for p in (work / version).rglob("*") if p.is_file()):
                    relative = path.relative_to(work / version).as_posix()
                    _add(archive, f"trees/{version}/{relative}", path.read_bytes())
            for number, (old, new) in enumerate(zip(versions, versions[1:], strict=False), start=1):
                shutil.rmtree(work / "a", ignore_errors=True)
                shutil.rmtree(work / "b", ignore_errors=True)
                shutil.copytree(work / old, work / "a")
                shutil.copytree(work / new, work / "b")
                result = subprocess.run(
                    ["diff", "-ruN", "a", "b"], cwd=work, capture_output=True, check=False
                )
                if result.returncode not in (0, 1):
                    raise SystemExit(result.stderr.decode())
                _add(archive, f"patches/{number:03d}-{old}-{new}.diff", result.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
