"""Activations h and their derivatives h' (Sec. 3, Assumption 1).

A homogeneous activation satisfies h'(x) x = p h(x) for a degree p. Degree 1 is Assumption 1 of the
paper (h(x) = h'(x) x: linear, ReLU, LeakyReLU); the quadratic monomial h(x) = x^2 has degree 2 and
only rescales the flow by 1/p (docs/conventions.md). For these, Eq. 6 holds up to the degree:
h(w^T x) = w^T x~^w / p with the gated input x~^w = x h'(w^T x).

ReLU uses h'(0) = 0 (App. B.1): a sample on the hyperplane w^T x = 0 is not active.

tanh and gelu are *not* homogeneous. For them the power-iteration view A(w) w of Lemma 3 is not the
gradient of the energy and the library refuses to run power iteration; the flow follows the gradient
C_alpha[x h'(w^T x), h(w^T x)] of E and the certificates test that field (docs/conventions.md).

Sign symmetry: for an odd h (linear, tanh) -w gives the feature -f, for an even h (quadratic) the
feature f itself; either way E(-w) = E(w) and the field is odd, u(-w) = -u(w), so w and -w are one
optimum (:attr:`Activation.sign_symmetric`).

One's own activation: :func:`custom_activation` builds an :class:`Activation` from a function h
(h' by forward-mode autodiff unless given; homogeneity and parity detected on a grid, or declared
and then checked), certified like the built-in ones (docs/own_data.md).

An :class:`Activation` is a small frozen (hashable) value, so it can be a static argument of ``jit``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Activation", "Custom", "get_activation", "custom_activation", "ACTIVATIONS", "HOMOGENEOUS"]

HOMOGENEOUS = ("linear", "relu", "leaky_relu", "quadratic")
NON_HOMOGENEOUS = ("tanh", "gelu")
ACTIVATIONS = HOMOGENEOUS + NON_HOMOGENEOUS
DEFAULT_LEAKY_SLOPE = 0.05


def _gelu_dh(z):
    cdf = 0.5 * (1.0 + jax.lax.erf(z / math.sqrt(2.0)))
    pdf = jnp.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return cdf + z * pdf


_H = {
    "linear": lambda z, s: z,
    "relu": lambda z, s: jnp.where(z > 0, z, jnp.zeros_like(z)),
    "leaky_relu": lambda z, s: jnp.where(z > 0, z, s * z),
    "quadratic": lambda z, s: z * z,
    "tanh": lambda z, s: jnp.tanh(z),
    "gelu": lambda z, s: jax.nn.gelu(z, approximate=False),
}

_DH = {
    "linear": lambda z, s: jnp.ones_like(z),
    "relu": lambda z, s: jnp.where(z > 0, jnp.ones_like(z), jnp.zeros_like(z)),
    "leaky_relu": lambda z, s: jnp.where(z > 0, jnp.ones_like(z), jnp.full_like(z, s)),
    "quadratic": lambda z, s: 2.0 * z,
    "tanh": lambda z, s: 1.0 - jnp.tanh(z) ** 2,
    "gelu": lambda z, s: _gelu_dh(z),
}

_DEGREE = {"linear": 1, "relu": 1, "leaky_relu": 1, "quadratic": 2}
_ODD, _EVEN = ("linear", "tanh"), ("quadratic",)


@dataclasses.dataclass(frozen=True)
class Custom:
    """What :func:`custom_activation` recorded about a user's h (the functions compare by identity).

    Attributes:
      h: the elementwise function h(z).
      dh: its derivative h'(z) as the user gave it, or None: forward-mode autodiff of ``h``.
      degree: p with z h'(z) = p h(z) for every z (homogeneous), or 0 (not homogeneous).
      parity: "odd", "even" or "" (neither).
    """

    h: Callable
    dh: Callable | None = None
    degree: float = 0
    parity: str = ""


@dataclasses.dataclass(frozen=True)
class Activation:
    """An activation h with derivative h' (hashable; use :func:`get_activation` to build one).

    Attributes:
      name: one of :data:`ACTIVATIONS`, or a user's name (:func:`custom_activation`).
      slope: negative-side slope, used by ``leaky_relu`` only.
      custom: a user's h (:class:`Custom`), None for the built-in ones.
    """

    name: str
    slope: float = 0.0
    custom: Custom | None = None

    def h(self, z):
        """h(z), elementwise."""
        if self.custom is not None:
            return self.custom.h(z)
        return _H[self.name](z, self.slope)

    def dh(self, z):
        """h'(z), elementwise; ReLU has h'(0) = 0 (App. B.1)."""
        if self.custom is not None:
            return (self.custom.dh or _forward_derivative(self.custom.h))(z)
        return _DH[self.name](z, self.slope)

    @property
    def homogeneous(self) -> bool:
        """True when h'(x) x = degree * h(x) for all x (Assumption 1 up to the degree)."""
        if self.custom is not None:
            return self.custom.degree > 0
        return self.name in _DEGREE

    @property
    def degree(self) -> float:
        """Homogeneity degree p (h'(x) x = p h(x)); 1 for non-homogeneous activations.

        With this convention ``degree * h(z)`` equals z h'(z) exactly for every homogeneous h, and
        the ascent field C[x~, degree * h] is A(w) w (Lemma 3) for homogeneous h and the gradient
        of E for the others.
        """
        if self.custom is not None:
            return self.custom.degree if self.custom.degree > 0 else 1
        return _DEGREE.get(self.name, 1)

    @property
    def smooth(self) -> bool:
        """True when h' is continuous (no kink), so A(w) = C_alpha[x h'(w^T x)] is smooth in w (a user's
        activation is smooth: :func:`custom_activation` refuses a kink at 0)."""
        return self.custom is not None or self.name not in ("relu", "leaky_relu")

    @property
    def odd(self) -> bool:
        """True when h(-x) = -h(x), so that w and -w give the same feature up to sign."""
        if self.custom is not None:
            return self.custom.parity == "odd"
        return self.name in _ODD

    @property
    def even(self) -> bool:
        """True when h(-x) = h(x), so that w and -w give the same feature."""
        if self.custom is not None:
            return self.custom.parity == "even"
        return self.name in _EVEN

    @property
    def sign_symmetric(self) -> bool:
        """True when w and -w are the same optimum: h odd or even, so E(-w) = E(w) and u(-w) = -u(w).
        Clustering, basin counts and pattern overlaps (|cos|) merge each +-w pair under this."""
        return self.odd or self.even


def get_activation(name: str, slope: float = DEFAULT_LEAKY_SLOPE) -> Activation:
    """Returns the activation called ``name``.

    Args:
      name: one of linear, relu, leaky_relu, quadratic (homogeneous) or tanh, gelu (not), a name registered
        by ``custom_activation(..., register=True)``, or an :class:`Activation` (returned as it is).
      slope: negative slope of leaky_relu, in [0, 1); ignored otherwise.

    Raises:
      ValueError: naming ``name`` or ``slope`` and the accepted values.
    """
    if isinstance(name, Activation):
        return name
    if name in _CUSTOM:
        return _CUSTOM[name]
    if name not in ACTIVATIONS:
        raise ValueError(f"activation name={name!r} is unknown; allowed: {', '.join(ACTIVATIONS)}")
    if name == "leaky_relu":
        slope = float(slope)
        if not (0.0 <= slope < 1.0) or not math.isfinite(slope):
            raise ValueError(f"leaky_relu slope={slope} must lie in [0, 1)")
        return Activation(name, slope)
    return Activation(name, 0.0)


_CUSTOM: dict = {}  # name -> Activation, for custom_activation(..., register=True)
# the grid on which homogeneity and parity are checked: 0 < z from 1e-3 to 1e3 (every scale a unit-norm w
# meets on data of norm up to 1e3), and both signs
_GRID = 10.0 ** np.linspace(-3.0, 3.0, 61)
CHECK_RTOL = {8: 1e-9, 4: 1e-4}  # by itemsize: float64 when jax_enable_x64 is on (the scripts), else float32


def _forward_derivative(h):
    """h' of an elementwise h by forward-mode autodiff: one jvp with unit tangents."""
    return lambda z: jax.jvp(h, (z,), (jnp.ones_like(z),))[1]


def _close(a, b, scale) -> bool:
    return bool(jnp.all(jnp.abs(a - b) <= CHECK_RTOL[jnp.dtype(a.dtype).itemsize] * scale))


def _check_grid(h, dh):
    """(z, h(z), h'(z)) on both signs of :data:`_GRID`, float64 when enabled (ValueError on a non-finite value)."""
    z = jnp.concatenate([-_GRID[::-1], _GRID]).astype(jnp.float64 if jax.config.read("jax_enable_x64") else jnp.float32)
    hz, dz = jnp.asarray(h(z)), jnp.asarray(dh(z))
    if hz.shape != z.shape or dz.shape != z.shape:
        raise ValueError(f"h must act elementwise: h(z) has shape {hz.shape} for z of shape {z.shape}")
    if not (bool(jnp.all(jnp.isfinite(hz))) and bool(jnp.all(jnp.isfinite(dz)))):
        raise ValueError("h or h' is not finite on |z| in [1e-3, 1e3]")
    return z, hz, dz


def _detect_degree(z, hz, dz) -> float:
    """p > 0 with z h'(z) = p h(z) on the grid, or 0 when there is none (p fitted by least squares)."""
    zd = z * dz
    den = float(jnp.sum(hz * hz))
    if den == 0.0:
        return 0.0
    p = float(jnp.sum(zd * hz)) / den
    scale = jnp.maximum(jnp.abs(zd), jnp.abs(hz)) + 1e-300
    if p <= 0 or not _close(zd, p * hz, scale):
        return 0.0
    return float(round(p)) if abs(p - round(p)) <= 1e-6 else p


def _detect_parity(z, hz) -> str:
    n = z.shape[0] // 2  # z = (-grid reversed, grid): hz[:n][::-1] is h(-grid)
    neg, pos = hz[:n][::-1], hz[n:]
    scale = jnp.maximum(jnp.abs(neg), jnp.abs(pos)) + 1e-300
    if _close(neg, -pos, scale):
        return "odd"
    if _close(neg, pos, scale):
        return "even"
    return ""


def custom_activation(name: str, h: Callable, *, dh: Callable | None = None, degree: float | None = None,
                      parity: str | None = None, register: bool = False) -> Activation:
    """One's own activation h, used and certified like the built-in ones (docs/own_data.md).

    h must be elementwise, written with ``jax.numpy`` (it runs inside ``jit``) and have a continuous
    derivative (no kink: the kink certificates exist for relu and leaky_relu only; a kink at 0 is refused).

    Args:
      name: a name for tables and errors, not one of :data:`ACTIVATIONS`.
      h: the function z -> h(z).
      dh: its derivative; default forward-mode autodiff of ``h``.
      degree: p > 0 when z h'(z) = p h(z) (homogeneous: power iteration is then allowed), 0 for not
        homogeneous; default detected on a grid of |z| in [1e-3, 1e3]. A declared value is checked there.
      parity: "odd" (h(-z) = -h(z)), "even" (h(-z) = h(z)) or "" (neither); default detected on the grid,
        a declared value checked there. Odd or even: w and -w are one optimum (:attr:`Activation.sign_symmetric`).
      register: also make ``get_activation(name)`` return it.

    Raises:
      ValueError: a built-in name, a declared degree or parity the grid contradicts, a non-finite value on
        the grid, a non-elementwise h, a given ``dh`` that is not h' (checked against autodiff), or a kink at 0.
    """
    if not isinstance(name, str) or not name or name in ACTIVATIONS:
        raise ValueError(f"custom activation name={name!r} must be a new non-empty name (not one of "
                         f"{', '.join(ACTIVATIONS)})")
    auto = _forward_derivative(h)
    z, hz, dz = _check_grid(h, auto if dh is None else dh)
    if dh is not None:
        _, _, da = _check_grid(h, auto)
        if not _close(dz, da, jnp.abs(da) + 1e-300 + 1e-6 * jnp.max(jnp.abs(da))):
            raise ValueError(f"custom activation {name!r}: dh is not the derivative of h (autodiff differs)")
    d0 = jnp.asarray((auto if dh is None else dh)(jnp.asarray([-1e-12, 1e-12], z.dtype)))
    unit = float(jnp.max(jnp.abs(jnp.where(jnp.abs(z) <= 1.0, dz, 0.0))))  # the size of h' on |z| <= 1
    if abs(float(d0[1] - d0[0])) > 1e-6 * unit:
        raise ValueError(f"custom activation {name!r} has a kink at 0 (h'(0-) = {float(d0[0]):g}, h'(0+) = "
                         f"{float(d0[1]):g}): only relu and leaky_relu have kink certificates; use those")
    found = _detect_degree(z, hz, dz)
    if degree is None:
        degree = found
    elif degree < 0 or not math.isfinite(degree) or (degree > 0 and (found == 0 or abs(found - degree) > 1e-6)):
        raise ValueError(f"custom activation {name!r}: declared degree={degree} but z h'(z) = p h(z) holds on "
                         f"|z| in [1e-3, 1e3] for " + (f"p = {found:g}" if found else "no p > 0"))
    seen = _detect_parity(z, hz)
    if parity is None:
        parity = seen
    elif parity not in ("odd", "even", "") or (parity and parity != seen):
        raise ValueError(f"custom activation {name!r}: declared parity={parity!r} (one of 'odd', 'even', '') but "
                         f"h is {seen or 'neither odd nor even'} on the grid")
    act = Activation(name, 0.0, Custom(h, dh, float(degree), parity))
    if register:
        _CUSTOM[name] = act
    return act
