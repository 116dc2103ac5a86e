"""App. E.3 (Figs. 12-13) of the core paper: the MNIST claims' verdicts on paired per-seed differences of the
filters' scores (:mod:`ccdyn.two_layer.studies.mnist`), their CSV, summary table and record, and their ledger
records; re-exported by :mod:`ccdyn.two_layer.claims`, the part's claims module (kept apart so that it stays
small)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn import stats, verdicts

__all__ = ["CONDITIONS", "mnist_claims", "mnist_scores_csv", "mnist_summary_table", "mnist_summary_key",
           "mnist_summary", "mnist_ledger"]

CONDITIONS = ("no_aug", "aug")  # the paired App. E.3 runs (ccdyn.two_layer.studies.mnist): without / with crops


def mnist_claims(record: dict, confidence: float = 0.95) -> list:
    """Verdicts on App. E.3 / Figs. 12-13 from paired per-seed differences (aug - no_aug) of the final
    scores: each claim holds when the mean difference has the claimed sign and its t interval over
    seeds excludes 0. Seeds with a non-finite run are left out (and counted)."""
    out = []
    for key, claim in (("hf", "augmentation gives smoother filters, weaker high frequencies (App. E.3, Fig. 13)"),
                       ("max_cos", "augmentation gives more diverse filters, lower max cosine (issue #15's "
                                   "reading of Figs. 12-13)"),
                       ("max_cos_live", "the same among the filters that fire on the data (dead filters left out)")):
        a, b = record["final"]["aug"][key], record["final"]["no_aug"][key]
        diff = a - b
        ok = np.isfinite(diff)
        mean, lo, hi = stats.t_interval(diff[ok], confidence)
        nan = float("nan")  # (numpy's nanmean, as the committed summaries have it, where a seed is left)
        numbers = {"aug": float(np.nanmean(a)) if ok.any() else nan,
                   "no_aug": float(np.nanmean(b)) if ok.any() else nan, "diff": mean,
                   "diff_ci": [lo, hi], "seeds": int(ok.sum()), "seeds_dropped": int((~ok).sum())}
        parts: dict[str, bool] | None = {"lower with augmentation on average": bool(mean < 0),
                 f"{int(100 * confidence)}% interval over seeds below 0": bool(hi < 0)}
        if not ok.any():  # nothing to judge: named, not a mean of nothing
            parts, numbers["reason"] = None, f"every seed's run went non-finite ({int((~ok).sum())} of {ok.size})"
        out.append(dict(verdicts.verdict(claim, parts, numbers), grid="mnist"))
    return out


def mnist_scores_csv(record: dict) -> tuple:
    """(header, rows) of ``scores.csv``: one row per seed and condition."""
    keys = ("hf", "max_cos", "dead", "max_cos_live")
    header = (["seed", "condition", "finite", "stopped_at"] + list(keys) + [f"{k}_init" for k in keys]
              + ["final_loss"])
    rows = []
    for cond in CONDITIONS:
        f, i = record["final"][cond], record["init"][cond]
        for s in range(len(f["hf"])):
            rows.append([s, cond, bool(record["finite"][cond][s]), int(record["stopped_at"][cond][s])]
                        + [float(f[k][s]) for k in keys] + [float(i[k][s]) for k in keys]
                        + [float(record["loss"][cond][-1, s])])
    return header, rows


def mnist_summary_table(record: dict, confidence: float = 0.95) -> tuple:
    """(header, rows): per condition, each score (final and initial) over the finite seeds with an
    interval that stays in the score's range by construction. The dead-filter fraction: the pooled count of
    dead filters over all filters of those seeds, with its Wilson interval (:func:`ccdyn.stats.wilson_interval`;
    filters as independent draws). The other scores: the mean with its t interval over seeds intersected
    with the score's range (high-frequency fraction [0, 1], cosines [-1, 1]); the mean lies in that range,
    so the intersection keeps the interval's coverage. Rows as :func:`mnist_summary_key` explains."""
    def t_cell(v, lo_range, hi_range):
        v = np.asarray(v, float)
        mean, lo, hi = stats.t_interval(v[np.isfinite(v)], confidence)
        return f"{mean:.3f} [{max(lo, lo_range):.3f}, {min(hi, hi_range):.3f}]"

    def dead_cell(cond, at):
        ok = np.asarray(record["finite"][cond], bool)
        per_run = int(np.prod(np.shape(record["W"][cond])[1:3]))  # K receptive fields x M filters
        count = int(np.rint(np.asarray(record[at][cond]["dead"], float)[ok] * per_run).sum())
        n = per_run * int(ok.sum())
        if n == 0:
            return "-"
        from scipy.special import ndtri  # the normal quantile of the Wilson interval

        lo, hi = stats.wilson_interval(count, n, z=float(ndtri(0.5 + confidence / 2)))
        return f"{count / n:.3f} [{lo:.3f}, {hi:.3f}]"

    header = ["condition", "seeds (ok)", "high-freq. fraction", "max cosine", "dead filters", "max cos. (live)"]
    rows = [[f"{cond}{'' if at == 'final' else ' at init'}",
             f"{len(record['finite'][cond])} ({int(np.sum(record['finite'][cond]))})",
             t_cell(record[at][cond]["hf"], 0.0, 1.0), t_cell(record[at][cond]["max_cos"], -1.0, 1.0),
             dead_cell(cond, at), t_cell(record[at][cond]["max_cos_live"], -1.0, 1.0)]
            for at, conds in (("final", CONDITIONS), ("init", CONDITIONS[:1])) for cond in conds]
    return header, rows


def mnist_summary_key(confidence: float = 0.95) -> str:
    """The key printed under :func:`mnist_summary_table`."""
    c = int(round(100 * confidence))
    return (f"key: score [{c}% interval]. dead filters: pooled count over all filters of the finite seeds, Wilson\n"
            f"     interval; other scores: mean over seeds, t interval cut to the score's range ([0, 1];\n"
            "     cosines [-1, 1]). seeds (ok): seeds run (those that stayed finite, the only ones counted);\n"
            "     at init: the same scores of the initial filters.")


def mnist_summary(record: dict, cfg, data: str) -> dict:
    """The JSON record of a run (without the filters): config, per-seed scores, the claims' verdicts."""
    keep = ("side", "n_images", "finite", "stopped_at", "final", "init")
    return {"data": data, "config": dataclasses.asdict(cfg), **{k: record[k] for k in keep},
            "final_loss": {c: record["loss"][c][-1] for c in CONDITIONS}, "claims": mnist_claims(record)}


def mnist_ledger(summary: dict, *, result: str = "results/two_layer/mnist", command: str | None = None) -> list:
    """The App. E.3 verdicts of :func:`mnist_summary` (or ``summary.json``) as ledger records; ``command``:
    the one given, else the run record's (``summary.json``), else the results/README.md command."""
    command = (command or summary.get("command")
               or "python scripts/mnist.py --n_seeds=10 --output_dir=results/two_layer/mnist")
    ids = ("core-appE3-smoother", "core-appE3-more-diverse", "core-appE3-more-diverse-live")
    diverse = {"scope": "not claimed", "why": "App. E.3 says the filters of each RF capture a diverse set of "
               "patterns (Fig. 12, without augmentation) and that augmentation makes them smoother; it does not "
               "say augmentation makes them more diverse (issue #15's reading)"}
    return [verdicts.claim_record(i, "core", "App. E.3, Figs. 12-13", c["claim"], c, c["numbers"], "sampled estimate",
                                  reading="docs/two_layer_readings.md (MNIST)", result=result, command=command,
                                  evidence=diverse if "diverse" in i else None)
            for i, c in zip(ids, summary["claims"])]
