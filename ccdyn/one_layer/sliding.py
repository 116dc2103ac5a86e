"""ReLU kinks of the 1-layer energy: the active set, the one-sided fields, the Clarke box and its
minimum-norm element, and the Filippov sliding field on the kinks' intersection (docs/flow.md).

For ReLU (or leaky ReLU) E(w) = 1/2 C_alpha[h(w^T x)] (Eq. 6) is piecewise quadratic on the sphere: on
an activation region R, E = 1/2 w^T A_R w and the ascent field u = A(w) w (Lemma 3) jumps across every
hyperplane w^T x_i = 0 (x_i: a data vector, each augmented view its own). At a w with an *active set*
S (the views with w^T x_i = 0), the fields of the 2^|S| adjacent regions are

    u_g(w) = u_0(w) + sum_{i in S} g_i c_i(w) x_i,   g in {0, 1}^S,

with u_0 the field with every active gate at h'(0-) and c_i = (h'(0+) - h'(0-)) p_view(i) (L_alpha s)_i,
where s = p h(w^T x) are the (view-averaged) features and L_alpha the population Laplacian
(:func:`ccdyn.covariance.laplacian_apply`): point i's feature is 0 on both sides, so its gate only
scales its own term of the gated input (Eq. 6). alpha (uniform, or Gaussian from h(w^T x_0), Cor. 2)
is continuous across the kinks. The Clarke generalized gradient is therefore the box

    dE(w) = { u_0 + X_S diag(c) lam : lam in [0, 1]^S },

and on the sphere (x_i is orthogonal to w for i in S) P_w^perp dE(w) = { t_0 + X_S diag(c) lam } with
t_0 = P_w^perp u_0. tests/one_layer/test_sliding.py checks the one-sided fields against each adjacent
region's field (autodiff of A_R, and one-sided limits) and the minimum-norm element against a dense
grid of the box.

- :func:`active_set` (batched over the rows of W): up to ``m`` views within ``delta`` radians of their
  hyperplanes, their vectors, c_i, u_0 and t_0 (this is the helper that kink
  certificates need: the active set, the one-sided coefficients and the box).
- :func:`min_norm`: the minimum-norm element of the box (least squares in lam in [0, 1]^m: projected
  coordinate descent, then the face it found solved exactly).
- The sliding field on a set S is P_V P_w^perp u(w), V = span{x_i : i in S}^perp (:func:`basis`,
  :func:`project`): every one-sided field has the same projection on V, and the Filippov convex
  combination tangent to all the hyperplanes of S is exactly this projection. A hyperplane i is *slid
  on* when its multiplier lies strictly inside (0, 1) and c_i < 0 (the fields on both sides point
  towards it: a ridge); at 0 or 1 the field leaves it on one side (released).

Nothing here prints or touches files.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["MAX_ACTIVE", "WIDE_ACTIVE", "STAGNANT", "max_active", "wide_active", "flat_views", "gated_field",
           "ActiveSet", "active_set", "MinNorm", "min_norm", "analyse", "exit_field", "basis", "independent", "project",
           "gates"]

MAX_ACTIVE = 16  # the most views within delta of their hyperplanes analysed at once
WIDE_ACTIVE = 256  # the second, wider analysis (the engine's rows that had more than max_active views on kinks)
SWEEPS = 200  # coordinate-descent sweeps of min_norm
STAGNANT = 8  # the wide descent ends a row whose sweep moved v by <= STAGNANT eps ||t0|| (float resolution)
_RANK_TOL = 1e-8  # a data vector within this relative distance of the span of the others adds no constraint


def max_active(dim: int) -> int:
    """Active sets are padded to min(2 (dim - 1), MAX_ACTIVE) views (at least 2). On S^{d-1}, d - 1
    independent hyperplanes already pin w to a point, but active views can be dependent: on the latent
    summation data (Eq. 9) x = U b, b in {0, 1}^M, a w orthogonal to k latent vectors makes the 2^k - 1
    views with b supported on them active at once (k = 2: x_a, x_b and x_a + x_b), so the padding is
    larger."""
    return max(2, min(2 * (dim - 1), MAX_ACTIVE))


def wide_active(n_views: int, dim: int) -> int:
    """The padding of the wider second analysis: every view, at most WIDE_ACTIVE (and at least
    :func:`max_active`). On the latent data a w nearly orthogonal to k latent vectors brings each view on
    a kink with its 2^k lattice translates (docs/flow.md, "More views on the kinks than the padding")."""
    return max(max_active(dim), min(int(n_views), WIDE_ACTIVE))


def gates(act: Activation):
    """(h'(0-), h'(0+)) of a kinked activation: (0, 1) for ReLU, (slope, 1) for leaky ReLU."""
    if act.name not in ("relu", "leaky_relu"):
        raise ValueError(f"act={act.name!r} has no kink (only relu and leaky_relu do)")
    return (act.slope if act.name == "leaky_relu" else 0.0), 1.0


def flat_views(ds: Dataset):
    """(x (N, d), point (N,), p_view (N,)): every view of every support point (N = n V; without
    augmentation the points themselves), the support point it belongs to, and its view weight."""
    xv, pv = ds.views()
    n, v, d = xv.shape
    return xv.reshape(n * v, d), jnp.repeat(jnp.arange(n), v), pv.reshape(n * v)


def gated_field(ds: Dataset, act: Activation, ls, side):
    """The one-sided field sum_i g_i p_view(i) (L_alpha s)_point(i) x_i: the ascent field of the region with
    the given gates, continued to w (A(w) w off the kinks, where every gate is h'(w^T x_i)).

    ``ls`` (..., n): (L_alpha s) per support point at w (alpha held fixed or not: the caller's);
    ``side`` (..., N) bool over the flat views, the gate of each (True: h'(0+) = 1, False: h'(0-)). The one formula of
    the one-sided fields: the engine's kink analysis (:func:`active_set`, batched over rows) and the
    kink refinement and certificates (``kinks.one_sided_field``, one w) both use it."""
    off, on = gates(act)
    x, point, p_view = flat_views(ds)
    return (jnp.where(side, on, off) * p_view * ls[..., point]) @ x


class ActiveSet(NamedTuple):
    """The kinks at each row w of W (k rows, m = padded size); index -1 / mask False: padding."""

    views: jax.Array  # (k, m) int32: flat view index (into flat_views' x), in index order
    mask: jax.Array  # (k, m) bool: the view lies within delta radians of its hyperplane
    n_near: jax.Array  # (k,) int32: views within delta (more than m: the set was cut to m)
    angle: jax.Array  # (k, m) |w^T x_i| / ||x_i||
    x: jax.Array  # (k, m, d) the views' vectors (0 where masked)
    c: jax.Array  # (k, m) one-sided coefficients: u_g = u_0 + sum g_i c_i x_i (0 where masked)
    u0: jax.Array  # (k, d) the ascent with every active gate at h'(0-)
    t0: jax.Array  # (k, d) P_w^perp u0


def active_set(ds: Dataset, act: Activation, pw: Pairwise, W, *, delta, m: int) -> ActiveSet:
    """The active set and the one-sided decomposition of the field at every row w of W (k, d).

    Args:
      delta: a view is active when |w^T x_i| <= delta ||x_i|| (radians from its hyperplane; a scalar, or (k, 1): one
        per row).
      m: padded size (:func:`max_active`); the first m active views in index order are kept (``n_near``
        says how many were active).
    """
    off, on = gates(act)
    x, point, p_view = flat_views(ds)
    s, z, _ = dynamics.features(ds, lambda z: act.degree * act.h(z), W)
    ls = dynamics.laplacian_rows(ds, act, pw, W, s)  # (k, n)
    z = z.reshape(W.shape[0], -1)  # (k, N)
    weight = p_view[None] * ls[:, point]  # per view: u_g = (g weight) @ x
    norm = jnp.linalg.norm(x, axis=1)
    angle = jnp.where(norm > 0, jnp.abs(z) / jnp.where(norm > 0, norm, 1.0), jnp.inf)
    near = angle <= delta
    # the first m active views in index order
    if m <= MAX_ACTIVE:
        index = _first_true(near, m)
    else:  # the wide analysis (few rows): one sort instead of m unrolled picks; the same indices
        big = near.shape[1]
        first = jnp.sort(jnp.where(near, jnp.arange(big, dtype=jnp.int32)[None], big), axis=1)[:, :m]
        index = jnp.where(first < big, first, -1).astype(jnp.int32)
        if m > big:
            index = jnp.concatenate([index, jnp.full((index.shape[0], m - big), -1, jnp.int32)], axis=1)
    mask = index >= 0
    take = lambda a: jnp.take_along_axis(a, jnp.maximum(index, 0), axis=1)
    xs = jnp.where(mask[..., None], x[jnp.maximum(index, 0)], 0.0)
    wt = jnp.where(mask, take(weight), 0.0)
    rows = jnp.arange(W.shape[0])[:, None]
    chosen = jnp.zeros(near.shape, bool).at[rows, jnp.maximum(index, 0)].max(mask)  # the m views kept
    u0 = gated_field(ds, act, ls, (z > 0) & ~chosen)  # every kept view at h'(0-), the others at h'(w^T x)
    return ActiveSet(index, mask, jnp.sum(near, axis=1).astype(jnp.int32), jnp.where(mask, take(angle), jnp.inf), xs,
                     (on - off) * wt, u0, sphere.tangent(W, u0))


def _first_true(mask, m: int):
    """(k, m) int32: the indices of the first m True columns of each row of ``mask`` (k, N), in increasing
    order, -1 past the last. The columns are packed into 32-bit words (one pass over the mask), then each of
    the m picks finds a row's first non-zero word, takes its lowest set bit and clears it: m small passes over
    N / 32 words instead of m min-reductions over the N columns (on the digits' 1797 views, 64 rows, CPU:
    0.25 ms against 1.6 ms; a sort 2.4 ms, a cumsum and scatter 1.7 ms). Integer arithmetic only: the same indices
    as any other route (tests/one_layer/test_sliding.py checks them against numpy's)."""
    k, big = mask.shape
    n_words = -(-big // 32)
    bits = jnp.pad(mask, ((0, 0), (0, n_words * 32 - big))).reshape(k, n_words, 32)
    place = jnp.left_shift(jnp.uint32(1), jnp.arange(32, dtype=jnp.uint32))
    words = jnp.sum(jnp.where(bits, place, jnp.uint32(0)), axis=2, dtype=jnp.uint32)  # disjoint bits: sum = or
    slot = jnp.arange(n_words, dtype=jnp.int32)[None]
    cols: list[jax.Array] = []
    for _ in range(m):
        first = jnp.min(jnp.where(words != 0, slot, n_words), axis=1)  # n_words: no bit left
        word = jnp.take_along_axis(words, jnp.minimum(first, n_words - 1)[:, None], axis=1)[:, 0]
        low = word & (~word + jnp.uint32(1))  # the lowest set bit
        bit = jax.lax.population_count(low - jnp.uint32(1)).astype(jnp.int32)  # its position
        cols.append(jnp.where(first < n_words, first * 32 + bit, -1))
        words = jnp.where(slot == first[:, None], words ^ low[:, None], words)
    return jnp.stack(cols, axis=1)


class MinNorm(NamedTuple):
    lam: jax.Array  # (k, m) the multipliers (0 where masked)
    v: jax.Array  # (k, d) the minimum-norm element t_0 + sum lam_i b_i


def min_norm(t0, B, mask, sweeps: int = SWEEPS, accuracy: float = 0.0) -> MinNorm:
    """argmin ||t0 + sum_i lam_i B_i|| over lam in [0, 1]^m (lam_i = 0 where ``mask`` is False).

    t0 (k, d), B (k, m, d), mask (k, m). Projected coordinate descent on the convex quadratic
    1/2 lam^T G lam + lam^T r (G = B B^T, r = B t0; up to ``sweeps`` sweeps over the m coordinates (a
    ``fori_loop``: the unrolled sweep made the sliding flow's block compile 1.2x longer), each
    minimizing exactly over one coordinate and clipping to [0, 1], until no multiplier of the row moves
    by more than 4 eps: each row stops on its own, so its lam does not depend on the other rows), then a
    polish: the face it found
    (free where 0 < lam < 1, the others at their bound) is solved exactly from the normal equations and
    kept when it is feasible and no worse. The minimum-norm element v is unique; lam need not be when
    the B_i are dependent (e.g. views x_a, x_b and x_a + x_b all active), and then the descent's lam
    is kept. Above MAX_ACTIVE views (the engine's wider second analysis, a few rows) the descent runs on
    the residual v instead of the m x m Gram matrix and may stop once v is known to ``accuracy`` of its
    length (:func:`_min_norm_wide`; the narrow routine ignores ``accuracy``).
    """
    k, m = mask.shape
    if m > MAX_ACTIVE:
        return _min_norm_wide(t0, B, mask, sweeps, accuracy)
    G = jnp.sum(B[:, :, None, :] * B[:, None, :, :], axis=3)  # broadcasts: small batched dots are slow on CPU
    r = jnp.sum(B * t0[:, None, :], axis=2)
    diag = jnp.diagonal(G, axis1=1, axis2=2)
    live = mask & (diag > 0)
    inv = jnp.where(live, 1.0 / jnp.where(live, diag, 1.0), 0.0)

    tiny = 4 * jnp.finfo(t0.dtype).eps  # a sweep that moves no multiplier of a row by more than this: converged
    # a coordinate past the last live one of every row is a no-op (inv = 0: lam stays 0, exactly), so each sweep
    # stops there: the same arithmetic for the others (the active set fills its columns from the first)
    top = _past_last(live)

    def sweep(carry):
        n, lam, going = carry
        old = lam
        def coordinate(i, lam):
            col = lambda a: jax.lax.dynamic_index_in_dim(a, i, axis=1, keepdims=False)
            g = col(r) + jnp.sum(col(G) * lam, axis=1)
            return jax.lax.dynamic_update_index_in_dim(lam, jnp.clip(col(lam) - g * col(inv), 0.0, 1.0), i, axis=1)

        lam = jax.lax.fori_loop(0, top, coordinate, lam)
        lam = jnp.where(going[:, None], lam, old)  # a converged row stops: its lam depends on its row alone
        return n + 1, lam, going & (jnp.max(jnp.abs(lam - old), axis=1) > tiny)

    lam = jax.lax.while_loop(lambda c: (c[0] < sweeps) & jnp.any(c[2]), sweep,
                             (0, jnp.zeros_like(r), jnp.isfinite(r[:, 0]) | True))[1]  # (varying under shard_map)
    free = live & (lam > 0) & (lam < 1)
    fixed = jnp.where(live & ~free & (lam >= 1), 1.0, 0.0).astype(t0.dtype)
    scale = jnp.sqrt(jnp.where(live, diag, 1.0))
    M = jnp.where(free[:, :, None] & free[:, None, :], G / (scale[:, :, None] * scale[:, None, :]),
                  jnp.eye(m, dtype=t0.dtype))
    rhs = jnp.where(free, -(r + jnp.sum(G * fixed[:, None, :], axis=2)) / scale, 0.0)
    y, pivot = _solve_spd(M, rhs)
    exact = jnp.where(free, y / scale, fixed)
    objective = lambda lam: 2 * jnp.sum(lam * r, axis=1) + jnp.sum(lam[:, :, None] * G * lam[:, None, :], axis=(1, 2))
    better = ((pivot > _RANK_TOL) & jnp.all((exact >= 0) & (exact <= 1), axis=1)
              & (objective(exact) <= objective(lam) + 1e-12 * jnp.sum(t0 * t0, axis=1)))
    lam = jnp.where(live, jnp.where(better[:, None], exact, lam), 0.0)
    return MinNorm(lam, t0 + jnp.sum(lam[..., None] * B, axis=1))


def _past_last(mask):
    """One past the last True column of any row of ``mask`` (k, m): where a loop over the columns can stop."""
    return jnp.max(jnp.where(mask, jnp.arange(1, mask.shape[1] + 1, dtype=jnp.int32)[None], 0))


def _min_norm_wide(t0, B, mask, sweeps: int, accuracy: float) -> MinNorm:
    """:func:`min_norm` for many views (m > MAX_ACTIVE: the wider second analysis), the same projected
    coordinate descent written on the residual v = t0 + sum lam_i B_i: a coordinate step costs O(d), not
    O(m), and no (k, m, m) Gram matrix is formed; the coordinates run in a ``fori_loop`` (a program whose
    size does not grow with m). v is recomputed from lam at each sweep (no drift). No exact face polish:
    there the free views are mostly dependent (the lattice translates of docs/flow.md), their face system
    singular, and the polish would be discarded anyway.

    The free views being dependent, lam is not unique and the descent moves it along the null space of
    the B_i long after v has converged: on the default data's second-pass rows v is within 1e-6 of its
    limit after 10 sweeps (median; 79 at most) while lam still changes at 400. So besides the narrow
    routine's stop (no multiplier moved by more than 4 eps) a row stops

    - when its sweep moved v by at most STAGNANT eps ||t0|| in every coordinate (v at float resolution), or
    - when v is certified within ``accuracy`` ||v|| of the minimum-norm element v*: the Frank-Wolfe gap
      g = <v, v - z*> (z* the box's vertex minimizing <v, z>) bounds 1/2 ||v||^2 - 1/2 ||v*||^2 >= 1/2 ||v - v*||^2
      (v* is the projection of 0 on the convex box), so sqrt(2 g) <= accuracy ||v|| gives ||v - v*|| <=
      accuracy ||v||. With lam, g = sum_i lam_i p_i - min(0, p_i), p = B v: every term is >= 0 and measures how
      far lam_i is from the bound the sign of p_i asks for.

    Each rule reads its row alone, so a row's lam does not depend on the other rows."""
    k, m = mask.shape
    diag = jnp.sum(B * B, axis=2)
    live = mask & (diag > 0)
    inv = jnp.where(live, 1.0 / jnp.where(live, diag, 1.0), 0.0)
    eps = jnp.finfo(t0.dtype).eps
    tiny = 4 * eps
    still = STAGNANT * eps * jnp.linalg.norm(t0, axis=1)
    resid = lambda lam: t0 + jnp.einsum("km,kmd->kd", lam, B)

    def coordinate(i, carry):
        lam, v = carry
        b = jax.lax.dynamic_index_in_dim(B, i, axis=1, keepdims=False)  # (k, d)
        li = jax.lax.dynamic_index_in_dim(lam, i, axis=1, keepdims=False)
        new = jnp.clip(li - jnp.sum(b * v, axis=1) * jax.lax.dynamic_index_in_dim(inv, i, axis=1, keepdims=False),
                       0.0, 1.0)
        new = jnp.where(jax.lax.dynamic_index_in_dim(live, i, axis=1, keepdims=False), new, 0.0)
        return jax.lax.dynamic_update_index_in_dim(lam, new, i, axis=1), v + (new - li)[:, None] * b

    # the views past the last live one of every row are no-ops (lam stays 0 and v unchanged, exactly): each sweep
    # stops there (the same arithmetic for the others, and much less of it: most rows hold far fewer than m)
    top = _past_last(live)

    def sweep(carry):
        n, lam, going = carry
        v = resid(lam)
        new, v_new = jax.lax.fori_loop(0, top, coordinate, (lam, v))
        new = jnp.where(going[:, None], new, lam)  # a converged row stops: its lam depends on its row alone
        p = jnp.einsum("kmd,kd->km", B, v_new)
        gap = jnp.sum(jnp.where(live, new * p - jnp.minimum(p, 0.0), 0.0), axis=1)
        certified = 2 * gap <= (accuracy * jnp.linalg.norm(v_new, axis=1)) ** 2
        return n + 1, new, going & (jnp.max(jnp.abs(new - lam), axis=1) > tiny) & ~certified & (
            jnp.max(jnp.abs(v_new - v), axis=1) > still)

    lam = jax.lax.while_loop(lambda c: (c[0] < sweeps) & jnp.any(c[2]), sweep,
                             (0, jnp.zeros_like(diag), jnp.isfinite(diag[:, 0]) | True))[1]
    lam = jnp.where(live, lam, 0.0)
    return MinNorm(lam, resid(lam))


def _solve_spd(M, b):
    """Solves M y = b for symmetric positive semi-definite M (..., m, m) with unit diagonal by Gaussian
    elimination without pivoting, as two ``fori_loop``s of whole-array row operations (no per-matrix
    LAPACK call, and a program whose size does not grow with m); also returns the smallest pivot
    (<= _RANK_TOL: M is numerically singular, y is not to be used). Its loops run over all m rows: stopped
    at the last live view (exact no-ops beyond it, as :func:`min_norm`'s sweeps), a row's solution changed in
    its last bit with the number of rows solved beside it (tests/one_layer/test_sliding_compaction.py)."""
    m = M.shape[-1]
    idx = jnp.arange(m)

    def eliminate(j, carry):
        A, r, pivot = carry
        p = A[..., j, j]
        safe = jnp.where(p > _RANK_TOL, p, 1.0)
        f = jnp.where(idx > j, A[..., :, j] / safe[..., None], 0.0)
        return A - f[..., :, None] * A[..., j, None, :], r - f * r[..., j, None], jnp.minimum(pivot, p)

    A, r, pivot = jax.lax.fori_loop(0, m, eliminate, (M, b, jnp.ones_like(M[..., 0, 0])))  # varying under shard_map

    def substitute(t, y):
        i = m - 1 - t
        acc = r[..., i] - jnp.sum(jnp.where(idx > i, A[..., i, :] * y, 0.0), axis=-1)
        d = A[..., i, i]
        return y.at[..., i].set(acc / jnp.where(d > _RANK_TOL, d, 1.0))

    return jax.lax.fori_loop(0, m, substitute, jnp.zeros_like(b)), pivot


class Analysis(NamedTuple):
    active: ActiveSet
    lam: jax.Array  # (k, m) the minimum-norm multipliers
    v: jax.Array  # (k, d) the minimum-norm element of P_w^perp dE(w) (the steepest-ascent direction)
    slide: jax.Array  # (k, m) bool: a ridge to slide on (0 < lam < 1 and c < 0)


def analyse(ds: Dataset, act: Activation, pw: Pairwise, W, *, delta, m: int, accuracy: float = 0.0) -> Analysis:
    """:func:`active_set` and :func:`min_norm` of its box at every row of W: which hyperplanes to slide
    on. A multiplier strictly inside (0, 1) with c_i < 0 is a ridge (both one-sided fields point towards
    the hyperplane); at a bound, or with c_i >= 0, the field leaves the hyperplane. ``accuracy``: as in
    :func:`min_norm` (m > MAX_ACTIVE only)."""
    a = active_set(ds, act, pw, W, delta=delta, m=m)
    B = sphere.tangent(W[:, None, :], a.c[..., None] * a.x)
    mn = min_norm(a.t0, B, a.mask, accuracy=accuracy)
    slide = a.mask & (mn.lam > 0) & (mn.lam < 1) & (a.c < 0)
    return Analysis(a, mn.lam, mn.v, slide)


def exit_field(ds: Dataset, act: Activation, pw: Pairwise, W, index, side):
    """The one-sided field at every row w of W with the views ``index`` (k, m; -1: padding) gated by ``side``
    (k, m) bool (True: h'(0+)) and every other view at h'(w^T x): u_0 + sum_{i in S} side_i c_i x_i. With the
    gates of the box's minimum-norm multipliers where they sit at 0 or 1, its projection on the sliding
    subspace is the minimum-norm element v itself (the ridges' terms drop out of P_V): the field of the region
    the steepest ascent leaves the kinks into."""
    s, z, _ = dynamics.features(ds, lambda z: act.degree * act.h(z), W)
    ls = dynamics.laplacian_rows(ds, act, pw, W, s)
    z = z.reshape(W.shape[0], -1)
    rows = jnp.arange(W.shape[0])[:, None]
    listed = jnp.zeros(z.shape, bool).at[rows, jnp.maximum(index, 0)].max(index >= 0)
    on = jnp.zeros(z.shape, bool).at[rows, jnp.maximum(index, 0)].max((index >= 0) & side)
    return gated_field(ds, act, ls, jnp.where(listed, on, z > 0))


def basis(X, keep):
    """An orthonormal basis (k, m, d) of span{X_i : keep_i} for X (k, m, d) (zero rows for the dropped
    or dependent vectors): Gram-Schmidt, each vector orthogonalized twice against the basis so far (CGS2,
    as accurate as modified Gram-Schmidt twice), in a ``fori_loop`` over the m vectors (a program whose
    size does not grow with m: it compiles in a fifth of the time of the unrolled loops) that stops past the
    last kept vector of any row (the sliding flow's rows slide on a few of their m slots: issue 36's fifteenth
    round, the flow phase on ``cloud9`` 2x faster, the same bits). A vector whose
    remainder is below max(_RANK_TOL, 1000 eps) of its length is dependent: in float32 the remainder of a
    dependent view (x_a + x_b with x_a, x_b in the set: the latent data) is rounding noise of ~eps, which
    must not become a basis direction (it would cut a random direction out of V)."""
    rank_tol = max(_RANK_TOL, 1000 * float(jnp.finfo(X.dtype).eps))

    def body(j, Q):
        v = jnp.where(jax.lax.dynamic_index_in_dim(keep, j, axis=1, keepdims=False)[:, None],
                      jax.lax.dynamic_index_in_dim(X, j, axis=1, keepdims=False), 0.0)
        size = jnp.linalg.norm(v, axis=1)
        for _ in range(2):  # the rows of Q not yet filled are 0
            v = v - jnp.sum(Q * jnp.sum(Q * v[:, None, :], axis=2)[..., None], axis=1)
        n = jnp.linalg.norm(v, axis=1)
        good = n > rank_tol * jnp.where(size > 0, size, 1.0)
        q = jnp.where(good[:, None], v / jnp.where(good, n, 1.0)[:, None], 0.0)
        return jax.lax.dynamic_update_index_in_dim(Q, q, j, axis=1)

    # past the last kept vector of every row a column stays zero (an exact no-op): the loop stops there
    return jax.lax.fori_loop(0, _past_last(keep), body, jnp.zeros_like(X))


def independent(X, keep, limit: int):
    """(k, m) bool: a greedy independent subset of the vectors X (k, m, d) with ``keep``, in index order, at
    most ``limit`` per row, spanning the same space as all of them (within :func:`basis`'s rank tolerance,
    max(_RANK_TOL, 1000 eps) of a vector's length), unless more than ``limit`` are independent. The kink
    geometry (V = the intersection of the hyperplanes, the sliding field P_V P^perp u) depends only on
    this span: dependent views change only the multiplier box. A ``fori_loop`` over the m vectors with a
    (k, d, d) basis (the rank is at most d)."""
    k, m, d = X.shape
    rank_tol = max(_RANK_TOL, 1000 * float(jnp.finfo(X.dtype).eps))
    slots = jnp.arange(d)

    def body(j, carry):
        Q, count, chosen = carry
        x = jnp.where(jax.lax.dynamic_index_in_dim(keep, j, axis=1, keepdims=False)[:, None],
                      jax.lax.dynamic_index_in_dim(X, j, axis=1, keepdims=False), 0.0)
        size = jnp.linalg.norm(x, axis=1)
        r = x
        for _ in range(2):
            r = r - jnp.einsum("kdj,kj->kd", Q, jnp.einsum("kdj,kd->kj", Q, r))
        n = jnp.linalg.norm(r, axis=1)
        take = (size > 0) & (n > rank_tol * size) & (count < min(limit, d))
        q = jnp.where(take[:, None], r / jnp.where(take, n, 1.0)[:, None], 0.0)
        Q = Q + q[:, :, None] * (slots[None, None, :] == count[:, None, None])
        return Q, count + take.astype(jnp.int32), jax.lax.dynamic_update_index_in_dim(chosen, take, j, axis=1)

    # zeros_like: of the same kind as X's rows (varying over the devices under shard_map)
    init = (jnp.zeros_like(X[:, 0, :, None]) + jnp.zeros((1, 1, d), X.dtype), jnp.zeros_like(keep[:, 0], jnp.int32),
            jnp.zeros_like(keep))
    # past the last kept vector of every row a vector is never taken: the loop stops there (the same result)
    top = _past_last(keep)
    return jax.lax.fori_loop(0, top, body, init)[2]


def project(Q, v):
    """P_V v with V = span(Q)^perp, for an orthonormal (or zero-row) Q (k, m, d) and v (k, d)."""
    return v - jnp.sum(Q * jnp.sum(Q * v[:, None, :], axis=2)[..., None], axis=1)
