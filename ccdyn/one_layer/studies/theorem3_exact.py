"""Thm. 3 decided exactly on the activation regions (:mod:`ccdyn.one_layer.irregularity_exact`) at the
starts of :mod:`ccdyn.one_layer.studies.theorem3`, beside the sampled certificate at the same starts.

Same data and starts as ``theorem3`` (latent summation, exact population, near-orthogonal bases; per
eps one numpy generator seeded with ``data_seed``, drawn in angle-then-pattern order). At each start:
the smallest gamma that Eq. 11 certifies exactly (no data hyperplane meets B_gamma, so L = kappa = 0 and
sup omega = mu(c_min) in closed form; a plane inside B_gamma makes A jump, L infinite, and the gamma
fail), the sampled certificate of :func:`ccdyn.one_layer.irregularity.theorem3_check` (64 points) and
how many planes really cross its cap, then Lemma 11's claims along power iteration for the exact gamma.
``scripts/thm3_exact.py`` writes the record.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time

import jax
import numpy as np

from ccdyn import activations, data, one_layer, pairwise, report
from ccdyn.one_layer import irregularity, irregularity_exact
from ccdyn.one_layer.studies import theorem3

__all__ = ["Theorem3ExactConfig", "run", "markdown", "table", "START_COLUMNS", "SUMMARY_COLUMNS"]

START_COLUMNS = ("ortho_eps", "pattern", "angle_deg", "c0", "gamma_exact", "cap_deg_exact", "sup_omega_exact",
                 "gamma_sampled", "L_sampled", "planes_in_sampled_cap", "jump_in_sampled_cap", "stays_in_ball",
                 "c_monotone", "rate_holds", "converged")
SUMMARY_COLUMNS = ("ortho_eps", "angle_deg", "starts", "certified_exact", "exact_and_all_claims_hold",
                   "certified_sampled", "sampled_with_planes_in_cap", "converged")


@dataclasses.dataclass(frozen=True)
class Theorem3ExactConfig(theorem3.Theorem3Config):
    """``theorem3.Theorem3Config`` itself (the same fields and defaults, so the same starts); ``n_samples``
    is the sampled certificate's, beside the exact one."""

    def check(self) -> None:
        """``ValueError`` naming the field at fault."""
        if self.act not in ("relu", "leaky_relu"):
            raise ValueError(f"act={self.act!r}: the exact check needs a piecewise-linear activation "
                             "(relu, leaky_relu)")
        if not self.gammas or not all(0 < g < 1 for g in self.gammas):
            raise ValueError(f"gammas={self.gammas} must be non-empty and lie in (0, 1)")


def _lemma11(traj, c_t, w0, c0, gamma, thr) -> dict:
    t = np.arange(c_t.size)
    return {"stays_in_ball": bool(np.all(traj @ w0 >= thr - 1e-12)), "c_monotone": bool(np.all(np.diff(c_t) >= -1e-12)),
            "rate_holds": bool(np.all(1.0 - c_t <= gamma ** t * (1.0 - c0) + 1e-12))}


def _start(a_fn, batched, x, w0, cfg, seed) -> dict:
    ex = irregularity_exact.certify_exact(a_fn, x, w0, cfg.gammas)
    sampled = irregularity.theorem3_check(a_fn, w0, list(cfg.gammas), n_samples=cfg.n_samples, n_steps=cfg.n_steps,
                                          seed=seed, batched=batched)
    out = {"c0": ex["c0"], "exact": ex, "gamma_exact": ex["gamma_certified"],
           "gamma_sampled": sampled["gamma_certified"], "converged": sampled["converged"],
           "w_final": sampled["w_final"]}
    g_s = sampled["gamma_certified"]
    if g_s is not None:
        row = next(r for r in sampled["gammas"] if r["gamma"] == g_s)
        theta = math.acos(max(min(row["threshold"], 1.0), -1.0))
        at_s = irregularity_exact.certify_exact(a_fn, x, w0, [g_s])["gammas"][0]
        out.update({"L_sampled": row["L"], "planes_in_sampled_cap": len(irregularity_exact.cap_crossings(x, w0, theta)),
                    "jump_in_sampled_cap": at_s["jump"]})
    if ex["gamma_certified"] is not None:
        cert = ex["gammas"][-1]
        traj = irregularity.power_trajectory(a_fn, w0, cfg.n_steps, batched)
        _, _, _, c_t = irregularity.spectra(a_fn, traj, batched)
        out.update(_lemma11(traj, c_t, w0, ex["c0"], cert["gamma"], cert["threshold"]))
        out.update({"cap_deg_exact": cert["cap_deg"], "sup_omega_exact": cert["sup_omega"]})
    return out


def run(cfg: Theorem3ExactConfig, log=None) -> dict:
    """The exact and the sampled Thm. 3 certificates at every start, and Lemma 11's claims.

    Returns ``{"config", "starts": [dicts], "tables": {"starts": rows of START_COLUMNS, "summary": rows
    of SUMMARY_COLUMNS}}``."""
    cfg.check()
    t0 = time.time()
    act, pw = activations.get_activation(cfg.act), pairwise.get_pairwise("uniform")
    starts, summary = [], []
    for eps in cfg.ortho_eps:
        u = data.near_orthogonal_basis(jax.random.PRNGKey(cfg.data_seed), cfg.d, cfg.m, eps)
        ds = data.latent_summation(u, cfg.q)
        x = np.asarray(ds.views()[0], np.float64).reshape(-1, ds.dim)
        a_fn = lambda w, ds=ds: one_layer.a_matrix(ds, act, w, pw)
        batched = functools.partial(one_layer.a_matrices, ds, act, pairwise=pw)
        rng = np.random.default_rng(cfg.data_seed)
        for ang in cfg.angles_deg:
            rows = []
            for m in range(cfg.n_patterns):
                w0 = irregularity.start_near(u[:, m], ang, rng)
                res = _start(a_fn, batched, x, w0, cfg, cfg.data_seed + m)
                res.update({"ortho_eps": eps, "pattern": m, "angle_deg": ang})
                rows.append(res)
            starts += rows
            ok = [r for r in rows if r["gamma_exact"] is not None]
            summary.append([eps, ang, len(rows), len(ok),
                            sum(r["stays_in_ball"] and r["c_monotone"] and r["rate_holds"] and r["converged"]
                                for r in ok),
                            sum(r["gamma_sampled"] is not None for r in rows),
                            sum(r.get("planes_in_sampled_cap", 0) > 0 for r in rows),
                            sum(r["converged"] for r in rows)])
            if log:
                log(f"  eps={eps} angle={ang}: {len(ok)}/{len(rows)} certified exactly ({time.time() - t0:.1f} s)")
    return {"config": dataclasses.asdict(cfg), "starts": starts,
            "tables": {"starts": [[s.get(c, "-") if s.get(c) is not None else "-" for c in START_COLUMNS]
                                  for s in starts], "summary": summary}}


SUMMARY_KEY = (
    "ortho_eps: ||U^T U - I||_2 of the basis; angle_deg: each start w(0) is u_m turned by this angle; starts: one "
    "per pattern u_m started from; certified_exact: starts with a gamma < 1 that Eq. 11 certifies exactly on the "
    "activation regions (no data hyperplane meets B_gamma); exact_and_all_claims_hold: of those, w(t) stayed in "
    "B_gamma, c_t rose, 1 - c_t <= gamma^t (1 - c_0) and it converged (Lemma 11); certified_sampled: starts the "
    "64-point sampled certificate passes; sampled_with_planes_in_cap: starts whose sampled cap a data hyperplane "
    "crosses (A jumps inside it, which the 64 samples may miss); converged: starts whose power iteration "
    "converged.")


def table(record: dict) -> str:
    """The summary table (one row per eps and angle), with its key."""
    return "\n".join([report.format_table(SUMMARY_COLUMNS, record["tables"]["summary"]),
                      *report.key_lines(SUMMARY_KEY)])


def markdown(record: dict) -> str:
    """``thm3_exact.md``: the summary, then every start."""
    t = record["tables"]
    return "\n".join([report.markdown_table(SUMMARY_COLUMNS, t["summary"]), "", "## Every start", "",
                      report.markdown_table(START_COLUMNS, t["starts"]), ""])
