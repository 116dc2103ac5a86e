"""Matplotlib figures (returned, never written here: see :func:`ccdyn.io.save_figure`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["landscape_figure", "basins_figure", "power_iteration_figure", "matching_figure", "weights_figure",
           "blowup_figure", "rotation_augmentation_figure", "orbit_basins_figure", "roughness_figure",
           "fig3_figure", "mc_rate_figure", "cluster_curves_figure", "cluster_snapshots_figure", "cluster_grid_figure",
           "ddn_op_figure", "continuation_figure"]

_STYLES = {"linear": ":", "relu": "-", "leaky_relu": "--", "quadratic": "-."}


def landscape_figure(theta, energies: dict, maxima: dict, data_theta, title: str = ""):
    """Fig. 8: E_alpha(theta) per activation, each scaled to max 1, with its local maxima marked.

    Args:
      theta: grid (radians).
      energies: activation name -> E on the grid.
      maxima: activation name -> (theta_max, energy_max, at_kink) arrays.
      data_theta: angles (radians) of the data points, drawn as vertical dotted lines.
    """
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for x in np.asarray(data_theta):
        ax.axvline(x / np.pi, color="0.6", ls=":", lw=1)
    for name, e in energies.items():
        scale = np.max(np.abs(e)) or 1.0
        (line,) = ax.plot(np.asarray(theta) / np.pi, e / scale, _STYLES.get(name, "-"), lw=1.6,
                          label=f"{name} ({len(maxima[name][0])} maxima)")
        t, em, kink = maxima[name]
        ax.plot(t[~kink] / np.pi, em[~kink] / scale, "o", color=line.get_color(), ms=5)
        ax.plot(t[kink] / np.pi, em[kink] / scale, "^", color=line.get_color(), ms=6, mfc="none")
    ax.set_xlabel(r"$\theta / \pi$,  $w = (\cos\theta, \sin\theta)$")
    ax.set_ylabel(r"$E_\alpha(w)$ / max")
    ax.set_xlim(-1, 1)
    ax.set_title(title or r"Local maxima of $E_\alpha$ on the circle (o smooth, $\triangle$ on a kink)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def basins_figure(rows: list, title: str = "", max_bars: int = 40):
    """Basin fraction (95% Wilson interval) per optimum, stable vs not, and the optimum's energy."""
    rows = rows[:max_bars]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(6, 0.35 * len(rows) + 3), 5.5), sharex=True)
    x = np.arange(len(rows))
    frac = np.array([r["fraction"] for r in rows])
    ci = np.array([r["ci95"] for r in rows]).reshape(-1, 2)
    colors = ["tab:blue" if r["stable"] else "tab:red" for r in rows]
    ax1.bar(x, frac, color=colors, yerr=np.abs(np.stack([frac - ci[:, 0], ci[:, 1] - frac])), capsize=2)
    ax1.set_ylabel("basin fraction")
    ax1.set_ylim(0, min(1.0, 1.25 * float(np.max(ci[:, 1]))) if len(rows) else 1.0)
    for i, r in enumerate(rows):
        if r["pattern"] is not None:
            ax1.annotate(f"u{r['pattern']}\n{r['overlap']:.2f}", (i, ci[i, 1]), ha="center", va="bottom",
                         fontsize=6, xytext=(0, 2), textcoords="offset points")
    ax1.set_title(title or "basins of attraction (blue: stable, red: not)")
    ax2.bar(x, [r["energy"] for r in rows], color=colors)
    ax2.set_ylabel("energy E")
    ax2.set_xlabel("optimum (label: best planted pattern and its cosine)")
    ax2.set_xticks(x)
    fig.tight_layout()
    return fig


def power_iteration_figure(moves: dict, title: str = ""):
    """Fig. 1 (right): ||w(t+1) - w(t)|| against t, one panel per ||U^T U - I||_2, a line per start."""
    fig, axes = plt.subplots(1, len(moves), figsize=(3.2 * len(moves), 3.0), sharey=True, squeeze=False)
    for ax, (eps, m) in zip(axes[0], moves.items()):
        m = np.asarray(m)  # (starts, steps)
        t = np.arange(1, m.shape[1] + 1)
        for row in m:
            ax.semilogy(t, np.maximum(row, 1e-17), lw=1)
        ax.set_title(f"||UᵀU − I||₂ = {eps:g}", fontsize=9)
        ax.set_xlabel("iteration t")
    axes[0, 0].set_ylabel("||w(t+1) − w(t)||")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


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
                            ls=_STYLES.get(label.split(" ")[0], "-"), label=label)
            ax.set_xscale("log")
            ax.set_xticks(betas)
            ax.set_xticklabels([str(b) for b in betas])
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


def weights_figure(panels: dict, title: str = ""):
    """Fig. 5: learned filters of each RF in the token basis, one row of panels per label.

    Args:
      panels: label -> (coords, used): coords (K, M, n_tokens) are the filter coordinates
        w_km^T u_a / ||u_a|| (each filter scaled to max |.| = 1); used (K, n_tokens) bool marks the
        relevant tokens R_k^g (ticks on top).
    """
    labels = list(panels)
    k_rf = next(iter(panels.values()))[0].shape[0]
    fig, axes = plt.subplots(len(labels), k_rf, figsize=(1.6 * k_rf, 1.9 * len(labels)), squeeze=False)
    for i, label in enumerate(labels):
        coords, used = (np.asarray(a) for a in panels[label])
        for k in range(k_rf):
            ax = axes[i, k]
            ax.imshow(coords[k], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
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
    fig.tight_layout()
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


def rotation_augmentation_figure(theta, curves: dict, counts: dict, range_labels, ripple: dict, title: str = "",
                                 rounding: float = 1e-14):
    """App. B.5 on the circle data: E(theta) per rotation range, maxima against range, ripple against V.

    Args:
      theta: grid (radians).
      curves: range label -> E on the grid divided by max |E| without augmentation (one activation).
      counts: activation -> (significant maxima per range, all strict maxima per range).
      range_labels: the x tick labels of the middle panel (one per range, in order).
      ripple: activation -> (V values, (max E - min E) / max |E without augmentation|) at the full circle;
        values below ``rounding`` are float64 rounding and are not drawn.
    """
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.2), gridspec_kw={"width_ratios": [2.2, 1.2, 1.2]})
    cmap = plt.get_cmap("viridis")
    for i, (label, e) in enumerate(curves.items()):
        ax1.plot(np.asarray(theta) / np.pi, e, lw=1.3, color=cmap(i / max(len(curves) - 1, 1)),
                 label=f"a = {label}")
    ax1.set_xlabel(r"$\theta / \pi$,  $w = (\cos\theta, \sin\theta)$")
    ax1.set_ylabel(r"$E_\alpha(w)$ / max $|E|$ without augmentation")
    ax1.set_xlim(-1, 1)
    ax1.set_title("E(θ), rotations t ~ U[−aπ, aπ]", fontsize=9)
    ax1.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    x = np.arange(len(range_labels))
    for name, (sig, every) in counts.items():
        line, = ax2.plot(x, sig, marker="o", ls=_STYLES.get(name, "-"), label=f"{name}: prominent")
        ax2.plot(x, every, "x", color=line.get_color(), ms=6, label=f"{name}: all strict")
    ax2.set_xticks(x)
    ax2.set_xticklabels(range_labels, fontsize=8)
    ax2.set_xlabel("half-range a (units of π)")
    ax2.set_ylabel("local maxima of E on the circle")
    ax2.set_yscale("symlog", linthresh=10)
    ax2.set_ylim(bottom=0)
    ax2.set_title("number of maxima", fontsize=9)
    ax2.legend(fontsize=7)
    for name, (v, r) in ripple.items():
        v, r = np.asarray(v), np.asarray(r)
        ok = r > rounding
        if ok.any():
            ax3.loglog(v[ok], r[ok], marker="o", ls=_STYLES.get(name, "-"), label=name)
        else:
            ax3.plot([], [], " ", label=f"{name}: below {rounding:g} (rounding)")
    ax3.set_xlabel("quadrature angles V (full circle: C_V)")
    ax3.set_ylabel("(max E − min E) / max |E without aug.|")
    ax3.set_title("flatness with the whole circle", fontsize=9)
    ax3.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def orbit_basins_figure(panels: dict, title: str = ""):
    """Basin fraction (95% Wilson interval) per optimum, coloured by shift orbit, one panel per setting.

    Args:
      panels: setting label -> list of orbits, each a dict with ``fractions`` and ``ci95`` (per member)
        and ``size`` / ``expected_size``; members are drawn next to each other, orbits in order.
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(5.0 * len(panels), 3.6), squeeze=False)
    cmap = plt.get_cmap("tab10")
    for ax, (label, orbits) in zip(axes[0], panels.items()):
        pos = 0
        for o, orb in enumerate(orbits):
            frac = np.asarray(orb["fractions"])
            ci = np.asarray(orb["ci95"]).reshape(-1, 2)
            x = pos + np.arange(frac.size)
            ax.bar(x, frac, color=cmap(o % 10), yerr=np.abs(np.stack([frac - ci[:, 0], ci[:, 1] - frac])),
                   capsize=2, label=f"orbit {o}: {orb['size']} of {orb['expected_size']}" if o < 8 else None)
            pos += frac.size + 1
        ax.set_title(label, fontsize=9)
        ax.set_xticks([])
        ax.set_xlabel("optima, grouped by shift orbit")
        ax.set_ylabel("basin fraction")
        ax.legend(fontsize=7, title="members found of d / #stab", title_fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def roughness_figure(points: dict, title: str = ""):
    """Thm. 1: rho(w*) against lambda_gap(w*) per optimum, a marker per run; filled = stable at the
    resolved radius, hollow = not. Points below the diagonal satisfy lambda_gap > rho."""
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    markers = "osD^v<>ph*"
    lo, hi = np.inf, 0.0
    for (name, pts), mk in zip(points.items(), markers * 4):
        pts = [(g, r, s) for g, r, s in pts if g > 0 and r > 0]
        if not pts:
            continue
        g, r, s = (np.array(v) for v in zip(*pts))
        line = ax.loglog(g[s], r[s], mk, label=name, ms=6)[0]
        ax.loglog(g[~s], r[~s], mk, mfc="none", color=line.get_color(), ms=6)
        lo, hi = min(lo, g.min(), r.min()), max(hi, g.max(), r.max())
    if hi > 0:
        ax.plot([lo / 2, hi * 2], [lo / 2, hi * 2], "k--", lw=0.8, label=r"$\rho = \lambda_{gap}$")
    ax.set_xlabel(r"eigengap $\lambda_{gap}(w^*)$")
    ax.set_ylabel(r"roughness $\rho(w^*)$")
    ax.set_title(title or "Thm. 1: stable if below the diagonal (filled: stable)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# SimCLR variational analysis (ccdyn.variational, results/simclr_var): Fig. 3, Prop. 4.4, Figs. 5-6.
# ---------------------------------------------------------------------------------------------------

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
    mean between / within ratio at the end of the grid runs (95% interval), network vs plain GD."""
    kinds = list(dict.fromkeys(r["vary"] for r in rows))
    fig, ax = plt.subplots(1, len(kinds), figsize=(4.5 * len(kinds), 3.8), squeeze=False)
    for a, kind in zip(ax[0], kinds):
        for model in dict.fromkeys(r["model"] for r in rows):
            sel = [r for r in rows if r["vary"] == kind and r["model"] == model]
            x = np.array([r["value"] for r in sel], float)
            m = np.array([r["ratio_end"]["mean"] for r in sel], float)
            ci = np.array([r["ratio_end"]["ci"] or [np.nan, np.nan] for r in sel], float)
            a.errorbar(x, m, yerr=[m - ci[:, 0], ci[:, 1] - m], fmt="o-", capsize=3, label=model)
            if kind == "small cluster size":
                a.plot(x, [r["kept_at_end"] * 100 for r in sel], "x:", label=f"{model}: % seeds keeping all clusters")
        a.axhline(sel[0]["keep_ratio"], color="k", ls="--", lw=0.8)
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel(kind)
        a.set_ylabel("between / within ratio at the end")
        a.legend(fontsize=7)


# --- Dual Deep Networks (ccdyn.deep): Figs. 13-14 analogues ---------------------------------------

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


# --- Continuation of basins across a parameter (ccdyn.one_layer.continuation, #12 item 3) ----------

def continuation_figure(record: dict, title: str = "", min_fraction: float = 0.0, y: str = "energy"):
    """Top: each track's optimum energy (``y="energy"``) or cosine with its best planted pattern
    (``y="overlap"``; e.g. for tau, which rescales the energy) against the parameter, line width =
    basin fraction, solid where the optimum is stable at both ends of a segment, dashed otherwise
    (filled / open markers: stable / not); thin dotted lines join a vanishing optimum to the track it
    merges into and a born optimum to the track it was born from; x marks where a track ends without
    a merge. Bottom: the basin fractions themselves (95% Wilson intervals), which separate tracks of
    equal energy. Only tracks whose fraction reaches ``min_fraction`` at some value are drawn. Log x
    when the values are positive and span a factor >= 20."""
    values = np.asarray(record["values"], np.float64)
    tracks = [t for t in record["tracks"] if max(f for f in t["fraction"] if f is not None) >= min_fraction]
    fig, (ax, axf) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if y not in ("energy", "overlap") or any(t["optimum"][k] is not None and t[y][k] is None
                                             for t in tracks for k in range(values.size)):
        raise ValueError(f"y={y!r} must be 'energy' or, on data with planted patterns, 'overlap'")
    at = {(t["id"], k): (values[k], t[y][k]) for t in tracks for k in range(values.size)
          if t["optimum"][k] is not None}
    for t in tracks:
        c = colors[t["id"] % len(colors)]
        ks = [k for k in range(values.size) if t["optimum"][k] is not None]
        for k0, k1 in zip(ks, ks[1:]):
            ls = "-" if t["stable"][k0] and t["stable"][k1] else "--"
            lw = 0.6 + 14 * 0.5 * (t["fraction"][k0] + t["fraction"][k1])
            ax.plot(values[[k0, k1]], [t[y][k0], t[y][k1]], color=c, lw=lw, ls=ls,
                    solid_capstyle="round")
            axf.plot(values[[k0, k1]], [t["fraction"][k0], t["fraction"][k1]], color=c, lw=1.5, ls=ls)
        for k in ks:
            mfc = c if t["stable"][k] else "white"
            ax.plot(values[k], t[y][k], "o", color=c, ms=3 + 10 * t["fraction"][k] ** 0.5, mfc=mfc)
            lo, hi = t["ci95"][k]
            axf.errorbar(values[k], t["fraction"][k], yerr=[[t["fraction"][k] - lo], [hi - t["fraction"][k]]],
                         fmt="o", color=c, ms=4, mfc=mfc, capsize=2)
        axf.annotate(str(t["id"]), (values[ks[-1]], t["fraction"][ks[-1]]), fontsize=7, color=c, xytext=(4, 0),
                     textcoords="offset points", va="center")
        if t["merges_into"] is not None and t["dies_at"] in values:
            k = int(np.flatnonzero(values == t["dies_at"])[0])
            if (t["merges_into"], k) in at:
                x1, y1 = at[(t["merges_into"], k)]
                ax.plot([values[ks[-1]], x1], [t[y][ks[-1]], y1], ":", color=c, lw=1)
        if t["dies_at"] is not None and t["merges_into"] is None:
            ax.plot(t["dies_at"], t[y][ks[-1]], "x", color=c, ms=7)
        if t["born_from"] is not None and ks[0] > 0 and (t["born_from"], ks[0] - 1) in at:
            x0, y0 = at[(t["born_from"], ks[0] - 1)]
            ax.plot([x0, values[ks[0]]], [y0, t[y][ks[0]]], ":", color=c, lw=1)
    if np.all(values > 0) and values.max() / values.min() >= 20:
        ax.set_xscale("log")
    axf.set_xlabel(record["param"])
    ax.set_ylabel(r"energy $E_\alpha$ of the optimum" if y == "energy" else "cos with its best pattern $u_m$")
    axf.set_ylabel("basin fraction (track id at its last value)")
    ax.plot([], [], "k-", lw=2, label="stable (width = basin fraction)")
    ax.plot([], [], "k--", lw=2, label="not stable")
    ax.plot([], [], "k:", lw=1, label="merge / birth")
    ax.plot([], [], "kx", label="gone, no merge (at its last value)")
    ax.legend(fontsize=7, loc="best")
    hidden = len(record["tracks"]) - len(tracks)
    ax.set_title((title or f"Continuation in {record['param']}: {len(record['tracks'])} tracks")
                 + (f"\n({hidden} tracks with basin fraction < {min_fraction:g} throughout not drawn)"
                    if hidden else ""),
                 fontsize=10)
    fig.tight_layout()
    return fig


__all__ += ["mnist_filters_figure", "mnist_scores_figure"]


def mnist_filters_figure(w, side: int, title: str = ""):
    """Figs. 12-13: the filters of one run, a row per receptive field (0 upper left, 1 upper right,
    2 bottom left, 3 bottom right), each filter (side x side) scaled to its own max |value|
    (red > 0, blue < 0).

    Args:
      w: (K, M, side * side) first-layer weights.
    """
    w = np.asarray(w)
    k, m, _ = w.shape
    fig, axes = plt.subplots(k, m, figsize=(0.75 * m + 0.6, 0.75 * k + 0.5), squeeze=False)
    for r in range(k):
        for c in range(m):
            f = w[r, c].reshape(side, side)
            lim = np.max(np.abs(f)) or 1.0
            ax = axes[r, c]
            ax.imshow(f, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(f"RF {r}", fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
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
        ax.plot([0, 1], np.nanmean(y, axis=1), "-s", color="C3", lw=2.5, ms=7, label="mean over seeds")
        ax.axhline(float(np.nanmean(record["init"]["no_aug"][key])), color="0.5", ls=":", label="at initialization")
        ax.set_xticks([0, 1], ["no aug.", "RandomResizedCrop"])
        ax.set_xlim(-0.3, 1.3)
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
