"""Plain-text tables for the scripts' stdout summaries (returns strings; prints nothing)."""

from __future__ import annotations

import textwrap

__all__ = ["format_table", "markdown_table", "key_lines", "WIDTH"]

WIDTH = 120  # the widest line of a printed table or key


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


def key_lines(text: str, width: int = WIDTH) -> list:
    """The key printed under a table: ``key: <text>`` wrapped at ``width`` characters, the lines after the
    first indented by five spaces."""
    return textwrap.wrap(text, width, initial_indent="key: ", subsequent_indent="     ", break_on_hyphens=False,
                         break_long_words=False)
