"""The scripts stay thin: at most 150 lines each, and flags are read only inside ``main`` (the study
logic lives in the library, where it can be called and tested without absl)."""

import ast
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[2] / "scripts").glob("*.py"))


def _flag_reads_outside_main(tree) -> list:
    """Line numbers of ``FLAGS.<name>`` / ``FLAGS[...]`` not inside the function ``main``."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            inside |= {id(n) for n in ast.walk(node)}
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.value, ast.Name)
            and n.value.id == "FLAGS" and id(n) not in inside]


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_script_is_thin_and_reads_flags_only_in_main(path):
    text = path.read_text()
    assert len(text.splitlines()) <= 150, f"{path.name} has {len(text.splitlines())} lines"
    assert _flag_reads_outside_main(ast.parse(text)) == [], f"{path.name} reads FLAGS outside main"


def test_the_check_sees_a_read_outside_main():
    tree = ast.parse("FLAGS = None\ndef helper():\n    return FLAGS.x\ndef main(argv):\n    return FLAGS.y\n")
    assert _flag_reads_outside_main(tree) == [3]
