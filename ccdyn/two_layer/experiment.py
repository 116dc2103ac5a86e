"""The token-generator experiment of Sec. 5 / App. E.2: one grid point trained over several seeds.

A grid point is an :class:`Setting` (activation, beta, P, loss, BatchNorm variant, zeta). Its network
has M = beta P filters per RF. Seed s draws the data instance (embeddings, candidates, generators),
the minibatch stream and the initialization from three independent streams of ``fold_in(key, s)``:
the data instance and minibatches depend only on (seed, P, zeta), so every activation, beta, loss and
BN variant of a seed sees the same data, which makes the comparisons paired. All seeds of a setting
are trained together (:func:`ccdyn.net_lib.train`, vmapped).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations
from ccdyn.two_layer import metrics
from ccdyn.two_layer import network as net_lib
from ccdyn.data import tokens

__all__ = ["Setting", "seed_keys", "network", "run_setting", "init_scores", "aggregate"]


@dataclasses.dataclass(frozen=True)
class Setting:
    """One grid point of the token-generator experiment.

    Attributes:
      act: activation name (see :mod:`ccdyn.activations`).
      beta: over-parameterization, an integer >= 1; M = beta P filters per RF.
      n_candidates: P, candidate tokens per position, in [1, n_tokens].
      loss: ``infonce`` or ``quadratic``.
      bn: BatchNorm variant (:data:`ccdyn.net_lib.BN_VARIANTS`).
      zeta: embedding norm non-uniformity (App. E.2), > 0.
    """

    act: str = "relu"
    beta: int = 1
    n_candidates: int = 1
    loss: str = "infonce"
    bn: str = "none"
    zeta: float = 1.0

    def __post_init__(self):
        if not (isinstance(self.beta, (int, np.integer)) and self.beta >= 1):
            raise ValueError(f"beta={self.beta!r} must be an integer >= 1 (M = beta P filters per RF)")
        if self.loss not in net_lib.LOSSES:
            raise ValueError(f"loss={self.loss!r} is unknown; allowed: {', '.join(net_lib.LOSSES)}")
        if self.bn not in net_lib.BN_VARIANTS:
            raise ValueError(f"bn={self.bn!r} is unknown; allowed: {', '.join(net_lib.BN_VARIANTS)}")
        activations.get_activation(self.act)

    @property
    def tag(self) -> str:
        """File-name-safe identifier."""
        return (f"{self.loss}-{self.act}-bn_{self.bn}-zeta{self.zeta:g}-P{self.n_candidates}"
                f"-beta{self.beta}")


def seed_keys(seed: int, n_seeds: int):
    """(data, minibatch, init) keys of seeds 0..n_seeds-1, each (n_seeds, 2)."""
    keys = jax.vmap(lambda s: jax.random.split(jax.random.fold_in(jax.random.PRNGKey(seed), s), 3))(
        np.arange(n_seeds))
    return keys[:, 0], keys[:, 1], keys[:, 2]


def run_setting(setting: Setting, cfg: net_lib.TrainConfig, *, n_seeds: int = 3, seed: int = 0,
                spec: tokens.TokenSpec | None = None, d_out: int = 50, block: int = 500,
                on_block=None) -> dict:
    """Train ``n_seeds`` runs of one setting together and score them (Eq. 16, 180, 181).

    Args:
      setting: the grid point; ``setting.loss`` overrides ``cfg.loss``.
      cfg: optimizer and loss settings shared by the grid.
      spec: token model besides P and zeta (default: Sec. 5, G = 40, K = 10, d = 20, 5 fixed).
      d_out: rows of V.
      block, on_block: see :func:`ccdyn.net_lib.train`.

    Returns:
      dict of numpy arrays over seeds: ``chi_plus``, ``chi_minus`` (n_seeds,), ``chi_plus_rf``,
      ``chi_minus_rf`` (n_seeds, K), ``turn_deg`` (n_seeds,: mean angle in degrees between each
      filter's initial and final direction), ``finite``, ``stopped_at`` (n_seeds,), ``loss`` (n_blocks,
      n_seeds) and ``W`` (n_seeds, K, M, d) and ``used`` (n_seeds, K, d), ``embeddings`` (n_seeds, d, d).
      Scores of a non-finite run are NaN.
    """
    net, datas, (batch_keys, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    cfg = dataclasses.replace(cfg, loss=setting.loss)
    states, history = net_lib.train(init_keys, batch_keys, datas, net, cfg, block=block, on_block=on_block)
    scores = _scores(states.params["W"], datas, net)
    finite = np.asarray(states.finite)
    scores = dict(scores, turn_deg=_turn_degrees(jax.vmap(lambda k: net_lib.init_params(k, net)["W"])(init_keys),
                                                 states.params["W"]))
    out = {k: np.where(finite.reshape((-1,) + (1,) * (np.ndim(v) - 1)), np.asarray(v), np.nan)
           for k, v in scores.items()}
    out.update(finite=finite, stopped_at=np.asarray(states.stopped_at), loss=np.asarray(history),
               W=np.asarray(states.params["W"]), used=np.asarray(datas.used),
               embeddings=np.asarray(datas.embeddings))
    return out


def network(setting: Setting, spec: tokens.TokenSpec, d_out: int = 50) -> net_lib.Net:
    """The 2-layer network of a setting: K = n_positions RFs of dimension d = n_tokens, M = beta P."""
    return net_lib.Net(n_rf=spec.n_positions, d=spec.n_tokens, n_filters=setting.beta * setting.n_candidates,
                         d_out=d_out, act=activations.get_activation(setting.act), bn=setting.bn)


def _prepare(setting, n_seeds, seed, spec, d_out):
    if n_seeds < 1:
        raise ValueError(f"n_seeds={n_seeds} must be >= 1")
    spec = dataclasses.replace(spec or tokens.TokenSpec(), n_candidates=setting.n_candidates, zeta=setting.zeta)
    net = network(setting, spec, d_out)
    data_keys, batch_keys, init_keys = seed_keys(seed, n_seeds)
    datas = jax.vmap(lambda k: tokens.make_tokens(k, spec))(data_keys)
    return net, datas, (batch_keys, init_keys)


def _turn_degrees(w0, w1):
    """Mean over filters of the angle between w0 and w1 (runs, K, M, d) -> (runs,), in degrees."""
    cos = jnp.sum(w0 * w1, -1) / (jnp.linalg.norm(w0, axis=-1) * jnp.linalg.norm(w1, axis=-1))
    return jnp.degrees(jnp.mean(jnp.arccos(jnp.clip(cos, -1.0, 1.0)), axis=(1, 2)))


def _scores(w, datas, net):
    return jax.vmap(lambda w, d: metrics.matching_scores(w, d.embeddings, d.used, odd=net.act.odd))(w, datas)


def init_scores(setting: Setting, *, n_seeds: int = 3, seed: int = 0, spec: tokens.TokenSpec | None = None,
                d_out: int = 50) -> dict:
    """chi_+ and chi_- of the untrained initial filters of every seed (the chance level of a setting).

    Uses the same keys as :func:`run_setting`, so it is the starting point of those runs; with M
    random filters per RF the best cosine with any token grows with M, for relevant and irrelevant
    tokens alike.
    """
    net, datas, (_, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    w = jax.vmap(lambda k: net_lib.init_params(k, net)["W"])(init_keys)
    s = _scores(w, datas, net)
    return {"chi_plus": np.asarray(s["chi_plus"]), "chi_minus": np.asarray(s["chi_minus"])}


def aggregate(values) -> dict:
    """Mean and standard deviation (ddof 0, as numpy) over the finite entries; ``n`` counts them."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "n": 0}
    return {"mean": float(v.mean()), "std": float(v.std()), "n": int(v.size)}
