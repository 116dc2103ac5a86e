"""The stopping rules of a basins run (``--target_unseen``, ``--target_miss``, ``--target_halfwidth``;
docs/statistics.md section 5): what a rule checks and may claim (:func:`stop_plan`), the engine's stop
callable (:class:`StopRule`, :func:`stop_rule`), and the clustering it builds chunk by chunk so that each
init is clustered once (:class:`IncrementalClusters`)."""

from __future__ import annotations

import numpy as np

from ccdyn import parallel
from ccdyn.one_layer.basins.analysis import cluster, greedy_labels
from ccdyn.one_layer.basins.config import BasinsConfig
from ccdyn.one_layer.engine import Status
from ccdyn.stats import inits_for_miss, miss_bound, simultaneous_intervals, unseen_mass, wilson_interval

__all__ = ["precise_enough", "IncrementalClusters", "stop_plan", "StopRule", "stop_rule"]


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
                d = np.linalg.norm(block - self.seeds[None], axis=-1)  # as odd_distance computes it
                if self.odd:
                    d = np.minimum(d, np.linalg.norm(block + self.seeds[None], axis=-1))
                within = d <= self.tol
                hit = np.flatnonzero(within.any(axis=1))
                labels[lo + hit] = np.argmax(within[hit], axis=1)  # the first seed within tol
        rest = np.flatnonzero(labels < 0)
        k = self.seeds.shape[0]
        if rest.size:
            new = greedy_labels(W[rest], self.tol, self.odd)
            labels[rest] = k + new
            first = np.unique(new, return_index=True)[1]
            self.seeds = np.concatenate([self.seeds, W[rest[first]]])
        self.counts = np.bincount(labels, minlength=self.seeds.shape[0]) + np.pad(
            self.counts, (0, self.seeds.shape[0] - k))
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
        self.clusters: IncrementalClusters | None = None
        self.checks: list[tuple] = []  # (n, largest half-width) per chunk end checked

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
            return (unseen_mass(counts, n)["upper"] <= self.cfg.target_unseen
                    and bool(np.all(half <= self.cfg.target_unseen)))
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
