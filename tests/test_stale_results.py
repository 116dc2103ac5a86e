"""Stored optima are still critical points of the data today's code builds (``tests/stale_results.py``).

The slow test runs the check over every record under results/ that stores optima or its own data; a
record known to be stale is listed in ``KNOWN_STALE_DATA`` with its reason (strict: once it is re-run the
entry must go). The fast tests run the check on one small stored run (uniform alpha, d = 6, 64 points,
smooth and kink optima) and show that it fails on other data, a moved optimum or a changed energy.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import io
from ccdyn.data import registry
from ccdyn.one_layer import dynamics
from ccdyn.one_layer.basins import BasinsConfig
from tests import stale_results as sr

# (file relative to results/, location) -> why it is stale; strict: the entry goes once it is re-run
KNOWN_STALE_DATA = {}  # none at present

SMALL = "basins/alpha_uniform/summary.json"


@pytest.fixture(scope="module")
def small():
    record = io.read_json(sr.RESULTS / SMALL)
    cfg = BasinsConfig.from_dict(record["config"])
    return cfg, record["optima"], registry.build_dataset(cfg.data, jnp.float64)


def test_small_run_passes_on_todays_data(small):
    cfg, rows, ds = small
    got = sr.check_rows(cfg, rows, ds64=ds)
    kinked = sum(bool(r.get("active_views")) and r.get("refined", True) for r in rows)
    assert kinked >= 10 and got["n"] == len(rows)  # smooth optima and optima on kinks are both checked
    assert got["bad"] == 0, got["note"]
    assert got["energy_rel"] < 1e-7 and got["angle"] < 1e-7  # at XLA's level 0 the float32 draw rounds differently


def test_other_data_makes_every_optimum_stale(small):
    cfg, rows, _ = small
    other = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, data_seed=cfg.data.data_seed + 1))
    got = sr.check_rows(other, rows)
    assert got["bad"] == len(rows) and got["energy_rel"] > 1e-3, got


def test_a_moved_optimum_or_a_changed_energy_is_found(small):
    cfg, rows, ds = small  # every case checks all rows with one changed (the shapes compiled above)
    j = next(i for i, r in enumerate(rows) if r.get("active_views") and r.get("refined", True))
    w = np.asarray(rows[j]["w"])
    v = np.random.default_rng(0).standard_normal(w.size)
    v -= (v @ w) * w
    moved = dict(rows[j], w=(np.cos(1e-4) * w + np.sin(1e-4) * v / np.linalg.norm(v)).tolist())

    def check(i, row):
        return sr.check_rows(cfg, rows[:i] + [row] + rows[i + 1:], ds64=ds)

    got = check(j, moved)
    assert got["bad"] == 1 and got["angle"] > sr.ANGLE_TOL, got  # off its kink hyperplanes
    k = next(i for i, r in enumerate(rows) if not r.get("active_views"))
    got = check(k, dict(rows[k], energy=rows[k]["energy"] * (1 + 1e-5)))
    assert got["bad"] == 1 and "energy" in got["note"], got
    # a failed refinement (refined = False) is checked by its energy only: off its kinks with its own energy it
    # passes, with another energy it does not
    W = np.array([r["w"] for r in rows[:j] + [moved] + rows[j + 1:]])
    e = float(dynamics.energy(ds, cfg.activation, jnp.asarray(W), cfg.pairwise)[j])
    got = check(j, dict(moved, energy=e, refined=False))
    assert got["bad"] == 0 and got["unrefined"] == 1 + sum(not r.get("refined", True) for r in rows), got
    got = check(j, dict(moved, energy=e * (1 + 1e-5), refined=False))
    assert got["bad"] == 1 and "energy" in got["note"], got


def test_every_stored_optimum_has_a_reader():
    found, unread = sr.sources()
    assert not unread, f"stored optima that tests/stale_results.py does not read: {unread}"
    kinds = {s.rel.rsplit("/", 1)[-1] for s in found}
    assert {"summary.json", "continuation.json", "flow_accuracy.json"} <= kinds and len(found) >= 40


def _params():
    found, _ = sr.sources()
    keys = [(s.rel, s.where) for s in found] + [(rel, "data") for rel in sr.stored_data_records()]
    return [pytest.param(rel, where, id=f"{rel}:{where}",
                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN_STALE_DATA[(rel, where)])]
                         if (rel, where) in KNOWN_STALE_DATA else []) for rel, where in keys]


@pytest.mark.slow
@pytest.mark.parametrize("rel,where", _params())
def test_stored_result_matches_todays_data(rel, where):
    if where == "data":
        got = [f for f in sr.stored_data(only=rel) if f.rel == rel]
    else:
        got = [sr.check(s) for s in sr.sources()[0] if s.rel == rel and s.where == where]
    assert len(got) == 1
    assert not got[0].stale, f"{rel} {where}: {got[0].bad} of {got[0].n} stale: {got[0].note}"
