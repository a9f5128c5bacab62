"""File versions in the history database: keyframes and deltas, content-addressed.

Each version row is addressed by the SHA-256 of its bytes (stored once, however
many entries use it) and is either a *keyframe* (the whole file, compressed)
or a *delta* against another version (``delta.py``). The ``compressed`` column says how the
bytes are packed: 0 as they are, 1 zlib, 2 zstd. Big blobs (a keyframe of a file nbedit has
not seen yet, the first thing recorded for it) use zstd, which packs text as tightly as zlib at
a quarter of the time, so the first edit of a big file is not dominated by compression; small
ones keep zlib, which is built in, so a one-line edit of a small file never imports the zstd
bindings (their import costs more than it saves). What an entry records under ``ZSTD_COLD_FROM``
(a delta's payload: the hunks of a patch of a thousand hunks, a few hundred kilobytes; or a
keyframe of a file that size, such as the "after" of a patch whose hunks cover most of the file)
is packed with zlib's fastest level while the process has not loaded the zstd bindings (a command
that records one entry and exits, the first entry of a session): loading them costs some 15 ms,
packing that payload with zlib 1-3 ms. Compaction, off the path a person waits on, packs with zstd.
Entries written as zlib by older versions read as before. The "after" of an edit is
stored as a delta against its "before", and the "before" is usually the previous
edit's "after", already stored: so the history grows with the size of the changes,
not of the files, and recording an edit of a big file costs one prefix/suffix scan
and no hashing or compression of the whole file (the caller passes fingerprints).

The first version of a file nbedit has not seen is usually not compressed at all:
the atomic writer renames a new file over the old one, so the old inode (the
"before") survives the write; the history hard-links it into ``<home>/blobs/<id>``
(packing 3, *linked*, an empty ``data``) and fsyncs it and the folder before the
entry commits. That costs a link and two fsyncs instead of compressing the whole
file on the path the user waits for. A linked copy is a full copy on disk, so
``compact`` later packs it into the database (from a background thread in a
long-lived process, or at once when more than ``LINKED_BUDGET`` bytes wait) and
removes the link. A linked copy is read back only through its SHA-256 like every
version, so one changed behind nbedit's back (another hard link, a writer that
kept the file open) is refused, never restored. Files on another file system than
the home, or with other hard links, are compressed as before.

A delta is either prefix/suffix (``delta.Delta``) or, when the caller passes the
byte spans its hunks replaced, a region delta (``delta.Regions``, column
``regions`` = 1): a 900-hunk patch of a 4 MB file is stored in tens of kilobytes
without scanning the file.

A new keyframe is written when a chain reaches ``MAX_CHAIN_DEPTH`` deltas or when
the deltas stop being small compared with the file. Replaying a chain only splices
a short list of slices (see ``delta.apply_deltas``), so restoring costs one
decompression of the keyframe plus one join; the depth bound keeps the number of
rows read per restore small. Every restored version is checked against its SHA-256
before it is handed out, so a damaged history can never be written into a file.

These functions run inside the caller's transaction (``database.Database``).
"""

from __future__ import annotations

import os
import sys

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit.errors import HistoryError
from nbedit.storage.sqlite import sqlite3

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from nbedit.storage.delta import Delta, Regions
    from nbedit.storage.packed_regions import PackedRegions

__all__ = [
    "BLOB_FOLDER",
    "LINKED",
    "LOST",
    "MAX_CHAIN_DEPTH",
    "PackedRegions",
    "blob_folder",
    "collect_unused",
    "materialize",
    "previous_version",
    "linked_versions",
    "orphan_blobs",
    "pack",
    "pack_linked",
    "pack_regions",
    "rebase_orphans",
    "reserve_linked",
    "store_linked",
    "store_version",
    "verified_bytes",
]

MAX_CHAIN_DEPTH = 128
COMPRESSION_LEVEL = 3
ZSTD_LEVEL = 3
ZSTD_FROM = 256 << 10  # bytes; below this zlib is as fast as zstd's import
ZSTD_COLD_FROM = 1 << 20  # bytes; a delta below this takes zlib's fastest level if zstd is not loaded yet
ZLIB_FAST_LEVEL = 1
# Level 1 from here on: on 50 MB notebooks it packs as tightly as level 3 (base64 images) or
# tighter (long printed outputs) in half the time; on code, level 3 is 10% smaller for 15% more time.
ZSTD_FAST_FROM = 16 << 20
ZSTD_FAST_LEVEL = 1
RAW, ZLIB, ZSTD, LINKED, LOST = 0, 1, 2, 3, 4
BLOB_FOLDER = "blobs"  # next to the database: linked keyframes, one hard link per version id
BLOB_STREAM_FROM = 1 << 20  # bytes; bigger blobs are written into their row in pieces this size
LINK_FROM = 64 << 10  # bytes; smaller keyframes are packed at once (zlib is as fast as a link there)

_CHAIN_QUERY = """
WITH RECURSIVE chain(id, base, prefix, suffix, regions, compressed, data, step) AS (
    SELECT id, base, prefix, suffix, regions, compressed, data, 0 FROM versions WHERE id = ?
    UNION ALL
    SELECT v.id, v.base, v.prefix, v.suffix, v.regions, v.compressed, v.data, chain.step + 1
    FROM versions AS v JOIN chain ON v.id = chain.base
    WHERE chain.step < 100000
)
SELECT id, base, prefix, suffix, regions, compressed, data FROM chain ORDER BY step
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


def _pack(data: bytes, *, delta: bool = False) -> tuple[int, bytes]:
    """(packing, bytes); ``delta``: packed while an entry is recorded (a delta, or the keyframe
    ``store_version`` makes there), so a payload under ``ZSTD_COLD_FROM`` takes zlib's fastest
    level while zstd is not loaded (a command that records one entry and exits)."""
    if len(data) < 64:
        return RAW, data
    import zlib  # here: an edit whose versions the history has already packs nothing (start-up)

    if delta and ZSTD_FROM <= len(data) < ZSTD_COLD_FROM and "zstandard" not in sys.modules:
        method, packed = ZLIB, zlib.compress(data, ZLIB_FAST_LEVEL)  # cheaper than importing zstd
    elif len(data) >= ZSTD_FROM:
        level = ZSTD_FAST_LEVEL if len(data) >= ZSTD_FAST_FROM else ZSTD_LEVEL
        method, packed = ZSTD, _zstd().ZstdCompressor(level=level).compress(data)
    else:
        method, packed = ZLIB, zlib.compress(data, COMPRESSION_LEVEL)
    return (method, packed) if len(packed) < len(data) else (RAW, data)


def joined(data: bytes) -> bytes:
    """``data``, or the joined bytes of new bytes not joined yet (``engine.spliced.Spliced``), or
    the bytes of a big file not held, read and checked now (``storage.streamed_file``)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return data
    return data.join()  # type: ignore[attr-defined,no-any-return]


def _pack_pieces(
    pieces: Callable[[], Iterable[bytes]], size: int, *, delta: bool = False
) -> tuple[int, bytes]:
    """``_pack`` of the ``size`` bytes ``pieces()`` yields, a big one compressed as the pieces come.

    A region delta of 100,000 hunks is about 0.9x its patch: joined, then compressed, it
    and its packed copy were held at once at the peak of an apply. Streamed, only the packed
    bytes are (the pieces are made again, and joined, only if packing does not pay). The
    frame names its content size, so it reads back as a one-shot frame does.
    """
    if size < ZSTD_FROM or (delta and size < ZSTD_COLD_FROM and "zstandard" not in sys.modules):
        return _pack(b"".join(pieces()), delta=delta)  # small, or a delta cheaper in zlib than zstd's import
    level = ZSTD_FAST_LEVEL if size >= ZSTD_FAST_FROM else ZSTD_LEVEL
    compressor = _zstd().ZstdCompressor(level=level).compressobj(size=size)
    packed = b"".join([*map(compressor.compress, pieces()), compressor.flush()])
    return (ZSTD, packed) if len(packed) < size else (RAW, b"".join(pieces()))


_DAMAGED = "a stored version is damaged (bad compressed data); it cannot be restored"


def _unpack(compressed: int, data: bytes) -> bytes:
    if compressed == LOST:
        raise HistoryError(
            "a stored version's linked copy was changed outside nbedit (another name for the file, or a "
            "program that kept it open, wrote into it), so this version cannot be restored"
        )
    if compressed == RAW:
        return bytes(data)
    if compressed == ZLIB:
        import zlib

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


def blob_folder(connection: sqlite3.Connection) -> str:
    """Where the linked keyframes of the database behind ``connection`` live."""
    for _, name, file in connection.execute("PRAGMA database_list"):
        if name == "main" and file:
            return os.path.join(os.path.dirname(file), BLOB_FOLDER)
    raise HistoryError("linked versions need a history database on disk")


def read_linked(connection: sqlite3.Connection, version: int) -> bytes:
    try:
        with open(os.path.join(blob_folder(connection), str(version)), "rb") as handle:
            return handle.read()
    except OSError as error:
        raise HistoryError(
            f"a stored version's linked copy is missing or unreadable ({error.strerror or error}); "
            "this entry can no longer be restored"
        ) from None


def materialize(connection: sqlite3.Connection, version: int) -> bytes:
    rows = connection.execute(_CHAIN_QUERY, (version,)).fetchall()
    if not rows or rows[-1][1] is not None:
        raise HistoryError("the history is missing a stored version; this entry can no longer be restored")
    keyframe_id, _, _, _, _, keyframe_packing, keyframe_data = rows[-1]
    keyframe = (
        read_linked(connection, keyframe_id)
        if keyframe_packing == LINKED
        else _unpack(keyframe_packing, keyframe_data)
    )
    from nbedit.storage.delta import Delta, apply_deltas, decode_regions

    deltas: list[Delta | Regions] = []
    try:
        for _, _, prefix, suffix, regions, compressed, data in rows[:-1]:
            middle = _unpack(compressed, data)
            deltas.append(decode_regions(middle) if regions else Delta(prefix, suffix, middle))
        deltas.reverse()
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
    connection: sqlite3.Connection,
    data: bytes,
    fingerprint: str | Callable[[], str] | None,
    base: tuple[int, bytes] | None,
    *,
    spans: Sequence[tuple[int, int, bytes]] | None = None,
    packed_regions: PackedRegions | None = None,
    delta: Delta | None = None,
) -> int:
    """Id of the version holding ``data``; a new one is a delta against ``base`` when that pays.

    ``spans``: the byte spans of ``base`` the change replaced (see ``delta.region_delta``);
    ``packed_regions``: the region delta ``pack_regions`` made of them already (then ``spans``
    is not read); ``delta``: the prefix/suffix delta of ``data`` against ``base``'s bytes, made
    already (``make_delta``). ``fingerprint`` may be the function that gives it (a digest still
    being hashed on another thread, ``engine.digest``): a region delta is then made and packed
    first (without ``spans``: the common prefix and suffix with ``base`` found first, a
    notebook's 50 MB compared in some 10 ms) and the digest joined only after, so the hashing
    overlaps that work (the caller passes a function only when the bytes are surely new, or the
    packing would be wasted on a version already stored).
    ``data`` may be new bytes not joined yet (``engine.spliced.Spliced``): stored as the region
    delta they are without being joined, joined (``join()``) only to be stored any other way.
    """
    if callable(fingerprint):
        if packed_regions is None and base is not None and spans is not None:
            packed_regions, spans = pack_regions(base[1], data, spans), None  # tried: not again
        elif packed_regions is None and base is not None and delta is None:  # no spans: compared meanwhile
            from nbedit.storage.delta import make_delta

            data = joined(data)
            delta = make_delta(joined(base[1]), data)
        fingerprint = fingerprint()
    if fingerprint is None:
        data = joined(data)
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
        if packed_regions is None and spans is not None:
            packed_regions = pack_regions(base_data, data, spans)
        if packed_regions is not None and _fits_as_delta(depth, chain_bytes, packed_regions.size, len(data)):
            compressed, packed = packed_regions.packing, packed_regions.data
            return _insert(
                connection,
                "INSERT INTO versions (fingerprint, size, base, depth, chain_bytes, regions, compressed, data)"
                " VALUES (?, ?, ?, ?, ?, 1, ?, {data})",
                (fingerprint, len(data), base_id, depth + 1, chain_bytes + len(packed), compressed),
                packed,
            )
        data = joined(data)
        if delta is None:
            from nbedit.storage.delta import (
                make_delta,  # loaded when a delta is made (a small change needs none)
            )

            # a big file's old bytes not held (``storage.streamed_file``) are read now, checked
            delta = make_delta(joined(base_data), data)
        if _fits_as_delta(depth, chain_bytes, len(delta.middle), len(data)):
            compressed, packed = _pack(delta.middle, delta=True)
            return _insert(
                connection,
                "INSERT INTO versions (fingerprint, size, base, prefix, suffix, depth, chain_bytes, compressed,"
                " data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {data})",
                (fingerprint, len(data), base_id, delta.prefix, delta.suffix, depth + 1,
                 chain_bytes + len(delta.middle), compressed),
                packed,
            )  # fmt: skip
    # a keyframe made while the entry is recorded (a close-hunk patch's "after", whose hunks cover
    # most of a 370 KB file): zlib's fastest level rather than importing zstd (~15 ms) for it
    compressed, packed = _pack(joined(data), delta=True)
    return _insert(
        connection,
        "INSERT INTO versions (fingerprint, size, compressed, data) VALUES (?, ?, ?, {data})",
        (fingerprint, len(data), compressed),
        packed,
    )


def __getattr__(name: str) -> Any:
    # ``PackedRegions`` is made when a region delta is first packed (storage/packed_regions.py)
    if name == "PackedRegions":
        from nbedit.storage.packed_regions import PackedRegions

        return PackedRegions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pack_regions(
    base_data: bytes, data: bytes, spans: Sequence[tuple[int, int, bytes]]
) -> PackedRegions | None:
    """``data`` as a packed region delta of ``base_data`` (needs no database: the caller may make
    it while something else waits), or None when the spans do not give ``data`` or the delta
    could never pay (over half the size of ``data``)."""
    least = getattr(spans, "least_payload", None)  # a lower bound, known without encoding the spans
    if least is not None and not _fits_as_delta(0, 0, least() + 24 * len(spans), len(data)):
        return None  # the hunks cover most of the file: not worth checking the spans
    from nbedit.storage.delta import region_delta
    from nbedit.storage.packed_regions import PackedRegions

    regions = region_delta(base_data, data, spans)
    if regions is None:
        return None
    size = regions.payload + 24 * len(regions.spans)
    if not _fits_as_delta(0, 0, size, len(data)):
        return None
    return PackedRegions(*_pack_pieces(regions.chunks, regions.size, delta=True), size)


def store_linked(
    connection: sqlite3.Connection, size: int, fingerprint: str, link: Callable[[str], bool]
) -> int | None:
    """A new keyframe of ``size`` bytes held by a hard link, or None when ``link`` could not make one.

    ``link(destination)`` links a file holding the bytes to ``destination`` (named after
    the new row's id) and makes it durable, or returns False.
    """
    reserved = reserve_linked(connection, size, fingerprint)
    if reserved is None:
        return None
    version, destination = reserved
    if link(destination):
        return version
    connection.execute("DELETE FROM versions WHERE id = ?", (version,))
    return None


def reserve_linked(connection: sqlite3.Connection, size: int, fingerprint: str) -> tuple[int, str] | None:
    """The row of a new linked keyframe of ``size`` bytes and the path its link must have, or None
    below ``LINK_FROM``. The caller links and flushes the file there before the transaction
    commits, or deletes the row (``store_linked`` is both steps in one)."""
    if size < LINK_FROM:
        return None
    cursor = connection.execute(
        "INSERT INTO versions (fingerprint, size, compressed, data) VALUES (?, ?, ?, x'')",
        (fingerprint, size, LINKED),
    )
    version = int(cursor.lastrowid or 0)
    return version, os.path.join(blob_folder(connection), str(version))


def linked_versions(connection: sqlite3.Connection) -> list[tuple[int, str, int]]:
    """(id, fingerprint, size) of every linked keyframe, oldest first."""
    return [
        (int(version), str(fingerprint), int(size))
        for version, fingerprint, size in connection.execute(
            "SELECT id, fingerprint, size FROM versions WHERE compressed = ? ORDER BY id", (LINKED,)
        )
    ]


def pack(data: bytes) -> tuple[int, bytes]:
    """(packing, bytes) for a keyframe: raw, zlib or zstd by size (see the module docstring)."""
    return _pack(data)


def pack_linked(connection: sqlite3.Connection, version: int, compressed: int, packed: bytes) -> bool:
    """Store a linked keyframe's bytes, packed by ``pack``, in its row; False if it is no longer linked."""
    row = connection.execute("SELECT compressed FROM versions WHERE id = ?", (version,)).fetchone()
    if row is None or row[0] != LINKED:
        return False
    if len(packed) < BLOB_STREAM_FROM or not hasattr(connection, "blobopen"):
        connection.execute(
            "UPDATE versions SET compressed = ?, data = ? WHERE id = ?", (compressed, packed, version)
        )
        return True
    connection.execute(
        "UPDATE versions SET compressed = ?, data = zeroblob(?) WHERE id = ?",
        (compressed, len(packed), version),
    )
    _fill(connection, version, packed)
    return True


def orphan_blobs(connection: sqlite3.Connection) -> list[str]:
    """Files in the blob folder that no linked version names (left by a crash or a rollback).

    Run inside a write transaction: a writer links its file inside its own one, so no
    link seen here can belong to a row still being written.
    """
    folder = blob_folder(connection)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    linked = {
        str(row[0]) for row in connection.execute("SELECT id FROM versions WHERE compressed = ?", (LINKED,))
    }
    return [os.path.join(folder, name) for name in names if name not in linked]


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
    _fill(connection, version, data)
    return version


def _fill(connection: sqlite3.Connection, version: int, data: bytes) -> None:
    view = memoryview(data)
    with connection.blobopen("versions", "data", version) as blob:  # type: ignore[attr-defined]
        for start in range(0, len(data), BLOB_STREAM_FROM):
            blob.write(view[start : start + BLOB_STREAM_FROM])


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
            from nbedit.storage.delta import make_delta

            delta = make_delta(materialize(connection, ancestor), data)
            if _fits_as_delta(depth, chain_bytes, len(delta.middle), len(data)):
                compressed, packed = _pack(delta.middle)
                connection.execute(
                    "UPDATE versions SET base = ?, prefix = ?, suffix = ?, depth = ?, chain_bytes = ?, regions = 0,"
                    " compressed = ?, data = ? WHERE id = ?",
                    (ancestor, delta.prefix, delta.suffix, depth + 1, chain_bytes + len(delta.middle),
                     compressed, packed, version),
                )  # fmt: skip
                bases[version] = ancestor
                continue
        compressed, packed = _pack(data)
        connection.execute(
            "UPDATE versions SET base = NULL, prefix = 0, suffix = 0, depth = 0, chain_bytes = 0, regions = 0,"
            " compressed = ?, data = ? WHERE id = ?",
            (compressed, packed, version),
        )
        bases.pop(version, None)
