"""The 1-layer part's claims (core paper Sec. 3, App. B.5, and ccdyn's own flow accuracy): study
records in, verdicts out.

Two kinds of output. The verdicts the studies put in their records (and so in the committed results):
:func:`theorem3_verdict` (``theory/thm3``), :func:`rotation_verdict` and :func:`shift_verdict`
(``theory/augmentation``), :func:`exact_2d_check` and :func:`rtol_check` (``basins/flow_exact_2d``,
``basins/flow_rtol``). And the ledger records (:func:`ccdyn.verdicts.claim_record`) of every 1-layer
claim a committed result checks: :func:`fig8_claims`, :func:`patterns_claims`, :func:`fig1_claims`,
:func:`theorem3_claims`, :func:`thm1_claims`, :func:`cor2_claims`, :func:`augmentation_claims`,
:func:`flow_claims`, :func:`thm2_claims`, :func:`kink_claims`, :func:`barrier_ortho_claims`,
:func:`barrier_tau_claims` (kept in :mod:`ccdyn.one_layer.barrier_claims`, re-exported here), each from the
record its study returns
(or its JSON), with the reading of the paper's words that results/README.md states next to the result.
"""

from __future__ import annotations

import math

from ccdyn import verdicts
from ccdyn.one_layer.barrier_claims import barrier_ortho_claims, barrier_tau_claims

__all__ = ["theorem3_verdict", "rotation_verdict", "shift_verdict", "exact_2d_check", "rtol_check",
           "fig8_claims", "patterns_claims", "fig1_claims", "theorem3_claims", "thm1_claims", "cor2_claims",
           "augmentation_claims", "flow_claims", "thm2_claims", "kink_claims", "barrier_ortho_claims",
           "barrier_tau_claims"]


def theorem3_verdict(summary: list) -> str:
    """The one-line verdict on Thm. 3 from the summary rows (``theorem3.SUMMARY_COLUMNS``)."""
    certified = sum(r[3] for r in summary)
    held = sum(r[4] for r in summary)
    word = "untested (no start certified)" if certified == 0 else "holds" if held == certified else "FAILS"
    return (f"Thm. 3 {word}: {held}/{certified} certified starts stayed "
            f"in B_gamma, had c_t increasing at rate gamma and converged; "
            f"{sum(r[6] for r in summary)}/{sum(r[2] - r[3] for r in summary)} uncertified starts "
            f"converged anyway (the condition is sufficient, not necessary)")


def rotation_verdict(config, per_act: dict, ripple: dict) -> str:
    """Holds when, with the whole circle (a = 1), no activation has a prominent maximum left, E is flat
    to ``min_prominence`` and the engine puts no basin mass on a prominent peak. ``config``: the study's
    ``AugmentationConfig`` (its ``min_prominence``, ``n_init`` and ``rotation_views``)."""
    found = {name: next((r for r in d["rows"] if r["a"] == 1.0), None) for name, d in per_act.items()}
    if any(r is None for r in found.values()):
        return "rotation: no verdict (--ranges lacks 1, the whole circle)"
    full = {name: r for name, r in found.items() if r is not None}  # every one of them, as just checked
    none = {name: next((r for r in d["rows"] if r["a"] == 0.0), None) for name, d in per_act.items()}
    holds = all(r["grid"]["n_prominent"] == 0 and r["grid"]["energy_range_rel"] < config.min_prominence
                and r.get("basins", {"peak_mass": 0.0})["peak_mass"] == 0 for r in full.values())
    parts = []
    for name, r in full.items():
        start = none[name]
        before = start["grid"]["n_prominent"] if start else "?"
        text = (f"{name}: {before} -> {r['grid']['n_prominent']} prominent maxima, E flat to "
                f"{r['grid']['energy_range_rel']:.1e} of max|E| without augmentation")
        if ripple[name]["loglog_slope"] is not None and name != "linear":
            text += f" (ripple ~ V^{ripple[name]['loglog_slope']:.1f})"
        if "basins" in r:
            b = r["basins"]
            text += (f"; engine: {b['status_counts']['converged']}/{config.n_init} inits converge, "
                     f"basin mass on prominent peaks {b['peak_mass']:.3f}")
        parts.append(text)
    v = config.rotation_views(1.0)
    return (f"rotation verdict: App. B.5 {'HOLDS' if holds else 'FAILS'} — with the whole circle of rotations "
            f"(C_{v} -> SO(2)) no prominent local maximum is left: " + "; ".join(parts) + ".")


def shift_verdict(records: list, d: int) -> str:
    """Holds when, with the whole group Z_d, every orbit is complete, energies agree within an orbit to
    1e-9 (relative) and no orbit's basin counts reject equal basins (chi-square, Bonferroni over orbits)."""
    group = [r for r in records if 2 * r["max_shift"] + 1 >= d]
    if not group:
        return f"shift: no verdict (--shift_ranges has no r with 2r + 1 >= d = {d})"
    g = group[0]
    multi = [o for o in g["orbits"] if o["size"] > 1]
    level = 0.05 / max(len(multi), 1)
    equal_basins = all(o["chi2_pvalue"] >= level for o in multi)
    holds = (g["n_optima"] > 0 and g["n_complete"] == g["n_orbits"] and g["max_relative_spread"] <= 1e-9
             and equal_basins)
    covered = sum(o["covering"] for o in multi)
    members = sum(o["size"] for o in multi)
    p_text = "n/a" if g["min_chi2_pvalue"] is None else f"{g['min_chi2_pvalue']:.2g}"
    others = "; ".join(f"{r['setting']}: {r['n_complete']}/{r['n_orbits']} orbits complete, {r['n_optima']} optima"
                       for r in records if r is not g)
    return (f"shift verdict: App. B.5 {'HOLDS' if holds else 'FAILS'} for Z_{d} — {g['n_optima']} optima fall into "
            f"{g['n_orbits']} shift orbits of sizes {g['orbit_sizes']}, {g['n_complete']}/{g['n_orbits']} complete "
            f"(size d / #stab), energies equal within an orbit to {g['max_relative_spread']:.1e} (relative); basins "
            f"equal within an orbit: smallest chi-square p {p_text} (Bonferroni level {level:.2g}), "
            f"{covered}/{members} members' 95% Wilson intervals cover their orbit's mean fraction (~95% expected), "
            f"intervals of {sum(o['wilson_overlap'] for o in multi)}/{len(multi)} orbits share a common point; "
            f"{others}.")


def exact_2d_check(table: list, min_fraction: float, n_init: int, method: str, flow_rtol: float) -> dict:
    """The exact 2-D basins check (``flow_accuracy.exact_2d``) from its ``SET_COLUMNS`` rows: holds when
    every set passed (``ok``, the last column)."""
    check = verdicts.verdict(
        f"every 2-D maximum with exact basin >= {min_fraction} is found, fraction within max(0.01, 4 sigma)",
        {f"set {row[0]}": row[-1] for row in table},
        {"sets": len(table), "passed": int(sum(row[-1] for row in table)), "n_init": n_init, "method": method,
         "flow_rtol": f"{flow_rtol:g}"})
    return {"grid": "exact_2d", **check}


def rtol_check(table: list, rtols, min_fraction: float, n_init: int) -> dict:
    """The flow_rtol pairs check (``flow_accuracy.rtol_pairs``) from its ``PAIR_COLUMNS`` rows: a pair holds
    when no optimum's fractions fall outside each other's 95% intervals (``ok``, the last column)."""
    check = verdicts.verdict(f"basin fractions (>= {min_fraction}) at flow_rtol r and r/10 agree within their "
                             "95% intervals", {f"rtol {row[0]:g} vs {row[1]:g}": row[-1] for row in table},
                             {"rtols": list(rtols), "n_init": n_init})
    return {"grid": "rtol_pairs", **check}


# --- ledger records ------------------------------------------------------------------------------------
# ``command``: the one given, else the run record's (a record read back from its JSON), else the default.


def _command(record: dict, command, default: str) -> str:
    return command or record.get("command") or default


def fig8_claims(record: dict, *, result: str = "results/landscape", command: str | None = None,
                relu_at_least: int = 8) -> list:
    """Fig. 8 (App. E.1): on the nine circle points ReLU has many local maxima (at least ``relu_at_least``,
    the paper's figure) and linear only the two PCA maxima +-phi_1. ``record``: ``landscape_fig8.run``'s
    record (or ``landscape.json``): maxima on a dense grid, refined."""
    command = _command(record, command, "python scripts/landscape.py --overwrite")
    n = {name: a["n_local_maxima"] for name, a in record["activations"].items()}
    parts = {}
    if "relu" in n:
        parts[f"ReLU: >= {relu_at_least} local maxima"] = n["relu"] >= relu_at_least
    if "linear" in n:
        parts["linear: exactly 2 (the PCA maxima)"] = n["linear"] == 2
    v = verdicts.verdict("Fig. 8", parts or None, n)
    return [verdicts.claim_record("core-fig8", "core", "Fig. 8 (App. E.1)", "ReLU has many local maxima of E on "
                                  "the circle, linear only the two PCA directions", v, {"n_local_maxima": n},
                                  "enumeration", result=result, command=command)]


def patterns_claims(summaries: dict, *, m: int = 10, min_cos: float = 0.999, result: str = "results/basins",
                    command: str | None = None) -> list:
    """Sec. 3's headline on the default model (latent summation, d = M = ``m``): with ReLU and LeakyReLU
    every planted pattern u_m has a stable optimum with cos >= ``min_cos``; linear finds none of them.
    ``summaries``: activation -> a basins run's ``summary.json`` (``relu``, ``leaky_relu``, ``linear``)."""
    command = command or ("python scripts/basins.py --act=<act> --n_init=10000 --output_dir=results/basins/<act> "
                          "--overwrite")
    found = {act: sorted({o["pattern"] for o in s["optima"] if o["stable"] and o["pattern"] is not None
                          and o["overlap"] >= min_cos}) for act, s in summaries.items()}
    parts = {f"{act}: a stable optimum at every u_m (cos >= {min_cos:g})": len(found[act]) == m
             for act in ("relu", "leaky_relu") if act in found}
    if "linear" in found:
        parts[f"linear: none (cos < {min_cos:g})"] = not found["linear"]
    numbers = {act: {"patterns_found": len(f), "n_stable_optima": summaries[act]["n_stable_optima"],
                     "basin_mass_on_patterns": summaries[act]["basin_mass_on_patterns"]} for act, f in found.items()}
    v = verdicts.verdict("patterns", parts or None, numbers)
    return [verdicts.claim_record("core-sec3-patterns", "core", "Sec. 3 (Thm. 3, Fig. 1)",
                                  "ReLU-like activations learn every planted pattern as a stable optimum, linear "
                                  "only the top PCA direction", v, numbers, "sampled estimate", result=result,
                                  command=command)]


def fig1_claims(record: dict, *, result: str = "results/theory/fig1", command: str | None = None,
                small_eps: float = 0.1) -> list:
    """Fig. 1 (right): power iteration from u_m converges to a certified stable optimum next to u_m
    (cos >= 0.999) when ||U^T U - I||_2 <= ``small_eps``; the larger eps are reported, not judged.
    ``record``: ``fig1.run``'s record (or ``power_iteration.json``)."""
    command = _command(record, command, "python scripts/power_iteration.py --overwrite")
    numbers, parts = {}, {}
    for eps, r in record["ortho_eps"].items():
        converged = sum(s is not None for s in r["steps_to_1e-12"])
        stable, n = int(sum(bool(x) for x in r["stable"])), len(r["stable"])
        cos = float(min(r["overlap_with_start"]))
        numbers[eps] = {"converged": converged, "stable": stable, "starts": n, "min_cos": cos}
        if float(eps) <= small_eps:
            parts[f"eps {eps}: every start converges to a stable optimum with cos >= 0.999"] = (
                converged == n and stable == n and cos >= 0.999)
    v = verdicts.verdict("Fig. 1", parts, numbers)
    return [verdicts.claim_record("core-fig1", "core", "Fig. 1 (right), Thm. 3",
                                  f"power iteration from u_m converges linearly to a stable optimum next to u_m "
                                  f"when ||U^T U - I||_2 <= {small_eps:g}", v, numbers,
                                  "simulation against a closed form", result=result, command=command)]


def theorem3_claims(record: dict, *, result: str = "results/theory/thm3", command: str | None = None) -> list:
    """Thm. 3: every start certified by Eq. 11 (sup omega <= gamma on B_gamma) stays in B_gamma, has c_t
    increasing at rate gamma and converges. Not established when no start is certified.
    ``record``: ``theorem3.run``'s record (or ``thm3.json``)."""
    command = _command(record, command, "python scripts/irregularity.py --overwrite")
    starts = record["starts"]
    ok = [s for s in starts if s["gamma_certified"] is not None]
    certified = len(ok)
    held = sum(bool(s["stays_in_ball"] and s["c_monotone"] and s["rate_holds"] and s["converged"]) for s in ok)
    numbers = {"certified": certified, "certified_and_all_claims_hold": held, "uncertified": len(starts) - certified,
               "uncertified_converged": sum(bool(s["converged"]) for s in starts if s["gamma_certified"] is None)}
    v = verdicts.verdict("Thm. 3", {"every certified start: in B_gamma, c_t at rate gamma, converged":
                                    held == certified} if certified else None, numbers)
    return [verdicts.claim_record("core-thm3", "core", "Thm. 3 (Def. 4, Lemma 11)",
                                  "power iteration from a start with sup omega <= gamma on B_gamma stays in B_gamma "
                                  "and converges at rate gamma", v, numbers, "sampled estimate",
                                  result=result, command=command)]


def thm1_claims(record: dict, *, result: str = "results/theory/roughness/table", command: str | None = None) -> list:
    """Thm. 1: an optimum with lambda_gap > rho is stable (finite-difference flow Jacobian). Counts every
    measured optimum where the condition holds; not established when none does.
    ``record``: ``roughness_runs.run``'s record (or ``roughness.json``)."""
    command = _command(record, command, "python scripts/roughness.py (results/README.md, theory/roughness)")
    rows = [o for r in record["runs"].values() for o in r["optima"]]
    covered = [o for o in rows if o["thm1"]]
    stable = sum(bool(o["fd_stable"]) for o in covered)
    numbers = {"optima": len(rows), "with_gap_above_rho": len(covered), "of_those_stable": stable,
               "stable_without_the_condition": sum(bool(o["fd_stable"]) for o in rows if not o["thm1"])}
    v = verdicts.verdict("Thm. 1", {"every optimum with lambda_gap > rho is stable": stable == len(covered)}
                         if covered else None, numbers)
    trivial = sum(o["rho"] == 0 for o in covered)
    numbers["of_those_rho_zero"] = trivial
    ev = {"scope": "by construction", "why": f"the optima are the flow's end points, stable by construction "
          f"({stable + numbers['stable_without_the_condition']} of {len(rows)} stable, with or without the "
          f"condition), so no optimum can contradict the theorem; {trivial} of the {len(covered)} with "
          f"lambda_gap > rho have rho = 0, where the condition is trivial"}
    return [verdicts.claim_record("core-thm1", "core", "Thm. 1 (Sec. 3.2)",
                                  "an optimum whose eigengap exceeds the local roughness rho is stable", v, numbers,
                                  "sampled estimate", result=result, command=command, evidence=ev)]


COR2_SCOPE = {"scope": "special case", "why": "Cor. 2 states r(w*, alpha_g) = z0(alpha_g) r(w*, alpha_u) for "
              "Thm. 2's bound quantity r; this row checks only its consequence that the roughness rho falls "
              "(direction); the size r_g = z0 r_u is checked by neither Cor. 2 row (core-cor2-exact checks "
              "rho_g / rho_u <= z0 for rho, not r)"}


def cor2_claims(record: dict, *, result: str = "results/theory/cor2/roughness", command: str | None = None) -> list:
    """Cor. 2 at the uniform run's optima: Gaussian alpha lowers the roughness rho below uniform alpha's at
    every tau, and more at the smallest tau than at the largest (the direction the corollary states;
    its size is not judged). ``record``: ``roughness_runs.run``'s record with ``compare`` (or the JSON)."""
    command = _command(record, command, "python scripts/roughness.py (results/README.md, theory/cor2)")
    rows = [r for r in record["compare"] if r["alpha"] == "gaussian"]
    ratio = {str(r["tau"]): r["median_rho_ratio_to_uniform"] for r in rows}
    parts = None
    if rows:
        by_tau = sorted(rows, key=lambda r: float(r["tau"]))
        parts = {"rho_gaussian < rho_uniform at every tau": all(r < 1 for r in ratio.values()),
                 "smaller at the smallest tau than at the largest": by_tau[0]["median_rho_ratio_to_uniform"]
                 < by_tau[-1]["median_rho_ratio_to_uniform"]}
    numbers = {"median_rho_ratio_to_uniform": ratio, "median_z0": {str(r["tau"]): r["median_z0"] for r in rows}}
    v = verdicts.verdict("Cor. 2", parts, numbers)
    return [verdicts.claim_record("core-cor2", "core", "Cor. 2", "Gaussian alpha lowers the local roughness rho "
                                  "relative to uniform alpha (direction)", v, numbers, "sampled estimate",
                                  result=result, command=command, evidence=COR2_SCOPE)]



def thm2_claims(record: dict, *, result: str = "results/theory/roughness/table", command: str | None = None) -> list:
    """Thm. 2: rho(w_*) <= C_0^3 vol(C_0) r(w_*, alpha) / pi at every measured optimum where the bound was
    evaluated (``thm2_bound``: continuous data only, r from a k-NN estimate of the density on the plane,
    so a sampled estimate). The note gives how far above rho the bound sits (vacuous when >> 1).
    ``record``: ``roughness_runs.run``'s record (or ``roughness.json``)."""
    command = _command(record, command, "python scripts/roughness.py (results/README.md, theory/roughness)")
    rows = [o for r in record["runs"].values() for o in r["optima"] if o.get("thm2_bound") is not None]
    ratios = [o["thm2_bound"] / o["rho"] for o in rows if o["rho"] > 0]
    numbers = {"optima_with_bound": len(rows), "bound_over_rho_min": min(ratios, default=None),
               "bound_over_rho_max": max(ratios, default=None)}
    v = verdicts.verdict("Thm. 2", {"rho <= bound at every optimum": all(o["rho"] <= o["thm2_bound"] for o in rows)}
                         if rows else None, numbers)
    note = f"vacuous: the bound is {min(ratios):.0f}-{max(ratios):.0f}x the measured rho" if ratios else None
    return [verdicts.claim_record("core-thm2", "core", "Thm. 2 (Sec. 3.2)", "rho(w_*) <= C_0^3 vol(C_0) r(w_*, alpha)"
                                  " / pi for ReLU with bounded inputs and a large batch", v, numbers,
                                  "sampled estimate", result=result, command=command, note=note)]


def kink_claims(record: dict, *, result: str = "results/basins/kink_check", command: str | None = None) -> list:
    """ccdyn's kink certificates (docs/flow.md, Kinks): no optimum the engine labels stable is "not a max"
    under the independent numpy check of :mod:`ccdyn.one_layer.kink_probe` (a rise of the energy at a probe
    radius <= r_geo, the radius within which the kinks' geometry proves a strict maximum, or any rise where
    r_geo = 0). ``record``: ``kink_check.json`` (``sets`` -> ``optima`` with ``stable``, ``probe_rise`` and
    ``judgement``; a record without judgements, from before r_geo, is read by its rule: every rise < 0)."""
    command = _command(record, command, "python scripts/kink_check.py --overwrite")
    stable = [o for s in record["sets"] for o in s["optima"] if o["stable"]]
    rises = [o["probe_rise"] for o in stable]
    numbers = {"sets": len(record["sets"]), "stable_optima": len(rises), "worst_probe_rise": max(rises, default=None)}
    if stable and all("judgement" in o for o in stable):
        judged = [o["judgement"] for o in stable]
        numbers["judgements"] = {j: judged.count(j) for j in dict.fromkeys(judged)}
        test: dict[str, bool] | None = {"no stable-labelled optimum is 'not a max' (probe and r_geo)":
                                        "not a max" not in judged}
    else:
        test = {"every stable-labelled optimum: probe rise < 0": max(rises) < 0} if rises else None
    v = verdicts.verdict("kinks", test, numbers)
    return [verdicts.claim_record("ccdyn-kink-certificates", "ccdyn", "docs/flow.md, Kinks", "every optimum labelled "
                                  "stable on ReLU kinks is a strict local maximum under an independent probe", v,
                                  numbers, "sampled estimate", reading="docs/flow.md", result=result, command=command)]


def _app_b5_word(text: str) -> str:
    return "holds" if " HOLDS " in text else "fails" if " FAILS " in text else "not established"


def augmentation_claims(record: dict, *, result: str = "results/theory/augmentation",
                        command: str | None = None) -> list:
    """App. B.5 (rotation: the whole circle of rotations leaves no prominent maximum; shift: Z_d makes the
    optima complete shift orbits with equal energies and basins), the words of :func:`rotation_verdict`
    and :func:`shift_verdict` with the study's verdict text as the numbers' summary.
    ``record``: ``augmentation.run``'s record (or ``augmentation.json``)."""
    command = _command(record, command, "python scripts/augmentation.py --overwrite")
    rot, shift = record["verdicts"]["rotation"], record["verdicts"]["shift"]
    settings = record["shift"]["settings"]
    by_construction = {"scope": "by construction", "why": "with the whole circle of rotations E is the average of E "
                       "over SO(2), a constant on the circle, so no maximum can be left whatever the data (the "
                       "check measures the discretization ripple, not the claim)"}
    return [verdicts.claim_record("core-appB5-rotation", "core", "App. B.5 (Fig. 8 data)",
                                  "rotation augmentation over the whole circle removes every prominent maximum",
                                  _app_b5_word(rot), {"verdict": rot}, "enumeration", result=result, command=command,
                                  evidence=by_construction),
            verdicts.claim_record("core-appB5-shift", "core", "App. B.5",
                                  "cyclic-shift augmentation (Z_d) ties the optima into complete orbits of equal "
                                  "energy and basin size", _app_b5_word(shift),
                                  {"verdict": shift, "orbits": [s["n_orbits"] for s in settings],
                                   "complete": [s["n_complete"] for s in settings]},
                                  "simulation against a closed form", result=result, command=command)]


def flow_claims(record: dict, *, result: str, command: str | None = None) -> list:
    """ccdyn's flow accuracy (docs/flow.md): the ``check`` of ``flow_accuracy.exact_2d`` (exact 2-D basins
    by enumeration on a fine grid) or ``flow_accuracy.rtol_pairs`` (basins stable under flow_rtol / 10)."""
    command = _command(record, command, "python scripts/flow_accuracy.py (the command in results/README.md)")
    c = record["check"]
    exact = c["grid"] == "exact_2d"
    return [verdicts.claim_record("ccdyn-flow-exact-2d" if exact else "ccdyn-flow-rtol", "ccdyn",
                                  "docs/flow.md, Checks", c["claim"], c, c["numbers"],
                                  "enumeration" if exact else "sampled estimate", reading="docs/flow.md#checks",
                                  result=result, command=command)]


def cor2_exact_claims(record: dict, *, result: str = "results/theory/cor2/exact", command: str | None = None,
                      tol: float = 0.05, tol_vector: float = 0.1) -> list:
    """Cor. 2 with Thm. 2 by a route that does not use the corollary's formula (``cor2_exact.run``'s record
    or ``cor2_exact.json``): on the Gaussian mixture the ReLU roughness with alpha frozen at w is
    rho = E[phi0 h] lambda_max(M) in closed form (:mod:`ccdyn.one_layer.mixture_exact`), so
    rho_g / rho_u = E[phi0 h] / E[h]. A point w counts as resolved by the sample when its uniform-alpha
    first-order vector from the finite differences of Eq. 3 is within ``tol_vector`` (relative) of the
    closed form. Parts: at every resolved point and tau the exact ratio agrees with the sampled one
    (relative difference <= ``tol``); Gaussian alpha lowers rho at every point and tau; and by at least
    the factor z0 that Cor. 2 gives for r (rho_g / rho_u <= z0). The numbers also show how far the exact
    factor is from z0: Cor. 2's r_g = z0 r_u is a ratio of upper bounds, not of roughness."""
    command = _command(record, command, "python scripts/cor2_exact.py --overwrite")
    rows = record["rows"]
    base = {r["w"]: r for r in rows if r["alpha"] == "uniform"}
    gauss = [r for r in rows if r["alpha"] == "gaussian"]
    resolved = sorted(w for w, r in base.items() if r["rel_err_vector"] <= tol_vector)
    diff = {f"{r['w']} tau={r['tau']:g}": abs(r["ratio_sampled"] / r["ratio_exact"] - 1.0) for r in gauss}
    judged = [abs(r["ratio_sampled"] / r["ratio_exact"] - 1.0) for r in gauss if r["w"] in resolved]
    numbers = {"points": sorted(base), "resolved": resolved, "taus": sorted({r["tau"] for r in gauss}),
               "max_ratio_rel_diff_resolved": max(judged, default=None), "ratio_rel_diff": diff,
               "rel_err_vector_uniform": {w: r["rel_err_vector"] for w, r in base.items()},
               "ratio_exact_over_z0": {f"{r['w']} tau={r['tau']:g}": r["ratio_exact"] / r["z0"] for r in gauss}}
    parts = {f"closed-form rho_g / rho_u = sampled Eq. 3 finite-difference ratio at resolved points (within {tol:g})":
             bool(judged) and max(judged) <= tol,
             "rho_gaussian < rho_uniform at every w and tau":
             bool(gauss) and all(r["rho_exact"] < base[r["w"]]["rho_exact"] for r in gauss),
             "rho_gaussian / rho_uniform <= z0 at every w and tau":
             bool(gauss) and all(r["ratio_exact"] <= r["z0"] + 1e-12 for r in gauss)}
    v = verdicts.verdict("Cor. 2 (exact)", parts, numbers)
    ev = dict(COR2_SCOPE, why="Cor. 2 states r(w*, alpha_g) = z0(alpha_g) r(w*, alpha_u) for Thm. 2's bound "
              "quantity r; this row checks the roughness rho itself (rho_g / rho_u = E[phi0 h] / E[h] <= z0), "
              "the corollary's consequence, not the equality r_g = z0 r_u, which no row checks")
    return [verdicts.claim_record("core-cor2-exact", "core", "Cor. 2 with Thm. 2 (Eq. 93-100)",
                                  "Gaussian alpha lowers the ReLU local roughness by at least z0(alpha_g) relative "
                                  "to uniform alpha (exact factor E[phi0 h] / E[h])", v, numbers, "closed form",
                                  reading="docs/independent_checks.md#cor-2", result=result, command=command,
                                  evidence=ev)]


def theorem3_exact_claims(record: dict, *, result: str = "results/theory/thm3_exact",
                          command: str | None = None) -> list:
    """Thm. 3 with L, kappa and sup omega exact on the activation regions (``theorem3_exact.run``'s record or
    ``thm3_exact.json``): every start that Eq. 11 certifies exactly stays in B_gamma, has c_t increasing at
    rate gamma and converges (not established when none is certified). The numbers also count the starts
    the sampled certificate (64 points) certifies although a data hyperplane crosses its cap, where A jumps
    and no finite L exists: those sampled certificates are not proofs."""
    command = _command(record, command, "python scripts/thm3_exact.py --overwrite")
    starts = record["starts"]
    ok = [s for s in starts if s["gamma_exact"] is not None]
    held = sum(bool(s["stays_in_ball"] and s["c_monotone"] and s["rate_holds"] and s["converged"]) for s in ok)
    numbers = {"starts": len(starts), "certified_exact": len(ok), "exact_and_all_claims_hold": held,
               "certified_sampled": sum(s["gamma_sampled"] is not None for s in starts),
               "sampled_certified_with_planes_in_cap": sum(s.get("planes_in_sampled_cap", 0) > 0 for s in starts),
               "largest_exact_cap_deg": max((s["cap_deg_exact"] for s in ok), default=None),
               "uncertified_converged": sum(bool(s["converged"]) for s in starts if s["gamma_exact"] is None)}
    v = verdicts.verdict("Thm. 3 (exact)", {"every exactly certified start: in B_gamma, c_t at rate gamma, "
                                            "converged": held == len(ok)} if ok else None, numbers)
    ev = {"scope": "special case", "why": "the exact certificate exists only where no data hyperplane crosses "
          "the cap B_gamma, so A(w) is constant on it (the caps are at most "
          f"{numbers['largest_exact_cap_deg'] or 0:.1f} deg); Thm. 3 is stated for any A(w) with a Lipschitz "
          "constant L, and where A varies on the cap the theorem is not exercised"}
    return [verdicts.claim_record("core-thm3-exact", "core", "Thm. 3 (Def. 4, Eq. 10-11, Lemma 11)",
                                  "power iteration from a start with sup omega <= gamma on B_gamma stays in B_gamma "
                                  "and converges at rate gamma (L, kappa, sup omega exact on ReLU activation regions)",
                                  v, numbers, "closed form", reading="docs/independent_checks.md#thm-3",
                                  result=result, command=command, evidence=ev)]



def kernel_lemmas_claims(record: dict, *, result: str = "results/theory/kernel_lemmas", command: str | None = None,
                         alpha_tol: float = 1e-12, eq4_tol: float = 1e-12, min_fall: float = 2.0) -> list:
    """Lemma 1 and Lemma 2's variance-sum form (Eq. 4) for Gaussian alpha (``kernel_lemmas.run``'s record or
    ``kernel_lemmas.json``). Lemma 1: at the largest degree the features are >= 0 and phi phi^T equals
    alpha to ``alpha_tol`` at every tau. Eq. 4: the kernel sum equals the exact-population pairwise form
    to ``eq4_tol`` (relative), and the batch C_alpha of Eq. 3 approaches it: its mean relative error falls
    by at least ``min_fall`` from the smallest to the largest batch (1/sqrt N predicts 4 for 64 -> 1024)."""
    command = _command(record, command, "python scripts/kernel_lemmas.py --overwrite")
    rows, batch = record["rows"], record["batch_rows"]
    taus = sorted({r[0] for r in rows})
    last = {t: max((r for r in rows if r[0] == t), key=lambda r: r[1]) for t in taus}
    fall = {}
    for t in taus:
        b = sorted((r for r in batch if r[0] == t), key=lambda r: r[1])
        fall[t] = b[0][2] / b[-1][2] if len(b) > 1 and b[-1][2] > 0 else None
    n1 = {"max_abs_alpha_err": {str(t): last[t][3] for t in taus}, "min_phi": {str(t): last[t][4] for t in taus},
          "degree": {str(t): last[t][1] for t in taus}}
    v1 = verdicts.verdict("Lemma 1", {f"phi >= 0 and phi phi^T = alpha to {alpha_tol:g} at every tau":
                                      bool(taus) and all(last[t][4] >= 0 and last[t][3] <= alpha_tol
                                                         for t in taus)}, n1)
    n2 = {"eq4_rel_diff": {str(t): last[t][5] for t in taus},
          "batch_mean_rel_err": {f"{r[0]:g} N={r[1]}": r[2] for r in batch},
          "fall_smallest_to_largest_N": {str(t): fall[t] for t in taus}}
    v2 = verdicts.verdict("Lemma 2 (Eq. 4)", {
        f"kernel sum = population pairwise form (rel. {eq4_tol:g})": bool(taus) and all(last[t][5] <= eq4_tol
                                                                                       for t in taus),
        f"batch Eq. 3 error falls >= {min_fall:g}x from the smallest to the largest N":
        bool(taus) and all(f is not None and f >= min_fall for f in (fall[t] for t in taus))}, n2)
    return [verdicts.claim_record("core-lemma1", "core", "Lemma 1 (Def. 1)", "Gaussian alpha of a function bounded "
                                  "below has kernel structure with non-negative features", v1, n1, "closed form",
                                  result=result, command=command),
            verdicts.claim_record("core-lemma2-kernel", "core", "Lemma 2 (Eq. 4), Cor. 1",
                                  "with kernel alpha, C_alpha -> sum_l z_l^2 V_{p~_l}[E_aug g] as N grows", v2, n2,
                                  "simulation against a closed form", result=result, command=command)]


__all__ += ["cor2_exact_claims", "theorem3_exact_claims", "kernel_lemmas_claims"]


def appE1_orthogonal_claims(record: dict, *, result: str = "results/landscape", command: str | None = None,
                            tol: float = 1e-6) -> list:
    """App. E.1 (Fig. 8): "unlike PCA directions, these local optima are not orthogonal to each other". Nine
    directions in R^2 cannot be mutually orthogonal, so the statement's content is read pairwise: no two
    ReLU maxima are orthogonal (|cos(theta_i - theta_j)| > ``tol``), by enumeration of every pair of the
    maxima the dense grid found and refined (``landscape.json``); linear's two maxima +-phi_1 are reported.
    The numbers give the pair nearest to orthogonal."""
    command = _command(record, command, "python scripts/landscape.py --overwrite")

    theta = record["activations"]["relu"]["maxima_theta"]
    pairs = [(i, j, abs(math.cos(theta[i] - theta[j]))) for i in range(len(theta)) for j in range(i + 1, len(theta))]
    i, j, low = min(pairs, key=lambda t: t[2]) if pairs else (None, None, None)
    numbers = {"relu_maxima": len(theta), "pairs": len(pairs), "orthogonal_pairs": sum(c <= tol for *_, c in pairs),
               "min_abs_cos": low,
               "nearest_pair_theta_over_pi": [theta[i] / math.pi, theta[j] / math.pi] if pairs else None}
    v = verdicts.verdict("App. E.1", {f"no pair of ReLU maxima orthogonal (|cos| > {tol:g})":
                                      numbers["orthogonal_pairs"] == 0} if len(pairs) else None, numbers)
    return [verdicts.claim_record("core-appE1-not-orthogonal", "core", "App. E.1 (Fig. 8)",
                                  "unlike PCA directions, the ReLU local maxima are not orthogonal to each other",
                                  v, numbers, "enumeration", result=result, command=command)]


__all__ += ["appE1_orthogonal_claims"]
