"""The core paper's global-modulation claims (Thm. 5 / Eq. 15, Fig. 7, Eq. 155, Thm. 6, Cor. 3) as verdicts from
the modulation study's records (:mod:`ccdyn.two_layer.studies.modulation`), and the ledger records of the
modulation bounds, the general Lemma 5 and the top layer; re-exported by :mod:`ccdyn.two_layer.claims`, the
part's claims module (kept apart so that it stays small)."""

from __future__ import annotations

import math

import numpy as np

from ccdyn import verdicts
from ccdyn.verdicts import verdict

__all__ = ["modulation_bounds_claims", "lemma5_general_claims", "top_layer_claims", "modulation_claims", "eq15_verdict",
           "fig7_verdict", "eq155_verdict", "thm6_verdict", "cor3_verdict", "modulation_verdicts", "EQ15_TOLERANCE",
           "FIG7_TOLERANCE", "EQ155_ALPHA"]

_MODULATION = {"eq15": ("core-thm5", "Thm. 5 (Eq. 15, Lemma 4)", "enumeration"),
               "fig7": ("core-fig7", "Fig. 7 (Eq. 147, 150)", "closed form"),
               "eq155": ("core-eq155", "Eq. 155", "sampled estimate"),
               "thm6": ("core-thm6", "Thm. 6", "sampled estimate"),
               "cor3": ("core-cor3", "Cor. 3", "simulation against a closed form")}

# The modulation study's verdicts (ccdyn.two_layer.studies.modulation puts them in its record; the ledger
# computes them again from the committed JSON / CSV numbers).
EQ15_TOLERANCE = 1e-10  # largest relative |Eq. 15 - Lemma 4| that counts as agreement (float64)
FIG7_TOLERANCE = 1e-9  # largest relative |closed form - RK4| that counts as agreement
EQ155_ALPHA = 0.01  # Eq. 155 fails when this many values outside their 95% interval has chance < EQ155_ALPHA


def eq15_verdict(rows, tolerance: float = EQ15_TOLERANCE) -> dict:
    """Thm. 5: Eq. 15's velocity equals Lemma 4's (and, with BatchNorm, Cor. 3's equals Lemma 6's) on every
    enumerated population, relative difference below ``tolerance``. ``rows``: the study's ``eq15`` rows."""
    plain, normed = (max([r["relative"] for r in rows if r["batch_norm"] == bn], default=None) for bn in (False, True))
    assert plain is not None, "eq15 rows without batch_norm=False"  # the study enumerates both settings
    parts = {f"Eq. 15 = Lemma 4 (relative difference < {tolerance:g})": plain < tolerance}
    if normed is not None:
        parts[f"BatchNorm: Cor. 3 = Lemma 6 (relative difference < {tolerance:g})"] = normed < tolerance
    return verdict("Thm. 5: Eq. 15 is Lemma 4's velocity", parts,
                   {"worst_relative": max(r["relative"] for r in rows), "cases": len(rows)})


def fig7_verdict(per_y0: dict, tolerance: float = FIG7_TOLERANCE) -> dict:
    """Fig. 7: the closed form (Eq. 147) equals RK4 to ``tolerance`` (relative) and t* (Eq. 150) is finite
    exactly when y(0) > 0. ``per_y0``: str(y(0)) -> {"t_star", "max_rel_err"}."""
    worst = max(float(e["max_rel_err"]) for e in per_y0.values())
    parts = {f"closed form (Eq. 147) = RK4 (relative error < {tolerance:g})": worst < tolerance,
             "finite t* exactly when y(0) > 0 (Eq. 150)": all(bool(np.isfinite(float(e["t_star"]))) == (float(y) > 0)
                                                             for y, e in per_y0.items())}
    return verdict("Fig. 7: y' = (y + b) y blows up at t* when y(0) > 0", parts, {"worst_rel_err": worst})


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P[X >= k] for X ~ Binomial(n, p)."""
    return float(sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)))


def eq155_verdict(rows, alpha: float = EQ155_ALPHA) -> dict:
    """Eq. 155: P[E_l] against Monte Carlo; fails when as many theory values outside their 95% Wilson
    interval as seen have chance < ``alpha`` (binomial, 5% each). ``rows``: {"inside"} each (bool or the
    CSV's "True"/"False")."""
    inside = [r["inside"] in (True, "True") for r in rows]
    outside = inside.count(False)
    chance = _binomial_tail(outside, len(rows), 0.05)
    return verdict("Eq. 155: P[E_l] matches Monte Carlo",
                   {f"values outside their 95% interval no more than chance allows (P >= {alpha:g})": chance >= alpha},
                   {"inside": f"{len(rows) - outside}/{len(rows)}", "chance_of_as_many_outside": chance})


def thm6_verdict(rows, d: int) -> dict:
    """Thm. 6: the share of random starts reaching u_0 grows with the modulation c, and is 1/d (inside
    its 95% interval) at c = 0. ``rows``: the study's ``thm6`` rows."""
    by_c = sorted(rows, key=lambda r: r["c"])
    parts = {}
    if len(by_c) > 1:
        parts["the share reaching u_0 grows with c"] = all(a["to_u0"] < b["to_u0"] for a, b in zip(by_c, by_c[1:]))
    if by_c[0]["c"] == 0:
        lo, hi = by_c[0]["to_u0_ci95"]
        parts["at c = 0 it is 1/d (inside the 95% interval)"] = lo <= 1 / d <= hi
    return verdict("Thm. 6: modulation enlarges the basin of u_0", parts,
                   {"to_u0": {r["c"]: r["to_u0"] for r in rows},
                    "predictor_agrees": {r["c"]: r["predictor_agrees"] for r in rows}})


def cor3_verdict(c3: dict, final_step: int) -> dict:
    """Cor. 3: BatchNorm narrows the spread of the RFs' initial speeds more than 10x and, by ``final_step``,
    every RF turns at least a third of the largest angle. ``c3``: the study's ``cor3`` (``none``, ``bn``)."""
    spread = {v: float(np.max(c3[v]["initial_speed"]) / np.min(c3[v]["initial_speed"])) for v in ("none", "bn")}
    final = {v: np.asarray(c3[v]["angle_moved_deg"][final_step] if final_step in c3[v]["angle_moved_deg"]
                           else c3[v]["angle_moved_deg"][str(final_step)], float) for v in ("none", "bn")}
    ratio = {v: float(np.min(final[v]) / max(np.max(final[v]), 1e-30)) for v in ("none", "bn")}
    parts = {"BatchNorm narrows the spread (max/min) of the initial speeds more than 10x":
             spread["none"] > 10 * spread["bn"],
             "with BatchNorm every RF turns at least a third of the largest angle": ratio["bn"] >= 1 / 3}
    return verdict("Cor. 3: BatchNorm lets RFs of every scale learn at comparable speed", parts,
                   {"speed_spread": spread, "smallest_over_largest_angle": ratio})


def modulation_verdicts(files: dict) -> dict:
    """The five verdicts from the committed files of ``scripts/modulation.py``: ``files`` maps "eq15",
    "fig7", "thm6", "cor3" to their JSON and "eq155" to the rows of ``eq155.csv`` (dicts)."""
    cor3 = files["cor3"]
    return {"eq15": eq15_verdict(files["eq15"]["rows"]), "fig7": fig7_verdict(files["fig7"]["per_y0"]),
            "eq155": eq155_verdict(files["eq155"]), "thm6": thm6_verdict(files["thm6"]["rows"], files["thm6"]["d"]),
            "cor3": cor3_verdict(cor3, cor3["none"]["n_steps"])}


def modulation_claims(verdicts_by_check: dict, *, result: str = "results/theory/modulation",
                      command: str = "python scripts/modulation.py --overwrite") -> list:
    """The five verdicts of :func:`modulation_verdicts` (or of ``modulation.run``'s record: a check ->
    {"verdict"} each) as ledger records."""
    out = []
    for name, (cid, where, kind) in _MODULATION.items():
        if name in verdicts_by_check:
            v = verdicts_by_check[name]
            v = v.get("verdict", v)
            out.append(verdicts.claim_record(cid, "core", where, v["claim"], v, v["numbers"], kind, result=result,
                                             command=command))
    return out


def modulation_bounds_claims(record: dict, *, result: str = "results/theory/modulation_bounds",
                             command: str | None = None, rel_tol: float = 1e-8) -> list:
    """Eq. 151 and Eq. 156-157 (``studies.modulation_bounds.run``'s record or ``modulation_bounds.json``).
    Eq. 151: the printed dt*/db equals float64 autodiff of Eq. 150 to ``rel_tol`` (the printed bracket
    cancels to ~x^2/2 at small x = b/y0) and is negative on the whole grid. Eq. 156-157: the exact P[E_l]
    against the bounds, split by regime (Eq. 156 top gap <= 1; Eq. 157 gaps <= 2), and the corrected
    forms min(gap, 1)/2 and max(0, bound) in every case."""
    command = record.get("command") or command or "python scripts/modulation_bounds.py --overwrite"
    e, rows = record["eq151"], record["rows"]
    n1 = {k: e[k] for k in ("x_range", "points", "max_rel_diff_autodiff", "max_value")}
    v1 = verdict("Eq. 151", {f"printed dt*/db = autodiff of Eq. 150 (rel. {rel_tol:g})":
                                 e["max_rel_diff_autodiff"] < rel_tol,
                             "dt*/db < 0 at every grid point": e["max_value"] < 0}, n1)
    tot = lambda key, regime: sum(r[key][regime] for r in rows)  # noqa: E731
    n2 = {"eq156_draws_gap_le_1": tot("eq156_draws", "small"),
          "eq156_violations_gap_le_1": tot("eq156_violations", "small"),
          "eq156_draws_gap_gt_1": tot("eq156_draws", "large"),
          "eq156_violations_gap_gt_1": tot("eq156_violations", "large"),
          "eq157_cases_gaps_le_2": tot("eq157_cases", "small"),
          "eq157_violations_gaps_le_2": tot("eq157_violations", "small"),
          "eq157_cases_gap_gt_2": tot("eq157_cases", "large"),
          "eq157_violations_gap_gt_2": tot("eq157_violations", "large"),
          "eq156_min_slack_gap_le_1": min(r["eq156_min_slack_gap_le_1"] for r in rows
                                          if r["eq156_min_slack_gap_le_1"] is not None),
          "worst_miss_eq156": max(r["worst_miss"]["eq156"] for r in rows),
          "worst_miss_eq157": max(r["worst_miss"]["eq157"] for r in rows),
          "max_p_at_eq157_violation": max(r["max_p_at_eq157_violation"] for r in rows),
          "corrected_violations": sum(r["corrected_violations"]["eq156"] + r["corrected_violations"]["eq157"]
                                      for r in rows)}
    v2 = verdict("Eq. 156-157", {
        "Eq. 156 holds where the top gap <= 1": n2["eq156_draws_gap_le_1"] > 0 and n2["eq156_violations_gap_le_1"] == 0,
        "Eq. 157 holds where the gaps <= 2": n2["eq157_cases_gaps_le_2"] > 0 and n2["eq157_violations_gaps_le_2"] == 0,
        "Eq. 156 and 157 as printed hold at every gap":
            n2["eq156_violations_gap_gt_1"] + n2["eq157_violations_gap_gt_2"] == 0,
        "min(gap, 1)/2 and max(0, Eq. 157) hold in every case": n2["corrected_violations"] == 0}, n2)
    note = None
    if not v2["holds"]:
        note = ("as printed, Eq. 156 exceeds 1/2 >= P for a top gap > 1 and Eq. 157 turns negative (P = 0) for "
                "gaps > 2; min(gap, 1)/2 and max(0, .) hold in every case")
    return [verdicts.claim_record("core-eq151", "core", "Eq. 151 (App. C.3)", "dt*/db < 0: a larger b_l blows up "
                                  "sooner (the printed derivative of Eq. 150)", v1, n1, "autodiff",
                                  result=result, command=command),
            verdicts.claim_record("core-eq156-157", "core", "Eq. 156-157 (App. C.3)", "general modulation: P[E_c(1)] "
                                  ">= (eps_c(1) - eps_c(2))/2 and P[E_c(r)] <= min_r' (1 - gap/2)^(r'+1) / (r'+1)",
                                  v2, n2, "closed form", result=result, command=command, note=note)]


def lemma5_general_claims(record: dict, *, result: str = "results/theory/lemma5_general", command: str | None = None,
                          rel_tol: float = 1e-12) -> list:
    """Lemma 5 (Eq. 120) beyond C = 2, M = 1 (``studies.lemma5_general.run``'s record or ``lemma5_general.json``):
    the closed form equals the enumerated V[x~] to ``rel_tol`` (relative to the largest entry) in every shape
    with C > 2 or M > 1, and the between-class term has rank <= C (the paper's "at most rank C")."""
    command = record.get("command") or command or "python scripts/lemma5_general.py --overwrite"
    rows = [r for r in record["rows"] if r["C"] > 2 or r["M"] > 1]
    numbers = {"shapes_beyond_C2_M1": len(rows), "max_rel_diff": max((r["max_rel_diff"] for r in rows), default=None),
               "C_M": [[r["C"], r["M"]] for r in rows], "between_rank": [r["between_rank"] for r in rows]}
    v = verdict("Lemma 5", {f"Eq. 120 = enumeration (rel. {rel_tol:g}) for every C > 2 or M > 1 shape":
                            bool(rows) and all(r["max_rel_diff"] < rel_tol for r in rows),
                            "between-class term of rank <= C": bool(rows) and all(max(r["between_rank"]) <= r["C"]
                                                                                  for r in rows)}, numbers)
    note = None
    if v["holds"] and all(max(r["between_rank"]) <= r["C"] - 1 for r in rows):
        note = "the between-class term has rank C - 1 (its C terms sum to zero), one below the stated bound"
    return [verdicts.claim_record("core-lemma5-general", "core", "Lemma 5 (Eq. 120), C > 2 or M > 1",
                                  "V[x~] = diag_k L_k + sum_c p_c (1 - p_c)^2 Delta(c) Delta(c)^T under conditional "
                                  "independence", v, numbers, "enumeration", result=result, command=command,
                                  note=note)]


def top_layer_claims(record: dict, *, result: str = "results/theory/top_layer", command: str | None = None,
                     tol: float = 1e-12, rate_tol: float = 1e-4) -> list:
    """Sec. 4 after Lemma 4 (``studies.top_layer.run``'s record or ``top_layer.json``), V on ||V||_F = 1: the flow
    from random starts reaches S = s_max s_max^T (to ``tol``; the exact flow matches RK4), every V = v s_i^T is
    stationary (residual < ``tol``: rank-1 S at every stationary point), and only s_max is stable (the other
    ones grow toward s_max at lambda_max - lambda_i, to ``rate_tol`` relative to the spread of C's spectrum, > 0).
    The paper's "necessary condition" names s_max; the saddles v s_i^T (i not max) are stationary too."""
    command = record.get("command") or command or "python scripts/top_layer.py --overwrite"
    rows = record["rows"]
    numbers = {"draws": len(rows), "max_S_minus_top_outer": max(r["S_minus_top_outer"] for r in rows),
               "max_rk4_vs_exact": max(r["rk4_vs_exact"] for r in rows),
               "max_residual_v_si": max(r["max_residual_v_si"] for r in rows),
               "min_start_residual": min(r["start_residual"] for r in rows),
               "max_rate_rel_err": max(r["rate_rel_err"] for r in rows),
               "min_rate_non_top": min(r["min_rate_non_top"] for r in rows),
               "min_eig_gap_top": min(r["eig_gap_top"] for r in rows)}
    v = verdict("rank-1 S", {
        f"the flow reaches S = s_max s_max^T (< {tol:g}) and the exact flow matches RK4 (< 1e-9)":
            numbers["max_S_minus_top_outer"] < tol and numbers["max_rk4_vs_exact"] < 1e-9,
        f"every v s_i^T is stationary (< {tol:g}) and random starts are not": numbers["max_residual_v_si"] < tol
            and numbers["min_start_residual"] > 1e-3,
        "only v s_max^T is stable (others grow at lambda_max - lambda_i > 0)":
            numbers["max_rate_rel_err"] < rate_tol and numbers["min_rate_non_top"] > 0,
        "as stated: every stationary V has s = s_max (no stationary v s_i^T with i not max)":
            not (numbers["max_residual_v_si"] < tol)}, numbers)
    return [verdicts.claim_record("core-sec4-rank1-s", "core", "Sec. 4 (after Lemma 4)",
                                  "a stationary V is v s^T with s the maximal eigenvector of C_alpha[f_1]: S = s s^T "
                                  "is rank 1", v, numbers, "closed form", result=result, command=command,
                                  note=None if v["holds"] else "S is rank 1 at every stationary V (v s_i^T); s is "
                                  "the maximal eigenvector only at the stable one, the others are saddles")]
