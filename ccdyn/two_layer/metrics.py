"""Matching scores of the 2-layer experiments (Eq. 16, 180, 181), as read in docs/two_layer_readings.md.

For receptive field R_k with filters w_km and the token embeddings u_a,

    chi_+(R_k) = mean_{a in R_k^g}     max_m cos(w_km, u_a),
    chi_-(R_k) = mean_{a not in R_k^g} max_m cos(w_km, u_a),

and chi_bar_+/- are their means over k. Eq. 181 prints 1/P in front of chi_-; we divide by the number
of tokens outside R_k^g instead, so that both scores lie in [-1, 1] and are comparable (docs/two_layer_readings.md).
R_k^g is the ``used`` mask of :class:`ccdyn.data.tokens.TokenData`. For an odd activation (linear)
w and -w compute the same feature, so ``odd=True`` scores |cos|.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

__all__ = ["best_match", "matching_scores"]


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
