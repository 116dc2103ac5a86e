"""The layout's rules, checked on the source: only io / rundir / report / plotting and the scripts'
shared layer (the ``ccdyn/cli`` package) print, open files or exit; imports point one way (io imports
nothing of ccdyn; core maths, data, the grid runner and the scripts' shared layer import nothing of
the paper parts); every module says what it holds."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ccdyn"
MODULES = sorted(PACKAGE.rglob("*.py"))
OUTPUT_MODULES = {"io.py", "rundir.py", "report.py", "plotting.py"}  # top-level modules of ccdyn/
CLI = PACKAGE / "cli"  # the scripts' shared layer: may print and exit, shared by every part
CORE = {"activations.py", "pairwise.py", "covariance.py", "sphere.py", "stats.py", "parallel.py", "verdicts.py",
        "grid.py"}
PARTS = ("ccdyn.one_layer", "ccdyn.two_layer", "ccdyn.studies", "ccdyn.variational", "ccdyn.deep")


def _may_print(path) -> bool:
    return (path.parent == PACKAGE and path.name in OUTPUT_MODULES) or path.parent == CLI


def _shared(path) -> bool:
    """Core maths, data, the grid runner and the scripts' shared layer: they import no paper part."""
    return path.parent in (PACKAGE / "data", CLI) or (path.parent == PACKAGE and path.name in CORE)


def _name(path):
    return str(path.relative_to(PACKAGE.parent))


def _ccdyn_imports(tree) -> set:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("ccdyn"):
            out |= {n.module} | {f"{n.module}.{a.name}" for a in n.names}
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name.startswith("ccdyn")}
    return out


def _side_effects(tree) -> list:
    """Calls of print / open / sys.exit / input and uses of sys.stdout / sys.stderr."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("print", "open", "input"):
            found.append((n.lineno, n.func.id))
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "sys" \
                and n.attr in ("exit", "stdout", "stderr"):
            found.append((n.lineno, f"sys.{n.attr}"))
    return found


@pytest.mark.parametrize("path", MODULES, ids=[_name(p) for p in MODULES])
def test_module_rules(path):
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree), f"{_name(path)} has no module docstring"
    if not _may_print(path):
        assert _side_effects(tree) == [], f"{_name(path)} prints, opens files or exits"
    imports = _ccdyn_imports(tree)
    if path.name == "io.py":
        assert imports == set(), "ccdyn.io must not import ccdyn (everything else may import it)"
    if _shared(path):
        assert not any(i.startswith(PARTS) for i in imports), f"{_name(path)} imports a paper part: {imports}"


def test_the_checks_see_violations():
    tree = ast.parse("import sys\nfrom ccdyn.one_layer import basins\nprint(1)\nsys.exit(2)\n")
    assert [k for _, k in _side_effects(tree)] == ["print", "sys.exit"]
    assert "ccdyn.one_layer.basins" in _ccdyn_imports(tree)
    # the rules reach the whole cli package and the grid runner, and only the output modules may print
    assert _shared(PACKAGE / "cli" / "record.py") and _shared(PACKAGE / "grid.py") and _may_print(CLI / "contract.py")
    assert not _may_print(PACKAGE / "one_layer" / "script_flags.py") and not _shared(PACKAGE / "two_layer" / "io.py")
