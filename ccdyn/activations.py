"""Activations h and their derivatives h' (Sec. 3, Assumption 1).

A homogeneous activation satisfies h'(x) x = p h(x) for a degree p. Degree 1 is Assumption 1 of the
paper (h(x) = h'(x) x: linear, ReLU, LeakyReLU); the quadratic monomial h(x) = x^2 has degree 2 and
only rescales the flow by 1/p (docs/conventions.md). For these, Eq. 6 holds up to the degree:
h(w^T x) = w^T x~^w / p with the gated input x~^w = x h'(w^T x).

ReLU uses h'(0) = 0 (App. B.1): a sample on the hyperplane w^T x = 0 is not active.

tanh and gelu are *not* homogeneous; they are here for contrast. For them the power-iteration view
A(w) w of Lemma 3 is not the gradient of the energy and the library refuses to run power iteration.

An :class:`Activation` is a small frozen (hashable) value, so it can be a static argument of ``jit``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp

__all__ = ["Activation", "get_activation", "ACTIVATIONS", "HOMOGENEOUS"]

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


@dataclasses.dataclass(frozen=True)
class Activation:
    """An activation h with derivative h' (hashable; use :func:`get_activation` to build one).

    Attributes:
      name: one of :data:`ACTIVATIONS`.
      slope: negative-side slope, used by ``leaky_relu`` only.
    """

    name: str
    slope: float = 0.0

    def h(self, z):
        """h(z), elementwise."""
        return _H[self.name](z, self.slope)

    def dh(self, z):
        """h'(z), elementwise; ReLU has h'(0) = 0 (App. B.1)."""
        return _DH[self.name](z, self.slope)

    @property
    def homogeneous(self) -> bool:
        """True when h'(x) x = degree * h(x) for all x (Assumption 1 up to the degree)."""
        return self.name in _DEGREE

    @property
    def degree(self) -> int:
        """Homogeneity degree p (h'(x) x = p h(x)); 1 for non-homogeneous activations.

        With this convention ``degree * h(z)`` equals z h'(z) exactly for every homogeneous h, and
        the ascent field C[x~, degree * h] is A(w) w (Lemma 3) for homogeneous h and the gradient
        of E for the others.
        """
        return _DEGREE.get(self.name, 1)

    @property
    def smooth(self) -> bool:
        """True when h' is continuous (no kink), so A(w) = C_alpha[x h'(w^T x)] is smooth in w."""
        return self.name not in ("relu", "leaky_relu")

    @property
    def odd(self) -> bool:
        """True when h(-x) = -h(x), so that w and -w give the same feature up to sign."""
        return self.name in ("linear", "tanh")


def get_activation(name: str, slope: float = DEFAULT_LEAKY_SLOPE) -> Activation:
    """Returns the activation called ``name``.

    Args:
      name: one of linear, relu, leaky_relu, quadratic (homogeneous) or tanh, gelu (not).
      slope: negative slope of leaky_relu, in [0, 1); ignored otherwise.

    Raises:
      ValueError: naming ``name`` or ``slope`` and the accepted values.
    """
    if isinstance(name, Activation):
        return name
    if name not in ACTIVATIONS:
        raise ValueError(f"activation name={name!r} is unknown; allowed: {', '.join(ACTIVATIONS)}")
    if name == "leaky_relu":
        slope = float(slope)
        if not (0.0 <= slope < 1.0) or not math.isfinite(slope):
            raise ValueError(f"leaky_relu slope={slope} must lie in [0, 1)")
        return Activation(name, slope)
    return Activation(name, 0.0)
