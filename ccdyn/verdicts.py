"""Verdicts on a paper's claims, shared by every part: a claim is split into sub-claims (parts) that
each hold or not on measured numbers, and its verdict word is ``holds`` (every part), ``partly``
(some) or ``fails`` (none). A *check* is a verdict with the ``grid`` (or section) it was judged on;
:func:`claims_table` and :func:`claims_markdown` render a list of checks."""

from __future__ import annotations

import json

from ccdyn import io, report

__all__ = ["verdict", "verdict_word", "claims_table", "claims_markdown"]


def verdict(claim, parts, numbers) -> dict:
    """{"claim", "parts" (sub-claim -> bool), "holds" (all parts; None when there is nothing to judge:
    ``parts`` None or empty), "numbers" (what was compared)}."""
    parts = {k: bool(v) for k, v in (parts or {}).items()}
    return {"claim": claim, "holds": all(parts.values()) if parts else None, "parts": parts, "numbers": numbers}


def verdict_word(v) -> str:
    """'holds', 'partly' (some parts hold) or 'fails'."""
    if v["holds"]:
        return "holds"
    return "partly" if any(v["parts"].values()) else "fails"


def _short(numbers) -> str:
    text = json.dumps(io.as_json(numbers), separators=(",", ":"))
    for a, b in [("\"", ""), ("chi_", "χ")]:
        text = text.replace(a, b)
    return text if len(text) < 400 else text[:397] + "..."


def _rounded(numbers):
    return json.loads(json.dumps(io.as_json(numbers)), parse_float=lambda s: round(float(s), 3))


def claims_table(checks) -> tuple:
    """(headers, rows) of the checks: grid, claim, verdict, parts (yes / no each) and the numbers
    compared (rounded to 3 digits, cut at 400 characters)."""
    body = [[r["grid"], r["claim"], verdict_word(r),
             "; ".join(f"{k}: {'yes' if v else 'no'}" for k, v in r["parts"].items()), _short(_rounded(r["numbers"]))]
            for r in checks]
    return ["grid", "claim", "verdict", "parts", "numbers"], body


def claims_markdown(checks) -> str:
    """``claims.md``: the verdict per grid and claim, then the details of every check."""
    claims = list(dict.fromkeys(r["claim"] for r in checks))
    grids = list(dict.fromkeys(r["grid"] for r in checks))
    verdicts = {(r["grid"], r["claim"]): verdict_word(r) for r in checks}
    pivot = report.markdown_table(["grid"] + claims, [[g] + [verdicts.get((g, c), "") for c in claims] for g in grids])
    return ("Verdict per grid and claim:\n\n" + pivot + "\n\nDetails:\n\n"
            + report.markdown_table(*claims_table(checks)) + "\n")
