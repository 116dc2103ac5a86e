"""Matching scores of the 2-layer experiments (Eq. 16, 180, 181), as read in docs/two_layer_readings.md.

For receptive field R_k with filters w_km and the token embeddings u_a,

    chi_+(R_k) = mean_{a in R_k^g}     max_m cos(w_km, u_a),
    chi_-(R_k) = mean_{a not in R_k^g} max_m cos(w_km, u_a),

and chi_bar_+/- are their means over k. Eq. 181 prints 1/P in front of chi_-; we divide by the number
of tokens outside R_k^g instead, so that both scores lie in [-1, 1] and are comparable (docs/two_layer_readings.md).
R_k^g is the ``used`` mask of :class:`ccdyn.data.tokens.TokenData`. For an odd activation (linear)
w and -w compute the same feature, so ``odd=True`` scores |cos|.

Filter scores of the image experiment (App. E.3, :mod:`ccdyn.two_layer.studies.mnist`): the share of a
filter's energy at high spatial frequencies, the largest cosine between filters of one RF, and
the filters that never fire on the data.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

__all__ = ["best_match", "matching_scores", "high_frequency_fraction", "max_cosine", "dead_filters"]


def best_match(w, embeddings, odd: bool = False):
    """max_m cos(w_km, u_a) for every RF k and token a.

    Args:
      w: filters (K, M, d).
      embeddings: (n_tokens, d), row a is u_a.
      odd: score |cos| (w and -w are the same feature for an odd activation).

    Returns:
      (K, n_tokens).
    """
    chex.assert_rank(w, 3)
    chex.assert_rank(embeddings, 2)
    chex.assert_equal(w.shape[-1], embeddings.shape[-1])
    wn = w / jnp.maximum(jnp.linalg.norm(w, axis=-1, keepdims=True), jnp.finfo(w.dtype).tiny)
    un = embeddings / jnp.linalg.norm(embeddings, axis=-1, keepdims=True)
    cos = jnp.einsum("kmd,ad->kma", wn, un)
    if odd:
        cos = jnp.abs(cos)
    return jnp.max(cos, axis=1)


def matching_scores(w, embeddings, used, odd: bool = False):
    """chi_+ and chi_- per RF and overall (Eq. 16, 180, 181).

    Args:
      w: filters (K, M, d).
      embeddings: (n_tokens, d).
      used: (K, n_tokens) bool, the relevant set R_k^g of each RF.
      odd: score |cos|.

    Returns:
      dict with ``chi_plus_rf``, ``chi_minus_rf`` (K,) and ``chi_plus``, ``chi_minus`` (scalars). An RF
      whose R_k^g is empty (or full) has no chi_+ (or chi_-) and is left out of the mean; it is NaN.
    """
    chex.assert_shape(used, (w.shape[0], embeddings.shape[0]))
    best = best_match(w, embeddings, odd)
    used = used.astype(best.dtype)
    n_in, n_out = jnp.sum(used, axis=1), jnp.sum(1.0 - used, axis=1)
    plus = jnp.where(n_in > 0, jnp.sum(best * used, axis=1) / jnp.maximum(n_in, 1), jnp.nan)
    minus = jnp.where(n_out > 0, jnp.sum(best * (1.0 - used), axis=1) / jnp.maximum(n_out, 1), jnp.nan)
    return {"chi_plus_rf": plus, "chi_minus_rf": minus,
            "chi_plus": jnp.nanmean(plus), "chi_minus": jnp.nanmean(minus)}


@functools.partial(jax.jit, static_argnames=("side",))
def high_frequency_fraction(w, side: int):
    """Share of the energy of each filter at radial frequency > 1/4 cycles per pixel, (..., M) from
    filters (..., M, side * side) laid out row-major."""
    img = w.reshape(w.shape[:-1] + (side, side))
    power = jnp.abs(jnp.fft.fft2(img)) ** 2
    f = jnp.fft.fftfreq(side)
    high = (f[:, None] ** 2 + f[None, :] ** 2) > 1 / 16
    total = jnp.sum(power, axis=(-2, -1))
    return jnp.sum(jnp.where(high, power, 0.0), axis=(-2, -1)) / jnp.maximum(total, jnp.finfo(power.dtype).tiny)


@functools.partial(jax.jit, static_argnames=("signed",))
def max_cosine(w, signed: bool = True, mask=None):
    """For each filter of (..., M, d), the largest (|)cosine(|) with another filter of the same bank, (..., M).

    ``mask`` (..., M) bool: compare only filters inside the mask; a filter outside it, or without a
    partner inside it, gets NaN."""
    u = w / jnp.maximum(jnp.linalg.norm(w, axis=-1, keepdims=True), jnp.finfo(w.dtype).tiny)
    cos = jnp.einsum("...md,...nd->...mn", u, u)
    cos = cos if signed else jnp.abs(cos)
    m = w.shape[-2]
    other = ~jnp.eye(m, dtype=bool)
    if mask is not None:
        other = other & mask[..., :, None] & mask[..., None, :]
    best = jnp.max(jnp.where(other, cos, -jnp.inf), axis=-1)
    return jnp.where(jnp.any(other, axis=-1), best, jnp.nan)


@jax.jit
def dead_filters(w, x):
    """(K, M) bool: filters w (K, M, d) whose pre-activation w_km^T x_k is <= 0 on every input x (n, K, d);
    a ReLU filter so placed never fires and gets no gradient from the loss."""
    return jnp.max(jnp.einsum("nkd,kmd->nkm", x, w), axis=0) <= 0
