"""The 2-layer part's figures (Sec. 4-5, App. E.3): a record in, a matplotlib Figure out (written by
:func:`ccdyn.io.save_figure`, never here). chi_+ / chi_- matching grids, learned filters, Fig. 7 blow-up,
the MNIST filters and filter scores (Figs. 12-13)."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from ccdyn import stats
from ccdyn.plotting import ACTIVATION_STYLES, plt

__all__ = ["matching_figure", "weights_figure", "blowup_figure", "mnist_filters_figure",
           "mnist_scores_figure"]


def matching_figure(curves: dict, betas, ps, title: str = ""):
    """Fig. 4 / 9 / 10 / 11: chi_bar_+ (top row) and chi_bar_- (bottom row) against beta, a column per P.

    Args:
      curves: label -> {(P, beta): {"chi_plus": {"mean", "std"}, "chi_minus": {...}}}; one line each.
      betas, ps: the grid's beta and P values.
    """
    fig, axes = plt.subplots(2, len(ps), figsize=(2.8 * len(ps), 5.2), sharex=True, sharey="row", squeeze=False)
    for j, p in enumerate(ps):
        for i, score in enumerate(["chi_plus", "chi_minus"]):
            ax = axes[i, j]
            for label, pts in curves.items():
                mean = [pts[(p, b)][score]["mean"] if (p, b) in pts else np.nan for b in betas]
                std = [pts[(p, b)][score]["std"] if (p, b) in pts else np.nan for b in betas]
                ax.errorbar(betas, mean, yerr=std, marker="o", ms=3, capsize=2, lw=1,
                            ls=ACTIVATION_STYLES.get(label.split(" ")[0], "-"), label=label)
            ax.set_xscale("log")
            ax.set_xticks(betas, [f"{b:g}" for b in betas])
            ax.xaxis.set_minor_locator(NullLocator())  # ticks only at the values: no overlapping minor labels
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(f"P = {p}", fontsize=9)
            else:
                ax.set_xlabel("β (M = βP)")
        lows = [pts[k]["chi_plus"]["mean"] for pts in curves.values() for k in pts]
        axes[0, j].set_ylim(min([-0.05] + [v - 0.05 for v in lows if np.isfinite(v)]), 1.05)
    axes[0, 0].set_ylabel("χ̄₊ (relevant tokens)")
    axes[1, 0].set_ylabel("χ̄₋ (irrelevant tokens)")
    axes[0, -1].legend(fontsize=7, loc="lower right")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def _colorbar(fig, image, label: str, room: float = 1.0):
    """Lays out ``fig`` leaving ``room`` inches on the right, and draws there one colour bar for a grid of
    images drawn with the same colour scale."""
    width = fig.get_size_inches()[0]
    fig.tight_layout(rect=(0, 0, 1 - room / width, 1))
    cax = fig.add_axes([1 - (room - 0.1) / width, 0.15, 0.12 / width, 0.7])
    bar = fig.colorbar(image, cax=cax)
    bar.set_label(label, fontsize=7)
    cax.tick_params(labelsize=7)
    return bar


def weights_figure(panels: dict, title: str = ""):
    """Fig. 5: learned filters of each RF in the token basis, one row of panels per label.

    Args:
      panels: label -> (coords, used): coords (K, M, n_tokens) are the filter coordinates
        w_km^T u_a / ||u_a|| (each filter scaled to max |.| = 1); used (K, n_tokens) bool marks the
        relevant tokens R_k^g (ticks on top).
    """
    labels = list(panels)
    k_rf = next(iter(panels.values()))[0].shape[0]
    fig, axes = plt.subplots(len(labels), k_rf, figsize=(1.6 * k_rf + 1.0, 1.9 * len(labels)), squeeze=False)
    for i, label in enumerate(labels):
        coords, used = (np.asarray(a) for a in panels[label])
        for k in range(k_rf):
            ax = axes[i, k]
            image = ax.imshow(coords[k], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
            ax.set_xticks(np.flatnonzero(used[k]))
            ax.set_xticklabels([])
            ax.tick_params(axis="x", length=4, color="k", top=True, bottom=False)
            ax.set_yticks([])
            if i == 0:
                ax.set_title(f"R{k}", fontsize=8)
            if k == 0:
                ax.set_ylabel(label, fontsize=8)
    if title:
        fig.suptitle(title + "  (columns: tokens a; ticks: R_k^g; rows: filters m)", fontsize=9)
    _colorbar(fig, image, "coordinate / filter's max |.|")
    return fig


def blowup_figure(curves: dict, y_grid, tstar: dict):
    """Fig. 7: y' = (y + b) y; left: closed form (lines) and RK4 (dots) per y(0), t* dashed; right: t*(y(0)).

    Args:
      curves: y0 -> {"t", "rk4", "closed_form", "t_star"}.
      y_grid, tstar: y(0) values and b -> t* on that grid (Eq. 150).
    """
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for y0, c in curves.items():
        line, = ax1.plot(c["t"], c["closed_form"], lw=1.2, label=f"y(0) = {y0:g}")
        ax1.plot(c["t"][::100], c["rk4"][::100], "o", ms=3, color=line.get_color())
        if np.isfinite(c["t_star"]):
            ax1.axvline(c["t_star"], color=line.get_color(), ls="--", lw=0.8)
    ax1.set_yscale("symlog", linthresh=1.0)
    ax1.set_xlabel("t")
    ax1.set_ylabel("y(t)")
    ax1.set_title("y' = (y + b) y, b = 1: Eq. 147 (lines), RK4 (dots), t* (dashed)", fontsize=8)
    ax1.legend(fontsize=7)
    for b, t in tstar.items():
        ax2.loglog(y_grid, t, label=f"b = {b:g}")
    ax2.set_xlabel("y(0) > 0")
    ax2.set_ylabel("blow-up time t* (Eq. 150)")
    ax2.set_title("larger b or y(0): earlier blow-up", fontsize=8)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def mnist_filters_figure(w, side: int, title: str = ""):
    """Figs. 12-13: the filters of one run, a row per receptive field (0 upper left, 1 upper right,
    2 bottom left, 3 bottom right), each filter (side x side) scaled to its own max |value|
    (red > 0, blue < 0).

    Args:
      w: (K, M, side * side) first-layer weights.
    """
    w = np.asarray(w)
    k, m, _ = w.shape
    fig, axes = plt.subplots(k, m, figsize=(0.75 * m + 1.2, 0.75 * k + 0.5), squeeze=False)
    for r in range(k):
        for c in range(m):
            f = w[r, c].reshape(side, side)
            lim = np.max(np.abs(f)) or 1.0
            ax = axes[r, c]
            image = ax.imshow(f / lim, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(f"RF {r}", fontsize=8)
    fig.suptitle(title, fontsize=9)
    _colorbar(fig, image, "weight / filter's max |weight|")
    return fig


def mnist_scores_figure(record: dict, title: str = ""):
    """The filter scores of App. E.3 per seed (high-frequency fraction, max cosine, dead fraction, max
    cosine among live filters), without and with augmentation (a line per seed joins its paired runs),
    with the scores of the initial filters as a dotted reference."""
    conds = ("no_aug", "aug")
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.4))
    for ax, key, label in zip(axes, ("hf", "max_cos", "dead", "max_cos_live"),
                              ("high-frequency energy fraction", "mean max cosine", "fraction of dead filters",
                               "mean max cosine among live filters")):
        y = np.stack([np.asarray(record["final"][c][key], float) for c in conds])
        ax.plot([0, 1], y, "-o", color="0.4", lw=1, ms=4)
        means = [stats.finite_mean(row) for row in y]  # NaN (not drawn) where every seed went non-finite
        ax.plot([0, 1], means, "-s", color="C3", lw=2.5, ms=7, label="mean over seeds")
        if not np.isfinite(y).any():
            ax.text(0.5, 0.5, "every seed went non-finite", ha="center", transform=ax.transAxes, color="C3")
        ax.axhline(stats.finite_mean(record["init"]["no_aug"][key]), color="0.5", ls=":", label="at initialization")
        ax.set_xticks([0, 1], ["no aug.", "RandomResizedCrop"])
        ax.set_xlim(-0.3, 1.3)
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
