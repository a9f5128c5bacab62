"""Section: what the agent adapters cost on top of the workspace, and an MCP round trip.

A model's tool call goes adapter -> ``plan_edit`` -> approval gate -> ``apply``.
The adapter's own work (reading the call, the view check's fingerprint, the
result text and the edited-region snippet) should be small next to planning
and writing, so the first rows time a one-line ``str_replace`` on a
10,000-line file three ways in the same run: ``plan_edit`` + ``apply``
directly (the peer), through ``TextEditorTool.run`` and through
``FunctionTools.run``, each with history on. The edit alternates between two
texts so every call really writes.

The MCP rows time ``view`` and ``edit`` of the same file through a real
``nbedit mcp`` server process and the ``mcp`` package's stdio client (one
session, JSON-RPC over pipes); the peer is the same ``FunctionTools`` call in
process, so the difference is the protocol's cost.

The start-up rows time what a client waits for before its first answer:
start + ``initialize`` of a fresh ``nbedit mcp`` process, and then its first
call (a ``view``, then an ``edit``), with history on in a new home, history on
in an existing home, and history off; each over several fresh servers. The
first call used to take seconds: the tools declared an output schema, so the
client's first validation imported a JSON-schema format checker; the tools now
answer text only, and the store is opened on a thread at start-up.

The anchored rows replay the real-replies corpus (tests/data/model-replies:
old/new edits models wrote in real use, with the file before and the file the
edit should give). Each case is run twice on the file as it was: as the model
sent it (``edit`` with its old and new text), and as an anchored edit
(``edit_lines`` naming, by the anchors of an anchored view, the lines the right
result changes, with those lines' new text). The anchored figure is an upper
bound for a model that picks the right anchors; what it measures is the
failure mode anchors remove: old text the model did not copy exactly.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from benchmarks.corpus import code_lines, join_lines, write_text
from benchmarks.timing import Row, Timing, best_of

__all__ = ["run"]

LINES = 10_000
TARGET_LINE = 5_000


def _texts(path: Path) -> tuple[str, str]:
    lines = code_lines(LINES, seed=13)
    lines[TARGET_LINE] = "MARKER_VALUE = 1  # the line the benchmark edits"
    write_text(str(path), join_lines(lines))
    return "MARKER_VALUE = 1", "MARKER_VALUE = 2"


def _alternating(call, first: str, second: str):  # type: ignore[no-untyped-def]
    state = {"forward": True}

    def once() -> None:
        old, new = (first, second) if state["forward"] else (second, first)
        call(old, new)
        state["forward"] = not state["forward"]

    return once


def run(scratch: Path, repeat: int = 5) -> list[Row]:
    from nbedit.agents import FunctionTools, TextEditorTool
    from nbedit.workspace import Workspace

    section = "agents"
    root = scratch / "agents"
    root.mkdir()
    first, second = _texts(root / "big.py")
    workspace = Workspace(root, home=scratch / "agents-home", session="bench")
    editor = TextEditorTool(workspace, require_view=False)
    functions = FunctionTools(workspace)
    repeat = max(repeat, 8)
    repeat += repeat % 2  # an even count leaves the file as it was, so each way starts from the same text

    def direct(old: str, new: str) -> None:
        workspace.apply(workspace.plan_edit("big.py", old, new), origin="api")

    def through_editor(old: str, new: str) -> None:
        result = editor.run({"id": "toolu_bench", "name": editor.name,
                             "input": {"command": "str_replace", "path": "big.py", "old_str": old, "new_str": new}})  # fmt: skip
        assert not result["is_error"], result["content"]

    def through_functions(old: str, new: str) -> None:
        text = functions.run("edit", {"path": "big.py", "old": old, "new": new}, call_id="call_bench")
        assert text.startswith("Edited"), text

    # interleaved rounds after a warm-up, so caches and the history's stored versions favour no one
    ways = {"direct": direct, "editor": through_editor, "functions": through_functions}
    samples: dict[str, list[float]] = {name: [] for name in ways}
    forward = True
    for round_number in range(repeat + 2):
        for name, call in ways.items():
            old, new = (first, second) if forward else (second, first)
            forward = not forward
            start = time.perf_counter()
            call(old, new)
            if round_number >= 2:
                samples[name].append(time.perf_counter() - start)
    baseline, editor_time, functions_time = (
        Timing(min(samples[name]), tuple(samples[name]), f"best of {repeat}, interleaved") for name in ways
    )
    note = f"{LINES:,}-line file, one-line edit, history on; {baseline.how}"
    rows = [
        Row(section, "plan_edit + apply (no adapter)", baseline.seconds, "s", note=note,
            samples={"nbedit": list(baseline.samples)}),
        Row(section, "TextEditorTool.run str_replace", editor_time.seconds, "s",
            peer_name="plan_edit + apply", peer=baseline.seconds,
            note=f"adapter overhead {1000 * (editor_time.seconds - baseline.seconds):+.1f} ms",
            samples={"nbedit": list(editor_time.samples)}),
        Row(section, "FunctionTools.run edit", functions_time.seconds, "s",
            peer_name="plan_edit + apply", peer=baseline.seconds,
            note=f"adapter overhead {1000 * (functions_time.seconds - baseline.seconds):+.1f} ms",
            samples={"nbedit": list(functions_time.samples)}),
    ]  # fmt: skip
    rows.extend(_mcp_rows(section, root, scratch, functions, first, second, repeat))
    rows.extend(_first_call_rows(section, scratch))
    rows.extend(_anchored_rows(section, scratch))
    return rows


def _corpus_cases() -> tuple[list[dict], dict[str, str]]:
    import json
    import lzma

    folder = Path(__file__).resolve().parent.parent / "tests" / "data" / "model-replies"
    with lzma.open(folder / "cases.jsonl.xz", "rt", encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    with lzma.open(folder / "blobs.jsonl.xz", "rt", encoding="utf-8") as handle:
        blobs = {item["sha256"]: item["text"] for item in map(json.loads, handle)}
    return cases, blobs


def _anchored_call(before: str, after: str) -> dict | None:  # type: ignore[type-arg]
    """The edit_lines arguments that turn ``before`` into ``after``, by anchors (None: nothing changes)."""
    import difflib

    from nbedit.agents.anchors import line_hash
    from nbedit.engine.text import split_lines, strip_newline

    old_lines = [strip_newline(line) for line in split_lines(before)]
    new_lines = [strip_newline(line) for line in split_lines(after)]
    changed = [op for op in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
               if op[0] != "equal"]  # fmt: skip
    if not changed:
        return None
    first_old, last_old = changed[0][1], changed[-1][2]  # one range covering every change
    first_new, last_new = changed[0][3], changed[-1][4]
    text = "".join(line + "\n" for line in new_lines[first_new:last_new])
    if last_old == first_old:  # a pure insertion
        anchor = "0" if first_old == 0 else f"{first_old}:{line_hash(old_lines[first_old - 1])}"
        return {"insert_after": anchor, "new": text}
    start = f"{first_old + 1}:{line_hash(old_lines[first_old])}"
    end = f"{last_old}:{line_hash(old_lines[last_old - 1])}"
    return {"replace": f"{start}..{end}", "new": text}


def _anchored_rows(section: str, scratch: Path) -> list[Row]:
    from nbedit.agents import FunctionTools
    from nbedit.workspace import Workspace

    try:
        cases, blobs = _corpus_cases()
    except FileNotFoundError:
        return [Row(section, "anchored edits on real replies", None, "/", note="skipped: no corpus")]
    chosen = [case for case in cases if case["dialect"] == "old_new" and case["label"] == "oracle"
              and case["after"] and len(case["before"]) == 1]  # fmt: skip
    old_new_right = anchored_right = exact_copies = anchored_applies = 0
    started = time.perf_counter()
    for number, case in enumerate(chosen):
        path = case["path"]
        before, after = blobs[case["before"][path]], blobs[case["after"][path]]
        accepted = {blobs[option[path]] for option in case.get("accepted") or [] if path in option} | {after}
        exact_copies += case["old"] in before and before.count(case["old"]) == 1
        for way in ("old_new", "anchored"):
            root = scratch / f"replies-{way}-{number}"
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(before.encode("utf-8"))
            tools = FunctionTools(Workspace(root, history=False))
            if way == "old_new":
                tools.run("edit", {"path": path, "old": case["old"], "new": case["new"]})
                old_new_right += (root / path).read_bytes().decode("utf-8") in accepted
                continue
            arguments = _anchored_call(before, after)
            if arguments is None:
                continue
            anchored_applies += 1
            tools.run("view", {"path": path, "anchors": True})
            tools.run("edit_lines", {"path": path, **arguments})
            anchored_right += (root / path).read_bytes().decode("utf-8") in accepted
    elapsed = time.perf_counter() - started
    total = len(chosen)
    note = f"{total} real old/new edits with an oracle; {exact_copies} of them copied the old text exactly"
    return [
        Row(section, "real replies: old/new as the model sent it, right result", old_new_right, f"/{total}",
            note=note + f" ({elapsed:.1f} s for both ways)"),
        Row(section, "real replies: anchored (right anchors), right result", anchored_right, f"/{anchored_applies}",
            note="edit_lines over the lines the right result changes; an upper bound for a model that "
                 "names the right anchors"),
    ]  # fmt: skip


def _first_call_rows(section: str, scratch: Path, servers: int = 3) -> list[Row]:  # type: ignore[no-untyped-def]
    try:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError:
        return [Row(section, "MCP first call", None, "s", note="skipped: the mcp package is not installed")]

    async def one(root: Path, home: Path, history: bool) -> tuple[float, float, float]:
        environment = {"PATH": os.environ.get("PATH", ""), "NBEDIT_HOME": str(home),
                       "PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # fmt: skip
        extra = [] if history else ["--no-history"]
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "nbedit", "mcp", "--root", str(root), *extra], env=environment
        )
        started = time.perf_counter()
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            ready = time.perf_counter()
            await session.call_tool("view", {"path": "small.py"})
            viewed = time.perf_counter()
            result = await session.call_tool("edit", {"path": "small.py", "old": "x = 1", "new": "x = 2"})
            edited = time.perf_counter()
            assert not result.is_error, result.content
        (root / "small.py").write_text("x = 1\ny = 2\n")
        return ready - started, viewed - ready, edited - viewed

    rows = []
    for label, history, fresh_home in (
        ("history on, new home", True, True),
        ("history on, existing home", True, False),
        ("history off", False, False),
    ):
        samples: list[tuple[float, float, float]] = []
        for number in range(servers):
            root = scratch / f"first-call-{label.replace(' ', '-').replace(',', '')}-{number}"
            root.mkdir()
            (root / "small.py").write_text("x = 1\ny = 2\n")
            home = scratch / (f"first-call-home-{label}-{number}" if fresh_home else "first-call-home-shared")
            samples.append(asyncio.run(one(root, home, history)))
        starts, views, edits = (sorted(values) for values in zip(*samples, strict=True))
        how = f"median of {servers} fresh servers; range {views[0]:.3f}-{views[-1]:.3f} s"
        rows += [
            Row(section, f"nbedit mcp start + initialize ({label})", starts[len(starts) // 2], "s",
                note=f"median of {servers}; range {starts[0]:.2f}-{starts[-1]:.2f} s", samples={"nbedit": starts}),
            Row(section, f"nbedit mcp first call: view ({label})", views[len(views) // 2], "s",
                target="median < 0.5 s", passed=views[len(views) // 2] < 0.5, note=how, samples={"nbedit": views}),
            Row(section, f"nbedit mcp first edit ({label})", edits[len(edits) // 2], "s",
                target="median < 0.5 s", passed=edits[len(edits) // 2] < 0.5,
                note=f"median of {servers}; range {edits[0]:.3f}-{edits[-1]:.3f} s", samples={"nbedit": edits}),
        ]  # fmt: skip
    return rows


def _mcp_rows(section, root, scratch, functions, first, second, repeat):  # type: ignore[no-untyped-def]
    try:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError:
        return [Row(section, "MCP round trip", None, "s", note="skipped: the mcp package is not installed")]

    in_process_view = best_of(lambda: functions.run("view", {"path": "big.py"}), repeat)

    async def measure() -> tuple[list[float], list[float], float]:
        environment = {"PATH": os.environ.get("PATH", ""), "NBEDIT_HOME": str(scratch / "agents-home")}
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "nbedit", "mcp", "--root", str(root)], env=environment
        )
        started = time.perf_counter()
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            startup = time.perf_counter() - started
            views, edits = [], []
            forward = True
            for _ in range(repeat):
                start = time.perf_counter()
                result = await session.call_tool("view", {"path": "big.py"})
                views.append(time.perf_counter() - start)
                assert not result.is_error
                old, new = (first, second) if forward else (second, first)
                forward = not forward
                start = time.perf_counter()
                result = await session.call_tool("edit", {"path": "big.py", "old": old, "new": new})
                edits.append(time.perf_counter() - start)
                assert not result.is_error, result.content
        return views, edits, startup

    views, edits, startup = asyncio.run(measure())
    in_process_edit = best_of(
        _alternating(lambda old, new: functions.run("edit", {"path": "big.py", "old": old, "new": new}),
                     first, second), repeat)  # fmt: skip
    how = f"best of {repeat}, one stdio session"
    return [
        Row(section, f"MCP view of a {LINES:,}-line file (round trip)", min(views), "s",
            peer_name="FunctionTools.run view in process", peer=in_process_view.seconds, note=how,
            samples={"nbedit": views}),
        Row(section, f"MCP edit of a {LINES:,}-line file (round trip)", min(edits), "s",
            peer_name="FunctionTools.run edit in process", peer=in_process_edit.seconds, note=how,
            samples={"nbedit": edits}),
        Row(section, "nbedit mcp: start + initialize", startup, "s", note="one sample"),
    ]  # fmt: skip


if __name__ == "__main__":
    import tempfile

    from benchmarks.timing import format_table

    with tempfile.TemporaryDirectory() as folder:
        print(format_table(run(Path(folder))))
