"""The DDN part's ledger rows of its appendix: the checks of :mod:`ccdyn.deep.studies.appendix`
(``results/ddn/appendix``), the appendix forms (Eq. 59, 79, 125, the remark after Eq. 2) and Thm. 5's lucky node
simulated (``results/theory/appendix_forms``); re-exported by :mod:`ccdyn.deep.claims`, the part's claims module
(kept apart so that it stays small).
"""

from __future__ import annotations

from typing import Any

from ccdyn import verdicts
from ccdyn.verdicts import verdict

__all__ = ["appendix_claims", "appendix_forms_claims", "thm5_sim_claims"]


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


_EXACT = 1e-12  # relative agreement that counts as exact in float64


def appendix_claims(record: dict, *, result: str = "results/ddn/appendix", command: str | None = None) -> list:
    """Ledger records of the checks of :mod:`ccdyn.deep.studies.appendix` (one per claim; see that module)."""
    command = command or record.get("command") or "python scripts/ddn_appendix.py --overwrite"
    v = record["values"]
    out = []

    def add(cid, where, statement, parts, numbers, check, reading=None, note=None):
        out.append(verdicts.claim_record(cid, "DDN", where, statement, verdict(cid, parts, numbers), numbers, check,
                                         reading=reading, result=result, command=command, note=note))

    if "lemma1" in v:
        l1 = v["lemma1"]
        add("ddn-lemma1", "Lemma 1 (App. A.1, Eq. 16-22)", "recursive gradient update g~_l = V_l^bT [V_l^f f~_l(x_1) - "
            "V_l^f f~_l(x_2)] for reversible layers (ReLU, leaky ReLU, power activation)",
            {f"Eq. 22 = autodiff ({k})": l1[k]["rel"] <= _EXACT and l1[k]["min_norm"] > 1e-3 for k in l1},
            {k: {"rel": l1[k]["rel"], "def2_printed_residual": l1[k]["def2_printed_residual"]} for k in l1},
            "autodiff", reading="docs/readings.md#ddn-lemma-1",
            note="with f~_l = G_l f~_{l-1} (Eq. 26); Def. 2's G_l f_{l-1} is another vector for leaky and power")
    if "l2norm" in v:
        n = v["l2norm"]
        parts = {f"{k.replace('_', ' ')} = autodiff": n[k][0] <= _EXACT and n[k][1] > 1e-3
                 for k in n if k.startswith(("eq30", "eq41", "eq51", "eq56_first"))}
        parts["tied weights: descent = 2 x Eq. 56"] = n["eq56_all_twice"][0] <= _EXACT
        parts["Eq. 56's operator is not symmetric"] = n["eq56_asymmetry"] > 1e-3
        add("ddn-l2norm", "Eq. 28-30, 41, 51, 56", "the same gradients with l2-normalized outputs (K^n, P^perp)",
            parts, {k: (x[0] if isinstance(x, list) else x) for k, x in n.items()}, "autodiff",
            reading="docs/readings.md#ddn-l2-normalized", note="Eq. 51, 56: the gradient through the first branch")
    if "lemma2" in v:
        l2 = v["lemma2"]
        add("ddn-lemma2", "Lemma 2 (Eq. 46)", "batch-of-one gradient as weighted pair differences (H negatives)",
            {"Eq. 46 = autodiff (first branch)": l2["rel"] <= _EXACT and l2["min_norm"] > 1e-3},
            {"rel": l2["rel"], "H": l2["H"]}, "autodiff", reading="docs/ddn.md")
    if "eq80" in v:
        e = v["eq80"]
        add("ddn-eq80", "Eq. 80", "H > 1 InfoNCE: the pair weights xi_k = dL/dr_k- at the un-augmented points",
            {"Eq. 80 as printed (input distance, no 1/tau) = -dL/dr_k-": e["rel_printed"] <= 1e-6,
             "with r_k = 1/2 ||f_L(x) - f_L(x'_k)||^2 and 1/tau: = -dL/dr_k-": e["rel_output_distance"] <= _EXACT,
             "H = 1: = xi of Eq. 63": e["rel_h1_eq63"] <= _EXACT},
            {k: e[k] for k in ("autodiff", "printed", "rel_printed", "rel_output_distance", "rel_h1_eq63")},
            "autodiff", reading="docs/readings.md#ddn-eq-80")
    if "nuisance" in v:
        u = v["nuisance"]
        add("ddn-sec51-linear", "Sec. 5.1 (linear neuron)", "Gaussian nuisance multiplier: K̄_1(x) = Q^s x and "
            "OP = Q^s V[x] Q^s, so a linear neuron reduces dimension within the semantic subspace",
            {"OP = Q^s V[x] Q^s (exact population, antithetic draws)": u["rel_op"] <= _EXACT,
             "L_simp descent (autodiff) = 2 Q^s V[x] Q^s w, no nuisance component": u["rel_descent"] <= _EXACT
             and u["nuisance_part_of_descent"] <= _EXACT,
             "i.i.d. draws: chi^2 statistic inside its central 99.8%": 0.001 < u["mc_quantile"] < 0.999},
            {k: u[k] for k in ("rel_op", "rel_descent", "nuisance_part_of_descent", "rank_op", "mc_chi2", "mc_dof",
                               "mc_quantile")}, "closed form", reading="docs/readings.md#ddn-sec-51-nuisance")
    if "lemma7" in v:
        s = v["lemma7"]
        add("ddn-lemma7", "Lemma 7 (Eq. 102-103)", "a binary TR-HLTM is an SB-HLTM: C = rho q q^T / 2, closed under "
            "products", {"Def. 3 holds exactly for the symmetric binary transitions":
                             s["tr_iff_symmetric_mismatches"] == 0,
                         "C = rho q q^T / 2 with rho in [-1, 1]": s["c_residual"] <= _EXACT
                         and s["rho_range"] == [-1.0, 1.0],
                         "C(rho_1) C(rho_2) = C(rho_1 rho_2)": s["closure_residual"] <= _EXACT}, s, "enumeration")
    if "lemma9" in v:
        t = v["lemma9"]
        add("ddn-lemma6", "Lemma 6 (Eq. 98-99)", "TR-HLTM: P_{mu alpha} = 1 1^T / m_alpha + product of the C's "
            "along the path (categorical latents)",
            {"Eq. 99 = enumerated P(z_nu | z_0) on a categorical TR tree": t["tr"]["eq99_error"] <= _EXACT,
             "a non-TR control breaks it (the hypothesis is used)": t["not_tr"]["eq99_error"] > 1e-3},
            {"tr": t["tr"]["eq99_error"], "not_tr": t["not_tr"]["eq99_error"],
             "values": "z_0: 3, z_mu: 3, z_nu: 2 and 4"}, "enumeration",
            note="the binary case (Eq. 103, 177) is "
                 "tests/data/test_hltm.py::test_polarity_is_the_product_along_the_path")
        add("ddn-lemma9", "Lemma 9 (Eq. 166-171)", "activation covariance in TR-HLTM: "
            "V_{z_0}[E[f_ch | z_0]] = V^T (P_0 - P_0 1 1^T P_0) V, v_0k = P_{0nu} v_k",
            {"Eq. 166 = enumerated joint (categorical TR tree)": t["tr"]["rel_eq166"] <= 1e-10 and t["tr"]["rank"] > 0},
            t, "enumeration", note="Eq. 166 also holds on a non-TR tree, where Eq. 99 fails: it needs no Def. 3")
    if "lemma8" in v:
        s = v["lemma8"]
        add("ddn-lemma8", "Lemma 8 (Eq. 112 = Eq. 123)", "lower bound of a 2-D Gaussian tail P(y >= [sqrt c, 0])",
            {"Eq. 112 <= the exact probability at every (c, gamma) of the grid": s["printed_violations"] == 0}, s,
            "closed form", reading="docs/independent_checks.md#ddn-thm-5-remark",
            note=f"violated at {s['printed_violations']} of {s['grid']} grid points; with Eq. 114's exponent "
                 f"c/2(1 - gamma^2) it holds at all ({s['corrected_violations']} violations)")
    if "fig11" in v:
        f = v["fig11"]
        ratios = [x for r in f["asymptote_ratio"].values() for x in r]
        add("ddn-fig11", "Fig. 11 (Eq. 121, 124, 126)", "log 1/R_hat(c, gamma) lies in the Eq. 124 band and follows "
            "R_hat ~ (1 - gamma^2)/(gamma c) for large c",
            {"exact R_hat inside the Eq. 124 band on the grid": f["outside_band"] == 0,
             "R_hat gamma c / (1 - gamma^2) within 1% of 1 at the largest c": all(
                 abs(r[-1] - 1) < 0.01 for r in f["asymptote_ratio"].values())},
            {**f, "asymptote_ratio_range": [min(ratios), max(ratios)]}, "closed form")
    if "lemma3_5" in v:
        j = v["lemma3_5"]
        add("ddn-lemma3-5", "Lemmas 3-5 (Eq. 87, 90, 91)", "variance squashing V[phi(x)] <= L^2 V[x] and the "
            "sharpened Jensen inequalities (general, and 0 <= E psi(x) - psi(E x) <= sqrt V[x] for ReLU)",
            {"Eq. 87: ratio <= 1": j["eq87"] <= 1 + 1e-12, "Eq. 90 lower side": j["eq90_lower"] <= 1e-12,
             "Eq. 90 upper side": j["eq90_upper"] <= 1e-12,
             "Eq. 91: 0 <= gap <= sqrt V": j["eq91_upper"] <= 1 + 1e-12 and j["eq91_lower_min"] >= -1e-12},
            j, "sampled estimate", note=f"no counterexample in {j['n_dists']} random discrete distributions "
                                        "(a check that can refute, not prove)")
    return out

