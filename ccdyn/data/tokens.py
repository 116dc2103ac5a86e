"""Token-generator data of Sec. 5 (Fig. 3) for the 2-layer experiments, as read in docs/two_layer_readings.md.

There are d tokens with embeddings u_a in R^d and K positions (one receptive field R_k each). Each
position k has a candidate set R_k^g of P tokens. Each of G generators fixes ``n_fixed`` random
positions to one of that position's candidates and leaves wildcards (*) elsewhere. A sample picks a
generator uniformly, fills every wildcard with a token drawn uniformly from all d tokens and embeds
token a as u_a, so x = [u_{a_1}; ...; u_{a_K}] in R^{K x d}. Its second view is another sample of the
same generator (the augmentation of Sec. 5), drawn independently.

Embeddings: a random orthonormal basis of R^d (rows of a Haar orthogonal matrix), rescaled to norm
zeta for the first floor(d/2) tokens and 1/zeta for the rest (App. E.2; zeta = 1 is orthonormal).

R_k^g as used by the matching scores (Eq. 16, 180, 181) holds the candidates that some generator
actually fixes at position k: a candidate that no generator uses only ever appears as a wildcard
fill, so it is indistinguishable from noise (docs/two_layer_readings.md). ``used`` is that (K, d) mask.
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp

from ccdyn import compiling, pytree

__all__ = ["TokenSpec", "TokenData", "TokenInputs", "make_tokens", "make_tokens_batch", "sample_tokens", "embed",
           "sample_view_tokens", "sample_views", "WILDCARD"]

WILDCARD = -1


@dataclasses.dataclass(frozen=True)
class TokenSpec:
    """Shape of the token-generator model (Sec. 5 defaults: G = 40, K = 10, d = 20, 5 fixed).

    Attributes:
      n_candidates: P, candidate tokens per position, 1 <= P <= n_tokens.
      n_generators: G >= 1.
      n_positions: K >= 1 receptive fields.
      n_tokens: d >= 1 tokens; the embedding dimension is also d.
      n_fixed: positions each generator fixes, 1 <= n_fixed <= K.
      zeta: embedding norm non-uniformity (App. E.2), > 0; 1 means orthonormal.
    """

    n_candidates: int = 3
    n_generators: int = 40
    n_positions: int = 10
    n_tokens: int = 20
    n_fixed: int = 5
    zeta: float = 1.0

    def __post_init__(self):
        checks = [
            ("n_tokens", self.n_tokens >= 1, ">= 1"),
            ("n_candidates", 1 <= self.n_candidates <= self.n_tokens, f"in [1, n_tokens={self.n_tokens}]"),
            ("n_generators", self.n_generators >= 1, ">= 1"),
            ("n_positions", self.n_positions >= 1, ">= 1"),
            ("n_fixed", 1 <= self.n_fixed <= self.n_positions, f"in [1, n_positions={self.n_positions}]"),
            ("zeta", self.zeta > 0, "> 0"),
        ]
        for name, ok, allowed in checks:
            if not ok:
                raise ValueError(f"token data: {name}={getattr(self, name)} must be {allowed}")


@pytree.dataclass(frozen=True)
class TokenData:
    """One instance of the token-generator model (a pytree; arrays of fixed shape for a given spec).

    Attributes:
      embeddings: (d, d), row a is u_a.
      candidates: (K, P) int, the candidate set R_k^g drawn for each position.
      generators: (G, K) int, the fixed token of each generator at each position or WILDCARD.
      used: (K, d) bool, token a is fixed at position k by at least one generator.
    """

    embeddings: chex.Array
    candidates: chex.Array
    generators: chex.Array
    used: chex.Array


def _embeddings(key, n_tokens: int, zeta: float, dtype):
    q, r = jnp.linalg.qr(jax.random.normal(key, (n_tokens, n_tokens), dtype))
    q = q * jnp.sign(jnp.diagonal(r))[None, :]  # Haar-distributed orthogonal matrix
    norms = jnp.where(jnp.arange(n_tokens) < n_tokens // 2, zeta, 1.0 / zeta).astype(dtype)
    return q.T * norms[:, None]


@pytree.dataclass(frozen=True)
class TokenInputs:
    """A batch of one-hot token inputs kept as token ids: x[n, k] = embeddings[tokens[n, k]].

    The dense input (n, K, d) of :func:`embed` is never formed: a first layer that sees these computes
    w_km^T x_k as a lookup in the (K, M, d) table W_k U^T (:mod:`ccdyn.two_layer.network`).

    Attributes:
      tokens: (n, K) int token ids.
      embeddings: (d, d), row a is u_a.
    """

    tokens: chex.Array
    embeddings: chex.Array


def make_tokens(key, spec: TokenSpec, dtype=None) -> TokenData:
    """Draw embeddings, candidate sets and generators of the Sec. 5 model from ``key``.

    ``dtype`` of the embeddings defaults to JAX's default float (float64 under x64).
    """
    dtype = dtype or jnp.result_type(float)
    k_emb, k_cand, k_pos, k_pick = jax.random.split(key, 4)
    n_pos, n_tok, n_cand = spec.n_positions, spec.n_tokens, spec.n_candidates
    cand_keys = jax.random.split(k_cand, n_pos)
    candidates = jax.vmap(lambda k: jax.random.permutation(k, n_tok)[:n_cand])(cand_keys)
    pos_keys = jax.random.split(k_pos, spec.n_generators)
    fixed = jax.vmap(lambda k: jax.random.permutation(k, n_pos) < spec.n_fixed)(pos_keys)  # (G, K)
    pick = jax.random.randint(k_pick, (spec.n_generators, n_pos), 0, n_cand)
    chosen = jnp.take_along_axis(candidates[None, :, :], pick[:, :, None], axis=2)[:, :, 0]
    generators = jnp.where(fixed, chosen, WILDCARD).astype(jnp.int32)
    counts = jnp.zeros((n_pos, n_tok), jnp.int32).at[jnp.arange(n_pos)[None, :], jnp.maximum(generators, 0)].add(
        fixed.astype(jnp.int32))
    return TokenData(embeddings=_embeddings(k_emb, n_tok, spec.zeta, dtype),
                     candidates=candidates.astype(jnp.int32), generators=generators, used=counts > 0)


@functools.partial(jax.jit, static_argnames=("spec", "dtype"), compiler_options=compiling.QUICK)
def make_tokens_batch(keys, spec: TokenSpec, dtype=None) -> TokenData:
    """:func:`make_tokens` for each of the keys (R, 2), in one compiled call: a TokenData with a leading
    run axis R (the op-by-op vmap takes seconds on CPU)."""
    return jax.vmap(lambda k: make_tokens(k, spec, dtype))(keys)


def sample_tokens(key, data: TokenData, generator_ids):
    """Token sequences (n, K) for the given generators (n,): wildcards filled uniformly from all d."""
    fixed = data.generators[generator_ids]
    fill = jax.random.randint(key, fixed.shape, 0, data.embeddings.shape[0])
    return jnp.where(fixed == WILDCARD, fill, fixed)


def embed(data: TokenData, tokens):
    """Inputs x (..., K, d) with x_k = u_{token_k}."""
    return data.embeddings[tokens]


def sample_view_tokens(key, data: TokenData, n: int):
    """A batch of n positive pairs as token ids: two independent samples of the same random generator.

    Returns:
      t1, t2: (n, K) token ids of view 1 and view 2.
    """
    if n < 2:
        raise ValueError(f"batch size n={n} must be >= 2 (contrastive pairs need negatives)")
    k_gen, k1, k2 = jax.random.split(key, 3)
    gen = jax.random.randint(k_gen, (n,), 0, data.generators.shape[0])
    return sample_tokens(k1, data, gen), sample_tokens(k2, data, gen)


def sample_views(key, data: TokenData, n: int):
    """The batch of :func:`sample_view_tokens` embedded: x1, x2 (n, K, d) inputs of view 1 and view 2."""
    t1, t2 = sample_view_tokens(key, data, n)
    return embed(data, t1), embed(data, t2)
