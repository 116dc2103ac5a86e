"""Where two basins touch: random probes that flip between two optima, their brackets bisected onto the
boundary, and the boundary points of each pair grouped into distinct regions, the seeds of the saddle
search (docs/saddles.md, "Which pairs" and "Seeds").

A probe is a uniform random point w and a point w' a small angle away; both are run to a stop by the basins
run's own dynamics and matched to the optima. When they reach two different optima a and b, the arc from w
to w' crosses the boundary between a basin of a and one of b (or of a third optimum c between them).
Bisection on that arc (each midpoint run to its optimum: a replaces the a end, b the b end, a third optimum
c replaces the b end, so the bracket then straddles the boundary of a and c) shrinks it by 2^n_bisect. The
boundary points of one pair are grouped by single linkage at ``region_angle``: each group is a distinct
region of the boundary (on the circle, the minimum of E between two neighbours on either arc), and its
point with the highest E is its seed (an index-1 saddle is the highest point of the boundary around it,
so the seed's E is a lower bound of that saddle's).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ccdyn.one_layer import engine

__all__ = ["match", "touching", "bisect", "regions"]


def match(W, optima, tol: float, odd: bool):
    """Index of the optimum within ``tol`` of each row of W (-1: none); ``odd``: -optimum matches too."""
    d = np.linalg.norm(W[:, None] - optima[None], axis=-1)
    if odd:
        d = np.minimum(d, np.linalg.norm(W[:, None] + optima[None], axis=-1))
    return np.where(d.min(axis=1) <= tol, d.argmin(axis=1), -1)


def _slerp_half(a, b):
    m = a + b
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _labels(ds, act, pw, dyn, W, opt, match_tol):
    ends = engine.converge(ds, act, pw, dyn, jnp.asarray(W, ds.x.dtype))
    return match(np.asarray(ends["w"], np.float64), opt, match_tol, act.odd)


def bisect(ds, act, pw, dyn, opt, lo, hi, lab, *, n_steps: int, match_tol: float) -> tuple:
    """Bisects the brackets (lo, hi) (f, d) whose ends reach the optima ``lab`` (f, 2) (module docstring):
    returns the new lo, hi and labels. A midpoint that reaches no optimum leaves its bracket as it is."""
    lo, hi, lab = np.array(lo, np.float64), np.array(hi, np.float64), np.array(lab)
    for _ in range(int(n_steps)):
        if not len(lo):
            break
        mid = _slerp_half(lo, hi)
        m = _labels(ds, act, pw, dyn, mid, opt, match_tol)
        to_lo = m == lab[:, 0]
        to_hi = (m >= 0) & ~to_lo  # b, or a third optimum: the bracket (lo, mid) straddles a's boundary with it
        lo = np.where(to_lo[:, None], mid, lo)
        hi = np.where(to_hi[:, None], mid, hi)
        lab[:, 1] = np.where(to_hi, m, lab[:, 1])
    return lo, hi, lab


def touching(ds, act, pw, dyn, opt, *, n_probe: int, angle: float, match_tol: float, seed: int,
             n_bisect: int = 0) -> dict:
    """Which optima's basins touch, by probes (module docstring): ``n_probe`` uniform random inits and, for
    each, a point ``angle`` radians away along a random tangent, run to a stop by the run's own dynamics
    (one batch) and matched to the optima ``opt`` (k, d); the flipping brackets bisected ``n_bisect`` times.
    Returns ``counts`` (k, k) symmetric (brackets between i and j after the bisection), ``n_flips``,
    ``n_unmatched`` (probe ends that reach no optimum within ``match_tol``), ``brackets`` (``lo``, ``hi``
    (f, d) float64, ``labels`` (f, 2): lo reaches labels[:, 0], hi labels[:, 1]) and the settings. ``ds`` in
    float32 is enough (the ends are only matched to the optima, as the basins run's float32 dynamics do)."""
    rng = np.random.default_rng(seed)
    d = opt.shape[1]
    w = rng.standard_normal((n_probe, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    u = rng.standard_normal((n_probe, d))
    u -= np.sum(u * w, axis=1, keepdims=True) * w
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    w2 = np.cos(angle) * w + np.sin(angle) * u
    lab = _labels(ds, act, pw, dyn, np.concatenate([w, w2]), opt, match_tol).reshape(2, n_probe)
    flip = (lab[0] >= 0) & (lab[1] >= 0) & (lab[0] != lab[1])
    lo, hi, pair = bisect(ds, act, pw, dyn, opt, w[flip], w2[flip], lab[:, flip].T, n_steps=n_bisect,
                          match_tol=match_tol)
    k = opt.shape[0]
    counts = np.zeros((k, k), np.int64)
    np.add.at(counts, (pair[:, 0], pair[:, 1]), 1)
    counts = counts + counts.T
    return {"counts": counts, "n_probe": int(n_probe), "angle": float(angle), "seed": int(seed),
            "n_bisect": int(n_bisect), "n_flips": int(flip.sum()), "n_unmatched": int(np.sum(lab < 0)),
            "brackets": {"lo": lo, "hi": hi, "labels": pair}}


def _groups(points, tol):
    """Single-linkage groups of the rows of ``points`` (unit) at angle <= tol: a list of index arrays."""
    n = len(points)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ang = 2 * np.arctan2(np.linalg.norm(points[:, None] - points[None], axis=-1),
                         np.linalg.norm(points[:, None] + points[None], axis=-1))
    for i, j in zip(*np.nonzero(np.triu(ang <= tol, 1))):
        parent[find(j)] = find(i)
    roots = [find(i) for i in range(n)]
    return [np.flatnonzero(np.array(roots) == r) for r in dict.fromkeys(roots)]


def regions(brackets: dict, energy_fn, *, region_angle: float, max_seeds: int) -> tuple:
    """The distinct boundary regions of every pair (module docstring), seeds first by their E (highest
    first), at most ``max_seeds`` seeds per pair. ``energy_fn`` (k, d) -> (k,): the landscape's energy.
    Returns (seeds, per_pair): seeds [{"pair": (i, j), "region": r (1-based), "lo" (in i's basin), "hi" (in
    j's), "point", "energy", "n_probes", "spread" (largest angle of the region's points from its seed)}] and
    per_pair {(i, j): number of regions}."""
    lo, hi, lab = (np.asarray(brackets[k]) for k in ("lo", "hi", "labels"))
    if not len(lo):
        return [], {}
    swap = lab[:, 0] > lab[:, 1]
    lo, hi = np.where(swap[:, None], hi, lo), np.where(swap[:, None], lo, hi)
    lab = np.sort(lab, axis=1)
    mid = _slerp_half(lo, hi)
    e = np.asarray(energy_fn(mid), np.float64)
    seeds, per_pair = [], {}
    for key in sorted({tuple(map(int, r)) for r in lab}):
        idx = np.flatnonzero((lab[:, 0] == key[0]) & (lab[:, 1] == key[1]))
        found = []
        for g in _groups(mid[idx], region_angle):
            best = idx[g[np.argmax(e[idx[g]])]]
            spread = float(np.max(2 * np.arctan2(np.linalg.norm(mid[idx[g]] - mid[best], axis=1),
                                                 np.linalg.norm(mid[idx[g]] + mid[best], axis=1))))
            found.append({"pair": key, "lo": lo[best], "hi": hi[best], "point": mid[best], "energy": float(e[best]),
                          "n_probes": int(len(g)), "spread": spread})
        found.sort(key=lambda s: -s["energy"])
        per_pair[key] = len(found)
        seeds += [dict(s, region=r + 1) for r, s in enumerate(found[:max_seeds])]
    return seeds, per_pair
