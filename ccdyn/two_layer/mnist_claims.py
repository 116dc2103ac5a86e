"""Verdicts and tables of the App. E.3 experiment (:mod:`ccdyn.two_layer.mnist`): the paper's claim that
filters learned with augmentation are smoother (Fig. 13, weaker high frequencies), and issue #15's
reading that they are more diverse, judged on per-seed paired differences (augmentation minus none)
with a Student t interval over seeds; the per-seed CSV, the summary table and the JSON record."""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn import stats, verdicts
from ccdyn.two_layer.mnist import CONDITIONS, MnistConfig

__all__ = ["claims", "scores_csv", "summary_table", "summary"]


def claims(record: dict, confidence: float = 0.95) -> list:
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
        numbers = {"aug": float(np.nanmean(a)), "no_aug": float(np.nanmean(b)), "diff": mean,
                   "diff_ci": [lo, hi], "seeds": int(ok.sum()), "seeds_dropped": int((~ok).sum())}
        parts = {"lower with augmentation on average": bool(mean < 0),
                 f"{int(100 * confidence)}% interval over seeds below 0": bool(hi < 0)}
        out.append(dict(verdicts.verdict(claim, parts, numbers), grid="mnist"))
    return out


def scores_csv(record: dict) -> tuple:
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


def summary_table(record: dict, confidence: float = 0.95) -> tuple:
    """(header, rows): per condition, the mean and t interval over seeds of each score (final and initial)."""
    def cell(v):
        v = np.asarray(v, float)
        mean, lo, hi = stats.t_interval(v[np.isfinite(v)], confidence)
        return f"{mean:.3f} [{lo:.3f}, {hi:.3f}]"

    header = ["condition", "seeds (finite)", "high-freq. fraction", "max cosine", "dead filters",
              "max cos. (live)"]
    rows = [[f"{cond}{'' if at == 'final' else ' at init'}", f"{len(record['finite'][cond])} "
             f"({int(np.sum(record['finite'][cond]))})"] + [cell(record[at][cond][k]) for k in
                                                            ("hf", "max_cos", "dead", "max_cos_live")]
            for at, conds in (("final", CONDITIONS), ("init", CONDITIONS[:1])) for cond in conds]
    return header, rows


def summary(record: dict, cfg: MnistConfig, data: str) -> dict:
    """The JSON record of a run (without the filters): config, per-seed scores, the claims' verdicts."""
    keep = ("side", "n_images", "finite", "stopped_at", "final", "init")
    return {"data": data, "config": dataclasses.asdict(cfg), **{k: record[k] for k in keep},
            "final_loss": {c: record["loss"][c][-1] for c in CONDITIONS}, "claims": claims(record)}
