"""The layout's rules (docs/layout.md), checked on the source: only io / rundir / report / plotting and the
scripts' shared layer (the ``ccdyn/cli`` package) print, open files or exit; imports point one way (io
imports nothing of ccdyn; the shared core, data, the grid runner and the scripts' shared layer import no
paper part; no part imports another part's ``figures.py`` or ``studies/``); every paper part has
``studies/``, ``claims.py`` and ``figures.py``; every module says what it holds; every dotted
``ccdyn.<name>`` reference in the code and the docs names something that exists."""

import ast
import importlib
import re
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ccdyn"
MODULES = sorted(PACKAGE.rglob("*.py"))
OUTPUT_MODULES = {"io.py", "rundir.py", "report.py", "plotting.py"}  # top-level modules of ccdyn/
CLI = PACKAGE / "cli"  # the scripts' shared layer: may print and exit, shared by every part
PART_NAMES = ("one_layer", "two_layer", "deep", "variational")
PARTS = tuple(f"ccdyn.{p}" for p in PART_NAMES)
CORE = {"activations.py", "pairwise.py", "covariance.py", "sphere.py", "stats.py", "parallel.py", "verdicts.py",
        "grid.py", "io.py", "rundir.py", "report.py", "plotting.py"}


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
    assert _foreign_part_imports(_name(path), imports) == [], f"{_name(path)} imports another part's figures / studies"
    if path.name == "claims.py":
        assert not any(".studies" in i for i in imports), f"{_name(path)} imports a study (studies import claims)"


def _part_of(name: str):
    """The paper part a module (``ccdyn/one_layer/x.py``) or an import (``ccdyn.one_layer.x``) belongs to."""
    bits = re.split(r"[./]", name)
    return bits[1] if len(bits) > 2 and bits[0] == "ccdyn" and bits[1] in PART_NAMES else None


def _foreign_part_imports(module: str, imports) -> list:
    """Imports of another part's ``figures`` or ``studies`` (``ccdyn.<part>.figures``, ``ccdyn.<part>.studies...``)."""
    own = _part_of(module)
    return sorted(i for i in imports if _part_of(i) not in (None, own) and i.split(".")[2:3] in (["figures"], ["studies"]))


@pytest.mark.parametrize("part", PART_NAMES)
def test_every_part_has_studies_claims_and_figures(part):
    root = PACKAGE / part
    missing = [n for n in ("claims.py", "figures.py", "studies/__init__.py") if not (root / n).is_file()]
    assert missing == [], f"ccdyn/{part} lacks {missing}"
    assert not (PACKAGE / "studies").exists(), "studies live in the parts (ccdyn/<part>/studies/)"


def test_the_checks_see_violations():
    tree = ast.parse("import sys\nfrom ccdyn.one_layer import basins\nprint(1)\nsys.exit(2)\n")
    assert [k for _, k in _side_effects(tree)] == ["print", "sys.exit"]
    assert "ccdyn.one_layer.basins" in _ccdyn_imports(tree)
    # the rules reach the whole cli package and the grid runner, and only the output modules may print
    assert _shared(PACKAGE / "cli" / "record.py") and _shared(PACKAGE / "grid.py") and _may_print(CLI / "contract.py")
    assert not _may_print(PACKAGE / "one_layer" / "script_flags.py") and not _shared(PACKAGE / "two_layer" / "io.py")
    tree = ast.parse("from ccdyn.two_layer import figures\nfrom ccdyn.deep.studies import digits\n"
                     "from ccdyn.one_layer.studies import fig1\nfrom ccdyn.deep import claims\n")
    assert _foreign_part_imports("ccdyn/one_layer/x.py", _ccdyn_imports(tree)) == [
        "ccdyn.deep.studies", "ccdyn.deep.studies.digits", "ccdyn.two_layer.figures"]
    assert _foreign_part_imports("ccdyn/io.py", {"ccdyn.deep.figures"}) == ["ccdyn.deep.figures"]
    assert not _resolves("ccdyn.dynamics.roughness") and not _resolves("ccdyn.one_layer.basins.nothing_here")
    assert _resolves("ccdyn.one_layer.studies.theorem3.run") and _resolves("ccdyn.verdicts")


# --- cross-references -------------------------------------------------------------------------------

_REF = re.compile(r"(?<![\w./])ccdyn(?:\.[A-Za-z_]\w*)+(?![\w*])")
KNOWN_STALE = {}


def _resolves(ref: str) -> bool:
    """Whether ``ccdyn.a.b.c`` names a module, or an attribute reached from the longest importable prefix."""
    bits = ref.split(".")
    for i in range(len(bits), 0, -1):
        try:
            obj = importlib.import_module(".".join(bits[:i]))
        except ImportError:
            continue
        for name in bits[i:]:
            if hasattr(obj, name):
                obj = getattr(obj, name)
                continue
            try:
                obj = importlib.import_module(f"{obj.__name__}.{name}")
            except (ImportError, AttributeError):
                return False
        return True
    return False


def _documents():
    root = PACKAGE.parent
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True,
                            text=True).stdout.split()
    return [root / f for f in listed if (root / f).is_file() and (
        f.endswith(".py") or (f.endswith(".md") and not (f.startswith("results/") and f.count("/") > 1
                                                         and not f.endswith("README.md"))))]


def test_cross_references_resolve():
    docs = _documents()
    assert len(docs) > 50, "git ls-files found too few files"
    stale = {}
    for path in docs:
        name = path.relative_to(PACKAGE.parent).as_posix()
        if name == "tests/test_layout.py":  # this file names stale references on purpose
            continue
        refs = {m.group(0).rstrip(".") for m in _REF.finditer(path.read_text())}
        bad = {r for r in refs if not _resolves(r)}
        if bad or name in KNOWN_STALE:
            stale[name] = bad
    assert stale == KNOWN_STALE, "stale ccdyn.<name> references (or KNOWN_STALE fixed: remove them from it)"
