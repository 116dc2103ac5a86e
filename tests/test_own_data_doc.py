"""docs/own_data.md's library example runs as written (in a temporary directory) and certifies every
optimum of a user's softplus."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "own_data.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_doc_has_one_library_example_naming_its_test():
    blocks = _python_blocks()
    assert len(blocks) == 1 and "custom_activation" in blocks[0] and "tests/test_own_data_doc.py" in DOC.read_text()


@pytest.mark.slow  # about 1 min on 2 loaded cores: basins.run compiles the flow and the float64 analysis
def test_library_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(_python_blocks()[0], str(DOC), "exec"), {"__name__": "own_data_example"})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "False False" and len(out) >= 2 and all(" smooth " in line for line in out[1:])
    assert (tmp_path / "my_points.npz").is_file()
