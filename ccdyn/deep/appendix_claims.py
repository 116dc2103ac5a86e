"""The DDN part's ledger rows of the appendix forms (Eq. 59, 79, 125, the remark after Eq. 2) and of
Thm. 5's lucky node simulated (``results/theory/appendix_forms``); re-exported by :mod:`ccdyn.deep.claims`,
the part's claims module (kept apart so that it stays small).
"""

from __future__ import annotations

from typing import Any

from ccdyn import verdicts
from ccdyn.verdicts import verdict

__all__ = ["appendix_forms_claims", "thm5_sim_claims"]


def appendix_forms_claims(record: dict, *, result: str = "results/theory/appendix_forms", command: str | None = None,
                          tol: float = 1e-12) -> list:
    """The DDN part of ``appendix_forms.json`` (:mod:`ccdyn.deep.studies.appendix_forms`) as ledger records:
    the remark after Eq. 2, Eq. 59's bounds on eps and Eq. 125's Mills-ratio bounds."""
    command = command or record.get("command") or "python scripts/appendix_forms.py --overwrite"
    kw: dict[str, Any] = dict(result=result, command=command, reading="docs/independent_checks.md#ddn-appendix-forms")
    r2 = record["remark_eq2"]
    v2 = verdict("remark after Eq. 2", {f"-1/2 ||u - v||^2 = sim(u, v) - 1 for unit vectors (abs. {tol:g})":
                                        r2["max_abs_identity_err"] < tol,
                                        f"Eq. 2 on r = SimCLR's cosine InfoNCE (rel. {tol:g})":
                                            r2["max_rel_loss_diff"] < tol},
                 r2)
    rows = record["eq59"]["rows"]
    worst = {loss: max((r for r in rows if r["loss"] == loss), key=lambda r: r["max_abs_eps"] / r["bound"])
             for loss in ("tri", "nce")}
    n59 = {f"{loss}_max_abs_eps_over_bound": w["max_abs_eps"] / w["bound"] for loss, w in worst.items()}
    n59.update(configurations=len(rows), nce_sup_over_bound=0.5,
               derivative_within_range=all(-r["sup_abs_eps"] - 1e-12 <= r["derivative_range"][0]
                                           and r["derivative_range"][1] <= 0 for r in rows))
    v59 = verdict("Eq. 59", {"soft triplet: |eps| <= 1": all(r["max_abs_eps"] <= r["bound"] + 1e-12 for r in rows
                                                             if r["loss"] == "tri"),
                             "InfoNCE: |eps| <= 2 / tau": all(r["max_abs_eps"] <= r["bound"] + 1e-12 for r in rows
                                                              if r["loss"] == "nce"),
                             "dL/dr_k- in [-sup, 0] (sup 1, 1 / tau): the bounds' source":
                                 n59["derivative_within_range"]},
                  n59)
    ys = record["eq125"]["rows"]
    n125 = {"ys": len(ys), "y_range": [ys[0]["y"], ys[-1]["y"]],
            "tightest_lower": min(r["r"] / r["r_lower"] for r in ys),
            "tightest_upper": min(r["r_upper"] / r["r"] for r in ys)}
    v125 = verdict("Eq. 125", {"y/(1 + y^2) < r(y) < 1/y and 0 < e(y) < 1/y at every y": all(r["holds"] for r in ys)},
                   n125)
    rows79 = record["eq79"]["rows"]
    aug = [r for r in rows79 if r["sigma"] > 0]
    n79 = {"cases": len(rows79), "max_theta_over_bound": max(r["theta_w"] / r["bound_times_w"] for r in aug),
           "max_theta_without_augmentation": max(r["theta_w"] for r in rows79 if r["sigma"] == 0),
           "sigmas": sorted({r["sigma"] for r in rows79})}
    v79 = verdict("Eq. 79", {"||theta vec W_l|| <= bound ||vec W_l|| at every sigma_aug > 0, layer and loss":
                             all(r["theta_w"] <= r["bound_times_w"] for r in aug),
                             f"theta = 0 without augmentation (abs. {tol:g})":
                                 n79["max_theta_without_augmentation"] < tol},
                  n79)
    ev79 = {"scope": "special case", "why": "checked through its consequence ||theta vec W_l|| <= bound ||vec W_l|| "
            "(theta is a matrix; its norm is not formed), on one random network and noise populations"}
    out79 = [verdicts.claim_record("ddn-eq79", "DDN", "Eq. 79 (proof of Thm. 4)", "the residue theta <= (2 M_K^2 / "
                                   "tau^2) {2 E[||f(x) - f(x')|| (sqrt tr V_aug + c_0)] + 3 E tr V_aug} "
                                   "(1/tau for L_tri); 0 without augmentation", v79, n79, "autodiff", evidence=ev79,
                                   note=f"the bound is {1 / n79['max_theta_over_bound']:.0f}x or more the residue",
                                   **kw)]
    return out79 + [verdicts.claim_record("ddn-remark-eq2", "DDN", "remark after Eq. 2", "for unit outputs "
                                  "Eq. 2's InfoNCE on r = 1/2 ||u - v||^2 is SimCLR's cosine InfoNCE "
                                  "(e^{-1/tau} cancels)", v2, r2,
                                  "closed form", **kw),
            verdicts.claim_record("ddn-eq59", "DDN", "Eq. 59 (proof of Thm. 4)", "eps = dL/dr_k-|_X - dL/dr_k-|_X0 is "
                                  "bounded: |eps| <= 1 (L_tri), |eps| <= 2 / tau (L_nce)", v59, n59, "autodiff",
                                  note="the InfoNCE bound is twice the sup 1 / tau", **kw),
            verdicts.claim_record("ddn-eq125", "DDN", "Eq. 125 (Thm. 5 remark)",
                                  "Mills-ratio bounds y/(1 + y^2) < r(y) "
                                  "< 1/y, 0 < e(y) < 1/y for y > 0", v125, n125, "closed form", **kw)]




def thm5_sim_claims(record: dict, *, result: str = "results/theory/appendix_forms", command: str | None = None) -> list:
    """Thm. 5 simulated (``thm5_sim.run``'s record): at |N_mu| = Eq. 128's width, the fraction of fresh
    initializations with a lucky node (gap 2 w_j^T a_mu > 0 and |s_j| >= Eq. 130) is at least 1 - eta
    (point estimate, and not refuted: its Wilson 95% interval reaches 1 - eta). The simulation covers one
    setting with sigma_l = 0 (children deterministic given their latent), a special case of the theorem."""
    command = command or record.get("command") or "python scripts/appendix_forms.py --overwrite"
    cfg = record["config"]
    target = 1 - cfg["eta"]
    by = {r["width"]: r for r in record["rows"]}
    printed = by["eq128"]
    numbers = {"eta": cfg["eta"], "c": cfg["c"], "rho": cfg["rho"], "gamma": record["gamma"],
               "trials_with_lucky_node": {k: f"{r['with_lucky_node']}/{r['trials']} at {r['n_nodes']} nodes"
                                          for k, r in by.items()},
               "lucky_node_fraction": {k: r["mean_lucky_node_fraction"] for k, r in by.items()},
               "eq145_event_probability_per_node": record["event_probability_eq145"]}
    parts = {f"at Eq. 128's width some node is lucky in >= 1 - eta = {target:g} of the initializations":
             printed["fraction"] >= target and printed["wilson95"][1] >= target}
    ev = {"scope": "special case", "why": f"one SB-HLTM layer with sigma_l = 0 (children deterministic given their "
          f"latent), c = {cfg['c']:g}, rho = {cfg['rho']:g}, {cfg['n_children']} children"}
    return [verdicts.claim_record("ddn-thm5-lucky", "DDN", "Thm. 5 (Eq. 128-130)", "with |N_mu| >= Eq. 128 nodes, "
                                  "with probability >= 1 - eta some node has 2 w_j^T a_mu > 0 and |s_j| >= the bound "
                                  "of Eq. 130", verdict("Thm. 5", parts, numbers), numbers,
                                  "simulation against a closed form",
                                  reading="docs/independent_checks.md#ddn-thm-5-simulated",
                                  result=result, command=command, evidence=ev,
                                  note="Eq. 130's event is far looser than the proof's Gaussian event (Eq. 145): about "
                                       "a fifth of the nodes are lucky, so even a tenth of the width suffices")]
