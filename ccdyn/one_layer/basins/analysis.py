"""The analysis of a basins run's endpoints: the converged endpoints clustered into optima
(:func:`cluster`), each optimum refined in float64 (:func:`refine`) and certified with its basin fraction
(:func:`describe_optima`), duplicates merged, and every init labelled by its optimum (:func:`analyze`)."""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import certify, engine, kinks
from ccdyn.one_layer.engine import Dynamics, Status
from ccdyn.pairwise import Pairwise
from ccdyn.stats import wilson_interval

__all__ = ["cluster", "greedy_labels", "refine", "describe_optima", "merge_duplicates", "basin_mass_on_patterns",
           "analyze", "ANALYSIS_CHUNK", "KINK_MARGIN"]


def greedy_labels(W: np.ndarray, tol: float, odd: bool) -> np.ndarray:
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
    found: list[np.ndarray] = []
    for i in range(n):
        if labels[i] >= 0:
            continue
        free = np.flatnonzero(labels < 0)
        near = free[_odd_distance(W[free], W[i], odd) <= tol]
        labels[near] = len(found)
        members = W[near]
        if odd:
            members = members * np.sign(members @ W[i])[:, None]
        c = members.mean(axis=0)
        found.append(c / np.linalg.norm(c))
    centers = np.asarray(found).reshape(-1, W.shape[1])
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
    for _lo, hi, rows in _chunk_rows(k):
        out.append(jax.device_get(fn(W[rows])))
        if log is not None:
            log(f"  analysis: {what} {hi}/{k} ({time.time() - t0:.1f} s)")
    return {key: np.concatenate([o[key] for o in out])[:k] for key in out[0]}


def refine(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, centers, *,
           tol: float = 1e-12, max_steps: int = 20000, log=None) -> dict:
    """Refines each cluster center in float64.

    With a kinked activation (ReLU, leaky ReLU) and the power method (or auto, when no center lies within
    ON_KINK of a kink hyperplane), first by power iteration down to ``tol``: when every refined point converged
    clear of the kinks (:func:`_clear_of_kinks`) it is a smooth fixed point and ``kink`` is None (the main job
    then never compiles the kink path). Otherwise (and for the flows) by the exact active-set iteration of
    :func:`ccdyn.one_layer.kinks.refine` (a flow endpoint pinned on a kink ridge short of the maximum
    is moved to it); ``kink`` then holds that function's per-center output. Otherwise by continuing
    the dynamics down to ``tol`` (``kink`` is None). ``status`` is :class:`Status` CONVERGED or not.
    """
    centers = np.asarray(centers, np.float64)
    fine = dataclasses.replace(dyn, tol=tol, max_steps=max_steps)
    if kinks.has_kinks(act):
        # the main job: its optima are usually smooth; then skip compiling the kink path. Under auto a center
        # within ON_KINK of a kink hyperplane was put there by the sliding flow: power iteration would circle it
        # for all max_steps (with Gaussian alpha, O(n^2) each: 25 s of a 64-init run), so go to the kink path
        if dyn.method == "power" or (dyn.method == "auto" and np.all(_kink_distance(ds64, centers) > ON_KINK)):
            out = engine.converge(ds64, act, pw, dataclasses.replace(fine, method="power"),
                                  jnp.asarray(centers, ds64.x.dtype))
            if _clear_of_kinks(ds64, out, KINK_MARGIN):
                return {**out, "kink": None}
        ref = _chunks(lambda W: kinks.refine(ds64, act, pw, W), centers, log, "refined")
        ok = ref["status"] == kinks.RefineStatus.CONVERGED
        return {"w": ref["w"], "status": np.where(ok, Status.CONVERGED, Status.NOT_CONVERGED), "kink": ref}
    out = engine.converge(ds64, act, pw, fine, jnp.asarray(centers, ds64.x.dtype))
    return {**out, "kink": None}


KINK_MARGIN = 1e-6  # power iteration's refined optima: every view this many radians off its hyperplane = smooth
ON_KINK = 1e-4  # auto's cluster centers this close to a kink hyperplane (radians) go straight to the kink refinement
#                 (the refinement's own candidate window, kinks.refine's cand_tol)


def _kink_distance(ds64: Dataset, W) -> np.ndarray:
    """(k,) the angle (radians, as |w^T x| / ||x||) from each unit row w of W to its nearest view's hyperplane."""
    x = np.asarray(ds64.views()[0]).reshape(-1, ds64.dim)
    norm = np.linalg.norm(x, axis=1)
    return np.min(np.abs(np.asarray(W) @ x[norm > 0].T) / norm[norm > 0], axis=1)


def _clear_of_kinks(ds64: Dataset, out: dict, margin: float) -> bool:
    """Every refined point converged and lies more than ``margin`` radians from every view's hyperplane:
    A(w) is constant around it (Lemma 3), so the smooth certificate is exact and no kink refinement is needed."""
    return bool(np.all(out["status"] == Status.CONVERGED) and np.all(_kink_distance(ds64, out["w"]) > margin))


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


def basin_mass_on_patterns(rows: list, min_overlap: float = 0.9, *, planted: bool = True) -> float | None:
    """Total basin fraction of stable optima whose best planted pattern has overlap >= min_overlap; None when
    the data has no planted patterns (``planted`` False: a user's file without ``patterns``), where no share
    of the basins can be on them."""
    if not planted:
        return None
    return float(sum(r["fraction"] for r in rows
                     if r["stable"] and r["overlap"] is not None and r["overlap"] >= min_overlap))


def analyze(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, result: dict, *,
            cluster_tol: float, log=None) -> dict:
    """Clusters the converged endpoints, refines and certifies each optimum, labels every init.

    Args:
      ds64: the dataset in float64 (refinement and certificates are always float64).
      result: output of :func:`ccdyn.one_layer.engine.collect` (w, status, steps, residual for every init).
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
            "planted": ds64.patterns is not None,
            "n_clusters": n_clusters}
