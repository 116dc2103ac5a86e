"""Prop. 3.1's Eq. 6 of the SimCLR variational paper: the first variation of Eq. 4 with augmentations, as
printed, against the gradient of Eq. 4 by autodiff (``ntxent.eq4_loss_views``) on a discrete measure with
views, z[i, v] = f(T_v x_i) (n points, V views, probabilities p, q), Psi = log(1 + t), eta(t) = e^{-t/tau}.

The printed integrand (the vector paired with h(T x) in Eq. 6), at x = x_a, T = T_S, is

  sum_{T'} q_{T'} sum_y p_y [Psi'(G_{S,T'}(a)) / eta(S a, T' a) + Psi'(G_{S,T'}(y)) / eta(S y, T' y)]
      eta'(S a, T' y) (z_{aS} - z_{yT'})
  - sum_{T'} q_{T'} [Psi'(G_{S,T'}(a)) G_{S,T'}(a) + Psi'(G_{T',S}(a)) G_{T',S}(a)]
      eta'(S a, T' a) / eta(S a, T' a) (z_{aS} - z_{aT'}),

with G_{T,T'}(x) = sum_y p_y eta(T x, T' y) / eta(T x, T' x) and eta'(a, b) = eta'(|z_a - z_b|^2 / 2), so
that eta'(a, b)(z_a - z_b) is the gradient of eta(|z_a - z_b|^2 / 2) in z_a. Differentiating Eq. 4 gives
the same but with Psi'(G_{T',S}(y)) in the first bracket's second term: z_{aS} is the negative y = a, in
view T = S, of every anchor y whose *anchor* view is T' (G_{T',S}(y)), not the other way round. The two
agree when G_{S,T'}(y) = G_{T',S}(y), e.g. with one view or an invariant f; :func:`run` measures both on
random non-invariant embeddings, on invariant ones and with one view (Eq. 7, which the ledger checks
elsewhere). A frozen :class:`Eq6Config` in, a plain dict out (no I/O).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from ccdyn.variational import ntxent

__all__ = ["Eq6Config", "run", "integrand"]


@dataclasses.dataclass(frozen=True)
class Eq6Config:
    n: int = 5
    V: int = 3
    d: int = 3
    taus: tuple = (0.3, 1.0)
    draws: int = 3
    seed: int = 0


@functools.partial(jax.jit, static_argnames=("printed",))
def integrand(z, p, q, tau, printed: bool = True):
    """(n, V, d): Eq. 6's vector at every (x_a, T_S), as printed or with G_{T',S}(y) (the derivation)."""
    diff = z[:, :, None, None, :] - z[None, None, :, :, :]            # [a, S, y, T', :] = z_aS - z_yT'
    e = jnp.exp(-0.5 * jnp.sum(diff * diff, -1) / tau)                 # eta(S a, T' y)
    ep = -e / tau                                                      # eta'(.) of the same pair
    n, V = p.shape[0], q.shape[0]
    same = e[jnp.arange(n), :, jnp.arange(n), :]                       # [a, S, T'] = eta(S a, T' a)
    G = jnp.einsum("asyt,y->ast", e, p) / same                         # G_{S,T'}(a)
    psi1 = 1.0 / (1.0 + G)
    other = psi1 if printed else jnp.swapaxes(psi1, 1, 2)              # [y, S, T']: G_{S,T'}(y) or G_{T',S}(y)
    w = psi1[:, :, None, :] / same[:, :, None, :] + (other / same)[None, :, :, :].transpose(0, 2, 1, 3)
    first = jnp.einsum("asyt,asyt,asytk,y,t->ask", w, ep, diff, p, q)
    d_same = diff[jnp.arange(n), :, jnp.arange(n), :, :]               # [a, S, T', :] = z_aS - z_aT'
    ep_same = ep[jnp.arange(n), :, jnp.arange(n), :]
    coef = psi1 * G + jnp.swapaxes(psi1 * G, 1, 2)
    second = jnp.einsum("ast,ast,astk,t->ask", coef, ep_same / same, d_same, q)
    del V
    return first - second


@jax.jit
def _autodiff(z, p, q, tau):
    g = jax.grad(ntxent.eq4_loss_views)(z, p, q, tau)
    return g / (p[:, None, None] * q[None, :, None])


def run(c: Eq6Config = Eq6Config()) -> dict:
    key = jax.random.PRNGKey(c.seed)
    rows = []
    for tau in c.taus:
        for case in ("views", "invariant", "one view"):
            for _ in range(c.draws):
                key, k1, k2, k3, k4 = jax.random.split(key, 5)
                V = 1 if case == "one view" else c.V
                z = jax.random.normal(k1, (c.n, V, c.d), jnp.float64)
                if case == "invariant":
                    z = jnp.repeat(z[:, :1], V, axis=1)
                p = jax.random.dirichlet(k2, jnp.ones(c.n, jnp.float64))
                q = jax.random.dirichlet(k3, jnp.ones(V, jnp.float64))
                auto = _autodiff(z, p, q, tau)
                scale = float(jnp.abs(auto).max())
                rows.append({"case": case, "tau": tau,
                             "printed_rel_err": float(jnp.abs(integrand(z, p, q, tau, True) - auto).max()) / scale,
                             "derived_rel_err": float(jnp.abs(integrand(z, p, q, tau, False) - auto).max()) / scale})
    return {"config": dataclasses.asdict(c), "rows": rows}
