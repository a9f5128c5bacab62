"""Section: live tabs, what a write pays to find out there is no Jupyter server.

Every write from a kernel, the CLI or the API asks "which Jupyter server is this
process under?" (``nbedit.live.discovery``): a walk up the process tree through
``/proc`` and one ``stat`` per ancestor for a ``jpserver-<pid>.json``. Outside a
server (plain IPython, nbclient, a shell) that must cost under a millisecond and
import nothing of Jupyter. The peer is one ``os.stat`` of the runtime folder: the
least any check could do.
"""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks.timing import Row, best_of

__all__ = ["run"]

CALLS = 100


def run(scratch: object, repeat: int = 5) -> list[Row]:
    from nbedit.live.discovery import find_server, runtime_dir

    section = "live"
    saved = {name: os.environ.pop(name, None) for name in ("NBEDIT_SERVER_URL", "JUPYTER_RUNTIME_DIR")}
    os.environ["JUPYTER_RUNTIME_DIR"] = str(scratch)  # an empty runtime folder: no server
    try:
        assert find_server() is None

        def discover() -> None:
            for _ in range(CALLS):
                find_server()

        def stat_only() -> None:
            for _ in range(CALLS):
                os.stat(runtime_dir())

        ours = best_of(discover, repeat)
        peer = best_of(stat_only, repeat)
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value
    per_call = ours.seconds / CALLS
    rows = [
        Row(
            section,
            "find the Jupyter server when there is none (per write)",
            per_call,
            "s",
            peer_name="one os.stat",
            peer=peer.seconds / CALLS,
            target="< 1 ms",
            passed=per_call < 1e-3,
            samples={"nbedit": [s / CALLS for s in ours.samples], "peer": [s / CALLS for s in peer.samples]},
        )
    ]
    code = (
        "import sys; from nbedit.live.discovery import find_server; find_server(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jupyter_server', 'jupyter_core', 'tornado')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    rows.append(
        Row(
            section,
            "Jupyter modules imported by discovery",
            float(loaded != "[]"),
            "modules",
            target="none",
            passed=loaded == "[]",
            note=loaded if loaded != "[]" else "",
        )
    )
    return rows
