"""Plain-text tables for the scripts' stdout summaries (returns strings; prints nothing)."""

from __future__ import annotations

__all__ = ["format_table", "markdown_table", "basins_comparison_rows", "COMPARISON_COLUMNS"]


def _cell(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def format_table(headers, rows) -> str:
    """Left-aligned monospace table with a header rule."""
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h))
              for i, h in enumerate(headers)]
    line = lambda vals: "  ".join(str(v).ljust(w) for v, w in zip(vals, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


COMPARISON_COLUMNS = ("run", "act", "alpha", "tau", "method", "data", "n_init", "optima", "stable_optima",
                      "stable_smooth", "stable_on_kink", "mass_on_patterns", "converged", "not_converged", "cycling", "dead", "nonfinite")


def basins_comparison_rows(named_summaries) -> list:
    """One row per basins run (``[(name, summary.json dict)]``) for a side-by-side table."""
    rows = []
    for name, s in named_summaries:
        c = s["config"]
        rows.append([name, c["act"], c["alpha"], c["tau"] if c["alpha"] == "gaussian" else "-",
                     c["dynamics"]["method"], f"{c['data']['data']} d={c['data']['d']} m={c['data']['m']}",
                     s["n_init"], s["n_optima"], s["n_stable_optima"],
                     sum(o["stable"] and o["smooth"] for o in s["optima"]),
                     sum(o["stable"] and not o["smooth"] for o in s["optima"]),
                     round(s["basin_mass_on_patterns"], 4),
                     s["n_converged"], s["n_not_converged"], s["n_cycling"], s.get("n_dead", 0), s["n_nonfinite"]])
    return rows


def markdown_table(headers, rows) -> str:
    """A GitHub-flavoured markdown table."""
    line = lambda vals: "| " + " | ".join(_cell(v) for v in vals) + " |"
    return "\n".join([line(headers), "|" + "---|" * len(headers)] + [line(r) for r in rows])
