"""Section: decoding file bytes, the first step of every plan.

Almost every file is UTF-8, so that path must cost what ``bytes.decode`` costs
and never load the encoding detector. A file that is not UTF-8 pays for
detection once per plan: charset-normalizer on a 1 MiB sample, then a full
decode and a byte-for-byte round-trip check. The peer is charset-normalizer
asked about the whole file, which is what a tool without sampling would do.
"""

from __future__ import annotations

import subprocess
import sys

from benchmarks.timing import Row, best_of

__all__ = ["run"]

ROWS = 300_000  # about 10 MB of CSV


def _csv() -> str:
    cities = ("München", "Zürich", "Genève", "Málaga", "Kraków", "Århus", "Besançon")
    names = ("José", "Anaïs", "François", "Jürgen", "Søren", "Ægir", "Zoë")
    return "".join(
        f"{names[row % 7]};{cities[row * 3 % 7]};{row % 997},{row % 100:02d} €;“note {row}”\n"
        for row in range(ROWS)
    )


def run(scratch: object, repeat: int = 5) -> list[Row]:
    from charset_normalizer import from_bytes

    from nbedit.engine.text import decode

    section = "encoding"
    text = _csv()
    utf8, cp1252 = text.encode("utf-8"), text.encode("cp1252")
    rows: list[Row] = []

    ours = best_of(lambda: decode(utf8, "data.csv"), repeat)
    peer = best_of(lambda: utf8.decode("utf-8"), repeat)
    rows.append(
        Row(
            section,
            f"decode a {len(utf8) / 1e6:.0f} MB UTF-8 file",
            ours.seconds,
            "s",
            peer_name="bytes.decode",
            peer=peer.seconds,
            target="< 2x bytes.decode",
            passed=ours.seconds < 2 * peer.seconds,
            samples={"nbedit": list(ours.samples), "peer": list(peer.samples)},
        )
    )

    code = "import sys; from nbedit.engine.text import decode; decode('naïve'.encode()); print('charset_normalizer' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    rows.append(
        Row(
            section,
            "the UTF-8 path loads the detector",
            0.0 if loaded == "False" else 1.0,
            "count",
            target="0 (never)",
            passed=loaded == "False",
        )
    )

    assert decode(cp1252, "data.csv")[1].encoding == "cp1252"  # a wrong answer is a failure, not a time
    ours = best_of(lambda: decode(cp1252, "data.csv"), repeat)
    peer = best_of(lambda: from_bytes(cp1252).best(), min(repeat, 2))
    rows.append(
        Row(
            section,
            f"detect and decode a {len(cp1252) / 1e6:.0f} MB cp1252 file",
            ours.seconds,
            "s",
            peer_name="charset-normalizer, whole file",
            peer=peer.seconds,
            target="< 1 s",
            passed=ours.seconds < 1.0,
            note="sample of 1 MiB for the detector; every byte decoded and round-trip checked",
            samples={"nbedit": list(ours.samples), "peer": list(peer.samples)},
        )
    )
    return rows
