"""The paper's Sec. 5 claims about Fig. 4, 9, 10, 11 and Table 1 as numeric checks on result rows.

A row is one entry of ``results.json["rows"]`` written by ``scripts/two_layer.py``
(:func:`ccdyn.two_layer.experiment.run_setting` aggregated per grid point). Each check returns
{"claim", "parts" (sub-claim -> bool), "holds" (all parts; None when the rows lack the cells),
"numbers" (what was compared)}. Differences smaller than ``margin`` count as "no difference".
"""

from __future__ import annotations

import numpy as np

__all__ = ["verdict_word", "check_p1", "check_relu_beats_linear", "check_infonce_beats_quadratic",
           "check_relu_lowest_chi_minus", "check_bn_helps", "check_sigma_backprop_hurts"]


def _table(rows, score="chi_plus"):
    return {(r["loss"], r["act"], r["bn"], float(r["zeta"]), r["n_candidates"], r["beta"]): r[score]["mean"]
            for r in rows}


def _get(t, loss="infonce", act="relu", bn="none", zeta=1.0, p=1, beta=1):
    return t.get((loss, act, bn, float(zeta), p, beta), float("nan"))


def _axes(rows):
    return sorted({r["beta"] for r in rows}), sorted({r["n_candidates"] for r in rows})


def _verdict(claim, parts, numbers):
    if parts is None:
        return {"claim": claim, "holds": None, "parts": {}, "numbers": {}}
    parts = {k: bool(v) for k, v in parts.items()}
    return {"claim": claim, "holds": all(parts.values()), "parts": parts, "numbers": numbers}


def verdict_word(v) -> str:
    """'holds', 'partly' (some parts hold) or 'fails'."""
    if v["holds"]:
        return "holds"
    return "partly" if any(v["parts"].values()) else "fails"


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
        return _verdict(claim, None, {})
    parts = {"linear flat over beta": max(lin) - min(lin) < margin,
             "linear > ReLU at beta=1": lin[0] > relu[0] + margin,
             "ReLU improves with beta": relu[-1] - relu[0] > margin}
    return _verdict(claim, parts, {"betas": betas, "linear": lin, "relu": relu})


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
        return _verdict(claim, None, {})
    parts = {"ReLU > linear in every cell": min(diffs) > 0,
             "ReLU improves with beta at every P>1": min(gains.values()) > margin,
             "linear's change over beta smaller than ReLU's gain at every P>1":
                 all(abs(lin_gain[p]) < gains[p] for p in gains)}
    return _verdict(claim, parts,
                    {"relu_minus_linear_min": min(diffs), "relu_minus_linear_mean": float(np.mean(diffs)),
                     "relu_wins": f"{sum(d > 0 for d in diffs)}/{len(diffs)}",
                     "relu_gain_beta_max_vs_min": gains, "linear_change_beta_max_vs_min": lin_gain})


def check_infonce_beats_quadratic(rows, bn="none", zeta=1.0):
    """InfoNCE gives a higher chi_+ than the quadratic loss (Fig. 10), per activation, over all cells."""
    t = _table(rows)
    acts = sorted({r["act"] for r in rows})
    betas, ps = _axes(rows)
    per_act = {}
    for a in acts:
        d = [_get(t, "infonce", a, bn, zeta, p, b) - _get(t, "quadratic", a, bn, zeta, p, b) for p in ps for b in betas]
        d = [x for x in d if np.isfinite(x)]
        if d:
            per_act[a] = {"mean_diff": float(np.mean(d)), "infonce_wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
    if not per_act:
        return _verdict("InfoNCE beats the quadratic loss", None, {})
    return _verdict("InfoNCE beats the quadratic loss",
                    {f"{a}: mean chi_+ higher with InfoNCE": v["mean_diff"] > 0 for a, v in per_act.items()}, per_act)


def check_relu_lowest_chi_minus(rows, loss="infonce", bn="none", zeta=1.0):
    """ReLU has the lowest chi_bar_- of all activations (Fig. 9)."""
    t = _table(rows, "chi_minus")
    acts = sorted({r["act"] for r in rows if r["loss"] == loss})
    betas, ps = _axes(rows)
    if "relu" not in acts or len(acts) < 2:
        return _verdict("ReLU has the lowest chi_-", None, {})
    means = {a: float(np.nanmean([_get(t, loss, a, bn, zeta, p, b) for p in ps for b in betas])) for a in acts}
    wins = sum(min(acts, key=lambda a: _get(t, loss, a, bn, zeta, p, b)) == "relu" for p in ps for b in betas)
    parts = {"ReLU lowest mean chi_-": min(means, key=means.get) == "relu"}
    if "linear" in means and len(acts) > 2:
        parts["ReLU below linear"] = means["relu"] < means["linear"]
    return _verdict("ReLU has the lowest chi_-", parts,
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
        return _verdict(claim, None, {})
    return _verdict(claim, {"BN higher chi_+ in every such cell": min(diffs) > 0},
                    {"bn_minus_none": dict(zip([f"P{p}-beta{b}" for p, b in cells], diffs)),
                     "mean_over_all_cells": float(np.nanmean(allc))})


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
            return _verdict(claim, None, {})
        out[name] = {"no_sigma_minus_sigma": dict(zip([f"P{p}-beta{b}" for p, b in cells], d)),
                     "wins": f"{sum(x > 0 for x in d)}/{len(d)}"}
        parts[f"{name}: sigma backprop lower in every cell"] = min(d) > 0
    return _verdict(claim, parts, out)
