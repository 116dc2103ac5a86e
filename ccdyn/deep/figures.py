"""The Dual Deep Networks part's figures: a record in, a matplotlib Figure out (written by
:func:`ccdyn.io.save_figure`, never here). Median ||OP_mu||_F against epoch (Figs. 13-14 analogues)."""

from __future__ import annotations

from ccdyn.plotting import plt

__all__ = ["ddn_op_figure"]


def ddn_op_figure(panels: dict, latents, title: str = ""):
    """Median ||OP_mu||_F against epoch: a row per latent, a column per factor.

    ``panels``: {factor title: {curve label: {latent: (epochs, medians)}}}.
    """
    cols = list(panels)
    fig, axes = plt.subplots(len(latents), len(cols), figsize=(4.2 * len(cols), 3.0 * len(latents)), squeeze=False)
    for c, factor in enumerate(cols):
        for r, lat in enumerate(latents):
            ax = axes[r][c]
            for label, by_lat in panels[factor].items():
                if lat in by_lat:
                    ep, v = by_lat[lat]
                    ax.plot(ep, v, marker=".", label=label)
            ax.set_title(f"z_{lat}: {factor}", fontsize=9)
            ax.set_xlabel("epoch")
            ax.set_ylabel("median ||OP||_F")
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
