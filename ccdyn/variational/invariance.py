"""Thm. 4.2 of the SimCLR variational analysis exercised with perturbations that move the points (T x != x).

The network is Eq. 18, f(B, x) = A^T relu(B x) (:mod:`ccdyn.variational.kernel`), trained by gradient
descent on the weights for the loss (1/n) sum_i L(f(w, x_i)) of Eq. 9 over the training inputs x_i only;
the perturbed inputs T x_i are evaluated, not trained on. Eq. 15 extended to any input x (Prop. 4.1's
function-space step, linear in the step size) reads

    f(w', x) - f(w, x) = -(sigma/n) sum_j K(x, x_j) nabla L_j,   K(x, x_j) = (grad_w f(x))^T grad_w f(x_j),

so the invariance gap after one step is g' = g - (sigma/n) sum_j [K(T x_i, x_j) - K(x_i, x_j)] nabla L_j.
For ReLU the weight step realizes this exactly when no hidden gate flips between w and w' (f is linear in
w on a gate pattern). Three perturbations, each with T x != x:

- :func:`scaling`: T x = c x, c > 0, for the normalized map f / ||f|| (the map the loss sees). Positive
  homogeneity makes f / ||f|| and its weight gradient invariant for every w: the theorem's hypothesis holds.
- :func:`kernel_shift` with a direction n that is generic: T x = x + s n with B n = 0 at the current w.
  f is invariant at w, grad_w f is not (its rows carry x + s n), and n has a component along the data:
  the hypothesis fails and the gap after one step is the Eq. 15 formula above (not zero).
- the same with n orthogonal to the training inputs: grad_w f(T x) != grad_w f(x), yet every weight
  gradient has rows in span{x_j}, so B' n = B n - sigma (grad_B L) n = 0 and invariance is kept for all
  steps. The theorem's condition is sufficient, not necessary; the exact one-step condition is
  (grad_w f(T x) - grad_w f(x)) . grad_w L = 0 (:func:`one_step_condition`).

Pure functions; float64 expected.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ccdyn.variational import kernel as kr

__all__ = ["normalized_net", "project_out", "scaling", "kernel_shift", "jacobian_gap", "eq15_gap_step",
           "gate_flips", "one_step_condition", "train"]


def normalized_net(B, X):
    """f(B, x) / ||f(B, x)||: the embedding on the sphere that :func:`ccdyn.variational.kernel.sphere_loss` uses."""
    Z = kr.net(B, X)
    return Z / jnp.linalg.norm(Z, axis=-1, keepdims=True)


def project_out(B, n):
    """B (I - n n^T) for a unit n: the weights at which f(B, x + s n) = f(B, x) for every x and s."""
    d, M, D = B.shape
    Bf = B.reshape(d * M, D)
    return (Bf - jnp.outer(Bf @ n, n)).reshape(d, M, D)


def scaling(X, c):
    """T x_i = c_i x_i with c_i > 0."""
    return X * c[:, None]


def kernel_shift(X, n, s):
    """T x_i = x_i + s_i n."""
    return X + s[:, None] * n[None, :]


def jacobian_gap(fn, B, X, TX):
    """max |grad_B f(T x_i) - grad_B f(x_i)| over entries (autodiff Jacobians of ``fn(B, X)``)."""
    J = lambda Y: jax.jacobian(lambda b: fn(b, Y))(B)  # noqa: E731
    return jnp.max(jnp.abs(J(TX) - J(X)))


def eq15_gap_step(B, X, TX, tau: float, lr: float):
    """The Eq. 15 change of the gap f(T x_i) - f(x_i) over one step, from Prop. 4.3's closed-form kernel
    evaluated on the joint inputs [X; TX] (no autodiff of the network): (n, d)."""
    n = X.shape[0]
    K = kr.kernel(B, jnp.concatenate([X, TX]))  # (d, 2n, 2n), K[k, a, b] = K_ab^{kk}
    G = kr.point_grads(kr.net(B, X), tau)  # (n, d): nabla L_j of Prop. 4.1
    dK = K[:, n:, :n] - K[:, :n, :n]  # K(T x_i, x_j) - K(x_i, x_j)
    return -lr / n * jnp.einsum("kij,jk->ik", dK, G)


def gate_flips(B, B1, Y):
    """How many hidden gates relu'(b_p y) change between the weights B and B1 on the inputs Y."""
    h0 = jnp.einsum("nD,kmD->nkm", Y, B)
    h1 = jnp.einsum("nD,kmD->nkm", Y, B1)
    return jnp.sum((h0 > 0) != (h1 > 0))


def one_step_condition(B, X, TX, tau: float):
    """max |(grad_w f(T x_i) - grad_w f(x_i)) . grad_w L(w)|: the exact one-step condition (autodiff)."""
    g = jax.grad(lambda b: kr.sphere_loss(kr.net(b, X), tau))(B)
    diff = lambda b: kr.net(b, TX) - kr.net(b, X)  # noqa: E731
    return jnp.max(jnp.abs(jax.jvp(diff, (B,), (g,))[1]))


def train(B, X, tau: float, lr: float, steps: int):
    """``steps`` gradient steps on the weights (Eq. 9); returns the weights after each step, (steps, d, M, D)."""
    def step(b, _):
        b1 = kr.gd_net_step(b, X, tau, lr)
        return b1, b1
    return jax.lax.scan(step, B, None, length=steps)[1]
