"""Deep ReLU network of *Understanding Self-supervised Learning with Dual Deep Networks* (Sec. 3):
f_l = psi(W_l f_{l-1}) for l < L, f_L = W_L f_{L-1} (no ReLU on top), f_0 = x, no biases, with psi the
ReLU or, with ``slope`` a > 0, the leaky ReLU max(z, a z) (App. A, Def. 2 names it reversible); and its
connection (Def. 1)

    K_l(x) = f_{l-1}(x) (x) J_l(x)^T  in R^{n_l n_{l-1} x n_L},   J_l = d f_L / d f~_l,

with vec() stacking columns, so that K_l(x)^T vec(W_l) = f_L(x) ((leaky) ReLU is homogeneous and has
no bias) and Thm. 1 reads  d r / d vec(W_{1,l}) = K_{1,l} [K_{1,l}^T vec W_{1,l} - K_{2,l}^T vec W_{2,l}].

The Jacobians are built top-down, J_L = I and J_{l-1} = J_l W_l diag(psi'(f~_{l-1})) (psi'(0) = a),
independently of autodiff, which the tests compare against.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

__all__ = ["init_weights", "act", "forward", "output", "jacobians", "connection", "vec", "unvec"]


def init_weights(key, sizes, scale: float = 1.0) -> tuple:
    """Weights W_1..W_L of an MLP with layer widths ``sizes`` = (n_0, ..., n_L): entries
    N(0, scale^2 / n_{l-1}), drawn in float32 whatever the x64 mode and cast to the default float
    (docs/reproducibility.md)."""
    if len(sizes) < 2 or min(sizes) < 1:
        raise ValueError(f"sizes={sizes!r} must hold at least two widths >= 1")
    keys = jax.random.split(key, len(sizes) - 1)
    dt = jnp.result_type(float)
    return tuple(scale * jax.random.normal(k, (m, n), jnp.float32).astype(dt) / jnp.sqrt(n)
                 for k, n, m in zip(keys, sizes[:-1], sizes[1:]))


def act(z, slope: float = 0.0):
    """psi(z): ReLU (``slope`` 0) or leaky ReLU max(z, slope z) (0 <= slope < 1)."""
    return jnp.where(z > 0, z, slope * z)


def forward(ws, x, slope: float = 0.0):
    """(activations f_0..f_L, pre-activations f~_1..f~_L) of one input x (n_0,)."""
    chex.assert_rank(x, 1)
    f, pre = [x], []
    for l, w in enumerate(ws):
        z = w @ f[-1]
        pre.append(z)
        f.append(z if l == len(ws) - 1 else act(z, slope))
    return f, pre


def output(ws, x, slope: float = 0.0):
    """f_L(x)."""
    return forward(ws, x, slope)[0][-1]


def jacobians(ws, x, slope: float = 0.0) -> list:
    """[J_1, ..., J_L], J_l = d f_L / d f~_l (n_L x n_l), by the top-down recursion."""
    _, pre = forward(ws, x, slope)
    js = [jnp.eye(ws[-1].shape[0], dtype=x.dtype)]
    for l in range(len(ws) - 1, 0, -1):
        js.append((js[-1] @ ws[l]) * jnp.where(pre[l - 1] > 0, 1.0, slope))
    return js[::-1]


def vec(w):
    """Columns of w stacked: vec(W)[j n_rows + i] = W[i, j]."""
    return w.T.reshape(-1)


def unvec(v, shape):
    """Inverse of :func:`vec`."""
    return v.reshape(shape[1], shape[0]).T


def connection(ws, x, l: int, slope: float = 0.0):
    """K_l(x) = f_{l-1}(x) (x) J_l(x)^T, (n_l n_{l-1}, n_L); ``l`` counts from 1 (Def. 1)."""
    if not 1 <= l <= len(ws):
        raise ValueError(f"layer l={l} must lie in [1, {len(ws)}]")
    f, _ = forward(ws, x, slope)
    return jnp.kron(f[l - 1][:, None], jacobians(ws, x, slope)[l - 1].T)
