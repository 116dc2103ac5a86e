"""The record behind ``results/theory/lemma5_general`` (``scripts/lemma5_general.py``): core Lemma 5 (Eq. 120)
for C >= 2 classes and M >= 1 filters per RF, the closed form against enumeration of the joint population
(:mod:`ccdyn.two_layer.lemma5_exact`). A frozen :class:`Lemma5Config` in, a plain dict of numbers out (no I/O).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn.two_layer import lemma5_exact as l5

__all__ = ["Lemma5Config", "run"]


@dataclasses.dataclass(frozen=True)
class Lemma5Config:
    shapes: tuple = ((2, 3, 1, 3, 4), (3, 3, 2, 3, 3), (4, 2, 3, 3, 4), (5, 3, 2, 2, 3), (3, 2, 4, 4, 5))  # C K M d n
    draws: int = 4  # populations and filters per shape
    seed: int = 0


def run(c: Lemma5Config = Lemma5Config()) -> dict:
    """Per shape: the largest |closed form - enumeration| relative to the largest entry, and the rank of the
    between-class term sum_c p_c (1 - p_c)^2 Delta(c) Delta(c)^T (the paper: at most C)."""
    rng = np.random.default_rng(c.seed)
    rows = []
    for C, K, M, d, n in c.shapes:
        rel, ranks = [], []
        for _ in range(c.draws):
            p, X, P = l5.population(rng, C, K, d, n)
            W = rng.normal(size=(K, M, d))
            V, between = l5.closed_form(p, X, P, W)
            E = l5.enumerated(p, X, P, W)
            rel.append(float(np.abs(V - E).max() / np.abs(E).max()))
            s = np.linalg.svd(between, compute_uv=False)
            ranks.append(int(np.sum(s > 1e-10 * s[0])))
        rows.append({"C": C, "K": K, "M": M, "d": d, "n": n, "points": C * n ** K, "max_rel_diff": max(rel),
                     "between_rank": sorted(set(ranks))})
    return {"config": dataclasses.asdict(c), "rows": rows}
