"""The token-generator experiment of Sec. 5 / App. E.2: one grid point trained over several seeds.

A grid point is an :class:`Setting` (activation, beta, P, loss, BatchNorm variant, zeta). Its network
has M = beta P filters per RF. Seed s draws the data instance (embeddings, candidates, generators),
the minibatch stream and the initialization from three independent streams of ``fold_in(key, s)``:
the data instance and minibatches depend only on (seed, P, zeta), so every activation, beta, loss and
BN variant of a seed sees the same data, which makes the comparisons paired (:func:`ccdyn.grid.seed_keys`).
All seeds of a setting are trained together (:func:`ccdyn.two_layer.network.train`, vmapped).

A grid (:class:`GridConfig`, ``scripts/two_layer.py``, run by :func:`ccdyn.grid.run`) is every
combination of losses x BN variants x zetas x activations x P x beta; :func:`setting_result` is the
per-setting record (the unit of resume), :func:`result_row` the aggregated row of ``results.json`` and
:func:`results_csv` / :func:`results_table` / :func:`matching_curves` the tables and figure curves
built from the rows.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, compiling, grid, report
from ccdyn.data import tokens
from ccdyn.two_layer import metrics
from ccdyn.two_layer import network as net_lib

__all__ = ["Setting", "network", "run_setting", "init_scores", "aggregate", "GridConfig", "READINGS",
           "run_setting_checkpoints", "memory_estimate", "setting_result", "nonfinite_seeds", "token_coords",
           "result_row", "results_csv", "results_table", "results_table_key", "matching_curves", "weights_label"]


@dataclasses.dataclass(frozen=True)
class Setting:
    """One grid point of the token-generator experiment.

    Attributes:
      act: activation name (see :mod:`ccdyn.activations`).
      beta: over-parameterization, an integer >= 1; M = beta P filters per RF.
      n_candidates: P, candidate tokens per position, in [1, n_tokens].
      loss: ``infonce`` or ``quadratic``.
      bn: BatchNorm variant (:data:`ccdyn.two_layer.network.BN_VARIANTS`).
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


def run_setting(setting: Setting, cfg: net_lib.TrainConfig, *, n_seeds: int = 3, seed: int = 0,
                spec: tokens.TokenSpec | None = None, d_out: int = 50, block: int = 500,
                on_block=None) -> dict:
    """Train ``n_seeds`` runs of one setting together and score them (Eq. 16, 180, 181).

    Args:
      setting: the grid point; ``setting.loss`` overrides ``cfg.loss``.
      cfg: optimizer and loss settings shared by the grid.
      spec: token model besides P and zeta (default: Sec. 5, G = 40, K = 10, d = 20, 5 fixed).
      d_out: rows of V.
      block, on_block: see :func:`ccdyn.two_layer.network.train`.

    Returns:
      dict of numpy arrays over seeds: ``chi_plus``, ``chi_minus`` (n_seeds,), ``chi_plus_rf``,
      ``chi_minus_rf`` (n_seeds, K), ``turn_deg`` (n_seeds,: mean angle in degrees between each
      filter's initial and final direction), ``finite``, ``stopped_at`` (n_seeds,), ``loss`` (n_blocks,
      n_seeds) and ``W`` (n_seeds, K, M, d) and ``used`` (n_seeds, K, d), ``embeddings`` (n_seeds, d, d).
      Scores of a non-finite run are NaN with ``cfg.on_nonfinite="drop"``; with ``"revert"`` the run
      keeps the scores of its reverted parameters (``finite`` and ``stopped_at`` still tell it went
      non-finite).
    """
    net, datas, (batch_keys, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    cfg = dataclasses.replace(cfg, loss=setting.loss)
    states, history = net_lib.train(init_keys, batch_keys, datas, net, cfg, block=block, on_block=on_block)
    return _scored(states, history, _init_w(init_keys, net), datas, net, cfg)


def run_setting_checkpoints(setting: Setting, cfg: net_lib.TrainConfig, checkpoints, *, n_seeds: int = 3,
                            seed: int = 0, spec: tokens.TokenSpec | None = None, d_out: int = 50, block: int = 500,
                            on_block=None) -> dict:
    """:func:`run_setting` scored after each of ``checkpoints`` steps of one training run.

    The optimizer has no schedule, so the result at checkpoint c is that of :func:`run_setting` with
    ``cfg.steps = c`` (same seeds, same minibatches); the runs are continued, not restarted.
    ``cfg.steps`` is ignored. Returns {c: result}; each ``loss`` holds the blocks since the previous
    checkpoint.
    """
    if not checkpoints or min(checkpoints) < 1:
        raise ValueError(f"checkpoints={checkpoints} must be a non-empty list of step counts >= 1")
    net, datas, (batch_keys, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    w0, states, done, out = _init_w(init_keys, net), None, 0, {}
    for c in sorted(set(checkpoints)):
        cfg_c = dataclasses.replace(cfg, loss=setting.loss, steps=c)
        states, history = net_lib.train(init_keys, batch_keys, datas, net, cfg_c, block=block, on_block=on_block,
                                        states=states, start=done)
        out[c], done = _scored(states, history, w0, datas, net, cfg_c), c
    return out


def _scored(states, history, w0, datas, net, cfg) -> dict:
    """The :func:`run_setting` record of trained states."""
    scores = _final_scores(states.params["W"], w0, datas, net)
    finite = np.asarray(states.finite)
    kept = finite if cfg.on_nonfinite == "drop" else np.ones_like(finite)
    out = {k: np.where(kept.reshape((-1,) + (1,) * (np.ndim(v) - 1)), np.asarray(v), np.nan)
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
    data_keys, batch_keys, init_keys = grid.seed_keys(seed, n_seeds, 3)  # (data, minibatch, init) streams
    return net, tokens.make_tokens_batch(data_keys, spec), (batch_keys, init_keys)


@functools.partial(jax.jit, static_argnames="net", compiler_options=compiling.QUICK)
def _init_w(init_keys, net):
    """The initial filters W (runs, K, M, d) of each init key (one compiled call)."""
    return jax.vmap(lambda k: net_lib.init_params(k, net)["W"])(init_keys)


def _turn_degrees(w0, w1):
    """Mean over filters of the angle between w0 and w1 (runs, K, M, d) -> (runs,), in degrees."""
    cos = jnp.sum(w0 * w1, -1) / (jnp.linalg.norm(w0, axis=-1) * jnp.linalg.norm(w1, axis=-1))
    return jnp.degrees(jnp.mean(jnp.arccos(jnp.clip(cos, -1.0, 1.0)), axis=(1, 2)))


def _score_runs(w, datas, net):
    return jax.vmap(lambda w, d: metrics.matching_scores(w, d.embeddings, d.used, odd=net.act.odd))(w, datas)


_scores = jax.jit(_score_runs, static_argnames="net", compiler_options=compiling.QUICK)


@functools.partial(jax.jit, static_argnames="net", compiler_options=compiling.QUICK)
def _final_scores(w, w0, datas, net):
    """Matching scores of the trained filters w and the angle turned from w0, in one compiled call."""
    return dict(_score_runs(w, datas, net), turn_deg=_turn_degrees(w0, w))


def init_scores(setting: Setting, *, n_seeds: int = 3, seed: int = 0, spec: tokens.TokenSpec | None = None,
                d_out: int = 50) -> dict:
    """chi_+ and chi_- of the untrained initial filters of every seed (the chance level of a setting).

    Uses the same keys as :func:`run_setting`, so it is the starting point of those runs; with M
    random filters per RF the best cosine with any token grows with M, for relevant and irrelevant
    tokens alike.
    """
    net, datas, (_, init_keys) = _prepare(setting, n_seeds, seed, spec, d_out)
    s = _scores(_init_w(init_keys, net), datas, net)
    return {"chi_plus": np.asarray(s["chi_plus"]), "chi_minus": np.asarray(s["chi_minus"])}


def aggregate(values) -> dict:
    """Mean and standard deviation (ddof 0, as numpy) over the finite entries; ``n`` counts them."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "n": 0}
    return {"mean": float(v.mean()), "std": float(v.std()), "n": int(v.size)}


# How the scores of results.json are to be read (written into its config).
READINGS = ("R_k^g = candidates some generator fixes at position k",
            "chi_- divided by the number of tokens outside R_k^g",
            "odd activations (linear, tanh) score |cos|",
            "init: PyTorch nn.Linear default U(+-1/sqrt(fan_in)), no biases")


@dataclasses.dataclass(frozen=True)
class GridConfig(grid.Axes):
    """A grid of settings trained over the same seeds (``scripts/two_layer.py``).

    Attributes:
      acts, betas, ps, losses, bns, zetas: the values of each axis (non-empty tuples); every
        combination is a :class:`Setting` (:meth:`settings`: losses x bns x zetas x acts x ps x betas,
        the last varies fastest).
      n_seeds, seed: seeds per setting (vmapped together) and the base seed (:func:`ccdyn.grid.seed_keys`).
      d_out, block: rows of V and steps per compiled block (:func:`run_setting`).
      train: optimizer and loss (``train.loss`` is overridden per setting).
      spec: token model; its ``n_candidates`` and ``zeta`` are overridden per setting.
    """

    acts: tuple = ("relu",)
    betas: tuple = (1, 2, 5, 10)
    ps: tuple = (1, 3, 5, 10)
    losses: tuple = ("infonce",)
    bns: tuple = ("none",)
    zetas: tuple = (1.0,)
    n_seeds: int = 3
    seed: int = 0
    d_out: int = 50
    block: int = 500
    train: net_lib.TrainConfig = net_lib.TrainConfig()
    spec: tokens.TokenSpec = tokens.TokenSpec()

    SETTING = Setting
    AXES = (("losses", "loss"), ("bns", "bn"), ("zetas", "zeta"), ("acts", "act"), ("ps", "n_candidates"),
            ("betas", "beta"))

    def __post_init__(self):
        for name in ("acts", "betas", "ps", "losses", "bns", "zetas"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        if not all(1 <= p <= self.spec.n_tokens for p in self.ps):
            raise ValueError(f"ps={self.ps} must be integers in [1, n_tokens={self.spec.n_tokens}]")
        if not all(z > 0 for z in self.zetas):
            raise ValueError(f"zetas={self.zetas} must be > 0")
        for name in ("n_seeds", "d_out", "block"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 1")
        self.settings()  # validates acts, betas, losses and bns

    def results_config(self, command: str) -> dict:
        """The ``config`` of ``results.json``: train, tokens, d_out, n_seeds, seed, command, readings."""
        return {"train": dataclasses.asdict(self.train), "tokens": dataclasses.asdict(self.spec), "d_out": self.d_out,
                "n_seeds": self.n_seeds, "seed": self.seed, "command": command, "readings": list(READINGS)}


def memory_estimate(config: GridConfig) -> tuple:
    """(bytes, flag, formula): a coarse upper estimate of the largest setting's training memory: about
    16 float32 arrays of n_seeds x 2 views x batch x K x max(d, M, d_out) (one-hot tokens, activations,
    their gradients), + the generator table (``ccdyn.data.tokens``: a key and 2 int32 words per position
    for each of the G generators)."""
    width = max(config.spec.n_tokens, max(config.betas) * max(config.ps), config.d_out)
    n = 16.0 * config.n_seeds * 2 * config.train.batch_size * config.spec.n_positions * width * 4
    n += 4.0 * config.spec.n_generators * (2 + 2 * config.spec.n_positions)
    return n, "--batch_size", (f"16 float32 arrays of {config.n_seeds} seeds x 2 views x batch "
                               f"{config.train.batch_size} x {config.spec.n_positions} positions x {width}, "
                               f"+ 4 bytes x {config.spec.n_generators} generators x "
                               f"(2 + 2 x {config.spec.n_positions} positions)")


def setting_result(setting: Setting, result: dict) -> dict:
    """The per-setting record (``runs/<tag>.json``, where :func:`ccdyn.grid.run` adds ``wall_s``) of a
    :func:`run_setting` result."""
    out = {k: result[k] for k in ("chi_plus", "chi_minus", "chi_plus_rf", "chi_minus_rf", "turn_deg", "finite",
                                  "stopped_at", "loss")}
    out.update(setting=dataclasses.asdict(setting))
    return out


def nonfinite_seeds(result: dict) -> list:
    """[(seed index, step it stopped at)] of the runs of a :func:`run_setting` result that went non-finite."""
    bad = np.flatnonzero(~np.asarray(result["finite"], bool))
    return [(int(k), int(result["stopped_at"][k])) for k in bad]


def token_coords(result: dict) -> dict:
    """Seed 0's filters in the unit token basis, each filter scaled to max |coordinate| 1 (Fig. 5):
    ``coords`` (K, M, d), ``used`` (K, d) and the raw ``W``."""
    e = result["embeddings"][0]
    coords = result["W"][0] @ (e / np.linalg.norm(e, axis=1, keepdims=True)).T
    coords = coords / np.maximum(np.abs(coords).max(axis=-1, keepdims=True), 1e-30)
    return {"coords": coords, "used": result["used"][0], "W": result["W"][0]}


def result_row(setting: Setting, result: dict, config: GridConfig) -> dict:
    """A row of ``results.json``: the setting, M, mean and std over the finite seeds of chi_+, chi_-
    and turn_deg, the chance level of the untrained filters, seed counts and wall time.

    ``result`` is a :func:`setting_result` with ``wall_s`` (possibly read back from JSON; ``turn_deg`` may
    be absent)."""
    init = init_scores(setting, n_seeds=config.n_seeds, seed=config.seed, spec=config.spec, d_out=config.d_out)
    return {**dataclasses.asdict(setting), "M": setting.beta * setting.n_candidates,
            "chi_plus": aggregate(result["chi_plus"]), "chi_minus": aggregate(result["chi_minus"]),
            "chi_plus_init": aggregate(init["chi_plus"]), "chi_minus_init": aggregate(init["chi_minus"]),
            "turn_deg": aggregate(result["turn_deg"]) if "turn_deg" in result else None,
            "n_seeds": len(result["finite"]), "n_nonfinite": int(np.sum(~np.asarray(result["finite"], bool))),
            "wall_s": result["wall_s"]}


def _round(key, digits, part="mean"):
    return lambda r: round(r[key][part], digits)


_SETTING_COLUMNS = (("loss", lambda r: r["loss"]), ("act", lambda r: r["act"]), ("bn", lambda r: r["bn"]))
CSV_COLUMNS = _SETTING_COLUMNS + (
    ("zeta", lambda r: r["zeta"]), ("P", lambda r: r["n_candidates"]), ("beta", lambda r: r["beta"]),
    ("M", lambda r: r["M"]), ("chi_plus_mean", _round("chi_plus", 4)), ("chi_plus_std", _round("chi_plus", 4, "std")),
    ("chi_minus_mean", _round("chi_minus", 4)), ("chi_minus_std", _round("chi_minus", 4, "std")),
    ("chi_plus_init", _round("chi_plus_init", 4)), ("chi_minus_init", _round("chi_minus_init", 4)),
    ("turn_deg", lambda r: "" if r["turn_deg"] is None else round(r["turn_deg"]["mean"], 2)),
    ("n_finite", lambda r: r["chi_plus"]["n"]), ("n_seeds", lambda r: r["n_seeds"]),
    ("wall_s", lambda r: round(r["wall_s"], 1)))
TABLE_COLUMNS = _SETTING_COLUMNS + (
    ("ζ", lambda r: r["zeta"]), ("P", lambda r: r["n_candidates"]), ("β", lambda r: r["beta"]),
    ("χ̄₊", lambda r: f"{r['chi_plus']['mean']:.3f} ± {r['chi_plus']['std']:.3f}"),
    ("χ̄₋", lambda r: f"{r['chi_minus']['mean']:.3f} ± {r['chi_minus']['std']:.3f}"),
    ("χ̄₊/χ̄₋ at init", lambda r: f"{r['chi_plus_init']['mean']:.2f}/{r['chi_minus_init']['mean']:.2f}"),
    ("finite", lambda r: f"{r['chi_plus']['n']}/{r['n_seeds']}"))


def results_csv(rows) -> tuple:
    """(headers, rows) of ``results.csv`` (:data:`CSV_COLUMNS`)."""
    return grid.table(rows, CSV_COLUMNS)


def results_table(rows) -> tuple:
    """(headers, rows) of the printed summary: chi_bar_+/- mean +- std, chance level, finite seeds."""
    return grid.table(rows, TABLE_COLUMNS)


def results_table_key() -> list:
    """The key of :func:`results_table`'s columns (one entry per column and symbol)."""
    return report.key_lines(
        "loss: the contrastive loss; act: the filters' activation; bn: the BatchNorm variant (Def. 5); ζ: the "
        "embeddings' norm non-uniformity; P: candidate tokens per position; β: filters per candidate, M = β P "
        "filters per RF; χ̄₊: over RFs and relevant tokens, the mean of a token's best cosine with a filter (|cos| "
        "for odd activations; docs/two_layer_readings.md); χ̄₋: the same over irrelevant tokens; both mean ± std "
        "over the finite seeds; χ̄₊/χ̄₋ at init: the same for the untrained filters (chance level); finite: seeds "
        "that stayed finite / seeds.")


def matching_curves(rows) -> dict:
    """(loss, zeta) -> the ``curves`` of :func:`ccdyn.two_layer.figures.matching_figure`: label (activation, and the
    BN variant when the rows have several) -> {(P, beta): row}."""
    bns = {r["bn"] for r in rows}
    out: dict[tuple, dict] = {}
    for loss, zeta in sorted({(r["loss"], r["zeta"]) for r in rows}):
        curves = out.setdefault((loss, zeta), {})
        for r in rows:
            if (r["loss"], r["zeta"]) == (loss, zeta):
                label = r["act"] + (f" bn={r['bn']}" if len(bns) > 1 else "")
                curves.setdefault(label, {})[(r["n_candidates"], r["beta"])] = r
    return out


def weights_label(setting: Setting) -> str:
    """The panel title of a setting in the Fig. 5 weights figure."""
    return (f"{setting.act} β={setting.beta} P={setting.n_candidates}"
            + (f" bn={setting.bn}" if setting.bn != "none" else ""))
