"""Saddles between the maxima of E_alpha on the sphere: paths, climbing image, exact refinement, certificates.

We maximize E (training is gradient ascent, Eq. 2), so the landscape reading is that of -E in the
energy-landscape literature (Wales, *Energy Landscapes*, 2003; the pele library): the *saddle* between
two maxima a and b is the point where the best path from a to b is lowest, the minimax

    E_ab = max over paths gamma from a to b of min_{w in gamma} E(w),

and it is an index-1 saddle: E rises along one direction (the path, towards a and b) and falls along
every other one. The *barrier* seen from a is E(a) - E_ab. Steps (docs/saddles.md):

1. **String with a climbing image** (:func:`string`). Every search's path is M images on the sphere,
   started on the great circle from a to b (:func:`great_circle_paths`) or through a point where their
   basins touch (:mod:`ccdyn.one_layer.saddle_paths`, :mod:`ccdyn.one_layer.saddle_seeds`). Each step moves every
   interior image along the tangent ascent field P^perp A(w) w (Lemma 3, Eq. 7) and redistributes the images at
   equal arc length along the spherical polyline (:func:`reparametrize`): the simplified string method
   (E, Ren, Vanden-Eijnden 2007) for -E on the sphere, whose fixed points are paths along which the
   field is tangent. In the second half the lowest interior image (in :func:`landscape`'s energy: the
   potential of the flow with Gaussian alpha) *climbs*: its field component along the path is reversed
   (climbing-image NEB, Henkelman, Uberuaga, Jonsson 2000), so it descends along the path and ascends
   across it, to the saddle, never past a neighbouring image. Pairs and images are batch axes of one program: the
   field of all P x M images is two GEMMs (:func:`ccdyn.one_layer.dynamics.ascent`).
2. **Exact refinement** (:func:`refine`). For ReLU / leaky ReLU, E is piecewise quadratic on the sphere
   (docs/flow.md, "Kinks"): on the intersection V = span{x_i : i in S}^perp of the active hyperplanes
   E = 1/2 w^T P_V A_R P_V w, so a critical point on V is a unit eigenvector of P_V A_R P_V. Candidate
   active sets are every subset of the ``n_near`` (6) views nearest the climbing image within
   ``cand_tol`` of their hyperplanes (the empty set: no kink, an eigenvector of A(w)); each gives the eigenvector
   of P_V A_R P_V nearest the climbing image; the nearest one that stays in its region's closure with
   multipliers in [0, 1] is the saddle. With Gaussian alpha (Cor. 2) the eigenvector starts Newton steps on
   P_V u(w) = mu w with alpha moving with w (fixed points of the flow). Smooth activations: Newton on the
   Riemannian gradient from the climbing image. The multipliers are :func:`ccdyn.one_layer.kinks.multipliers`
   (the largest margin inside [0, 1], an exact linear program), as for the kink optima.
3. **Certificate** (:func:`certificate`). Residual (the sliding residual ||P_V P^perp u_0|| and the
   multiplier fit); the flow's Jacobian on V cap T_w (alpha moving; for uniform alpha p times the
   Riemannian Hessian of E restricted there) and its eigenvalues with positive real part (directions
   along which E rises); and for each active view its one-sided slopes c_i (1 - lam_i) and -c_i lam_i
   (docs/flow.md): a *ridge* (c_i < 0, lam_i in (0, 1): E falls on both sides) or a *valley*
   (c_i > 0, lam_i in (0, 1): E rises on both sides). The index (directions along which E rises) is
   the Jacobian's positive count plus the valleys; an index-1 saddle has index 1 with no zero
   eigenvalue and no multiplier at 0 or 1. Anything else is reported as not certified, with the reason.
4. **Graph** (:mod:`ccdyn.one_layer.saddle_graph`, re-exported here): the distinct certified saddles,
   union-find over them in decreasing energy (Kruskal; pele's disconnectivity graphs) gives, for every
   pair of optima, the minimax energy over paths through the saddles found, and the merge tree drawn as
   the disconnectivity graph.

On 2-D data the only paths between neighbouring maxima are the arcs, so the saddle is the minimum of
E(theta) on the arc between them: tests/one_layer/test_saddles.py checks it to 1e-8 in angle and energy
against a dense grid and bisection on dE/dtheta.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from ccdyn import parallel, sphere
from ccdyn.activations import Activation
from ccdyn.covariance import laplacian_apply
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, kinks, sliding
from ccdyn.one_layer.outcomes import Outcome
from ccdyn.one_layer.saddle_graph import barrier_matrix, classify_kind, merge_tree  # noqa: F401 (the graph, step 4)
from ccdyn.one_layer.saddle_paths import arc_angle, great_circle_paths, reparametrize  # noqa: F401 (step 1's paths)
from ccdyn.pairwise import Pairwise

__all__ = ["landscape", "on_mesh", "StringResult", "great_circle_paths", "reparametrize", "string", "refine",
           "certificate", "SaddleStatus", "barrier_matrix", "merge_tree", "classify_kind"]


# --------------------------------------------------------------------------------------------- sharding
def on_mesh(fn, ds, tree, mesh=None, lapack: bool = False):
    """``fn(ds, tree)`` with the leading (pair / saddle) axis of ``tree`` split over the devices of
    ``mesh`` (:func:`ccdyn.parallel.device_mesh`: every device of every process), ``ds`` replicated.
    ``fn`` must treat the rows independently (every stage here does: each pair's path, each saddle's
    refinement and certificate); the axis is padded with copies of its last row to a multiple of the
    devices and cut back. Returns numpy arrays, whole on every process. ``mesh`` None: ``fn`` as is.

    ``lapack``: ``fn`` makes batched LAPACK calls (the refinement's and the certificate's decompositions). On a
    mesh of several CPU devices it then runs unsplit, every row on this process's default device: the devices'
    programs run at once in one process, and their batched LAPACK calls, independent of each other, share XLA's
    CPU pool, where they can wait on each other forever (DEVELOPERS.md, "Batched LAPACK calls"; the 3-device
    saddles test hung in the refinement)."""
    if mesh is None:
        return fn(ds, tree)
    if lapack and mesh.devices.size > 1 and all(d.platform == "cpu" for d in mesh.devices.flat):
        return jax.tree.map(np.asarray, jax.jit(fn)(ds, tree))
    n_dev = mesh.devices.size
    lead = jax.tree.leaves(tree)[0].shape[0]
    pad = (-lead) % n_dev
    padded = jax.tree.map(lambda a: np.concatenate([np.asarray(a)] + [np.asarray(a)[-1:]] * pad), tree)
    spec = PartitionSpec(parallel.AXIS)
    # check_vma off: the loops inside start from replicated constants (their carries become per-device)
    run = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=(PartitionSpec(), spec), out_specs=spec, check_vma=False))
    out = run(parallel.to_global(ds, mesh, PartitionSpec()), parallel.to_global(padded, mesh, spec))
    return jax.tree.map(lambda a: a[:lead], parallel.to_host(out))


# --------------------------------------------------------------------------------------------- landscape
def landscape(ds: Dataset, act: Activation, pw: Pairwise, W):
    """The function Psi (k,) whose tangent gradient the flow follows, at every row of W (k, d): the energy
    of the landscape in which saddles and barriers are measured (docs/saddles.md, "The reading").

    Uniform alpha: Psi = E_alpha (A(w) w = dE/dw, Lemma 3). Gaussian alpha (Cor. 2): the flow holds alpha
    under stop-gradient (Eq. 2), so it is *not* the gradient flow of E_alpha(w) with alpha at w; it is the
    gradient flow of Psi(w) = tau/2 sum_ij p_i p_j (1 - exp(-(h_i - h_j)^2 / 2 tau)), h = h(w^T x0)
    (d/dw of tau (1 - exp(-D^2 / 2 tau)) is alpha_ij D dD/dw, the alpha-held derivative of alpha_ij D^2 / 2;
    docs/flow.md, "Independent check for Gaussian alpha"), and Psi -> E_uniform as tau -> inf. E_alpha at
    alpha(w) is not monotone along the flow: with it the lowest image of a path is not where the flow's
    saddle is. With augmentation the Gaussian-alpha flow has no such potential: ``ValueError``.
    For a degree-p activation the flow is p times the gradient (the same critical points)."""
    W = jnp.asarray(W, ds.x.dtype)
    if pw.kind == "uniform":
        return dynamics.energy(ds, act, W, pw)
    if ds.x_aug is not None:
        raise ValueError("alpha=gaussian with augmented views: the flow is not a gradient flow (no potential to "
                         "measure saddles and barriers in)")
    tau = jnp.asarray(pw.tau, ds.x.dtype)

    def one(w):
        f = act.h(ds.x @ w)
        return 0.5 * tau * (ds.p @ (-jnp.expm1(-(f[:, None] - f[None]) ** 2 / (2.0 * tau))) @ ds.p)

    return jax.lax.map(one, W, batch_size=min(dynamics.GAUSSIAN_BATCH, W.shape[0]))


# --------------------------------------------------------------------------------------------- string
class StringResult(NamedTuple):
    path: jax.Array  # (P, M, d) images
    energy: jax.Array  # (P, M) E at the images
    climb: jax.Array  # (P,) index of the climbing image (lowest interior image)
    perp_force: jax.Array  # (P,) largest field component across the path (non-climbing images), / max ||u||
    climb_force: jax.Array  # (P,) tangent field at the climbing image, / max ||u||


def _fields(ds, act, pw, path):
    p, m, d = path.shape
    w = path.reshape(p * m, d)
    u = dynamics.ascent(ds, act, w, pw)  # two GEMMs for every image of every pair
    e = landscape(ds, act, pw, w)
    return u.reshape(p, m, d), e.reshape(p, m)


def _path_tangent(path):
    """Unit tangent of the path at each interior image (central difference projected on T_w)."""
    inner = path[:, 1:-1]
    return sphere.normalize(sphere.tangent(inner, path[:, 2:] - path[:, :-2]))


def _forces(ds, act, pw, path):
    u, e = _fields(ds, act, pw, path)
    t = sphere.tangent(path, u)[:, 1:-1]
    tau = _path_tangent(path)
    c = jnp.argmin(e[:, 1:-1], axis=1)  # climbing image (interior index)
    along = jnp.sum(t * tau, axis=-1, keepdims=True)
    perp = t - along * tau
    scale = jnp.maximum(jnp.max(jnp.linalg.norm(u, axis=-1), axis=1), jnp.finfo(path.dtype).tiny)
    return u, e, t, tau, c, along, perp, scale


@functools.partial(jax.jit, static_argnames=("act", "pw", "n_steps", "climb_steps"))
def _string(ds, act, pw, path, *, n_steps, climb_steps, step, decay, max_move):
    def body(path, k):
        climbing = k >= n_steps - climb_steps
        _, _, t, tau, c, along, perp, scale = _forces(ds, act, pw, path)
        one_hot = jax.nn.one_hot(c, t.shape[1], dtype=bool)[..., None] & climbing
        force = jnp.where(one_hot, t - 2.0 * along * tau, t)  # the climbing image descends along the path
        # step relative to the field's scale; the climbing phase decays geometrically (by ``decay`` overall)
        frac = jnp.clip((k - (n_steps - climb_steps)) / jnp.maximum(climb_steps, 1), 0.0, 1.0)
        eta = step * jnp.where(climbing, decay ** frac, 1.0) / scale[:, None, None]
        move = eta * force
        norm = jnp.linalg.norm(move, axis=-1, keepdims=True)
        # at most max_move, and at most half the images' spacing; the climbing image (not redistributed) at
        # most half its distance to the nearer neighbour, so it never walks past one: past an end it would
        # leave the pair's path for a neighbouring arc (a narrow maximum as an end, on the circle)
        seg = arc_angle(path[:, 1:], path[:, :-1])  # (P, M - 1)
        spacing = jnp.sum(seg, axis=1) / (path.shape[1] - 1)
        near = jnp.minimum(seg[:, :-1], seg[:, 1:])[..., None]  # (P, M - 2, 1) at the interior images
        cap = jnp.minimum(max_move, 0.5 * spacing)[:, None, None]
        cap = jnp.where(one_hot, jnp.minimum(cap, 0.5 * near), cap)
        move = move * jnp.minimum(1.0, cap / jnp.maximum(norm, jnp.finfo(path.dtype).tiny))
        inner = sphere.normalize(path[:, 1:-1] + move)
        new = path.at[:, 1:-1].set(inner)
        rep = reparametrize(new)
        keep = jnp.concatenate([jnp.zeros_like(one_hot[:, :1]), one_hot, jnp.zeros_like(one_hot[:, :1])], axis=1)
        return jnp.where(keep, new, rep), None

    path, _ = jax.lax.scan(body, path, jnp.arange(n_steps))
    _, e, t, tau, c, along, perp, scale = _forces(ds, act, pw, path)
    pn = jnp.linalg.norm(perp, axis=-1)
    not_c = ~jax.nn.one_hot(c, pn.shape[1], dtype=bool)
    tc = jnp.take_along_axis(jnp.linalg.norm(t, axis=-1), c[:, None], axis=1)[:, 0]
    return StringResult(path, e, c + 1, jnp.max(jnp.where(not_c, pn, 0.0), axis=1) / scale, tc / scale)


def string(ds: Dataset, act: Activation, pw: Pairwise, path, *, n_steps: int = 2000, climb_steps: int | None = None,
           step: float = 0.2, decay: float = 0.05, max_move: float = 0.05, mesh=None) -> StringResult:
    """The string method with a climbing image for every path of ``path`` (P, M, d) (module docstring, 1).

    Args:
      n_steps: steps in all; the last ``climb_steps`` (default half) move the lowest interior image as a
        climbing image, with the step decaying geometrically to ``decay`` times ``step``.
      step: each step moves an image by step * (its tangent field) / (the largest ||A(w) w|| on its path),
        at most ``max_move`` radians and half the spacing of the images.
      mesh: the pairs split over its devices (:func:`on_mesh`); None: one device.
    """
    path = jnp.asarray(path, ds.x.dtype)
    if path.ndim != 3 or path.shape[1] < 3 or path.shape[2] != ds.dim:
        raise ValueError(f"path has shape {path.shape}; expected (pairs, images >= 3, {ds.dim})")
    if not (n_steps >= 1 and step > 0 and 0 < decay <= 1 and max_move > 0):
        raise ValueError(f"need n_steps >= 1, step > 0, decay in (0, 1], max_move > 0; got {n_steps}, {step}, "
                         f"{decay}, {max_move}")
    climb_steps = n_steps // 2 if climb_steps is None else int(climb_steps)
    def fn(d, p):
        return _string(d, act, pw, p, n_steps=int(n_steps), climb_steps=climb_steps, step=float(step),
                       decay=float(decay), max_move=float(max_move))

    return on_mesh(fn, ds, path, mesh)


# --------------------------------------------------------------------------------------------- refinement
def _moving_field(ds, act, pw, v, gates=None):
    """A(v) v with alpha moving with v (Cor. 2; what the flow's Jacobian sees); ``gates`` (N,) fix every view's
    slope (1 or h'(0-): the field of that region continued to v), None: h'(v^T x)."""
    xv, pv = ds.views()
    n, nv, _ = xv.shape
    s = act.degree * jnp.sum(pv * act.h(xv @ v), axis=1)
    ls = laplacian_apply(s, ds.p, dynamics.node_alpha(ds, act, pw, v, stop_gradient=False))
    g = act.dh(xv @ v) if gates is None else jnp.where(gates, 1.0, act.slope).reshape(n, nv)
    return jnp.einsum("nv,nvd->d", pv * g * ls[:, None], xv)


class SaddleStatus(Outcome):
    """How a saddle refinement ended (:func:`refine`'s ``status``), with ``.key`` and ``.text``: CONVERGED;
    NO_ACTIVE_SET: no candidate active set gives a stationary point in its region's closure with multipliers
    in [0, 1]; NONFINITE; NOT_CONVERGED: Newton (smooth activations) left a residual above its tolerance."""

    CONVERGED = 0, "converged"
    NO_ACTIVE_SET = 1, "no active set gives a stationary point in its region's closure"
    NONFINITE = 2, "non-finite"
    NOT_CONVERGED = 3, "Newton did not converge"


def _nearest_on_v(a, pv, w0):
    """The unit eigenvector of P_V A P_V on V nearest to w0 (sign of w0) and its eigenvalue."""
    a = 0.5 * (a + a.T)
    shift = 4.0 * jnp.linalg.norm(a) + 1.0
    d = a.shape[0]
    m = pv @ a @ pv - shift * (jnp.eye(d, dtype=a.dtype) - pv)
    ev, vec = jnp.linalg.eigh(0.5 * (m + m.T))
    on_v = ev > -0.5 * shift
    score = jnp.where(on_v, jnp.abs(w0 @ vec), -1.0)
    k = jnp.argmax(score)
    v = vec[:, k]
    return jnp.where(jnp.dot(v, w0) < 0, -v, v), ev[k]


@functools.partial(jax.jit, static_argnames=("act", "pw", "n_near", "n_fixed"))
def _refine_kinks(ds, act, pw, W, *, n_near, n_fixed, cand_tol, z_tol, lam_tol, rank_tol, span_tol):
    x = sliding.flat_views(ds)[0]
    n_flat, d = x.shape
    xn = jnp.linalg.norm(x, axis=1)
    valid = xn > 0
    m = min(n_near, n_flat)
    moving = pw.kind != "uniform"
    bits = jnp.asarray([[(s >> b) & 1 for b in range(m)] for s in range(1 << m)], bool)  # every subset

    def one(w0):
        w0 = w0 / jnp.linalg.norm(w0)
        z0 = (x @ w0) / jnp.where(valid, xn, 1.0)
        near = valid & (jnp.abs(z0) <= cand_tol)
        order = jnp.argsort(jnp.where(near, jnp.abs(z0), jnp.inf))[:m]
        sig = z0 > 0

        def with_subset(bit):  # the hyperplanes of a subset of the nearest views active
            use = bit & near[order]
            xs = x[order] * use[:, None]
            pr = kinks.range_projector(xs.T @ xs, rank_tol)
            pv = jnp.eye(d, dtype=x.dtype) - pr
            rank = jnp.round(jnp.trace(pr)).astype(jnp.int32)
            active = valid & (jnp.linalg.norm(x @ pv, axis=1) <= span_tol * xn) & (rank > 0)
            gates = sig & ~active

            # the eigenvector of P_V A_R P_V on V nearest w0, alpha at w0's projection; with alpha moving
            # (Gaussian, Cor. 2) Newton on P_V u(v) = mu v with u's Jacobian through alpha: the map
            # v <- eigenvector(alpha(v)) need not converge at a saddle (it is repelled along the unstable
            # direction), Newton converges to a critical point of either stability
            v0 = pv @ w0 / jnp.linalg.norm(pv @ w0)
            v = _nearest_on_v(kinks.region_matrix(ds, act, pw, v0, gates), pv, w0)[0]
            if moving:
                v = jax.lax.fori_loop(0, n_fixed, lambda _, v: kinks.newton_on_v(ds, act, pw, v, gates, pv), v)
            zv = (x @ v) / jnp.where(valid, xn, 1.0)
            closure = jnp.all(~valid | active | jnp.where(sig, zv >= -z_tol, zv <= z_tol))
            lam, _, _, fit = kinks.multipliers(ds, act, pw, v, active, gates, pv, rank_tol)
            lam_ok = jnp.all(~active | ((lam >= -lam_tol) & (lam <= 1.0 + lam_tol)))
            scale = jnp.linalg.norm(kinks.one_sided_field(ds, act, pw, v, gates)) + jnp.finfo(x.dtype).tiny
            wanted = jnp.all(use == bit)  # a subset naming a view that is not near is skipped
            ok = wanted & (rank < d) & closure & lam_ok & (fit <= 1e-6 * scale) & jnp.all(jnp.isfinite(v))
            return v, ok, jnp.linalg.norm(v - w0), active, gates, rank

        v, ok, dist, active, gates, rank = jax.vmap(with_subset)(bits)
        best = jnp.argmin(jnp.where(ok, dist, jnp.inf))
        found = jnp.any(ok)
        w = jnp.where(found, v[best], w0)
        status = jnp.where(~jnp.all(jnp.isfinite(w)), SaddleStatus.NONFINITE,
                           jnp.where(found, SaddleStatus.CONVERGED, SaddleStatus.NO_ACTIVE_SET))
        return {"w": w, "status": status.astype(jnp.int32), "kink_rank": jnp.where(found, rank[best], 0),
                "active": active[best] & found, "gates": gates[best], "moved": dist[best]}

    # one climbing image at a time (its 2^n_near subsets vmapped: every decomposition of a subset depends on
    # the one before, so no two batched eigh calls are independent); batching the images as well would put
    # independent batched eigh calls side by side, which can deadlock XLA's CPU pool (DEVELOPERS.md)
    return jax.lax.map(one, W)


@functools.partial(jax.jit, static_argnames=("act", "pw", "n_iter"))
def _refine_smooth(ds, act, pw, W, *, n_iter, tol):
    """Newton on the Riemannian gradient P^perp u(w) = 0 (alpha moving), from each row of W."""

    u = functools.partial(_moving_field, ds, act, pw)

    def one(w0):
        d = w0.shape[0]

        def body(_, w):
            uw, du = u(w), jax.jacfwd(u)(w)
            mu = jnp.dot(w, uw)
            p = jnp.eye(d, dtype=w.dtype) - jnp.outer(w, w)
            jac = p @ (du - mu * jnp.eye(d, dtype=w.dtype)) @ p - (jnp.abs(mu) + 1.0) * jnp.outer(w, w)
            step = p @ jnp.linalg.solve(jac, -(p @ uw))
            n = jnp.linalg.norm(step)
            step = step * jnp.minimum(1.0, 0.1 / jnp.maximum(n, jnp.finfo(w.dtype).tiny))
            return sphere.normalize(w + step)

        w = jax.lax.fori_loop(0, n_iter, body, w0 / jnp.linalg.norm(w0))
        res = jnp.linalg.norm(sphere.tangent(w, u(w))) / (jnp.linalg.norm(u(w)) + jnp.finfo(w.dtype).tiny)
        status = jnp.where(~jnp.all(jnp.isfinite(w)), SaddleStatus.NONFINITE,
                           jnp.where(res <= tol, SaddleStatus.CONVERGED, SaddleStatus.NOT_CONVERGED))
        n = sliding.flat_views(ds)[0].shape[0]
        return {"w": w, "status": status.astype(jnp.int32), "kink_rank": jnp.int32(0),
                "active": jnp.zeros((n,), bool), "gates": jnp.ones((n,), bool), "moved": jnp.linalg.norm(w - w0)}

    return jax.lax.map(one, W, batch_size=min(64, W.shape[0]))


def refine(ds64: Dataset, act: Activation, pw: Pairwise, W, *, n_near: int = 6, cand_tol: float = 1e-2,
           z_tol: float = 1e-12, lam_tol: float = 1e-9, rank_tol: float = 1e-10, span_tol: float = 1e-8,
           n_fixed: int | None = None, mesh=None) -> dict:
    """Exact saddles near the climbing images W (k, d), float64 (module docstring, 2).

    Args:
      n_near: the candidate active sets are the 2^n_near subsets of the n_near views nearest each row
        within ``cand_tol`` (relative |w^T x_i| / ||x_i||) of their hyperplanes.
      z_tol: an inactive view may be this far on the wrong side of its region (relative).
      lam_tol: multipliers in [-lam_tol, 1 + lam_tol] are accepted.
      n_fixed: Gaussian alpha: Newton steps with alpha moving, from the eigenvector with alpha at the
        climbing image's projection (default 30); uniform alpha: unused (the eigenvector is exact).
      mesh: the rows split over its devices (:func:`on_mesh`); None: one device.

    Returns per row: ``w``, ``status`` (:class:`SaddleStatus`), ``kink_rank``
    (the rank of the active views), ``active`` (k, N) the views on their intersection, ``gates`` the
    region's side of every view, ``moved`` ||w - w_climb||.
    """
    W = jnp.asarray(W, ds64.x.dtype)
    if W.ndim != 2 or W.shape[1] != ds64.dim or W.shape[0] == 0:
        raise ValueError(f"W has shape {W.shape}; expected (k >= 1, {ds64.dim})")
    if not kinks.has_kinks(act):
        return on_mesh(lambda d, w: _refine_smooth(d, act, pw, w, n_iter=50, tol=1e-10), ds64, W, mesh, lapack=True)
    n_fixed = (1 if pw.kind == "uniform" else 30) if n_fixed is None else int(n_fixed)
    return on_mesh(lambda d, w: _refine_kinks(d, act, pw, w, n_near=int(n_near), n_fixed=n_fixed, cand_tol=cand_tol,
                                              z_tol=z_tol, lam_tol=lam_tol, rank_tol=rank_tol, span_tol=span_tol),
                   ds64, W, mesh, lapack=True)


# --------------------------------------------------------------------------------------------- certificate
@functools.partial(jax.jit, static_argnames=("act", "pw"))
def _certificate(ds, act, pw, ref, tol, plane_tol, rank_tol):
    x = sliding.flat_views(ds)[0]
    d = x.shape[1]
    xn = jnp.linalg.norm(x, axis=1)
    valid = xn > 0
    kinked = kinks.has_kinks(act)

    def one(w, active, gates):
        xa = x * active[:, None]
        pv = jnp.eye(d, dtype=w.dtype) - kinks.range_projector(xa.T @ xa, rank_tol)
        if kinked:
            lam, c, u0, fit = kinks.multipliers(ds, act, pw, w, active, gates, pv, rank_tol)
            field = functools.partial(_moving_field, ds, act, pw, gates=gates)
        else:
            lam = c = jnp.zeros((x.shape[0],), w.dtype)
            fit = jnp.zeros((), w.dtype)
            field = functools.partial(_moving_field, ds, act, pw)
            u0 = field(w)
        mu = jnp.dot(w, u0)
        scale = jnp.linalg.norm(u0) + jnp.abs(mu) + jnp.finfo(w.dtype).tiny
        residual = (jnp.linalg.norm(pv @ u0 - mu * w) + fit) / scale
        plus, minus = c * (1.0 - lam) * xn, c * lam * xn  # slopes of E leaving to the + / - side
        ridge = active & (plus < -tol * scale) & (minus < -tol * scale)
        valley = active & (plus > tol * scale) & (minus > tol * scale)
        degenerate = active & ~ridge & ~valley
        du = jax.jacfwd(field)(w)
        p = pv - jnp.outer(w, w)
        dim = jnp.round(jnp.trace(p)).astype(jnp.int32)
        shift = 4.0 * (jnp.linalg.norm(du) + jnp.abs(mu)) + scale
        jac = p @ (du - mu * jnp.eye(d, dtype=w.dtype)) @ p - shift * (jnp.eye(d, dtype=w.dtype) - p)
        ev = jnp.linalg.eigvals(jac).real
        in_t = ev > -0.5 * shift
        n_up = jnp.sum(in_t & (ev > tol * scale))
        n_zero = jnp.sum(in_t & (jnp.abs(ev) <= tol * scale))
        sym = 0.5 * (jac + jac.T)
        sev, svec = jnp.linalg.eigh(sym)
        n_valley = jnp.sum(valley)
        jv = jnp.argmax(jnp.where(valley, xn, -1.0))
        kink_dir = sphere.normalize(sphere.tangent(w, x[jv]))
        direction = jnp.where(n_valley > 0, kink_dir, svec[:, -1])
        z = (x @ w) / jnp.where(valid, xn, 1.0)
        inactive = valid & ~active
        closure = jnp.all(~inactive | jnp.where(gates, z >= -plane_tol, z <= plane_tol)) | (not kinked)
        stray = jnp.any(inactive & (jnp.abs(z) <= plane_tol)) & kinked
        return {"residual": residual, "jacobian_eigs": jnp.where(in_t, ev, jnp.nan) / scale, "tangent_dim": dim,
                "n_up": n_up, "n_zero": n_zero, "n_ridge": jnp.sum(ridge), "n_valley": n_valley,
                "n_degenerate": jnp.sum(degenerate), "index": n_up + n_valley, "closure": closure, "stray": stray,
                "multipliers": lam, "gate_coefficients": c, "unstable_direction": direction,
                "energy": landscape(ds, act, pw, w[None])[0], "scale": scale}

    # one saddle at a time: vmapped, the batched float64 eigh / eig calls of independent branches (the
    # Jacobian's eigenvalues and its symmetric part's eigenvectors) can run at once on XLA's CPU pool and,
    # with 2 threads, wait on each other forever (DEVELOPERS.md)
    return jax.lax.map(lambda a: one(*a), (ref["w"], ref["active"], ref["gates"]))


def certificate(ds64: Dataset, act: Activation, pw: Pairwise, ref: dict, *, tol: float = 1e-8,
                plane_tol: float = 1e-10, rank_tol: float = 1e-10, mesh=None) -> list:
    """Certificates of refined saddles (:func:`refine`'s output), float64, one dict per saddle (module
    docstring, 3): ``certified`` (an index-1 saddle) or ``note`` (why not), with the numbers behind it.
    ``unstable_direction`` is the direction along which E rises (the eigenvector, or the valley's normal);
    ``jacobian_eigs`` are relative to ``scale`` = ||u_0|| + |mu|. When a view looks flat on one side
    (a multiplier at 0 or 1) and the active views are dependent, that holds for every solution of the Clarke
    condition: the multipliers are the solution farthest inside the box (``multiplier_margin``).
    ``mesh``: the saddles split over its devices (:func:`on_mesh`)."""
    rows_in = {k: ref[k] for k in ("w", "active", "gates")}
    out = jax.device_get(on_mesh(lambda d, r: _certificate(d, act, pw, r, tol, plane_tol, rank_tol), ds64, rows_in,
                                 mesh, lapack=True))
    status = np.asarray(ref["status"])
    rows = []
    for i in range(status.shape[0]):
        g = {k: v[i] for k, v in out.items()}
        act_idx = np.flatnonzero(np.asarray(ref["active"])[i])
        lam_a = np.asarray(g["multipliers"])[act_idx]
        margin = float(np.min(np.minimum(lam_a, 1.0 - lam_a))) if act_idx.size else None
        note = ""
        if status[i] != SaddleStatus.CONVERGED:
            note = f"refinement: {SaddleStatus(int(status[i])).text}"
        elif not np.isfinite(g["energy"]) or not np.isfinite(g["residual"]):
            note = "non-finite"
        elif g["residual"] > 1e3 * tol:
            note = f"not stationary (residual {g['residual']:.1e})"
        elif not g["closure"] or g["stray"]:
            note = "a view outside the active set lies on its hyperplane" if g["stray"] else "outside its region"
        elif g["n_degenerate"]:
            note = (f"{int(g['n_degenerate'])} active view(s) with a multiplier at 0 or 1 in every solution of the "
                    "Clarke condition (flat to first order on one side)")
        elif g["n_zero"]:
            note = f"{int(g['n_zero'])} zero eigenvalue(s) of the Jacobian on the active intersection"
        elif g["index"] != 1:
            note = (f"index {int(g['index'])} ({int(g['n_up'])} rising eigen-direction(s), {int(g['n_valley'])} "
                    f"valley kink(s)), not 1")
        eigs = np.asarray(g["jacobian_eigs"])
        rows.append({"certified": note == "", "note": note, "energy": float(g["energy"]),
                     "residual": float(g["residual"]), "index": int(g["index"]), "n_up": int(g["n_up"]),
                     "n_valley": int(g["n_valley"]), "n_ridge": int(g["n_ridge"]),
                     "kink_rank": int(np.asarray(ref["kink_rank"])[i]), "active_views": act_idx.tolist(),
                     "multipliers": np.asarray(g["multipliers"])[act_idx].tolist(),
                     "gate_coefficients": np.asarray(g["gate_coefficients"])[act_idx].tolist(),
                     "jacobian_eigs": np.sort(eigs[np.isfinite(eigs)])[::-1].tolist(),
                     "scale": float(g["scale"]), "tangent_dim": int(g["tangent_dim"]),
                     "unstable_direction": np.asarray(g["unstable_direction"]),
                     "moved": float(np.asarray(ref["moved"])[i]), "multiplier_margin": margin})
    return rows
