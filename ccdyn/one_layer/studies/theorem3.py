"""Thm. 3 made measurable over many starts: irregularity omega (Def. 4) on the ball B_gamma around a
start w(0), then power iteration (Eq. PI) from that start, on latent summation models whose basis is
only nearly orthogonal (the setting of Fig. 1 right).

For every ||U^T U - I||_2 = eps, start angle a and pattern u_m (m < ``n_patterns``), w(0) is u_m turned
by a toward a random tangent direction (:func:`ccdyn.one_layer.irregularity.start_near`; one
``numpy`` generator seeded with ``data_seed`` per eps, drawn in angle-then-pattern order), and
:func:`ccdyn.one_layer.irregularity.theorem3_check` certifies the smallest gamma with
sup omega <= gamma and checks Lemma 11's claims along the trajectory. ``scripts/irregularity.py``
writes the record (``thm3.json``) and its tables.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import jax
import numpy as np

from ccdyn import activations, data, one_layer, pairwise, report
from ccdyn.one_layer import claims, irregularity

__all__ = ["Theorem3Config", "run", "markdown", "table", "START_COLUMNS", "SUMMARY_COLUMNS"]

START_COLUMNS = ("ortho_eps", "pattern", "angle_deg", "c0", "gamma", "cap_deg", "sup_omega", "L", "kappa",
                 "stays_in_ball", "c_monotone", "rate_holds", "converged", "steps", "cos_end_u_m")
SUMMARY_COLUMNS = ("ortho_eps", "angle_deg", "starts", "certified", "certified_and_all_claims_hold",
                   "converged", "uncertified_but_converged", "median_c0")


@dataclasses.dataclass(frozen=True)
class Theorem3Config:
    """Latent summation d, M, q (exact population), the bases' ||U^T U - I||_2 values, start angles
    (degrees) and the number of patterns started from, candidate gammas (ascending), sample points
    per ball, power-iteration steps, a homogeneous activation, and the seed of bases and starts."""

    d: int = 10
    m: int = 10
    q: float = 0.2
    ortho_eps: tuple = (0.0, 0.05, 0.1, 0.2)
    angles_deg: tuple = (0.0, 2.0, 5.0, 10.0)
    n_patterns: int = 5
    gammas: tuple = tuple(float(f"{g:.1f}") for g in np.arange(0.1, 1.0, 0.1))
    n_samples: int = 64
    n_steps: int = 200
    act: str = "relu"
    data_seed: int = 0


def _start_row(res: dict) -> list:
    cert = next((g for g in res["gammas"] if g["holds"]), res["gammas"][-1])
    return [res["ortho_eps"], res["pattern"], res["angle_deg"], res["c0"], res["gamma_certified"] or "-",
            cert["cap_angle_deg"], cert["sup_omega"], cert["L"], cert["kappa"], res.get("stays_in_ball", "-"),
            res.get("c_monotone", "-"), res.get("rate_holds", "-"), res["converged"], res["steps_to_tol"] or "-",
            res["cos_end_u_m"]]


def _summary_row(eps, ang, rows: list) -> list:
    ok = [r for r in rows if r["gamma_certified"] is not None]
    return [eps, ang, len(rows), len(ok),
            sum(r["stays_in_ball"] and r["c_monotone"] and r["rate_holds"] and r["converged"] for r in ok),
            sum(r["converged"] for r in rows), sum(r["converged"] for r in rows if r["gamma_certified"] is None),
            float(np.median([r["c0"] for r in rows]))]


def run(cfg: Theorem3Config, log=None) -> dict:
    """The Thm. 3 check at every start.

    Args:
      log: optional callable taking one progress line per (eps, angle).

    Returns:
      ``{"config", "verdict", "starts": [theorem3_check result + ortho_eps, pattern, angle_deg,
      cos_end_u_m], "tables": {"starts": rows of START_COLUMNS, "summary": rows of SUMMARY_COLUMNS}}``.
    """
    t0 = time.time()
    act, pw = activations.get_activation(cfg.act), pairwise.get_pairwise("uniform")
    starts, summary = [], []
    for eps in cfg.ortho_eps:
        u = data.near_orthogonal_basis(jax.random.PRNGKey(cfg.data_seed), cfg.d, cfg.m, eps)
        ds = data.latent_summation(u, cfg.q)
        a_fn = lambda w, ds=ds: one_layer.a_matrix(ds, act, w, pw)
        batched = functools.partial(one_layer.a_matrices, ds, act, pairwise=pw)  # one compile per eps
        rng = np.random.default_rng(cfg.data_seed)
        for ang in cfg.angles_deg:
            rows = []
            for m in range(cfg.n_patterns):
                res = irregularity.theorem3_check(a_fn, irregularity.start_near(u[:, m], ang, rng), list(cfg.gammas),
                                                  n_samples=cfg.n_samples, n_steps=cfg.n_steps,
                                                  seed=cfg.data_seed + m, batched=batched)
                cos_end = float(np.dot(res["w_final"], u[:, m] / np.linalg.norm(u[:, m])))
                res.update({"ortho_eps": eps, "pattern": m, "angle_deg": ang, "cos_end_u_m": cos_end})
                rows.append(res)
            starts += rows
            summary.append(_summary_row(eps, ang, rows))
            if log:
                log(f"  eps={eps} angle={ang}: {summary[-1][3]}/{len(rows)} certified ({time.time() - t0:.1f} s)")
    return {"config": dataclasses.asdict(cfg), "verdict": claims.theorem3_verdict(summary), "starts": starts,
            "tables": {"starts": [_start_row(r) for r in starts], "summary": summary}}


SUMMARY_KEY = (
    "ortho_eps: ||U^T U - I||_2 of the basis; angle_deg: each start w(0) is u_m turned by this angle; starts: one "
    "per pattern u_m started from; certified: starts with a gamma < 1 that Eq. 11 certifies on B_gamma (sup "
    "omega <= gamma, Def. 4, sampled); certified_and_all_claims_hold: of those, w(t) stayed in B_gamma, c_t rose, "
    "1 - c_t <= gamma^t (1 - c_0) and it converged (Lemma 11); converged: starts whose power iteration converged; "
    "uncertified_but_converged: converged without a certificate (Thm. 3's condition is sufficient, not "
    "necessary); median_c0: the median cosine c_0 of w(0) with its pattern.")


def table(record: dict) -> str:
    """The summary table (one row per eps and angle), with its key."""
    return "\n".join([report.format_table(SUMMARY_COLUMNS, record["tables"]["summary"]),
                      *report.key_lines(SUMMARY_KEY)])


def markdown(record: dict) -> str:
    """``summary.md``: the summary table, the verdict, then every start."""
    t = record["tables"]
    return "\n".join([report.markdown_table(SUMMARY_COLUMNS, t["summary"]), "", f"Verdict: {record['verdict']}", "",
                      "## Every start", "", report.markdown_table(START_COLUMNS, t["starts"]), ""])
