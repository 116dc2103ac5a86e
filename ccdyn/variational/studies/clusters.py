"""The Figs. 5-6 record behind ``results/simclr_var/kernel/clusters.json`` (``scripts/kernel_dynamics.py``):
a frozen :class:`ClusterStudyConfig` in, a plain dict of numbers out (no I/O): the settings of Figs. 5-6
over many seeds, their grids over width, temperature and cluster size ratio, and the verdicts of
:func:`ccdyn.variational.claims.cluster_verdicts`. The keep rule and the other thresholds are the
config's fields, explained in docs/variational.md.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from ccdyn.variational import claims
from ccdyn.variational import clusters as cl

__all__ = ["ClusterStudyConfig", "cluster_study"]


@dataclasses.dataclass(frozen=True)
class ClusterStudyConfig:
    """Figs. 5-6. ``models``: (model, start, lr, width, activation, signed A); every run uses ``steps``, ``tau``,
    ``n_seeds``, ``per_cluster``; the grids (2-D, ``grid_steps``) vary one of width, tau and the size of
    the cluster at x = 1 for net1 and for plain GD from net1's start."""
    dims: tuple = (2, 3)
    models: tuple = (("net1", "net1", 5.0, 128, "relu", False), ("net1", "net1", 5.0, 128, "relu", True),
                     ("net1", "net1", 0.5, 128, "tanh", False), ("mlp4", "mlp4", 0.2, 128, "relu", False),
                     ("points", "net1", 0.1, 128, "relu", False), ("points", "net1", 0.1, 128, "relu", True),
                     ("points", "net1", 0.1, 128, "tanh", False), ("points", "mlp4", 0.1, 128, "relu", False),
                     ("points", "random", 0.1, 128, "relu", False))
    steps: int = 2000
    record_every: int = 5
    tau: float = 0.2
    n_seeds: int = 32
    per_cluster: int = 32
    noise: float = 0.3
    grid_steps: int = 1000
    widths: tuple = (8, 32, 128, 512)
    taus: tuple = (0.1, 0.2, 0.5)
    small_sizes: tuple = (32, 8, 4)
    at: tuple = (0, 15, 200, 1000, 2000)
    share: float = 0.9            # a claim about "the clusters" holds for at least this share of seeds
    seed: int = 0


def _name(model, start, act, signed=False):
    tag = ("" if act == "relu" else f" {act}") + (" signed" if signed else "")
    if model == "points":
        return f"points (start: {start}{tag if start == 'net1' else ''})"
    return model + tag


def _finite_mean(x) -> float:
    """Mean of the finite entries of ``x`` (NaN, without a warning, when there are none)."""
    x = np.asarray(x, float)
    return float(x[np.isfinite(x)].mean()) if np.isfinite(x).any() else float("nan")


def _curves(res):
    out = {}
    for k in ("ratio", "silhouette", "uniformity"):
        x = res[k]
        with warnings.catch_warnings():  # a record with fewer than 2 finite seeds has a NaN mean or interval
            warnings.simplefilter("ignore", RuntimeWarning)
            m = np.nanmean(x, 0)
            h = 1.96 * np.nanstd(x, 0, ddof=1) / np.sqrt(np.sum(np.isfinite(x), 0))
        out[k] = {"mean": m, "lo": m - h, "hi": m + h}
    return out


def cluster_study(c: ClusterStudyConfig = ClusterStudyConfig(), log=None) -> dict:
    """Runs the Figs. 5-6 settings and the grids; returns summaries, curves (mean and 95% interval per
    recorded iteration), seed 0's snapshots, the grids' rows and the verdicts."""
    log = log or (lambda m: None)
    base: dict[str, Any] = dict(steps=c.steps, record_every=c.record_every, tau=c.tau, n_seeds=c.n_seeds,
                                noise=c.noise, seed=c.seed)
    runs, summaries, curves, snaps = {}, {}, {}, {}
    refs = {}
    for dim in c.dims:
        sizes = (c.per_cluster,) * 4
        refs[dim] = cl.data_ratio(cl.ClusterConfig(dim=dim, sizes=sizes, noise=c.noise))
        for model, start, lr, width, act, signed in c.models:
            cfg = cl.ClusterConfig(dim=dim, sizes=sizes, model=model, start=start, lr=lr, width=width, act=act,
                                   signed=signed, **base)
            name = f"{dim}-D {_name(model, start, act, signed)}"
            log(f"  {name}: {c.n_seeds} seeds x {c.steps} steps")
            res = cl.run(cfg)
            summaries[name] = {"config": dataclasses.asdict(cfg), **cl.kept_summary(res, refs[dim], c.at),
                               "loss_mean": {t: _finite_mean(res["loss"][:, int(np.argmin(np.abs(res["iters"] - t)))])
                                             for t in c.at},
                               "positive_orthant_share_end_seed0": float(np.mean(np.all(res["snapshots"][-1] >= 0, 1)))}
            curves[name] = {"iters": res["iters"], **_curves(res)}
            idx = [int(np.argmin(np.abs(res["iters"] - t))) for t in c.at]
            snaps[name] = {"iters": [int(res["iters"][i]) for i in idx], "points": res["snapshots"][idx],
                           "labels": res["labels"]}
            runs[name] = res
    grid = []
    ref2 = refs[c.dims[0]]
    variants = ([("width", w, dict(width=w)) for w in c.widths] + [("tau", t, dict(tau=t)) for t in c.taus]
                + [("small cluster size", s, dict(sizes=(c.per_cluster, c.per_cluster, s, c.per_cluster)))
                   for s in c.small_sizes])
    by = {(m[0], m[1]): m for m in c.models if m[4] == "relu" and not m[5]}
    lr_net, w_net = by[("net1", "net1")][2:4]
    lr_pts = by[("points", "net1")][2]
    for what, value, kw in variants:
        for model, lr in (("net1", lr_net), ("points", lr_pts)):
            args = dict(dim=c.dims[0], sizes=(c.per_cluster,) * 4, model=model, start="net1", lr=lr, width=w_net,
                        **{**base, "steps": c.grid_steps})
            args.update(kw)
            cfg = cl.ClusterConfig(**args)
            log(f"  grid {what} = {value}: {model}")
            res = cl.run(cfg)
            ref = cl.data_ratio(cfg) if what == "small cluster size" else ref2
            s = cl.kept_summary(res, ref, (15, 200, c.grid_steps))
            small_sil = res["per_cluster"][:, -1, 2]
            others = res["per_cluster"][:, -1, [0, 1, 3]].mean(1)
            grid.append({"vary": what, "value": value, "model": model, "keep_ratio": ref,
                         "kept_at_200": cl.kept_share(s, 200), "kept_at_end": cl.kept_share(s, c.grid_steps),
                         "median_t_off": s["median_t_off"], "kept_to_end": s["kept_to_end"], "n": s["n"],
                         "non_finite_seeds": s["non_finite_seeds"],
                         "ratio_end": cl.mean_ci(res["ratio"][:, -1]),
                         "cluster_x1_silhouette_end": cl.mean_ci(small_sil),
                         "other_clusters_silhouette_end": cl.mean_ci(others)})
    return {"config": dataclasses.asdict(c), "keep_ratio": refs, "summaries": summaries, "curves": curves,
            "snapshots": snaps, "grid": grid, "verdicts": claims.cluster_verdicts(c, summaries, grid)}
