"""The shared grid runner (ccdyn.grid): settings as the product of the axes, seed keys against fold_in
and split one seed at a time, the resume plan, and run() on a real run directory with a counting fake
trainer (trained once, kept on resume, foreign records refused before any training, weights, repeats).
Both parts' grids run end to end in tests/scripts/test_two_layer_script.py and test_hltm_script.py."""

import dataclasses
import os

import jax
import numpy as np
import pytest

from ccdyn import grid, io
from ccdyn.rundir import RunDir, RunDirError


@dataclasses.dataclass(frozen=True)
class _Setting:
    a: int = 0
    b: str = ""

    @property
    def tag(self):
        return f"{self.b}-{self.a}"


@dataclasses.dataclass(frozen=True)
class _Grid(grid.Axes):
    xs: tuple = (1, 2)
    ys: tuple = ("p", "q", "r")
    n_seeds: int = 2
    nested: dict = dataclasses.field(default_factory=lambda: {"lr": 0.1})

    SETTING = _Setting
    AXES = (("ys", "b"), ("xs", "a"))


def test_settings_are_the_product_of_the_axes_and_the_run_config_the_rest():
    g = _Grid()
    assert g.settings() == [_Setting(a, b) for b in g.ys for a in g.xs]  # the last axis varies fastest
    assert g.run_config() == {"n_seeds": 2, "nested": {"lr": 0.1}}
    assert _Grid(xs=()).settings() == []


def test_seed_keys_are_fold_in_and_split_of_each_seed():
    base = jax.random.PRNGKey(7)
    want = np.stack([np.asarray(jax.random.fold_in(base, s)) for s in range(3)])
    np.testing.assert_array_equal(np.asarray(grid.seed_keys(7, 3)), want)
    streams = grid.seed_keys(7, 3, 2)
    for s in range(3):
        split = np.asarray(jax.random.split(jax.random.fold_in(base, s), 2))
        for j in range(2):
            np.testing.assert_array_equal(np.asarray(streams[j][s]), split[j])
    np.testing.assert_array_equal(np.asarray(grid.seed_keys(7, 2)), want[:2])  # more seeds leave the first alone


def test_resume_plan():
    tags = ["a", "b", "c"]
    runs = [f"{t}.json" for t in tags] + [f"{t}.weights.npz" for t in tags]
    assert grid.resume_plan(tags, runs, resume=False) == [False] * 3
    assert grid.resume_plan(tags, runs[:2] + ["other.json"], resume=True) == [True, True, False]
    # with weights asked for, only settings whose weights exist are kept
    both = (".json", ".weights.npz")
    assert grid.resume_plan(tags, runs[:2] + runs[4:5], resume=True, suffixes=both) == [False, True, False]
    # a setting listed twice is trained once; the second copy is kept
    assert grid.resume_plan(["a", "a"], [], resume=True) == [False, True]


class _Trainer:
    def __init__(self, settings, weights=False):
        self.settings, self.weights, self.calls = settings, weights, []

    def __call__(self, i):
        self.calls.append(self.settings[i].tag)
        s = self.settings[i]
        return {"a": s.a, "scores": np.arange(3.0) * s.a}, ({"w": np.full(2, s.a)} if self.weights else None)


def _open(path, resume=False):
    return RunDir.open(path, {"n_seeds": 2}, script="scripts/x.py", version="0", outputs=("runs",), resume=resume)


def test_run_trains_each_setting_once_and_resume_keeps_them(tmp_path):
    settings = _Grid().settings()
    run, train = _open(tmp_path / "r"), _Trainer(settings)
    records = grid.run(run, settings, train, resume=False)
    assert train.calls == [s.tag for s in settings]
    assert [r["a"] for r in records] == [s.a for s in settings]
    assert all(r["fingerprint"] == run.fingerprint and r["wall_s"] >= 0 for r in records)
    on_disk = io.read_json(tmp_path / "r" / "runs" / "q-2.json")
    assert on_disk["scores"] == [0.0, 2.0, 4.0] and on_disk["fingerprint"] == run.fingerprint
    run.finish()

    more = _Grid(xs=(1, 2, 3)).settings()
    run, train, lines = _open(tmp_path / "r", resume=True), _Trainer(more), []
    again = grid.run(run, more, train, resume=True, log=lines.append)
    assert train.calls == ["p-3", "q-3", "r-3"] and len(lines) == 6 and "kept from an earlier run" in lines[0]
    assert [r["a"] for r in again] == [s.a for s in more] and again[1]["scores"] == [0.0, 2.0, 4.0]
    # weights asked for: every setting lacks them, so every one is trained again, weights written beside
    train = _Trainer(more, weights=True)
    grid.run(run, more, train, resume=True, weights=True)
    assert len(train.calls) == len(more) and (tmp_path / "r" / "runs" / "r-3.weights.npz").exists()
    run.finish()


def test_a_foreign_record_is_refused_before_anything_trains(tmp_path):
    settings = _Grid().settings()
    run = _open(tmp_path / "r")
    grid.run(run, settings[:1], _Trainer(settings), resume=False)
    run.finish()
    io.write_json(tmp_path / "r" / "runs" / "p-1.json", {"a": 1, "fingerprint": "0" * 20})
    run, train = _open(tmp_path / "r", resume=True), _Trainer(settings)
    with pytest.raises(RunDirError, match="p-1.json belongs to another run"):
        grid.run(run, settings, train, resume=True)
    assert train.calls == []
    run.finish()


def test_a_repeated_setting_is_trained_once(tmp_path):
    settings = [_Setting(1, "p"), _Setting(2, "p"), _Setting(1, "p")]
    run, train = _open(tmp_path / "r"), _Trainer(settings)
    records = grid.run(run, settings, train, resume=True)
    assert train.calls == ["p-1", "p-2"] and records[2] == records[0]
    run.finish()


def test_table_builds_headers_and_rows_from_columns():
    rows = [{"x": 1.23456, "n": 2}, {"x": 2.0, "n": 3}]
    headers, body = grid.table(rows, (("x", lambda r: round(r["x"], 2)), ("n/2", lambda r: f"{r['n']}/2")))
    assert headers == ["x", "n/2"] and body == [[1.23, "2/2"], [2.0, "3/2"]]


def test_a_record_renamed_from_another_setting_is_refused_naming_the_file(tmp_path):
    settings = _Grid().settings()  # p-1, p-2, q-1, ...
    run = _open(tmp_path / "r")
    grid.run(run, settings[:2], _Trainer(settings), resume=False)
    run.finish()
    assert io.read_json(tmp_path / "r" / "runs" / "p-2.json")["setting"] == {"a": 2, "b": "p"}
    os.replace(tmp_path / "r" / "runs" / "p-2.json", tmp_path / "r" / "runs" / "q-1.json")  # same fingerprint
    run, train = _open(tmp_path / "r", resume=True), _Trainer(settings)
    with pytest.raises(RunDirError, match="q-1.json holds the record of another setting"):
        grid.run(run, settings, train, resume=True)
    assert train.calls == []
    run.finish()
