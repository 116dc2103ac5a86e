"""Plain-text tables for the scripts' stdout summaries (returns strings; prints nothing)."""

from __future__ import annotations

__all__ = ["format_table", "markdown_table"]


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


def markdown_table(headers, rows) -> str:
    """A GitHub-flavoured markdown table."""
    line = lambda vals: "| " + " | ".join(_cell(v) for v in vals) + " |"
    return "\n".join([line(headers), "|" + "---|" * len(headers)] + [line(r) for r in rows])
