"""The package's shape, read from its own imports: no circles, values that do not reach up,
an engine that imports no front end.

The imports are read with ``ast`` from the source files, never by importing them, and every
import statement counts wherever it stands: at the top of a module, inside a function (a lazy
import is still a dependency, it is only paid later), under ``if TYPE_CHECKING:`` (a type named
from another module is a dependency of the reader as much as a call is), and
``importlib.import_module`` with a literal name (or an f-string whose fixed start names a
package: every module under it counts). The import-linter tool counts the same way by default.

Why it matters: a circle means neither module can be read, tested or moved without the other,
and a value type that imports what computes with it ties the pure engine to the renderer (the
knot that issue 23 found: 13 modules, ``engine/models.py`` to ``render/html.py`` and back).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "nbedit"

# Circles known and being broken elsewhere; each entry must say where. The test fails when one of
# them grows, and when one is gone (delete its entry then).
KNOWN_CIRCLES: dict[frozenset[str], str] = {}

# Modules of plain values (frozen data classes, enums, error types): they may import each other and
# the helpers that make values, never a module that computes with them (differ, matcher, planner,
# renderer, storage, front ends). Their conveniences go through nbedit._conveniences.
VALUE_MODULES = frozenset(
    {
        "nbedit.engine.models",
        "nbedit.engine.tier",  # models' Tier enum, in a module of its own (start-up: enum loads when used)
        "nbedit.storage.records",
        "nbedit.storage.entries",  # records' Entry and FileSummary, in a module of their own (start-up)
        "nbedit.errors",
        "nbedit.warnings",
        "nbedit.live.protocol",
    }
)
# helpers every layer may use: no I/O, no front end (_gc pauses the collector while big inputs are built;
# _dataclass_inits holds the pre-compiled __init__ bodies of _dataclass; _path_text is pathlib's text
# operations on strings)
VALUE_HELPERS = frozenset(
    {
        "nbedit._dataclass",
        "nbedit._dataclass_inits",
        "nbedit._conveniences",
        "nbedit._hashing",
        "nbedit._gc",
        "nbedit._path_text",
    }
)

# The engine is pure: text in, text out. Besides itself it may use only the values and helpers
# every layer shares.
ENGINE = "nbedit.engine"
ENGINE_MAY_IMPORT = frozenset({"nbedit.errors", "nbedit.warnings"}) | VALUE_HELPERS

# A change's path through the engine, drawn as calls, the caller first: the planner has every hunk
# of a text located, the hunk locator asks the matcher for each place, the matcher asks transport
# what is written there. A module may import its own stage and the stages after it, never one
# before it (lazy imports included): a matcher calling back into the planner's helpers would split
# a stage across two rooms. A name ending in ".*" is every module under it. Reading the change
# (READING) comes first and imports none of them: a parser knows nothing of files or places.
CHANGE_PATH: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("plan", ("nbedit.engine.plan", "nbedit.engine.syntax_guard", "nbedit.engine.notebook.planning")),
    (
        "locate every hunk",
        (
            "nbedit.engine.locate_hunks",
            "nbedit.engine.exact_run",
            "nbedit.engine.text_edit",
            "nbedit.engine.readings",  # a reply's old text read as meant, then located again
            "nbedit.engine.reading_lines",
        ),
    ),
    ("locate", ("nbedit.engine.match", "nbedit.engine.match.*")),
    ("build what is written", ("nbedit.engine.transport",)),
)
READING = ("nbedit.engine.formats", "nbedit.engine.formats.*")


# --- reading the imports -------------------------------------------------------------------------


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, str, int]]:
    """(name, fallback, line) of every import in ``tree``, wherever it stands: ``name`` when it
    is a module of the package, else ``fallback`` (``from a import b``: the submodule a.b, or a)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                yield f"{source}.{alias.name}", source, node.lineno
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                yield argument.value, argument.value, node.lineno
            elif isinstance(argument, ast.JoinedStr) and argument.values:
                first = argument.values[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    yield first.value + "*", first.value + "*", node.lineno  # every module under it


def _is_import_module(function: ast.expr) -> bool:
    return (isinstance(function, ast.Name) and function.id in ("import_module", "__import__")) or (
        isinstance(function, ast.Attribute) and function.attr in ("import_module", "__import__")
    )


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {module of the package it imports: line of the first such import}."""
    modules = module_files(package)
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: dict[str, int] = {}
        for name, fallback, line in _imported_names(tree, module, path.name == "__init__.py"):
            if name.endswith("*"):
                targets = [target for target in modules if target.startswith(name[:-1])]
            else:
                targets = [name if name in modules else fallback]
            for target in targets:
                if target in modules and target != module:
                    edges.setdefault(target, line)
        graph[module] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in graph:
                    continue
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    part = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.add(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        found.append(frozenset(part))
    return found


def describe(part: frozenset[str], graph: dict[str, dict[str, int]], modules: dict[str, Path]) -> str:
    lines = []
    for module in sorted(part):
        for target, line in sorted(graph[module].items()):
            if target in part:
                where = modules[module].relative_to(REPO)
                lines.append(f"  {module} -> {target}  ({where}:{line})")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, int]]:
    return import_graph()


# --- the reader reads what it should (so the checks below can fail) -----------------------------


def test_the_reader_sees_lazy_type_checking_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "toy"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "values.py").write_text("def f():\n    from toy.compute import g\n")
    (package / "compute.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from toy.sub import deep\nfrom . import values, g\n"
    )
    (package / "sub" / "__init__.py").write_text(
        "from importlib import import_module\nimport_module(f'toy.sub.{1}')\n"
    )
    (package / "sub" / "deep.py").write_text("from ..values import f\n")
    (package / "other.py").write_text("import toy\nfrom toy import sub\n")
    toy = import_graph(package)
    assert toy["toy.values"] == {"toy.compute": 2}  # inside a function
    assert toy["toy.compute"] == {"toy.sub.deep": 3, "toy.values": 4, "toy": 4}  # type checking; relative
    assert toy["toy.sub"] == {"toy.sub.deep": 2}  # a name built by an f-string: every module under it
    assert toy["toy.sub.deep"] == {"toy.values": 1}  # two dots up
    assert toy["toy.other"] == {"toy": 1, "toy.sub": 2}
    assert circles(toy) == [frozenset({"toy.values", "toy.compute", "toy.sub.deep"})]


def test_the_reader_sees_the_package_lazy_imports(graph: dict[str, dict[str, int]]) -> None:
    # nbedit/__init__.py imports these only inside functions
    assert {"nbedit.workspace", "nbedit.jupyter.extension", "nbedit.render.html"} <= set(graph["nbedit"])
    assert len(graph) > 80


# --- the checks ----------------------------------------------------------------------------------


def test_no_import_circles(graph: dict[str, dict[str, int]]) -> None:
    modules = module_files()
    found = circles(graph)
    unknown = [part for part in found if part not in KNOWN_CIRCLES]
    report = "\n\n".join(describe(part, graph, modules) for part in unknown)
    assert not unknown, f"import circles (break each: move the shared piece down, or hand it in):\n{report}"
    gone = [KNOWN_CIRCLES[part] for part in KNOWN_CIRCLES if part not in found]
    assert not gone, f"a known circle is gone ({gone}): delete its entry from KNOWN_CIRCLES"


def test_value_modules_import_nothing_that_computes_with_them(graph: dict[str, dict[str, int]]) -> None:
    assert set(graph) >= VALUE_MODULES
    reaching_up = {
        module: sorted(set(graph[module]) - VALUE_MODULES - VALUE_HELPERS) for module in sorted(VALUE_MODULES)
    }
    assert all(not targets for targets in reaching_up.values()), reaching_up


def test_value_helpers_import_nothing_of_the_package(graph: dict[str, dict[str, int]]) -> None:
    # but each other (_dataclass takes its pre-compiled __init__ bodies from _dataclass_inits)
    assert {module: sorted(set(graph[module]) - VALUE_HELPERS) for module in VALUE_HELPERS} == {
        module: [] for module in VALUE_HELPERS
    }


def test_the_engine_imports_no_storage_renderer_or_front_end(graph: dict[str, dict[str, int]]) -> None:
    outside = {
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module == ENGINE or module.startswith(ENGINE + ".")
        for target in targets
        if not (target == ENGINE or target.startswith(ENGINE + ".")) and target not in ENGINE_MAY_IMPORT
    }
    assert not outside, sorted(outside)


def _named(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or (name.endswith(".*") and module.startswith(name[:-1])) for name in names)


def stage_of(module: str) -> int | None:
    """The position of ``module``'s stage on the change's path (0: the planner), None when off it."""
    return next((number for number, (_, names) in enumerate(CHANGE_PATH) if _named(module, names)), None)


def backward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports against the change's path: a stage importing one before it, or a reader importing any."""
    found = []
    for module, targets in sorted(graph.items()):
        stage = stage_of(module)
        for target, line in sorted(targets.items()):
            target_stage = stage_of(target)
            if target_stage is None:
                continue
            if (stage is not None and target_stage < stage) or _named(module, READING):
                name = "reading" if stage is None else CHANGE_PATH[stage][0]
                found.append(f"{module} ({name}) -> {target} ({CHANGE_PATH[target_stage][0]}), line {line}")
    return found


def test_the_stage_check_sees_a_matcher_calling_back_into_the_planner() -> None:
    toy = {
        "nbedit.engine.match.fuzzy": {"nbedit.engine.plan": 7, "nbedit.engine.transport": 8},
        "nbedit.engine.formats.unified": {"nbedit.engine.match": 3},
        "nbedit.engine.plan": {"nbedit.engine.match.cascade": 1},
    }
    assert backward_imports(toy) == [
        "nbedit.engine.formats.unified (reading) -> nbedit.engine.match (locate), line 3",
        "nbedit.engine.match.fuzzy (locate) -> nbedit.engine.plan (plan), line 7",
    ]


def test_every_stage_names_modules_that_exist(graph: dict[str, dict[str, int]]) -> None:
    for stage, names in CHANGE_PATH:
        for name in names:
            assert any(_named(module, (name,)) for module in graph), f"{stage}: no module {name}"


def test_a_change_moves_down_the_stages_one_way(graph: dict[str, dict[str, int]]) -> None:
    # read the change -> locate every hunk -> build what is written -> plan: the matcher never
    # imports the planner or the hunk locator, the parsers import none of them
    backward = backward_imports(graph)
    assert not backward, "imports against the change's path:\n" + "\n".join(backward)


def test_the_values_keep_their_conveniences(tmp_path: Path) -> None:
    # plan.diff, stats(), explain(), without_hunks() and the notebook drawing, reached without
    # the values importing the modules that compute them
    from nbedit import Workspace

    (tmp_path / "app.py").write_text("x = 1\ny = 2\nz = 3\n", encoding="utf-8")
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("app.py", "y = 2\n", "y = 20\n")
    assert plan.diff == "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 20\n z = 3\n"
    assert plan.stats() == {"app.py": (1, 1)}
    assert repr(plan) == "<Plan (edit) 1 file: update app.py +1 -1 (1 hunk: exact)>"
    assert "exact match" in plan.explain()
    html = plan._repr_html_()
    assert html.startswith('<div class="nbedit-view">') and "app.py" in html and "z = 3" in html
    kept = plan.without_hunks({(0, 0)})
    assert kept.files[0].after == "x = 1\ny = 2\nz = 3\n" and kept.diff == ""


def test_the_module_sizes_script_flags_the_big_modules() -> None:
    import subprocess
    import sys

    script = [sys.executable, str(REPO / "scripts" / "module_sizes")]
    listed = subprocess.run([*script, "--over"], capture_output=True, text=True, timeout=60)
    big = {
        str(path.relative_to(REPO))
        for path in module_files().values()
        if len(path.read_text(encoding="utf-8").splitlines()) > 600
    }
    flagged = {line.split()[2] for line in listed.stdout.splitlines() if line.endswith("<- over 600")}
    assert flagged == big and listed.returncode == (1 if big else 0), listed.stdout
    relaxed = subprocess.run(
        [*script, "--over", "--limit", "100000"], capture_output=True, text=True, timeout=60
    )
    assert relaxed.returncode == 0 and "0 over 100000" in relaxed.stdout
