"""Plain-text tables for the scripts' stdout summaries (returns strings; prints nothing)."""

from __future__ import annotations

import textwrap

__all__ = ["format_table", "markdown_table", "key_lines", "duration", "WIDTH"]

WIDTH = 120  # the widest line of a printed table or key


def _cell(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def format_table(headers, rows, width: int | None = WIDTH, keep: int = 1) -> str:
    """Left-aligned monospace table with a header rule. A table wider than ``width`` characters is split
    into blocks of consecutive columns, one under the other (a blank line between), each at most ``width``
    wide and each repeating the first ``keep`` columns (the row labels); ``width=None`` never splits."""
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h))
              for i, h in enumerate(headers)]

    def block(cols):
        line = lambda vals: "  ".join(str(vals[i]).ljust(widths[i]) for i in cols).rstrip()  # noqa: E731
        return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])

    n, keep = len(widths), min(keep, len(widths))
    span = lambda cols: sum(widths[i] for i in cols) + 2 * (len(cols) - 1)  # noqa: E731
    if width is None or span(range(n)) <= width:
        return block(range(n))
    blocks, j = [], keep
    while j < n:
        cols = list(range(keep)) + [j]  # at least one new column per block
        j += 1
        while j < n and span(cols + [j]) <= width:
            cols.append(j)
            j += 1
        blocks.append(block(cols))
    return "\n\n".join(blocks)


def markdown_table(headers, rows) -> str:
    """A GitHub-flavoured markdown table."""
    line = lambda vals: "| " + " | ".join(_cell(v) for v in vals) + " |"
    return "\n".join([line(headers), "|" + "---|" * len(headers)] + [line(r) for r in rows])


def key_lines(text: str, width: int = WIDTH) -> list:
    """The key printed under a table: ``key: <text>`` wrapped at ``width`` characters, the lines after the
    first indented by five spaces."""
    return textwrap.wrap(text, width, initial_indent="key: ", subsequent_indent="     ", break_on_hyphens=False,
                         break_long_words=False)


def keyed_table(headers, rows, key: str) -> str:
    """A table (:func:`format_table`) with its key under it (:func:`key_lines`), as the scripts print them."""
    return "\n".join([format_table(headers, rows), *key_lines(key)])


def duration(seconds: float) -> str:
    """A duration read at a glance: '0.4 s', '42 s', '3 min 20 s', '2 h 05 min'."""
    if seconds < 1:
        return f"{max(seconds, 0.0):.1f} s"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"
