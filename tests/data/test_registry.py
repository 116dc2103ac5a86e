"""ccdyn.data.registry.describe: data labelled by what it is (the basins comparison table's ``data`` column)."""

import dataclasses
from pathlib import Path

from ccdyn import io
from ccdyn.data.registry import DataSpec, describe
from ccdyn.one_layer import basins

ROOT = Path(__file__).resolve().parents[2]


def test_describe_names_what_the_data_is():
    assert describe(DataSpec()) == "latent_summation d=10 m=10 eps=0.1"
    assert describe(DataSpec(data="circle")) == "circle, Fig. 8's 9 points"  # its d, m flags play no part
    assert describe(DataSpec(data="circle", angles=(0.0, 0.5, 0.7))) == "circle, 3 points"
    assert describe(DataSpec(data="file", data_path="runs/sets/set1003.npz")) == "file set1003.npz"
    assert describe(DataSpec(data="gaussian_mixture", d=3, m=3, n_samples=600)) == \
        "gaussian_mixture d=3 m=3 eps=0.1 std=0.3 n=600"
    assert describe(DataSpec(d=20, m=20, ortho_eps=0.0)) == "latent_summation d=20 m=20 n=20000"  # sampled beyond M=16
    assert describe(DataSpec(data="circle", aug="rotation", aug_range=0.25, aug_views=64)) == \
        "circle, Fig. 8's 9 points, rotations |t| <= 0.25 pi (64 views)"
    assert describe(DataSpec(d=6, m=6, aug="noise", aug_views=256, aug_std=0.2)).endswith(", noise views 256 x std 0.2")
    assert describe(DataSpec(d=6, m=6, aug="shift", aug_range=2.0)).endswith(", cyclic shifts |s| <= 2")
    # a summary.json's dict (lists for tuples, older files without the later fields) gives the same label
    as_dict = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(DataSpec(data="circle")).items()}
    assert describe(as_dict) == describe({"data": "circle"}) == "circle, Fig. 8's 9 points"


def test_basins_comparison_labels_circle_data_by_its_points():
    s = io.read_json(ROOT / "results" / "basins" / "relu" / "summary.json")
    circle = {**s, "config": {**s["config"], "data": {**s["config"]["data"], "data": "circle"}}}
    rows = basins.comparison_rows([("relu", s), ("circle", circle)])
    col = basins.COMPARISON_COLUMNS.index("data")
    assert [r[col] for r in rows] == ["latent_summation d=10 m=10 eps=0.1", "circle, Fig. 8's 9 points"]
