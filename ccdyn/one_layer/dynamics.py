"""One-layer contrastive dynamics (Sec. 3) on an exact population, batched over initializations.

For a node f = h(w^T x) with a homogeneous activation of degree p (h'(x) x = p h(x)):

- gated input (Eq. 6): x~^w = x h'(w^T x), averaged over the augmented views of each support point
  (Lemma 2: with augmentation the population C_alpha acts on E_aug[g(x) | x0]);
- A(w) = C_alpha[x~^w] (Lemma 3), E_alpha(w) = 1/2 C_alpha[h(w^T x)] = w^T A(w) w / (2 p^2)
  (Eq. 6: h = w^T x~ / p);
- the ascent field u(w) = C_alpha[x~^w, p h(w^T x)] = A(w) w (Lemma 3, and p * grad E);
- the flow dw/dt = P_w^perp A(w) w (Eq. 7) and power iteration w <- A(w) w / ||A(w) w|| (Eq. PI),
  with the shift A - lambda_min I + eps I of App. B.4 available when A(w) is not PSD.

For a non-homogeneous activation (tanh, gelu, a user's softplus: :func:`ccdyn.activations.custom_activation`)
the field u(w) = C_alpha[x~^w, h(w^T x)] is the gradient of E_{sg(alpha)} (not A(w) w: the two agree only
when z h'(z) = h(z)), so the flow is still gradient ascent; power iteration is refused. Every consumer of
"the field" (the flow's steps and stopping test, :mod:`ccdyn.one_layer.stepper`, the certificates'
residual and flow Jacobian, :mod:`ccdyn.one_layer.certify`) uses this u, never A(w) w.

Batched math: the inits are the rows of W (k, d). u(W) is two GEMMs with the init axis first,
Z = W X^T and U = (h'(Z) o S L) X, where S holds p h(Z) and L is the population Laplacian of
:func:`ccdyn.covariance.laplacian_apply`; no per-init d x d matrix is built. Init-first is several
times faster on CPU than contracting over the leading axis of a (points, inits) matrix
(benchmarks/bench_basins.py). Dense A(w) is only built on request (:func:`a_matrix`, certification).
Gaussian alpha (Cor. 2) depends on w: it costs O(k n^2) time per call, O(GAUSSIAN_BATCH n^2) memory, or,
when the Pairwise carries a bound on the node's range (``feature_range``, set by the engine's runner),
O(k n K) through Lemma 1's K centred features (:func:`ccdyn.one_layer.gaussian_kernel.taylor_laplacian_rows`),
K chosen so that truncating moves no entry of alpha by more than the dtype's unit roundoff (K = 29 for a
range of 5 at tau = 1 in float32), wherever 4 K <= n.

alpha is held under stop_gradient everywhere (Eq. 2).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.activations import Activation, get_activation
from ccdyn.covariance import laplacian_apply
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import fused_ascent, gaussian_kernel
from ccdyn.pairwise import Pairwise, get_pairwise

__all__ = [
    "UNIFORM", "check_w", "node_alpha", "gated_input", "a_matrix", "a_matrices", "field_jacobian", "ascent", "energy",
    "energy_given_alpha", "flow_update", "power_update", "flow_step", "power_step", "min_eigenvalue", "flow",
    "power_iteration", "features", "laplacian_rows", "taylor_order",
]

UNIFORM = Pairwise("uniform")
GAUSSIAN_BATCH = 16  # inits whose (n, n) Gaussian alpha is held in memory at once
TAYLOR_ELEMENTS = 1 << 22  # features of the Gaussian alpha's Taylor path held in memory at once


def check_w(ds: Dataset, w, ndim: int, name: str = "w") -> None:
    if w.ndim != ndim or w.shape[-1] != ds.dim:
        want = f"(n_init, {ds.dim})" if ndim == 2 else f"({ds.dim},)"
        raise ValueError(f"{name} has shape {w.shape}; expected {want} for data of dimension {ds.dim}")


def _views_flat(ds: Dataset):
    xv, pv = ds.views()
    n, v, d = xv.shape
    return xv.reshape(n * v, d), pv, (n, v)


def node_alpha(ds: Dataset, act: Activation, pairwise: Pairwise, w, stop_gradient: bool = True):
    """alpha for one node w (d,): ``None`` for uniform, else Gaussian alpha from h(w^T x0) (Cor. 2)."""
    if pairwise.kind == "uniform":
        return None
    return pairwise.matrix(act.h(ds.x @ w), stop_gradient)


def _in_batches(fn, a, b, batch: int):
    """fn(a, b) on row blocks of ``batch`` rows ((k, n) each; the last block of each padded with its first row).
    Not ``lax.map``'s ``batch_size``, which runs the remainder at another shape: every block here has one
    shape, so a row's rounding does not depend on where it falls (docs/reproducibility.md)."""
    k = a.shape[0]
    if k <= batch:
        return fn(a, b)
    blocks = -(-k // batch)
    pad = lambda v: jnp.concatenate([v, jnp.broadcast_to(v[:1], (blocks * batch - k,) + v.shape[1:])])
    out = jax.lax.map(lambda ab: fn(*ab), (pad(a).reshape(blocks, batch, -1), pad(b).reshape(blocks, batch, -1)))
    return out.reshape(blocks * batch, -1)[:k]


def taylor_order(pairwise: Pairwise, dtype, n: int) -> int | None:
    """K, the number of Lemma 1 features that apply the Gaussian alpha of ``pairwise`` to n points in
    ``dtype``, truncated where no entry moves by more than the unit roundoff (``None``: the dense kernel,
    for uniform alpha, for a Pairwise without ``feature_range``, or where 4 K > n)."""
    if pairwise.kind != "gaussian" or pairwise.feature_range is None:
        return None
    x_bound = (0.5 * pairwise.feature_range) ** 2 / pairwise.tau
    order = gaussian_kernel.taylor_order(x_bound, 0.5 * float(jnp.finfo(dtype).eps))
    return order if order is not None and gaussian_kernel.TAYLOR_SHARE * order <= n else None


def laplacian_rows(ds: Dataset, act: Activation, pairwise: Pairwise, W, S):
    """(L_alpha(w_k) S[k])_k for every init k (S: (k_inits, n)); alpha depends on w for Gaussian."""
    if pairwise.kind == "uniform":  # laplacian_apply(S.T, p).T, written row-wise for XLA fusion
        return ds.p * (S - (S @ ds.p)[:, None])
    F0 = act.h(W @ ds.x.T)  # un-augmented outputs (k, n)
    order = taylor_order(pairwise, F0.dtype, ds.x.shape[0])
    if order is not None:  # (order, batch, n) features in memory at once
        rows = lambda f0, s: gaussian_kernel.taylor_laplacian_rows(f0, s, ds.p, pairwise.tau, order)
        return _in_batches(rows, F0, S, max(1, TAYLOR_ELEMENTS // (order * ds.x.shape[0])))

    def one(rows):
        f0, s = rows
        return laplacian_apply(s, ds.p, pairwise.matrix(f0))

    # alpha is an (n, n) matrix per init: map over inits in small batches to bound memory.
    return jax.lax.map(one, (F0, S), batch_size=GAUSSIAN_BATCH)


def features(ds: Dataset, fn, W):
    """fn(Z) averaged over the views of each support point, (k, n), with Z = W X^T (init axis first);
    also returns Z as (k, n, V) (or (k, n) without augmentation) and the flat views X."""
    x, pv, (n, v) = _views_flat(ds)
    z = W @ x.T
    if ds.x_aug is None:
        return fn(z), z, x
    z = z.reshape(-1, n, v)
    return jnp.einsum("nv,knv->kn", pv, fn(z)), z, x


def ascent(ds: Dataset, act: Activation, W, pairwise: Pairwise = UNIFORM):
    """u(w) = C_alpha[x~^w, p h(w^T x)] for every row w of W (k, d) -> (k, d).

    Equals A(w) w = p grad E_{sg(alpha)}(w) (Lemma 3) for a homogeneous activation of degree p, and
    grad E_{sg(alpha)}(w) (alpha under stop-gradient, Eq. 2) for a non-homogeneous one. Two GEMMs with the
    init axis first: Z = W X^T, then U = G X; on a CUDA GPU, where :func:`fused_ascent.applies`, one fused
    kernel that never writes the activations (:mod:`ccdyn.one_layer.fused_ascent`).
    """
    check_w(ds, W, 2, "W")
    if fused_ascent.applies(ds, act, pairwise, W):  # one fused kernel on a CUDA GPU, these GEMMs elsewhere
        fused = lambda W: fused_ascent.ascent(ds.x, ds.p, W, act, fused_ascent.BLOCKS)
        return jax.lax.platform_dependent(W, cuda=fused, default=lambda W: _ascent_xla(ds, act, W, pairwise))
    return _ascent_xla(ds, act, W, pairwise)


def _ascent_xla(ds: Dataset, act: Activation, W, pairwise: Pairwise):
    s, z, x = features(ds, lambda z: act.degree * act.h(z), W)
    ls = laplacian_rows(ds, act, pairwise, W, s)
    if ds.x_aug is None:
        g = act.dh(z) * ls
    else:
        assert ds.p_aug is not None  # make_dataset sets the view probabilities with the views
        g = (act.dh(z) * ds.p_aug[None] * ls[:, :, None]).reshape(W.shape[0], -1)
    return g @ x


def energy_given_alpha(ds: Dataset, act: Activation, w, alpha=None):
    """E_alpha(w) = 1/2 C_alpha[h(w^T x)] for one w (d,) with a given alpha (n, n) or None (uniform).

    Differentiable in w with alpha held fixed: this is the E_{sg(alpha)} of Eq. 2.
    """
    x, pv, (n, v) = _views_flat(ds)
    f = jnp.sum(pv * act.h((x @ w).reshape(n, v)), axis=1)
    return 0.5 * jnp.sum(f * laplacian_apply(f, ds.p, alpha))


def energy(ds: Dataset, act: Activation, W, pairwise: Pairwise = UNIFORM):
    """E_alpha(w) for every row w of W (k, d) -> (k,), alpha evaluated at w (Cor. 2)."""
    check_w(ds, W, 2, "W")
    f, _, _ = features(ds, act.h, W)
    return 0.5 * jnp.sum(f * laplacian_rows(ds, act, pairwise, W, f), axis=1)


def gated_input(ds: Dataset, act: Activation, w):
    """View-averaged gated input E_aug[x h'(w^T x) | x0_i] (Eq. 6) for one w (d,) -> (n, d)."""
    check_w(ds, w, 1)
    xv, pv = ds.views()
    return jnp.einsum("nv,nvd->nd", pv * act.dh(xv @ w), xv)


def a_matrix(ds: Dataset, act: Activation, w, pairwise: Pairwise = UNIFORM):
    """Dense A(w) = C_alpha[x~^w] (d, d) for one w (Lemma 3), alpha evaluated at w."""
    g = gated_input(ds, act, w)
    return g.T @ laplacian_apply(g, ds.p, node_alpha(ds, act, pairwise, w))


@functools.partial(jax.jit, static_argnames=("act", "pairwise"))
def a_matrices(ds: Dataset, act: Activation, W, pairwise: Pairwise = UNIFORM):
    """Dense A(w) for every row of W (k, d) -> (k, d, d), alpha at each w; one compile per shape."""
    return jax.vmap(lambda w: a_matrix(ds, act, w, pairwise))(W)


def field_jacobian(ds: Dataset, act: Activation, w, pairwise: Pairwise = UNIFORM):
    """Jacobian of the flow field P^perp u(w) on the sphere at a fixed point w (Eq. 7), in a tangent basis Q:

        J = Q^T (d/dw u(w)) Q - (w^T u(w)) I,

    with u the ascent field of :func:`ascent` (A(w) w for a homogeneous h, grad E for any other) and
    the derivative taken *through* alpha(w) as well (the flow sees alpha move with w; only its
    update direction treats alpha as a constant). w is a linearly stable fixed point of the flow
    when every eigenvalue of J has a negative real part. For uniform alpha and an activation of
    degree p, J = p times the Riemannian Hessian of E (:mod:`ccdyn.one_layer.certify`).
    """

    xv, pv = ds.views()

    def u(v):  # u(v) = C_alpha(v)[x~^v, p h(v^T x)] (A(v) v if homogeneous), alpha differentiable in v
        s = act.degree * jnp.sum(pv * act.h(xv @ v), axis=1)
        alpha = node_alpha(ds, act, pairwise, v, stop_gradient=False)
        return gated_input(ds, act, v).T @ laplacian_apply(s, ds.p, alpha)

    q = sphere.tangent_basis(w)
    return q.T @ jax.jacfwd(u)(w) @ q - jnp.dot(w, u(w)) * jnp.eye(q.shape[1], dtype=w.dtype)


def flow_update(W, t, eta, fallback=None):
    """The flow's Euler step with retraction: normalize(w + eta t) for tangent t = P^perp A(w) w."""
    return sphere.normalize(W + eta * t, fallback)


def power_update(W, u, shift, fallback=None):
    """The power-iteration step (Eq. PI, App. B.4 shift s): normalize(A(w) w + s w), u = A(w) w."""
    return sphere.normalize(u + shift * W, fallback)


def flow_step(ds: Dataset, act: Activation, W, step_size, pairwise: Pairwise = UNIFORM):
    """One Euler step of dw/dt = P_w^perp A(w) w (Eq. 7) with retraction to the sphere.

    Returns:
      (W_next, residual): W_next = normalize(w + step_size P^perp u(w)) and the residual
      ||P_w^perp u(w)|| at the input W, both per init.
    """
    t = sphere.tangent(W, ascent(ds, act, W, pairwise))
    return flow_update(W, t, step_size), jnp.linalg.norm(t, axis=1)


def power_step(ds: Dataset, act: Activation, W, pairwise: Pairwise = UNIFORM, shift=0.0):
    """One power-iteration step w <- (A(w) + shift I) w / ||.|| (Eq. PI; App. B.4 for the shift).

    Args:
      shift: scalar or per-init (k,) shift s; App. B.4 uses s = eps - lambda_min(A(w)) (see
        :func:`min_eigenvalue`). The fixed points do not depend on s (Eq. 104).

    Returns:
      (W_next, residual): as :func:`flow_step`.
    """
    if not act.homogeneous:
        raise ValueError(
            f"power iteration needs a homogeneous activation (A(w) w is then the gradient); "
            f"act={act.name!r} is not: use the flow"
        )
    u = ascent(ds, act, W, pairwise)
    shift = jnp.asarray(shift, W.dtype)
    shift = shift[:, None] if shift.ndim == 1 else shift
    return power_update(W, u, shift), jnp.linalg.norm(sphere.tangent(W, u), axis=1)


def min_eigenvalue(ds: Dataset, act: Activation, W, pairwise: Pairwise = UNIFORM):
    """lambda_min(A(w)) for every row of W (dense A per init: for certification and the B.4 shift)."""
    check_w(ds, W, 2, "W")
    return jnp.linalg.eigvalsh(a_matrices(ds, act, W, pairwise))[:, 0]


def _run(step, W, n_steps: int):
    def body(w, _):
        w_next, res = step(w)
        return w_next, (jnp.linalg.norm(w_next - w, axis=1), res)

    w_final, (moves, residuals) = jax.lax.scan(body, W, None, length=n_steps)
    return w_final, moves, residuals


def flow(ds: Dataset, act, W, *, step_size: float, n_steps: int, pairwise=UNIFORM):
    """n_steps of :func:`flow_step` in one ``lax.scan``.

    Returns:
      (W_final, moves, residuals): moves[t] = ||w(t+1) - w(t)|| and residuals[t] = ||P^perp u(w(t))||,
      each (n_steps, k).
    """
    act, pairwise = get_activation(act), get_pairwise(pairwise)
    if not step_size > 0:
        raise ValueError(f"step_size={step_size} must be > 0")
    return _run(lambda w: flow_step(ds, act, w, step_size, pairwise), W, int(n_steps))


def power_iteration(ds: Dataset, act, W, *, n_steps: int, pairwise=UNIFORM, shift=0.0, eps=1e-6):
    """n_steps of power iteration (Eq. PI) in one ``lax.scan``; outputs as :func:`flow`.

    Args:
      shift: a constant shift, or ``"b4"`` for the per-step shift eps - lambda_min(A(w)) of
        App. B.4 (dense eigenvalues per init and step: only for small d).
    """
    act, pairwise = get_activation(act), get_pairwise(pairwise)
    if isinstance(shift, str):
        if shift != "b4":
            raise ValueError(f"shift={shift!r} must be a number or 'b4'")
        step = lambda w: power_step(ds, act, w, pairwise, eps - min_eigenvalue(ds, act, w, pairwise))
    else:
        step = lambda w: power_step(ds, act, w, pairwise, shift)
    return _run(step, W, int(n_steps))
