"""The token-generator experiment of Sec. 5 / App. E.2: one grid point trained over several seeds.

A grid point is an :class:`Setting` (activation, beta, P, loss, BatchNorm variant, zeta). Its network
has M = beta P filters per RF. Seed s draws the data instance (embeddings, candidates, generators),
the minibatch stream and the initialization from three independent streams of ``fold_in(key, s)``:
the data instance and minibatches depend only on (seed, P, zeta), so every activation, beta, loss and
BN variant of a seed sees the same data, which makes the comparisons paired. All seeds of a setting
are trained together (:func:`ccdyn.two_layer.train`, vmapped).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, metrics, two_layer
from ccdyn.data import tokens

__all__ = [
    "Setting", "seed_keys", "network", "run_setting", "init_scores", "aggregate", "verdict_word", "check_p1",
    "check_relu_beats_linear", "check_infonce_beats_quadratic", "check_relu_lowest_chi_minus", "check_bn_helps",
    "check_sigma_backprop_hurts",
]


@dataclasses.dataclass(frozen=True)
class Setting:
    """One grid point of the token-generator experiment.

    Attributes:
      act: activation name (see :mod:`ccdyn.activations`).
      beta: over-parameterization, an integer >= 1; M = beta P filters per RF.
      n_candidates: P, candidate tokens per position, in [1, n_tokens].
      loss: ``infonce`` or ``quadratic``.
      bn: BatchNorm variant (:data:`ccdyn.two_layer.BN_VARIANTS`).
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
        if self.loss not in two_layer.LOSSES:
            raise ValueError(f"loss={self.loss!r} is unknown; allowed: {', '.join(two_layer.LOSSES)}")
        if self.bn not in two_layer.BN_VARIANTS:
            raise ValueError(f"bn={self.bn!r} is unknown; allowed: {', '.join(two_layer.BN_VARIANTS)}")
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


def run_setting(setting: Setting, cfg: two_layer.TrainConfig, *, n_seeds: int = 3, seed: int = 0,
                spec: tokens.TokenSpec | None = None, d_out: int = 50, block: int = 500,
                on_block=None) -> dict:
    """Train ``n_seeds`` runs of one setting together and score them (Eq. 16, 180, 181).

    Args:
      setting: the grid point; ``setting.loss`` overrides ``cfg.loss``.
      cfg: optimizer and loss settings shared by the grid.
      spec: token model besides P and zeta (default: Sec. 5, G = 40, K = 10, d = 20, 5 fixed).
      d_out: rows of V.
      block, on_block: see :func:`ccdyn.two_layer.train`.

    Returns:
      dict of numpy arrays over seeds: ``chi_plus``, ``chi_minus`` (n_seeds,), ``chi_plus_rf``,
      ``chi_minus_rf`` (n_seeds, K), ``turn_deg`` (n_seeds,: mean angle in degrees between each
      filter's initial and final direction), ``finite``, ``stopped_at`` (n_seeds,), ``loss`` (n_blocks,
      n_seeds) and ``W`` (n_seeds, K, M, d) and ``used`` (n_seeds, K, d), ``embeddings`` (n_seeds, d, d).
      Scores of a non-finite run are NaN.
    """
    net, datas, (batch_keys, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    cfg = dataclasses.replace(cfg, loss=setting.loss)
    states, history = two_layer.train(init_keys, batch_keys, datas, net, cfg, block=block, on_block=on_block)
    scores = _scores(states.params["W"], datas, net)
    finite = np.asarray(states.finite)
    scores = dict(scores, turn_deg=_turn_degrees(jax.vmap(lambda k: two_layer.init_params(k, net)["W"])(init_keys),
                                                 states.params["W"]))
    out = {k: np.where(finite.reshape((-1,) + (1,) * (np.ndim(v) - 1)), np.asarray(v), np.nan)
           for k, v in scores.items()}
    out.update(finite=finite, stopped_at=np.asarray(states.stopped_at), loss=np.asarray(history),
               W=np.asarray(states.params["W"]), used=np.asarray(datas.used),
               embeddings=np.asarray(datas.embeddings))
    return out


def network(setting: Setting, spec: tokens.TokenSpec, d_out: int = 50) -> two_layer.Net:
    """The 2-layer network of a setting: K = n_positions RFs of dimension d = n_tokens, M = beta P."""
    return two_layer.Net(n_rf=spec.n_positions, d=spec.n_tokens, n_filters=setting.beta * setting.n_candidates,
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
    w = jax.vmap(lambda k: two_layer.init_params(k, net)["W"])(init_keys)
    s = _scores(w, datas, net)
    return {"chi_plus": np.asarray(s["chi_plus"]), "chi_minus": np.asarray(s["chi_minus"])}


def aggregate(values) -> dict:
    """Mean and standard deviation (ddof 0, as numpy) over the finite entries; ``n`` counts them."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "n": 0}
    return {"mean": float(v.mean()), "std": float(v.std()), "n": int(v.size)}


# --- The paper's claims about Fig. 4, 9, 10, 11 and Table 1 as numeric checks on result rows. ---
# A row is one entry of ``results.json["rows"]`` written by scripts/two_layer.py. Each check returns
# {"claim", "parts" (sub-claim -> bool), "holds" (all parts; None when the rows lack the cells),
# "numbers" (what was compared)}. Differences smaller than ``margin`` count as "no difference".

def _table(rows, score="chi_plus"):
    return {(r["loss"], r["act"], r["bn"], float(r["zeta"]), r["n_candidates"], r["beta"]): r[score]["mean"]
            for r in rows}


def _get(t, loss="infonce", act="relu", bn="none", zeta=1.0, p=1, beta=1):
    return t.get((loss, act, bn, float(zeta), p, beta), float("nan"))


def _axes(rows):
    return sorted({r["beta"] for r in rows}), sorted({r["n_candidates"] for r in rows})


def _verdict(claim, parts, numbers):
    if parts is None:
        return {"claim": claim, "holds": None, "parts": {}, "numbers": {}}
    parts = {k: bool(v) for k, v in parts.items()}
    return {"claim": claim, "holds": all(parts.values()), "parts": parts, "numbers": numbers}


def verdict_word(v) -> str:
    """'holds', 'partly' (some parts hold) or 'fails'."""
    if v["holds"]:
        return "holds"
    return "partly" if any(v["parts"].values()) else "fails"


def check_p1(rows, loss="infonce", bn="none", zeta=1.0, margin=0.05):
    """P = 1: linear works well regardless of beta, ReLU needs large beta (Fig. 4, 9a).

    Parts: linear's chi_+ varies by less than ``margin`` over beta; linear beats ReLU by more than
    ``margin`` at the smallest beta; ReLU's chi_+ grows by more than ``margin`` from the smallest to the
    largest beta.
    """
    claim = "P=1: linear good at every beta, ReLU needs large beta"
    betas, _ = _axes(rows)
    t = _table(rows)
    lin = [_get(t, loss, "linear", bn, zeta, 1, b) for b in betas]
    relu = [_get(t, loss, "relu", bn, zeta, 1, b) for b in betas]
    if not np.all(np.isfinite(lin + relu)) or len(betas) < 2:
        return _verdict(claim, None, {})
    parts = {"linear flat over beta": max(lin) - min(lin) < margin,
             "linear > ReLU at beta=1": lin[0] > relu[0] + margin,
             "ReLU improves with beta": relu[-1] - relu[0] > margin}
    return _verdict(claim, parts, {"betas": betas, "linear": lin, "relu": relu})


def check_relu_beats_linear(rows, loss="infonce", bn="none", zeta=1.0, margin=0.05):
    """P > 1, beta > 1: ReLU beats linear and improves with beta; linear is much less affected (Fig. 4, 9b).

    Parts: ReLU > linear in every cell with P > 1 and beta > 1; ReLU's chi_+ at the largest beta exceeds
    that at the smallest by more than ``margin`` at every P > 1; and linear's change over the same range
    is smaller in size than ReLU's gain at every P > 1.
    """
    claim = "P>1, beta>1: ReLU > linear, ReLU improves with beta, linear much less affected"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p > 1 and b > 1]
    diffs = [_get(t, loss, "relu", bn, zeta, p, b) - _get(t, loss, "linear", bn, zeta, p, b) for p, b in cells]
    gains = {p: _get(t, loss, "relu", bn, zeta, p, betas[-1]) - _get(t, loss, "relu", bn, zeta, p, betas[0])
             for p in ps if p > 1}
    lin_gain = {p: _get(t, loss, "linear", bn, zeta, p, betas[-1]) - _get(t, loss, "linear", bn, zeta, p, betas[0])
                for p in ps if p > 1}
    if not cells or not np.all(np.isfinite(diffs)):
        return _verdict(claim, None, {})
    parts = {"ReLU > linear in every cell": min(diffs) > 0,
             "ReLU improves with beta at every P>1": min(gains.values()) > margin,
             "linear's change over beta smaller than ReLU's gain at every P>1":
                 all(abs(lin_gain[p]) < gains[p] for p in gains)}
    return _verdict(claim, parts,
                    {"relu_minus_linear_min": min(diffs), "relu_minus_linear_mean": float(np.mean(diffs)),
                     "relu_wins": f"{sum(d > 0 for d in diffs)}/{len(diffs)}",
                     "relu_gain_beta_max_vs_min": gains, "linear_change_beta_max_vs_min": lin_gain})


def check_infonce_beats_quadratic(rows, bn="none", zeta=1.0):
    """InfoNCE gives a higher chi_+ than the quadratic loss (Fig. 10), per activation, over all cells."""
    t = _table(rows)
    acts = sorted({r["act"] for r in rows})
    betas, ps = _axes(rows)
    per_act = {}
    for a in acts:
        d = [_get(t, "infonce", a, bn, zeta, p, b) - _get(t, "quadratic", a, bn, zeta, p, b) for p in ps for b in betas]
        d = [x for x in d if np.isfinite(x)]
        if d:
            per_act[a] = {"mean_diff": float(np.mean(d)), "infonce_wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
    if not per_act:
        return _verdict("InfoNCE beats the quadratic loss", None, {})
    return _verdict("InfoNCE beats the quadratic loss",
                    {f"{a}: mean chi_+ higher with InfoNCE": v["mean_diff"] > 0 for a, v in per_act.items()}, per_act)


def check_relu_lowest_chi_minus(rows, loss="infonce", bn="none", zeta=1.0):
    """ReLU has the lowest chi_bar_- of all activations (Fig. 9)."""
    t = _table(rows, "chi_minus")
    acts = sorted({r["act"] for r in rows if r["loss"] == loss})
    betas, ps = _axes(rows)
    if "relu" not in acts or len(acts) < 2:
        return _verdict("ReLU has the lowest chi_-", None, {})
    means = {a: float(np.nanmean([_get(t, loss, a, bn, zeta, p, b) for p in ps for b in betas])) for a in acts}
    wins = sum(min(acts, key=lambda a: _get(t, loss, a, bn, zeta, p, b)) == "relu" for p in ps for b in betas)
    parts = {"ReLU lowest mean chi_-": min(means, key=means.get) == "relu"}
    if "linear" in means and len(acts) > 2:
        parts["ReLU below linear"] = means["relu"] < means["linear"]
    return _verdict("ReLU has the lowest chi_-", parts,
                    {"mean_chi_minus": means, "relu_lowest_in_cells": f"{wins}/{len(ps) * len(betas)}"})


def check_bn_helps(rows, zeta=10.0, loss="infonce", act="relu", bn="mean_only", min_beta=5, min_p=5):
    """At large non-uniformity, BN raises chi_+ for large beta and P (Fig. 11)."""
    claim = f"zeta={zeta:g}: BN ({bn}) helps at beta>={min_beta}, P>={min_p}"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p >= min_p and b >= min_beta]
    diffs = [_get(t, loss, act, bn, zeta, p, b) - _get(t, loss, act, "none", zeta, p, b) for p, b in cells]
    allc = [_get(t, loss, act, bn, zeta, p, b) - _get(t, loss, act, "none", zeta, p, b) for p in ps for b in betas]
    if not cells or not np.all(np.isfinite(diffs)):
        return _verdict(claim, None, {})
    return _verdict(claim, {"BN higher chi_+ in every such cell": min(diffs) > 0},
                    {"bn_minus_none": dict(zip([f"P{p}-beta{b}" for p, b in cells], diffs)),
                     "mean_over_all_cells": float(np.nanmean(allc))})


def check_sigma_backprop_hurts(rows, zeta=10.0, loss="infonce", act="relu", max_beta=2, min_p=3):
    """Table 1: backpropagating sigma hurts at small beta and P >= 3 (with or without mu backprop)."""
    claim = "Table 1: sigma backprop hurts at beta<=2, P>=3"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p >= min_p and b <= max_beta]
    pairs = {"mu not backpropagated": ("none_backprop", "var_only"), "mu backpropagated": ("mean_only", "vanilla")}
    out, parts = {}, {}
    for name, (no_sig, sig) in pairs.items():
        d = [_get(t, loss, act, no_sig, zeta, p, b) - _get(t, loss, act, sig, zeta, p, b) for p, b in cells]
        if not cells or not np.all(np.isfinite(d)):
            return _verdict(claim, None, {})
        out[name] = {"no_sigma_minus_sigma": dict(zip([f"P{p}-beta{b}" for p, b in cells], d)),
                     "wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
        parts[f"{name}: sigma backprop lower in every cell"] = min(d) > 0
    return _verdict(claim, parts, out)
