"""NT-Xent losses on weighted point sets: the generalized loss of Eq. 4-5, the original Eq. 1 and the
latent form of Prop. 2.1.

Equation numbers refer to *Understanding Contrastive Learning through Variational Analysis and Neural
Network Optimization Perspectives* (the SimCLR variational-analysis paper). A distribution is a set of
support points with probabilities ``p`` (a discrete measure; a sample of a continuous one is the
empirical measure, ``p = 1/n``); augmentations are ``V`` views per support point with probabilities
``q``, i.e. ``z`` of shape (n, V, d) holds f(T_v(x_i)).

Pairwise squared distances come in two forms, argument ``dists`` (docs/variational.md):
  "gemm" (default): |a|^2 + |b|^2 - 2 a b^T, one GEMM, no (n, m, d) tensor for the values. Its value error
          is absolute, about eps (|a|^2 + |b|^2), fine at moderate tau. Its derivatives are exact: a custom
          JVP writes the tangent over the differences, 2 (a_i - b_j) . (da_i - db_j), and the rule calls
          the GEMM form again for its primal, so every order of derivative goes through it. Naive autodiff
          of the GEMM would pass the self term's (x = y, distance 0, weight O(1)) cotangents through
          |a|^2, |b|^2 and the GEMM, where they cancel only to eps and swamp the interactions
          exp(-||a - b||^2 / 2 tau) of distinct points (1e-87 at tau = 0.01 for antipodal points) in the
          Hessian; the tangent over the differences is exactly 0 for x = y. Derivatives form an (n, m, d)
          tensor.
  "diff": sum_k (a_ik - b_jk)^2 over the differences: relative accuracy for the values too, exactly 0
          for x = y; it forms an (n, m, d) tensor for the values as well.

Readings (docs/variational.md): Eq. 4 keeps the y = x term (the paper drops the indicator); Eq. 1's
1_{x != y} is applied in one of three ways, ``exclude``:
  "none": 1 a.e., the reading for an absolutely continuous mu (x = y has probability 0);
  "self": on a discrete measure, y = x means the same support point: the atom's own mass p_i is removed;
  "atom": as "self", but on the embedded points: every y at the same place as x is removed (what the
          indicator does when it is written on the latent measure f#mu, as in Prop. 2.1).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

__all__ = ["sq_dists", "sq_dists_diff", "pairwise_sq_dists", "DISTS", "cosine", "log1p_psi", "gaussian_eta",
           "eq4_loss", "eq4_loss_views", "eq1_loss_views", "latent_loss", "EXCLUDE", "eq4_grad_hessian"]

EXCLUDE = ("none", "self", "atom")
DISTS = ("gemm", "diff")


@jax.custom_jvp
def _gemm_sq_dists(a, b):
    return jnp.sum(a * a, -1)[:, None] + jnp.sum(b * b, -1)[None, :] - 2.0 * a @ b.T


@_gemm_sq_dists.defjvp
def _gemm_sq_dists_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    # the primal through the custom function again, so that a derivative of this rule (second and
    # higher orders) uses the rule too; the tangent over the differences: exactly 0 where a_i = b_j
    out = _gemm_sq_dists(a, b)
    diff = a[:, None, :] - b[None, :, :]
    return out, 2.0 * jnp.sum(diff * (da[:, None, :] - db[None, :, :]), -1)


def sq_dists(a, b=None):
    """||a_i - b_j||^2 (shapes (n, d), (m, d) -> (n, m)): the value as one GEMM (absolute error about
    eps (|a_i|^2 + |b_j|^2)), every derivative exact (a custom JVP over the differences a_i - b_j, module
    docstring): tangents are exactly 0 for the pairs a_i = b_j, so Hessians of Eq. 4 keep relative
    accuracy at any tau. Use :func:`sq_dists_diff` where the values themselves need relative accuracy."""
    return _gemm_sq_dists(a, a if b is None else b)


def sq_dists_diff(a, b=None):
    """||a_i - b_j||^2 summed over the coordinates of the difference (an (n, m, d) tensor): relative
    accuracy (d + 1) eps for the values too, exactly 0 with exactly zero first and second derivatives when
    a_i and b_j are the same entry."""
    b = a if b is None else b
    diff = a[:, None, :] - b[None, :, :]
    return jnp.sum(diff * diff, -1)


def pairwise_sq_dists(a, b=None, dists: str = "gemm"):
    """:func:`sq_dists` (``dists="gemm"``) or :func:`sq_dists_diff` (``dists="diff"``)."""
    if dists == "gemm":
        return sq_dists(a, b)
    if dists == "diff":
        return sq_dists_diff(a, b)
    raise ValueError(f"dists must be one of {', '.join(DISTS)}, got {dists!r}")


def cosine(a, b=None):
    """Cosine similarities (Eq. 2) of the rows of a and b as one GEMM."""
    b = a if b is None else b
    na = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    nb = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    return na @ nb.T


def log1p_psi(t):
    """Psi(t) = log(1 + t), the default of Eq. 4 (Sec. 2)."""
    return jnp.log1p(t)


def gaussian_eta(tau: float):
    """eta(t) = exp(-t / tau), so eta_f(x, y) = exp(-||f(x) - f(y)||^2 / (2 tau)) (Eq. 5)."""
    return lambda t: jnp.exp(-t / tau)


@functools.partial(jax.jit, static_argnames=("psi", "eta", "dists"))
def eq4_loss(z, p, tau: float = 0.5, psi=log1p_psi, eta=None, dists: str = "gemm"):
    """Eq. 4 for an invariant map (T = T' = Id): sum_i p_i Psi(sum_j p_j eta(||z_i - z_j||^2 / 2) / eta(0)).

    The default eta's exponentials exp(-||z_i - z_j||^2 / 2 tau) are formed from the distances directly
    (no exp(cos / tau) / exp(1 / tau) ratio, no 1 - cos): each keeps the relative accuracy of its distance.

    Args:
      z: (n, d) embedded support points (on S^{d-1} for the constraint set C of Sec. 2, or anywhere).
      p: (n,) probabilities.
      tau: temperature of the default eta (ignored when ``eta`` is given).
      dists: "gemm" (values by one GEMM, exact derivatives of every order) or "diff" (values by the
        differences too; module docstring).
    """
    chex.assert_rank(z, 2)
    chex.assert_shape(p, (z.shape[0],))
    eta = gaussian_eta(tau) if eta is None else eta
    g = eta(0.5 * pairwise_sq_dists(z, dists=dists)) @ p / eta(jnp.zeros((), z.dtype))
    return jnp.dot(p, psi(g))


@functools.partial(jax.jit, static_argnames=("psi", "eta", "dists"))
def eq4_loss_views(z, p, q, tau: float = 0.5, psi=log1p_psi, eta=None, dists: str = "gemm"):
    """Eq. 4 with augmentations: E_{x, T=v, T'=v'} Psi(E_y eta_f(T x, T' y) / eta_f(T x, T' x)).

    Args:
      z: (n, V, d), z[i, v] = f(T_v(x_i)); p: (n,) support probabilities; q: (V,) view probabilities;
      dists: as in :func:`eq4_loss`.
    """
    chex.assert_rank(z, 3)
    chex.assert_shape(p, (z.shape[0],))
    chex.assert_shape(q, (z.shape[1],))
    eta = gaussian_eta(tau) if eta is None else eta
    zv = jnp.swapaxes(z, 0, 1)  # (V, n, d)

    def pair(a, b):  # views v (of x) and v' (of y and of the positive)
        e = eta(0.5 * pairwise_sq_dists(a, b, dists))
        return psi((e @ p) / jnp.diagonal(e)) @ p

    terms = jax.vmap(lambda a: jax.vmap(lambda b: pair(a, b))(zv))(zv)  # (V, V)
    return q @ terms @ q


def _mask(z_first_view, exclude: str):
    n = z_first_view.shape[0]
    if exclude == "none":
        return jnp.ones((n, n), z_first_view.dtype)
    if exclude == "self":
        return 1.0 - jnp.eye(n, dtype=z_first_view.dtype)
    if exclude == "atom":
        same = sq_dists(z_first_view) <= 1e-12 * jnp.max(jnp.sum(z_first_view ** 2, -1))
        return 1.0 - same.astype(z_first_view.dtype)
    raise ValueError(f"exclude must be one of {', '.join(EXCLUDE)}, got {exclude!r}")


@functools.partial(jax.jit, static_argnames=("exclude",))
def eq1_loss_views(z, p, q, tau: float = 0.5, exclude: str = "self"):
    """The original NT-Xent of Eq. 1 on a discrete measure with views:

    E_{x, T=v, T'=v'} log(1 + sum_{h in {T, T'}} E_y[1_{x != y} exp(sim(T x, h y) / tau)] / exp(sim(T x, T' x) / tau)),

    with 1_{x != y} read as ``exclude`` (module docstring; "atom" compares the first view's embeddings).
    """
    chex.assert_rank(z, 3)
    chex.assert_shape(p, (z.shape[0],))
    chex.assert_shape(q, (z.shape[1],))
    m = _mask(z[:, 0], exclude) * p[None, :]
    zv = jnp.swapaxes(z, 0, 1)

    def pair(a, b):
        s_same, s_other = cosine(a, a), cosine(a, b)
        num = (jnp.exp(s_same / tau) * m).sum(1) + (jnp.exp(s_other / tau) * m).sum(1)
        return jnp.log1p(num / jnp.exp(jnp.diagonal(s_other) / tau)) @ p

    terms = jax.vmap(lambda a: jax.vmap(lambda b: pair(a, b))(zv))(zv)
    return q @ terms @ q


@functools.partial(jax.jit, static_argnames=("exclude", "positive"))
def latent_loss(u, r, tau: float = 0.5, exclude: str = "none", positive: bool = True):
    """Prop. 2.1's latent form: E_{x~rho} log(1 + 2 E_{y~rho}[1_{x != y} exp(sim(x, y)/tau)] / c),

    rho = sum_k r_k delta_{u_k}. ``positive=True`` keeps the positive pair's denominator of Eq. 1,
    c = exp(sim(x, x) / tau) = exp(1 / tau), which an invariant map leaves in place; ``positive=False``
    is the formula as printed in Prop. 2.1 (c = 1).
    """
    chex.assert_rank(u, 2)
    chex.assert_shape(r, (u.shape[0],))
    m = _mask(u, exclude) * r[None, :]
    c = jnp.exp(1.0 / tau) if positive else 1.0
    return jnp.log1p(2.0 * (jnp.exp(cosine(u) / tau) * m).sum(1) / c) @ r


@jax.jit
def eq4_grad_hessian(z, p, tau):
    """Gradient and Hessian of Eq. 4 (Psi = log(1 + t), eta(t) = e^{-t/tau}) written out, with entrywise
    bounds on their rounding errors. An independent route to autodiff (docs/variational.md derives it).

    With Delta_ij = z_i - z_j, e_ij = exp(-|Delta_ij|^2 / 2 tau), G_i = sum_j p_j e_ij, c_i = Psi'(G_i) =
    1 / (1 + G_i), v_ij = e_ij Delta_ij / tau and M_ij = e_ij (Delta_ij Delta_ij^T / tau^2 - I / tau):

      dL/dz_a      = -p_a sum_j p_j (c_a + c_j) v_aj                                    (Eq. 7 times p_a)
      H_ab         = delta_ab p_a sum_{j != a} p_j (c_a + c_j) M_aj - [a != b] p_a p_b (c_a + c_b) M_ab
                     - sum_i p_i c_i^2 J_ia J_ib^T,   J_ia = dG_i/dz_a = p_a v_ia - delta_ia sum_j p_j v_aj.

    Every term is a product of positive factors and of Delta's coordinates, so replacing each by its
    absolute value gives the sums of |terms| (``*_abs``). The returned bounds, on the rounding errors of
    evaluating these at the stored points ``z``, are delta * (sum of |terms|) with
    delta = (2 (d + 3) (a_max + 1) + 4 (n + d) + 32) eps, a_max = max |Delta_ij|^2 / 2 tau: the exponent's
    relative error (d + 3) eps is multiplied by the exponent itself in exp, the sums over n points and d
    coordinates add (n + d) eps to first order, and the rest is a margin of a few dozen roundings (the
    tests check it against a 200-digit finite-difference Hessian). Rounding of ``z`` itself (e.g. cos(pi/2)
    = 6e-17) is a different matter: it moves an entry by about a_max eps relative to its terms.

    Returns (grad (n, d), grad_err (n, d), hess (n d, n d), hess_err (n d, n d)).
    """
    chex.assert_rank(z, 2)
    n, d = z.shape
    eye_n, eye_d = jnp.eye(n, dtype=z.dtype), jnp.eye(d, dtype=z.dtype)
    delta = z[:, None, :] - z[None, :, :]
    arg = jnp.sum(delta * delta, -1) / (2 * tau)
    e = jnp.exp(-arg)
    c = 1.0 / (1.0 + e @ p)
    v, v_abs = e[..., None] * delta / tau, e[..., None] * jnp.abs(delta) / tau
    cc = (c[:, None] + c[None, :]) * p[None, :]                             # p_j (c_a + c_j)
    grad = -p[:, None] * jnp.einsum("aj,ajk->ak", cc, v)
    grad_abs = p[:, None] * jnp.einsum("aj,ajk->ak", cc, v_abs)
    outer = delta[..., :, None] * delta[..., None, :] / tau ** 2
    m = e[..., None, None] * (outer - eye_d / tau)                         # (n, n, d, d)
    m_abs = e[..., None, None] * (jnp.abs(outer) + eye_d / tau)
    off = 1.0 - eye_n
    w = cc * off * p[:, None]                                               # p_a p_j (c_a + c_j), j != a

    def psi1_part(mm):
        diag = jnp.einsum("aj,ajkl->akl", w, mm)
        blocks = eye_n[:, :, None, None] * diag[:, None] - w[..., None, None] * mm
        return blocks

    def psi1_abs(mm):
        diag = jnp.einsum("aj,ajkl->akl", w, mm)
        return eye_n[:, :, None, None] * diag[:, None] + w[..., None, None] * mm

    s, s_abs = jnp.einsum("j,ajk->ak", p, v), jnp.einsum("j,ajk->ak", p, v_abs)
    jac = p[None, :, None] * v - eye_n[..., None] * s[None, :, :]          # J[i, a] = dG_i / dz_a
    jac_abs = p[None, :, None] * v_abs + eye_n[..., None] * s_abs[None, :, :]
    wq = p * c ** 2
    q = jnp.einsum("i,iak,ibl->akbl", wq, jac, jac)
    q_abs = jnp.einsum("i,iak,ibl->akbl", wq, jac_abs, jac_abs)
    hess = jnp.transpose(psi1_part(m), (0, 2, 1, 3)) - q
    hess_abs = jnp.transpose(psi1_abs(m_abs), (0, 2, 1, 3)) + q_abs
    eps = jnp.finfo(z.dtype).eps
    rel = (2 * (d + 3) * (jnp.max(arg) + 1) + 4 * (n + d) + 32) * eps
    return grad, rel * grad_abs, hess.reshape(n * d, n * d), rel * hess_abs.reshape(n * d, n * d)
