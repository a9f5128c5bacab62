"""Bytes <-> text without losing a byte.

A file is decoded once into a ``str`` that keeps every line ending as it was
(``"\\r\\n"``, ``"\\n"``, or none on the last line), and a ``Codec`` remembers
the encoding and the byte-order mark. ``encode(decode(b)) == b`` for every file
we accept; anything we cannot promise that for (NUL bytes, undecodable bytes) is
refused as binary instead of being mangled.

Encodings, in order: a declared one (``encoding=`` / ``--encoding``) wins; then a
byte-order mark (UTF-8, UTF-16 LE/BE); then UTF-8, which is almost every file
and is decoded without loading anything else. Only when UTF-8 fails is
charset-normalizer asked, and its answer is taken only for the Western 8-bit
encodings (cp1252, Latin-1, Latin-9), where a guess can misname a character but
the round trip is still checked byte for byte. Anything else must be declared:
a wrong guess would write the edited span in the wrong encoding.

Lines are split on ``"\\n"`` only. ``str.splitlines`` also splits on form feeds,
``\\x1c``-``\\x1e``, ``\\u2028`` and friends, which would corrupt files that
contain them, so it is never used on file text.
"""

from __future__ import annotations

import codecs
from itertools import accumulate

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit._dataclass import dataclass
from nbedit.errors import BinaryFile, OptionError, UnsupportedFile, option

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of a run (tests/test_startup.py)
    from collections.abc import Sequence
    from typing import TypeVar

    Item = TypeVar("Item")

__all__ = [
    "Codec",
    "UTF8",
    "canonical_encoding",
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
    """How a file's bytes become text and back: the codec, a leading BOM, and whether it was guessed."""

    encoding: str  # a Python codec name: "utf-8", "utf-16-le", "utf-16-be", "cp1252", "iso8859-1", ...
    bom: bool = False
    detected: bool = False  # guessed by the detector rather than declared or UTF-8

    @property
    def label(self) -> str:
        return self.encoding + (" with BOM" if self.bom else "") + (" (detected)" if self.detected else "")


UTF8 = Codec("utf-8", False)

_BOMS = (
    (codecs.BOM_UTF8, Codec("utf-8", True)),
    (codecs.BOM_UTF16_LE, Codec("utf-16-le", True)),
    (codecs.BOM_UTF16_BE, Codec("utf-16-be", True)),
)
_BOM_BYTES = {"utf-8": codecs.BOM_UTF8, "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}

# What the detector may decide on its own: single-byte, and every byte value maps to a character
# the user would see as text. Names are Python's canonical codec names.
_DETECTABLE = ("cp1252", "iso8859-1", "iso8859-15")


def canonical_encoding(name: str) -> str:
    """Python's canonical name for a text encoding (``latin-1`` -> ``iso8859-1``); ``OptionError`` otherwise."""
    try:
        info = codecs.lookup(name)
    except (LookupError, TypeError):
        raise OptionError(
            f"unknown encoding {name!r}; name a text encoding such as utf-8, cp1252, latin-1 or utf-16",
            option="encoding",
        ) from None
    if not getattr(info, "_is_text_encoding", True):
        raise OptionError(f"{name!r} is not a text encoding (it converts bytes to bytes)", option="encoding")
    return {"utf-8-sig": "utf-8", "latin-1": "iso8859-1"}.get(info.name, info.name)


def decode(data: bytes, path: str | None = None, encoding: str | None = None) -> tuple[str, Codec]:
    """Decode file bytes; raise ``BinaryFile`` for anything that is not text.

    ``encoding`` declares the file's encoding; without it UTF-8 (or UTF-16 by its
    BOM) is tried, then the Western 8-bit encodings if a detector says so.
    """
    if encoding is not None:
        return _decode_declared(data, path, canonical_encoding(encoding))
    codec = UTF8
    body = data
    for bom, candidate in _BOMS:
        if data.startswith(bom):
            codec, body = candidate, data[len(bom) :]
            break
    if codec.encoding == "utf-8" and b"\x00" in body:
        raise BinaryFile(
            f"{path or 'file'}: contains NUL bytes, so it is treated as binary and not edited; "
            f"if it is UTF-16 text without a byte-order mark, declare it ({option('encoding')}, "
            "utf-16-le or utf-16-be); otherwise edit it with a tool made for its format",
            path=path,
        )
    try:
        text = body.decode(codec.encoding)
    except UnicodeDecodeError as error:
        if codec is UTF8:
            detected = _detect(data)
            if detected is not None:
                return detected
        raise BinaryFile(
            f"{path or 'file'}: byte {error.start} is not valid {codec.encoding}, and no other encoding "
            f"could be recognised with confidence; if it is text, declare its encoding "
            f"({option('encoding')}, e.g. cp1252, latin-1, shift_jis) and retry",
            path=path,
        ) from None
    if codec.encoding != "utf-8" and "\x00" in text:
        raise BinaryFile(f"{path or 'file'}: contains NUL characters; not edited as text", path=path)
    return text, codec


def _decode_declared(data: bytes, path: str | None, encoding: str) -> tuple[str, Codec]:
    where = path or "file"
    body = data
    if encoding == "utf-8":
        return decode(data, path)
    if encoding == "utf-16":
        for bom, candidate in _BOMS[1:]:
            if data.startswith(bom):
                encoding, body = candidate.encoding, data[len(bom) :]
                break
        else:
            raise OptionError(
                f"{where}: {encoding} without a byte-order mark does not say its byte order; "
                f"declare {encoding}-le or {encoding}-be",
                option="encoding",
                path=path,
            )
        codec = Codec(encoding, True)
    else:
        bom_bytes = _BOM_BYTES.get(encoding)
        has_bom = bom_bytes is not None and data.startswith(bom_bytes)
        if has_bom:
            body = data[len(bom_bytes or b"") :]
        codec = Codec(encoding, has_bom)
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as error:
        raise BinaryFile(
            f"{where}: byte {error.start + len(data) - len(body)} is not valid {encoding}, the declared "
            "encoding; check the encoding name (or leave it out to let nbedit detect it)",
            path=path,
        ) from None
    if "\x00" in text:
        raise BinaryFile(f"{where}: contains NUL characters; not edited as text", path=path)
    if encode(text, codec) != data:
        raise BinaryFile(
            f"{where}: decoding as {encoding} and encoding back does not give the same bytes, so nbedit "
            "cannot promise to keep every byte; declare the file's exact encoding",
            path=path,
        )
    return text, codec


def _detect(data: bytes) -> tuple[str, Codec] | None:
    """A Western 8-bit reading of non-UTF-8 bytes, when the detector backs it and the round trip holds.

    charset-normalizer decides whether the bytes are text at all (it finds no
    reading of binary data) and whether a Western code page is among its good
    readings. On short files its ranking is close to a coin toss between code
    pages that read the bytes identically or nearly so, so the Western reading
    must also look like Western text: control characters rule it out, and every
    word of two or more non-ASCII letters must also have an ASCII one ("München",
    not "Ïðèâåò", which is Russian in cp1251 read as cp1252).
    """
    if b"\x00" in data:
        return None
    import re  # a UTF-8 file never gets here: re stays off a command's way (start-up time)

    try:
        from charset_normalizer import from_bytes
    except ImportError:  # declared as a dependency, but a missing detector must only cost detection
        return None
    sample = data[:_SAMPLE]  # single-byte encodings: any cut is a character boundary
    results = list(from_bytes(sample))
    if not results:
        return None
    best = min(result.chaos for result in results)
    western = False
    for result in results:
        if result.chaos > best + _CHAOS_MARGIN:
            continue
        for name in result.could_be_from_charset:
            try:
                western = western or canonical_encoding(name) in _DETECTABLE
            except OptionError:
                continue
    if not western:
        return None
    for encoding in ("cp1252", "iso8859-15", "iso8859-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if (
            re.search(_CONTROL, text) is None
            and _looks_western(text[:_SAMPLE])
            and text.encode(encoding) == data
        ):
            return text, Codec(encoding, False, detected=True)
        return None
    return None


_CHAOS_MARGIN = 0.2  # how much "messier" than the detector's favourite a Western reading may be
_SAMPLE = 1 << 20  # the detector and the word check read the first MiB; decoding checks every byte
# Searched in C: a control character other than tab, newline, form feed and carriage return (in the
# whole text); runs of two or more non-ASCII characters outside ASCII words (in the sample).
# Patterns compiled (and cached by ``re``) on first use: a UTF-8 file never needs them.
_CONTROL = "[\x00-\x08\x0b\x0e-\x1f\x7f]"
_NON_ASCII_RUN = "(?<![A-Za-z])[^\x00-\x7f]{2,}(?![A-Za-z])"  # not inside an ASCII word


def _looks_western(text: str) -> bool:
    import re

    for found in re.finditer(_NON_ASCII_RUN, text):
        run = found.group()  # "Ïðèâåò" is refused; "Grüße" and "Øresund" never get here
        if any(first.isalpha() and second.isalpha() for first, second in zip(run, run[1:], strict=False)):
            return False  # a word of non-ASCII letters only
    return True


def encode(text: str, codec: Codec = UTF8, path: str | None = None) -> bytes:
    try:
        data = text.encode(codec.encoding)
    except UnicodeEncodeError as error:
        character = error.object[error.start : error.end]
        raise UnsupportedFile(
            f"{path or 'file'}: the new text contains {character!r}, which {codec.encoding} (the file's "
            "encoding) cannot hold; write it differently (an escape or entity) or convert the file to "
            "UTF-8 first; nothing was written",
            path=path,
        ) from None
    if codec.bom:
        data = _BOM_BYTES[codec.encoding] + data
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


def common_ends(old: Sequence[Item], new: Sequence[Item]) -> tuple[int, int]:
    """How many leading and then trailing items two sequences share, not overlapping: of two
    texts, characters (a rewrite touches only ``old[head:len(old) - tail]``); of two line lists,
    lines (the equal context a diff block shows around its change)."""
    shortest = min(len(old), len(new))
    if isinstance(old, str) and isinstance(new, str):
        return _common_text_ends(old, new, shortest)
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return head, tail


def _common_text_ends(old: str, new: str, shortest: int) -> tuple[int, int]:
    """``common_ends`` of two texts by halving with slice comparisons (memcmp), not a Python
    step per character: a notebook plan trims every hunk's context this way (10,000 hunks)."""
    low, high = 0, shortest  # old[:low] == new[:low]; the shared head is below high + 1
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    head = low
    low, high = 0, shortest - head
    old_end, new_end = len(old), len(new)
    while low < high:
        middle = (low + high + 1) // 2
        if old[old_end - middle : old_end - low] == new[new_end - middle : new_end - low]:
            low = middle
        else:
            high = middle - 1
    return head, low
