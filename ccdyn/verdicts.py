"""Verdicts on a paper's claims, shared by every part: a claim is split into sub-claims (parts) that
each hold or not on measured numbers, and its verdict word is ``holds`` (every part), ``partly``
(some) or ``fails`` (none). A *check* is a verdict with the ``grid`` (or section) it was judged on;
:func:`claims_table`, :func:`claims_text` (narrow: one block per check) and :func:`claims_markdown` render
a list of checks.

:func:`claim_record` is the one format every part's ``claims.py`` returns for the claims ledger: claim
id, paper and location, the statement in one line, the verdict word (:data:`WORDS`), the numbers behind
it, the check kind (:data:`CHECK_KINDS`), the reading taken where the paper is ambiguous (a docs/ anchor),
the result path and the command that made it, and the evidence behind the word (:data:`EVIDENCE_KEYS`);
:func:`ledger_markdown` renders a list of them.

:func:`earned` is the one rule that turns evidence into a verdict word, applied by the ledger to every
record: a measured word (from the parts) is lowered to the strongest word its evidence earns, by the
check's significance (a p-value against the family's level, a margin against its standard error), by how
much of the claim's scope the check covers (the whole, a special case, a consequence true by
construction, or a claim the paper does not make) and by its kind (an estimate of what the claim needs
certified). :func:`stronger_than_evidence` names a word the rule would not give."""

from __future__ import annotations

import json
import textwrap

from ccdyn import io, report

__all__ = ["verdict", "verdict_word", "reason", "verdict_lines", "claims_table", "claims_text", "claims_markdown",
           "WORDS", "CHECK_KINDS", "PAPERS", "claim_record", "ledger_markdown", "SCOPES", "EVIDENCE_KEYS", "LEVEL",
           "earned", "stronger_than_evidence"]

WORDS = ("holds", "partly", "fails", "not established", "not checked")
CHECK_KINDS = ("autodiff", "closed form", "enumeration", "simulation against a closed form", "sampled estimate",
               "comparison with printed numbers", "visual")
PAPERS = ("core", "DDN", "SimCLR-var", "ccdyn")  # the alpha-CL theory, Dual Deep Networks, the SimCLR variational
# analysis, and ccdyn's own accuracy claims (docs/flow.md)


SCOPES = ("full", "special case", "by construction", "estimate", "not claimed")
# full: the check covers the claim's whole statement; special case: only part of its scope (one setting of
# a "for all", a subset of the cases, the direction of a size); by construction: what it measures cannot
# come out otherwise (the check cannot fail); estimate: it estimates what the claim needs certified;
# not claimed: the row judges a reading the paper does not state.
EVIDENCE_KEYS = ("scope", "why", "p_value", "family", "margin", "se", "failed_part")
LEVEL = 0.05  # the family-wise significance level (Bonferroni over ``family`` comparisons)


def _check_evidence(evidence) -> dict:
    evidence = dict(evidence or {})
    bad = sorted(set(evidence) - set(EVIDENCE_KEYS))
    if bad:
        raise ValueError(f"evidence keys {bad} not in {EVIDENCE_KEYS}")
    if evidence.get("scope", "full") not in SCOPES:
        raise ValueError(f"evidence scope={evidence['scope']!r} must be one of {SCOPES}")
    if evidence.get("scope", "full") != "full" and not evidence.get("why"):
        raise ValueError(f"evidence scope={evidence['scope']!r} needs its why")
    if ("margin" in evidence) != ("se" in evidence):
        raise ValueError("evidence gives a margin with its standard error (margin and se), or neither")
    if int(evidence.get("family", 1)) < 1:
        raise ValueError("evidence family (the number of comparisons) must be >= 1")
    return evidence


def earned(word: str, check, evidence=None) -> tuple:
    """The strongest verdict word the evidence earns for a measured ``word``, and why it is lower (None
    when it is not). The rule, in order (the first that lowers the word decides):

    1. "not established" and "not checked" stay.
    2. scope "not claimed": not established (the paper does not state it, so no word can judge the paper).
    3. scope "by construction" (the check cannot fail) or "estimate" (it estimates what the claim needs
       certified): holds / partly become not established; fails stays (a counterexample still refutes).
    4. significance: with ``p_value`` above LEVEL / ``family`` (Bonferroni over the comparisons of one
       family), or a ``margin`` within 2 standard errors ``se`` of zero, the measured difference is within
       noise: any word becomes not established.
    5. scope "special case": holds becomes partly (the claim's full scope is not covered); fails stays
       (a counterexample inside the scope refutes a universal claim).
    6. ``failed_part`` (a sub-claim another check measured false): holds becomes partly.

    ``check`` is the check kind (:data:`CHECK_KINDS`); a "sampled estimate" or "comparison with printed
    numbers" word is judged by the same significance rule as any other where the evidence gives one.
    """
    ev = _check_evidence(evidence)
    if word in ("not established", "not checked"):
        return word, None
    scope, why = ev.get("scope", "full"), ev.get("why")
    if scope == "not claimed":
        return "not established", f"the paper does not make this claim: {why}"
    if scope in ("by construction", "estimate") and word in ("holds", "partly"):
        what = ("true by construction, the check cannot fail" if scope == "by construction"
                else f"a {check or 'check'} of what the claim needs certified")
        return "not established", f"{what}: {why}"
    if ev.get("p_value") is not None:
        family = int(ev.get("family", 1))
        level = LEVEL / family
        if float(ev["p_value"]) > level:
            over = f" ({LEVEL:g} over {family} comparisons)" if family > 1 else ""
            return "not established", (f"within noise: p = {float(ev['p_value']):.2g} > {level:.2g}{over}"
                                       + (f"; {why}" if why else ""))
    if ev.get("margin") is not None and abs(float(ev["margin"])) < 2 * float(ev["se"]):
        return "not established", (f"within noise: margin {float(ev['margin']):.2g} < 2 s.e. "
                                   f"({2 * float(ev['se']):.2g})" + (f"; {why}" if why else ""))
    if scope == "special case" and word == "holds":
        return "partly", f"holds on a special case of the claim's scope only: {why}"
    if ev.get("failed_part") and word == "holds":
        return "partly", f"a part fails: {ev['failed_part']}"
    return word, None


def stronger_than_evidence(row: dict) -> str | None:
    """Why a ledger row's (or record's) verdict is stronger than its evidence earns, or None: the word
    :func:`earned` gives from the measured word (``record_verdict`` where the row keeps it, else its
    ``verdict``), the check kind and the ``evidence`` must be the row's word."""
    measured = row.get("record_verdict") or row["verdict"]
    word, why = earned(measured, row.get("check"), row.get("evidence"))
    if row["verdict"] != word:
        return f"{row.get('id', '?')}: says {row['verdict']!r}, the evidence earns {word!r} ({why or 'measured'})"
    return None


def verdict(claim, parts, numbers) -> dict:
    """{"claim", "parts" (sub-claim -> bool), "holds" (all parts; None when there is nothing to judge:
    ``parts`` None or empty), "numbers" (what was compared)}."""
    parts = {k: bool(v) for k, v in (parts or {}).items()}
    return {"claim": claim, "holds": all(parts.values()) if parts else None, "parts": parts, "numbers": numbers}


def verdict_word(v) -> str:
    """'holds', 'partly' (some parts hold), 'fails', or 'not established' when there was nothing to judge
    (``holds`` None: e.g. a claim about an iteration beyond the run's horizon)."""
    if v["holds"] is None:
        return "not established"
    if v["holds"]:
        return "holds"
    return "partly" if any(v["parts"].values()) else "fails"


def reason(v) -> str:
    """Why a verdict (or ledger record) is what it is, in one line: its ``reason`` if it has one, else the
    parts that fail and its ``note``; "all parts hold" when none fails; "nothing to judge" when it had none."""
    if v.get("reason"):
        return v["reason"]
    failed = [k for k, ok in (v.get("parts") or {}).items() if not ok]
    why = "; ".join(filter(None, ["not: " + "; ".join(failed) if failed else "", v.get("note") or ""]))
    if why:
        return why
    return "nothing to judge" if v.get("holds", v.get("verdict")) in (None, "not established") else "all parts hold"


def verdict_lines(checks, width: int = 120, label=None) -> list:
    """Each verdict (or ledger record) as ``<claim>: <word>`` and, under it, ``why: <reason>`` (:func:`reason`),
    each wrapped at ``width`` characters; ``label(check)``, when given, is put before the claim in brackets."""
    out = []
    for v in checks:
        word = v["verdict"] if "holds" not in v else verdict_word(v)
        head = (f"[{label(v)}] " if label else "") + f"{v['claim']}: {word}"
        out += textwrap.wrap(head, width, subsequent_indent="    ", break_on_hyphens=False)
        out += textwrap.wrap("why: " + reason(v), width, initial_indent="    ", subsequent_indent="         ",
                             break_on_hyphens=False)
    return out


def _short(numbers) -> str:
    text = json.dumps(io.as_json(numbers), separators=(",", ":"))
    for a, b in [("\"", ""), ("chi_", "χ")]:
        text = text.replace(a, b)
    return text if len(text) < 400 else text[:397] + "..."


def _significant(x: float, digits: int = 3) -> float:
    """``x`` to ``digits`` significant digits (3.6e-4 stays 3.6e-4, not 0.0)."""
    return float(f"{x:.{digits}g}")


def _rounded(numbers):
    return json.loads(json.dumps(io.as_json(numbers)), parse_float=lambda s: _significant(float(s)))


def claims_table(checks) -> tuple:
    """(headers, rows) of the checks: grid, claim, verdict, parts (yes / no each) and the numbers
    compared (3 significant digits, cut at 400 characters)."""
    body = [[r["grid"], r["claim"], verdict_word(r),
             "; ".join(f"{k}: {'yes' if v else 'no'}" for k, v in r["parts"].items()), _short(_rounded(r["numbers"]))]
            for r in checks]
    return ["grid", "claim", "verdict", "parts", "numbers"], body


def claims_text(checks, width: int = 120) -> str:
    """The checks of :func:`claims_table` as one block per check, wrapped at ``width`` characters: the
    claim (and grid), the verdict with its parts, the numbers compared."""
    blocks = []
    for row in claims_table(checks)[1]:
        grid, claim, word, parts, numbers = row
        lines = [f"{claim} [{grid}]", f"{word}: {parts}", f"numbers: {numbers}"]
        blocks.append("\n".join(textwrap.fill(line, width, initial_indent="  " if i else "",
                                               subsequent_indent="    ", break_on_hyphens=False)
                                 for i, line in enumerate(lines)))
    return "\n".join(blocks)


def claims_markdown(checks) -> str:
    """``claims.md``: the verdict per grid and claim, then the details of every check."""
    claims = list(dict.fromkeys(r["claim"] for r in checks))
    grids = list(dict.fromkeys(r["grid"] for r in checks))
    verdicts = {(r["grid"], r["claim"]): verdict_word(r) for r in checks}
    pivot = report.markdown_table(["grid"] + claims, [[g] + [verdicts.get((g, c), "") for c in claims] for g in grids])
    return ("Verdict per grid and claim:\n\n" + pivot + "\n\nDetails:\n\n"
            + report.markdown_table(*claims_table(checks)) + "\n")


def claim_record(claim_id: str, paper: str, location: str, statement: str, judged, numbers, check: str | None, *,
                 reading: str | None = None, result: str | None = None, command: str | None = None,
                 note: str | None = None, evidence: dict | None = None) -> dict:
    """One verdict record of the claims ledger.

    Args:
      claim_id: a stable id, e.g. ``"core-thm3"``.
      paper: one of :data:`PAPERS`; ``location``: where in it, e.g. ``"Thm. 3"`` (printed as "core Thm. 3").
      statement: the claim in one line.
      judged: a :func:`verdict` dict (its word: :func:`verdict_word`, ``"not established"`` when it had
        nothing to judge) or a word of :data:`WORDS`.
      numbers: the numbers behind the verdict (JSON-able).
      check: the check kind, one of :data:`CHECK_KINDS` (None for a claim that is "not checked").
      reading: a docs/ anchor where the paper is ambiguous; ``result``: the results/ path; ``command``:
        the command that made it.
      note: the reason that qualifies the verdict word, in a few words (e.g. "direction only, not the
        size", "the bound is 670-18 000x the measured value"); the word stays one of :data:`WORDS`.
      evidence: what the word rests on (:data:`EVIDENCE_KEYS`: scope and why, p_value and family, margin
        and se, failed_part), judged by :func:`earned` in the ledger; the record keeps the measured word.

    Returns:
      ``{"id", "paper", "location", "statement", "verdict", "note", "parts", "numbers", "check", "reading",
      "result", "command"}`` and ``"evidence"`` when any is given (``parts``: the sub-claims of a
      :func:`verdict` dict, else {}).

    Raises:
      ValueError: an empty id or statement, an unknown paper, verdict word, check kind or evidence key.
    """
    if not claim_id or not statement:
        raise ValueError("a claim record needs an id and a statement")
    if paper not in PAPERS:
        raise ValueError(f"paper={paper!r} must be one of {PAPERS}")
    if isinstance(judged, dict):
        word, parts = ("not established" if judged["holds"] is None else verdict_word(judged)), judged["parts"]
    else:
        word, parts = judged, {}
    if word not in WORDS:
        raise ValueError(f"verdict={word!r} must be one of {WORDS}")
    if check not in CHECK_KINDS and not (check is None and word == "not checked"):
        raise ValueError(f"check={check!r} must be one of {CHECK_KINDS} (None only for 'not checked')")
    out = {"id": claim_id, "paper": paper, "location": location, "statement": statement, "verdict": word,
           "note": note, "parts": parts, "numbers": io.as_json(numbers), "check": check, "reading": reading,
           "result": result, "command": command}
    evidence = _check_evidence(evidence)
    if evidence:  # only where there is some: records stored before the rule keep their form
        out["evidence"] = io.as_json(evidence)
    return out


def ledger_markdown(records) -> str:
    """A markdown table of claim records: id, where, statement, verdict, check, numbers (rounded, cut), result."""
    rows = [[r["id"], f"{r['paper']} {r['location']}", r["statement"],
             r["verdict"] + (f" ({r['note']})" if r.get("note") else ""), r["check"],
             _short(_rounded(r["numbers"])), r["result"] or ""] for r in records]
    return report.markdown_table(["id", "where", "statement", "verdict", "check", "numbers", "result"], rows) + "\n"
