"""Legacy 8-bit and UTF-16 text: edited byte-exactly when declared or reliably detected; binary stays refused.

Real files on a real filesystem through the public API; the codec itself is
checked by round trips (hypothesis) and by the bytes of every edited file.
"""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbedit
from nbedit.engine.text import decode, encode

LATIN1_CSV = "name;city;price\nJosé;München;12\nAnn;Zürich;7\nFrançois;Genève;9\n".encode("cp1252")


def _workspace(root: Path, **options: object) -> nbedit.Workspace:
    return nbedit.Workspace(root, history=False, **options)  # type: ignore[arg-type]


def test_a_latin1_csv_is_detected_and_only_the_edited_span_changes(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_bytes(LATIN1_CSV)
    plan = _workspace(tmp_path).plan_edit("data.csv", "Ann;Zürich;7", "Anaïs;Zürich;8")
    (file_plan,) = plan.files
    assert file_plan.encoding == "cp1252"
    assert "read and written as cp1252 (detected)" in file_plan.notes
    _workspace(tmp_path).apply(plan)
    expected = LATIN1_CSV.replace("Ann;Zürich;7".encode("cp1252"), "Anaïs;Zürich;8".encode("cp1252"))
    assert (tmp_path / "data.csv").read_bytes() == expected


def test_cp1252_punctuation_round_trips_when_declared(tmp_path: Path) -> None:
    data = "Grüße – “quoted” ‘single’ €5 … œuvre\r\nsecond line\r\n".encode("cp1252")
    (tmp_path / "note.txt").write_bytes(data)
    workspace = _workspace(tmp_path, encoding="windows-1252")  # any alias Python knows
    workspace.apply(workspace.plan_edit("note.txt", "€5", "€6"))
    assert (tmp_path / "note.txt").read_bytes() == data.replace(b"\x805", b"\x806")


def test_per_call_encoding_overrides_detection(tmp_path: Path) -> None:
    data = "Привет мир\nalpha\n".encode("cp1251")  # not Western: never guessed
    (tmp_path / "ru.txt").write_bytes(data)
    with pytest.raises(nbedit.BinaryFile, match="declare its encoding"):
        _workspace(tmp_path).plan_edit("ru.txt", "мир", "свет")
    assert (tmp_path / "ru.txt").read_bytes() == data
    nbedit.edit("ru.txt", "мир", "свет", root=str(tmp_path), history=False, encoding="cp1251")
    assert (tmp_path / "ru.txt").read_bytes() == "Привет свет\nalpha\n".encode("cp1251")


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_utf16_with_a_bom_is_edited_in_its_own_byte_order(tmp_path: Path, bom: bytes) -> None:
    encoding = "utf-16-le" if bom == codecs.BOM_UTF16_LE else "utf-16-be"
    data = bom + "Zeile eins\r\nGrüße\r\nkein Zeilenende".encode(encoding)
    (tmp_path / "u.txt").write_bytes(data)
    nbedit.edit("u.txt", "Grüße", "Grüsse", root=str(tmp_path), history=False)
    assert (tmp_path / "u.txt").read_bytes() == bom + "Zeile eins\r\nGrüsse\r\nkein Zeilenende".encode(
        encoding
    )


def test_utf16_without_a_bom_needs_its_byte_order_declared(tmp_path: Path) -> None:
    data = "hello\nworld\n".encode("utf-16-le")
    (tmp_path / "u.txt").write_bytes(data)
    with pytest.raises(nbedit.BinaryFile, match="utf-16-le or utf-16-be"):
        _workspace(tmp_path).plan_edit("u.txt", "world", "there")
    with pytest.raises(nbedit.OptionError, match="byte order"):
        _workspace(tmp_path, encoding="utf-16").plan_edit("u.txt", "world", "there")
    nbedit.edit("u.txt", "world", "there", root=str(tmp_path), history=False, encoding="utf-16-le")
    assert (tmp_path / "u.txt").read_bytes() == "hello\nthere\n".encode("utf-16-le")


def test_new_text_the_encoding_cannot_hold_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_bytes(LATIN1_CSV)
    with pytest.raises(nbedit.UnsupportedFile, match="cp1252 .*cannot hold") as raised:
        _workspace(tmp_path).plan_edit("data.csv", "Ann", "Ann 😀")
    assert "convert the file to UTF-8" in str(raised.value)
    assert (tmp_path / "data.csv").read_bytes() == LATIN1_CSV


def test_binary_files_stay_refused(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "noise.bin").write_bytes(bytes(range(1, 256)) * 4)  # no NUL, still not text
    for name in ("image.png", "noise.bin"):
        with pytest.raises(nbedit.BinaryFile):
            _workspace(tmp_path).plan_edit(name, "IHDR", "x")


def test_a_wrong_declared_encoding_is_refused_not_mangled(tmp_path: Path) -> None:
    data = "naïve\n".encode()
    (tmp_path / "a.txt").write_bytes(data)
    with pytest.raises(nbedit.OptionError, match="unknown encoding 'klingon'"):
        _workspace(tmp_path, encoding="klingon")
    with pytest.raises(nbedit.OptionError, match="not a text encoding"):
        _workspace(tmp_path).plan_edit("a.txt", "naïve", "naive", encoding="base64")
    with pytest.raises(nbedit.BinaryFile, match="not valid ascii"):
        _workspace(tmp_path).plan_edit("a.txt", "naïve", "naive", encoding="ascii")
    assert (tmp_path / "a.txt").read_bytes() == data


def test_the_utf8_path_never_loads_the_detector() -> None:
    code = (
        "import sys; from nbedit.engine.text import decode; decode('naïve\\n'.encode()); "
        "decode(b'\\xef\\xbb\\xbfbom\\n'); print('charset_normalizer' in sys.modules)"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "False"


_WESTERN = st.text(
    alphabet=st.sampled_from(list("abcdefghij XYZ;,.\n\r\t") + list("éüßçñøåæœ€–—“”‘’…°£§«»")),
    max_size=200,
)


@settings(max_examples=200, deadline=None)
@given(text=_WESTERN, encoding=st.sampled_from(["cp1252", "iso-8859-15", "utf-16-le", "utf-16-be"]))
def test_declared_round_trip_is_byte_exact(text: str, encoding: str) -> None:
    if encoding == "iso-8859-15":
        text = "".join(character for character in text if character not in "–—“”‘’…")
    data = text.encode(encoding)
    decoded, codec = decode(data, "f.txt", encoding)
    assert decoded == text and encode(decoded, codec) == data


@settings(max_examples=200, deadline=None)
@given(text=_WESTERN)
def test_detected_text_round_trips_or_is_refused(text: str) -> None:
    data = text.encode("cp1252")
    try:
        decoded, codec = decode(data, "f.txt")
    except nbedit.BinaryFile:
        return  # refusing is allowed; mangling is not
    assert encode(decoded, codec) == data


def test_history_undo_and_show_of_a_detected_cp1252_file_are_byte_exact(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_bytes(LATIN1_CSV)
    workspace = nbedit.Workspace(tmp_path, session="encodings")
    result = workspace.apply(workspace.plan_edit("data.csv", "Ann;Zürich;7", "Anaïs;Zürich;8"))
    shown = workspace.show(result.entry_id)
    assert "-Ann;Zürich;7\n+Anaïs;Zürich;8\n" in shown  # decoded for reading, not mangled
    workspace.undo()
    assert (tmp_path / "data.csv").read_bytes() == LATIN1_CSV


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        (None, "Grüße €\n".encode()),
        ("cp1252", "Grüße €\n".encode("cp1252")),
        ("utf-16", codecs.BOM_UTF16_LE + "Grüße €\n".encode("utf-16-le")),
    ],
)
def test_a_new_file_is_written_in_the_declared_encoding(
    tmp_path: Path, encoding: str | None, expected: bytes
) -> None:
    patch = "*** Begin Patch\n*** Add File: new.txt\n+Grüße €\n*** End Patch\n"
    nbedit.patch(patch, root=str(tmp_path), history=False, encoding=encoding)
    assert (tmp_path / "new.txt").read_bytes() == expected
