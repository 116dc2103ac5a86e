"""Table 1 of the core paper (Sec. 5: BatchNorm's mean and variance with or without backprop) beside ours, and the
check that longer training keeps the grids' orderings; re-exported by :mod:`ccdyn.two_layer.claims`, the part's
claims module (kept apart so that it stays small)."""

from __future__ import annotations

from ccdyn import report
from ccdyn.verdicts import verdict

__all__ = ["TABLE1_VARIANTS", "PAPER_TABLE1", "table1_cells", "table1_table", "table1_markdown", "table1_csv",
           "check_more_steps", "steps_markdown"]

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
