"""The 1-layer part's claims on the barriers between optima (docs/saddles.md; beyond the papers: the
"ccdyn" rows): :func:`barrier_ortho_claims` and :func:`barrier_tau_claims`, ledger records from the records
of ``saddles.along`` (``along.json``); re-exported by :mod:`ccdyn.one_layer.claims`, the part's claims module.
"""

from __future__ import annotations

from ccdyn import verdicts

__all__ = ["barrier_ortho_claims", "barrier_tau_claims"]


def _command(record: dict, command, default: str) -> str:
    return command or record.get("command") or default


# --- barriers between the optima (docs/saddles.md; beyond the papers: "ccdyn" rows) ---------------------
def _funnel_depths(per_value: dict) -> list:
    """Relative depth of each optimum at one value of a barrier study: (E_i - max_{j != i} E_ij) / E_i, the
    barrier to its nearest funnel over the certified saddles (NaN: joined to no other optimum)."""
    b = [[float("nan") if v is None else float(v) for v in row] for row in per_value.get("barrier_matrix", [])]
    out = []
    for i, row in enumerate(b):
        others = [v for j, v in enumerate(row) if j != i and v == v]
        out.append((row[i] - max(others)) / abs(row[i]) if others else float("nan"))
    return out


def _median(values):
    v = sorted(x for x in values if x == x)
    return None if not v else (v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2]))


def _barrier_numbers(record: dict) -> list:
    rows = []
    for r in record["per_value"]:
        depth = _funnel_depths(r)
        rows.append({"value": r["value"], "optima": r["n_optima"], "pairs": r.get("n_pairs", 0),
                     "certified": r.get("n_certified", 0), "joined": r.get("n_joined", 0),
                     "barrier_min": r.get("barrier_min"), "barrier_median": r.get("barrier_median"),
                     "relative_depth_median": _median(depth),
                     "all_joined": bool(depth) and all(d == d for d in depth),
                     "not_certified_because": r.get("notes", [])})
    return rows


def barrier_ortho_claims(record: dict, *, result: str = "results/saddles/ortho_eps", command: str | None = None,
                         m: int = 10) -> list:
    """Barriers against the pattern overlap ||U^T U - I|| (ortho_eps), core Thm. 3 (Eq. 11) / Fig. 1: the
    theorem says optima near every u_m persist while the overlap is small; it says nothing about the
    barriers between them. Parts: at every value the ``m`` pattern optima are there, every pair is joined
    by certified saddles with a positive barrier min(E_i, E_j) - E_ij (no two merge), and the lowest and
    the median barrier fall as the overlap grows. ``record``: ``saddles.along``'s record (``along.json``)."""
    command = _command(record, command, "python scripts/saddles.py --continuation=... (results/README.md)")
    rows = _barrier_numbers(record)
    lows = [r["barrier_min"] for r in rows]
    meds = [r["barrier_median"] for r in rows]
    have = all(v is not None for v in lows)
    parts = {f"every value: {m} pattern optima": all(r["optima"] == m for r in rows),
             "every value: all optima joined by certified saddles": all(r["all_joined"] for r in rows),
             "every value: every barrier > 0": have and min(lows) > 0,
             "the lowest barrier falls at every step of the overlap":
                 have and all(b < a for a, b in zip(lows, lows[1:])),
             "the median barrier falls at every step of the overlap":
                 have and all(b < a for a, b in zip(meds, meds[1:]))}
    numbers = {"param": record["param"], "per_value": rows}
    return [verdicts.claim_record("ccdyn-barriers-ortho-eps", "ccdyn", "docs/saddles.md (core Thm. 3 Eq. 11, Fig. 1)",
                                  "a larger pattern overlap ||U^T U - I|| lowers the barriers between the pattern "
                                  "optima without merging them (up to 0.3)",
                                  verdicts.verdict("barriers vs ortho_eps", parts, numbers), numbers,
                                  "sampled estimate", reading="docs/saddles.md#barrier-studies", result=result,
                                  command=command,
                                  note="barriers over one string per pair: upper bounds of the true barriers")]


def barrier_tau_claims(record: dict, *, result: str = "results/saddles/tau", command: str | None = None) -> list:
    """Barriers against the temperature tau of Gaussian alpha, core Cor. 2 with Sec. 5 ("non-uniform alpha
    creates more and deeper local optima"): the corollary lowers the roughness r(w_*, alpha_g) =
    z_0(alpha_g) r(w_*, alpha_u) as tau falls (z_0 <= 1), hence, by Thm. 1, more stable optima. Read as a
    barrier statement: at the smallest tau more optima than at the largest, each deeper, its relative
    funnel depth (E_i - max_j E_ij) / E_i (the barrier to its nearest optimum over the certified saddles,
    relative to its own energy, since E scales with alpha) larger in median. E is the landscape the flow
    climbs: with Gaussian alpha its potential Psi, not E_alpha (docs/saddles.md, "Which E, with Gaussian
    alpha"). ``record``: ``along.json``."""
    command = _command(record, command, "python scripts/saddles.py --continuation=... (results/README.md)")
    rows = _barrier_numbers(record)
    by_tau = sorted(rows, key=lambda r: r["value"])
    small, large = by_tau[0], by_tau[-1]
    deep = small["relative_depth_median"] is not None and large["relative_depth_median"] is not None
    parts: dict[str, bool] | None = {
        "more optima at the smallest tau than at the largest": small["optima"] > large["optima"],
        "every value: all optima joined by certified saddles": all(r["all_joined"] for r in rows),
        "deeper optima (median relative depth) at the smallest tau than at the largest":
            deep and small["relative_depth_median"] > large["relative_depth_median"]}
    numbers = {"param": record["param"], "per_value": rows}
    note = "barriers over one string per pair: upper bounds of the true barriers"
    if not deep:  # no certified saddle joins an optimum at one end: the depth has nothing to be judged on
        parts = None
        note = ("no certified saddle at the smallest or the largest tau, so no depth to "
                "compare; " + note)
    return [verdicts.claim_record("ccdyn-barriers-tau", "ccdyn", "docs/saddles.md (core Cor. 2, Sec. 5)",
                                  "Gaussian alpha at a smaller tau gives more and deeper optima (larger relative "
                                  "barriers to the nearest optimum, in the flow's potential)",
                                  verdicts.verdict("barriers vs tau", parts, numbers), numbers, "sampled estimate",
                                  reading="docs/saddles.md#barrier-studies", result=result, command=command,
                                  note=note)]
