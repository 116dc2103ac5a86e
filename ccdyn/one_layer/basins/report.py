"""The report of a basins run: its ``summary.json`` (:func:`summary`, :func:`statistics`,
:func:`write_summary`, :func:`read_summary`), the printed table with its key, its statistics in words and
its closing warning (:func:`table`, :func:`table_key`, :func:`statistics_lines`, :func:`uncertified_lines`,
:func:`warning_line`; the advice per final status, naming the flag to change, is :data:`STATUS_HINTS`),
the start-up warning of a run far dearer per init than its inits suggest (:func:`cost_warning`), and the
side-by-side comparison of several runs (:func:`comparison_rows`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ccdyn import io, report
from ccdyn.data.registry import describe
from ccdyn.one_layer import engine
from ccdyn.one_layer.basins.analysis import basin_mass_on_patterns
from ccdyn.one_layer.basins.config import BasinsConfig, cost_estimate
from ccdyn.one_layer.basins.stopping import stop_plan
from ccdyn.one_layer.engine import Status
from ccdyn.one_layer.methods import auto
from ccdyn.stats import basin_statistics, miss_phrase, round_up, simultaneous_intervals, unseen_mass

__all__ = ["STATUS_HINTS", "AUTO_HINTS", "COST_RATIO_WARN", "COST_WARN_S", "cost_warning", "statistics", "summary",
           "write_summary", "read_summary", "table_key", "statistics_lines", "uncertified_lines", "warning_line",
           "table", "STATISTICS_COLUMNS", "COMPARISON_COLUMNS", "comparison_rows"]

# What to do about inits that end in a final status other than converged, naming the flag to change (the
# scripts' words: the engine's Status knows no flags). DEAD (A(w) w = 0 on a flat region) has none.
STATUS_HINTS = {
    Status.NOT_CONVERGED: "still moving after --max_steps steps: raise --max_steps",
    Status.CYCLING: "power iteration in a period-2 cycle: use --shift > 0 (App. B.4), --method=auto or --method=flow",
    Status.NONFINITE: "use --x64 or rescale the data",
    Status.OVERFLOW: "use --x64, a smaller --step_size or rescale the data",
    Status.UNDERFLOW: "use --x64 or rescale the data",
    Status.CIRCLING_KINK: "power iteration has no fixed point on a ReLU kink: use --method=auto (power iteration, "
                          "the sliding flow for the inits that circle) or --method=flow",
    Status.KINK_LIMIT: "more views on kink hyperplanes at once than the sliding flow follows (even in its wider "
                       "second pass): use a smaller --tol",
    Status.STALLED: "the sliding flow made no progress at kinks (stuck, or in a cycle among them) short of a "
                    "Clarke-stationary point (docs/flow.md, \"Stalled\"); no flag is known to help",
}
# Under --method=auto a row circling a kink is handed to the sliding flow once it returns to an activation
# pattern it had, and any row still in the power phase after auto.HANDOVER steps; one that ends CIRCLING_KINK
# was still in the power phase at --max_steps, which then is at most HANDOVER
AUTO_HINTS = {
    Status.CIRCLING_KINK: "power iteration wandered across kinks until --max_steps without returning to an "
                          f"activation pattern (so it was never handed to the flow; after {auto.HANDOVER} power steps "
                          "it would be): raise --max_steps or use --method=flow",
}


COST_RATIO_WARN = 10.0  # warn when one init's field evaluation costs this many times a uniform alpha's ...
COST_WARN_S = 60.0  # ... and the run may take longer than this (every init to --max_steps)


def cost_warning(cfg: BasinsConfig, ds64, estimate: dict | None = None) -> str | None:
    """One warning line before a run that will take far longer than its inits suggest (a field >=
    :data:`COST_RATIO_WARN` times a uniform alpha's per init, and >= :data:`COST_WARN_S` if every init ran to
    ``max_steps``), with the time and the flags that change it; None otherwise. ``estimate``: that of
    :func:`ccdyn.one_layer.basins.config.cost_estimate` (measured here when not given)."""
    est = cost_estimate(cfg, ds64) if estimate is None else estimate
    if est is None or est["ratio"] < COST_RATIO_WARN or est["max_s"] < COST_WARN_S:
        return None
    cost = "O(n^2)" if est.get("taylor_order") is None else f"O(n K) (K = {est['taylor_order']} terms, Lemma 1)"
    return (f"warning: --alpha={cfg.alpha} costs {cost} per init step on these {est['n']} points, "
            f"{est['ratio']:.0f}x a uniform alpha (measured): --n_init={cfg.n_init} may take up to "
            f"{report.duration(est['max_s'])} (every init to --max_steps={cfg.dynamics.max_steps}; inits that "
            "converge sooner cost less); lower --n_init (or the points, --n_samples) or use --alpha=uniform")


def statistics(counts, n: int, config: dict | None = None) -> dict:
    """The ``statistics`` record of ``summary.json`` (docs/statistics.md): :func:`ccdyn.stats.basin_statistics`
    of the optima's ``counts`` out of all ``n`` inits, with the intervals (``intervals``, one per count)
    simultaneous at the level the run's stopping rule allows (:func:`stop_plan`: 1 - alpha / K when the
    stop depended on the counts), the largest half-width, and ``stop`` (the plan, and whether its targets
    were met) for a run with ``target_miss`` / ``target_halfwidth``."""
    cfg = None if config is None else BasinsConfig.from_dict(config)
    plan = None if cfg is None else stop_plan(cfg)
    out = basin_statistics(counts, n)
    level = out["confidence"] if plan is None else plan["interval_confidence"]
    if level != out["confidence"]:
        out["intervals"] = simultaneous_intervals(np.asarray(counts), n, level).tolist()
    ci = np.asarray(out["intervals"]).reshape(-1, 2)
    out["interval_confidence"] = level
    out["max_halfwidth"] = float(np.max(ci[:, 1] - ci[:, 0]) / 2) if ci.size else None
    if plan is not None:
        miss_met = plan["target_miss"] is None or (n >= plan["n_min"] and plan["claimed_miss"] <= plan["target_miss"])
        half_met = plan["target_halfwidth"] is None or (
            out["max_halfwidth"] is not None and out["max_halfwidth"] <= plan["target_halfwidth"])
        out["stop"] = {**plan, "miss_met": bool(miss_met), "halfwidth_met": bool(half_met)}
        if plan["data_dependent"]:  # the miss claim of the first checkpoint, fixed before the run
            out["miss_bound"], out["miss_phrase"] = plan["claimed_miss"], miss_phrase(plan["first_checkpoint"])
    return out


def summary(an: dict, result: dict, *, config: dict, record: dict, timings_s: dict, sizing: dict | None = None) -> dict:
    """The ``summary.json`` of a basins run: its config, per-status counts (``n_<status>``), the optima
    rows of :func:`analyze` (each with ``ci_simultaneous``, its interval of :func:`statistics`), the
    basin mass of optima not found (:func:`ccdyn.stats.unseen_mass`), ``statistics`` (:func:`statistics`:
    the per-basin miss bound, how the intervals were made, the number of optima), and the run record
    (``command``, ``versions``, ``devices``: see :func:`ccdyn.cli.run_record`), and ``sizing``
    (:func:`sizing`) when given."""
    rows, counts = an["rows"], an["status_counts"]
    order = engine.FINAL_STATUSES  # every final status, those the engine adds included
    stats = statistics([r["count"] for r in rows], int(result["status"].shape[0]), config)
    for r, ci in zip(rows, stats.pop("intervals")):
        r["ci_simultaneous"] = ci
    return {
        "state": "complete",
        "command": record["command"],
        "config": config,
        "n_init": int(result["status"].shape[0]),
        **{f"n_{s.key}": counts[s.key] for s in order},
        "n_optima": len(rows),
        "n_endpoint_clusters": an.get("n_clusters"),
        "n_stable_optima": sum(r["stable"] for r in rows),
        "n_certified_smooth": sum(r.get("certificate") == "smooth" for r in rows),
        "n_certified_kink": sum(r.get("certificate") == "kink-kkt" for r in rows),
        "basin_mass_on_patterns": basin_mass_on_patterns(rows, planted=an["planted"]),
        "unseen_mass": unseen_mass([r["count"] for r in rows], int(result["status"].shape[0])),
        "statistics": stats,
        "optima": rows,
        "steps_median": float(np.median(result["steps"])),
        "versions": record["versions"],
        "devices": record["devices"],
        "num_processes": record["num_processes"],
        "timings_s": timings_s,
        "init_steps_per_s": float(np.sum(result["steps"])) / timings_s["run"],
        **({} if sizing is None else {"sizing": sizing}),
    }


def write_summary(run_dir, s: dict) -> None:
    """Writes ``<run_dir>/summary.json`` atomically."""
    io.write_json(Path(run_dir) / "summary.json", s)


def read_summary(run_dir) -> dict:
    """Reads ``<run_dir>/summary.json`` of a basins run (``ValueError`` if it is missing)."""
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        raise ValueError(f"{path} does not exist")
    return io.read_json(path)


TABLE_MIN_FRACTION, TABLE_MAX_ROWS = 1e-3, 30


def _pct(level: float) -> str:
    """A confidence level in per cent, rounded down to 4 digits (0.9916667 -> 99.16%)."""
    digits = 4 - 2  # 2 digits after the point
    return f"{np.floor(100 * level * 10 ** digits) / 10 ** digits:g}%"


def table_key(level: float = 0.95) -> list:
    """The key of :func:`table`'s columns (one entry per column and symbol), ``level`` that of the intervals."""
    return ["key: optimum: its index, largest basin first; fraction: its basin, the share of all inits that converged "
            "to it;",
            f"     CI: an interval for each fraction, all of them right at once with probability >= {_pct(level)} "
            "(mass-weighted",
            "     binomial test inversion, docs/statistics.md: valid whatever the number of optima; summary.json "
            "also keeps",
            "     each fraction's own 95% Wilson interval, ci95); count: the inits in its basin; energy: E(w*) "
            "(Eq. 3);",
            "     gap: eigengap lambda1 - lambda2 of A(w*); stat: stationarity, the certificate's own measure after "
            "the float64",
            "     refinement: off kinks ||P^perp grad E|| / ||grad E||, on kinks the KKT residual (relative to "
            "lambda1);",
            "     kink: the ReLU hyperplanes w*^T x_i = 0 it sits on; certificate: the test behind stable (smooth: "
            "the flow's",
            "     Jacobian, Eq. 7; kink-kkt: the same on the kink ridge plus the multipliers; none: not certified);",
            "     stable: certified stable; LME: top eigenvector of A(w*) with a distinct eigenvalue (Def. 3); "
            "pattern: the",
            "     planted u_m nearest w*; cos: their cosine (|cos| for odd or even activations); -: does not apply."]


def statistics_lines(s: dict) -> list:
    """The summary's statistics in words a newcomer reads correctly (docs/statistics.md): what cannot have
    been missed, how many optima there likely are, which share of the inits these claims cover, and what a
    stopping rule did. Where fewer than the documented share of inits converged
    (:data:`ccdyn.stats.MIN_CONVERGED_SHARE`, section 7) one line says that no claim is made about missed
    optima or their number, and why, in place of the first two."""
    st, n, found = s.get("statistics"), s["n_init"], len(s["optima"])
    if st is None:
        return []
    r = st["richness"]
    more = r["chao1"] - r["observed"]
    bound = f"{round_up(100 * st['miss_bound']):g}%"
    conv = st.get("converged", sum(o["count"] for o in s["optima"]))  # a summary from before the coverage
    share, claims = conv / n, st.get("claims", True)
    if not claims:
        lines = [f"no claim about missed optima or their number: only {conv} of {n} inits ({_share(share)}) "
                 f"converged, below the {100 * st['min_converged_share']:g}% these statistics need "
                 f"(docs/statistics.md section 7); the {n - conv} others reached no optimum and may belong to "
                 "optima not in this table, of any size up to their share; each fraction and interval counts only "
                 "the inits that converged to that optimum"]
    else:
        lines = [f"{st['miss_phrase']}: any optimum not in this table has a basin < {bound} of the inits (wrong "
                 f"only with probability <= {100 * (1 - st['confidence']):g}% over the random inits; smaller basins "
                 "may exist)",
                 f"number of optima, estimated (Chao1, from the {r['f1']} optima found once and {r['f2']} twice): "
                 f"{r['chao1']:.1f}, {100 * r['confidence']:g}% interval "
                 f"[{float(r['low']):.1f}, {float(r['high']):.1f}]: "
                 + (f"none beyond the {found} found" if more < 0.05 else
                    f"about {more:.1f} beyond the {found} found, each with a basin < {bound}")]
        if conv < n:
            lines.append(f"     both cover the {conv} of {n} inits ({_share(share)}) that converged: the {n - conv} "
                         f"others ({_share(1 - share)}) reached no optimum and may belong to optima not found")
    plan = st.get("stop")
    if plan is not None:
        what = " and ".join(w for w in (
            None if plan["target_miss"] is None else f"--target_miss={plan['target_miss']:g} (at least "
                                                      f"{plan['n_min']} inits, fixed before the run)",
            None if plan["target_halfwidth"] is None else f"--target_halfwidth={plan['target_halfwidth']:g} "
                                                           f"(largest half-width {st['max_halfwidth']:.4f})") if w)
        met = plan["miss_met"] and plan["halfwidth_met"]
        cap = s["config"]["n_init"]
        lines.append(f"{what}: " + (f"met after {n} of at most {cap} inits" if met else f"not met in {n} inits"))
        if plan["data_dependent"]:
            lines.append(f"     the stop depended on the counts: intervals at {_pct(st['interval_confidence'])} "
                         f"each of {plan['checkpoints']} checkpoints ({_pct(plan['confidence'])} together), "
                         f"and the miss claim is that of the first checkpoint ({plan['first_checkpoint']} inits)")
    return lines


def table(s: dict) -> str:
    """The stdout summary of a basins run: one row per optimum holding >= 0.1% of the inits (at most
    the 30 largest), one line for the rest (summary.json keeps every row), the key of the columns
    (:func:`table_key`), the statistics in words (:func:`statistics_lines`), then the status counts.
    ``kink`` is the number of ReLU hyperplanes the optimum sits on; ``certificate`` the test that
    established ``stable`` (:func:`ccdyn.one_layer.certify.assess_many`). The intervals shown are the
    simultaneous ones (``ci_simultaneous``); a summary written before them shows its Wilson ``ci95``."""
    rows = s["optima"]
    st = s.get("statistics")
    level = 0.95 if st is None else st["interval_confidence"]
    shown = [r for r in rows if r["fraction"] >= TABLE_MIN_FRACTION][:TABLE_MAX_ROWS]
    ci = lambda r: r.get("ci_simultaneous", r["ci95"])
    body = [[r["optimum"], f"{r['fraction']:.4f}", f"[{ci(r)[0]:.4f}, {ci(r)[1]:.4f}]", r["count"],
             r["energy"], r["eigengap"], f"{r.get('stationarity', r['residual']):.1e}", r.get("kink_rank", "-"),
             r.get("certificate", "-"), r["stable"], r["is_lme"],
             "-" if r["pattern"] is None else f"u{r['pattern']}",
             "-" if r["overlap"] is None else f"{r['overlap']:.4f}"] for r in shown]
    text = report.format_table(["optimum", "fraction", f"{_pct(level)} CI (all)" if st else "95% CI", "count",
                                "energy", "gap", "stat", "kink", "certificate", "stable", "LME", "pattern", "cos"],
                               body)
    rest = rows[len(shown):]  # rows are largest first, so the shown ones are a prefix
    if rest:
        text += (f"\n... and {len(rest)} more rows (optima or uncertified endpoint clusters) holding "
                 f"{sum(r['count'] for r in rest) / s['n_init']:.4f} of the inits ({sum(r['stable'] for r in rest)} "
                 f"of them stable), each < {TABLE_MIN_FRACTION:g} or beyond the {TABLE_MAX_ROWS} largest: "
                 "see summary.json")
    counts = ", ".join(f"{st_.text} {s.get('n_' + st_.key, 0)}" for st_ in engine.FINAL_STATUSES)
    notes: list[str] = []
    target = s["config"].get("target_unseen")
    if target is not None:
        notes.insert(0, f"--target_unseen={target:g}: " + (
            f"met after {s['n_init']} of at most {s['config']['n_init']} inits" if s["n_init"] < s["config"]["n_init"]
            else f"ran all --n_init={s['n_init']} inits"))
    if "sizing" in s:
        z = s["sizing"]
        how = f"chosen by the rule for {z['backend']} ({', '.join(z['auto'])})" if z["auto"] else "given"
        notes.append(f"tile {z['tile']}, chunk_size {z['chunk_size']} on {z['n_devices']} x {z['device_kind']} "
                     f"({z['device_memory_gib']} GiB): {how}")
    return "\n".join([text, *(table_key(level) if st else []), "", *statistics_lines(s),
                      f"inits {s['n_init']}: {counts}",
                      f"optima {sum(r.get('certificate') != 'none' for r in rows)}, stable {s['n_stable_optima']} "
                      f"(certificate smooth {s.get('n_certified_smooth', '-')}, "
                      f"kink-kkt {s.get('n_certified_kink', '-')}), " + _pattern_mass(s['basin_mass_on_patterns']),
                      *uncertified_lines(rows),
                      *notes, *warning_line(s)])


def _pattern_mass(mass: float | None) -> str:
    """The summary line's basin mass on planted patterns, or that the data has none."""
    if mass is None:
        return "no planted patterns in the data (no basin mass on patterns to report)"
    return f"basin mass on planted patterns (stable, cos >= 0.9): {mass:.4f}"


def _share(x: float) -> str:
    """A share of the inits in per cent, never shown as 0% or 100% unless it is exactly that."""
    pct = 100 * x
    if 0 < pct < 0.01:
        return "< 0.01%"
    if 99.99 < pct < 100:
        return "> 99.99%"
    return f"{pct:.2f}".rstrip("0").rstrip(".") + "%"


def warning_line(s: dict) -> list:
    """The table's closing warning: one line when some inits ended in a final status with a hint
    (:data:`STATUS_HINTS`: not converged, cycling, circling a kink, at the kink limit, out of range; under
    ``--method=auto`` :data:`AUTO_HINTS` where they differ),
    counting them and naming the flag to change, largest count first; [] when none did."""
    n = s["n_init"]
    hints = STATUS_HINTS
    if s.get("config", {}).get("dynamics", {}).get("method") == "auto":
        hints = {**STATUS_HINTS, **AUTO_HINTS}
    ended = sorted(((s.get("n_" + st.key, 0), st) for st in hints), key=lambda cs: -cs[0])
    ended = [(c, st) for c, st in ended if c]
    if not ended:
        return []
    total = sum(c for c, _ in ended)
    what = "; ".join(f"{c} {st.text}: {hints[st]}" for c, st in ended)
    return [f"warning: {total} of {n} inits ({_share(total / n)}) ended without converging ({what})"]


def uncertified_lines(rows) -> list[str]:
    """One line saying how many endpoint clusters no test certified (``certificate`` none) and why: they are
    listed with the optima but are not claimed to be optima (their reasons: ``certificate_note``)."""
    none = [r for r in rows if r.get("certificate") == "none"]
    if not none:
        return []
    reasons = sorted({str(r.get("certificate_note") or "no reason recorded").split(" (")[0] for r in none})
    return [f"not certified: {len(none)} more of the table's {len(rows)} rows (holding {sum(r['count'] for r in none)} "
            f"inits) are endpoint clusters that no test certified, not counted as optima: {'; '.join(reasons)}"]



_COMPARED: tuple[Status, ...] = (Status.CONVERGED, Status.NOT_CONVERGED, Status.CYCLING, Status.DEAD,
                                 Status.NONFINITE, Status.OVERFLOW, Status.UNDERFLOW)
_COMPARED += tuple(st for st in engine.FINAL_STATUSES if st not in _COMPARED)  # the sliding flow's
# the statistics of docs/statistics.md: no basin >= miss_bound missed (95%), the simultaneous intervals' level and
# largest half-width, Chao1 with its interval, and the stop rule's targets and whether they were met
STATISTICS_COLUMNS = ("miss_bound", "interval_level", "max_halfwidth", "chao1", "chao1_low", "chao1_high", "stop_rule",
                      "stop_met")
COMPARISON_COLUMNS = ("run", "act", "alpha", "tau", "method", "data", "n_init", "optima", "stable_optima",
                      "stable_smooth", "stable_on_kink", "mass_on_patterns") + tuple(s.key for s in _COMPARED) + (
                      "endpoint_clusters", "certified_smooth", "certified_kink", "analyze_s", "total_s"
                      ) + STATISTICS_COLUMNS


def comparison_rows(named_summaries) -> list:
    """One row per basins run (``[(name, summary.json dict)]``) under :data:`COMPARISON_COLUMNS` ("-" where
    an older summary lacks a field)."""
    rows = []
    for name, s in named_summaries:
        c = s["config"]
        rows.append([name, c["act"], c["alpha"], c["tau"] if c["alpha"] == "gaussian" else "-",
                     c["dynamics"]["method"], describe(c["data"]),
                     s["n_init"], s["n_optima"], s["n_stable_optima"],
                     sum(o["stable"] and o["smooth"] for o in s["optima"]),
                     sum(o["stable"] and not o["smooth"] for o in s["optima"]),
                     "-" if (mass := s["basin_mass_on_patterns"]) is None else round(mass, 4)]
                    + [s.get(f"n_{st.key}", 0) for st in _COMPARED]
                    + [s.get(k, "-") for k in ("n_endpoint_clusters", "n_certified_smooth", "n_certified_kink")]
                    + [round(s["timings_s"][k], 1) if k in s.get("timings_s", {}) else "-"
                       for k in ("analyze", "total")]
                    + _statistics_cells(s))
    return rows


def _statistics_cells(s: dict) -> list:
    """The :data:`STATISTICS_COLUMNS` cells of one summary ("-" for a summary written before them; "no claim"
    for the miss bound and Chao1 of a run where too few inits converged, :func:`ccdyn.stats.coverage`)."""
    st = s.get("statistics")
    if st is None:
        return ["-"] * len(STATISTICS_COLUMNS)
    r, plan, c = st["richness"], st.get("stop"), s["config"]
    if plan is not None:
        rule = " ".join(f"{k}={plan[k]:g}" for k in ("target_miss", "target_halfwidth") if plan[k] is not None)
        met = plan["miss_met"] and plan["halfwidth_met"]
    elif c.get("target_unseen") is not None:
        rule, met = f"target_unseen={c['target_unseen']:g}", s["n_init"] < c["n_init"]
    else:
        rule, met = "-", "-"
    half = "-" if st["max_halfwidth"] is None else round(st["max_halfwidth"], 5)
    if not st.get("claims", True):  # too few converged: no claim about missed optima or their number
        return ["no claim", float(f"{st['interval_confidence']:.6g}"), half, *["no claim"] * 3, rule, met]
    return [float(f"{st['miss_bound']:.3g}"), float(f"{st['interval_confidence']:.6g}"), half, round(r["chao1"], 2),
            round(float(r["low"]), 2), round(float(r["high"]), 2), rule, met]  # "inf" when no optimum was found
