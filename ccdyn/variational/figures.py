"""The SimCLR variational part's figures (``results/simclr_var``): a record in, a matplotlib Figure out
(written by :func:`ccdyn.io.save_figure`, never here). Fig. 3, the Prop. 4.4 rate, Figs. 5-6 as curves,
snapshots and the grid over width, tau and cluster size."""

from __future__ import annotations

import numpy as np

from ccdyn.plotting import plt

__all__ = ["fig3_figure", "mc_rate_figure", "cluster_curves_figure", "cluster_snapshots_figure",
           "cluster_grid_figure"]


def fig3_figure(fig3: dict):
    """Fig. 3: Eq. 4 at K evenly spaced points on S^1 against K, against the minimum squared distance
    (plateau marked), and the plateau threshold against tau with its least-squares line."""
    taus, Ks, L = np.asarray(fig3["taus"]), np.asarray(fig3["Ks"]), np.asarray(fig3["loss"])
    s = np.array([np.nan if v is None else v for v in fig3["min_sq_distance"]], float)
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    for i, t in enumerate(taus):
        (line,) = ax[0].plot(Ks, L[i], ".-", ms=3, lw=1, label=f"τ = {t:g}")
        ax[1].plot(s, L[i], ".-", ms=3, lw=1, color=line.get_color())
        ax[1].axhline(fig3["plateau"][i], color=line.get_color(), ls=":", lw=0.8)
        if np.isfinite(fig3["threshold"][i]):
            ax[1].axvline(fig3["threshold"][i], color=line.get_color(), ls="--", lw=0.8)
    ax[0].set_xscale("log")
    ax[0].set_xlabel("K (points evenly spaced on S¹)")
    ax[0].set_ylabel("loss (Eq. 4)")
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("minimum squared distance 4 sin²(π/K)")
    ax[1].set_title(f"plateau (dotted) and threshold (dashed, rel. excess {fig3['rel_tol']:g})", fontsize=9)
    thr, fit = np.asarray(fig3["threshold"], float), fig3["fit"]
    ax[2].plot(taus, thr, "o")
    if fit:
        ax[2].plot(taus, fit["slope"] * taus + fit["intercept"], "-",
                   label=f"{fit['slope']:.3f} τ + {fit['intercept']:.3f}, R² = {fit['r2']:.4f}")
        ax[2].legend(fontsize=8)
    ax[2].set_xlabel("τ")
    ax[2].set_ylabel("threshold of the min. squared distance")
    fig.tight_layout()
    return fig


def mc_rate_figure(Ms, rms, fit: dict):
    """Prop. 4.4: RMS error of the width-M kernel against its infinite-width limit, log-log, with the fit."""
    Ms, rms = np.asarray(Ms, float), np.asarray(rms, float)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.loglog(Ms, rms, "o", label="Monte Carlo (RMS over seeds and entries)")
    ax.loglog(Ms, np.exp(fit["intercept"]) * Ms ** fit["slope"], "-", label=f"fit: exponent {fit['slope']:.3f}")
    ax.set_xlabel("width M")
    ax.set_ylabel("RMS |K_M - K_inf|")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def cluster_curves_figure(curves: dict, keep: float, title: str = ""):
    """Figs. 5-6 as numbers: between / within ratio (log scale; the keep level dashed) and Wang-Isola
    uniformity over iterations, mean and 95% interval over seeds, one line per model."""
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for name, c in curves.items():
        it = np.asarray(c["iters"]) + 1
        for a, k in zip(ax, ("ratio", "silhouette", "uniformity")):
            (line,) = a.plot(it, c[k]["mean"], lw=1.4, label=name)
            a.fill_between(it, c[k]["lo"], c[k]["hi"], color=line.get_color(), alpha=0.25)
    ax[0].axhline(keep, color="k", ls="--", lw=0.8, label="keep level (the data's ratio)")
    ax[0].set_yscale("log")
    for a, k in zip(ax, ("between / within ratio", "silhouette", "uniformity (lower: more uniform)")):
        a.set_xscale("log")
        a.set_xlabel("iteration + 1")
        a.set_ylabel(k)
    ax[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def cluster_snapshots_figure(snaps: dict, title: str = ""):
    """Seed 0's normalized embedding at the recorded iterations (first two coordinates), a row per model,
    coloured by cluster (the rows of Figs. 5-6)."""
    names = list(snaps)
    cols = len(snaps[names[0]]["iters"])
    fig, ax = plt.subplots(len(names), cols, figsize=(2.2 * cols, 2.2 * len(names)), squeeze=False)
    for r, name in enumerate(names):
        s = snaps[name]
        for j, it in enumerate(s["iters"]):
            a = ax[r, j]
            a.add_patch(plt.Circle((0, 0), 1, fill=False, color="0.8"))
            a.scatter(s["points"][j][:, 0], s["points"][j][:, 1], c=s["labels"], cmap="viridis", s=6)
            a.set_xlim(-1.1, 1.1)
            a.set_ylim(-1.1, 1.1)
            a.set_aspect("equal")
            a.set_xticks([])
            a.set_yticks([])
            a.set_title(f"iter {it}", fontsize=8)
        ax[r, 0].set_ylabel(name, fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def cluster_grid_figure(rows: list):
    """How long the clusters are kept against width M, tau and the size of the cluster at x = 1: the
    mean between / within ratio at the end of the grid runs (95% interval), network vs plain GD. A panel
    with no positive finite ratio (every seed non-finite, e.g. at a tiny tau) keeps linear axes and says
    so."""
    kinds = list(dict.fromkeys(r["vary"] for r in rows))
    fig, ax = plt.subplots(1, len(kinds), figsize=(4.5 * len(kinds), 3.8), squeeze=False)
    for a, kind in zip(ax[0], kinds):
        ys = []
        for model in dict.fromkeys(r["model"] for r in rows):
            sel = [r for r in rows if r["vary"] == kind and r["model"] == model]
            x = np.array([r["value"] for r in sel], float)
            m = np.array([r["ratio_end"]["mean"] for r in sel], float)
            ci = np.array([r["ratio_end"]["ci"] or [np.nan, np.nan] for r in sel], float)
            a.errorbar(x, m, yerr=[m - ci[:, 0], ci[:, 1] - m], fmt="o-", capsize=3, label=model)
            ys += [m, ci.ravel()]
            if kind == "small cluster size":
                a.plot(x, [r["kept_at_end"] * 100 for r in sel], "x:", label=f"{model}: % seeds keeping all clusters")
        a.axhline(sel[0]["keep_ratio"], color="k", ls="--", lw=0.8)
        y = np.concatenate(ys)
        if np.any(np.isfinite(y) & (y > 0)):
            a.set_xscale("log")
            a.set_yscale("log")
        else:  # (log axes over no data would fail at drawing)
            a.text(0.5, 0.5, "no finite ratio (non-finite seeds)", transform=a.transAxes, ha="center", fontsize=8)
        a.set_xlabel(kind)
        a.set_ylabel("between / within ratio at the end")
        a.legend(fontsize=7)
    fig.tight_layout()
    return fig
