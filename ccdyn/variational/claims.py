"""The SimCLR variational part's claims (*Understanding Contrastive Learning through Variational Analysis
and Neural Network Optimization Perspectives*): records of :mod:`ccdyn.variational.studies` in, verdicts
out (:func:`ccdyn.verdicts.verdict` on the measured numbers; thresholds explained in docs/variational.md).

The studies put these verdicts in their records: :func:`prop21_verdict`, :func:`fig3_verdict`,
:func:`thm32_verdict`, :func:`propA1_verdict`, :func:`lemmaA2_verdict` (one section of the sphere record
each), :func:`kernel_verdicts` (the kernel record) and :func:`cluster_verdicts` (Figs. 5-6).
:func:`ledger` turns the three records (or their JSON) into ledger records
(:func:`ccdyn.verdicts.claim_record`).
"""

from __future__ import annotations

import re

import numpy as np

from ccdyn import stats, verdicts
from ccdyn.variational import clusters as cl
from ccdyn.verdicts import verdict

__all__ = ["prop21_verdict", "fig3_verdict", "thm32_verdict", "propA1_verdict", "lemmaA2_verdict", "kernel_verdicts",
           "cluster_verdicts", "ledger", "thm42_moving_claims"]


def prop21_verdict(r: dict) -> dict:
    """Prop. 2.1 from the two inputs' Eq. 1 losses and the latent form (with and without e^{1/tau})."""
    a, b, latent, diff = r["eq1_input_a"], r["eq1_input_b"], r["latent_form"], r["max_abs_diff"]
    printed = r["latent_form_as_printed_without_exp(1/tau)"]
    return verdict("Prop. 2.1: an invariant map makes NT-Xent a function of f#mu only",
                   {"two inputs, one latent measure: equal losses (1e-12)": abs(a - b) < 1e-12,
                    "equal to the latent form with Eq. 1's positive-pair term e^{1/tau} (1e-12)": diff < 1e-12,
                    "equal to the latent form as printed (no e^{1/tau})": abs(printed - latent) < 1e-12},
                   {"max_abs_diff": diff, "printed_minus_latent": printed - latent})


def fig3_verdict(r: dict) -> dict:
    """Fig. 3 from the loss (tau, K), the plateau, the thresholds and their linear fit."""
    L, plateau, taus = np.asarray(r["loss"], float), np.asarray(r["plateau"], float), np.asarray(r["taus"], float)
    thr, fit, rel_tol = np.asarray(r["threshold"], float), r["fit"], r["rel_tol"]
    parts = {"loss nonincreasing in K at every tau": bool(np.all(np.diff(L, axis=1) <= 1e-12)),
             f"plateau (uniform measure) reached within {rel_tol:g} at the largest K":
                 bool(np.all((L[:, -1] - plateau) / plateau < rel_tol)),
             "smaller tau, smaller loss at every K >= 2": bool(np.all(np.diff(L[:, 1:], axis=0) > 0)),
             "threshold bracketed for every tau": bool(np.isfinite(thr).all()),
             "threshold linear in tau (R^2 >= 0.99)": bool(fit is not None and fit["r2"] >= 0.99)}
    return verdict("Fig. 3: loss falls with K to the uniform plateau; threshold linear in tau", parts,
                   {"fit": fit, "threshold": dict(zip(map(str, taus), thr.tolist()))})


def thm32_verdict(r: dict) -> dict:
    """Thm. 3.2 from the largest Riemannian gradient of each configuration (controls named ``control: ...``)."""
    sym = [x["max_riemannian_grad"] for x in r["rows"] if not x["config"].startswith("control")]
    ctl = [x["max_riemannian_grad"] for x in r["rows"] if x["config"].startswith("control")]
    return verdict("Thm. 3.2: symmetric discrete measures are stationary on the product of spheres",
                   {"every symmetric configuration: |grad| < 1e-12": max(sym) < 1e-12,
                    "non-symmetric controls are not stationary (|grad| > 1e-3)": min(ctl) > 1e-3},
                   {"max_grad_symmetric": max(sym), "min_grad_controls": min(ctl),
                    "stationary_but_saddle": r["saddles"]})


def propA1_verdict(r: dict) -> dict:
    """Prop. A.1 from the constant map's gradient and Hessian and |grad L(k f)| over k."""
    g0, ev0, ks, norms = r["constant_grad"], r["constant_hessian_eig_range"][0], r["scaled_k"], r["scaled_grad_norm"]
    return verdict("Prop. A.1: constant maps and k f (k -> inf) satisfy the Euler-Lagrange equation",
                   {"constant map stationary (|grad| < 1e-12)": g0 < 1e-12,
                    "|grad L(k f)| decreases (until rounding, 1e-12) to < 1e-8":
                    all(b < a for a, b in zip(norms, norms[1:]) if a > 1e-12) and norms[-1] < 1e-8,
                    "constant map a local minimizer in R^d (Hessian >= 0)": ev0 > -1e-12},
                   {"constant_grad": g0, "constant_hessian_min_eig": ev0,
                    "grad_norm_at_k": dict(zip(map(str, ks), norms))})


def lemmaA2_verdict(r: dict) -> dict:
    """Lemma A.2 from the (K, tau) cells of ``sphere_configs.lemma_check``. Signs count only where they are
    resolved (the value exceeds its rounding bound; Eq. 4's second derivatives reach 1e-89 at tau = 0.01,
    so no fixed cut separates a value from noise): a tested cell (in the region, some admitted direction)
    must have every admitted direction resolved and none resolved negative; a cell is stable when its
    smallest Riemannian eigenvalue is resolved and positive."""
    rows = r["rows"]
    tested = [x for x in rows if x["lemma_region"] and x["n_admitted"] > 0]
    resolved = [x for x in tested if x["admitted_resolved"]]
    neg = sum(x["n_admitted_resolved_negative"] for x in tested)
    worst = min(tested, key=lambda x: x["min_second_variation_admitted"], default=None)
    stable = [x for x in rows if x["riemannian_eig_resolved"] and x["min_riemannian_eig"] > 0]
    covered = [x for x in stable if x["lemma_region"]]
    vacuous = [x for x in rows if x["lemma_region"] and x["n_admitted"] == 0]
    return verdict("Lemma A.2: second variation > 0 when sigma > 3 K^2 tau",
                   {"every tested cell resolved": bool(tested) and len(resolved) == len(tested),
                    "no admitted direction resolved negative": bool(tested) and neg == 0},
                   {"cells_tested": len(tested), "cells_tested_resolved": len(resolved), "cells": len(rows),
                    "admitted_directions": sum(x["n_admitted"] for x in tested),
                    "admitted_directions_resolved": sum(x["n_admitted_resolved"] for x in tested),
                    "admitted_directions_resolved_negative": neg,
                    "worst_admitted": None if worst is None else worst["min_second_variation_admitted"],
                    "worst_admitted_err": None if worst is None else worst["min_second_variation_admitted_err"],
                    "stable_cells": len(stable), "stable_cells_inside_lemma_region": len(covered),
                    "unresolved_eig_cells": sum(not x["riemannian_eig_resolved"] for x in rows),
                    "cells_in_region_without_admitted_direction": len(vacuous)})


def kernel_verdicts(r: dict) -> list:
    """Props. 4.1, 4.3, 4.4, Thm. 4.2, 4.5 and Cor. 4.6 from the kernel record."""
    worst_ntk = max(max(v["jacobian"], v["vjp_jvp"]) for v in r["ntk"].values())
    flow, fit, rms, gaps = r["flow"], r["mc"]["fit"], r["mc"]["rms"], r["thm42"]
    order, thm45, deltas = r["thm45"]["order"], r["thm45"]["rel_err"], r["thm45"]["deltas"]
    cor, cor_Ms, cor_slope = r["cor46"]["rel_err"], r["cor46"]["Ms"], r["cor46"]["slope"]
    return [
        verdict("Prop. 4.3: the explicit kernel is the network's NTK",
                {"max |K - autodiff| < 1e-12": worst_ntk < 1e-12}, {"max_abs_diff": worst_ntk}),
        verdict("Prop. 4.1: the function-space flow is J(-grad_w L)", {"max diff < 1e-12": max(flow.values()) < 1e-12},
                {"max_abs_diff": max(flow.values())}),
        verdict("Prop. 4.4: the width-M kernel tends to the arccos limit at rate M^{-1/2}",
                {"exponent within 0.05 of -1/2": abs(fit["slope"] + 0.5) < 0.05, "R^2 >= 0.99": fit["r2"] >= 0.99},
                {"exponent": fit["slope"], "r2": fit["r2"], "rms_at_largest_M": rms[-1]}),
        verdict("Thm. 4.2: plain GD keeps invariance; the network keeps it only if grad_w f is invariant",
                {"plain GD gap 0": gaps["plain GD, 20 steps"] < 1e-14,
                 "network gap > 0 after one step": gaps["network, 1 step"] > 1e-6,
                 "network with invariant grad_w f: gap 0": gaps["network with invariant grad_w f, 1 step"] < 1e-14},
                gaps),
        verdict("Thm. 4.5: per-cluster velocity -(n_q/n)||xi_q||^2 beta_q grad L(xi_q) + O(delta)",
                {"error shrinks like delta (order within 0.2 of 1)": abs(order - 1) < 0.2,
                 "relative error < 1e-2 at the smallest delta": thm45[-1] < 1e-2},
                {"order": order, "rel_err": dict(zip(map(str, deltas), thm45))}),
        verdict("Cor. 4.6: beta -> 1/2 for ReLU as M -> inf",
                {"relative error decreases with M": all(b < a for a, b in zip(cor, cor[1:])),
                 "relative error < 0.05 at the largest M": cor[-1] < 0.05},
                {"rel_err": dict(zip(map(str, cor_Ms), cor)), "slope_in_M": cor_slope})]


def _in_horizon(iteration: int, *summaries):
    """The identity on a verdict when every run of ``summaries`` recorded ``iteration`` (its
    ``config["steps"]`` reach it); otherwise a function turning the verdict into "not established" (``holds``
    None, no parts) with its ``reason``: a score at the nearest recorded iteration says nothing about a
    later one."""
    horizon = min(int(s["config"]["steps"]) for s in summaries)
    if iteration <= horizon:
        return lambda v: v
    reason = f"beyond the run's horizon: it stops at iteration {horizon}, the claim is about iteration {iteration}"
    return lambda v: {**v, "holds": None, "parts": {}, "reason": reason,
                      "numbers": {**v["numbers"], "steps": horizon, "claim_iteration": iteration}}


def _below(a, b):
    """``a < b``, or None when either is unknown (a score with no finite seed, an interval of fewer than two)."""
    return None if a is None or b is None else a < b


def _end(score: dict, i: int):
    """End ``i`` (0 low, 1 high) of a score's 95% interval, None without one."""
    return None if score["ci"] is None else score["ci"][i]


def _judged(claim, parts, numbers) -> dict:
    """:func:`verdict`, "not established" with its reason when a part could not be computed (None): too few
    finite seeds (e.g. every seed went non-finite at a tiny --tau)."""
    if any(v is None for v in parts.values()):
        return {**verdict(claim, None, numbers), "reason": "too few finite seeds to compare (non-finite runs)"}
    return verdict(claim, parts, numbers)


def cluster_verdicts(c, summaries, grid) -> list:
    """Figs. 5-6 and Remark 4.4 from the study's summaries (name -> ``clusters.kept_summary`` + config) and
    grid rows; ``c``: the :class:`~ccdyn.variational.studies.clusters.ClusterStudyConfig` (``dims``, ``at``,
    ``share``). A claim about an iteration the runs did not reach is "not established" (:func:`_in_horizon`)."""
    out = []
    for dim in c.dims:
        S = lambda name, dim=dim: summaries[f"{dim}-D {name}"]  # noqa: E731
        rnd = S("points (start: random)")
        for net_name, gd_name, fig in (("net1", "points (start: net1)", "Fig. 5"),
                                       ("net1 signed", "points (start: net1 signed)", "Fig. 5 (signed A)"),
                                       ("net1 tanh", "points (start: net1 tanh)", "Fig. 5 (tanh)"),
                                       ("mlp4", "points (start: mlp4)", "Fig. 6")):
            if f"{dim}-D {net_name}" not in summaries:
                continue
            net, gd = S(net_name), S(gd_name)
            n1000, g1000 = cl.at_iteration(net, 1000)["ratio"], cl.at_iteration(gd, 1000)["ratio"]
            out.append(_in_horizon(200, net)(verdict(
                               f"{dim}-D {fig}: {net_name} keeps the clusters from iteration ~15 to ~200",
                               {f"kept at 15 in >= {c.share:.0%} of seeds": cl.kept_share(net, 15) >= c.share,
                                f"kept at 200 in >= {c.share:.0%} of seeds": cl.kept_share(net, 200) >= c.share},
                               {"kept_share": {t: cl.kept_share(net, t) for t in c.at},
                                "ratio_mean": {t: cl.at_iteration(net, t)["ratio"]["mean"] for t in c.at},
                                "median_t_off": net["median_t_off"],
                                "kept_to_end": f"{net['kept_to_end']}/{net['n']}"})))
            out.append(_in_horizon(1000, net, gd)(_judged(
                               f"{dim}-D {fig}: plain GD from {net_name}'s start spreads the clusters by ~1000",
                               {f"not kept at 1000 in >= {c.share:.0%} of seeds":
                                    1 - cl.kept_share(gd, 1000) >= c.share,
                                "ratio at 1000 below its start's":
                                    _below(g1000["mean"], cl.at_iteration(gd, 0)["ratio"]["mean"]),
                                f"ratio at 1000 below {net_name}'s (95% intervals apart)":
                                    _below(_end(g1000, 1), _end(n1000, 0))},
                               {"kept_share": {t: cl.kept_share(gd, t) for t in c.at},
                                "ratio_mean": {t: cl.at_iteration(gd, t)["ratio"]["mean"] for t in c.at},
                                "network_ratio_at_1000": n1000["mean"]})))
        out.append(verdict(f"{dim}-D Fig. 5: plain GD from a random start ignores the clusters",
                           {"never kept (iterations 0 .. end)": max(cl.kept_share(rnd, t) for t in c.at) == 0},
                           {"ratio_mean": {t: cl.at_iteration(rnd, t)["ratio"]["mean"] for t in c.at}}))
    small = [g for g in grid if g["vary"] == "small cluster size" and g["model"] == "net1"]
    if small:
        big, tiny = small[0], small[-1]
        n = big["n"]
        kb, kt = round(big["kept_at_end"] * n), round(tiny["kept_at_end"] * n)
        out.append(_judged("Remark 4.4: with a small cluster the network keeps the clusters less (end of the grid run)",
                           {"fewer seeds keep all clusters (95% Wilson intervals apart)":
                                stats.wilson_interval(kt, n)[1] < stats.wilson_interval(kb, n)[0],
                            "the small cluster's silhouette is below the same cluster's at equal sizes "
                            "(95% intervals apart)":
                                _below(_end(tiny["cluster_x1_silhouette_end"], 1),
                                       _end(big["cluster_x1_silhouette_end"], 0))},
                           {"sizes": [g["value"] for g in small], "kept_at_end": [g["kept_at_end"] for g in small],
                            "cluster_x1_silhouette_end": [g["cluster_x1_silhouette_end"]["mean"] for g in small],
                            "others_silhouette_end": [g["other_clusters_silhouette_end"]["mean"] for g in small]}))
    return out


_SPHERE = (("prop21", "Prop. 2.1", "closed form"), ("fig3", "Fig. 3", "closed form"), ("thm32", "Thm. 3.2", "autodiff"),
           ("propA1", "Prop. A.1", "autodiff"), ("lemmaA2", "Lemma A.2", "sampled estimate"))
_KERNEL = {"Prop. 4.3": "autodiff", "Prop. 4.1": "autodiff", "Prop. 4.4": "sampled estimate",
           "Thm. 4.2": "simulation against a closed form", "Thm. 4.5": "closed form", "Cor. 4.6": "sampled estimate"}


def _id(*texts, words: int = 99) -> str:
    return "-".join(["simclr"] + [w for t in texts for w in re.findall(r"[a-z]+|\d+(?:\.\d+)*", t.lower())[:words]])


def ledger(sphere: dict | None = None, kernel: dict | None = None, clusters: dict | None = None, *,
           result: str = "results/simclr_var") -> list:
    """Ledger records of the verdicts in the three study records (or ``sphere.json``, ``kernel.json``,
    ``clusters.json``, whose run command they then carry); a record left None is skipped. Readings:
    docs/variational.md."""
    out, reading = [], "docs/variational.md"
    sphere_cmd = (sphere or {}).get("command") or "python scripts/ntxent_sphere.py --overwrite"
    kernel_cmd = (kernel or {}).get("command") or "python scripts/kernel_dynamics.py --overwrite"
    for key, where, kind in (_SPHERE if sphere else ()):
        assert sphere is not None  # (the loop runs only with the sphere record)
        v = sphere[key]["verdict"]
        statement = v["claim"].split(": ", 1)[1]
        out.append(verdicts.claim_record(_id(where), "SimCLR-var", where, statement, v, v["numbers"], kind,
                                         reading=reading, result=f"{result}/sphere", command=sphere_cmd))
    for v in (kernel or {}).get("verdicts", []):
        where, statement = v["claim"].split(": ", 1)
        out.append(verdicts.claim_record(_id(where), "SimCLR-var", where, statement, v, v["numbers"], _KERNEL[where],
                                         reading=reading, result=f"{result}/kernel", command=kernel_cmd))
    for v in (clusters or {}).get("verdicts", []):
        where, statement = v["claim"].split(": ", 1)
        out.append(verdicts.claim_record(_id(where, statement, words=8), "SimCLR-var", where, statement, v,
                                         v["numbers"], "sampled estimate", reading=reading, result=f"{result}/kernel",
                                         command=kernel_cmd))
    return out


def thm42_moving_claims(record: dict, *, result: str = "results/simclr_var/thm42_moving", command: str | None = None,
                        tol: float = 1e-12, rel_tol: float = 1e-9, min_gap: float = 1e-6) -> list:
    """Thm. 4.2 with T x != x (``studies.thm42_moving.run``'s record or ``thm42_moving.json``). Parts: with
    the hypothesis (T x = c x, normalized map) the Jacobians agree and the gap stays below ``tol`` over every
    step while the points move; without it (T x = x + s n, B n = 0, n generic) the gap after one step is
    above ``min_gap`` and equals Eq. 15's closed form to ``rel_tol`` (no gate flips); "only if": grad_w f
    differs (n orthogonal to the inputs) and the gap stays below ``tol``, which breaks the necessity."""
    command = record.get("command") or command or "python scripts/thm42_moving.py --overwrite"
    a, b, o = record["scaling"], record["generic"], record["orthogonal"]
    moves = min(a["min_move_of_T"], b["min_move_of_T"], o["min_move_of_T"])
    parts = {
        f"T x = c x (normalized map): grad_w f invariant and the gap < {tol:g} at every step while the points move":
            a["jacobian_gap"] < tol and max(a["gaps"]) < tol and a["moved"] > 1e3 * tol,
        f"T x = x + s n (B n = 0, n generic): gap > {min_gap:g} after one step, "
        f"= Eq. 15 closed form (rel. {rel_tol:g})":
            b["gap_start"] < tol and b["gap_one_step"] > min_gap and b["gate_flips_one_step"] == 0
            and b["eq15_abs_diff"] <= rel_tol * b["gap_one_step"],
        "the condition is necessary (no case keeps invariance with grad_w f not invariant)":
            not (o["jacobian_gap"] > min_gap and max(o["gaps"]) < tol)}
    numbers = {"min_move_of_T": moves, "scaling_jacobian_gap": a["jacobian_gap"], "scaling_max_gap": max(a["gaps"]),
               "scaling_moved": a["moved"], "generic_gap_one_step": b["gap_one_step"],
               "generic_eq15_abs_diff": b["eq15_abs_diff"], "generic_gap_last_step": b["gaps"][-1],
               "orthogonal_jacobian_gap": o["jacobian_gap"], "orthogonal_max_gap": max(o["gaps"]),
               "orthogonal_one_step_condition": o["one_step_condition"], "steps": len(a["gaps"])}
    v = verdict("Thm. 4.2 (T x != x): the network keeps invariance if grad_w f is invariant, and only then",
                parts, numbers)
    note = "sufficient, not necessary: invariance is kept exactly when (grad_w f(Tx) - grad_w f(x)) . grad_w L = 0"
    return [verdicts.claim_record("simclr-thm-4.2-moving-t", "SimCLR-var", "Thm. 4.2 (Eq. 15, App. A.5)",
                                  "with T x != x: the network keeps invariance if and only if grad_w f is invariant",
                                  v, numbers, "closed form", reading="docs/independent_checks.md#simclr-var-thm-42",
                                  result=result, command=command,
                                  note=None if v["holds"] else note)]


def appendix_a1_claims(record: dict, *, result: str = "results/theory/appendix_forms", command: str | None = None,
                       tol: float = 1e-12) -> list:
    """App. A.1 (``appendix_a1.run``'s record): with an invariant map, VICReg and BYOL are functions of f#mu
    only: on two different inputs with the same latent measure each loss equals its latent form (relative
    ``tol``); the control (a map that is not invariant) must give different values on the two inputs, or
    the check could not tell."""
    command = command or record.get("command") or "python scripts/appendix_forms.py --overwrite"
    parts, numbers = {}, {}
    for loss in ("vicreg", "byol"):
        r = record[loss]
        diff = max(abs(r["input_a"] - r["latent"]), abs(r["input_b"] - r["latent"])) / abs(r["latent"])
        control = abs(r["not_invariant_a"] - r["not_invariant_b"]) / abs(r["latent"])
        parts[f"{loss}: both inputs = the latent form (rel. {tol:g})"] = diff < tol
        parts[f"{loss}: a map that is not invariant separates the inputs (control)"] = control > 1e3 * tol
        numbers[loss] = {"max_rel_diff": diff, "control_rel_diff": control, "latent": r["latent"]}
    return [verdicts.claim_record("simclr-appA1", "SimCLR-var", "App. A.1", "with an invariant map, the VICReg and "
                                  "BYOL losses depend on the data only through f#mu (ill-posed like NT-Xent)",
                                  verdict("App. A.1", parts, numbers), numbers, "enumeration",
                                  reading="docs/independent_checks.md#simclr-var-app-a1", result=result,
                                  command=command)]


__all__ += ["appendix_a1_claims"]


def eq6_claims(record: dict, *, result: str = "results/theory/appendix_forms", command: str | None = None,
               tol: float = 1e-12) -> list:
    """Prop. 3.1's Eq. 6 (``eq6.run``'s record): the printed first variation of Eq. 4 with augmentations
    against the autodiff gradient of Eq. 4, relative to its largest entry, in three cases: random embeddings
    with several views, invariant embeddings (every view the same) and one view (Eq. 7). The derived form
    (G_{T',S}(y) in place of G_{T,T'}(y)) is in the numbers: it must agree everywhere, or the route is wrong."""
    command = command or record.get("command") or "python scripts/appendix_forms.py --overwrite"
    rows = record["rows"]
    worst = {case: max(r["printed_rel_err"] for r in rows if r["case"] == case)
             for case in ("views", "invariant", "one view")}
    derived = max(r["derived_rel_err"] for r in rows)
    numbers = {"printed_max_rel_err": worst, "derived_max_rel_err": derived, "cases": len(rows)}
    parts = {f"several views, f not invariant: Eq. 6 = the autodiff first variation (rel. {tol:g})":
                 worst["views"] < tol,
             f"invariant f: Eq. 6 = autodiff (rel. {tol:g})": worst["invariant"] < tol,
             f"one view (Eq. 7): Eq. 6 = autodiff (rel. {tol:g})": worst["one view"] < tol,
             f"the derived form = autodiff in every case (the route's control, rel. {tol:g})": derived < tol}
    return [verdicts.claim_record("simclr-prop3.1-eq6", "SimCLR-var", "Prop. 3.1 (Eq. 6)", "the first optimality "
                                  "condition of Eq. 4 with augmentations (the first variation paired with h(T x))",
                                  verdict("Eq. 6", parts, numbers), numbers, "autodiff",
                                  reading="docs/independent_checks.md#simclr-var-prop-31-eq-6", result=result,
                                  command=command,
                                  note="the printed integrand has Psi'(G_{T,T'}(y)) where the derivative of Eq. 4 has "
                                       "Psi'(G_{T',T}(y)); they agree for one view or an invariant f")]


__all__ += ["eq6_claims"]
