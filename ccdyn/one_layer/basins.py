"""Basins of attraction of the 1-layer flow over many random initializations (Sec. 3.3).

Pipeline: the engine (:mod:`ccdyn.one_layer.engine`) runs random unit inits to a stop -> cluster the
converged endpoints into distinct optima -> refine every optimum in float64 and certify it
(:func:`ccdyn.one_layer.certify.assess`) -> basin fractions with 95% Wilson intervals. This module also
owns the run's ``summary.json`` (:func:`summary`, :func:`read_summary`) and its text table.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, io, pairwise, parallel, report
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.data.registry import DataSpec, build_dataset, describe, spec_from_dict
from ccdyn.one_layer import certify, engine, kinks
from ccdyn.one_layer.engine import Dynamics, Status
from ccdyn.pairwise import Pairwise
from ccdyn.stats import (basin_statistics, inits_for_miss, miss_bound, miss_phrase, round_up,
                         simultaneous_intervals, unseen_mass, wilson_interval)

__all__ = ["BasinsConfig", "memory_estimate", "sized", "sizing", "precise_enough", "IncrementalClusters", "stop_plan",
           "StopRule", "stop_rule", "analyze_result", "statistics", "run", "cluster", "refine", "describe_optima", "merge_duplicates",
           "basin_mass_on_patterns", "analyze", "summary", "write_summary", "read_summary", "table_key", "statistics_lines", "uncertified_lines", "table",
           "STATISTICS_COLUMNS", "COMPARISON_COLUMNS", "comparison_rows"]


@dataclasses.dataclass(frozen=True)
class BasinsConfig:
    """Everything that determines a basins run's numbers (``config.json``; compared on ``--resume``).

    Field names are ``scripts/basins.py``'s flags; ``data`` is the data model, ``dynamics`` how each
    init is advanced. ``x64`` runs the dynamics in float64 (refinement and certificates always are).
    ``target_unseen`` (None: off) ends the run at the first chunk after which the unseen-mass bound
    and every optimum's 95% half-width are <= it (:func:`precise_enough`); ``n_init`` is then the cap.
    ``target_miss`` / ``target_halfwidth`` (None: off) end it at the first chunk after which no basin
    >= ``target_miss`` can have been missed and every simultaneous interval's half-width is <=
    ``target_halfwidth`` (:func:`stop_plan`, docs/statistics.md section 5).
    """

    data: DataSpec = DataSpec()
    act: str = "relu"
    leaky_slope: float = activations.DEFAULT_LEAKY_SLOPE
    alpha: str = "uniform"
    tau: float = 1.0
    dynamics: Dynamics = Dynamics()
    n_init: int = 10000
    seed: int = 0
    chunk_size: int = 16384
    tile: int = 512
    x64: bool = False
    cluster_tol: float = 1e-2
    target_unseen: float | None = None
    target_miss: float | None = None
    target_halfwidth: float | None = None

    @property
    def activation(self) -> Activation:
        return activations.get_activation(self.act, self.leaky_slope)

    @property
    def pairwise(self) -> Pairwise:
        return pairwise.get_pairwise(self.alpha, self.tau)

    @property
    def dtype(self):
        return jnp.float64 if self.x64 else jnp.float32

    @classmethod
    def from_dict(cls, fields: dict) -> "BasinsConfig":
        """The config as saved in ``config.json`` / ``summary.json`` (lists back to tuples)."""
        fields = dict(fields)
        fields["data"] = spec_from_dict(fields["data"])
        fields["dynamics"] = Dynamics(**fields["dynamics"])
        return cls(**fields)


def memory_estimate(cfg: BasinsConfig, shape) -> tuple:
    """(bytes, flag, formula): a coarse upper estimate of a run's peak memory per device from the data's
    (n, views, d) (:func:`ccdyn.data.registry.support_shape`) and the tile, naming the flag that drives
    it. The dataset is held 3 times in float64; a tile holds about 8 arrays of tile x n x views."""
    n, v, d = shape
    item = 8 if cfg.x64 else 4
    data, tile = 3.0 * n * v * d * 8, 8.0 * cfg.tile * n * v * item
    if cfg.alpha != "uniform":
        tile += 3.0 * min(cfg.tile, 16) * n * n * item  # dynamics.GAUSSIAN_BATCH inits at a time
    if data >= tile:  # the data's factor furthest above its default (d = 10, 8 views, 1024 points) names the flag
        flag = max((("--d", d / 10), ("--aug_views", v / 8), ("--n_samples", n / 1024)), key=lambda kv: kv[1])[0]
        return data + tile, flag, f"3 copies of {n} points x {v} views x d={d} float64"
    flag = "--tile" if cfg.tile / 512 >= v / 8 else "--aug_views"  # the factor furthest above its default
    return data + tile, flag, f"8 arrays of tile {cfg.tile} x {n} points x {v} views, {item} B each"


def sized(cfg: BasinsConfig, shape, *, tile: int | None, chunk_size: int | None) -> BasinsConfig:
    """``cfg`` with the tile and chunk size given, or, where ``None``, chosen by the rule of
    :data:`ccdyn.parallel.SIZING_RULE` from the backend, the device memory and this run's memory
    estimate (:func:`memory_estimate`) at the data's (n, views, d) ``shape``."""
    if tile is None:  # memory_estimate is fixed + tile x per_init for tiles >= 16
        n, v, _ = shape
        per_init = 8.0 * n * v * (8 if cfg.x64 else 4)
        fixed = memory_estimate(dataclasses.replace(cfg, tile=16), shape)[0] - 16 * per_init
        tile = parallel.default_tile(per_init, fixed, cfg.n_init, activation_bytes=4.0 * n * v)
    return dataclasses.replace(cfg, tile=tile, chunk_size=chunk_size or parallel.default_chunk(tile))


def sizing(cfg: BasinsConfig, auto) -> dict:
    """The ``sizing`` record of ``summary.json``: the tile and chunk size in force, which of them the
    rule chose (``auto``: names), the rule, and the devices it saw."""
    dev = jax.devices()[0]
    return {"tile": cfg.tile, "chunk_size": cfg.chunk_size, "auto": list(auto), "rule": parallel.SIZING_RULE,
            "backend": jax.default_backend(), "device_kind": dev.device_kind, "n_devices": jax.device_count(),
            "device_memory_gib": round(parallel.device_memory(dev) / 2**30, 1)}


def precise_enough(result: dict, target: float, cluster_tol: float, odd: bool) -> bool:
    """Whether the inits so far pin the basins down to ``target``: the 95% upper bound of the basin mass
    of optima not found (:func:`ccdyn.stats.unseen_mass`) and every optimum's 95% Wilson half-width
    are <= ``target``. Counts come from :func:`cluster` on the converged endpoints (before the float64
    refinement, which can only merge clusters)."""
    status = result["status"]
    n, conv = status.shape[0], status == Status.CONVERGED
    if not conv.any():
        return False
    counts = np.bincount(cluster(np.asarray(result["w"][conv], np.float64), cluster_tol, odd)[0])
    half = np.diff(wilson_interval(counts, n), axis=-1) / 2
    return unseen_mass(counts, n)["upper"] <= target and bool(np.all(half <= target))


class IncrementalClusters:
    """The greedy clustering of :func:`cluster` built chunk by chunk: each chunk costs O(rows x clusters).

    :func:`cluster` gives row r to the first *seed* (a row that started a cluster) within ``tol`` of it,
    seeds in row order, and makes r a seed when there is none; so the clustering of the first rows is
    the restriction of the clustering of all rows. :meth:`add` assigns a chunk's rows to the seeds so
    far, then clusters the rest among themselves with :func:`cluster`'s rule: the partition (and so
    the counts) equals ``cluster`` of all rows added, in seed order instead of largest first.
    """

    def __init__(self, tol: float, odd: bool, dim: int):
        self.tol, self.odd = float(tol), bool(odd)
        self.seeds = np.zeros((0, dim))
        self.counts = np.zeros((0,), np.int64)

    def add(self, W) -> np.ndarray:
        """Adds rows W (m, d) in order; returns their cluster index (seed order)."""
        W = np.asarray(W, np.float64).reshape(-1, self.seeds.shape[1])
        labels = np.full(W.shape[0], -1, np.int64)
        if self.seeds.shape[0] and W.shape[0]:
            step = max(1, 2 ** 22 // (self.seeds.size or 1))  # rows per block of (rows, seeds, d) differences
            for lo in range(0, W.shape[0], step):
                block = W[lo:lo + step, None, :]
                d = np.linalg.norm(block - self.seeds[None], axis=-1)  # as _odd_distance computes it
                if self.odd:
                    d = np.minimum(d, np.linalg.norm(block + self.seeds[None], axis=-1))
                within = d <= self.tol
                hit = np.flatnonzero(within.any(axis=1))
                labels[lo + hit] = np.argmax(within[hit], axis=1)  # the first seed within tol
        rest = np.flatnonzero(labels < 0)
        k = self.seeds.shape[0]
        if rest.size:
            new = _greedy_seeds(W[rest], self.tol, self.odd)
            labels[rest] = k + new
            first = np.unique(new, return_index=True)[1]
            self.seeds = np.concatenate([self.seeds, W[rest[first]]])
        self.counts = np.bincount(labels, minlength=self.seeds.shape[0]) + np.pad(
            self.counts, (0, self.seeds.shape[0] - k))
        return labels


def _greedy_seeds(W: np.ndarray, tol: float, odd: bool) -> np.ndarray:
    """:func:`cluster`'s labels in seed order (cluster j started by the j-th seed in row order)."""
    labels = np.full((W.shape[0],), -1, np.int64)
    k = 0
    for i in range(W.shape[0]):
        if labels[i] >= 0:
            continue
        free = np.flatnonzero(labels < 0)
        labels[free[_odd_distance(W[free], W[i], odd) <= tol]] = k
        k += 1
    return labels


def stop_plan(cfg: BasinsConfig, confidence: float = 0.95) -> dict | None:
    """What a run stopped by ``--target_miss`` / ``--target_halfwidth`` checks and what it may claim
    (docs/statistics.md section 5); None when neither is set.

    The checkpoints are the chunk ends n >= n_min = ``inits_for_miss(target_miss)`` (fixed before the
    run; every chunk end without ``target_miss``), up to the cap ``n_init``. Without ``target_halfwidth``
    the run stops at the first checkpoint, a number fixed in advance: its statistics are those of a
    fixed n. With it, the stop depends on the counts, so the intervals checked (and reported) at each of
    the K checkpoints are simultaneous at level 1 - alpha / K (an alpha split: the chance that any
    checkpoint's intervals miss is <= alpha, so the stopped run's intervals hold at 1 - alpha whatever
    the counts make the rule do), and the miss claim is that of the first checkpoint, ``claimed_miss``
    = miss_bound(n_1) <= target_miss, not that of the data-chosen n.
    """
    if cfg.target_miss is None and cfg.target_halfwidth is None:
        return None
    n_min = 1 if cfg.target_miss is None else inits_for_miss(cfg.target_miss, confidence)
    ends = np.cumsum([c for _, c in parallel.chunk_ranges(cfg.n_init, cfg.chunk_size)])
    points = [int(e) for e in ends if e >= n_min] or [int(ends[-1])]
    adaptive = cfg.target_halfwidth is not None
    return {"target_miss": cfg.target_miss, "target_halfwidth": cfg.target_halfwidth, "n_min": n_min,
            "checkpoints": len(points) if adaptive else 1, "first_checkpoint": points[0],
            "interval_confidence": 1 - (1 - confidence) / len(points) if adaptive else confidence,
            "claimed_miss": miss_bound(points[0], confidence), "confidence": confidence,
            "data_dependent": adaptive}


class StopRule:
    """``engine.collect``'s ``stop`` for ``--target_unseen`` or ``--target_miss`` / ``--target_halfwidth``:
    called after every chunk with inits 0 .. the chunk's end, it clusters only the rows it has not
    seen (:class:`IncrementalClusters`), so a run's stop checks cost O(inits x clusters) in all."""

    def __init__(self, cfg: BasinsConfig, odd: bool):
        self.cfg, self.odd, self.seen = cfg, odd, 0
        self.plan = stop_plan(cfg)
        self.clusters = None
        self.checks = []  # (n, largest half-width) per chunk end checked

    def counts(self, result: dict) -> np.ndarray:
        """Cluster counts of the converged endpoints of every init so far (new rows clustered once)."""
        status, W = result["status"], result["w"]
        if self.clusters is None:
            self.clusters = IncrementalClusters(self.cfg.cluster_tol, self.odd, W.shape[1])
        new = slice(self.seen, status.shape[0])
        conv = status[new] == Status.CONVERGED
        self.clusters.add(np.asarray(W[new][conv], np.float64))
        self.seen = status.shape[0]
        return self.clusters.counts

    def __call__(self, result: dict) -> bool:
        n = result["status"].shape[0]
        if self.plan is None:  # --target_unseen
            counts = self.counts(result)
            if counts.size == 0:
                return False
            half = np.diff(wilson_interval(counts, n), axis=-1) / 2
            return unseen_mass(counts, n)["upper"] <= self.cfg.target_unseen and bool(np.all(half <= self.cfg.target_unseen))
        if n < self.plan["first_checkpoint"] and n < self.cfg.n_init:
            if self.cfg.target_halfwidth is not None:
                self.counts(result)  # keep clustering as the chunks come (each row once)
            return False
        if self.cfg.target_halfwidth is None:
            return True
        counts = self.counts(result)
        if counts.size == 0:
            return False
        ci = simultaneous_intervals(counts, n, self.plan["interval_confidence"])
        half = float(np.max(np.diff(ci, axis=-1)) / 2)
        self.checks.append((n, half))
        return half <= self.cfg.target_halfwidth


def stop_rule(cfg: BasinsConfig):
    """The stop callable of a config's stopping rule (:class:`StopRule`), or None when it has none."""
    if cfg.target_unseen is None and cfg.target_miss is None and cfg.target_halfwidth is None:
        return None
    return StopRule(cfg, cfg.activation.sign_symmetric)


def analyze_result(cfg: BasinsConfig, ds64: Dataset, result: dict, *, log=None) -> dict:
    """The host part of :func:`run` on an engine result: DEAD inits rechecked in float64, then
    :func:`analyze` (on the host CPU, as in :func:`run`); returns (result, analysis)."""
    host = parallel.host_device()
    with jax.default_device(host):
        ds_host = jax.device_put(ds64, host)
        result = engine.recheck_dead(ds_host, cfg.activation, cfg.pairwise, result)
        return result, analyze(ds_host, cfg.activation, cfg.pairwise, cfg.dynamics, result,
                               cluster_tol=cfg.cluster_tol, log=log)


def run(cfg: BasinsConfig, *, ds64: Dataset | None = None, store=None, mesh=None, progress=None,
        log=None) -> dict | None:
    """The whole basins pipeline: engine over ``cfg.n_init`` inits -> :func:`analyze`.

    Args:
      ds64: the float64 dataset; default ``build_dataset(cfg.data)`` (pass one to study a dataset
        that no flag describes). The dynamics run on ``ds64.astype(cfg.dtype)``.
      mesh: default every device of every process (:func:`ccdyn.parallel.device_mesh`).
      store, progress: as :func:`ccdyn.one_layer.engine.collect` (``store`` on process 0 only).
      log: optional callable taking one progress line of the analysis (:func:`analyze`).

    Returns:
      On process 0, ``{"result": per-init arrays, "analysis": analyze(...), "timings_s": {"run",
      "analyze"}}``; on the other processes ``None`` (they compute their share of every chunk). The
      analysis (float64 refinement and certificates of a few optima: small and latency-bound) runs
      on the host CPU on purpose, whatever the accelerator (docs/reproducibility.md, "Sizing").
    """
    ds64 = build_dataset(cfg.data, jnp.float64) if ds64 is None else ds64
    act, pw = cfg.activation, cfg.pairwise
    runner = engine.ChunkRunner(ds64.astype(cfg.dtype), act, pw, cfg.dynamics, tile=cfg.tile, mesh=mesh)
    t0 = time.time()
    stop = stop_rule(cfg)
    result = engine.collect(runner, jax.random.PRNGKey(cfg.seed), cfg.n_init, cfg.chunk_size, cfg.dtype, store=store,
                            progress=progress, stop=stop)
    run_s = time.time() - t0
    if result is None:
        return None
    t0 = time.time()
    result, an = analyze_result(cfg, ds64, result, log=log)
    return {"result": result, "analysis": an, "timings_s": {"run": run_s, "analyze": time.time() - t0}}


def _odd_distance(W, c, odd: bool):
    d = np.linalg.norm(W - c[None], axis=1)
    return np.minimum(d, np.linalg.norm(W + c[None], axis=1)) if odd else d


def cluster(W: np.ndarray, tol: float, odd: bool = False):
    """Greedy clustering of unit vectors in row order: each unassigned row starts a cluster that takes
    every unassigned row within Euclidean distance ``tol`` (w and -w together if ``odd``).

    Returns:
      (labels (n,), centers (k, d)): clusters ordered by size (largest first), centers = normalized
      mean of the members (sign-aligned for odd activations).
    """
    n = W.shape[0]
    labels = np.full((n,), -1, np.int64)
    centers = []
    for i in range(n):
        if labels[i] >= 0:
            continue
        free = np.flatnonzero(labels < 0)
        near = free[_odd_distance(W[free], W[i], odd) <= tol]
        labels[near] = len(centers)
        members = W[near]
        if odd:
            members = members * np.sign(members @ W[i])[:, None]
        c = members.mean(axis=0)
        centers.append(c / np.linalg.norm(c))
    centers = np.asarray(centers).reshape(-1, W.shape[1])
    order, rank = _largest_first(np.bincount(labels, minlength=len(centers)))
    return rank[labels], centers[order]


def _largest_first(counts):
    """(order, rank): indices sorted by decreasing count (stable), and each index's position."""
    order = np.argsort(-np.asarray(counts), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return order, rank


ANALYSIS_CHUNK = 256  # optima refined / certified per compiled call (fixed shape: the last chunk is padded)


def _chunk_rows(k: int):
    """(lo, hi, rows) per chunk of k rows: chunks of ANALYSIS_CHUNK rows, or fewer rows padded to a
    power of two >= 8; ``rows`` repeats the last row as padding (one compile per run)."""
    size = ANALYSIS_CHUNK if k >= ANALYSIS_CHUNK else max(8, 1 << (k - 1).bit_length())
    for lo in range(0, k, size):
        yield lo, min(lo + size, k), np.minimum(np.arange(lo, lo + size), k - 1)


def _chunks(fn, W, log, what: str) -> dict:
    """fn(W_chunk) -> dict of per-row arrays, over fixed-shape chunks (:func:`_chunk_rows`)."""
    out, t0, k = [], time.time(), W.shape[0]
    for lo, hi, rows in _chunk_rows(k):
        out.append(jax.device_get(fn(W[rows])))
        if log is not None:
            log(f"  analysis: {what} {hi}/{k} ({time.time() - t0:.1f} s)")
    return {key: np.concatenate([o[key] for o in out])[:k] for key in out[0]}


def refine(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, centers, *,
           tol: float = 1e-12, max_steps: int = 20000, log=None) -> dict:
    """Refines each cluster center in float64.

    With a kinked activation (ReLU, leaky ReLU) and the power method, first by power iteration down to
    ``tol``: when every refined point converged clear of the kinks (:func:`_clear_of_kinks`) it is a smooth
    fixed point and ``kink`` is None (the main job then never compiles the kink path). Otherwise (and for
    the flows) by the exact active-set iteration of
    :func:`ccdyn.one_layer.kinks.refine` (a flow endpoint pinned on a kink ridge short of the maximum
    is moved to it); ``kink`` then holds that function's per-center output. Otherwise by continuing
    the dynamics down to ``tol`` (``kink`` is None). ``status`` is :class:`Status` CONVERGED or not.
    """
    centers = np.asarray(centers, np.float64)
    fine = dataclasses.replace(dyn, tol=tol, max_steps=max_steps)
    if kinks.has_kinks(act):
        if dyn.method == "power":  # the main job: its optima are usually smooth; then skip compiling the kink path
            out = engine.converge(ds64, act, pw, fine, jnp.asarray(centers, ds64.x.dtype))
            if _clear_of_kinks(ds64, out, KINK_MARGIN):
                return {**out, "kink": None}
        ref = _chunks(lambda W: kinks.refine(ds64, act, pw, W), centers, log, "refined")
        ok = ref["status"] == kinks.RefineStatus.CONVERGED
        return {"w": ref["w"], "status": np.where(ok, Status.CONVERGED, Status.NOT_CONVERGED), "kink": ref}
    out = engine.converge(ds64, act, pw, fine, jnp.asarray(centers, ds64.x.dtype))
    return {**out, "kink": None}


KINK_MARGIN = 1e-6  # power iteration's refined optima: every view this many radians off its hyperplane = smooth


def _clear_of_kinks(ds64: Dataset, out: dict, margin: float) -> bool:
    """Every refined point converged and lies more than ``margin`` radians from every view's hyperplane:
    A(w) is constant around it (Lemma 3), so the smooth certificate is exact and no kink refinement is needed."""
    x = np.asarray(ds64.views()[0]).reshape(-1, ds64.dim)
    norm = np.linalg.norm(x, axis=1)
    z = np.abs(np.asarray(out["w"]) @ x[norm > 0].T) / norm[norm > 0]
    return bool(np.all(out["status"] == Status.CONVERGED) and np.all(z > margin))


def describe_optima(ds64: Dataset, act: Activation, pw: Pairwise, optima, counts, n_init: int, *,
                    smooth_tol: float = 1e-8, kink_ref: dict | None = None, log=None) -> list:
    """Per optimum: basin fraction + Wilson interval, certificate and stability
    (:func:`ccdyn.one_layer.certify.assess_many`: ``certificate``, ``kink_rank``, ...), and the best
    planted pattern. ``kink_ref``: :func:`ccdyn.one_layer.kinks.refine`'s output for ``optima``."""
    optima = np.asarray(optima, np.float64)
    k = optima.shape[0]
    if k == 0:
        return []
    rows, t0 = [], time.time()
    for lo, hi, pad in _chunk_rows(k):
        sub = None if kink_ref is None else {key: np.asarray(v)[pad] for key, v in kink_ref.items()}
        rows += certify.assess_many(ds64, act, pw, optima[pad], kink_ref=sub, smooth_tol=smooth_tol)[:hi - lo]
        if log is not None:
            log(f"  analysis: certified {hi}/{k} ({time.time() - t0:.1f} s)")
    ci = wilson_interval(counts, n_init)
    patterns = None if ds64.patterns is None else np.asarray(ds64.patterns)
    if patterns is not None:
        patterns = patterns / np.linalg.norm(patterns, axis=1, keepdims=True)
    out = []
    for j, (w, cert) in enumerate(zip(optima, rows)):
        row = {"optimum": j, "fraction": counts[j] / n_init, "ci95": ci[j].tolist(), "count": int(counts[j]),
               **cert, "pattern": None, "overlap": None, "w": w.tolist()}
        if patterns is not None:
            cos = patterns @ w
            score = np.abs(cos) if act.sign_symmetric else cos
            best = int(np.argmax(score))
            row["pattern"], row["overlap"] = best, float(score[best])
        out.append(row)
    return out


def _merge(optima: np.ndarray, counts: np.ndarray, tol: float, odd: bool):
    """(keep, new counts, mapping old -> new): ``keep`` indexes the refined optimum kept for each
    merged one (that of its largest member cluster), largest merged basin first."""
    labels, centers = cluster(optima, tol, odd)
    k = centers.shape[0]
    new_counts = np.bincount(labels, weights=counts, minlength=k).astype(np.int64)
    best = np.full(k, -1)
    for i in np.argsort(-np.asarray(counts), kind="stable"):  # first seen per label = its largest member
        if best[labels[i]] < 0:
            best[labels[i]] = i
    order, rank = _largest_first(new_counts)
    return best[order], new_counts[order], rank[labels]


def merge_duplicates(optima: np.ndarray, counts: np.ndarray, tol: float, odd: bool):
    """Merges refined optima closer than ``tol``; returns (optima, counts, mapping old -> new)."""
    keep, new_counts, mapping = _merge(optima, counts, tol, odd)
    return optima[keep], new_counts, mapping


def basin_mass_on_patterns(rows: list, min_overlap: float = 0.9) -> float:
    """Total basin fraction of stable optima whose best planted pattern has overlap >= min_overlap."""
    return float(sum(r["fraction"] for r in rows
                     if r["stable"] and r["overlap"] is not None and r["overlap"] >= min_overlap))


def analyze(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, result: dict, *,
            cluster_tol: float, log=None) -> dict:
    """Clusters the converged endpoints, refines and certifies each optimum, labels every init.

    Args:
      ds64: the dataset in float64 (refinement and certificates are always float64).
      result: output of :func:`collect` (w, status, steps, residual for every init).
      log: optional callable taking one progress line (the library itself prints nothing).

    Returns:
      dict with ``rows`` (one per optimum, largest basin first: see :func:`describe_optima`, plus
      ``refined``), ``optima`` (k, d), ``labels`` (n_init,): the optimum of each converged init, and
      -status (:class:`ccdyn.one_layer.engine.Status`) for the others; ``status_counts``; and
      ``n_clusters``, the endpoint clusters before refinement merged them.
    """
    status = result["status"]
    n_init = status.shape[0]
    conv = status == Status.CONVERGED
    labels = -status.astype(np.int32)
    rows, optima, n_clusters = [], np.zeros((0, ds64.dim)), 0
    if conv.any():
        t0 = time.time()
        first, centers = cluster(np.asarray(result["w"][conv], np.float64), cluster_tol, act.sign_symmetric)
        if log is not None:
            log(f"  analysis: {int(conv.sum())} converged endpoints in {centers.shape[0]} clusters "
                f"({time.time() - t0:.1f} s)")
        n_clusters = centers.shape[0]
        ref = refine(ds64, act, pw, dyn, centers, log=log)
        counts = np.bincount(first, minlength=centers.shape[0])
        keep, counts, mapping = _merge(np.asarray(ref["w"]), counts, cluster_tol, act.sign_symmetric)
        optima = np.asarray(ref["w"])[keep]
        refined = ref["status"][keep] == Status.CONVERGED
        labels[conv] = mapping[first]
        kink_ref = None if ref["kink"] is None else {key: np.asarray(v)[keep] for key, v in ref["kink"].items()}
        if log is not None:
            log(f"  analysis: {centers.shape[0]} clusters refined to {optima.shape[0]} distinct optima")
        rows = describe_optima(ds64, act, pw, optima, counts, n_init, kink_ref=kink_ref, log=log)
        for r, ok in zip(rows, refined):
            r["refined"] = bool(ok)
    return {"rows": rows, "optima": optima, "labels": labels, "status_counts": engine.status_counts(status),
            "n_clusters": n_clusters}


def statistics(counts, n: int, config: dict | None = None) -> dict:
    """The ``statistics`` record of ``summary.json`` (docs/statistics.md): :func:`ccdyn.stats.basin_statistics`
    of the optima's ``counts`` out of all ``n`` inits, with the intervals (``intervals``, one per count)
    simultaneous at the level the run's stopping rule allows (:func:`stop_plan`: 1 - alpha / K when the
    stop depended on the counts), the largest half-width, and ``stop`` (the plan, and whether its targets
    were met) for a run with ``target_miss`` / ``target_halfwidth``."""
    cfg = None if config is None else BasinsConfig.from_dict(config)
    plan = None if cfg is None else stop_plan(cfg)
    out = basin_statistics(counts, n)
    level = out["confidence"] if plan is None else plan["interval_confidence"]
    if level != out["confidence"]:
        out["intervals"] = simultaneous_intervals(np.asarray(counts), n, level).tolist()
    ci = np.asarray(out["intervals"]).reshape(-1, 2)
    out["interval_confidence"] = level
    out["max_halfwidth"] = float(np.max(ci[:, 1] - ci[:, 0]) / 2) if ci.size else None
    if plan is not None:
        miss_met = plan["target_miss"] is None or (n >= plan["n_min"] and plan["claimed_miss"] <= plan["target_miss"])
        half_met = plan["target_halfwidth"] is None or (
            out["max_halfwidth"] is not None and out["max_halfwidth"] <= plan["target_halfwidth"])
        out["stop"] = {**plan, "miss_met": bool(miss_met), "halfwidth_met": bool(half_met)}
        if plan["data_dependent"]:  # the miss claim of the first checkpoint, fixed before the run
            out["miss_bound"], out["miss_phrase"] = plan["claimed_miss"], miss_phrase(plan["first_checkpoint"])
    return out


def summary(an: dict, result: dict, *, config: dict, record: dict, timings_s: dict, sizing: dict | None = None) -> dict:
    """The ``summary.json`` of a basins run: its config, per-status counts (``n_<status>``), the optima
    rows of :func:`analyze` (each with ``ci_simultaneous``, its interval of :func:`statistics`), the
    basin mass of optima not found (:func:`ccdyn.stats.unseen_mass`), ``statistics`` (:func:`statistics`:
    the per-basin miss bound, how the intervals were made, the number of optima), and the run record (``command``, ``versions``, ``devices``: see
    :func:`ccdyn.cli.run_record`), and ``sizing`` (:func:`sizing`) when given."""
    rows, counts = an["rows"], an["status_counts"]
    order = engine.FINAL_STATUSES  # every final status, those the engine adds included
    stats = statistics([r["count"] for r in rows], int(result["status"].shape[0]), config)
    for r, ci in zip(rows, stats.pop("intervals")):
        r["ci_simultaneous"] = ci
    return {
        "state": "complete",
        "command": record["command"],
        "config": config,
        "n_init": int(result["status"].shape[0]),
        **{f"n_{s.key}": counts[s.key] for s in order},
        "n_optima": len(rows),
        "n_endpoint_clusters": an.get("n_clusters"),
        "n_stable_optima": sum(r["stable"] for r in rows),
        "n_certified_smooth": sum(r.get("certificate") == "smooth" for r in rows),
        "n_certified_kink": sum(r.get("certificate") == "kink-kkt" for r in rows),
        "basin_mass_on_patterns": basin_mass_on_patterns(rows),
        "unseen_mass": unseen_mass([r["count"] for r in rows], int(result["status"].shape[0])),
        "statistics": stats,
        "optima": rows,
        "steps_median": float(np.median(result["steps"])),
        "versions": record["versions"],
        "devices": record["devices"],
        "num_processes": record["num_processes"],
        "timings_s": timings_s,
        "init_steps_per_s": float(np.sum(result["steps"])) / timings_s["run"],
        **({} if sizing is None else {"sizing": sizing}),
    }


def write_summary(run_dir, s: dict) -> None:
    """Writes ``<run_dir>/summary.json`` atomically."""
    io.write_json(Path(run_dir) / "summary.json", s)


def read_summary(run_dir) -> dict:
    """Reads ``<run_dir>/summary.json`` of a basins run (``ValueError`` if it is missing)."""
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        raise ValueError(f"{path} does not exist")
    return io.read_json(path)


TABLE_MIN_FRACTION, TABLE_MAX_ROWS = 1e-3, 30


def _pct(level: float) -> str:
    """A confidence level in per cent, rounded down to 4 digits (0.9916667 -> 99.16%)."""
    digits = 4 - 2  # 2 digits after the point
    return f"{np.floor(100 * level * 10 ** digits) / 10 ** digits:g}%"


def table_key(level: float = 0.95) -> list:
    """The key of :func:`table`'s columns (one entry per column and symbol), ``level`` that of the intervals."""
    return ["key: optimum: its index, largest basin first; fraction: its basin, the share of all inits that converged "
            "to it;",
            f"     CI: an interval for each fraction, all of them right at once with probability >= {_pct(level)} "
            "(mass-weighted",
            "     binomial test inversion, docs/statistics.md: valid whatever the number of optima; summary.json "
            "also keeps",
            "     each fraction's own 95% Wilson interval, ci95); count: the inits in its basin; energy: E(w*) "
            "(Eq. 3);",
            "     gap: eigengap lambda1 - lambda2 of A(w*); stat: stationarity, the certificate's own measure after "
            "the float64",
            "     refinement: off kinks ||P^perp grad E|| / ||grad E||, on kinks the KKT residual (relative to "
            "lambda1);",
            "     kink: the ReLU hyperplanes w*^T x_i = 0 it sits on; certificate: the test behind stable (smooth: "
            "the flow's",
            "     Jacobian, Eq. 7; kink-kkt: the same on the kink ridge plus the multipliers; none: not certified);",
            "     stable: certified stable; LME: top eigenvector of A(w*) with a distinct eigenvalue (Def. 3); "
            "pattern: the",
            "     planted u_m nearest w*; cos: their cosine (|cos| for odd or even activations); -: does not apply."]


def statistics_lines(s: dict) -> list:
    """The summary's statistics in words a newcomer reads correctly (docs/statistics.md): what cannot have
    been missed, how many optima there likely are, and what a stopping rule did."""
    st, n, found = s.get("statistics"), s["n_init"], len(s["optima"])
    if st is None:
        return []
    r = st["richness"]
    more = r["chao1"] - r["observed"]
    bound = f"{round_up(100 * st['miss_bound']):g}%"
    lines = [f"{st['miss_phrase']}: any optimum not in this table has a basin < {bound} of the inits (wrong only "
             f"with probability <= {100 * (1 - st['confidence']):g}% over the random inits; smaller basins may exist)",
             f"number of optima, estimated (Chao1, from the {r['f1']} optima found once and {r['f2']} twice): "
             f"{r['chao1']:.1f}, {100 * r['confidence']:g}% interval [{float(r['low']):.1f}, {float(r['high']):.1f}]: "
             + (f"none beyond the {found} found" if more < 0.05 else
                f"about {more:.1f} beyond the {found} found, each with a basin < {bound}")]
    plan = st.get("stop")
    if plan is not None:
        what = " and ".join(w for w in (
            None if plan["target_miss"] is None else f"--target_miss={plan['target_miss']:g} (at least "
                                                      f"{plan['n_min']} inits, fixed before the run)",
            None if plan["target_halfwidth"] is None else f"--target_halfwidth={plan['target_halfwidth']:g} "
                                                           f"(largest half-width {st['max_halfwidth']:.4f})") if w)
        met = plan["miss_met"] and plan["halfwidth_met"]
        cap = s["config"]["n_init"]
        lines.append(f"{what}: " + (f"met after {n} of at most {cap} inits" if met else f"not met in {n} inits"))
        if plan["data_dependent"]:
            lines.append(f"     the stop depended on the counts: intervals at {_pct(st['interval_confidence'])} each of "
                         f"{plan['checkpoints']} checkpoints ({_pct(plan['confidence'])} together), and the miss "
                         f"claim is that of the first checkpoint ({plan['first_checkpoint']} inits)")
    return lines


def table(s: dict) -> str:
    """The stdout summary of a basins run: one row per optimum holding >= 0.1% of the inits (at most
    the 30 largest), one line for the rest (summary.json keeps every row), the key of the columns
    (:func:`table_key`), the statistics in words (:func:`statistics_lines`), then the status counts.
    ``kink`` is the number of ReLU hyperplanes the optimum sits on; ``certificate`` the test that
    established ``stable`` (:func:`ccdyn.one_layer.certify.assess_many`). The intervals shown are the
    simultaneous ones (``ci_simultaneous``); a summary written before them shows its Wilson ``ci95``."""
    rows = s["optima"]
    st = s.get("statistics")
    level = 0.95 if st is None else st["interval_confidence"]
    shown = [r for r in rows if r["fraction"] >= TABLE_MIN_FRACTION][:TABLE_MAX_ROWS]
    ci = lambda r: r.get("ci_simultaneous", r["ci95"])
    body = [[r["optimum"], f"{r['fraction']:.4f}", f"[{ci(r)[0]:.4f}, {ci(r)[1]:.4f}]", r["count"],
             r["energy"], r["eigengap"], f"{r.get('stationarity', r['residual']):.1e}", r.get("kink_rank", "-"),
             r.get("certificate", "-"), r["stable"], r["is_lme"],
             "-" if r["pattern"] is None else f"u{r['pattern']}",
             "-" if r["overlap"] is None else f"{r['overlap']:.4f}"] for r in shown]
    text = report.format_table(["optimum", "fraction", f"{_pct(level)} CI (all)" if st else "95% CI", "count",
                                "energy", "gap", "stat", "kink", "certificate", "stable", "LME", "pattern", "cos"],
                               body)
    rest = rows[len(shown):]  # rows are largest first, so the shown ones are a prefix
    if rest:
        text += (f"\n... and {len(rest)} more rows (optima or uncertified endpoint clusters) holding "
                 f"{sum(r['count'] for r in rest) / s['n_init']:.4f} of the inits ({sum(r['stable'] for r in rest)} "
                 f"of them stable), each < {TABLE_MIN_FRACTION:g} or beyond the {TABLE_MAX_ROWS} largest: "
                 "see summary.json")
    counts = ", ".join(f"{st_.text} {s.get('n_' + st_.key, 0)}" for st_ in engine.FINAL_STATUSES)
    hints = [f"warning: {s['n_' + st_.key]} inits ended in {st_.text}: {st_.hint}" for st_ in engine.FINAL_STATUSES
             if st_.hint and s.get("n_" + st_.key, 0)]
    target = s["config"].get("target_unseen")
    if target is not None:
        hints.insert(0, f"--target_unseen={target:g}: " + (
            f"met after {s['n_init']} of at most {s['config']['n_init']} inits" if s["n_init"] < s["config"]["n_init"]
            else f"ran all --n_init={s['n_init']} inits"))
    if "sizing" in s:
        z = s["sizing"]
        how = f"chosen by the rule for {z['backend']} ({', '.join(z['auto'])})" if z["auto"] else "given"
        hints.append(f"tile {z['tile']}, chunk_size {z['chunk_size']} on {z['n_devices']} x {z['device_kind']} "
                     f"({z['device_memory_gib']} GiB): {how}")
    return "\n".join([text, *(table_key(level) if st else []), "", *statistics_lines(s), f"inits {s['n_init']}: {counts}",
                      f"optima {sum(r.get('certificate') != 'none' for r in rows)}, stable {s['n_stable_optima']} (certificate smooth "
                      f"{s.get('n_certified_smooth', '-')}, kink-kkt {s.get('n_certified_kink', '-')}), basin mass on planted "
                      f"patterns (stable, cos >= 0.9): {s['basin_mass_on_patterns']:.4f}", *uncertified_lines(rows), *hints])


def uncertified_lines(rows) -> list[str]:
    """One line saying how many endpoint clusters no test certified (``certificate`` none) and why: they are
    listed with the optima but are not claimed to be optima (their reasons: ``certificate_note``)."""
    none = [r for r in rows if r.get("certificate") == "none"]
    if not none:
        return []
    reasons = sorted({str(r.get("certificate_note") or "no reason recorded").split(" (")[0] for r in none})
    return [f"not certified: {len(none)} more of the table's {len(rows)} rows (holding {sum(r['count'] for r in none)} "
            f"inits) are endpoint clusters that no test certified, not counted as optima: {'; '.join(reasons)}"]



_COMPARED = (Status.CONVERGED, Status.NOT_CONVERGED, Status.CYCLING, Status.DEAD, Status.NONFINITE, Status.OVERFLOW,
             Status.UNDERFLOW)
_COMPARED += tuple(st for st in engine.FINAL_STATUSES if st not in _COMPARED)  # the sliding flow's
# the statistics of docs/statistics.md: no basin >= miss_bound missed (95%), the simultaneous intervals' level and
# largest half-width, Chao1 with its interval, and the stop rule's targets and whether they were met
STATISTICS_COLUMNS = ("miss_bound", "interval_level", "max_halfwidth", "chao1", "chao1_low", "chao1_high", "stop_rule",
                      "stop_met")
COMPARISON_COLUMNS = ("run", "act", "alpha", "tau", "method", "data", "n_init", "optima", "stable_optima",
                      "stable_smooth", "stable_on_kink", "mass_on_patterns") + tuple(s.key for s in _COMPARED) + (
                      "endpoint_clusters", "certified_smooth", "certified_kink", "analyze_s", "total_s") + STATISTICS_COLUMNS


def comparison_rows(named_summaries) -> list:
    """One row per basins run (``[(name, summary.json dict)]``) under :data:`COMPARISON_COLUMNS` ("-" where
    an older summary lacks a field)."""
    rows = []
    for name, s in named_summaries:
        c = s["config"]
        rows.append([name, c["act"], c["alpha"], c["tau"] if c["alpha"] == "gaussian" else "-",
                     c["dynamics"]["method"], describe(c["data"]),
                     s["n_init"], s["n_optima"], s["n_stable_optima"],
                     sum(o["stable"] and o["smooth"] for o in s["optima"]),
                     sum(o["stable"] and not o["smooth"] for o in s["optima"]),
                     round(s["basin_mass_on_patterns"], 4)] + [s.get(f"n_{st.key}", 0) for st in _COMPARED]
                    + [s.get(k, "-") for k in ("n_endpoint_clusters", "n_certified_smooth", "n_certified_kink")]
                    + [round(s["timings_s"][k], 1) if k in s.get("timings_s", {}) else "-" for k in ("analyze", "total")]
                    + _statistics_cells(s))
    return rows


def _statistics_cells(s: dict) -> list:
    """The :data:`STATISTICS_COLUMNS` cells of one summary ("-" for a summary written before them)."""
    st = s.get("statistics")
    if st is None:
        return ["-"] * len(STATISTICS_COLUMNS)
    r, plan, c = st["richness"], st.get("stop"), s["config"]
    if plan is not None:
        rule = " ".join(f"{k}={plan[k]:g}" for k in ("target_miss", "target_halfwidth") if plan[k] is not None)
        met = plan["miss_met"] and plan["halfwidth_met"]
    elif c.get("target_unseen") is not None:
        rule, met = f"target_unseen={c['target_unseen']:g}", s["n_init"] < c["n_init"]
    else:
        rule, met = "-", "-"
    half = "-" if st["max_halfwidth"] is None else round(st["max_halfwidth"], 5)
    return [float(f"{st['miss_bound']:.3g}"), float(f"{st['interval_confidence']:.6g}"), half, round(r["chao1"], 2),
            round(float(r["low"]), 2), round(float(r["high"]), 2), rule, met]  # "inf" when no optimum was found
