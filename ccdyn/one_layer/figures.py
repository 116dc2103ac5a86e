"""The 1-layer part's figures (Sec. 3, App. B.5): a record in, a matplotlib Figure out (written by
:func:`ccdyn.io.save_figure`, never here). Fig. 8 landscape, basins, Fig. 1 power iteration, the App. B.5
rotation and shift figures, roughness against the gap, continuation tracks."""

from __future__ import annotations

import numpy as np

from ccdyn.plotting import ACTIVATION_STYLES, plt

__all__ = ["landscape_figure", "basins_figure", "power_iteration_figure", "rotation_augmentation_figure",
           "orbit_basins_figure", "roughness_figure", "continuation_figure"]


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
        (line,) = ax.plot(np.asarray(theta) / np.pi, e / scale, ACTIVATION_STYLES.get(name, "-"), lw=1.6,
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
        line, = ax2.plot(x, sig, marker="o", ls=ACTIVATION_STYLES.get(name, "-"), label=f"{name}: prominent")
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
            ax3.loglog(v[ok], r[ok], marker="o", ls=ACTIVATION_STYLES.get(name, "-"), label=name)
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
    resolved radius, hollow = not. Points below the diagonal satisfy lambda_gap > rho. Without a point,
    the panel says so (no legend)."""
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
        ax.legend(fontsize=7)
    else:  # no optimum with a resolved radius (and positive gap and rho)
        ax.text(0.5, 0.5, "no optimum with a resolved radius", transform=ax.transAxes, ha="center", fontsize=8)
    ax.set_xlabel(r"eigengap $\lambda_{gap}(w^*)$")
    ax.set_ylabel(r"roughness $\rho(w^*)$")
    ax.set_title(title or "Thm. 1: stable if below the diagonal (filled: stable)", fontsize=9)
    fig.tight_layout()
    return fig


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


def _merge_layout(n: int, merges: list) -> list:
    """Leaf order of a merge tree (merges [(energy, i, j, group of i, group of j)]): each merge puts the two
    groups side by side, so every group is a contiguous run of leaves."""
    groups = {i: [i] for i in range(n)}
    root = list(range(n))
    for _, i, j, _, _ in merges:
        ri, rj = root[i], root[j]
        groups[ri] = groups[ri] + groups.pop(rj)
        for k in groups[ri]:
            root[k] = ri
    return [k for g in groups.values() for k in g]


def _name(o, k) -> str:
    return f"u{o['pattern']}" if o.get("pattern") is not None else f"#{k}"


def _draw_tree(ax, opt, merges, bottom, labels: bool, top_clip=None):
    """The merge tree on ``ax``; ``top_clip``: leaves above it are drawn up to it and marked with a caret
    (the zoomed panel), so no optimum is left outside a panel without a mark."""
    n = len(opt)
    order = _merge_layout(n, merges)
    x = {k: float(p) for p, k in enumerate(order)}
    top = {k: opt[k]["energy"] if top_clip is None else min(opt[k]["energy"], top_clip) for k in range(n)}
    root = list(range(n))
    width = {k: 1.0 + min(20.0 * opt[k]["fraction"], 5.0) for k in range(n)}  # a large basin does not hide the rest
    style = {k: ("-" if opt[k]["stable"] else "--", "tab:blue" if opt[k]["stable"] else "tab:red") for k in range(n)}
    for k in range(n):
        cut = top_clip is not None and opt[k]["energy"] > top_clip
        ax.plot([x[k]], [top[k]], "^" if cut else "o", color="k" if cut else style[k][1], ms=6 if cut else 3, zorder=5)
        if labels:
            lo, hi = opt[k]["ci95"]
            ax.annotate(f"{_name(opt[k], k)}\n{opt[k]['fraction']:.3f}\n[{lo:.3f}, {hi:.3f}]", (x[k], top[k]),
                        ha="center", va="bottom", fontsize=6, xytext=(0, 3), textcoords="offset points")
    for e, i, j, _, _ in merges:
        ri, rj = root[i], root[j]
        for r in (ri, rj):
            ax.plot([x[r], x[r]], [top[r], e], style[r][0], color=style[r][1], lw=width[r])
        ax.plot([x[ri], x[rj]], [e, e], "-", color="0.3", lw=1.0)
        for k in range(n):
            if root[k] == rj:
                root[k] = ri
        x[ri], top[ri], width[ri], style[ri] = 0.5 * (x[ri] + x[rj]), e, 1.2, ("-", "0.3")
    for r in set(root):
        ax.plot([x[r], x[r]], [top[r], bottom], style[r][0], color=style[r][1], lw=width[r])
    names = [_name(opt[k], k) for k in order]
    ax.set_xticks([] if labels else range(n), [] if labels else names)
    ax.set_xlim(-0.7, n - 0.3)


def _energy_name(record: dict) -> str:
    """The energy a saddles record measures (its ``landscape``): E_alpha, or the flow's potential Psi."""
    if str(record.get("landscape", "E_alpha")).startswith("potential"):
        tau = record.get("tau")
        return "potential Psi of the flow (Gaussian alpha" + (f", tau = {tau:g})" if tau is not None else ")")
    return "energy E (uniform alpha)"


def disconnectivity_figure(record: dict, title: str = ""):
    """Disconnectivity graph of the maxima (saddles record of :mod:`ccdyn.one_layer.studies.saddles`): the
    landscape's energy on the y-axis (E for uniform alpha, the flow's potential Psi for Gaussian alpha:
    named on the axis), one leaf per optimum at its energy (line width proportional to its basin
    fraction up to 0.25, label with the 95% Wilson interval; solid blue: stable, dashed red: not), and each certified
    saddle that first joins two groups drawn as a horizontal bar at its energy (union-find over the
    saddles in decreasing energy, as for minima with the axis reversed). Every optimum and every bar lies
    inside the left panel (with room for the labels); the right panel zooms on the band of the merges,
    the leaves above it cut at its top and marked with a caret. A legend names the marks."""
    from matplotlib.lines import Line2D  # noqa: PLC0415

    opt, merges = record["optima"], record["merges"]
    n = len(opt)
    es = [o["energy"] for o in opt] + [m[0] for m in merges]
    lo_e, hi_e = min(es), max(es)
    span = max(hi_e - lo_e, 1e-12 * max(1.0, abs(hi_e)))
    bottom = lo_e - 0.1 * span
    fig, (ax, az) = plt.subplots(1, 2, figsize=(max(9.0, 1.2 * n + 3.0), 5.5), gridspec_kw={"width_ratios": [3, 2]})
    _draw_tree(ax, opt, merges, bottom, True)
    ax.set_ylim(bottom - 0.05 * span, hi_e + 0.35 * span)  # room above the leaves for the 3-line labels
    ax.set_xlabel("optima (label: best pattern, basin fraction, 95% Wilson interval; width ~ fraction)")
    name = _energy_name(record)
    ax.set_ylabel(f"{name}\n(maxima on top; a bar: the saddle joining two groups)")
    ax.set_title(title or f"disconnectivity graph of the maxima ({name})", fontsize=10)
    lows = [m[0] for m in merges]
    if lows:
        band = (max(lows) - min(lows)) or 0.05 * span
        clip = max(lows) + 0.4 * band
        _draw_tree(az, opt, merges, min(lows) - 0.3 * band, False, top_clip=clip)
        az.set_ylim(min(lows) - 0.25 * band, clip + 0.1 * band)
        az.set_xlabel("zoom on the saddles (^: leaf continues up to its optimum, left)")
    else:
        az.text(0.5, 0.5, "no certified saddle joins two optima", ha="center", va="center", transform=az.transAxes)
        az.set_xticks([])
        az.set_xlabel("zoom on the saddles: none")
    az.set_ylabel(name)
    handles = [Line2D([], [], color="tab:blue", marker="o", ms=3, label="stable optimum (leaf; width ~ basin)"),
               Line2D([], [], color="tab:red", ls="--", marker="o", ms=3, label="optimum not certified stable"),
               Line2D([], [], color="0.3", label="saddle: bar at its energy, joining two groups"),
               Line2D([], [], color="k", marker="^", ls="", ms=6, label="leaf cut in the zoom")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def saddle_paths_figure(record: dict, title: str = ""):
    """The landscape's energy along each search's string path (arc length from optimum i, normalized), the
    refined saddle's energy marked at the climbing image (x: certified, o: not)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for p in record["searches"]:
        s = np.asarray(p["path_arc"])
        s = s / max(s[-1], 1e-300)
        e = np.asarray(p["path_energies"])
        ax.plot(s, e, "-", color="tab:blue" if p["certified"] else "tab:red", lw=0.6, alpha=0.6)
        c = p["string"]["climbing_image"]
        ax.plot([s[c]], [p["energy"]], "x" if p["certified"] else "o", color="k", ms=4)
    ax.set_xlabel("arc length along the path / its length")
    ax.set_ylabel(_energy_name(record))
    ax.set_title(title or "along the string paths (blue: saddle certified, red: not)")
    fig.tight_layout()
    return fig


__all__ += ["disconnectivity_figure", "saddle_paths_figure"]


def barriers_along_figure(record: dict, title: str = ""):
    """Barriers against a continuation parameter (:func:`ccdyn.one_layer.studies.saddles.along`): over the
    pairs joined by certified saddles, min(E_i, E_j) - E_ij (median, with the min-max range), and the
    number of optima on a second axis."""
    rows = [r for r in record["per_value"] if r.get("barrier_median") is not None]
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    v = np.array([r["value"] for r in rows], float)
    med = np.array([r["barrier_median"] for r in rows])
    lo, hi = np.array([r["barrier_min"] for r in rows]), np.array([r["barrier_max"] for r in rows])
    ax.errorbar(v, med, yerr=np.stack([med - lo, hi - med]) if len(rows) else None, fmt="o-", capsize=3)
    ax.set_xlabel(record["param"])
    ax.set_ylabel("barrier min(E_i, E_j) - E_ij (median, min-max)")
    ax2 = ax.twinx()
    ax2.plot([r["value"] for r in record["per_value"]], [r["n_optima"] for r in record["per_value"]], "s--",
             color="tab:gray")
    ax2.set_ylabel("optima", color="tab:gray")
    ax.set_title(title or f"barriers between the optima against {record['param']}")
    fig.tight_layout()
    return fig


__all__ += ["barriers_along_figure"]
