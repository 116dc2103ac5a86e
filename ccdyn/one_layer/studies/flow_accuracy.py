"""How exact are the basins of ``--method=flow`` (Eq. 7 integrated to ``flow_rtol``; docs/flow.md)?

- :func:`exact_2d`: on random sets of unit points in 2-D, every maximum of E whose exact basin (the arc
  between its neighbouring minima, :mod:`ccdyn.one_layer.exact2d`) is >= ``min_fraction`` must be
  found by the basins pipeline, its fraction within max(0.01, 4 sigma) of the exact one.
- :func:`rtol_pairs`: in any dimension, the same inits run at ``flow_rtol`` r and r/10 must give
  basin fractions inside each other's 95% Wilson intervals; also counted: the inits that end at a
  different optimum (paired, the same inits) and the cost in attempted steps.

``scripts/flow_accuracy.py`` writes the records; both end in :mod:`ccdyn.verdicts` checks.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from ccdyn import report
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import basins, claims, exact2d
from ccdyn.one_layer.engine import Status

__all__ = ["random_angles", "random_cloud", "circle_sets", "degenerate_tau_set", "exact_2d_set", "exact_2d",
           "rtol_pairs", "SET_COLUMNS", "PAIR_COLUMNS", "table_key"]

SET_COLUMNS = ("set_seed", "n_points", "maxima", "required", "found_required", "max_abs_error", "worst_over_bound",
               "mean_steps", "ok")
PAIR_COLUMNS = ("rtol", "rtol_next", "optima", "outside_interval", "max_abs_diff", "moved_inits", "mean_steps",
                "mean_steps_next", "ok")


def random_angles(seed: int, min_points: int, max_points: int) -> tuple:
    """A random set of min_points .. max_points angles in units of pi (uniform on [-1, 1), 6 digits)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_points, max_points + 1))
    return tuple(float(a) for a in np.round(rng.uniform(-1, 1, n), 6))


def random_cloud(seed: int, min_points: int = 12, max_points: int = 30) -> tuple:
    """(x, rng): a random point cloud for the kink checks, min_points .. max_points points x ~ N(0, I_d)
    in d = 3 + seed mod 4 (the numpy Generator of ``seed`` draws n, then x), and that Generator for any
    further draws of the same set (e.g. probe directions)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_points, max_points + 1))
    return rng.standard_normal((n, 3 + seed % 4)), rng


def circle_sets(seeds, min_points: int, max_points: int):
    """``(seed, x)`` of the 2-D sets of :func:`exact_2d` (the circle points of ``random_angles(seed)``)."""
    for seed in seeds:
        spec = DataSpec(data="circle", angles=random_angles(seed, min_points, max_points))
        yield seed, np.asarray(build_dataset(spec, jnp.float64).x)


def degenerate_tau_set(clouds, tau: float, h=lambda z: np.maximum(z, 0.0), *, n_probe: int = 64) -> str | None:
    """The start-up check of a Gaussian alpha on sets drawn per seed (``clouds``: ``(seed, x)`` pairs, x
    (n, d)), as ``ccdyn.one_layer.engine.range_problems`` checks one basins run: None, or the line
    naming ``--tau`` and the first set where alpha is 0 or 1 in float64 at most of ``n_probe`` random
    unit w (:func:`ccdyn.pairwise.degenerate_tau`: every start would look stationary)."""
    from ccdyn.pairwise import degenerate_tau  # noqa: PLC0415

    for seed, x in clouds:
        w = np.random.default_rng(0).standard_normal((n_probe, x.shape[1]))
        tau_min, delta = degenerate_tau(h((w / np.linalg.norm(w, axis=1, keepdims=True)) @ x.T), np.float64)
        if tau < tau_min:
            return (f"--tau={tau:g} makes the Gaussian alpha 0 or 1 in float64 at most w on set {seed} (the closest "
                    f"distinct features h(w^T x) are about {delta:.1e} apart): every start would look stationary; "
                    f"use --tau >= {tau_min:.1e}")
    return None


def exact_2d_set(cfg: basins.BasinsConfig, *, n_grid: int = 1 << 20, min_fraction: float = 0.005) -> dict:
    """One 2-D set (``cfg.data`` a circle): exact basins, the pipeline's basins, one row per exact maximum
    (:func:`ccdyn.one_layer.exact2d.compare`)."""
    ds64 = build_dataset(cfg.data, jnp.float64)
    exact = exact2d.circle_basins(exact2d.circle_energy(ds64, cfg.activation, cfg.pairwise, n_grid))
    out = basins.run(cfg, ds64=ds64)
    assert out is not None  # None only on the other processes of a multi-process run
    found = out["analysis"]["rows"]
    rows = exact2d.compare(exact, [r["w"] for r in found], [r["count"] for r in found], cfg.n_init,
                           min_fraction=min_fraction)
    dead = float(np.mean(out["result"]["status"] == Status.DEAD))
    return {"angles": list(cfg.data.angles), "maxima": rows, "flat_exact": exact["flat"], "dead_fraction": dead,
            "status_counts": out["analysis"]["status_counts"], "mean_steps": float(np.mean(out["result"]["steps"])),
            "run_s": out["timings_s"]["run"], "ok": all(r["ok"] for r in rows)}


def exact_2d(base: basins.BasinsConfig, seeds, *, min_points: int, max_points: int, min_fraction: float = 0.005,
             n_grid: int = 1 << 20, log=None) -> dict:
    """:func:`exact_2d_set` on the circle sets of ``random_angles(seed)`` for every seed; ``base``: the run's
    config (its data replaced). Returns {"sets": {seed: record}, "table": rows of SET_COLUMNS, "check"}."""
    sets, table = {}, []
    for seed in seeds:
        data = DataSpec(data="circle", angles=random_angles(seed, min_points, max_points))
        s = exact_2d_set(dataclasses.replace(base, data=data), n_grid=n_grid, min_fraction=min_fraction)
        req = [r for r in s["maxima"] if r["required"]]
        errors = [abs(r["fraction"] - r["exact"]) for r in req]
        table.append([seed, len(data.angles), len(s["maxima"]), len(req), sum(r["found"] for r in req),
                      max(errors, default=0.0), max((e / r["bound"] for e, r in zip(errors, req)), default=0.0),
                      s["mean_steps"], s["ok"]])
        sets[str(seed)] = s
        if log is not None:
            log(f"set {seed}: {len(data.angles)} points, {len(req)} maxima with basin >= {min_fraction}, "
                f"{'ok' if s['ok'] else 'FAILS'}")
    check = claims.exact_2d_check(table, min_fraction, base.n_init, base.dynamics.method, base.dynamics.flow_rtol)
    return {"sets": sets, "table": table, "check": check}


def _matched(a: dict, b: dict, tol: float):
    """Index in b's optima of each of a's optima (-1: none within ``tol``)."""
    wa, wb = np.asarray(a["optima"]).reshape(-1, a["optima"].shape[-1]), np.asarray(b["optima"])
    if wb.size == 0:
        return np.full(wa.shape[0], -1)
    dist = np.linalg.norm(wa[:, None] - wb.reshape(1, -1, wa.shape[1]), axis=-1)
    return np.where(dist.min(axis=1) <= tol, dist.argmin(axis=1), -1)


def rtol_pairs(base: basins.BasinsConfig, rtols, *, ds64=None, min_fraction: float = 0.01, log=None) -> dict:
    """Runs ``base`` at each ``flow_rtol`` in ``rtols`` (the same inits) and compares each with the next: every
    optimum with fraction >= ``min_fraction`` in either run must lie inside the other's 95% Wilson
    interval. Returns {"runs": per rtol, "table": rows of PAIR_COLUMNS, "check"}."""
    ds64 = build_dataset(base.data, jnp.float64) if ds64 is None else ds64
    runs = {}
    for r in rtols:
        cfg = dataclasses.replace(base, dynamics=dataclasses.replace(base.dynamics, flow_rtol=float(r)))
        out = basins.run(cfg, ds64=ds64)
        assert out is not None  # None only on the other processes of a multi-process run
        runs[r] = {"analysis": out["analysis"], "steps": out["result"]["steps"], "run_s": out["timings_s"]["run"]}
        if log is not None:
            log(f"flow_rtol={r:g}: {len(out['analysis']['rows'])} optima, mean "
                f"{np.mean(out['result']['steps']):.1f} attempted steps, {out['timings_s']['run']:.1f} s")
    table = []
    for r, r_next in zip(rtols[:-1], rtols[1:]):
        a, b = runs[r]["analysis"], runs[r_next]["analysis"]
        match = _matched(a, b, base.cluster_tol)
        outside, diffs = 0, []
        for i, row in enumerate(a["rows"]):
            other = b["rows"][match[i]] if match[i] >= 0 else None
            f_b = other["fraction"] if other else 0.0
            if max(row["fraction"], f_b) < min_fraction:
                continue
            diffs.append(abs(row["fraction"] - f_b))
            inside = other is not None and other["ci95"][0] <= row["fraction"] <= other["ci95"][1] and \
                row["ci95"][0] <= f_b <= row["ci95"][1]
            outside += not inside
        lab_a, lab_b = a["labels"], b["labels"]
        mapped = np.where(lab_a >= 0, np.append(match, -1)[np.where(lab_a >= 0, lab_a, -1)], lab_a)
        moved = float(np.mean(mapped != lab_b))
        ok = outside == 0
        table.append([r, r_next, len(diffs), outside, max(diffs, default=0.0), moved,
                      float(np.mean(runs[r]["steps"])), float(np.mean(runs[r_next]["steps"])), ok])
    check = claims.rtol_check(table, rtols, min_fraction, base.n_init)
    record = {f"{r:g}": {"rows": v["analysis"]["rows"], "status_counts": v["analysis"]["status_counts"],
                  "mean_steps": float(np.mean(v["steps"])), "run_s": v["run_s"]} for r, v in runs.items()}
    return {"runs": record, "table": table, "check": check}


def table_key(check: str) -> list:
    """The key of the printed table of ``check`` ("exact_2d": :data:`SET_COLUMNS`, else :data:`PAIR_COLUMNS`)."""
    if check == "exact_2d":
        return report.key_lines(
            "set_seed: the seed of the random 2-D point set; n_points: its points; maxima: maxima of E on the "
            "circle (exact basins: the arcs between neighbouring minima); required: those with exact basin >= "
            "min_fraction; found_required: how many of them the pipeline found; max_abs_error: the largest |found "
            "fraction - exact basin|; worst_over_bound: the largest error / max(0.01, 4 sigma), <= 1 passes; "
            "mean_steps: attempted flow steps per init; ok: the set passes.")
    return report.key_lines(
        "rtol, rtol_next: the two flow_rtol compared on the same inits; optima: optima with fraction >= "
        "min_fraction in either run; outside_interval: those whose fraction lies outside the other run's 95% "
        "Wilson interval; max_abs_diff: the largest difference of their fractions; moved_inits: the share of inits "
        "that end at a different optimum; mean_steps, mean_steps_next: attempted flow steps per init at each "
        "rtol; ok: no optimum outside.")
