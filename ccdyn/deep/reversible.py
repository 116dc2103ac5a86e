"""Reversible networks and Lemma 1 of *Understanding Self-supervised Learning with Dual Deep Networks*
(App. A.1, Def. 2, Eq. 16-30), built from the paper's own matrices G_l and Q_l, independently of
:mod:`ccdyn.deep.network` (whose Jacobians come from the top-down chain rule) and of autodiff.

A network f~_l = W_l f_{l-1}, f_l = psi(f~_l) (l < L), f_L = f~_L, f_0 = x (no biases) with psi one of

- ``relu``:  psi(z) = max(z, 0),           G_l = W_l D_{l-1},  Q_l = I          (Eq. 17),
- ``leaky``: psi(z) = max(z, a z), 0 < a,  G_l = W_l D_{l-1},  Q_l = I          (Eq. 17, D_{l-1} in {1, a}),
- ``power``: psi(z) = z^p (integer p > 1), G_l = W_l diag^{p-1}(f~_{l-1}),  Q_l = p I  (Eq. 18),

and G_1 = W_1, Q_1 = I (no nonlinearity under the first layer). With these, G_l f~_{l-1} = f~_l: the
proof of Lemma 1 uses it in that form (Eq. 26), while Def. 2 prints f~_l = G_l f_{l-1}, which for the
leaky ReLU and the power activation is another vector (:func:`def2_residuals`; docs/readings.md#ddn-lemma-1).

Lemma 1: with V_L^f = V_L^b = I, V_{l-1}^f = V_l^f G_l (Eq. 19), V_{l-1}^b = V_l^b Q_l G_l (Eq. 20), the
gradient of r = 1/2 ||f_L(x_1; W_1) - f_L(x_2; W_2)||^2 (Eq. 21) w.r.t. the pre-activation f~_l(x_1) is
Eq. 22, :func:`lemma1_gradient`. With an l2-normalized top (Eq. 28-29), V_l^n = V_l / ||f_L|| and
Q_{L+1} = I - f^ f^T give Eq. 30, :func:`lemma1_normalized_gradient` (relu / leaky: V_l = V_l^f = V_l^b).
"""

from __future__ import annotations

import jax.numpy as jnp

__all__ = ["ACTIVATIONS", "psi", "forward", "transitions", "lemma1_gradient", "lemma1_normalized_gradient",
           "def2_residuals"]

ACTIVATIONS = ("relu", "leaky", "power")


def _check(kind: str):
    if kind not in ACTIVATIONS:
        raise ValueError(f"activation {kind!r} is unknown; allowed: {', '.join(ACTIVATIONS)}")


def psi(z, kind: str, a: float = 0.1, p: int = 2):
    """The activation: ReLU, leaky ReLU with slope ``a``, or z^``p``."""
    _check(kind)
    if kind == "power":
        return z ** p
    return jnp.where(z > 0, z, (a if kind == "leaky" else 0.0) * z)


def forward(ws, x, kind: str, a: float = 0.1, p: int = 2):
    """(f_0..f_L, f~_0..f~_L) of one input, with f~_0 := x (the input has no nonlinearity)."""
    f, pre = [x], [x]
    for l, w in enumerate(ws):
        z = w @ f[-1]
        pre.append(z)
        f.append(z if l == len(ws) - 1 else psi(z, kind, a, p))
    return f, pre


def _g_q(ws, pre, l: int, kind: str, a: float, p: int):
    """(G_l, Q_l) of Eq. 16-18 for layer l >= 1 (``pre`` = f~_0..f~_L)."""
    w = ws[l - 1]
    eye = jnp.eye(w.shape[0], dtype=w.dtype)
    if l == 1:
        return w, eye
    z = pre[l - 1]
    if kind == "power":
        return w * z ** (p - 1), p * eye
    return w * jnp.where(z > 0, 1.0, a if kind == "leaky" else 0.0), eye


def transitions(ws, x, kind: str, a: float = 0.1, p: int = 2):
    """([V_0^f..V_L^f], [V_0^b..V_L^b], f~_0..f~_L) by the recursions Eq. 19-20 from V_L = I."""
    _, pre = forward(ws, x, kind, a, p)
    n_top = ws[-1].shape[0]
    vf, vb = [jnp.eye(n_top, dtype=x.dtype)], [jnp.eye(n_top, dtype=x.dtype)]
    for l in range(len(ws), 0, -1):
        g, q = _g_q(ws, pre, l, kind, a, p)
        vf.append(vf[-1] @ g)
        vb.append(vb[-1] @ q @ g)
    return vf[::-1], vb[::-1], pre


def lemma1_gradient(ws1, ws2, x1, x2, l: int, kind: str, a: float = 0.1, p: int = 2):
    """Eq. 22: g~_l = V_l^b(x_1)^T [V_l^f(x_1) f~_l(x_1) - V_l^f(x_2) f~_l(x_2)] (towers W_1, W_2)."""
    vf1, vb1, pre1 = transitions(ws1, x1, kind, a, p)
    vf2, _, pre2 = transitions(ws2, x2, kind, a, p)
    return vb1[l].T @ (vf1[l] @ pre1[l] - vf2[l] @ pre2[l])


def lemma1_normalized_gradient(ws1, ws2, x1, x2, l: int, kind: str = "relu", a: float = 0.1):
    """Eq. 30: g~_l = V_l^n(x_1)^T Q_{L+1}(x_1) [V_l^n(x_1) f~_l(x_1) - V_l^n(x_2) f~_l(x_2)] for the
    l2-normalized distance r_n of Eq. 28, V_l^n = V_l / ||f_L|| and Q_{L+1} = I - f^ f^T (Eq. 29)."""
    if kind == "power":
        raise ValueError("Eq. 30 is stated for (leaky) ReLU networks, where V^f = V^b")
    vf1, _, pre1 = transitions(ws1, x1, kind, a)
    vf2, _, pre2 = transitions(ws2, x2, kind, a)
    top1, top2 = vf1[-1] @ pre1[-1], vf2[-1] @ pre2[-1]
    n1, n2 = vf1[l] / jnp.linalg.norm(top1), vf2[l] / jnp.linalg.norm(top2)
    u = top1 / jnp.linalg.norm(top1)
    q = jnp.eye(u.shape[0], dtype=u.dtype) - jnp.outer(u, u)
    return n1.T @ q @ (n1 @ pre1[l] - n2 @ pre2[l])


def def2_residuals(ws, x, kind: str, a: float = 0.1, p: int = 2):
    """max_l ||f~_l - G_l f~_{l-1}|| (the form Eq. 26 uses) and max_l ||f~_l - G_l f_{l-1}|| (Def. 2 as
    printed), over l = 2..L, relative to ||f~_l||."""
    f, pre = forward(ws, x, kind, a, p)
    tilde, printed = [], []
    for l in range(2, len(ws) + 1):
        g, _ = _g_q(ws, pre, l, kind, a, p)
        scale = jnp.linalg.norm(pre[l])
        tilde.append(jnp.linalg.norm(pre[l] - g @ pre[l - 1]) / scale)
        printed.append(jnp.linalg.norm(pre[l] - g @ f[l - 1]) / scale)
    return jnp.max(jnp.stack(tilde)), jnp.max(jnp.stack(printed))
