"""Global modulation (Thm. 5-6, Fig. 7, Eq. 155) and BatchNorm across RFs (Cor. 3), checked numerically.

The study behind ``scripts/modulation.py`` (maths in :mod:`ccdyn.two_layer.modulation`). Five checks,
each a part of the record with its numbers and a verdict ({"claim", "holds", "parts", "numbers"}, as
in :mod:`ccdyn.two_layer.claims`):

- ``eq15`` (Thm. 5): the velocity of Eq. 15 against Lemma 4 on enumerated joint populations
  (relu, leaky_relu, linear; without and with BatchNorm, Cor. 3 / Lemma 6).
- ``fig7``: y' = (y + b) y, the closed form (Eq. 147) against RK4 and the blow-up times t* (Eq. 150).
- ``eq155``: P[E_l] of Eq. 155 against Monte Carlo, with 95% Wilson intervals.
- ``thm6``: the flow of A(w) = sum_l (u_l^T w + b_l) u_l u_l^T from random unit starts: the share that
  reaches u_0 when b_0 = b + c, and how often Thm. 6's first-blow-up predictor names the attractor.
- ``cor3``: RFs of different input scales, d_k, initial speeds and turning angles of the Eq. 15 flow
  without and with BatchNorm.

:func:`run` needs float64 (``jax_enable_x64``). :func:`markdown` and :func:`eq155_csv` render the
record's tables; the caller writes them.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, report, stats
from ccdyn.two_layer import modulation
from ccdyn.two_layer.modulation_claims import (
    EQ15_TOLERANCE,
    EQ155_ALPHA,
    FIG7_TOLERANCE,
    cor3_verdict,
    eq15_verdict,
    eq155_verdict,
    fig7_verdict,
    thm6_verdict,
)
from ccdyn.verdicts import verdict_word

__all__ = ["ModulationConfig", "run", "markdown", "eq15_table", "eq155_table", "eq155_csv", "thm6_table",
           "cor3_table", "TABLE_KEYS", "verdict_rows", "DEGREE_ONE", "FIG7_B", "FIG7_Y0", "EQ15_TOLERANCE",
           "FIG7_TOLERANCE", "EQ155_ALPHA"]

DEGREE_ONE = ("relu", "leaky_relu", "linear")  # h(x) = h'(x) x (Assumption 1), as the Thm. 5 maths needs
FIG7_B = 1.0
FIG7_Y0 = (-0.5, -0.2, 0.2, 0.5, 1.0)
# EQ15_TOLERANCE, FIG7_TOLERANCE, EQ155_ALPHA: the verdicts' thresholds (ccdyn.two_layer.claims, where the
# verdicts are computed).


@dataclasses.dataclass(frozen=True)
class ModulationConfig:
    """The modulation study (defaults: ``results/theory/modulation``).

    Attributes:
      n_mc: Monte Carlo draws per Eq. 155 cell and random starts per Thm. 6 modulation, >= 1.
      d: dimension of the Thm. 6 flow, >= 2.
      b: b_l of the unmodulated components in the Thm. 6 flow, > 0.
      c: modulations c >= 0 of u_0 (Thm. 6).
      eps: modulation factors of the Eq. 155 table.
      eps_dims: dimensions d >= 2 of the Eq. 155 table.
      scales: input scales (> 0, at least two) of the RFs in the BatchNorm study (Cor. 3).
      seed: seed of every random draw.
      eq15_shapes: (K, points per RF, d) of the Thm. 5 populations.
      eq15_acts: activations of the Thm. 5 comparison, from :data:`DEGREE_ONE`.
      thm6_steps: Euler steps of the Thm. 6 flow.
      cor3_steps: Euler steps of the Cor. 3 flow, a multiple of 2000; the angles are read after 1%,
        10% and all of them.
    """

    n_mc: int = 100_000
    d: int = 10
    b: float = 0.5
    c: tuple = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)
    eps: tuple = (-1.5, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 1.5)
    eps_dims: tuple = (5, 10, 20)
    scales: tuple = (0.1, 1.0, 10.0)
    seed: int = 0
    eq15_shapes: tuple = ((3, 3, 4), (4, 3, 5), (2, 6, 3), (5, 2, 4))
    eq15_acts: tuple = DEGREE_ONE
    thm6_steps: int = 3000
    cor3_steps: int = 200_000

    def __post_init__(self):
        checks = [("n_mc", self.n_mc >= 1, ">= 1"), ("d", self.d >= 2, ">= 2"), ("b", self.b > 0, "> 0"),
                  ("c", len(self.c) > 0 and min(self.c) >= 0, "non-empty, >= 0"),
                  ("eps", len(self.eps) > 0, "non-empty"),
                  ("eps_dims", len(self.eps_dims) > 0 and min(self.eps_dims) >= 2, "non-empty, >= 2"),
                  ("scales", len(self.scales) >= 2 and min(self.scales) > 0, "at least two, > 0"),
                  ("eq15_shapes", len(self.eq15_shapes) > 0, "non-empty"),
                  ("eq15_acts", len(self.eq15_acts) > 0 and set(self.eq15_acts) <= set(DEGREE_ONE),
                   f"non-empty, from {', '.join(DEGREE_ONE)}"),
                  ("thm6_steps", self.thm6_steps >= 1, ">= 1"),
                  ("cor3_steps", self.cor3_steps >= 2000 and self.cor3_steps % 2000 == 0, "a multiple of 2000")]
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(f"{name}={getattr(self, name)!r} must be {rule}")

    @property
    def checkpoints(self) -> tuple:
        """Steps after which the Cor. 3 angles are read."""
        return (self.cor3_steps // 100, self.cor3_steps // 10, self.cor3_steps)


def _eq15(key, shapes, acts) -> dict:
    rows = []
    for i, (k, n, d) in enumerate(shapes):
        pop = modulation.modulated_population(jax.random.fold_in(key, i), k, d, n, p1=0.3)
        pop = dataclasses.replace(pop, x=pop.x * jnp.geomspace(0.2, 5.0, k)[:, None, None])
        w = jax.random.normal(jax.random.fold_in(key, 100 + i), (k, d))
        for name in acts:
            act = activations.get_activation(name)
            for bn in (False, True):
                if bn and np.any(np.asarray(modulation.rf_moments(pop, w, act)["sigma"]) == 0):
                    continue
                v15, v4 = modulation.eq15_velocity(pop, w, act, bn), modulation.lemma4_velocity(pop, w, act, bn)
                err = float(jnp.abs(v15 - v4).max())
                rows.append({"K": k, "n_per_rf": n, "d": d, "joint_points": 2 * n**k, "act": name, "batch_norm": bn,
                             "max_abs_diff": err, "max_abs_velocity": float(jnp.abs(v4).max()),
                             "relative": err / float(jnp.abs(v4).max())})
    return {"rows": rows, "verdict": eq15_verdict(rows)}


def _fig7() -> dict:
    b = FIG7_B
    curves, errors = {}, {}
    for y0 in FIG7_Y0:
        t_star = float(modulation.blowup_time(y0, b))
        t_end = 4.0 if not np.isfinite(t_star) else 0.97 * t_star
        t = np.linspace(0, t_end, 2001)
        num = np.asarray(modulation.integrate_1d(y0, b, t_end, 20000))[::10]
        exact = np.asarray(modulation.closed_form_1d(y0, b, t))
        curves[y0] = {"t": t, "rk4": num, "closed_form": exact, "t_star": t_star}
        errors[str(y0)] = {"t_star": t_star,
                           "max_rel_err": float(np.max(np.abs(num - exact) / np.maximum(1, np.abs(exact))))}
    y_grid = np.geomspace(0.01, 3, 200)
    tstar = {bb: np.asarray(modulation.blowup_time(y_grid, bb)) for bb in (0.5, 1.0, 2.0)}
    return {"b": b, "per_y0": errors, "curves": curves, "y_grid": y_grid, "tstar": tstar,
            "verdict": fig7_verdict(errors)}


def _eq155(key, cfg: ModulationConfig) -> dict:
    rows = []
    for d in cfg.eps_dims:
        for eps in cfg.eps:
            count = modulation.p_converge_mc(jax.random.fold_in(key, d * 1000 + int(100 * eps + 500)), eps, d, cfg.n_mc)
            lo, hi = stats.wilson_interval(count, cfg.n_mc)
            theory = modulation.p_converge(eps, d)
            rows.append({"d": d, "eps": eps, "theory": theory, "monte_carlo": count / cfg.n_mc, "ci95": [lo, hi],
                         "inside": bool(lo <= theory <= hi)})
    return {"rows": rows, "verdict": eq155_verdict(rows)}


def _thm6(key, cfg: ModulationConfig) -> dict:
    d, n = cfg.d, cfg.n_mc
    y0 = jax.random.normal(key, (n, d))
    y0 = y0 / jnp.linalg.norm(y0, axis=1, keepdims=True)
    flow = jax.jit(lambda y, b: modulation.structured_flow(y, b, n_steps=cfg.thm6_steps))
    rows = []
    for c in cfg.c:
        b = jnp.full((d,), cfg.b).at[0].add(c)
        y = np.asarray(flow(y0, b))
        on_pattern = y.max(axis=1) > 1 - 1e-6
        negative = np.all(y < 0, axis=1)
        winner = np.where(on_pattern, y.argmax(axis=1), -1)
        pred = np.asarray(modulation.predicted_winner(y0, b))
        to_u0 = int(np.sum(winner == 0))
        rows.append({"c": c, "b0": cfg.b + c, "to_u0": to_u0 / n, "to_u0_ci95": stats.wilson_interval(to_u0, n),
                     "to_other_u": float(np.mean(on_pattern & (winner != 0))),
                     "negative_attractor": float(negative.mean()), "unsettled": float(np.mean(~on_pattern & ~negative)),
                     "predictor_agrees": float(np.mean(pred[on_pattern] == winner[on_pattern]))})
    return {"d": d, "b": cfg.b, "n": n, "rows": rows, "verdict": thm6_verdict(rows, d)}


def _cor3(key, cfg: ModulationConfig) -> dict:
    scales = np.array(cfg.scales, dtype=float)
    k, n, d = len(scales), 4, 3
    pop = modulation.modulated_population(key, k, d, n, p1=0.4)
    pop = dataclasses.replace(pop, x=pop.x * jnp.asarray(scales)[:, None, None])
    act = activations.get_activation("leaky_relu")
    w0 = jax.random.normal(jax.random.fold_in(key, 1), (k, d))
    out = {"scales": scales, "act": act.name}
    every = cfg.cor3_steps // 2000
    for bn in (False, True):
        m = modulation.rf_moments(pop, w0, act, bn)
        eta = 0.1 / float(jnp.max(jnp.linalg.norm(m["A"], ord=2, axis=(1, 2))))  # time unit of the fastest RF
        record, _ = modulation.eq15_flow(pop, w0, act, batch_norm=bn, eta=eta, n_steps=cfg.cor3_steps,
                                         record_every=every)
        speed0 = np.asarray(jnp.linalg.norm(modulation.eq15_velocity(pop, w0, act, bn), axis=1))
        wn0 = w0 / jnp.linalg.norm(w0, axis=1, keepdims=True)
        angle = np.degrees(np.arccos(np.clip(np.asarray(jnp.einsum("tkd,kd->tk", record, wn0)), -1, 1)))
        out["bn" if bn else "none"] = {"d_k": np.asarray(m["d"]), "eta": eta, "initial_speed": speed0,
                                       "angle_moved_deg": {t: angle[t // every - 1] for t in cfg.checkpoints},
                                       "n_steps": cfg.cor3_steps}
    out["verdict"] = cor3_verdict(out, cfg.cor3_steps)
    return out


def run(config: ModulationConfig = ModulationConfig(), log=None) -> dict:
    """Runs the five checks; ``log(message)`` (optional) hears about progress.

    Returns:
      {"config", "eq15", "fig7", "eq155", "thm6", "cor3"}; each check holds its numbers and a ``verdict``.
      ``fig7`` also holds the curves of :func:`ccdyn.two_layer.figures.blowup_figure` (``curves``, ``y_grid``,
      ``tstar``).
    """
    if not jax.config.read("jax_enable_x64"):
        raise ValueError("the modulation study runs in float64: set jax_enable_x64 before calling run")
    log = log or (lambda message: None)
    key = jax.random.PRNGKey(config.seed)
    log("Thm. 5: Eq. 15 vs Lemma 4 on joint populations ...")
    eq15 = _eq15(jax.random.fold_in(key, 1), config.eq15_shapes, config.eq15_acts)
    log("Fig. 7: closed form vs RK4 ...")
    fig7 = _fig7()
    log(f"Eq. 155 vs Monte Carlo ({config.n_mc} draws per cell) ...")
    eq155 = _eq155(jax.random.fold_in(key, 2), config)
    log(f"Thm. 6: flow from {config.n_mc} starts per c ...")
    thm6 = _thm6(jax.random.fold_in(key, 3), config)
    log("Cor. 3: BatchNorm across RFs of different scales ...")
    cor3 = _cor3(jax.random.fold_in(key, 4), config)
    return {"config": dataclasses.asdict(config), "eq15": eq15, "fig7": fig7, "eq155": eq155, "thm6": thm6,
            "cor3": cor3}


def eq15_table(rows) -> tuple:
    headers = ["K", "points/RF", "d", "joint points", "act", "BatchNorm", "max |Eq.15 − Lemma 4|", "max |velocity|"]
    return headers, [[r["K"], r["n_per_rf"], r["d"], r["joint_points"], r["act"], r["batch_norm"],
                      f"{r['max_abs_diff']:.1e}", f"{r['max_abs_velocity']:.3g}"] for r in rows]


def eq155_table(rows) -> tuple:
    return (["d", "ε", "Eq. 155", "Monte Carlo", "95% interval", "inside"],
            [[r["d"], r["eps"], f"{r['theory']:.4f}", f"{r['monte_carlo']:.4f}",
              f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]", r["inside"]] for r in rows])


def eq155_csv(rows) -> tuple:
    """(headers, rows) of ``eq155.csv`` (6 decimals)."""
    return (["d", "eps", "theory", "monte_carlo", "ci95_lo", "ci95_hi", "inside"],
            [[r["d"], r["eps"], f"{r['theory']:.6f}", f"{r['monte_carlo']:.6f}", f"{r['ci95'][0]:.6f}",
              f"{r['ci95'][1]:.6f}", r["inside"]] for r in rows])


def thm6_table(rows) -> tuple:
    return (["c", "b₀", "→ u₀", "95% interval", "→ other u_l", "negative orthant", "unsettled",
             "t* predictor right"],
            [[r["c"], r["b0"], f"{r['to_u0']:.4f}", f"[{r['to_u0_ci95'][0]:.4f}, {r['to_u0_ci95'][1]:.4f}]",
              f"{r['to_other_u']:.4f}", f"{r['negative_attractor']:.4f}", f"{r['unsettled']:.4f}",
              f"{r['predictor_agrees']:.3f}"] for r in rows])


def cor3_table(c3, checkpoints) -> tuple:
    headers = (["RF scale", "d_k", "d_k^bn", "initial speed (no BN)", "initial speed (BN)"]
               + [f"angle moved by step {t} ({bn})" for bn in ("no BN", "BN") for t in checkpoints])
    return headers, [[s, f"{c3['none']['d_k'][j]:.3g}", f"{c3['bn']['d_k'][j]:.3g}",
                      f"{c3['none']['initial_speed'][j]:.2e}", f"{c3['bn']['initial_speed'][j]:.2e}"]
                     + [f"{c3[bn]['angle_moved_deg'][t][j]:.1f}°" for bn in ("none", "bn") for t in checkpoints]
                     for j, s in enumerate(c3["scales"])]


# The keys of the printed thm6 and cor3 tables (their columns, one entry each).
TABLE_KEYS = {
    "thm6.md": report.key_lines(
        "c: what is added to b_0; b₀: b + c (every other b_l = b); → u₀: the share of the random unit starts "
        "whose flow ends on u_0; 95% interval: its Wilson interval; → other u_l: ends on another pattern; "
        "negative orthant: ends with every coordinate < 0; unsettled: neither at the end of the run; t* "
        "predictor right: among the starts that end on a pattern, the share whose first blow-up time t* "
        "(Thm. 6, Eq. 150) names that pattern."),
    "cor3.md": report.key_lines(
        "RF scale: the factor on the RF's inputs; d_k, d_k^bn: the RF's d_k of Lemma 5 (Eq. 134-137) without "
        "and with BatchNorm (Eq. 175-177); initial speed: |dw_k/dt| of the Eq. 15 flow at the start; angle "
        "moved by step t: the angle between w_k(t) and w_k(0).")}


def markdown(record) -> dict:
    """File name -> markdown table (with a trailing newline) of eq15, eq155, thm6 and cor3."""
    steps = record["cor3"]["none"]["n_steps"]
    tables = {"eq15.md": eq15_table(record["eq15"]["rows"]), "eq155.md": eq155_table(record["eq155"]["rows"]),
              "thm6.md": thm6_table(record["thm6"]["rows"]),
              "cor3.md": cor3_table(record["cor3"], (steps // 100, steps // 10, steps))}
    return {name: report.markdown_table(*t) + "\n" for name, t in tables.items()}


def verdict_rows(record) -> tuple:
    """(headers, rows): a row per check with its claim, verdict and parts."""
    body = []
    for name in ("eq15", "fig7", "eq155", "thm6", "cor3"):
        v = record[name]["verdict"]
        word = "n/a" if v["holds"] is None else verdict_word(v)
        body.append([name, v["claim"], word, "; ".join(f"{k}: {'yes' if ok else 'no'}"
                                                                   for k, ok in v["parts"].items())])
    return ["check", "claim", "verdict", "parts"], body
