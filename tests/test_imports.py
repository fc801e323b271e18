"""The project's own modules import each other without a circle, and camel_utils/ imports point one way: down the
floors listed in camel_utils/__init__.py, never up, and never into the scripts at the top level."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLOORS = ["machine", "cli", "conditions", "preregistration", "agent", "fast_update", "guide", "guide_eval", "llm", "judge", "results", "hub", "run"]  # bottom first


def project_modules():
    """{module name: its file} for the scripts at the top level, camel_utils/ and the scripts in scripts/, benchmarks/."""
    files = [*REPO.glob("*.py"), *REPO.glob("camel_utils/**/*.py"), *REPO.glob("scripts/*.py"), *REPO.glob("benchmarks/*.py")]
    modules = {}
    for path in files:
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[0] in ("scripts", "benchmarks"):
            parts = parts[1:]
        name = ".".join(p for p in parts if p != "__init__")
        modules[name] = path
    return modules


def imports_of(path, modules):
    """The project's modules a file imports, wherever in the file (lazy imports inside functions count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found |= {name for name in names if name in modules}
    return found


def graph():
    modules = project_modules()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def find_cycle(edges):
    """One import circle as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def test_the_project_imports_without_a_circle():
    assert find_cycle(graph()) is None, f"import circle: {' -> '.join(find_cycle(graph()))}"


def test_the_circle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def floor(module):
    """camel_utils.results.tables -> results; anything outside camel_utils -> None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "camel_utils" and len(parts) > 1 else None


def test_camel_utils_imports_only_its_lower_floors_and_never_a_script():
    for module, imported in graph().items():
        if floor(module) is None:
            continue
        for other in imported:
            assert floor(other) is not None, f"{module} imports the script {other}"
            if floor(other) != floor(module):
                assert FLOORS.index(floor(other)) < FLOORS.index(floor(module)), f"{module} imports {other}, a floor above it"


def test_every_camel_utils_module_has_a_floor():
    assert {floor(m) for m in project_modules() if floor(m)} == set(FLOORS)
