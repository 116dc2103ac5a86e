"""The paper's Sec. 5 claims about Fig. 4, 9, 10, 11 and Table 1 as numeric checks on result rows.

A row is one entry of ``results.json["rows"]`` written by ``scripts/two_layer.py``
(:func:`ccdyn.two_layer.studies.token_grid.run_setting` aggregated per grid point). Each check returns
{"claim", "parts" (sub-claim -> bool), "holds" (all parts; None when the rows lack the cells),
"numbers" (what was compared)}. Differences smaller than ``margin`` count as "no difference".

:func:`check_grids` applies the checks to the finished grids of ``results/two_layer`` (which check
on which grid), :func:`claims_markdown` / :func:`claims_table` (from :mod:`ccdyn.verdicts`, re-exported
here with :func:`verdict` and :func:`verdict_word`) render the verdicts and
:func:`summary_markdown` tabulates every grid. :func:`table1_cells` puts our Table 1 next to the
paper's (:data:`PAPER_TABLE1`), rendered by :func:`table1_markdown` and :func:`table1_csv`.

App. E.3 (:mod:`ccdyn.two_layer.studies.mnist`): :func:`mnist_claims` judges the paper's claim that filters
learned with augmentation are smoother (Fig. 13, weaker high frequencies), and issue #15's reading that
they are more diverse, on per-seed paired differences (augmentation minus none) with a Student t interval
over seeds; :func:`mnist_scores_csv`, :func:`mnist_summary_table` and :func:`mnist_summary` give the per-seed
CSV, the summary table and the JSON record.

Ledger records (:func:`ccdyn.verdicts.claim_record`): :func:`grid_claims` (the checks of
:func:`check_grids`), :func:`mnist_ledger` and :func:`modulation_claims` (the verdicts of
:mod:`ccdyn.two_layer.studies.modulation`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ccdyn import report, stats, verdicts
from ccdyn.two_layer.appendix_claims import appendix_forms_claims
from ccdyn.verdicts import claims_markdown, claims_table, verdict, verdict_word

__all__ = ["verdict", "verdict_word", "check_p1", "check_relu_beats_linear", "check_infonce_beats_quadratic",
           "check_relu_lowest_chi_minus", "grid_csv", "lowest_chi_minus_evidence", "check_bn_helps",
           "check_bn_no_difference",
           "check_sigma_backprop_hurts",
           "check_grids",
           "claims_table", "claims_markdown", "grid_table", "summary_markdown", "TABLE1_VARIANTS", "PAPER_TABLE1",
           "table1_cells", "table1_table", "table1_markdown", "table1_csv",
           "check_more_steps", "steps_markdown", "mnist_claims", "mnist_scores_csv",
           "mnist_summary_table", "mnist_summary_key", "mnist_summary", "grid_claims", "mnist_ledger",
           "modulation_bounds_claims", "lemma5_general_claims", "top_layer_claims",
           "modulation_claims", "CONDITIONS", "eq15_verdict", "fig7_verdict", "eq155_verdict", "thm6_verdict",
           "cor3_verdict", "modulation_verdicts", "EQ15_TOLERANCE", "FIG7_TOLERANCE", "EQ155_ALPHA"]

CONDITIONS = ("no_aug", "aug")  # the paired App. E.3 runs (ccdyn.two_layer.studies.mnist): without / with crops


def _table(rows, score="chi_plus"):
    return {(r["loss"], r["act"], r["bn"], float(r["zeta"]), r["n_candidates"], r["beta"]): r[score]["mean"]
            for r in rows}


def _get(t, loss="infonce", act="relu", bn="none", zeta=1.0, p=1, beta=1):
    return t.get((loss, act, bn, float(zeta), p, beta), float("nan"))


def _axes(rows):
    return sorted({r["beta"] for r in rows}), sorted({r["n_candidates"] for r in rows})


def check_p1(rows, loss="infonce", bn="none", zeta=1.0, margin=0.05):
    """P = 1: linear works well regardless of beta, ReLU needs large beta (Fig. 4, 9a).

    Parts: linear's chi_+ varies by less than ``margin`` over beta; linear beats ReLU by more than
    ``margin`` at the smallest beta; ReLU's chi_+ grows by more than ``margin`` from the smallest to the
    largest beta.
    """
    claim = "P=1: linear good at every beta, ReLU needs large beta"
    betas, _ = _axes(rows)
    t = _table(rows)
    lin = [_get(t, loss, "linear", bn, zeta, 1, b) for b in betas]
    relu = [_get(t, loss, "relu", bn, zeta, 1, b) for b in betas]
    if not np.all(np.isfinite(lin + relu)) or len(betas) < 2:
        return verdict(claim, None, {})
    parts = {"linear flat over beta": max(lin) - min(lin) < margin,
             "linear > ReLU at beta=1": lin[0] > relu[0] + margin,
             "ReLU improves with beta": relu[-1] - relu[0] > margin}
    return verdict(claim, parts, {"betas": betas, "linear": lin, "relu": relu})


def check_relu_beats_linear(rows, loss="infonce", bn="none", zeta=1.0, margin=0.05):
    """P > 1, beta > 1: ReLU beats linear and improves with beta; linear is much less affected (Fig. 4, 9b).

    Parts: ReLU > linear in every cell with P > 1 and beta > 1; ReLU's chi_+ at the largest beta exceeds
    that at the smallest by more than ``margin`` at every P > 1; and linear's change over the same range
    is smaller in size than ReLU's gain at every P > 1.
    """
    claim = "P>1, beta>1: ReLU > linear, ReLU improves with beta, linear much less affected"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p > 1 and b > 1]
    diffs = [_get(t, loss, "relu", bn, zeta, p, b) - _get(t, loss, "linear", bn, zeta, p, b) for p, b in cells]
    gains = {p: _get(t, loss, "relu", bn, zeta, p, betas[-1]) - _get(t, loss, "relu", bn, zeta, p, betas[0])
             for p in ps if p > 1}
    lin_gain = {p: _get(t, loss, "linear", bn, zeta, p, betas[-1]) - _get(t, loss, "linear", bn, zeta, p, betas[0])
                for p in ps if p > 1}
    if not cells or not np.all(np.isfinite(diffs)):
        return verdict(claim, None, {})
    parts = {"ReLU > linear in every cell": min(diffs) > 0,
             "ReLU improves with beta at every P>1": min(gains.values()) > margin,
             "linear's change over beta smaller than ReLU's gain at every P>1":
                 all(abs(lin_gain[p]) < gains[p] for p in gains)}
    return verdict(claim, parts,
                    {"relu_minus_linear_min": min(diffs), "relu_minus_linear_mean": float(np.mean(diffs)),
                     "relu_wins": f"{sum(d > 0 for d in diffs)}/{len(diffs)}",
                     "relu_gain_beta_max_vs_min": gains, "linear_change_beta_max_vs_min": lin_gain})


def check_infonce_beats_quadratic(rows, bn="none", zeta=1.0):
    """InfoNCE gives a higher chi_+ than the quadratic loss (Fig. 10), per activation, over all cells."""
    t = _table(rows)
    acts = sorted({r["act"] for r in rows})
    betas, ps = _axes(rows)
    per_act: dict[str, dict] = {}
    for a in acts:
        d = [_get(t, "infonce", a, bn, zeta, p, b) - _get(t, "quadratic", a, bn, zeta, p, b) for p in ps for b in betas]
        d = [x for x in d if np.isfinite(x)]
        if d:
            per_act[a] = {"mean_diff": float(np.mean(d)), "infonce_wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
    if not per_act:
        return verdict("InfoNCE beats the quadratic loss", None, {})
    return verdict("InfoNCE beats the quadratic loss",
                    {f"{a}: mean chi_+ higher with InfoNCE": v["mean_diff"] > 0 for a, v in per_act.items()}, per_act)


def check_relu_lowest_chi_minus(rows, loss="infonce", bn="none", zeta=1.0):
    """ReLU has the lowest chi_bar_- of all activations (Fig. 9)."""
    t = _table(rows, "chi_minus")
    acts = sorted({r["act"] for r in rows if r["loss"] == loss})
    betas, ps = _axes(rows)
    if "relu" not in acts or len(acts) < 2:
        return verdict("ReLU has the lowest chi_-", None, {})
    means = {a: stats.finite_mean([_get(t, loss, a, bn, zeta, p, b) for p in ps for b in betas]) for a in acts}
    if not all(np.isfinite(list(means.values()))):  # an activation without a finite cell: nothing to compare
        return verdict("ReLU has the lowest chi_-", None, {"mean_chi_minus": means})
    wins = sum(min(acts, key=lambda a: _get(t, loss, a, bn, zeta, p, b)) == "relu" for p in ps for b in betas)
    parts = {"ReLU lowest mean chi_-": min(means, key=means.__getitem__) == "relu"}
    if "linear" in means and len(acts) > 2:
        parts["ReLU below linear"] = means["relu"] < means["linear"]
    return verdict("ReLU has the lowest chi_-", parts,
                    {"mean_chi_minus": means, "relu_lowest_in_cells": f"{wins}/{len(ps) * len(betas)}"})


def check_bn_helps(rows, zeta=10.0, loss="infonce", act="relu", bn="mean_only", min_beta=5, min_p=5):
    """At large non-uniformity, BN raises chi_+ for large beta and P (Fig. 11)."""
    claim = f"zeta={zeta:g}: BN ({bn}) helps at beta>={min_beta}, P>={min_p}"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p >= min_p and b >= min_beta]
    diffs = [_get(t, loss, act, bn, zeta, p, b) - _get(t, loss, act, "none", zeta, p, b) for p, b in cells]
    allc = [_get(t, loss, act, bn, zeta, p, b) - _get(t, loss, act, "none", zeta, p, b) for p in ps for b in betas]
    if not cells or not np.all(np.isfinite(diffs)):
        return verdict(claim, None, {})
    return verdict(claim, {"BN higher chi_+ in every such cell": min(diffs) > 0},
                    {"bn_minus_none": dict(zip([f"P{p}-beta{b}" for p, b in cells], diffs)),
                     "mean_over_all_cells": stats.finite_mean(allc)})


def check_bn_no_difference(rows, zeta=2.0, loss="infonce", act="relu", bn="mean_only", margin=0.05):
    """At small non-uniformity, "BN doesn't help much" (Fig. 11's caption, top row): chi_+ with BN exceeds
    chi_+ without by less than ``margin`` in every (P, beta) cell (one-sided: where BN is lower, it did
    not help either; the largest drop is reported)."""
    claim = f"zeta={zeta:g}: BN ({bn}) does not help much (gain < {margin:g} in every cell)"
    betas, ps = _axes(rows)
    t = _table(rows)
    diffs = {f"P{p}-beta{b}": _get(t, loss, act, bn, zeta, p, b) - _get(t, loss, act, "none", zeta, p, b)
             for p in ps for b in betas}
    if not diffs or not np.all(np.isfinite(list(diffs.values()))):
        return verdict(claim, None, {})
    gain, drop = max(diffs.items(), key=lambda kv: kv[1]), min(diffs.items(), key=lambda kv: kv[1])
    return verdict(claim, {f"BN - none < {margin:g} in every cell": gain[1] < margin},
                   {"largest_gain": {gain[0]: gain[1]}, "largest_drop": {drop[0]: drop[1]},
                    "mean_over_all_cells": float(np.mean(list(diffs.values()))), "cells": len(diffs)})


def check_sigma_backprop_hurts(rows, zeta=10.0, loss="infonce", act="relu", max_beta=2, min_p=3):
    """Table 1: backpropagating sigma hurts at small beta and P >= 3 (with or without mu backprop)."""
    claim = "Table 1: sigma backprop hurts at beta<=2, P>=3"
    betas, ps = _axes(rows)
    t = _table(rows)
    cells = [(p, b) for p in ps for b in betas if p >= min_p and b <= max_beta]
    pairs = {"mu not backpropagated": ("none_backprop", "var_only"), "mu backpropagated": ("mean_only", "vanilla")}
    out, parts = {}, {}
    for name, (no_sig, sig) in pairs.items():
        d = [_get(t, loss, act, no_sig, zeta, p, b) - _get(t, loss, act, sig, zeta, p, b) for p, b in cells]
        if not cells or not np.all(np.isfinite(d)):
            return verdict(claim, None, {})
        out[name] = {"no_sigma_minus_sigma": dict(zip([f"P{p}-beta{b}" for p, b in cells], d)),
                     "wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
        parts[f"{name}: sigma backprop lower in every cell"] = min(d) > 0
    return verdict(claim, parts, out)


def _train_cfg(res) -> str:
    c = res["config"]["train"]
    return f"lr={c['lr']:g} tau={c['tau']:g}"


def _quadratic_form(res) -> str:
    """The quadratic-loss reading of a grid (grids made before the option have ``limit``)."""
    return res["config"]["train"].get("quadratic_form", "limit")


def check_grids(grids: dict, margin: float = 0.05) -> list:
    """The claims checked on the finished grids of ``results/two_layer``.

    Args:
      grids: grid name (its directory relative to the root, ``/``-separated: ``fig4_infonce``,
        ``sensitivity/lr0.02_bn-none_tau0.1``, ...) -> its ``results.json``; missing grids are skipped.
      margin: differences below it count as none.

    Returns:
      [{"grid", "claim", "holds", "parts", "numbers"}] for the checks whose cells were present: Fig. 4/9
      and Fig. 10 (P = 1, ReLU vs linear, lowest chi_-), InfoNCE vs quadratic, Table 1 (sigma backprop),
      Fig. 11 (BN does not help much at zeta = 2, helps at zeta = 5, 10) and the same checks on every
      ``sensitivity/*`` grid.
    """
    results, m = [], margin

    def rows(name):
        return grids[name]["rows"] if name in grids else None

    def add(where, verdict):
        if verdict["holds"] is not None:
            results.append({"grid": where, **verdict})

    fig4, fig10, table1, fig11 = rows("fig4_infonce"), rows("fig10_quadratic"), rows("table1"), rows("fig11")
    if fig4:
        where = f"fig4_infonce ({_train_cfg(grids['fig4_infonce'])})"
        add(where, check_p1(fig4, margin=m))
        add(where, check_relu_beats_linear(fig4, margin=m))
        add(where, check_relu_lowest_chi_minus(fig4))
    if fig10:
        add("fig10_quadratic", check_p1(fig10, loss="quadratic", margin=m))
        add("fig10_quadratic", check_relu_beats_linear(fig10, loss="quadratic", margin=m))
        add("fig10_quadratic", check_relu_lowest_chi_minus(fig10, loss="quadratic"))
    if fig4 and fig10:
        add("fig4_infonce + fig10_quadratic", check_infonce_beats_quadratic(fig4 + fig10))
    if table1:
        add("table1 (zeta=10)", check_sigma_backprop_hurts(table1))
    if rows("table1_lr0.02"):
        add("table1_lr0.02 (zeta=10)", check_sigma_backprop_hurts(rows("table1_lr0.02")))
    # Fig. 11's caption: "for small non-uniformity, BN doesn't help much" (zeta = 2), "for larger
    # non-uniformity, BN yields better chi_+ ... (large beta) and ... (large P)" (zeta = 5, 10).
    add("fig11 (zeta=2)", check_bn_no_difference((fig11 or []) + (table1 or []), zeta=2.0, margin=m))
    for zeta in (5.0, 10.0):
        add(f"fig11 (zeta={zeta:g})", check_bn_helps((fig11 or []) + (table1 or []), zeta=zeta))
    infonce_by_bn: dict[tuple, list] = {}
    for name in sorted(g for g in grids if g.count("/") == 1 and g.startswith("sensitivity/")):
        grid_rows, where, cfg = rows(name), name, _train_cfg(grids[name])
        if not grid_rows:
            continue
        loss, bn = grid_rows[0]["loss"], grid_rows[0]["bn"]
        if loss == "infonce":
            add(where, check_p1(grid_rows, bn=bn, margin=m))
            add(where, check_relu_beats_linear(grid_rows, bn=bn, margin=m))
            add(where, check_relu_lowest_chi_minus(grid_rows, bn=bn))
            if "tau0.1" in name.split("/")[1]:
                infonce_by_bn.setdefault((cfg.split()[0], bn), grid_rows)
            continue
        form = _quadratic_form(grids[name])  # the Fig. 10 claims, then InfoNCE against this grid
        add(f"{where} ({form})", check_p1(grid_rows, loss="quadratic", bn=bn, margin=m))
        add(f"{where} ({form})", check_relu_beats_linear(grid_rows, loss="quadratic", bn=bn, margin=m))
        add(f"{where} ({form})", check_relu_lowest_chi_minus(grid_rows, loss="quadratic", bn=bn))
        nce = infonce_by_bn.get((cfg.split()[0], bn))
        if nce is None and fig4 and bn == "none" and cfg.startswith("lr=0.002"):
            nce = fig4
        if nce:
            acts = {q["act"] for q in grid_rows}
            add(f"{where} vs infonce", check_infonce_beats_quadratic([r for r in nce if r["act"] in acts] + grid_rows,
                                                                     bn=bn))
        if fig4 and bn == "none" and cfg.startswith("lr=0.02 ") and form == "limit":
            # InfoNCE's gradient carries 1/tau = 10x the scale of the quadratic loss's (see
            # ccdyn.two_layer): InfoNCE at lr 2e-3 against quadratic at lr 2e-2 matches the step size.
            acts = {q["act"] for q in grid_rows}
            add(f"{where} vs fig4_infonce (lr 0.002: matched step)",
                check_infonce_beats_quadratic([r for r in fig4 if r["act"] in acts] + grid_rows))
    return results


def grid_table(rows) -> str:
    """A grid as a markdown table: a row per (loss, act, bn, zeta, P), a column per beta; each cell
    chi_bar_+ (chi_bar_-) [chi_bar_+ of the untrained filters] and the mean angle turned, where recorded."""
    betas = sorted({r["beta"] for r in rows})
    keys = sorted({(r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"]) for r in rows})
    cell = {(r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"], r["beta"]): r for r in rows}
    body = []
    for k in keys:
        line = list(k)
        for b in betas:
            r = cell.get(k + (b,))
            if r is None:
                line.append("-")
                continue
            turn = "" if not r.get("turn_deg") else f", {r['turn_deg']['mean']:.0f}°"
            init = r.get("chi_plus_init")
            chance = "" if not init else f" [{init['mean']:.2f}]"
            line.append(f"{r['chi_plus']['mean']:.2f} ({r['chi_minus']['mean']:.2f}){chance}{turn}")
        body.append(line)
    return report.markdown_table(["loss", "act", "bn", "ζ", "P"] + [f"β = {b}" for b in betas], body)


def summary_markdown(grids: dict) -> str:
    """``summary.md``: every grid (name -> ``results.json``, as in :func:`check_grids`), in path order,
    with its training settings, command and :func:`grid_table`."""
    parts = ["Each cell: χ̄₊ (χ̄₋) [χ̄₊ of the untrained filters], and the mean angle the filters turned "
             "during training where recorded; means over seeds. Written by scripts/two_layer_claims.py."]
    for name in sorted(grids, key=lambda g: g.split("/")):
        res = grids[name]
        c = res["config"]["train"]
        parts.append(f"### {name}\n\nlr {c['lr']:g}, τ {c['tau']:g}, {c['steps']} steps, "
                     f"{res['config']['n_seeds']} seeds; `{res['config']['command']}`\n\n" + grid_table(res["rows"]))
    return "\n\n".join(parts) + "\n"


# Column order of the paper's Table 1: (BN variant, (mu backprop?, sigma backprop?)).
TABLE1_VARIANTS = (("none_backprop", "μ no bp, σ² no bp"), ("var_only", "μ no bp, σ² bp"),
                   ("mean_only", "μ bp, σ² no bp"), ("vanilla", "μ bp, σ² bp"))

# Table 1 of the paper (ReLU, zeta = 10, InfoNCE), (beta, P) -> chi_bar_+ mean, std in TABLE1_VARIANTS order.
PAPER_TABLE1 = {
    (1, 1): [(0.31, 0.24), (0.23, 0.06), (0.30, 0.24), (0.23, 0.06)],
    (1, 3): [(0.65, 0.09), (-0.03, 0.01), (0.64, 0.07), (0.24, 0.11)],
    (1, 5): [(0.61, 0.06), (-0.00, 0.00), (0.62, 0.02), (0.38, 0.04)],
    (1, 10): [(0.66, 0.06), (0.53, 0.05), (0.70, 0.03), (0.56, 0.04)],
    (2, 1): [(0.36, 0.13), (0.27, 0.06), (0.63, 0.11), (0.33, 0.12)],
    (2, 3): [(0.78, 0.01), (0.00, 0.01), (0.80, 0.02), (0.41, 0.07)],
    (2, 5): [(0.78, 0.02), (0.22, 0.21), (0.77, 0.07), (0.56, 0.02)],
    (2, 10): [(0.83, 0.08), (0.72, 0.06), (0.80, 0.04), (0.71, 0.05)],
    (5, 1): [(0.63, 0.06), (0.43, 0.12), (0.67, 0.06), (0.46, 0.06)],
    (5, 3): [(0.90, 0.06), (0.45, 0.07), (0.90, 0.03), (0.60, 0.08)],
    (5, 5): [(0.90, 0.01), (0.72, 0.01), (0.88, 0.06), (0.74, 0.02)],
    (5, 10): [(0.88, 0.01), (0.88, 0.04), (0.92, 0.03), (0.90, 0.03)],
    (10, 1): [(0.63, 0.12), (0.37, 0.15), (0.70, 0.17), (0.46, 0.15)],
    (10, 3): [(0.95, 0.05), (0.72, 0.06), (0.94, 0.05), (0.80, 0.03)],
    (10, 5): [(0.98, 0.02), (0.84, 0.05), (0.96, 0.06), (0.92, 0.01)],
    (10, 10): [(0.90, 0.01), (0.97, 0.02), (0.89, 0.03), (0.97, 0.02)],
}


def table1_cells(rows, act: str = "relu") -> list:
    """[(beta, P, [(ours, paper) per TABLE1_VARIANTS])] for the (beta, P) cells of ``act`` in ``rows``;
    ours and paper are (mean, std) or None where missing."""
    ours = {(r["beta"], r["n_candidates"], r["bn"]): r["chi_plus"] for r in rows if r["act"] == act}
    out = []
    for b, p in sorted({(b, p) for b, p, _ in ours}):
        pairs = []
        for j, (bn, _) in enumerate(TABLE1_VARIANTS):
            o = ours.get((b, p, bn))
            pairs.append((None if o is None else (o["mean"], o["std"]), PAPER_TABLE1.get((b, p), [None] * 4)[j]))
        out.append((b, p, pairs))
    return out


def _mean_std(v) -> str:
    return "-" if v is None or v[0] is None else f"{v[0]:.2f} ± {v[1]:.2f}"


def table1_table(cells) -> tuple:
    """(headers, rows) of Table 1: a row per (beta, P), ours and the paper's mean ± std per variant side by side."""
    headers = ["β", "P"] + [f"{name}: {who}" for _, name in TABLE1_VARIANTS for who in ("ours", "paper")]
    return headers, [[b, p] + [_mean_std(x) for pair in pairs for x in pair] for b, p, pairs in cells]


def table1_markdown(cells) -> str:
    """Table 1 as markdown (:func:`table1_table`)."""
    return report.markdown_table(*table1_table(cells))


def table1_csv(cells) -> tuple:
    """(headers, rows) of ``table1.csv``: <variant>_<ours|paper>_<mean|std>, rounded to 4 digits, empty if missing."""
    headers = ["beta", "P"] + [f"{bn}_{who}_{stat}" for bn, _ in TABLE1_VARIANTS for who in ("ours", "paper")
                               for stat in ("mean", "std")]
    return headers, [[b, p] + [("" if x is None or x[0] is None else round(x[i], 4)) for pair in pairs for x in pair
                               for i in (0, 1)] for b, p, pairs in cells]


def check_more_steps(rows, reference_rows, margin=0.05):
    """Does a smaller lr reach a larger lr's outcome with more steps (issue #15)?

    ``rows``: rows of ``scripts/two_layer_steps.py`` (a ``steps`` field each, one training per setting
    scored at several step counts); ``reference_rows``: the grid at the larger lr. Per activation, the
    part holds when at the largest step count chi_bar_+ is within ``margin`` of the reference (or
    above it) in every (P, beta) cell that both have.
    """
    claim = "more steps at the small lr reach the large lr's chi_+"
    ref = {(r["act"], r["n_candidates"], r["beta"]): r["chi_plus"]["mean"] for r in reference_rows}
    last = max(r["steps"] for r in rows)
    gaps: dict[str, list[float]] = {}
    for r in rows:
        cell = (r["act"], r["n_candidates"], r["beta"])
        if r["steps"] == last and cell in ref:
            gaps.setdefault(r["act"], []).append(ref[cell] - r["chi_plus"]["mean"])
    if not gaps:
        return verdict(claim, None, {})
    parts = {f"{act}: within {margin:g} of the reference in every cell at {last} steps": max(g) < margin
             for act, g in sorted(gaps.items())}
    return verdict(claim, parts, {"steps": last, "max_gap": {a: max(g) for a, g in sorted(gaps.items())}})


def steps_markdown(rows, reference_rows, reference_label: str = "reference") -> str:
    """chi_bar_+ (chi_bar_-) of each (act, P, beta) at every step count, next to the reference grid's cell,
    and the mean angle the filters turned by the last step count."""
    steps = sorted({r["steps"] for r in rows})
    ref = {(r["act"], r["n_candidates"], r["beta"]): r for r in reference_rows}
    by = {(r["act"], r["n_candidates"], r["beta"], r["steps"]): r for r in rows}
    cells = sorted({(r["act"], r["n_candidates"], r["beta"]) for r in rows})
    headers = ["act", "P", "β"] + [f"{s} steps" for s in steps] + [reference_label, f"turned by {steps[-1]}"]
    body = []
    for act, p, b in cells:
        cols = [f"{by[(act, p, b, s)]['chi_plus']['mean']:.3f} ({by[(act, p, b, s)]['chi_minus']['mean']:.3f})"
                if (act, p, b, s) in by else "–" for s in steps]
        r = ref.get((act, p, b))
        turned = by.get((act, p, b, steps[-1]), {}).get("turn_deg")
        body.append([act, p, b] + cols + [f"{r['chi_plus']['mean']:.3f} ({r['chi_minus']['mean']:.3f})" if r else "–",
                                          f"{turned['mean']:.1f}°" if turned else "–"])
    return report.markdown_table(headers, body)



def mnist_claims(record: dict, confidence: float = 0.95) -> list:
    """Verdicts on App. E.3 / Figs. 12-13 from paired per-seed differences (aug - no_aug) of the final
    scores: each claim holds when the mean difference has the claimed sign and its t interval over
    seeds excludes 0. Seeds with a non-finite run are left out (and counted)."""
    out = []
    for key, claim in (("hf", "augmentation gives smoother filters, weaker high frequencies (App. E.3, Fig. 13)"),
                       ("max_cos", "augmentation gives more diverse filters, lower max cosine (issue #15's "
                                   "reading of Figs. 12-13)"),
                       ("max_cos_live", "the same among the filters that fire on the data (dead filters left out)")):
        a, b = record["final"]["aug"][key], record["final"]["no_aug"][key]
        diff = a - b
        ok = np.isfinite(diff)
        mean, lo, hi = stats.t_interval(diff[ok], confidence)
        nan = float("nan")  # (numpy's nanmean, as the committed summaries have it, where a seed is left)
        numbers = {"aug": float(np.nanmean(a)) if ok.any() else nan,
                   "no_aug": float(np.nanmean(b)) if ok.any() else nan, "diff": mean,
                   "diff_ci": [lo, hi], "seeds": int(ok.sum()), "seeds_dropped": int((~ok).sum())}
        parts: dict[str, bool] | None = {"lower with augmentation on average": bool(mean < 0),
                 f"{int(100 * confidence)}% interval over seeds below 0": bool(hi < 0)}
        if not ok.any():  # nothing to judge: named, not a mean of nothing
            parts, numbers["reason"] = None, f"every seed's run went non-finite ({int((~ok).sum())} of {ok.size})"
        out.append(dict(verdicts.verdict(claim, parts, numbers), grid="mnist"))
    return out


def mnist_scores_csv(record: dict) -> tuple:
    """(header, rows) of ``scores.csv``: one row per seed and condition."""
    keys = ("hf", "max_cos", "dead", "max_cos_live")
    header = (["seed", "condition", "finite", "stopped_at"] + list(keys) + [f"{k}_init" for k in keys]
              + ["final_loss"])
    rows = []
    for cond in CONDITIONS:
        f, i = record["final"][cond], record["init"][cond]
        for s in range(len(f["hf"])):
            rows.append([s, cond, bool(record["finite"][cond][s]), int(record["stopped_at"][cond][s])]
                        + [float(f[k][s]) for k in keys] + [float(i[k][s]) for k in keys]
                        + [float(record["loss"][cond][-1, s])])
    return header, rows


def mnist_summary_table(record: dict, confidence: float = 0.95) -> tuple:
    """(header, rows): per condition, each score (final and initial) over the finite seeds with an
    interval that stays in the score's range by construction. The dead-filter fraction: the pooled count of
    dead filters over all filters of those seeds, with its Wilson interval (:func:`ccdyn.stats.wilson_interval`;
    filters as independent draws). The other scores: the mean with its t interval over seeds intersected
    with the score's range (high-frequency fraction [0, 1], cosines [-1, 1]); the mean lies in that range,
    so the intersection keeps the interval's coverage. Rows as :func:`mnist_summary_key` explains."""
    def t_cell(v, lo_range, hi_range):
        v = np.asarray(v, float)
        mean, lo, hi = stats.t_interval(v[np.isfinite(v)], confidence)
        return f"{mean:.3f} [{max(lo, lo_range):.3f}, {min(hi, hi_range):.3f}]"

    def dead_cell(cond, at):
        ok = np.asarray(record["finite"][cond], bool)
        per_run = int(np.prod(np.shape(record["W"][cond])[1:3]))  # K receptive fields x M filters
        count = int(np.rint(np.asarray(record[at][cond]["dead"], float)[ok] * per_run).sum())
        n = per_run * int(ok.sum())
        if n == 0:
            return "-"
        from scipy.special import ndtri  # the normal quantile of the Wilson interval

        lo, hi = stats.wilson_interval(count, n, z=float(ndtri(0.5 + confidence / 2)))
        return f"{count / n:.3f} [{lo:.3f}, {hi:.3f}]"

    header = ["condition", "seeds (ok)", "high-freq. fraction", "max cosine", "dead filters", "max cos. (live)"]
    rows = [[f"{cond}{'' if at == 'final' else ' at init'}",
             f"{len(record['finite'][cond])} ({int(np.sum(record['finite'][cond]))})",
             t_cell(record[at][cond]["hf"], 0.0, 1.0), t_cell(record[at][cond]["max_cos"], -1.0, 1.0),
             dead_cell(cond, at), t_cell(record[at][cond]["max_cos_live"], -1.0, 1.0)]
            for at, conds in (("final", CONDITIONS), ("init", CONDITIONS[:1])) for cond in conds]
    return header, rows


def mnist_summary_key(confidence: float = 0.95) -> str:
    """The key printed under :func:`mnist_summary_table`."""
    c = int(round(100 * confidence))
    return (f"key: score [{c}% interval]. dead filters: pooled count over all filters of the finite seeds, Wilson\n"
            f"     interval; other scores: mean over seeds, t interval cut to the score's range ([0, 1];\n"
            "     cosines [-1, 1]). seeds (ok): seeds run (those that stayed finite, the only ones counted);\n"
            "     at init: the same scores of the initial filters.")


def mnist_summary(record: dict, cfg, data: str) -> dict:
    """The JSON record of a run (without the filters): config, per-seed scores, the claims' verdicts."""
    keep = ("side", "n_images", "finite", "stopped_at", "final", "init")
    return {"data": data, "config": dataclasses.asdict(cfg), **{k: record[k] for k in keep},
            "final_loss": {c: record["loss"][c][-1] for c in CONDITIONS}, "claims": mnist_claims(record)}


# --- ledger records ------------------------------------------------------------------------------------

_GRID_CLAIMS = (("P=1:", "p1", "Sec. 5, Fig. 4 / 9a (Fig. 10: quadratic loss)"),
                ("P>1", "relu-beats-linear", "Sec. 5, Fig. 4 / 9b (Fig. 10: quadratic loss)"),
                ("ReLU has the lowest", "relu-lowest-chi-minus", "Sec. 5, Fig. 9"),
                ("InfoNCE beats", "infonce-beats-quadratic", "Sec. 5, Fig. 10"),
                ("zeta=2: BN", "bn-no-help", "Sec. 5, Fig. 11 (top row)"),
                ("zeta=", "bn-helps", "Sec. 5, Fig. 11"),
                ("Table 1:", "sigma-backprop-hurts", "Table 1"))


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() or c == "." else " " for c in text.lower()).split())


def grid_csv(grid: str) -> str:
    """The results.csv (relative to the repository) of a grid named in ``claims.json`` ("fig4_infonce
    (lr=0.002 tau=0.1)" -> results/two_layer/fig4_infonce/results.csv)."""
    return f"results/two_layer/{grid.split(' (')[0]}/results.csv"


def lowest_chi_minus_evidence(check: dict, csv_rows) -> dict:
    """The evidence (:func:`ccdyn.verdicts.earned`) behind "ReLU has the lowest chi_-" on one grid, from its
    ``results.csv`` rows (per cell: mean and std over the finite seeds): the margin of the runner-up
    activation's mean chi_- over ReLU's (averaged over the cells, negative when ReLU is not lowest) and its
    standard error from the per-cell stds (sqrt(sum_c (s_relu^2 + s_other^2) / n) / cells), against the
    activation nearest to ReLU; and the scope: the claim is "lowest of all activations", so a grid that ran
    only ReLU and linear covers a special case (ReLU below linear)."""
    acts = sorted(check["numbers"].get("mean_chi_minus", {}))
    if "relu" not in acts or len(acts) < 2:
        return {}
    loss = "quadratic" if "quadratic" in check["grid"] else "infonce"
    cells: dict[tuple, dict[str, tuple]] = {}
    for r in csv_rows:
        if r["loss"] == loss and r["act"] in acts:
            cells.setdefault((r["bn"], r["zeta"], r["P"], r["beta"]), {})[r["act"]] = (
                float(r["chi_minus_mean"]), float(r["chi_minus_std"]), max(int(r["n_finite"]), 1))
    best = None
    for other in (a for a in acts if a != "relu"):
        pairs = [(c[other], c["relu"]) for c in cells.values() if other in c and "relu" in c]
        if not pairs:
            continue
        margin = sum(o[0] - r[0] for o, r in pairs) / len(pairs)
        se = math.sqrt(sum(o[1] ** 2 / o[2] + r[1] ** 2 / r[2] for o, r in pairs)) / len(pairs)
        if best is None or margin < best[1]:
            best = (other, margin, se)
    ev = {}
    if best is not None:
        ev = {"margin": best[1], "se": best[2],
              "why": f"mean chi_- of {best[0]} (the nearest) minus ReLU's over {len(cells)} cells"}
    if set(acts) == {"relu", "linear"}:
        ev.update(scope="special case", why="the grid ran only ReLU and linear, the claim is lowest of all "
                  "activations (the all-activation grid fig4_infonce has ReLU third: 0.2678 against LeakyReLU "
                  "0.2605 and GELU 0.2666); " + ev.get("why", ""))
    return ev


def grid_claims(checks, *, result: str = "results/two_layer/claims.json",
                command: str = "python scripts/two_layer_claims.py", csv: dict | None = None) -> list:
    """The checks of :func:`check_grids` (or ``claims.json["checks"]``) as ledger records, one per grid and
    claim: the verdict over seeds' means with a margin, so a sampled estimate. Readings: docs/two_layer_readings.md.
    ``csv``: grid -> its results.csv rows, for the evidence of "ReLU has the lowest chi_-"
    (:func:`lowest_chi_minus_evidence`)."""
    out = []
    for c in checks:
        key, where = next((k, w) for prefix, k, w in _GRID_CLAIMS if c["claim"].startswith(prefix))
        ev = (lowest_chi_minus_evidence(c, csv[c["grid"]]) if key == "relu-lowest-chi-minus" and csv
              and c["grid"] in csv else None)
        out.append(verdicts.claim_record(f"core-{key}-{_slug(c['grid'])}", "core", f"{where} [{c['grid']}]",
                                         c["claim"], c, c["numbers"], "sampled estimate",
                                         reading="docs/two_layer_readings.md", result=result, command=command,
                                         evidence=ev))
    return out


def mnist_ledger(summary: dict, *, result: str = "results/two_layer/mnist", command: str | None = None) -> list:
    """The App. E.3 verdicts of :func:`mnist_summary` (or ``summary.json``) as ledger records; ``command``:
    the one given, else the run record's (``summary.json``), else the results/README.md command."""
    command = (command or summary.get("command")
               or "python scripts/mnist.py --n_seeds=10 --output_dir=results/two_layer/mnist")
    ids = ("core-appE3-smoother", "core-appE3-more-diverse", "core-appE3-more-diverse-live")
    diverse = {"scope": "not claimed", "why": "App. E.3 says the filters of each RF capture a diverse set of "
               "patterns (Fig. 12, without augmentation) and that augmentation makes them smoother; it does not "
               "say augmentation makes them more diverse (issue #15's reading)"}
    return [verdicts.claim_record(i, "core", "App. E.3, Figs. 12-13", c["claim"], c, c["numbers"], "sampled estimate",
                                  reading="docs/two_layer_readings.md (MNIST)", result=result, command=command,
                                  evidence=diverse if "diverse" in i else None)
            for i, c in zip(ids, summary["claims"])]


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


def fig4_caption_claims(fig4: dict, fig10: dict, *, margin: float = 0.05,
                        result: str = "results/two_layer/fig4_infonce results/two_layer/fig10_quadratic",
                        command: str | None = None) -> list:
    """Fig. 4's caption: "We found similar trend for other homogeneous activations such as LeakyReLU (with
    negative slope 0.05) and quadratic". The trend is the caption's (and Fig. 9's) for ReLU: at P = 1 linear
    works at every beta and ReLU needs a large beta (:func:`check_p1`), at P > 1 and beta > 1 ReLU beats
    linear and improves with beta, linear much less affected (:func:`check_relu_beats_linear`). Each is
    judged again with the activation in ReLU's place, on the committed grids with every activation:
    ``fig4`` (InfoNCE) and ``fig10`` (quadratic loss), their ``results.json``. One row per activation;
    its parts are the two checks' parts on both grids, so it says how much of the trend the activation
    shares; ReLU's own parts are in the numbers for comparison."""
    command = command or ("python scripts/two_layer.py --acts=linear,relu,leaky_relu,quadratic,gelu "
                          "--output_dir=results/two_layer/fig4_infonce (and fig10_quadratic: results/README.md)")
    out = []
    for act, slug in (("leaky_relu", "leaky-relu"), ("quadratic", "quadratic")):
        parts, numbers = {}, {}
        for name, grid, loss in (("InfoNCE", fig4, "infonce"), ("quadratic loss", fig10, "quadratic")):
            rows = [r for r in grid["rows"] if r["act"] in ("linear", act)]
            swapped = [dict(r, act="relu") if r["act"] == act else r for r in rows]
            if not any(r["act"] == act for r in rows):
                continue
            for check in (check_p1(swapped, loss=loss, margin=margin), check_relu_beats_linear(swapped, loss=loss,
                                                                                              margin=margin)):
                for k, v in check["parts"].items():
                    parts[f"{name}: {k.replace('ReLU', act)}"] = v
            relu = [r for r in grid["rows"] if r["act"] in ("linear", "relu")]
            relu_parts = [v for c in (check_p1(relu, loss=loss, margin=margin),
                                      check_relu_beats_linear(relu, loss=loss, margin=margin))
                          for v in c["parts"].values()]
            mine = [v for k, v in parts.items() if k.startswith(name)]
            numbers[name] = {"parts_held": f"{sum(mine)}/{len(mine)}",
                             "relu_parts_held": f"{sum(relu_parts)}/{len(relu_parts)}"}
        v = verdict(f"Fig. 4 caption: {act}", parts or None, numbers)
        out.append(verdicts.claim_record(
            f"core-fig4-caption-{slug}", "core", "Fig. 4 caption (Sec. 5)",
            f"{act} shows the same trends as ReLU (P = 1: linear good, {act} needs large beta; P > 1: {act} beats "
            "linear and improves with beta)", v, numbers, "sampled estimate", reading="docs/two_layer_readings.md",
            result=result, command=command,
            note="3 seeds per cell (the paper's); each part judged with the grids' margin 0.05, as for ReLU"))
    return out


__all__ += ["fig4_caption_claims"]


__all__ += ["appendix_forms_claims"]  # kept in ccdyn.two_layer.appendix_claims
