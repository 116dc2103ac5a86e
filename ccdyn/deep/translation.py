"""The 1-D translation model of *Understanding Self-supervised Learning with Dual Deep Networks*
(Sec. 5.1, Eq. 11-13), enumerated exactly.

Two objects on a ring of d pixels: z_0 = 1 is "11" (x = e_{z'} + e_{z'+1}), z_0 = 2 is "101"
(x = e_{z'} + e_{z'+2}), indices mod d; p(z_0, z') = 1/(2d) and augmentation redraws the position z'
uniformly, so K̄(z_0) = E_{z'}[K(x(z_0, z'))] and OP = V_{z_0}[K̄(z_0)] (L_simp, Thm. 3).

- a linear neuron, K(x) = x: K̄(z_0) = (2/d) 1 for both objects, OP = 0;
- a linear neuron with a receptive field of width 2 (pixels 0, 1): OP = u u^T / (4 d^2) with
  u = x_11 + x_00 - x_01 - x_10 (Eq. 12), and u = 0;
- a ReLU neuron f = psi(w^T x_RF) on that field, K(x) = psi'(w^T x_RF) x_RF: when w is selective to
  one pattern p, OP = c_p x_p x_p^T with c_p = (P(p | z_0=1) - P(p | z_0=2))^2 / 4, and one step
  w <- w + alpha OP w multiplies x_p^T w by 1 + alpha c_p ||x_p||^2 (Eq. 13).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = ["PATTERNS", "objects", "op_linear", "op_receptive_field", "connection_relu", "op_relu",
           "pattern_probs", "selective_constant", "eq12_u"]

PATTERNS = {"00": (0.0, 0.0), "01": (0.0, 1.0), "10": (1.0, 0.0), "11": (1.0, 1.0)}


def objects(d: int):
    """x(z_0, z') for z_0 in (1, 2) and z' in 0..d-1: (2, d, d) (Eq. 11)."""
    if d < 3:
        raise ValueError(f"d={d} must be >= 3 so that the two objects differ")
    eye = np.eye(d)
    return jnp.asarray(np.stack([eye + np.roll(eye, 1, axis=1), eye + np.roll(eye, 2, axis=1)]))


def _ve(k):
    """V_{z_0}[E_{z'}[k]] for k (2, d, m): z_0 and z' uniform."""
    kb = k.mean(1)
    c = kb - kb.mean(0)
    return jnp.einsum("zi,zj->ij", c, c) / 2


def op_linear(d: int):
    """OP of a linear neuron seeing the whole ring (d x d)."""
    return _ve(objects(d))


def op_receptive_field(d: int):
    """OP of a linear neuron with the receptive field of width 2 (pixels 0, 1), 2 x 2."""
    return _ve(objects(d)[..., :2])


def connection_relu(w, x_rf):
    """K(x) = psi'(w^T x) x of a ReLU neuron (psi'(0) = 0)."""
    return (x_rf @ w > 0)[..., None] * x_rf


def op_relu(w, d: int):
    """OP of a ReLU neuron with weight w on the receptive field of width 2."""
    return _ve(connection_relu(jnp.asarray(w), objects(d)[..., :2]))


def pattern_probs(d: int) -> dict:
    """P(pattern in the field | z_0) for z_0 = 1, 2, counted over the d positions."""
    x = np.asarray(objects(d)[..., :2])
    return {p: tuple(float(np.mean(np.all(x[z] == v, axis=-1))) for z in range(2)) for p, v in PATTERNS.items()}


def selective_constant(p: str, d: int) -> float:
    """c_p of Eq. 13 from the pattern counts: (P(p | 1) - P(p | 2))^2 / 4."""
    a, b = pattern_probs(d)[p]
    return (a - b) ** 2 / 4


def eq12_u():
    """u = x_11 + x_00 - x_01 - x_10 of Eq. 12."""
    v = {k: np.asarray(x) for k, x in PATTERNS.items()}
    return jnp.asarray(v["11"] + v["00"] - v["01"] - v["10"])
