"""Bytes <-> text without losing a byte.

A file is decoded once into a ``str`` that keeps every line ending as it was
(``"\\r\\n"``, ``"\\n"``, or none on the last line), and a ``Codec`` remembers
the encoding and the byte-order mark. ``encode(decode(b)) == b`` for every file
we accept; anything we cannot promise that for (NUL bytes, undecodable bytes) is
refused as binary instead of being mangled.

Lines are split on ``"\\n"`` only. ``str.splitlines`` also splits on form feeds,
``\\x1c``-``\\x1e``, ``\\u2028`` and friends, which would corrupt files that
contain them, so it is never used on file text.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass
from itertools import accumulate

from nbedit.errors import BinaryFile

__all__ = [
    "Codec",
    "UTF8",
    "decode",
    "dominant_newline",
    "encode",
    "fingerprint",
    "line_starts",
    "newline_of",
    "split_lines",
    "strip_newline",
]


@dataclass(frozen=True, slots=True)
class Codec:
    encoding: str  # "utf-8", "utf-16-le" or "utf-16-be"
    bom: bool = False

    @property
    def label(self) -> str:
        return self.encoding + (" with BOM" if self.bom else "")


UTF8 = Codec("utf-8", False)

_BOMS = (
    (codecs.BOM_UTF8, Codec("utf-8", True)),
    (codecs.BOM_UTF16_LE, Codec("utf-16-le", True)),
    (codecs.BOM_UTF16_BE, Codec("utf-16-be", True)),
)


def decode(data: bytes, path: str | None = None) -> tuple[str, Codec]:
    """Decode file bytes; raise ``BinaryFile`` for anything that is not text."""
    codec = UTF8
    body = data
    for bom, candidate in _BOMS:
        if data.startswith(bom):
            codec, body = candidate, data[len(bom) :]
            break
    if codec.encoding == "utf-8" and b"\x00" in body:
        raise BinaryFile(
            f"{path or 'file'}: contains NUL bytes, so it is treated as binary and not edited; "
            "edit it with a tool made for its format",
            path=path,
        )
    try:
        text = body.decode(codec.encoding)
    except UnicodeDecodeError as error:
        raise BinaryFile(
            f"{path or 'file'}: byte {error.start} is not valid {codec.encoding}; "
            "nbedit edits UTF-8 (with or without BOM) and UTF-16 with BOM only; "
            "convert the file to UTF-8 first",
            path=path,
        ) from None
    if codec.encoding != "utf-8" and "\x00" in text:
        raise BinaryFile(f"{path or 'file'}: contains NUL characters; not edited as text", path=path)
    return text, codec


def encode(text: str, codec: Codec = UTF8) -> bytes:
    data = text.encode(codec.encoding)
    if codec.bom:
        data = {"utf-8": codecs.BOM_UTF8, "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}[
            codec.encoding
        ] + data
    return data


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept; split on ``"\\n"`` only."""
    if not text:
        return []
    if not any(mark in text for mark in _OTHER_BREAKS) and text.count("\r") == text.count("\r\n"):
        return text.splitlines(keepends=True)  # same result here, and done in C
    lines = text.split("\n")
    last = lines.pop()
    result = [line + "\n" for line in lines]
    if last:
        result.append(last)
    return result


def line_starts(text: str) -> list[int]:
    """Offset of every line start, plus ``len(text)`` as the end of the last line.

    ``text[starts[n]:starts[n + 1]]`` is line ``n`` with its ending; there are
    ``len(starts) - 1`` lines. Built with C-level helpers: no Python loop per character.
    """
    parts = text.split("\n")
    starts = list(accumulate(map((1).__add__, map(len, parts[:-1])), initial=0))
    if parts[-1]:
        starts.append(len(text))
    return starts


def newline_of(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return ""


def strip_newline(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith("\n"):
        return line[:-1]
    return line


def dominant_newline(text: str) -> str:
    """The line ending most lines use; ``"\\n"`` for a file without any."""
    total = text.count("\n")
    crlf = text.count("\r\n")
    return "\r\n" if crlf * 2 > total else "\n"
