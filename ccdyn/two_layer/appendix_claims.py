"""The 2-layer part's ledger rows of the core paper's appendix forms (Eq. 143 and its printed alternative,
Lemma 5's C = 2 form, App. D's d_k^bn, Eq. 155's bounds; ``results/theory/appendix_forms``); re-exported by
:mod:`ccdyn.two_layer.claims`, the part's claims module (kept apart so that it stays small).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ccdyn import verdicts
from ccdyn.verdicts import verdict

__all__ = ["appendix_forms_claims"]


def appendix_forms_claims(record: dict, *, result: str = "results/theory/appendix_forms", command: str | None = None,
                          tol: float = 1e-9) -> list:
    """The core part of ``appendix_forms.json`` (:mod:`ccdyn.two_layer.studies.appendix_forms`) as ledger
    records: Eq. 143 and its printed alternative against delta_k read off the enumerated dynamics; Lemma 5's
    C = 2 form and Eq. 138 against the enumerated covariances; App. D's d_k^bn and its uniformity; Eq. 155's
    bounds P >= eps/2 (eps > 0) and P <= (1/d)(1 + eps/2)^d (eps < 0) against the quadrature of Eq. 154,
    which the Monte Carlo of Eq. 152 confirms (every value within 4 s.e.)."""
    command = command or record.get("command") or "python scripts/appendix_forms.py --overwrite"
    pops, rows = record["populations"], record["eq155"]

    def rel(a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))

    true = [p["delta_true"] for p in pops]
    n143 = {"populations": len(pops), "max_rel_diff_eq143": max(rel(p["delta_eq143"], p["delta_true"]) for p in pops),
            "min_delta": min(min(t) for t in true),
            "max_off_direction": max(p["rest_off_delta_direction"] for p in pops)}
    v143 = verdict("Eq. 143", {f"Eq. 143 = delta_k of the enumerated dynamics (rel. {tol:g})":
                                   n143["max_rel_diff_eq143"] < tol,
                               "delta_k >= 0": n143["min_delta"] >= 0,
                               f"the rest of w_k' is along Delta_k (rel. {tol:g})": n143["max_off_direction"] < tol},
                   n143)
    worst = max(range(len(pops)), key=lambda i: rel(pops[i]["delta_printed_alternative"], pops[i]["delta_true"]))
    nalt = {"max_rel_diff_printed": rel(pops[worst]["delta_printed_alternative"], pops[worst]["delta_true"]),
            "example_printed": pops[worst]["delta_printed_alternative"], "example_true": pops[worst]["delta_true"],
            "max_rel_diff_with_factor_1_over_Z2_lambda_minus_d":
                max(rel(p["delta_corrected_alternative"], p["delta_true"]) for p in pops)}
    valt = verdict("Eq. 143 alternative", {f"1 - p0 p1 b_k^2 / (lambda - d_k) = delta_k (rel. {tol:g})":
                                           nalt["max_rel_diff_printed"] < tol}, nalt)
    n5 = {"max_rel_diff_lemma5_c2": max(p["lemma5_c2_rel_diff"] for p in pops),
          "max_rel_diff_eq138": max(p["eq138_rel_diff"] for p in pops)}
    v5 = verdict("Lemma 5, C = 2", {f"V[x~] = diag_k L_k + p0 p1 Delta Delta^T (rel. {tol:g})":
                                        n5["max_rel_diff_lemma5_c2"] < tol,
                                    f"V[f_1] = D + p0 p1 b b^T, Eq. 138 (rel. {tol:g})":
                                        n5["max_rel_diff_eq138"] < tol}, n5)
    spread = [(max(p["d"]) / min(p["d"]), max(p["d_bn_enumerated"]) / min(p["d_bn_enumerated"])) for p in pops]
    nd = {"max_rel_diff": max(rel(p["d_bn_closed_form"], p["d_bn_enumerated"]) for p in pops),
          "spread_d_max_over_min": [a for a, _ in spread], "spread_d_bn_max_over_min": [b for _, b in spread],
          "rf_scales": record["config"]["scales"]}
    vd = verdict("App. D d_k^bn", {f"d_k^bn = sigma_k^-2 d_k = 1 / (1 + p0 p1 b_k^2 / d_k) (rel. {tol:g})":
                                       nd["max_rel_diff"] < tol,
                                   "d_k^bn more uniform than d_k over RFs of different input scales":
                                       all(b < a for a, b in spread)}, nd)
    pos = [r for r in rows if r["eps"] > 0]
    neg = [r for r in rows if r["eps"] < 0]
    mc_ok = all(abs(r["monte_carlo"] - r["quadrature"]) <= 4 * max(r["mc_se"], 1.0 / record["config"]["n_mc"])
                for r in rows)
    small = [r for r in pos if r["eps"] <= 1]
    large = [r for r in pos if r["eps"] > 1]
    n155 = {"quadrature_vs_eq155_max_abs": max(abs(r["quadrature"] - r["eq155"]) for r in rows),
            "monte_carlo_within_4_se": mc_ok,
            "eps_gt_1": {f"eps={r['eps']:g} d={r['d']}": [r["quadrature"], r["eps"] / 2] for r in large},
            "min_P_minus_half_eps_for_eps_le_1": min(r["quadrature"] - r["eps"] / 2 for r in small),
            "negative_bound_slack_min": min((1 + r["eps"] / 2) ** r["d"] / r["d"] - r["quadrature"] for r in neg)}
    v155 = verdict("Eq. 155 bounds", {
        "P >= eps/2 for 0 < eps <= 1": bool(small) and n155["min_P_minus_half_eps_for_eps_le_1"] >= -1e-12,
        "P >= eps/2 for eps > 1": bool(large) and all(r["quadrature"] >= r["eps"] / 2 for r in large),
        "P <= (1/d)(1 + eps/2)^d for eps < 0": bool(neg) and n155["negative_bound_slack_min"] >= -1e-12,
        "Monte Carlo of Eq. 152 agrees with the quadrature (4 s.e.)": mc_ok}, n155)
    kw: dict[str, Any] = dict(result=result, command=command, reading="docs/independent_checks.md#core-appendix-forms")
    return [verdicts.claim_record("core-eq143", "core", "Thm. 5 proof (Eq. 142-143)", "the modulation coefficient "
                                  "delta_k of Eq. 143 (>= 0) gives w_k' = "
                                  "(s_k^2 V[x~_k] + delta_k Delta_k Delta_k^T) w_k",
                                  v143, n143, "enumeration", **kw),
            verdicts.claim_record("core-eq143-alternative", "core", "after Eq. 143", "the alternative form "
                                  "delta_k = 1 - p0 p1 b_k^2 / (lambda - d_k)", valt, nalt, "enumeration",
                                  note="it lacks the factor 1 / (Z^2 (lambda - d_k)); with it, it equals Eq. 143",
                                  **kw),
            verdicts.claim_record("core-lemma5-c2", "core", "Lemma 5 (C = 2), Eq. 138", "for C = 2 the between-class "
                                  "term of Eq. 120 is p0 p1 Delta Delta^T, so V[f_1] = D + p0 p1 b b^T", v5, n5,
                                  "enumeration", **kw),
            verdicts.claim_record("core-appD-dbn", "core", "App. D (after Cor. 3)", "d_k^bn = sigma_k^-2 d_k -> "
                                  "1 / (1 + p0 p1 (w_k^T Delta_k / sqrt d_k)^2), which makes it more uniform "
                                  "across RFs",
                                  vd, nd, "enumeration", **kw),
            verdicts.claim_record("core-eq155-bounds", "core", "after Eq. 155",
                                  "positive modulation: P[E_l] >= eps_l / 2; "
                                  "negative: P[E_l] <= (1/d)(1 + eps_l / 2)^d", v155, n155, "closed form",
                                  note="for eps_l > 1, P[E_l] = 1/2 < eps_l / 2", **kw)]
