"""Thm. 4 part (2) of the core paper (App. C.4, Eq. 158-163): with linear activation, from a critical
point with distinct filters in an RF there is a path of critical points to identical filters.

Independent routes: the gradient of the energy is jax.grad of ``two_layer.energy`` (float64); the
critical points are built from the data's covariance computed here in numpy (uniform alpha, no
augmentation: C_alpha is the biased covariance, Assumption 2), and the critical set is the null space
of the autodiff Hessian. Two readings of "critical point" (docs/readings.md#core-thm-4):

- the proof's, Eq. 14 as printed (no projection) with the top layer V = v s^T held fixed: the critical
  set is the linear space {W : sum_m s_km w_km = u_k, Sigma u = 0} (Sigma the input covariance). The
  statement holds, along the straight path that keeps u_k fixed; the proof's own path through the
  swapped point W'* (Eq. 163) is not one of critical points unless s_k1 = s_k2, because the swap is a
  symmetry only when the columns of V are swapped too. With a full-rank Sigma, u = 0 and the identical
  end point is w_km = 0.
- the fast top layer of Assumption 2 (s the maximal eigenvector of C_alpha[f_1]): by Euler's identity
  <W, grad_W E> = 2E = lambda_max |v|^2 > 0, so Eq. 14 has no critical point at all; on the sphere
  (Eq. 12 with P_w^perp) a critical point has s_km w_km = b_k / lambda for every m, so the filters of an
  RF are +-one direction: "distinct" critical filters are sign flips (the same feature), which no path
  of critical points joins to identical filters (the cosine between them is +-1 at every critical point).
"""

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, pairwise, two_layer

K, D, M, N = 2, 3, 2, 8
NET = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=2, act=activations.get_activation("linear"))


def _data(rank):
    """N samples x (N, K, D) spanning a ``rank``-dimensional subspace of R^{KD}."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N, rank)) @ rng.normal(size=(rank, K * D))
    return x.reshape(N, K, D)


def _cov(x):
    """The biased covariance of the flattened inputs (numpy): C_alpha[x] for uniform alpha, no augmentation."""
    flat = x.reshape(N, -1)
    return np.cov(flat, rowvar=False, bias=True)


@jax.jit
def _grad(w, v, x):
    params = {"W": w, "V": v}
    return jax.grad(two_layer.energy)(params, x, x, pairwise.uniform(N, jnp.float64), NET)["W"]


def _grad_w(w, v, x):
    """grad_W E by autodiff (no augmentation: both views are x)."""
    return np.asarray(_grad(jnp.asarray(w), jnp.asarray(v), jnp.asarray(x)))


def _fixed_top(s):
    v = np.array([0.6, -0.8])
    return np.outer(v, s.reshape(-1))


def _scale(v, x):
    """|grad_W E| at a generic W: the scale against which a gradient counts as 0."""
    return np.linalg.norm(_grad_w(np.random.default_rng(1).normal(size=(K, M, D)), v, x))


def test_thm4_part2_path_of_critical_points_with_a_fixed_top_layer():
    """The proof's reading: V = v s^T fixed, Eq. 14 unprojected. A critical W* with distinct filters
    (built from a null vector of the numpy covariance) connects to identical filters through critical
    points; the proof's swapped point is critical only with V's columns swapped as well."""
    x = _data(rank=3)
    sigma = _cov(x)
    s = np.array([[0.9, 0.4], [-0.5, 0.7]])                  # s_km, distinct within each RF, sums != 0
    v = _fixed_top(s)
    null = np.linalg.svd(sigma)[2][3:]                       # Sigma u = 0 (KD - rank = 3 directions)
    u = (np.array([1.0, -2.0, 0.5]) @ null).reshape(K, D)
    assert np.linalg.norm(sigma @ u.reshape(-1)) < 1e-12 and np.all(np.linalg.norm(u, axis=1) > 0.1)
    w1 = np.random.default_rng(3).normal(size=(K, D))
    w_star = np.stack([w1, (u - s[:, :1] * w1) / s[:, 1:]], axis=1)        # sum_m s_km w_km = u_k
    assert np.min(np.linalg.norm(w_star[:, 0] - w_star[:, 1], axis=1)) > 0.5  # distinct filters
    tol = 1e-11 * _scale(v, x)
    assert np.linalg.norm(_grad_w(w_star, v, x)) < tol

    # Eq. 163's route: W'* swaps w_k1 and w_k2. Critical when V's columns are swapped with them ...
    w_swap = w_star[:, ::-1]
    assert np.linalg.norm(_grad_w(w_swap, _fixed_top(s[:, ::-1]), x)) < tol
    # ... but not with the same V (s_k1 != s_k2), and neither is the midpoint c = 1/2 of Eq. 163.
    assert np.linalg.norm(_grad_w(w_swap, v, x)) > 1e6 * tol
    assert np.linalg.norm(_grad_w(0.5 * (w_star + w_swap), v, x)) > 1e6 * tol

    # The path that keeps u_k: straight to w_km = u_k / sum_m s_km, critical all along.
    w_bar = np.repeat((u / s.sum(1, keepdims=True))[:, None], M, axis=1)
    for t in np.linspace(0.0, 1.0, 5):
        assert np.linalg.norm(_grad_w((1 - t) * w_star + t * w_bar, v, x)) < tol, t
    assert np.linalg.norm(w_bar[:, 0]) > 0.1                  # identical and non-zero filters


def test_thm4_critical_set_is_the_null_space_of_the_autodiff_hessian():
    """For a fixed V = v s^T, grad_W E is linear in W; its null space (Hessian from autodiff, SVD) has the
    closed-form dimension K M D - rank(Sigma) and holds every W with Sigma u = 0. With full-rank data
    the only critical point with identical filters is W = 0."""
    s = np.array([[0.9, 0.4], [-0.5, 0.7]])
    v = _fixed_top(s)
    for rank in (3, K * D):
        x = _data(rank)
        # E is quadratic in W, so grad_W E = H W and H's columns are the gradients at the unit vectors
        h = np.stack([_grad_w(e.reshape(K, M, D), v, x).reshape(-1) for e in np.eye(K * M * D)], 1)
        np.testing.assert_allclose(h, h.T, atol=1e-12 * np.abs(h).max())
        sv = np.linalg.svd(h, compute_uv=False)
        null_dim = int(np.sum(sv < 1e-10 * sv[0]))
        assert null_dim == K * M * D - np.linalg.matrix_rank(_cov(x), tol=1e-10), rank
        # identical filters w_km = w_k (W = T e): critical iff Sigma (sum_m s_km) e = 0, a null space of
        # dimension KD - rank(Sigma): 0 with full-rank data (only W = 0)
        tied = np.stack([np.repeat(e.reshape(K, 1, D), M, axis=1).reshape(-1) for e in np.eye(K * D)], 1)
        tied_null = K * D - np.linalg.matrix_rank(h @ tied, tol=1e-10 * sv[0])
        assert tied_null == K * D - rank


def _top(w, x):
    """s: the maximal eigenvector of C_alpha[f_1] (numpy covariance of the linear hidden layer), lambda_max."""
    f1 = np.einsum("nkd,kmd->nkm", x, w).reshape(N, -1)
    lam, vec = np.linalg.eigh(np.cov(f1, rowvar=False, bias=True))
    return vec[:, -1].reshape(K, M), lam[-1], lam[-1] - lam[-2]


def test_thm4_fast_top_layer_has_no_unprojected_critical_point():
    """Assumption 2's fast top layer (V = v s^T, s the maximal eigenvector, |v| = 1): <W, grad_W E> =
    lambda_max > 0 at every W with V[f_1] != 0, so grad_W E != 0: Eq. 14 has no critical point there."""
    x = _data(rank=K * D)
    rng = np.random.default_rng(5)
    for _ in range(3):
        w = rng.normal(size=(K, M, D))
        s, lam, gap = _top(w, x)
        assert lam > 0 and gap > 1e-6
        g = _grad_w(w, _fixed_top(s), x)
        np.testing.assert_allclose(np.sum(w * g), lam, rtol=1e-10)


def test_thm4_on_the_sphere_critical_filters_are_one_direction_up_to_sign():
    """Eq. 12 (P_w^perp) with the fast top layer: projected ascent from distinct unit filters ends where
    s_km w_km = b_k / lambda for every m (b_k = grad_km / s_km), so |cos(w_k1, w_k2)| = 1."""
    x = _data(rank=K * D)
    w = np.random.default_rng(11).normal(size=(K, M, D))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    for _ in range(400):
        s, lam, _ = _top(w, x)
        g = _grad_w(w, _fixed_top(s), x)
        w = w + 0.5 / lam * g
        w /= np.linalg.norm(w, axis=-1, keepdims=True)
    s, lam, _ = _top(w, x)
    g = _grad_w(w, _fixed_top(s), x)
    tangent = g - np.sum(g * w, -1, keepdims=True) * w
    assert np.linalg.norm(tangent) < 1e-7 * np.linalg.norm(g)
    b = g / s[..., None]                                      # b_k, the same for every m (part 1)
    np.testing.assert_allclose(b[:, 0], b[:, 1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s[..., None] * w, b / lam, rtol=1e-6, atol=1e-9)
    cos = np.abs(np.sum(w[:, 0] * w[:, 1], -1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)
