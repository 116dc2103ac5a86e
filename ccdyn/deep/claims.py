"""Table 4 / Table 6 of *Understanding Self-supervised Learning with Dual Deep Networks* beside ours,
and the three trends of App. D.1 as computed verdicts (``ccdyn.verdicts.verdict``); :func:`trend_claims`
turns them into ledger records (``ccdyn.verdicts.claim_record``).

:data:`PAPER_TABLE6` holds the paper's published numbers (mean, std over 10 trials), typed in as the
reference; Table 4 is its z_0 block without "after epoch 1". :func:`table6_cells` pairs them with
the rows of :func:`ccdyn.deep.studies.hltm_grid.table6_rows`; :func:`comparison` gives the mean |diff| and
the Pearson correlation of the means. The trend checks take a {(latent, delta, width, phase): mean}
table, so they run on our numbers and on the paper's alike (the paper's own table is the check's
calibration):

1. top latents are harder: NC at the root is below NC at the bottom latent (z_s0111) in every
   (delta, width, phase) cell, and the mean NC over cells rises level by level from the root down;
2. NC is non-trivial at initialization (every init mean > ``floor``) and, at init, rises level by
   level from the root down;
3. over-parameterization helps and speeds learning: |N_mu| = 10 beats 2 at init and converged in
   every (latent, delta) cell, and the gain in epoch 1 is larger at 10 than at 2 on average.
"""

from __future__ import annotations

import numpy as np

from ccdyn import report, verdicts
from ccdyn.data import hltm as tree_data
from ccdyn.deep.appendix_claims import appendix_claims, appendix_forms_claims, thm5_sim_claims
from ccdyn.verdicts import verdict, verdict_word

__all__ = ["PAPER_TABLE6", "paper_means", "table6_cells", "comparison", "check_top_harder", "check_init_nontrivial",
           "check_overparameterization", "check_trends", "verdict_word", "table6_markdown", "trend_claims",
           "table6_claims", "operator_claims", "digits_claims", "grid_verdicts", "trend_reason", "summary_lines",
           "operator_table", "operator_table_key", "digits_table_key", "record_reason"]

_P = PAPER_TABLE6 = {  # latent -> delta_lower -> width -> ((init), (after epoch 1), (converged)), (mean, std)
    "s": {0.7: {2: ((0.35, 0.20), (0.39, 0.20), (0.62, 0.29)), 10: ((0.62, 0.10), (0.82, 0.06), (0.85, 0.05))},
          0.8: {2: ((0.48, 0.23), (0.57, 0.30), (0.72, 0.31)), 10: ((0.75, 0.08), (0.90, 0.03), (0.91, 0.03))},
          0.9: {2: ((0.66, 0.28), (0.73, 0.30), (0.80, 0.29)), 10: ((0.88, 0.05), (0.95, 0.02), (0.96, 0.01))}},
    "s0": {0.7: {2: ((0.52, 0.20), (0.53, 0.20), (0.62, 0.21)), 10: ((0.68, 0.07), (0.83, 0.06), (0.86, 0.05))},
           0.8: {2: ((0.65, 0.19), (0.65, 0.18), (0.70, 0.14)), 10: ((0.79, 0.05), (0.90, 0.03), (0.91, 0.03))},
           0.9: {2: ((0.80, 0.13), (0.81, 0.12), (0.84, 0.09)), 10: ((0.90, 0.02), (0.95, 0.02), (0.96, 0.01))}},
    "s1": {0.7: {2: ((0.45, 0.13), (0.50, 0.20), (0.64, 0.22)), 10: ((0.64, 0.10), (0.78, 0.08), (0.82, 0.06))},
           0.8: {2: ((0.60, 0.16), (0.62, 0.16), (0.79, 0.20)), 10: ((0.76, 0.07), (0.87, 0.04), (0.89, 0.04))},
           0.9: {2: ((0.72, 0.08), (0.78, 0.12), (0.86, 0.09)), 10: ((0.88, 0.04), (0.94, 0.02), (0.95, 0.02))}},
    "s101": {0.7: {2: ((0.66, 0.24), (0.69, 0.24), (0.72, 0.24)), 10: ((0.87, 0.06), (0.90, 0.04), (0.92, 0.04))},
             0.8: {2: ((0.74, 0.25), (0.75, 0.24), (0.77, 0.25)), 10: ((0.91, 0.04), (0.93, 0.03), (0.95, 0.02))},
             0.9: {2: ((0.83, 0.22), (0.84, 0.22), (0.86, 0.22)), 10: ((0.96, 0.02), (0.97, 0.01), (0.97, 0.01))}},
    "s0111": {0.7: {2: ((0.83, 0.19), (0.83, 0.19), (0.84, 0.19)), 10: ((0.93, 0.03), (0.93, 0.03), (0.93, 0.03))},
              0.8: {2: ((0.87, 0.16), (0.88, 0.15), (0.88, 0.15)), 10: ((0.95, 0.02), (0.95, 0.02), (0.96, 0.02))},
              0.9: {2: ((0.93, 0.10), (0.93, 0.10), (0.93, 0.10)), 10: ((0.98, 0.01), (0.98, 0.01), (0.98, 0.01))}},
}
_PHASES = ("init", "epoch1", "converged")


def paper_means() -> dict:
    """{(latent, delta, width, phase): the paper's mean}."""
    return {(lat, d, w, ph): v[k][0] for lat, by_d in _P.items() for d, by_w in by_d.items()
            for w, v in by_w.items() for k, ph in enumerate(_PHASES)}


def table6_cells(rows, reading: str = "paper", depth: int = 5) -> list:
    """[(latent, delta, width, phase, ours (mean, std), paper (mean, std))] for the cells present in both."""
    out = []
    for r in rows:
        if r["reading"] != reading or r["depth"] != depth:
            continue
        d, w = round(float(r["delta_lower"]), 6), int(r["width"])
        paper = _P.get(r["latent"], {}).get(d, {}).get(w)
        if paper is None:
            continue
        for k, ph in enumerate(_PHASES):
            out.append((r["latent"], d, w, ph, (r[ph]["mean"], r[ph]["std"]), paper[k]))
    return out


def comparison(cells) -> dict:
    """n, mean |ours - paper| of the means, Pearson correlation of the means (nan when n < 3)."""
    ours = np.array([c[4][0] for c in cells])
    paper = np.array([c[5][0] for c in cells])
    n = len(cells)
    return {"n": n, "mean_abs_diff": float(np.mean(np.abs(ours - paper))) if n else float("nan"),
            "corr": float(np.corrcoef(ours, paper)[0, 1]) if n >= 3 else float("nan")}


def _axes(table):
    return (sorted({k[0] for k in table}, key=lambda s: len(s)), sorted({k[1] for k in table}),
            sorted({k[2] for k in table}))


def _level_means(table, phases, lats):
    """Mean NC per distance from the root (over latents at that distance, deltas, widths, phases)."""
    by: dict[int, list] = {}
    for (lat, _, _, ph), v in table.items():
        if ph in phases and lat in lats:
            by.setdefault(tree_data.node_depth(tree_data.node_index(lat)), []).append(v)
    return {k: float(np.mean(v)) for k, v in sorted(by.items())}


def check_top_harder(table) -> dict:
    claim = "(1) top latents are less correlated with their nodes than lower latents"
    lats, deltas, widths = _axes(table)
    if "s" not in lats or "s0111" not in lats:
        return verdict(claim, None, {})
    gaps = {f"d{d:g}-w{w}-{ph}": table[("s0111", d, w, ph)] - table[("s", d, w, ph)]
            for d in deltas for w in widths for ph in _PHASES if ("s", d, w, ph) in table}
    levels = _level_means(table, _PHASES, lats)
    parts = {"root below z_s0111 in every cell": min(gaps.values()) > 0,
             "mean NC rises level by level from the root down": bool(np.all(np.diff(list(levels.values())) > 0))}
    return verdict(claim, parts, {"s0111_minus_root": gaps, "mean_nc_by_distance_from_root": levels})


def check_init_nontrivial(table, floor: float = 0.2) -> dict:
    claim = "(2) NC is non-trivial at init and higher in lower layers"
    lats, _, _ = _axes(table)
    init = {k: v for k, v in table.items() if k[3] == "init"}
    if not init:
        return verdict(claim, None, {})
    levels = _level_means(table, ("init",), lats)
    parts = {f"every init NC > {floor:g}": min(init.values()) > floor,
             "init NC rises level by level from the root down": bool(np.all(np.diff(list(levels.values())) > 0))}
    return verdict(claim, parts, {"min_init_nc": min(init.values()), "init_nc_by_distance_from_root": levels})


def check_overparameterization(table) -> dict:
    claim = "(3) |N_mu| = 10 beats 2 at init and converged, and NC grows faster in epoch 1"
    lats, deltas, widths = _axes(table)
    if not {2, 10} <= set(widths):
        return verdict(claim, None, {})
    cells = [(lat, d) for lat in lats for d in deltas if (lat, d, 2, "init") in table and (lat, d, 10, "init") in table]
    diff = {ph: {f"{lat}-d{d:g}": table[(lat, d, 10, ph)] - table[(lat, d, 2, ph)] for lat, d in cells}
            for ph in ("init", "converged")}
    gain = {w: float(np.mean([table[(lat, d, w, "epoch1")] - table[(lat, d, w, "init")] for lat, d in cells]))
            for w in (2, 10)}
    parts = {"10 > 2 at init in every cell": min(diff["init"].values()) > 0,
             "10 > 2 converged in every cell": min(diff["converged"].values()) > 0,
             "mean epoch-1 gain larger at 10 than at 2": gain[10] > gain[2]}
    return verdict(claim, parts, {"w10_minus_w2": diff, "mean_epoch1_gain": gain})


def check_trends(table) -> list:
    """The three App. D.1 trends on one {(latent, delta, width, phase): mean} table."""
    return [check_top_harder(table), check_init_nontrivial(table), check_overparameterization(table)]


def _fmt(v):
    return "—" if v is None else f"{v[0]:.2f} ± {v[1]:.2f}"


def table6_markdown(cells, phases=_PHASES, latents=None) -> str:
    """Ours beside the paper's per (latent, delta_lower, phase), a column pair per width; with
    ``phases=("init", "converged")`` and ``latents=("s",)`` this is Table 4."""
    by = {(c[0], c[1], c[2], c[3]): (c[4], c[5]) for c in cells}
    lats = [lat for lat in _P if latents is None or lat in latents]
    widths = sorted({c[2] for c in cells})
    header = ["latent", "delta_lower", "phase"] + [f"|N_mu|={w} {who}" for w in widths for who in ("ours", "paper")]
    body = []
    for lat in lats:
        for d in sorted({c[1] for c in cells}):
            for ph in phases:
                cols = []
                for w in widths:
                    ours, paper = by.get((lat, d, w, ph), (None, None))
                    cols += [_fmt(ours), _fmt(paper)]
                body.append([f"z_{lat}", f"{d:g}", ph] + cols)
    return report.markdown_table(header, body)


_TRENDS = ("ddn-appD1-top-harder", "ddn-appD1-init-nontrivial", "ddn-appD1-overparameterization")


# What a trend check needs from the grid, said when it has nothing to judge (its verdict "not established").
_NEEDS = {"(1)": "a depth-5 tree (z_s and z_s0111): --depths=5", "(2)": "the init scores of a depth-5 tree: --depths=5",
          "(3)": "both |N_mu| = 2 and 10: --widths=2,10"}


def grid_verdicts(rows, readings) -> dict:
    """{reading: {"comparison": :func:`comparison`, "trends": :func:`check_trends`}} for each reading with
    Table 6 cells among ``rows`` (:func:`ccdyn.deep.studies.hltm_grid.table6_rows`), and
    ``paper_own_table`` (the trends on the paper's own means) when there is one."""
    out = {}
    for reading in readings:
        cells = table6_cells(rows, reading)
        if cells:
            ours = {c[:4]: c[4][0] for c in cells}
            out[reading] = {"comparison": comparison(cells), "trends": check_trends(ours)}
    if out:
        out["paper_own_table"] = {"trends": check_trends(paper_means())}
    return out


def trend_reason(t) -> str:
    """Why a trend verdict is what it is, in one line: the parts that fail, "all parts hold", or what the
    grid lacks when there was nothing to judge."""
    if t["holds"] is None:
        return "nothing to judge: the grid needs " + _NEEDS.get(t["claim"][:3], "the cells the check reads")
    failed = [k for k, ok in t["parts"].items() if not ok]
    return "not: " + "; ".join(failed) if failed else "all parts hold"


def summary_lines(rows, verdicts_by_reading, n_seeds: int) -> list:
    """The lines printed under the HLTM table: per reading, our Table 6 means against the paper's (mean
    |difference|, correlation, cells within 2 s.e. as in :func:`table6_claims`), then each App. D.1 trend
    verdict with its reason on the next line (:func:`trend_reason`)."""
    out = []
    for reading, v in verdicts_by_reading.items():
        if "comparison" in v:
            c = v["comparison"]
            within = table6_claims(table6_cells(rows, reading), reading=reading, n_seeds=n_seeds)[0]
            out += ["", f"{reading} reading against the paper's Table 6 "
                        f"(the NC means of the {c['n']} cells both have):",
                    f"  mean |ours - paper| {c['mean_abs_diff']:.3f}, Pearson correlation {c['corr']:.3f}, "
                    f"{within['numbers']['cells_within_2_se']} cells within 2 standard errors of the difference"]
        who = "the paper's own Table 6" if reading == "paper_own_table" else f"{reading} reading"
        out.append(f"App. D.1 trends on {who}:")
        for t in v["trends"]:
            out += [f"  {t['claim']}: {verdict_word(t)}", f"      why: {trend_reason(t)}"]
    return out


def trend_claims(trends, *, reading: str = "paper", result: str = "results/ddn/table6",
                 command: str = "python scripts/hltm.py --output_dir=results/ddn/table6",
                 check: str = "sampled estimate") -> list:
    """The three App. D.1 trend checks of :func:`check_trends` (``results.json``'s ``trends`` of a reading)
    as ledger records: trends of our means over 10 seeds, a sampled estimate (``check``: "comparison with
    printed numbers" for ``paper_own_table``, the checks on the paper's own Table 6). Readings: docs/ddn.md."""
    return [verdicts.claim_record(f"{cid}-{reading}", "DDN", "App. D.1, Table 6", t["claim"], t, t["numbers"],
                                  check, reading="docs/ddn.md", result=result, command=command)
            for cid, t in zip(_TRENDS, trends)]


def table6_claims(cells, *, reading: str = "paper", n_seeds: int = 10, result: str = "results/ddn/table6",
                  command: str = "python scripts/hltm.py --output_dir=results/ddn/table6",
                  subset: str | None = None) -> list:
    """Tables 4 and 6 against the paper's printed means: a cell agrees when |ours - paper| <= 2 standard
    errors of the difference, sqrt(s_ours^2 / n + s_paper^2 / 10) (``n_seeds`` runs each; the paper's 10
    trials). ``cells``: :func:`table6_cells`. Holds when every cell agrees, partly when some do.
    ``subset``: what part of the table the cells cover when not all of it (the evidence's scope is then a
    special case, with the widest tolerance 2 s.e. in its why)."""
    def agree(c):
        (m, s), (pm, ps) = c[4], c[5]
        return abs(m - pm) <= 2 * np.sqrt(s**2 / n_seeds + ps**2 / 10)

    out = []
    for cid, where, keep in (("ddn-table6", "Table 6 (App. D.1)", lambda c: True),
                             ("ddn-table4", "Table 4", lambda c: c[0] == "s" and c[3] != "epoch1")):
        sel = [c for c in cells if keep(c)]
        ok = [agree(c) for c in sel]
        diff = [c[4][0] - c[5][0] for c in sel]
        numbers = {**comparison(sel), "cells_within_2_se": f"{sum(ok)}/{len(sel)}",
                   "ours_higher": f"{sum(d > 0 for d in diff)}/{len(sel)}",
                   "largest_diff": max(diff, key=abs) if diff else None}
        v = verdict(where, {f"cell {c[0]} d{c[1]:g} w{c[2]} {c[3]}": a for c, a in zip(sel, ok)} or None, numbers)
        ev = None
        if subset and sel:
            widest = max(2 * np.sqrt(c[4][1] ** 2 / n_seeds + c[5][1] ** 2 / 10) for c in sel)
            ev = {"scope": "special case", "why": f"{subset}; a cell agrees within 2 s.e. of the difference, up to "
                                                  f"+-{widest:.2f}, so agreement there is weak evidence"}
        out.append(verdicts.claim_record(f"{cid}-{reading}", "DDN", where, "normalized correlation of each latent with "
                                         "its nodes: our means against the paper's printed means (within 2 s.e.)",
                                         v, numbers, "comparison with printed numbers", reading="docs/ddn.md",
                                         result=result, command=command, evidence=ev))
    return out


def operator_claims(record: dict, *, result: str = "results/ddn/operator",
                    command: str = "python scripts/ddn_operator.py --output_dir=results/ddn/operator",
                    tol: float = 1e-12) -> list:
    """Thm. 3, Cor. 1, Eq. 7 and Thm. 4 from ``operator.json`` rows (``rel``: |autodiff descent - the
    paper's operator expression| / |operator|, exact population): exact (``rel`` < ``tol``) where the paper
    has no residue; for InfoNCE and the soft triplet loss, exact without augmentation and a residue that
    shrinks with sigma_aug."""
    rows = record["rows"]

    def worst(pred):
        return max(r["rel"] for r in rows if pred(r))

    def exact(loss, betas=None):
        w = worst(lambda r: r["loss"] == loss and (betas is None or (r["beta"] in betas)))
        return {f"rel < {tol:g} at every sigma, layer and branch": w < tol}, {"worst_rel": w}

    sigmas = sorted({r["sigma"] for r in rows})
    res = {loss: [worst(lambda r, s=s, loss=loss: r["loss"] == loss and r["sigma"] == s) for s in sigmas]
           for loss in ("nce", "tri")}
    thm4_parts = {f"{loss}: exact without augmentation (rel < {tol:g})": v[0] < tol for loss, v in res.items()}
    thm4_parts.update({f"{loss}: residue shrinks as sigma_aug -> 0": all(a < b for a, b in zip(v, v[1:]))
                       for loss, v in res.items()})
    out = []
    for cid, where, statement, (parts, numbers) in (
            ("ddn-thm3", "Thm. 3", "L_simp's update is the covariance operator OP_l vec W_l (large batch)",
             exact("simp", (0.0,))),
            ("ddn-cor1", "Cor. 1", "L_simp^beta's update is the operator with (1 + beta) on the positive pair",
             exact("simp", tuple(b for b in {r["beta"] for r in rows} if b != 0.0))),
            ("ddn-eq7", "Eq. 7", "the covariance-operator loss L^{tau,exact} has no residue", exact("nce_exact")),
            ("ddn-thm4", "Thm. 4", "InfoNCE and soft-triplet updates are OP_l vec W_l + theta, theta = O(sigma_aug)",
             (thm4_parts, {"sigmas": sigmas, "worst_rel": res}))):
        ev = None
        if cid == "ddn-thm4" and all(r.get("r0", 0.0) == 0.0 for r in rows if r["loss"] == "tri"):
            ev = {"scope": "special case", "why": "the soft-triplet rows use margin r0 = 0, where L_tri is a scaled "
                                                  "InfoNCE (its residues equal InfoNCE's); r0 > 0 is not run"}
        out.append(verdicts.claim_record(cid, "DDN", where, statement, verdict(where, parts, numbers), numbers,
                                         "autodiff", reading="docs/ddn.md", result=result, command=command,
                                         evidence=ev))
    return out


def operator_table(rows) -> tuple:
    """(headers, body) of ``scripts/ddn_operator.py``'s printed table: per (loss, beta, sigma) of
    :func:`ccdyn.deep.operator.residue_study` rows, the largest ``rel`` over layers and branches and
    E tr V_aug f_L."""
    worst: dict[tuple, tuple[float, float]] = {}
    for r in rows:
        k = (r["loss"], r["beta"], r["sigma"])
        worst[k] = max(worst.get(k, (0.0, 0.0))[0], r["rel"]), r["sigma_aug2"]
    return (["loss", "beta", "sigma", "max rel |descent/c - OP vec W|", "E tr V_aug f_L"],
            [[loss, f"{b:g}", f"{s:g}", f"{v:.2e}", f"{a:.2e}"] for (loss, b, s), (v, a) in worst.items()])


def operator_table_key() -> list:
    """The key of :func:`operator_table` (docs/ddn.md)."""
    return report.key_lines(
        "loss: simp = L_simp^beta = (1 + beta) r_+ - r_- (Cor. 1), nce_exact = L^{tau,exact} (Eq. 7), nce = "
        "L_nce^tau and tri = L_tri^tau (Eq. 2, H = 1); beta: of L_simp^beta (0 for the other losses); sigma: the "
        "views' noise, x0 + sigma * noise; max rel |descent/c - OP vec W|: over layers l and branches, "
        "||descent/c - OP_l vec W_l|| / ||OP_l vec W_l||, the descent -dE[L]/dvec(W_l) by autodiff on the exact "
        "population, c = 1 for the first branch (the paper's gradient) and 2 for all branches (tied weights): "
        "rounding (~1e-16) where the paper has no residue (simp, nce_exact, every loss at sigma = 0), the residue "
        "theta of Thm. 4 elsewhere; E tr V_aug f_L: E_x tr V_aug[f_L | x], the augmentation's spread at the output "
        "(sigma_aug^2 of Thm. 4).")


def digits_table_key() -> list:
    """The key of ``scripts/ddn_digits.py``'s table (ccdyn/deep/studies/digits.py)."""
    return report.key_lines(
        "variant: the loss, nce = L_nce^tau (Eq. 2), nce_exact = the covariance-operator loss of Eq. 7 "
        "(stop-gradient weights of Eq. 80), beta-0.5 and beta+0.2 = L_nce with the gradient through r_+ scaled by "
        "1 + beta (our reading of Sec. 4.2); step t: the test accuracy (%) of a ridge linear probe on the frozen "
        "second hidden layer after t Adam steps, mean ± std (ddof 0) over the finite seeds.")


def record_reason(rec: dict) -> str:
    """Why a ledger record's verdict is what it is, in one line (:func:`ccdyn.verdicts.reason`)."""
    return verdicts.reason(rec)


def digits_claims(record: dict, *, result: str = "results/ddn/digits",
                  command: str = "python scripts/ddn_digits.py --output_dir=results/ddn/digits",
                  level: float = 0.05) -> list:
    """Tables 2-3 on the digits analogue (a 64-pixel MLP with a ridge probe, not the paper's ResNet-18):
    paired t tests over seeds of the final probe accuracy. Table 2: L_nce^exact (Eq. 7) is not worse than
    L_nce (not lower at ``level``); Table 3: beta = -0.5 better than L_nce, beta = +0.2 worse (each at
    ``level``, one-sided in the claimed direction)."""
    from scipy import stats as st

    final = {r["variant"]: np.array([a[-1] for a in r["accuracy"]]) for r in record["rows"]}
    base = final["nce"]

    def paired(name):
        d = final[name] - base
        t = st.ttest_rel(final[name], base)
        return d, float(t.pvalue)

    out = []
    family = 1 + sum(n in final for n in ("beta-0.5", "beta+0.2"))
    why = f"{family} paired t tests on the same {len(base)} seeds"
    d, p = paired("nce_exact")
    numbers = {"mean_diff_points": 100 * float(d.mean()), "lower_in": f"{int((d < 0).sum())}/{len(d)}", "paired_p": p}
    out.append(verdicts.claim_record(
        "ddn-table2-digits", "DDN", "Table 2 (digits analogue)", "the covariance-operator loss L_nce^exact (Eq. 7) "
        "trains about as well as L_nce", verdict("Table 2", {f"not lower than L_nce (paired t, p >= {level:g} or "
                                                           "higher)": bool(d.mean() >= 0 or p >= level)}, numbers),
        numbers, "sampled estimate", reading="docs/ddn.md", result=result, command=command,
        note="64-pixel digits MLP, not ResNet-18 on STL-10", evidence={"p_value": p, "family": family, "why": why}))
    for name, sign, text in (("beta-0.5", 1, "beta = -0.5 trains better than L_nce"),
                             ("beta+0.2", -1, "beta = +0.2 trains worse than L_nce")):
        if name not in final:
            continue
        d, p = paired(name)
        numbers = {"mean_diff_points": 100 * float(d.mean()), "paired_p_two_sided": p}
        ok = bool(sign * d.mean() > 0 and p / 2 < level)
        out.append(verdicts.claim_record(
            f"ddn-table3-digits-beta{name[4:]}", "DDN", "Table 3 (digits analogue)", text,
            verdict("Table 3", {f"in that direction at {level:g} (paired t, one-sided)": ok}, numbers), numbers,
            "sampled estimate", reading="docs/ddn.md", result=result, command=command,
            note="64-pixel digits MLP, not ResNet-18 on STL-10 / CIFAR-10",
            evidence={"p_value": p / 2 if sign * d.mean() > 0 else 1 - p / 2, "family": family,
                      "why": why + ", one-sided in the claimed direction"}))
    return out


def thm5_remark_claims(record: dict, *, result: str = "results/ddn/thm5_remark", command: str | None = None) -> list:
    """The remark after Thm. 5 (App. C.4) from ``thm5_remark.run``'s record: (1) the polarity threshold of
    Eq. 130 rounds to the printed 63.3% (to 0.1 point; it is 63.25%); (2) Eq. 128 with the Eq. 124 bounds
    gives the printed range 1099-1467 for some eta (both ends scale with ln(1/eta), so their ratio must
    match to 1%); (3) the probability bound of Eq. 123 (the one Eq. 128 inverts) is below the exact
    probability of the event (1-D quadrature)."""
    command = command or record.get("command") or "python scripts/ddn_thm5.py --overwrite"
    v, cfg = record["values"], record["config"]
    parts = {"rho threshold (Eq. 130) = printed 63.3% to 0.1 point":
             abs(100 * v["polarity_threshold"] - 100 * cfg["paper_threshold"]) <= 0.1,
             "Eq. 128 with the Eq. 124 bounds gives the printed range for some eta (end ratio within 1%)":
             abs(v["ratio_of_range_ends"] / v["paper_ratio_of_range_ends"] - 1.0) <= 0.01,
             "Eq. 123's lower bound <= the exact probability": v["p_lower_bound_eq123"] <= v["p_event_exact"]}
    numbers = {k: v[k] for k in ("polarity_threshold", "eq128_range_per_ln_inv_eta", "eq128_exact_mills",
                                 "eq128_corrected_range", "width_exact_per_ln_inv_eta", "p_event_exact",
                                 "p_lower_bound_eq123", "p_lower_bound_corrected", "ratio_of_range_ends",
                                 "paper_ratio_of_range_ends")}
    judged = verdict("Thm. 5 remark", parts, numbers)
    return [verdicts.claim_record("ddn-thm5-remark", "DDN", "Thm. 5 remark (App. C.4, Eq. 124, 128, 130, 165)",
                                  "rho >= 63.3% gives a gap at c = 9; Eq. 128 with Eq. 124 gives "
                                  "1099 <= |N_mu| <= 1467 at gamma = 0.2", judged, numbers, "closed form",
                                  reading="docs/independent_checks.md#ddn-thm-5-remark", result=result,
                                  command=command)]


__all__ += ["thm5_remark_claims"]


def figures_claims(record: dict, *, result: str = "results/ddn/figures", reading: str = "paper") -> list:
    """Figs. 13-14 ("the norm of the covariance operator indeed goes up") from ``scripts/ddn_figures.py``'s
    medians over seeds of ||OP_mu||_F: per width, does the median at the last epoch exceed the one at
    initialization for every (depth, delta_lower) setting and latent drawn? A curve shared by two panels
    (the reference setting) counts once."""
    import re  # noqa: PLC0415
    curves = {}
    for panel, settings in record["medians"][reading].items():
        for setting, latents in settings.items():
            if setting.startswith("|N_mu|"):
                width = int(setting.split("=")[1])
            else:
                named = re.search(r"\|N_mu\| (\d+)", panel)
                if named is None:
                    raise ValueError(f"figures record: neither setting {setting!r} nor panel {panel!r} names |N_mu|")
                width = int(named.group(1))
            fixed = dict(re.findall(r"(depth L|delta_lower) ([\d.]+)", panel))
            key = setting.split(" = ")
            fixed[key[0]] = key[1]
            label = f"L={fixed.get('depth L')} d={fixed.get('delta_lower')} w={width}"
            for mu, c in latents.items():
                curves[(width, label, mu)] = (c["median"][0], c["median"][-1])
    parts, numbers = {}, {}
    for width in sorted({w for w, _, _ in curves}, reverse=True):
        sel = {f"{lab} {mu}": v for (w, lab, mu), v in curves.items() if w == width}
        up = {k: e > i for k, (i, e) in sel.items()}
        parts[f"|N_mu| = {width}: the median norm ends above its initial value for every setting and latent"] = \
            all(up.values())
        numbers[f"width_{width}"] = {"up": f"{sum(up.values())}/{len(up)}",
                                     "not_up": sorted(k for k, v in up.items() if not v),
                                     "end_over_init_min": min((e / i if i > 0 else float("inf"))
                                                              for i, e in sel.values())}
    return [verdicts.claim_record("ddn-fig13-14", "DDN", "Figs. 13-14 (App. D.1)", "the Frobenius norm of the "
                                  "covariance operator goes up during training (median over seeds)",
                                  verdict("Figs. 13-14", parts, numbers), numbers, "sampled estimate",
                                  reading="docs/ddn.md", result=result, command=record["command"],
                                  note="10 seeds (the paper: 30); depths 5 and 6")]


__all__ += ["figures_claims"]

__all__ += ["appendix_claims", "appendix_forms_claims", "thm5_sim_claims"]  # kept in ccdyn.deep.appendix_claims
