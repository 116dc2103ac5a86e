"""Optima under a group augmentation (App. B.5): shift orbits, equal energies, equal basins.

With views x = S^s x0 for the whole cyclic group Z_d (:func:`ccdyn.data.shift_views`), the
view-averaged output b(w|x0) and the energy satisfy E_alpha(S w) = E_alpha(w) (Eq. 107-108), and the
ascent field is equivariant, u(S w) = S u(w). So every optimum w comes with its orbit
{S^s w : s = 0..d-1} of optima of equal energy, and since the random inits are rotation invariant,
with equal basins. The orbit has d / |stab(w)| members, stab(w) = {s : S^s w = w} (e.g. 2 members for
the alternating signal (1, -1, 1, ...)).

For a sign-symmetric activation (odd or even h: E(-w) = E(w), :attr:`ccdyn.activations.Activation.sign_symmetric`)
w and -w are one optimum and basins keeps one representative of each pair, of either sign; pass
``sign_symmetric=True`` so that S^s w and -S^s w both count as the shift s, and the orbit has
d / |{s : S^s w = +-w}| members.

These functions take the optima and basin counts of :func:`ccdyn.one_layer.basins.analyze` and check that
structure: which optima are shifts of each other, whether each orbit is complete, how much the
energies differ inside an orbit, and whether the basin counts inside an orbit are compatible with
equal probabilities (overlapping 95% Wilson intervals; Pearson's chi-square test).
"""

from __future__ import annotations

import numpy as np

from ccdyn.stats import covering_intervals, equal_counts_pvalue, intervals_overlap

__all__ = ["cyclic_shifts", "shift_stabilizer", "shift_orbits", "orbit_summary"]


def cyclic_shifts(w) -> np.ndarray:
    """All d cyclic shifts of a signal w (d,): row s is S^s w = np.roll(w, s), (d, d)."""
    w = np.asarray(w)
    return np.stack([np.roll(w, s) for s in range(w.shape[-1])])


def _distance(a, b, sign_symmetric: bool):
    """||a - b|| along the last axis, or min(||a - b||, ||a + b||) when w and -w are one optimum."""
    d = np.linalg.norm(a - b, axis=-1)
    return np.minimum(d, np.linalg.norm(a + b, axis=-1)) if sign_symmetric else d


def shift_stabilizer(w, tol: float, sign_symmetric: bool = False) -> int:
    """|stab(w)|: the number of shifts s in 0..d-1 with ||S^s w - w|| <= tol (always >= 1); with
    ``sign_symmetric``, those with S^s w = +-w."""
    return int(np.sum(_distance(cyclic_shifts(w), np.asarray(w)[None], sign_symmetric) <= tol))


def shift_orbits(optima, tol: float, sign_symmetric: bool = False) -> np.ndarray:
    """Groups optima (k, d) into shift orbits: j joins i's orbit when ||S^s w_i - w_j|| <= tol for some s
    (or ||S^s w_i + w_j|| <= tol, with ``sign_symmetric``: w and -w one optimum).

    Returns:
      labels (k,): orbit index per optimum, orbits numbered in order of their first member.
    """
    w = np.asarray(optima, np.float64)
    labels = np.full((w.shape[0],), -1, np.int64)
    n = 0
    for i in range(w.shape[0]):
        if labels[i] >= 0:
            continue
        dist = np.min(_distance(w[:, None, :], cyclic_shifts(w[i])[None], sign_symmetric), axis=1)
        labels[(dist <= tol) & (labels < 0)] = n
        n += 1
    return labels


def orbit_summary(rows: list, optima, n_init: int, tol: float, sign_symmetric: bool = False) -> list:
    """One dict per shift orbit of the optima (largest basin mass first).

    Args:
      rows: per-optimum dicts of :func:`ccdyn.one_layer.basins.analyze` (``count``, ``energy``, ``stable``).
      optima: (k, d) the optima, in the order of ``rows``.
      n_init: number of inits (the denominator of the basin fractions).
      tol: distance under which two unit vectors are the same optimum (the clustering tolerance).
      sign_symmetric: w and -w are one optimum (the activation's ``sign_symmetric``, as in basins).

    Returns:
      dicts with ``members`` (optimum indices), ``size``, ``expected_size`` = d / |stab| of the first
      member, ``complete`` (size == expected_size), ``energy`` (mean), ``energy_spread`` (max - min)
      and ``relative_spread`` (over |energy|), ``all_stable``, ``counts``, ``fractions``, ``mass``,
      ``wilson_overlap`` (:func:`intervals_overlap`), ``covering`` (:func:`covering_intervals`) and
      ``chi2_pvalue`` (:func:`equal_counts_pvalue`).
    """
    w = np.asarray(optima, np.float64)
    labels = shift_orbits(w, tol, sign_symmetric)
    out = []
    for o in range(int(labels.max()) + 1 if labels.size else 0):
        members = np.flatnonzero(labels == o)
        counts = np.array([rows[i]["count"] for i in members])
        energies = np.array([rows[i]["energy"] for i in members])
        expected = w.shape[1] // shift_stabilizer(w[members[0]], tol, sign_symmetric)
        spread = float(energies.max() - energies.min())
        out.append({
            "members": members.tolist(), "size": int(members.size), "expected_size": int(expected),
            "complete": bool(members.size == expected), "energy": float(energies.mean()),
            "energy_spread": spread, "relative_spread": spread / max(abs(float(energies.mean())), 1e-300),
            "all_stable": bool(all(rows[i]["stable"] for i in members)), "counts": counts.tolist(),
            "fractions": (counts / n_init).tolist(), "mass": float(counts.sum() / n_init),
            "wilson_overlap": intervals_overlap(counts, n_init), "covering": covering_intervals(counts, n_init),
            "chi2_pvalue": equal_counts_pvalue(counts),
        })
    return sorted(out, key=lambda r: -r["mass"])
