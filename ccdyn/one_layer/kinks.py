"""Optima of the 1-layer flow on ReLU kinks: exact refinement by active sets, and their certificates.

With a piecewise-linear homogeneous activation (ReLU, leaky ReLU) the energy on the unit sphere is
piecewise quadratic: on an activation region R (the signs of w^T x_i over every view x_i)
E(w) = 1/2 w^T A_R w (Lemma 3, Eq. 6 with h(z) = gate * z), and the ascent field u(w) = A(w) w jumps
across every hyperplane w^T x_i = 0. Let S be the *active set*: the views with w^T x_i = 0.

- **Affine in the gates.** A point of S has h(w^T x_i) = 0 on either side, so its gate g_i = h'(0 +-)
  only changes the outer vector of its own terms: the one-sided fields at w are
  u_g(w) = u_0(w) + sum_{i in S} g_i c_i(w) x_i, g in {0, 1}^S, with u_0 the field with every gate
  of S at the negative-side slope and c_i = (1 - slope) p_aug,i (L_alpha s)_i (s = p h(Xw), L the
  population Laplacian, alpha at w; Gaussian alpha (Cor. 2) is continuous in w). The Clarke
  generalized gradient is the box {u_0 + X_S diag(c) lam : lam in [0, 1]^S}.
- **Kink maximum.** w is Clarke-stationary when u_0 + X_S diag(c) lam = mu w with lam in [0, 1]^S,
  i.e. w in V = span{x_i : i in S}^perp is a unit eigenvector of P_V A_R P_V (region R: the strict
  signs of the inactive views; the active views' gates do not matter on V). The multipliers solve
  the Gram system (X_S X_S^T) diag(c) lam = -X_S u_0.
- **Certificate.** The directional derivative of E at such w along a tangent d is
  sum_{i in S} c_i (g_i(d) - lam_i) x_i^T d (g_i(d) = 1 if x_i^T d > 0), plus second order on V. So w
  is a strict local maximum when (one-sided test) c_i (1 - lam_i) < 0 and c_i lam_i < 0 for every
  i in S (i.e. c_i < 0 and lam_i in (0, 1) strictly), and (smooth test) the flow's Jacobian on
  V cap T_w S^{d-1} has eigenvalues with negative real parts (for uniform alpha: mu is the strict top
  eigenvalue of P_V A_R P_V on V). lam_i at 0 or 1 leaves one side flat to first order: not
  certified here.

:func:`refine` moves each candidate (an endpoint cluster's center) to the exact kink optimum by an
active-set iteration: w <- the top eigenvector of P_V A_R P_V on V; if it leaves the closure of R,
move to the first hyperplane crossed and add that view to S; if a multiplier leaves [0, 1], release
that view to the side where E rises faster; if w is stationary but a view with a multiplier at 0 or 1
has a flat side where E rises to second order (a one-sided saddle, not a maximum), release that view to
its flat side and step off along the rising direction; with Gaussian alpha, repeat until w is a fixed
point.
Both map over the candidates (``lax.map``; fixed shapes: S padded to ``s_max`` with masks).
:func:`kink_certificate` is compiled with :data:`ccdyn.compiling.QUICK`'s options: it runs once per run on the
distinct optima, and XLA's optimization took longer than it runs (certifying the main job's 35 optima,
cold: 3.9 s -> 2.4 s; 240 optima of 10^6 inits: 4.1 s -> 2.7 s, of which it runs 0.6 s instead of 0.3 s).
:func:`refine` runs at XLA's level 1 without LLVM's expensive passes (level 0 runs its active-set
iterations 2-3x slower: 240 optima 9.4 s instead of 3.0 s). Both use XLA's older emitter for fused loops
where the jaxlib has it (:data:`ccdyn.compiling.CERTIFYING`, :data:`ccdyn.compiling.SLIDING`): the main
job's refinement compiles in 1.5-1.9 s instead of 2.9-3.3 s, its certificate in 0.35-0.4 s instead of
1.1-1.3 s, with the same refined points on the main job (issue 36's fourteenth round). With uniform alpha it
refines one candidate at a time (``lax.map`` without a batch: docs/flow.md, "Thirteenth round"), with a
Gaussian alpha vmapped batches of 16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ccdyn import compiling
from ccdyn.activations import Activation
from ccdyn.covariance import laplacian_apply
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, simplex, sliding
from ccdyn.one_layer.outcomes import Outcome
from ccdyn.pairwise import Pairwise

__all__ = ["RefineStatus", "default_s_max", "has_kinks", "gate_coefficients", "one_sided_field",
           "region_matrix", "range_projector", "newton_on_v", "multipliers", "refine", "kink_certificate"]


class RefineStatus(Outcome):
    """Codes of :func:`refine`'s ``status`` (per candidate), with ``.key`` and ``.text``."""

    RUNNING = 0, "running"
    CONVERGED = 1, "converged"
    TOO_MANY_ACTIVE = 2, "active set above s_max"
    MAX_ITER = 3, "iteration limit"
    DEGENERATE = 4, "dependent active views"
    CYCLE = 5, ("active set cycles (a view released for its multiplier outside [0, 1] is crossed straight back: "
                "no stationary point of these kinks in their region)")


def default_s_max(d: int) -> int:
    """At most d - 1 independent hyperplanes meet at a point of the sphere; capped at 16 (was 8: on the
    default data, d = 10, the sliding flow's second pass reaches vertices of 9 independent hyperplanes,
    docs/flow.md)."""
    return max(1, min(d - 1, 16))


def has_kinks(act: Activation) -> bool:
    """True for the piecewise-linear activations with a kink (ReLU, leaky ReLU with slope != 1)."""
    return act.name in ("relu", "leaky_relu") and act.slope != 1.0


def _ls(ds: Dataset, act: Activation, pw: Pairwise, w, moving_alpha: bool = False):
    """(L_alpha s)_i with s = p sum_v p_v h(w^T x_iv), alpha at w (held fixed unless ``moving_alpha``)."""
    xv, pv = ds.views()
    s = act.degree * jnp.sum(pv * act.h(xv @ w), axis=1)
    alpha = dynamics.node_alpha(ds, act, pw, w, stop_gradient=not moving_alpha)
    return laplacian_apply(s, ds.p, alpha)


def gate_coefficients(ds: Dataset, act: Activation, pw: Pairwise, w):
    """c_i for every view (n * V,): u_g = u_0 + sum_i g_i c_i x_i across a kink of view i."""
    _, point, p_view = sliding.flat_views(ds)
    return (1.0 - act.slope) * p_view * _ls(ds, act, pw, w)[point]


def one_sided_field(ds: Dataset, act: Activation, pw: Pairwise, w, gates):
    """The ascent field at w with every view's gate given (gates (n * V,), 1 = positive side): the
    field of the region with those signs, continued to w. Equals A(w) w off the kinks."""
    return _gated_field(ds, act, pw, w, gates)


def _gated_field(ds: Dataset, act: Activation, pw: Pairwise, w, gates, moving_alpha: bool = False):
    """sum_i g_i p_view(i) (L_alpha s)_point(i) x_i: the field of the region with the given gates at w
    (:func:`ccdyn.one_layer.sliding.gated_field`, the formula the engine's kink analysis uses too)."""
    return sliding.gated_field(ds, act, _ls(ds, act, pw, w, moving_alpha), gates)


def region_matrix(ds: Dataset, act: Activation, pw: Pairwise, w, gates):
    """A_R (d, d) of the region with the given gates (n * V,), alpha at w: E = w^T A_R w / 2 there."""
    xv, pv = ds.views()
    n, v, _ = xv.shape
    g = jnp.where(gates, 1.0, act.slope).reshape(n, v)
    gi = jnp.einsum("nv,nvd->nd", pv * g, xv)
    return gi.T @ laplacian_apply(gi, ds.p, dynamics.node_alpha(ds, act, pw, w))


def _subspace(x, idx, msk, rank_tol):
    """X_S (s, d), Gram pseudo-inverse, P_V = I - X_S^T G^+ X_S, and whether X_S has full rank."""
    xs = x[idx] * msk[:, None]
    gram = xs @ xs.T + jnp.diag(jnp.where(msk, 0.0, 1.0))
    ev, vec = jnp.linalg.eigh(gram)
    scale = jnp.max(ev)
    ok = ev > rank_tol * scale
    ginv = (vec * jnp.where(ok, 1.0 / jnp.where(ok, ev, 1.0), 0.0)) @ vec.T
    d = x.shape[1]
    pv = jnp.eye(d, dtype=x.dtype) - xs.T @ ginv @ xs
    return xs, ginv, pv, jnp.all(ok)


def _in_span(x, xn, pv, span_tol):
    """Views on every active hyperplane's intersection: x_i in span{x_S} (||P_V x_i|| <= span_tol ||x_i||).
    They include S itself, duplicates and antipodes of its views, and views dependent on them."""
    return (xn > 0) & (jnp.linalg.norm(x @ pv, axis=1) <= span_tol * xn)


def range_projector(m, rank_tol):
    """Orthogonal projector onto the range of the PSD matrix m (d, d)."""
    ev, vec = jnp.linalg.eigh(0.5 * (m + m.T))
    keep = ev > rank_tol * jnp.maximum(jnp.max(ev), jnp.finfo(m.dtype).tiny)
    return (vec * keep) @ vec.T


def _top_on_v(a, pv, w):
    """Top eigenpair of P_V A P_V on V (the rest of R^d pushed below), signed to agree with w."""
    a = 0.5 * (a + a.T)
    shift = 2.0 * jnp.linalg.norm(a) + jnp.finfo(a.dtype).tiny
    m = pv @ a @ pv - shift * (jnp.eye(a.shape[0], dtype=a.dtype) - pv)
    ev, vec = jnp.linalg.eigh(0.5 * (m + m.T))
    v = vec[:, -1]
    v = v / jnp.linalg.norm(v)
    return jnp.where(jnp.dot(v, w) < 0, -v, v), ev


def _region_field(ds, act, pw, gates):
    """v -> the field of the region with the given gates, alpha moving with v (the flow sees it move)."""
    return lambda v: _gated_field(ds, act, pw, v, gates, moving_alpha=True)


def newton_on_v(ds, act, pw, w, gates, pv, max_step=0.1):
    """One Newton step (at most max_step long) for P_V u(w) = mu w on the sphere inside V."""
    u = _region_field(ds, act, pw, gates)
    w = pv @ w
    w = w / jnp.linalg.norm(w)
    uw, du = u(w), jax.jacfwd(u)(w)
    mu = jnp.dot(w, uw)
    d = w.shape[0]
    p = pv - jnp.outer(w, w)
    g = p @ uw
    jac = p @ (du - mu * jnp.eye(d, dtype=w.dtype)) @ p
    shift = jnp.linalg.norm(jac) + jnp.abs(mu) + jnp.finfo(w.dtype).tiny
    step = -jnp.linalg.solve(jac - shift * (jnp.eye(d, dtype=w.dtype) - p), g)
    step = p @ step
    n = jnp.linalg.norm(step)
    step = step * jnp.minimum(1.0, max_step / jnp.maximum(n, jnp.finfo(w.dtype).tiny))
    v = w + step
    return v / jnp.linalg.norm(v)


DEP_VIEWS = 32  # at most this many active views are searched for a multiplier inside [0, 1] (more: the 1/2 one)
def _box_solution(b, t, active, rank_tol, k):
    """The solution of b lam = t (b (d, N) zero off the active views) farthest inside [0, 1]: the largest
    margin m with m <= lam_i <= 1 - m over the active views, exactly (a linear program over lam_0 + N y,
    lam_0 the solution nearest 1/2 and N the null space of b's active columns:
    :func:`ccdyn.one_layer.simplex.max_margin_lp`).
    With independent views the solution is unique and returned as is; with none inside the box, the one
    least outside. Over the first k active views (fixed shapes). One eigh (of the k x k Gram matrix) gives
    both lam_0 and N. Returns (lam (N,), its margin min_i min(lam_i, 1 - lam_i) over the active views,
    and whether the active views fit in k)."""
    idx = jnp.argsort(~active)[:k]
    msk = active[idx]
    bk = b[:, idx] * msk[None]
    g = bk.T @ bk
    top = jnp.max(jnp.diag(g))  # the padding on the active views' scale: the rank threshold stays theirs
    pad = jnp.where(top > 0, top, 1.0)
    ev, vec = jnp.linalg.eigh(g + jnp.diag(jnp.where(msk, 0.0, pad)))  # padded views: kept, never null
    keep = ev > rank_tol * jnp.maximum(jnp.max(ev), jnp.finfo(b.dtype).tiny)
    half = 0.5 * msk.astype(b.dtype)
    lam0 = half + vec @ (jnp.where(keep, 1.0 / jnp.where(keep, ev, 1.0), 0.0) * (vec.T @ (bk.T @ (t - bk @ half))))
    lam0 = lam0 * msk
    null = vec * (~keep)[None]
    y, _ = simplex.max_margin_lp(lam0, null, msk)
    ys = jnp.stack([lam0, (lam0 + null @ y) * msk])
    margin = jnp.min(jnp.where(msk[None], jnp.minimum(ys, 1.0 - ys), jnp.inf), axis=1)
    best = jnp.argmax(margin)  # the LP's solution unless rounding made it worse than lam_0
    lam = jnp.zeros((b.shape[1],), b.dtype).at[idx].set(ys[best])
    return lam, margin[best], jnp.sum(active) <= k


def _after(x, *deps):
    """``x``, made to depend on ``deps`` (x + 0 * a finite sum of them: the same value): what reads the
    result runs after what computes ``deps``. Two independent batched float64 eigh / eig calls under vmap
    can wait on each other forever on XLA's 2-thread CPU pool (DEVELOPERS.md); ``lax.optimization_barrier``
    does not order them there (XLA's CPU compiler turns it into a control edge, which its thunk executor
    does not follow: two such eigh calls ran at once in a saddles run and hung)."""
    s = sum(jnp.sum(jnp.nan_to_num(jnp.asarray(d, x.dtype))) for d in deps)
    return x + 0.0 * s


def multipliers(ds, act, pw, w, active, sig, pv, rank_tol):
    """Multipliers of every active view (N,) at w: u_0 + sum_i lam_i c_i x_i = mu w with u_0 the field
    with every active gate at 0. With dependent active views (more views than hyperplanes, e.g. x_a, x_b
    and x_a + x_b of the latent data) lam is not unique: this is the solution with the largest margin
    inside [0, 1] (:func:`_box_solution`, an exact linear program; with independent views the only
    solution). Choosing the solution nearest 1/2 alone, which can leave [0, 1] while others lie inside,
    made the refinement release a hyperplane it then crossed straight back (a period-2 cycle of the
    active set up to the iteration limit: issue #22, Gaussian alpha); for the saddles' certificate it
    left a view flat on one side that is a strict ridge (docs/saddles.md, step 3). The one routine for
    the kink optima (:func:`refine`, :func:`kink_certificate`) and the saddles
    (:mod:`ccdyn.one_layer.saddles`). More than DEP_VIEWS active views: the solution nearest 1/2.
    Returns (lam, c, u0, fit): c (N,) zero off the active views, fit = ||X diag(c) lam + (I - P_V) u_0||."""
    x = sliding.flat_views(ds)[0]
    u0 = one_sided_field(ds, act, pw, w, sig & ~active)
    c = gate_coefficients(ds, act, pw, w) * active
    b = (x * c[:, None]).T  # (d, N)
    t = -(u0 - pv @ u0)
    k = min(DEP_VIEWS, x.shape[0])
    if x.shape[0] <= k:  # every view fits: the linear program alone
        lam = _box_solution(b, t, active, rank_tol, k)[0]
    else:
        half = 0.5 * active
        lam_half = jnp.where(active, half + b.T @ (simplex.pinv_psd(b @ b.T, rank_tol) @ (t - b @ half)), 0.0)
        # its eigh before the box solution's (a data dependence): two independent batched eigh calls under
        # vmap can wait on each other forever on XLA's CPU pool (DEVELOPERS.md)
        box, _, fits = _box_solution(_after(b, lam_half), t, active, rank_tol, k)
        lam = jnp.where(fits, box, lam_half)
    return lam, c, u0, jnp.linalg.norm(b @ lam - t)


def _second_order(ds, act, pw, w, sig, active, lam, c, xn, mu, scale, tol, rank_tol):
    """The one-sided and second-order tests at a stationary kink point w (multipliers lam, gate
    coefficients c of the active views). strict: both one-sided slopes c_i (1 - lam_i), c_i lam_i below
    -tol scale; flat0 / flat1: lam_i at 0 / 1 with c_i < 0, so E is flat to first order on the view's
    negative / positive side only. The second-order test is the flow's Jacobian (alpha moving) on
    V' cap T_w, V' the complement of the strict views, in the region that puts each flat view on its
    flat side. Returns (strict, flat0, flat1, jmax = its largest real eigenvalue / scale (-inf when
    V' cap T_w = {0}), e = the top eigenvector of its symmetric part: the direction along which E
    rises when jmax > 0)."""
    x = sliding.flat_views(ds)[0]
    d = x.shape[1]
    plus, minus = c * (1.0 - lam) * xn, c * lam * xn
    neg = c * xn < -tol * scale
    strict = active & (plus < -tol * scale) & (minus < -tol * scale)
    flat0 = active & ~strict & neg & (jnp.abs(lam) <= tol)
    flat1 = active & ~strict & neg & (jnp.abs(lam - 1.0) <= tol)
    pos2 = jnp.where(active, flat1, sig)
    xst = x * strict[:, None]
    pv2 = jnp.eye(d, dtype=w.dtype) - range_projector(xst.T @ xst, rank_tol)
    u = _region_field(ds, act, pw, pos2)
    p = pv2 - jnp.outer(w, w)
    dim = jnp.round(jnp.trace(p)).astype(jnp.int32)
    du = jax.jacfwd(u)(w)
    shift = 2.0 * (jnp.linalg.norm(du) + jnp.abs(mu)) + scale
    jac = p @ (du - mu * jnp.eye(d, dtype=w.dtype)) @ p - shift * (jnp.eye(d, dtype=w.dtype) - p)
    jmax = jnp.where(dim > 0, jnp.max(jnp.linalg.eigvals(jac).real) / scale, -jnp.inf)
    e = jnp.linalg.eigh(_after(0.5 * (jac + jac.T), jnp.where(dim > 0, jmax, 0.0)))[1][:, -1]  # after eigvals
    return strict, flat0, flat1, jmax, e


@compiling.jit(compiling.SLIDING, static_argnames=("act", "pw", "s_max", "max_iter"))
def _refine_batch(ds, act, pw, W, *, s_max, max_iter, cand_tol, z_tol, lam_tol, fp_tol, rank_tol, span_tol, cert_tol,
                  kick_size, cyc_tol):
    x = sliding.flat_views(ds)[0]
    n_flat = x.shape[0]
    xn = jnp.linalg.norm(x, axis=1)
    valid = xn > 0
    moving = pw.kind != "uniform"
    n_pre = min(n_flat, 4 * s_max)

    def one(w0):
        w0 = w0 / jnp.linalg.norm(w0)
        z0 = (x @ w0) / jnp.where(valid, xn, 1.0)
        near = valid & (jnp.abs(z0) <= cand_tol)
        order = jnp.argsort(jnp.where(near, jnp.abs(z0), jnp.inf))[:n_pre]

        def pick(i, carry):  # independent views only, nearest first (Gram-Schmidt)
            q, idx, msk, count = carry
            j = order[i]
            xj = x[j] / jnp.where(valid[j], xn[j], 1.0)
            r = xj - q @ (q.T @ xj)
            nr = jnp.linalg.norm(r)
            take = near[j] & (nr > span_tol) & (count < s_max)
            slot = jnp.minimum(count, s_max - 1)
            q = jnp.where(take, q.at[:, slot].set(r / jnp.where(take, nr, 1.0)), q)
            idx = jnp.where(take, idx.at[slot].set(j.astype(jnp.int32)), idx)
            msk = jnp.where(take, msk.at[slot].set(True), msk)
            return q, idx, msk, count + take

        init = (jnp.zeros((x.shape[1], s_max), x.dtype), jnp.zeros((s_max,), jnp.int32), jnp.zeros((s_max,), bool),
                jnp.int32(0))
        _, idx0, msk0, _ = jax.lax.fori_loop(0, n_pre, pick, init)
        none = jnp.full((s_max,), -1, jnp.int32)
        state = (w0, z0 > 0, idx0, msk0, jnp.int32(0), jnp.int32(RefineStatus.RUNNING), (w0, none))

        def key(idx, msk):  # the active slots as a set (sorted, -1 padded)
            return jnp.sort(jnp.where(msk, idx, n_flat))

        def body(st):
            w, sig, idx, msk, it, _, prev = st
            xs, ginv, pv, full = _subspace(x, idx, msk, rank_tol)
            active = _in_span(x, xn, pv, span_tol)
            if moving:  # alpha moves with w: Newton on the restricted fixed-point equation (the top
                # eigenvector map w <- top(A(alpha(w))) need not converge to the flow's stable points)
                v = newton_on_v(ds, act, pw, w, sig & ~active, pv)
            else:
                v, _ = _top_on_v(region_matrix(ds, act, pw, w, sig & ~active), pv, w)
            zw, zv = x @ w, x @ v
            tol = z_tol * xn
            viol = valid & ~active & jnp.where(sig, zv < -tol, zv > tol)
            t = jnp.where(viol, zw / jnp.where(viol, zw - zv, 1.0), jnp.inf)
            j = jnp.argmin(t)
            any_viol = jnp.any(viol)
            w_cross = w + jnp.clip(t[j], 0.0, 1.0) * (v - w)
            w_cross = w_cross / jnp.linalg.norm(w_cross)
            slot = jnp.argmin(msk)  # first free slot (all full: msk[slot] is True)
            full_slots = jnp.all(msk)
            lam, c, u0, _ = multipliers(ds, act, pw, v, active, sig, pv, rank_tol)
            out = active & ((lam < -lam_tol) | (lam > 1.0 + lam_tol))
            jo = jnp.argmax(jnp.where(out, jnp.maximum(-lam, lam - 1.0), -jnp.inf))
            any_out = jnp.any(out)
            # release the hyperplane (slot) that view jo leans on most, to the side where E rises faster for
            # view jo: + if c (1 - lam) > c lam; the views leaving the active set take the side of the
            # release direction (the slot's dual direction, signed)
            alpha = (ginv @ (xs @ x[jo])) * msk * jnp.linalg.norm(xs, axis=1)
            k = jnp.argmax(jnp.abs(alpha))
            up = c[jo] * (1.0 - 2.0 * lam[jo]) > 0
            delta = (xs.T @ ginv)[:, k] * jnp.where((alpha[k] > 0) == up, 1.0, -1.0)
            moved = jnp.linalg.norm(v - w)
            # a view flat to first order on one side (lam at 0 or 1) where E rises to second order: v is
            # not a maximum (a one-sided saddle the flow can stop near, where the flat side's field
            # vanishes). Release that view to its flat side and step off along the rising direction e.
            a_v = _after(region_matrix(ds, act, pw, v, sig & ~active), lam)  # its eigh after the multipliers'
            scale = jnp.maximum(jnp.max(jnp.abs(jnp.linalg.eigvalsh(0.5 * (a_v + a_v.T)))), jnp.finfo(w.dtype).tiny)
            _, flat0, flat1, jmax, e = _second_order(ds, act, pw, v, sig, active, lam, c, xn, jnp.dot(v, u0), scale,
                                                     cert_tol, rank_tol)
            flat = flat0 | flat1
            xe = x @ e
            jf = jnp.argmax(jnp.where(flat, jnp.abs(xe) / jnp.where(valid, xn, 1.0), -jnp.inf))
            e = e * jnp.where((xe[jf] > 0) == flat1[jf], 1.0, -1.0)  # into view jf's flat side
            kick = ~any_viol & ~any_out & jnp.any(flat) & (jmax > cert_tol) & full & (jnp.abs(xe[jf]) > 0)
            done = ~any_viol & ~any_out & ~kick & (~moving | (moved <= fp_tol))
            status = jnp.where(~full, RefineStatus.DEGENERATE,
                               jnp.where(any_viol & full_slots, RefineStatus.TOO_MANY_ACTIVE,
                                         jnp.where(done, RefineStatus.CONVERGED, RefineStatus.RUNNING)))
            w_new = jnp.where(any_viol, w_cross, v)
            w_new = jnp.where(status == RefineStatus.DEGENERATE, w, w_new)
            add = any_viol & ~full_slots & full
            idx_new = jnp.where(add, idx.at[slot].set(j.astype(jnp.int32)), idx)
            msk_new = jnp.where(add, msk.at[slot].set(True), msk)
            rel = ~any_viol & any_out & full
            sig_new = jnp.where(rel & active, x @ delta > 0, sig)
            msk_new = jnp.where(rel, msk_new.at[k].set(False), msk_new)
            kf = jnp.argmax(jnp.abs((ginv @ (xs @ x[jf])) * msk * jnp.linalg.norm(xs, axis=1)))
            w_kick = v + kick_size * e
            w_new = jnp.where(kick, w_kick / jnp.linalg.norm(w_kick), w_new)
            sig_new = jnp.where(kick & active, x @ e > 0, sig_new)
            msk_new = jnp.where(kick, msk_new.at[kf].set(False), msk_new)
            it = it + 1
            # a period-2 cycle: the same slots and point as two iterations ago, each release undone by the
            # next step's crossing (it would run to max_iter)
            cyc = ((it >= 2) & jnp.all(key(idx_new, msk_new) == prev[1])
                   & (jnp.linalg.norm(w_new - prev[0]) <= cyc_tol))
            status = jnp.where((status == RefineStatus.RUNNING) & cyc, RefineStatus.CYCLE, status)
            status = jnp.where((status == RefineStatus.RUNNING) & (it >= max_iter), RefineStatus.MAX_ITER, status)
            return w_new, sig_new, idx_new, msk_new, it, status.astype(jnp.int32), (w, key(idx, msk))

        w, sig, idx, msk, it, status, _ = jax.lax.while_loop(lambda st: st[5] == RefineStatus.RUNNING, body, state)
        return {"w": w, "sign": sig, "active": idx, "active_mask": msk, "iterations": it, "status": status}

    # uniform alpha: one candidate at a time. A vmapped batch iterates until its slowest candidate stops (and within
    # an iteration until its slowest multiplier LP does), and vmap's while-loop batching rule re-traces the body
    # until its batched axes settle. 128 candidates of the main job, warm: 0.46 s in batches of 8, 0.15 s one by
    # one (512: 1.98 -> 0.63 s; batches of 256 before the twelfth round were 3-4x slower than 8); tracing 0.83 ->
    # 0.23 s. A Gaussian alpha keeps vmapped batches of 16: one by one, the rounding changed enough for one of the
    # docs' Gaussian endpoints (tests/one_layer/test_kinks.py, dependent views) to end CYCLE instead of converging
    return jax.lax.map(one, W, batch_size=min(16, W.shape[0])) if moving else jax.lax.map(one, W)


def refine(ds64: Dataset, act: Activation, pw: Pairwise, W, *, s_max: int | None = None, max_iter: int = 64,
           cand_tol: float = 1e-4, z_tol: float = 1e-12, lam_tol: float = 1e-9, fp_tol: float = 1e-13,
           rank_tol: float = 1e-10, span_tol: float = 1e-8, cert_tol: float = 1e-7, kick_size: float = 1e-8,
           cyc_tol: float = 1e-10) -> dict:
    """Active-set refinement of candidates W (k, d) to exact kink optima (module docstring), float64.

    Args:
      cand_tol: a view starts active when |w^T x_i| <= cand_tol ||x_i|| at the candidate.
      z_tol: a view is on the wrong side of its region when its sign is wrong by more than z_tol ||x_i||.
      lam_tol: multipliers within [-lam_tol, 1 + lam_tol] are accepted while refining.
      fp_tol: Gaussian alpha: the fixed-point iteration stops when w moves <= fp_tol.
      span_tol: a view lies on the active intersection (is active without a slot of its own: duplicates,
        antipodes, views dependent on the slots) when ||P_V x_i|| <= span_tol ||x_i||.
      cert_tol: the margin of :func:`kink_certificate`'s one-sided and second-order tests; a stationary
        point with a view flat to first order on one side (multiplier at 0 or 1) where the Jacobian on
        that side has an eigenvalue above cert_tol (relative) is not a maximum: that view is released to
        its flat side and w steps kick_size radians along the rising direction (E rises to second order).
      cyc_tol: the iteration stops with status CYCLE when its slots and point (within cyc_tol) are those of
        two iterations before.

    Returns:
      per candidate: ``w`` (k, d), ``sign`` (k, N) the region's side of every view (N = n * views),
      ``active`` (k, s_max) view indices with ``active_mask``, ``iterations``, ``status``
      (:class:`RefineStatus`).
    """
    if not has_kinks(act):
        raise ValueError(f"act={act.name!r} has no kink: refine its optima with the flow")
    s_max = default_s_max(ds64.dim) if s_max is None else int(s_max)
    return _refine_batch(ds64, act, pw, jnp.asarray(W, ds64.x.dtype), s_max=s_max, max_iter=int(max_iter),
                         cand_tol=cand_tol, z_tol=z_tol, lam_tol=lam_tol, fp_tol=fp_tol, rank_tol=rank_tol,
                         span_tol=span_tol, cert_tol=cert_tol, kick_size=kick_size, cyc_tol=cyc_tol)


@compiling.jit(compiling.CERTIFYING, static_argnames=("act", "pw"))
def kink_certificate(ds64: Dataset, act: Activation, pw: Pairwise, ref: dict, *, tol: float = 1e-7,
                     rank_tol: float = 1e-10, plane_tol: float = 1e-10, span_tol: float = 1e-8):
    """Certificate of refined optima (:func:`refine`'s output, k of them), float64, one at a time.

    Returns per optimum: ``kink_rank`` |S| (independent hyperplanes), ``active`` (k, N) the views on
    their intersection, ``multipliers`` lam and ``gate_coefficients`` c (k, N; 0 off the active views),
    ``one_sided_max`` the largest one-sided slope c_i (1 - lam_i) or c_i lam_i (times |x_i|) relative to
    |lambda_1|, ``jacobian_v_max`` the largest real part of the flow's Jacobian on V' cap T_w (alpha
    moving; -inf when that space is {0}) relative to |lambda_1|, where V' is the complement of the views
    with a multiplier strictly inside (0, 1) and the region's gates put each view with a multiplier at 0
    (1) on its negative (positive) side, where E is flat to first order (``flat_kinks`` counts them; on
    a polyhedral piece second order there decides), ``stationarity`` (||P_V u_0 - mu w|| and the fit
    of the multipliers, relative to |lambda_1|), ``closure`` (inactive views on their region's side),
    ``stray`` (an inactive view within plane_tol of its hyperplane: unresolved), ``full_rank``, and the
    tests ``smooth_ok`` and ``kkt_ok`` (strict, with margin ``tol``).
    """
    x = sliding.flat_views(ds64)[0]
    xn = jnp.linalg.norm(x, axis=1)
    valid = xn > 0

    def one(w, sig, idx, msk):
        _, _, pv, full = _subspace(x, idx, msk, rank_tol)
        active = _in_span(x, xn, pv, span_tol)
        a = region_matrix(ds64, act, pw, w, sig & ~active)
        scale = jnp.maximum(jnp.max(jnp.abs(jnp.linalg.eigvalsh(0.5 * (a + a.T)))), jnp.finfo(w.dtype).tiny)
        lam, c, u0, fit = multipliers(ds64, act, pw, w, active, sig, pv, rank_tol)
        mu = jnp.dot(w, u0)
        stationarity = (jnp.linalg.norm(pv @ u0 - mu * w) + fit) / scale
        plus, minus = c * (1.0 - lam) * xn, c * lam * xn
        one_sided = jnp.max(jnp.where(active, jnp.maximum(plus, minus), -jnp.inf)) / scale
        strict, flat0, flat1, jmax, _ = _second_order(ds64, act, pw, w, sig, active, lam, c, xn, mu, scale, tol,
                                                      rank_tol)
        kkt_ok = jnp.all(~active | strict | flat0 | flat1)
        # A(w) with h'(0) = 0 on every active view (ReLU's convention, App. B.1), free of the rounding
        # of w^T x_i ~ 1e-17 on the kinks: residual, lambda_1, gap, alignment of Def. 3
        ev0, vec0 = jnp.linalg.eigh(0.5 * (a + a.T))
        aw0 = a @ w
        z = (x @ w) / jnp.where(valid, xn, 1.0)
        inactive = valid & ~active
        closure = jnp.all(~inactive | jnp.where(sig, z >= -plane_tol, z <= plane_tol))
        stray = jnp.any(inactive & (jnp.abs(z) <= plane_tol))
        return {"kink_rank": jnp.sum(msk), "active": active, "multipliers": lam, "gate_coefficients": c,
                "one_sided_max": one_sided, "jacobian_v_max": jmax, "stationarity": stationarity, "closure": closure,
                "stray": stray, "full_rank": full, "smooth_ok": jmax < -tol, "kkt_ok": kkt_ok,
                "flat_kinks": jnp.sum(flat0 | flat1), "residual0": jnp.linalg.norm(aw0 - jnp.dot(w, aw0) * w),
                "lam1_0": ev0[-1], "gap0": ev0[-1] - ev0[-2], "alignment0": jnp.abs(jnp.dot(w, vec0[:, -1])),
                "mu": mu, "lam1": scale}

    # one optimum at a time: vmapped, the batched float64 eigh calls of independent branches ran at once on
    # XLA's CPU pool and, with 2 threads, each waited forever for work queued behind the other
    return jax.lax.map(lambda a: one(*a), (ref["w"], ref["sign"], ref["active"], ref["active_mask"]))
