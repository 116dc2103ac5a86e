"""The largest margin inside the unit box over an affine family, by a dense primal simplex (fixed shapes,
on the device): the linear program behind the kink multipliers of :mod:`ccdyn.one_layer.kinks` (with
dependent active views the multipliers are not unique; the one farthest inside [0, 1] is taken)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["SIMPLEX_TOL", "pinv_psd", "max_margin_lp"]

SIMPLEX_TOL = 1e-12


def pinv_psd(m, rank_tol):
    """The pseudo-inverse of the PSD matrix m (d, d): eigenvalues at most rank_tol of the largest dropped."""
    ev, vec = jnp.linalg.eigh(0.5 * (m + m.T))
    keep = ev > rank_tol * jnp.maximum(jnp.max(ev), jnp.finfo(m.dtype).tiny)
    return (vec * jnp.where(keep, 1.0 / jnp.where(keep, ev, 1.0), 0.0)) @ vec.T


def max_margin_lp(lam0, null, msk):
    """max m over y subject to m <= (lam0 + N y)_i <= 1 - m for the unmasked i: the dense primal simplex
    with Bland's rule (no cycling on the degenerate vertices these problems have), fixed shapes.

    Standard form with m = m0 + m' (m0 the margin of lam0, so the slack basis is feasible), y = y+ - y-:
    rows  m' - N_i y + s_i = lam0_i - m0  and  m' + N_i y + s'_i = 1 - lam0_i - m0  (2k rows, 4k + 1
    columns besides the slacks' identity). Returns (y (k,), whether it stopped at an optimum)."""
    k = lam0.shape[0]
    dt = lam0.dtype
    lam0 = jnp.where(msk, lam0, 0.5)  # padded rows: never binding below 1/2, the largest margin there is
    null = null * msk[:, None]
    m0 = jnp.min(jnp.minimum(lam0, 1.0 - lam0))
    one = jnp.ones((k, 1), dt)
    a = jnp.block([[-null, null, one], [null, -null, one]])  # (2k, 2k + 1): y+, y-, m'
    tab = jnp.concatenate([a, jnp.eye(2 * k, dtype=dt), jnp.concatenate([lam0 - m0, 1.0 - lam0 - m0])[:, None]],
                          axis=1)
    ncol = tab.shape[1] - 1
    cost = jnp.zeros((ncol,), dt).at[2 * k].set(1.0)  # reduced costs (maximize m')
    basis = jnp.arange(ncol - 2 * k, ncol)
    tol = SIMPLEX_TOL * (1.0 + jnp.max(jnp.abs(null)))

    def cond(st):
        _, r, _, it, done = st
        return ~done & (it < 8 * (ncol + 2 * k))

    def body(st):
        tab, r, basis, it, _ = st
        enter = jnp.argmax(r > tol)  # Bland: the first improving column
        col = tab[:, enter]
        ok = col > tol
        ratio = jnp.where(ok, tab[:, -1] / jnp.where(ok, col, 1.0), jnp.inf)
        best = jnp.min(ratio)
        # Bland's tie-break: of the rows at the least ratio, the one whose basic variable has the least index
        tie = ok & (ratio <= best + tol * (1.0 + jnp.abs(best)))
        row = jnp.argmin(jnp.where(tie, basis, ncol + 1))
        prow = tab[row] / tab[row, enter]
        tab = tab - jnp.outer(tab[:, enter], prow)
        tab = tab.at[row].set(prow)
        r = r - r[enter] * prow[:-1]
        basis = basis.at[row].set(enter)
        return tab, r, basis, it + 1, ~jnp.any(r > tol) | ~jnp.any(ok)

    st = (tab, cost, basis, jnp.int32(0), ~jnp.any(cost > tol))
    tab, r, basis, it, done = jax.lax.while_loop(cond, body, st)
    sol = jnp.zeros((ncol,), dt).at[basis].set(tab[:, -1])
    y = sol[:k] - sol[k:2 * k]
    return y, done
