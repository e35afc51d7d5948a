"""The package's import graph: no circle, and the root's private core imports no room.

Every module is parsed (``ast``), so imports inside functions count too: a lazy import
that closes a circle is still a circle (DESIGN.md, "No circles, no reach").
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polaroc"


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``) of every module of polaroc."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The polaroc modules ``name`` imports anywhere in its file (functions included)."""
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from .x import y
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in known else base)
    return {t for t in targets if t in known and t != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(name, *found[name], set(found)) for name in found}


def test_the_import_graph_parses_every_module():
    edges = graph()
    assert "polaroc.evaluation.per_fold" in edges
    assert "polaroc.core.batches" in edges["polaroc.evaluation.per_fold"]


def test_the_import_graph_has_no_circle():
    try:
        TopologicalSorter(graph()).prepare()
    except CycleError as error:
        pytest.fail(f"import circle: {' -> '.join(error.args[1])}")


# The rooms, bottom up (DESIGN.md, "Layout"): a module imports only from its own room or
# a room of a lower rank. scale/ sits beside compare/ (it runs the per-fold table).
RANK = {
    "core": 0,
    "io": 1,
    "metrics": 1,
    "experiment": 1,
    "evaluation": 2,
    "compare": 3,
    "scale": 3,
    "report": 4,
}


def room(module: str) -> str:
    """The room of a dotted module name: its first part below ``polaroc``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_module_imports_from_a_room_above_it():
    for name, targets in graph().items():
        here = room(name)
        if here not in RANK:  # the root's public entry points see every room
            continue
        above = sorted(t for t in targets if RANK.get(room(t), -1) > RANK[here])
        assert not above, f"{name} imports from a room above it: {above}"


def test_the_root_holds_only_public_entry_points():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "__main__.py", "io.py", "plot.py"], root
    rooms = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert set(rooms) == set(RANK) - {"io"}, rooms


def test_modules_private_to_a_room_stay_in_it():
    # a room's ``_module`` is imported only from inside that room
    for name, targets in graph().items():
        for target in targets:
            private = target.rpartition(".")[2].startswith("_") and not target.endswith("__")
            if private and room(target) != room(name):
                pytest.fail(f"{name} imports {target}, private to {room(target)}/")


def test_a_circle_is_found(tmp_path):
    # the check itself: a lazy import inside a function closes a circle
    (tmp_path / "a.py").write_text("from b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import g\n")
    known = {"a", "b"}
    edges = {m: imported(m, tmp_path / f"{m}.py", False, known) for m in known}
    with pytest.raises(CycleError):
        TopologicalSorter(edges).prepare()
