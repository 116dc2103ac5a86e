"""The network of Eq. 18, f(B, x) = A^T sigma(B x), and its kernel dynamics (Sec. 4): the
function-space flow of Prop. 4.1, the kernel of Prop. 4.3, its infinite-width ReLU limit of
Prop. 4.4, the per-cluster velocities of Thm. 4.5 / Cor. 4.6 and the invariance test of Thm. 4.2.

Equation numbers refer to *Understanding Contrastive Learning through Variational Analysis and Neural
Network Optimization Perspectives*. A is the fixed block-averaging matrix of Eq. 19 (output k averages
hidden units (k-1)M+1 .. kM with weight 1/sqrt(M)), so B is stored as (d, M, D): row p = (k, m) of the
paper's (Md, D) matrix is B[k, m]. Batched over n inputs every quantity is a GEMM: the hidden
pre-activations X B_k^T (n, M) per output k, the kernel S_k S_k^T per output k.

Reading of Prop. 4.1 (docs/variational.md): with the network loss (1/n) sum_i L(f(w, x_i)) of Eq. 9 and
a contrastive loss that couples the points, nabla L_j is n times the gradient of the total loss with
respect to z_j, so that z_dot_i = -(1/n) sum_j K_ij nabla L_j is exactly J (-nabla_w).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from ccdyn.variational import ntxent

__all__ = ["ACTIVATIONS", "averaging_matrix", "net", "net_dense", "kernel", "kernel_dense", "ntk_jacobian",
           "ntk_matvec", "relu_limit_kernel", "sphere_loss", "point_grads", "flow_velocity",
           "weight_flow_velocity", "cluster_beta", "thm45_velocity", "invariance_gap", "gd_point_step",
           "gd_net_step"]

ACTIVATIONS = {
    "relu": (jax.nn.relu, lambda t: (t > 0).astype(t.dtype)),
    "tanh": (jnp.tanh, lambda t: 1.0 - jnp.tanh(t) ** 2),
    "softplus": (jax.nn.softplus, jax.nn.sigmoid),
}


def _signs(M: int, signed: bool, dtype):
    """Entries of a block of A over 1/sqrt(M): all +1 (Eq. 19), or alternating +1, -1 (``signed``)."""
    return jnp.where(jnp.arange(M) % 2 == 1, -1.0, 1.0).astype(dtype) if signed else jnp.ones((M,), dtype)


def averaging_matrix(M: int, d: int, dtype=jnp.float64, signed: bool = False):
    """A of Eq. 19: (Md, d), column k = 1/sqrt(M) on rows (k-1)M .. kM-1. ``signed`` alternates the
    signs inside each block: a_p^2 is unchanged, so Prop. 4.3's kernel is the same, but the outputs are
    no longer confined to the positive orthant (a control of the cluster experiments)."""
    return jnp.kron(jnp.eye(d, dtype=dtype), _signs(M, signed, dtype)[:, None]) / jnp.sqrt(M)


def net(B, X, act: str = "relu", signed: bool = False):
    """f(B, x_i) = A^T sigma(B x_i) for the rows of X: (d, M, D), (n, D) -> (n, d)."""
    chex.assert_rank(B, 3)
    sig, _ = ACTIVATIONS[act]
    d, M, D = B.shape
    h = X @ B.reshape(d * M, D).T  # one GEMM, (n, dM)
    return sig(h).reshape(-1, d, M) @ _signs(M, signed, X.dtype) / jnp.sqrt(M)


def net_dense(B, X, act: str = "relu", signed: bool = False):
    """Eq. 18 written literally with the (Md, d) matrix A and the (Md, D) matrix B (a second route)."""
    sig, _ = ACTIVATIONS[act]
    d, M, D = B.shape
    return sig(X @ B.reshape(d * M, D).T) @ averaging_matrix(M, d, X.dtype, signed)


def kernel(B, X, act: str = "relu"):
    """Prop. 4.3: K_ij^{kl} = 1_{k=l} (1/M) x_i^T x_j sum_{p in block k} sigma'(b_p x_i) sigma'(b_p x_j).

    Returns the diagonal entries as (d, n, n): kernel[k, i, j] = K_ij^{kk} (K_ij^{kl} = 0 for k != l).
    """
    _, dsig = ACTIVATIONS[act]
    d, M, D = B.shape
    s = dsig(jnp.einsum("nD,kmD->knm", X, B))  # (d, n, M): sigma'(b_p x_i) per block
    return (X @ X.T)[None] * (s @ jnp.swapaxes(s, 1, 2)) / M


def kernel_dense(B, X, act: str = "relu"):
    """The (n, d, n, d) tensor K_ij^{kl} of :func:`kernel` (zeros off the k = l diagonal)."""
    k = kernel(B, X, act)
    d = k.shape[0]
    return jnp.einsum("kij,kl->ikjl", k, jnp.eye(d, dtype=k.dtype))


def ntk_jacobian(B, X, act: str = "relu", signed: bool = False):
    """Eq. 12 by autodiff: (grad_w f^k(x_i))^T (grad_w f^l(x_j)) from ``jax.jacobian``, as (n, d, n, d)."""
    J = jax.jacobian(lambda b: net(b, X, act, signed))(B)  # (n, d) + B.shape
    J = J.reshape(X.shape[0] * B.shape[0], -1)
    return (J @ J.T).reshape(X.shape[0], B.shape[0], X.shape[0], B.shape[0])


def ntk_matvec(B, X, V, act: str = "relu"):
    """(K V)_i = sum_j K_ij V_j by autodiff without forming J: a ``jax.vjp`` then a ``jax.jvp``."""
    f = lambda b: net(b, X, act)
    _, pull = jax.vjp(f, B)
    (tangent,) = pull(V)
    return jax.jvp(f, (B,), (tangent,))[1]


def relu_limit_kernel(X):
    """Prop. 4.4: K^inf_ij = x_i^T x_j [1/2 - arccos(cos theta_ij) / (2 pi)] (times I_d), as (n, n)."""
    g = X @ X.T
    nrm = jnp.sqrt(jnp.diagonal(g))
    c = jnp.clip(g / (nrm[:, None] * nrm[None, :]), -1.0, 1.0)
    return g * (0.5 - jnp.arccos(c) / (2 * jnp.pi))


def sphere_loss(Z, tau: float):
    """The contrastive loss of Sec. 4 on embeddings Z (n, d): Eq. 4 with Psi = log(1+t),
    eta(t) = exp(-t/tau) at the normalized points z_i / ||z_i|| (the constraint set C of Sec. 2),
    weights 1/n."""
    U = Z / jnp.linalg.norm(Z, axis=-1, keepdims=True)
    n = Z.shape[0]
    return ntxent.eq4_loss(U, jnp.full((n,), 1.0 / n, Z.dtype), tau)


def point_grads(Z, tau: float):
    """nabla L_j of Prop. 4.1: n times the gradient of the total loss with respect to z_j, (n, d)."""
    return Z.shape[0] * jax.grad(sphere_loss)(Z, tau)


def flow_velocity(B, X, tau: float, act: str = "relu"):
    """Prop. 4.1 (Eq. 11): z_dot_i = -(1/n) sum_j K_ij nabla L_j with the kernel of Prop. 4.3."""
    Z = net(B, X, act)
    G = point_grads(Z, tau)
    return -jnp.einsum("kij,jk->ik", kernel(B, X, act), G) / X.shape[0]


def weight_flow_velocity(B, X, tau: float, act: str = "relu"):
    """The same velocity from the weights: z_dot = J w_dot with w_dot = -nabla_w L(w) (``jax.jvp``)."""
    loss = lambda b: sphere_loss(net(b, X, act), tau)
    return jax.jvp(lambda b: net(b, X, act), (B,), (-jax.grad(loss)(B),))[1]


def cluster_beta(B, xi, act: str = "relu"):
    """Thm. 4.5's beta_q^k = (1/M) sum_{p in block k} sigma'(b_p xi_q)^2, as (N, d) for centers xi (N, D)."""
    _, dsig = ACTIVATIONS[act]
    return jnp.mean(dsig(jnp.einsum("qD,kmD->qkm", xi, B)) ** 2, -1)


def thm45_velocity(B, X, labels, xi, tau: float, act: str = "relu", beta=None):
    """Thm. 4.5 (Eq. 21) without its O(delta): z_dot_i = -(n_q/n) ||xi_q||^2 beta_q grad L(xi_q), q = gamma(i).

    grad L(xi_q) is read as the cluster's mean of nabla L_j (all equal up to O(delta)). ``beta`` (N, d)
    overrides beta_q: Cor. 4.6 is ``beta = 1/2`` (ReLU, M -> infinity).
    """
    N = xi.shape[0]
    G = point_grads(net(B, X, act), tau)
    onehot = jax.nn.one_hot(labels, N, dtype=X.dtype)  # (n, N)
    counts = onehot.sum(0)
    g_cluster = (onehot.T @ G) / counts[:, None]  # (N, d)
    beta = cluster_beta(B, xi, act) if beta is None else jnp.broadcast_to(beta, (N, B.shape[0]))
    v = -(counts / X.shape[0])[:, None] * jnp.sum(xi * xi, -1)[:, None] * beta * g_cluster
    return v[labels]


def gd_point_step(Z, tau: float, lr: float):
    """Eq. 14 (no network, K = I): z_i <- z_i - lr nabla L(z_i) with nabla L_i as in :func:`point_grads`."""
    return Z - lr * point_grads(Z, tau)


def gd_net_step(B, X, tau: float, lr: float, act: str = "relu"):
    """One gradient step on the weights of Eq. 18 for the loss (1/n) sum_i L(f(w, x_i)) (Eq. 9, 15)."""
    return B - lr * jax.grad(lambda b: sphere_loss(net(b, X, act), tau))(B)


def invariance_gap(Z, Z_views):
    """max_i ||f(x_i) - f(T x_i)||: zero exactly when the embedding is invariant on these samples."""
    return jnp.max(jnp.linalg.norm(Z - Z_views, axis=-1))
