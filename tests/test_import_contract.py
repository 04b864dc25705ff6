"""The package's dependency rules (DESIGN.md, "The flow"), checked on the source by an AST walk.

Imports flow one way, down the layers below: a module may import from its own part and from
lower layers, never from a higher one. The four method parts (``cv``, ``nested``, ``bayes``,
``shift``) sit side by side and use one another's public names only, never a private module
or name. ``plots`` and ``datasets`` import nothing of the package; nothing imports the CLI;
and there is no import cycle between modules. Every import counts, also those inside
functions and those made with :func:`importlib.import_module` and a literal name.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayescv"

#: Each top-level part of the package and its layer; a part imports only from its own layer
#: or lower ones (the method parts of one layer under the extra rule below).
LAYERS = {
    "_provenance": 0,
    "_defaults": 0,
    "_extras": 0,
    "_names": 0,
    "datasets": 0,
    "plots": 0,
    "losses": 1,
    "fold_scores": 1,
    "moments": 2,
    "tails": 2,
    "intervals": 3,
    "_bounds": 3,
    "classical": 4,
    "cv": 5,
    "nested": 5,
    "bayes": 5,
    "shift": 5,
    "compare": 6,
    "learner_comparison": 6,
    "cli": 7,
    "__main__": 8,  # `python -m bayescv`: runs the command line
}
LEAF_HELPERS = {"_provenance", "_defaults", "_extras", "_names"}
METHOD_PARTS = {"cv", "nested", "bayes", "shift"}
#: Parts that import nothing of the package, leaf helpers included.
SELF_CONTAINED = {"plots", "datasets"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    root = PACKAGE.parent
    return (root / relative).with_suffix(".py").is_file() or (
        root / relative / "__init__.py"
    ).is_file()


def imports(path: Path) -> list[tuple[str, str, int]]:
    """(module imported, name taken from it or "", line) for every bayescv import in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                (a.name, "", node.lineno) for a in node.names if a.name.startswith("bayescv")
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bayescv"):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if is_module(sub):
                    found.append((sub, "", node.lineno))
                else:
                    found.append((node.module, alias.name, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("bayescv")
        ):
            found.append((node.args[0].value, "", node.lineno))
    return found


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def is_private(module: str, name: str) -> bool:
    return any(p.startswith("_") for p in module.split(".")[2:]) or name.startswith("_")


def graph() -> dict[str, list[tuple[str, str, int]]]:
    return {
        module_name(p): imports(p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def violations(edges: dict[str, list[tuple[str, str, int]]]) -> list[str]:
    bad = []
    for source, targets in edges.items():
        src = part(source)
        if src == "":  # bayescv/__init__.py: the public namespace gathers every part
            continue
        for target, name, line in targets:
            dst = part(target)
            where = f"{source}:{line} imports {target}{'.' + name if name else ''}"
            if dst == src:
                continue
            if dst == "":
                bad.append(f"{where}: the top-level namespace is for users, not for the package")
            elif dst == "cli" and src != "__main__":
                bad.append(f"{where}: nothing imports the command line")
            elif src in SELF_CONTAINED:
                bad.append(f"{where}: {src} imports nothing of the package")
            elif dst not in LAYERS or src not in LAYERS:
                bad.append(f"{where}: a part the contract does not know; add it to LAYERS")
            elif LAYERS[dst] > LAYERS[src]:
                bad.append(f"{where}: {src} (layer {LAYERS[src]}) sits below {dst}")
            elif src in METHOD_PARTS and dst in METHOD_PARTS and is_private(target, name):
                bad.append(f"{where}: a private name of another method part")
    return bad


def cycles(edges: dict[str, list[tuple[str, str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), imports of a package's
    ``__init__`` by its own submodules left out (they do not run the package's code twice)."""
    adj = {
        m: sorted({t for t, _, _ in ts if t in edges and not m.startswith(t + ".")})
        for m, ts in edges.items()
    }
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in adj:
        if v not in index:
            visit(v)
    return out


def test_every_part_of_the_package_is_in_the_contract():
    parts = {part(module_name(p)) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert parts - {""} == set(LAYERS)


def test_imports_follow_the_layers():
    assert violations(graph()) == []


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_module_over_500_lines():
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}


# The checker itself: each rule fires on a made-up import that breaks it.
@pytest.mark.parametrize(
    ("source", "target", "name", "rule"),
    [
        ("bayescv.losses._io", "bayescv.classical", "cv_intervals", "sits below"),
        ("bayescv.compare.study", "bayescv.cli._checks", "", "nothing imports the command line"),
        ("bayescv.plots", "bayescv._provenance", "", "imports nothing of the package"),
        ("bayescv.nested._core", "bayescv.cv._runner", "", "private name of another"),
        ("bayescv.shift.cv", "bayescv.cv", "_rows", "private name of another"),
        ("bayescv.moments", "bayescv", "cross_val_losses", "top-level namespace"),
    ],
)
def test_each_rule_catches_its_violation(source, target, name, rule):
    found = violations({source: [(target, name, 1)]})
    assert len(found) == 1
    assert rule in found[0]


def test_allowed_imports_pass_the_checker():
    allowed = {
        "bayescv.nested._interval": [("bayescv.cv", "get_loss", 1)],
        "bayescv.compare.registry": [("bayescv.bayes", "", 2), ("bayescv._extras", "", 3)],
        "bayescv.classical.intervals": [("bayescv.intervals", "interval_dataset", 1)],
    }
    assert violations(allowed) == []


def test_cycle_finder_finds_a_cycle():
    edges = {"a": [("b", "", 1)], "b": [("c", "", 1)], "c": [("a", "", 1)], "d": [("a", "", 1)]}
    assert cycles(edges) == [["a", "b", "c"]]


#: Modules that import ArviZ, which prints a notice on its first import of each day: the
#: package imports them only through ``bayescv._extras.import_quietly``. PyMC's submodules
#: are imported after ``bayescv.bayes.model._import_pymc`` has imported PyMC that way.
NOISY_IMPORTS = {"arviz", "nutpie", "pymc"}


def _noisy_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [
            (node.lineno, n)
            for n in names
            if n.split(".")[0] in NOISY_IMPORTS and not n.startswith("pymc.")
        ]
    return found


def test_arviz_and_its_importers_are_imported_quietly():
    """A bare ``import nutpie`` printed ArviZ's notice on a user's first fit of the day."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "_extras.py"
        for line, name in _noisy_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not offenders, offenders
    source = "import nutpie\nfrom arviz import hdi\nimport numpy\nfrom nutpie.sample import x"
    assert _noisy_imports(ast.parse(source)) == [(1, "nutpie"), (2, "arviz"), (4, "nutpie.sample")]


def test_importing_the_package_does_not_import_tqdm_auto():
    # tqdm.auto warns at import in a notebook without ipywidgets (TqdmWarning: IProgress not
    # found): it is imported when a progress bar is shown (bayescv._extras.progress_bar), so
    # that `import bayescv` in such a notebook prints nothing.
    code = (
        "import sys\n"
        "import bayescv, bayescv.bayes, bayescv.compare, bayescv.cli, bayescv.nested\n"
        "import bayescv.shift, bayescv.cv\n"
        "print(sorted(m for m in sys.modules if m.startswith(('tqdm.auto', 'tqdm.notebook'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
