"""File versions in the history database: keyframes and deltas, content-addressed.

Each version row is addressed by the SHA-256 of its bytes (stored once, however
many entries use it) and is either a *keyframe* (the whole file, compressed)
or a *delta* against another version (``delta.py``). The ``compressed`` column says how the
bytes are packed: 0 as they are, 1 zlib, 2 zstd. Big blobs (a keyframe of a file nbedit has
not seen yet, the first thing recorded for it) use zstd, which packs text as tightly as zlib at
a quarter of the time, so the first edit of a big file is not dominated by compression; small
ones keep zlib, which is built in, so a one-line edit of a small file never imports the zstd
bindings (their import costs more than it saves). Entries written as zlib by older versions
read as before. The "after" of an edit is
stored as a delta against its "before", and the "before" is usually the previous
edit's "after", already stored: so the history grows with the size of the changes,
not of the files, and recording an edit of a big file costs one prefix/suffix scan
and no hashing or compression of the whole file (the caller passes fingerprints).

A new keyframe is written when a chain reaches ``MAX_CHAIN_DEPTH`` deltas or when
the deltas stop being small compared with the file. Replaying a chain only splices
a short list of slices (see ``delta.apply_deltas``), so restoring costs one
decompression of the keyframe plus one join; the depth bound keeps the number of
rows read per restore small. Every restored version is checked against its SHA-256
before it is handed out, so a damaged history can never be written into a file.

These functions run inside the caller's transaction (``database.Database``).
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from typing import Any

from nbedit.errors import HistoryError
from nbedit.storage.delta import Delta, apply_deltas, make_delta

__all__ = [
    "MAX_CHAIN_DEPTH",
    "collect_unused",
    "materialize",
    "previous_version",
    "rebase_orphans",
    "store_version",
    "verified_bytes",
]

MAX_CHAIN_DEPTH = 128
COMPRESSION_LEVEL = 3
ZSTD_LEVEL = 3
ZSTD_FROM = 256 << 10  # bytes; below this zlib is as fast as zstd's import
# Level 1 from here on: on 50 MB notebooks it packs as tightly as level 3 (base64 images) or
# tighter (long printed outputs) in half the time; on code, level 3 is 10% smaller for 15% more time.
ZSTD_FAST_FROM = 16 << 20
ZSTD_FAST_LEVEL = 1
RAW, ZLIB, ZSTD = 0, 1, 2
BLOB_STREAM_FROM = 1 << 20  # bytes; bigger blobs are written into their row in pieces this size

_CHAIN_QUERY = """
WITH RECURSIVE chain(id, base, prefix, suffix, compressed, data, step) AS (
    SELECT id, base, prefix, suffix, compressed, data, 0 FROM versions WHERE id = ?
    UNION ALL
    SELECT v.id, v.base, v.prefix, v.suffix, v.compressed, v.data, chain.step + 1
    FROM versions AS v JOIN chain ON v.id = chain.base
    WHERE chain.step < 100000
)
SELECT base, prefix, suffix, compressed, data FROM chain ORDER BY step
"""

LIVE_VERSIONS = """
WITH RECURSIVE live(id) AS (
    SELECT before_version FROM files WHERE before_version IS NOT NULL
    UNION SELECT after_version FROM files WHERE after_version IS NOT NULL
    UNION SELECT v.base FROM versions AS v JOIN live ON v.id = live.id WHERE v.base IS NOT NULL
)
"""


def _zstd() -> Any:
    import zstandard  # a declared dependency, imported only for big blobs

    return zstandard


def _pack(data: bytes) -> tuple[int, bytes]:
    if len(data) < 64:
        return RAW, data
    if len(data) >= ZSTD_FROM:
        level = ZSTD_FAST_LEVEL if len(data) >= ZSTD_FAST_FROM else ZSTD_LEVEL
        method, packed = ZSTD, _zstd().ZstdCompressor(level=level).compress(data)
    else:
        method, packed = ZLIB, zlib.compress(data, COMPRESSION_LEVEL)
    return (method, packed) if len(packed) < len(data) else (RAW, data)


_DAMAGED = "a stored version is damaged (bad compressed data); it cannot be restored"


def _unpack(compressed: int, data: bytes) -> bytes:
    if compressed == RAW:
        return bytes(data)
    if compressed == ZLIB:
        try:
            return zlib.decompress(data)
        except zlib.error:
            raise HistoryError(_DAMAGED) from None
    if compressed == ZSTD:
        zstandard = _zstd()
        try:
            return bytes(zstandard.ZstdDecompressor().decompress(data))
        except zstandard.ZstdError:
            raise HistoryError(_DAMAGED) from None
    raise HistoryError(
        f"a stored version uses an unknown packing ({compressed}); it was written by a newer nbedit: "
        "upgrade nbedit to restore it"
    )


def materialize(connection: sqlite3.Connection, version: int) -> bytes:
    rows = connection.execute(_CHAIN_QUERY, (version,)).fetchall()
    if not rows or rows[-1][0] is not None:
        raise HistoryError("the history is missing a stored version; this entry can no longer be restored")
    keyframe = _unpack(rows[-1][3], rows[-1][4])
    deltas = [
        Delta(prefix, suffix, _unpack(compressed, data)) for _, prefix, suffix, compressed, data in rows[:-1]
    ]
    deltas.reverse()
    try:
        return apply_deltas(keyframe, deltas)
    except ValueError:
        raise HistoryError("a stored version is inconsistent with its base; it cannot be restored") from None


def verified_bytes(connection: sqlite3.Connection, version: int) -> tuple[bytes, str]:
    """The bytes of ``version`` and their fingerprint, refusing bytes that do not match it."""
    data = materialize(connection, version)
    fingerprint = connection.execute("SELECT fingerprint FROM versions WHERE id = ?", (version,)).fetchone()[
        0
    ]
    if hashlib.sha256(data).hexdigest() != fingerprint:
        raise HistoryError(
            "a stored version does not match its checksum; the history is damaged and this version "
            "cannot be restored"
        )
    return data, fingerprint


def _fits_as_delta(depth: int, chain_bytes: int, middle: int, size: int) -> bool:
    return depth < MAX_CHAIN_DEPTH and middle <= size // 2 + 256 and chain_bytes + middle <= 2 * size + 4096


def store_version(
    connection: sqlite3.Connection, data: bytes, fingerprint: str | None, base: tuple[int, bytes] | None
) -> int:
    """Id of the version holding ``data``; a new one is a delta against ``base`` when that pays."""
    if fingerprint is None:
        fingerprint = hashlib.sha256(data).hexdigest()
    row = connection.execute("SELECT id, size FROM versions WHERE fingerprint = ?", (fingerprint,)).fetchone()
    if row is not None:
        if row[1] != len(data):
            raise HistoryError(
                f"fingerprint {fingerprint[:12]} was given for {len(data)} bytes but names a stored version "
                f"of {row[1]} bytes; pass the SHA-256 of the bytes (nbedit.engine.text.fingerprint)"
            )
        return int(row[0])
    if base is not None:
        base_id, base_data = base
        depth, chain_bytes = connection.execute(
            "SELECT depth, chain_bytes FROM versions WHERE id = ?", (base_id,)
        ).fetchone()
        delta = make_delta(base_data, data)
        if _fits_as_delta(depth, chain_bytes, len(delta.middle), len(data)):
            compressed, packed = _pack(delta.middle)
            return _insert(
                connection,
                "INSERT INTO versions (fingerprint, size, base, prefix, suffix, depth, chain_bytes, compressed,"
                " data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {data})",
                (fingerprint, len(data), base_id, delta.prefix, delta.suffix, depth + 1,
                 chain_bytes + len(delta.middle), compressed),
                packed,
            )  # fmt: skip
    compressed, packed = _pack(data)
    return _insert(
        connection,
        "INSERT INTO versions (fingerprint, size, compressed, data) VALUES (?, ?, ?, {data})",
        (fingerprint, len(data), compressed),
        packed,
    )


def _insert(connection: sqlite3.Connection, statement: str, values: tuple[object, ...], data: bytes) -> int:
    """Insert a version row; a big blob is streamed in, so SQLite never holds a second copy of it.

    Binding a 40 MB blob makes SQLite copy it whole (and keep pages of it) while the
    statement runs: about twice its size in peak memory. A row made with
    ``zeroblob(n)`` and filled through ``blobopen`` (Python 3.11+) in 1 MiB writes
    costs the same time and no copy.
    """
    if len(data) < BLOB_STREAM_FROM or not hasattr(connection, "blobopen"):
        cursor = connection.execute(statement.format(data="?"), (*values, data))
        return int(cursor.lastrowid or 0)
    cursor = connection.execute(statement.format(data="zeroblob(?)"), (*values, len(data)))
    version = int(cursor.lastrowid or 0)
    view = memoryview(data)
    with connection.blobopen("versions", "data", version) as blob:
        for start in range(0, len(data), BLOB_STREAM_FROM):
            blob.write(view[start : start + BLOB_STREAM_FROM])
    return version


def previous_version(connection: sqlite3.Connection, path: str, size: int) -> tuple[int, bytes] | None:
    """The last recorded version at ``path``: a delta base for bytes nbedit has not seen yet
    (the file was changed by something else since its last entry)."""
    row = connection.execute(
        "SELECT f.after_version, v.size FROM files AS f JOIN versions AS v ON v.id = f.after_version"
        " WHERE f.new_path = ? OR (f.path = ? AND f.new_path IS NULL) ORDER BY f.entry DESC LIMIT 1",
        (path, path),
    ).fetchone()
    if row is None or not (size // 2 <= row[1] <= size * 2):
        return None
    try:
        return int(row[0]), materialize(connection, int(row[0]))
    except HistoryError:
        return None


def collect_unused(connection: sqlite3.Connection, candidates: set[int]) -> int:
    """Delete the candidate versions nothing refers to any more, then their bases likewise."""
    removed = 0
    while candidates:
        next_candidates: set[int] = set()
        for version in candidates:
            used = connection.execute(
                "SELECT EXISTS (SELECT 1 FROM files WHERE before_version = ?1 OR after_version = ?1)"
                " OR EXISTS (SELECT 1 FROM versions WHERE base = ?1)",
                (version,),
            ).fetchone()[0]
            if used:
                continue
            row = connection.execute("SELECT base FROM versions WHERE id = ?", (version,)).fetchone()
            if row is None:
                continue
            connection.execute("DELETE FROM versions WHERE id = ?", (version,))
            removed += 1
            if row[0] is not None:
                next_candidates.add(int(row[0]))
        candidates = next_candidates
    return removed


def rebase_orphans(connection: sqlite3.Connection) -> None:
    """Make every version an entry uses depend only on versions entries use, so the rest can go.

    A delta whose base is no longer used is re-expressed against its nearest used
    ancestor, or stored whole when there is none (or the new delta would be big).
    """
    referenced = {
        row[0]
        for row in connection.execute(
            "SELECT before_version FROM files WHERE before_version IS NOT NULL"
            " UNION SELECT after_version FROM files WHERE after_version IS NOT NULL"
        )
    }
    bases = dict(connection.execute("SELECT id, base FROM versions WHERE base IS NOT NULL").fetchall())
    for version in sorted(referenced):
        base = bases.get(version)
        if base is None or base in referenced:
            continue
        ancestor = bases.get(base)
        while ancestor is not None and ancestor not in referenced:
            ancestor = bases.get(ancestor)
        data = materialize(connection, version)
        if ancestor is not None:
            depth, chain_bytes = connection.execute(
                "SELECT depth, chain_bytes FROM versions WHERE id = ?", (ancestor,)
            ).fetchone()
            delta = make_delta(materialize(connection, ancestor), data)
            if _fits_as_delta(depth, chain_bytes, len(delta.middle), len(data)):
                compressed, packed = _pack(delta.middle)
                connection.execute(
                    "UPDATE versions SET base = ?, prefix = ?, suffix = ?, depth = ?, chain_bytes = ?,"
                    " compressed = ?, data = ? WHERE id = ?",
                    (ancestor, delta.prefix, delta.suffix, depth + 1, chain_bytes + len(delta.middle),
                     compressed, packed, version),
                )  # fmt: skip
                bases[version] = ancestor
                continue
        compressed, packed = _pack(data)
        connection.execute(
            "UPDATE versions SET base = NULL, prefix = 0, suffix = 0, depth = 0, chain_bytes = 0,"
            " compressed = ?, data = ? WHERE id = ?",
            (compressed, packed, version),
        )
        bases.pop(version, None)
