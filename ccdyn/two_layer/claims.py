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

Kept in modules of their own and re-exported here (so that each stays small): Table 1 and the longer-training
check (:mod:`ccdyn.two_layer.table1_claims`), App. E.3 (:mod:`ccdyn.two_layer.mnist_claims`), the modulation
verdicts and records (:mod:`ccdyn.two_layer.modulation_claims`) and the appendix forms
(:mod:`ccdyn.two_layer.appendix_claims`).
"""

from __future__ import annotations

import math

import numpy as np

from ccdyn import report, stats, verdicts
from ccdyn.two_layer.appendix_claims import appendix_forms_claims
from ccdyn.two_layer.mnist_claims import (
    CONDITIONS,
    mnist_claims,
    mnist_ledger,
    mnist_scores_csv,
    mnist_summary,
    mnist_summary_key,
    mnist_summary_table,
)
from ccdyn.two_layer.modulation_claims import (
    EQ15_TOLERANCE,
    EQ155_ALPHA,
    FIG7_TOLERANCE,
    cor3_verdict,
    eq15_verdict,
    eq155_verdict,
    fig7_verdict,
    lemma5_general_claims,
    modulation_bounds_claims,
    modulation_claims,
    modulation_verdicts,
    thm6_verdict,
    top_layer_claims,
)
from ccdyn.two_layer.table1_claims import (
    PAPER_TABLE1,
    TABLE1_VARIANTS,
    check_more_steps,
    steps_markdown,
    table1_cells,
    table1_csv,
    table1_markdown,
    table1_table,
)
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
