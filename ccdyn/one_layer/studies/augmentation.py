"""App. B.5: a group augmentation removes optima (continuous group) or ties them into orbits (discrete).

With views x = R(t) x0, t ~ Uniform(T), {R(t)} a group, the view-averaged output b(w|x0) = E_t h(w^T R(t) x0)
satisfies b(R w|x0) = b(w|x0), hence E_alpha(R w) = E_alpha(w) (Eq. 105-108, alpha under stop-gradient).

Rotation study (continuous group): the nine points of Fig. 8 on the unit circle, rotated by
t ~ U[-a pi, a pi] for each half-range a in ``ranges`` (a = 1: the whole circle; the uniform t is
represented exactly by a midpoint rule with V = max(``min_views``, round(a * ``views_per_circle``))
angles, so a = 1 is the cyclic group C_V, which tends to SO(2)). Per activation and range: the local
maxima of E(theta) on a dense float64 grid (:mod:`ccdyn.one_layer.landscape`) and their prominence (a
finite quadrature leaves ripple maxima of tiny prominence: a maximum counts as *prominent* when its
prominence is at least ``min_prominence`` times max |E| without augmentation), the range of E, and for
``basin_acts`` the basins engine (:func:`ccdyn.one_layer.basins.run`: flow, ``n_init`` inits; its optima
are matched to the grid maxima). Then the flatness (max E - min E) at a = 1 against V
(``ripple_views``). App. B.5 predicts no strict optimum with the whole circle (no w != 0 is rotation
invariant).

Shift study (discrete group): 1-D signals of length ``shift_d``, the latent-summation model (Eq. 9) on
``shift_m`` zero-mean orthonormal patterns of amplitude ``shift_amplitude`` (:func:`shift_data`), with
the cyclic shifts by |s| <= r for r in ``shift_ranges`` (0: none; 2r + 1 >= d: the whole group Z_d).
Per setting: the optima of the basins engine, grouped into shift orbits (:mod:`ccdyn.one_layer.symmetry`):
complete orbits, equal energies, equal basins (95% Wilson intervals, chi-square). App. B.5 predicts
complete orbits with equal energies (and, by the rotation invariance of the inits, equal basins) for
Z_d only.

:func:`run` returns the record (config, verdicts, per-setting numbers); :func:`rotation_rows`,
:func:`shift_rows`, :func:`markdown` and :func:`figures` turn it into tables, text and figures.
``scripts/augmentation.py`` writes them. Field names of :class:`AugmentationConfig` are the script's
flags; a ``ValueError`` names the flag at fault.
"""

from __future__ import annotations

import dataclasses
import fractions
import time

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, pairwise, report, stats
from ccdyn.data import models
from ccdyn.data.registry import DataSpec, augment, build_dataset
from ccdyn.one_layer import basins, claims, landscape, symmetry
from ccdyn.one_layer.engine import Dynamics
from ccdyn.one_layer.figures import orbit_basins_figure, rotation_augmentation_figure

__all__ = ["AugmentationConfig", "run", "shift_data", "engine_config", "row_engine_config", "rotation_rows",
           "shift_rows", "rotation_key", "shift_key", "markdown", "figures", "ROUNDING"]

UNIFORM = pairwise.get_pairwise("uniform")
ROUNDING = 1e-14  # a relative range of E below this is float64 rounding, not quadrature ripple


def _fraction(text) -> float | None:
    """A number or fraction ("1/36") as a float; None when it is neither."""
    try:
        return float(fractions.Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        return None


def _int_list(values) -> bool:
    return values is not None and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values)


@dataclasses.dataclass(frozen=True)
class AugmentationConfig:
    """Everything that determines the study's numbers; field names and defaults are the script's flags.

    ``ranges`` are labels (numbers or fractions such as "1/36", units of pi); ``ripple_views`` and
    ``shift_ranges`` integers. Sequences are stored as tuples; invalid values raise ``ValueError``
    naming the flag.
    """

    ranges: tuple = ("0", "1/36", "1/18", "1/9", "1/6", "1/4", "1/2", "1")
    acts: tuple = ("relu", "leaky_relu", "linear")
    basin_acts: tuple = ("relu",)
    views_per_circle: int = 512
    min_views: int = 16
    ripple_views: tuple = (8, 16, 32, 64, 128, 256, 512)
    min_prominence: float = 5e-5
    n_grid: int = 1 << 14
    refine_max: int = 64
    n_init: int = 4000
    shift_n_init: int = 8000
    max_steps: int = 2000
    step_size: float = 1.0
    cluster_tol: float = 1e-2
    tile: int = 512
    chunk_size: int = 16384
    seed: int = 0
    shift_d: int = 8
    shift_m: int = 3
    shift_q: float = 0.2
    shift_amplitude: float = 3.0
    shift_act: str = "gelu"
    shift_ranges: tuple = (0, 1, 4)
    data_seed: int = 0

    def __post_init__(self):
        for name in ("ranges", "acts", "basin_acts", "ripple_views", "shift_ranges"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                value = tuple(str(v) for v in value) if name == "ranges" else tuple(value)
            object.__setattr__(self, name, value)
        acts = activations.ACTIVATIONS
        checks = [
            (self.ranges and all((f := _fraction(x)) is not None and 0 <= f <= 1 for x in self.ranges),
             "--ranges must be numbers or fractions in [0, 1] (units of pi), e.g. 0,1/36,1/2,1"),
            (self.acts and set(self.acts) <= set(acts), f"--acts must be a non-empty list from: {', '.join(acts)}"),
            (self.basin_acts is not None and set(self.basin_acts) <= set(self.acts or ()),
             "--basin_acts must be a subset of --acts"),
            (_int_list(self.ripple_views) and len(self.ripple_views) >= 2 and min(self.ripple_views) >= 2,
             "--ripple_views must be at least two integers >= 2"),
            (0 < self.min_prominence < 1, "--min_prominence must lie in (0, 1)"),
            (self.step_size > 0, "--step_size must be > 0"),
            (0 < self.cluster_tol < 1, "--cluster_tol must lie in (0, 1)"),
            (0 < self.shift_q < 1, "--shift_q must lie in (0, 1)"),
            (self.shift_amplitude > 0, "--shift_amplitude must be > 0"),
            (self.shift_act in acts, f"--shift_act must be one of: {', '.join(acts)}"),
            (_int_list(self.shift_ranges) and len(self.shift_ranges) > 0 and min(self.shift_ranges) >= 0,
             "--shift_ranges must be integers >= 0 (0: no augmentation)"),
        ]
        for name, lo in (("views_per_circle", 2), ("min_views", 1), ("n_grid", 16), ("refine_max", 0), ("n_init", 1),
                         ("shift_n_init", 1), ("max_steps", 1), ("tile", 1), ("chunk_size", 1), ("shift_d", 3),
                         ("shift_m", 1)):
            checks.append((getattr(self, name) >= lo, f"--{name} must be an integer >= {lo}"))
        checks.append((self.shift_m <= min(self.shift_d - 1, models.MAX_EXACT_M),
                       f"--shift_m must lie in [1, min(--shift_d - 1, {models.MAX_EXACT_M})]"))
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    @property
    def dynamics(self) -> Dynamics:
        # the fixed-step scheme its committed results were made with (docs/flow.md: --method=flow is exact)
        return Dynamics(method="euler_halving", step_size=self.step_size, max_steps=self.max_steps)

    def rotation_views(self, a: float) -> int:
        """Quadrature angles V of the half-range a."""
        return max(self.min_views, int(round(a * self.views_per_circle)))


def engine_config(config: AugmentationConfig, spec: DataSpec, act: str, n_init: int) -> basins.BasinsConfig:
    """The basins engine's config on one dataset; the row's ``basins_command`` builds the same one."""
    return basins.BasinsConfig(data=spec, act=act, dynamics=config.dynamics, n_init=n_init, seed=config.seed,
                               chunk_size=config.chunk_size, tile=config.tile, cluster_tol=config.cluster_tol)


def row_engine_config(config: AugmentationConfig, row: dict, data_path: str) -> basins.BasinsConfig:
    """:func:`engine_config` of a record's row: a rotation row (``act``, ``a``, ``n_views``) or a shift row
    (``max_shift``; its signals in ``data_path``)."""
    if "max_shift" in row:
        r = row["max_shift"]
        spec = DataSpec(data="file", data_path=data_path, **({} if r == 0 else {"aug": "shift", "aug_range": r}))
        return engine_config(config, spec, config.shift_act, config.shift_n_init)
    return engine_config(config, _circle_spec(row["a"], row["n_views"]), row["act"], config.n_init)


def _basins(config: AugmentationConfig, ds64, spec: DataSpec, act: str, n_init: int) -> dict:
    """The basins engine (float32 flow, float64 refinement) on one dataset: ``basins.analyze``'s dict
    with the median step count."""
    out = basins.run(engine_config(config, spec, act, n_init), ds64=ds64)
    assert out is not None  # None only on the other processes of a multi-process run
    return {**out["analysis"], "steps_median": float(np.median(out["result"]["steps"]))}


def _engine_flags(config: AugmentationConfig, act: str, n_init: int) -> str:
    return (f"--act={act} --method=euler_halving --step_size={config.step_size} --max_steps={config.max_steps} "
            f"--n_init={n_init} --seed={config.seed} --tile={config.tile} --chunk_size={config.chunk_size} "
            f"--cluster_tol={config.cluster_tol}")


# --- rotation study --------------------------------------------------------------------------------


def _circle_spec(a: float, n_views: int | None) -> DataSpec:
    if a == 0:
        return DataSpec(data="circle")
    assert n_views is not None  # a rotation has its quadrature size
    return DataSpec(data="circle", aug="rotation", aug_range=a, aug_views=n_views)


def _grid_maxima(config: AugmentationConfig, ds64, act, scale: float) -> dict:
    """Local maxima of E on the circle, their prominence relative to ``scale`` and the summits of the
    prominent ones. Maxima are refined (golden section + Newton) only when there are at most
    ``refine_max`` of them; more means a ripple landscape, kept at grid resolution."""
    theta, e, m = landscape.local_maxima(ds64, act, UNIFORM, n_grid=config.n_grid, refine_iters=0, newton_iters=0)
    refined = m.theta.size <= config.refine_max
    if refined:
        theta, e, m = landscape.local_maxima(ds64, act, UNIFORM, n_grid=config.n_grid)
    prom = landscape.prominence(theta, e, m.theta, m.energy) / scale
    big = prom >= config.min_prominence
    summit = landscape.summit_labels(theta, e, m.theta[big], m.energy[big], config.min_prominence * scale)
    return {"theta": theta, "energy_grid": e, "maxima": m, "prominence_rel": prom, "prominent": big,
            "summit": summit, "refined": refined, "n_maxima": int(m.theta.size), "n_prominent": int(big.sum()),
            "smallest_prominent": float(prom[big].min()) if big.any() else None,
            "largest_ripple": float(prom[~big].max()) if (~big).any() else None,
            "energy_range_rel": float((e.max() - e.min()) / scale), "energy_max_rel": float(e.max() / scale)}


def _rotation_engine(config: AugmentationConfig, ds64, spec: DataSpec, act: str, grid: dict, scale: float) -> dict:
    """The basins engine on one rotation range; each optimum is attributed to the prominent grid
    maximum whose summit (``landscape.summit_labels``) it sits on, or counted as a ripple optimum."""
    n_init = config.n_init
    an = _basins(config, ds64, spec, act, n_init)
    rows = an["rows"]
    theta = np.array([np.arctan2(r["w"][1], r["w"][0]) for r in rows])
    peak = grid["summit"][landscape.grid_index(grid["theta"], theta)] if rows else np.zeros(0, int)
    on_peak = np.array([r["stable"] for r in rows], bool) & (peak >= 0)
    counts = np.bincount(peak[on_peak], weights=[r["count"] for r, ok in zip(rows, on_peak) if ok],
                         minlength=grid["n_prominent"]).astype(int)
    m, big = grid["maxima"], grid["prominent"]
    peaks = [{"theta_over_pi": t / np.pi, "prominence_rel": p, "energy_rel": en / scale, "at_kink": kink,
              "basin_fraction": c / n_init, "ci95": stats.wilson_interval(c, n_init),
              "engine_optima": int(np.sum(on_peak & (peak == k)))}
             for k, (t, p, en, kink, c) in enumerate(zip(m.theta[big], grid["prominence_rel"][big], m.energy[big],
                                                         m.at_kink[big], counts))]
    optima = [{"theta_over_pi": t / np.pi, "fraction": r["fraction"], "count": r["count"],
               "energy_rel": r["energy"] / scale, "stable": r["stable"], "smooth": r["smooth"], "peak": int(k)}
              for r, t, k in zip(rows, theta, peak)]
    energies = [o["energy_rel"] for o in optima]
    return {"status_counts": an["status_counts"], "steps_median": an["steps_median"], "n_optima": len(rows),
            "n_stable": int(sum(r["stable"] for r in rows)), "n_peaks_reached": int(np.sum(counts > 0)),
            "peak_mass": float(counts.sum() / n_init), "n_ripple_optima": int(np.sum(~on_peak)),
            "ripple_mass": float(sum(r["fraction"] for r, ok in zip(rows, on_peak) if not ok)),
            "optima_energy_range_rel": float(max(energies) - min(energies)) if optima else None,
            "peaks": peaks, "optima": optima[:40], "optima_listed": min(len(optima), 40)}


def _scale(config: AugmentationConfig, act) -> float:
    """max |E| on the circle without augmentation: the unit of every relative energy."""
    none = build_dataset(DataSpec(data="circle"), jnp.float64)
    return float(np.max(np.abs(np.asarray(landscape.local_maxima(none, act, UNIFORM, n_grid=config.n_grid)[1]))))


def _rotation_study(config: AugmentationConfig, log) -> tuple:
    per_act, ripple = {}, {}
    for name in config.acts:
        act = activations.get_activation(name)
        scale = _scale(config, act)
        rows = []
        for label in config.ranges:
            a = float(fractions.Fraction(label))  # a valid label (AugmentationConfig.__post_init__)
            t0 = time.time()
            v = config.rotation_views(a) if a > 0 else None
            spec = _circle_spec(a, v)
            ds64 = build_dataset(spec, jnp.float64)
            grid = _grid_maxima(config, ds64, act, scale)
            row = {"act": name, "range": label, "a": a, "n_views": v, "views_total": int(ds64.n * (v or 1)),
                   "grid": {k: grid[k] for k in ("n_maxima", "n_prominent", "smallest_prominent", "largest_ripple",
                                                 "energy_range_rel", "energy_max_rel", "refined")}}
            if grid["refined"]:  # a ripple landscape has thousands: its counts and extremes are above
                row.update(maxima_theta_over_pi=grid["maxima"].theta / np.pi,
                           maxima_prominence_rel=grid["prominence_rel"], maxima_at_kink=grid["maxima"].at_kink)
            if name in config.basin_acts:
                row["basins"] = _rotation_engine(config, ds64, spec, name, grid, scale)
                aug = "" if a == 0 else f" --aug=rotation --aug_range={a!r} --aug_views={v}"
                row["basins_command"] = (f"python scripts/basins.py --data=circle "
                                         f"{_engine_flags(config, name, config.n_init)}{aug} "
                                         f"--output_dir=runs/augmentation-{name}-{label.replace('/', 'over')}")
            rows.append(row)
            eng = row.get("basins")
            log(f"  rotation {name} a={label} (V={v}): {grid['n_maxima']} maxima, {grid['n_prominent']} prominent"
                + (f"; engine: {eng['n_optima']} optima on {eng['n_peaks_reached']} prominent peaks, converged "
                   f"{eng['status_counts']['converged']}/{config.n_init}" if eng else "")
                + f" ({time.time() - t0:.1f} s)")
        per_act[name] = {"scale_max_abs_E_none": scale, "rows": rows}
        ripple[name] = _ripple_table(config, act, scale)
    return per_act, ripple


def _ripple_table(config: AugmentationConfig, act, scale: float) -> dict:
    """(max E - min E) / scale on the circle with the whole circle of rotations, per quadrature size V."""
    views = list(config.ripple_views)
    theta = jnp.linspace(-np.pi, np.pi, config.n_grid + 1, dtype=jnp.float64)[:-1]
    rel = []
    for v in views:
        ds64 = build_dataset(_circle_spec(1.0, v), jnp.float64)
        e = np.asarray(landscape.energy_on_circle(ds64, act, UNIFORM, theta))
        rel.append(float((e.max() - e.min()) / scale))
    r = np.asarray(rel)
    ok = r > ROUNDING
    slope = float(np.polyfit(np.log(np.asarray(views, float)[ok]), np.log(r[ok]), 1)[0]) if ok.sum() >= 2 else None
    return {"views": views, "energy_range_rel": rel, "loglog_slope": slope}


# --- shift study -----------------------------------------------------------------------------------


def shift_data(config: AugmentationConfig):
    """The 2^m signals of the shift study (latent summation of ``shift_m`` zero-mean patterns), float64."""
    u = config.shift_amplitude * models.zero_mean_basis(jax.random.PRNGKey(config.data_seed), config.shift_d,
                                                        config.shift_m)
    return models.latent_summation(u, config.shift_q)


def _shift_label(r: int, d: int) -> str:
    if r == 0:
        return "none"
    return f"Z_{d} (all shifts)" if 2 * r + 1 >= d else f"shifts -{r}..{r} (not a group)"


def _best_pattern(w, patterns) -> tuple:
    """(pattern index, shift, cosine) of the shifted pattern closest to w."""
    u = np.asarray(patterns) / np.linalg.norm(patterns, axis=1, keepdims=True)
    cos = np.stack([symmetry.cyclic_shifts(p) @ w for p in u])  # (m, d)
    k, s = np.unravel_index(np.argmax(cos), cos.shape)
    return int(k), int(s), float(cos[k, s])


def _shift_study(config: AugmentationConfig, base, data_path: str, log) -> list:
    out, n_init = [], config.shift_n_init
    for r in config.shift_ranges:
        t0 = time.time()
        aug = {} if r == 0 else {"aug": "shift", "aug_range": r}
        ds64 = base if r == 0 else augment(base, DataSpec(**aug), None)
        an = _basins(config, ds64, DataSpec(data="file", data_path=data_path, **aug), config.shift_act, n_init)
        orbits = symmetry.orbit_summary(an["rows"], an["optima"], n_init, config.cluster_tol)
        for orb in orbits:
            orb["ci95"] = [an["rows"][i]["ci95"] for i in orb["members"]]
            orb["best_pattern"], orb["best_shift"], orb["best_cos"] = _best_pattern(
                np.asarray(an["optima"][orb["members"][0]]), base.patterns)
            orb["w"] = an["optima"][orb["members"][0]]
        views = 1 if r == 0 else models.shift_amounts(base.dim, r).size
        rec = {"max_shift": r, "setting": _shift_label(r, base.dim), "n_views": int(views),
               "status_counts": an["status_counts"], "steps_median": an["steps_median"],
               "n_optima": len(an["rows"]), "n_stable": sum(x["stable"] for x in an["rows"]),
               "n_orbits": len(orbits), "n_complete": sum(o["complete"] for o in orbits),
               "orbit_sizes": [o["size"] for o in orbits],
               "max_relative_spread": max((o["relative_spread"] for o in orbits), default=0.0),
               "all_wilson_overlap": all(o["wilson_overlap"] for o in orbits),
               "min_chi2_pvalue": min((o["chi2_pvalue"] for o in orbits if o["size"] > 1), default=None),
               "orbits": orbits,
               "basins_command": (f"python scripts/basins.py --data=file --data_path={data_path} "
                                  f"{_engine_flags(config, config.shift_act, n_init)}"
                                  + ("" if r == 0 else f" --aug=shift --aug_range={r}")
                                  + f" --output_dir=runs/augmentation-shift{r}")}
        out.append(rec)
        log(f"  shift {rec['setting']}: {rec['n_optima']} optima in {rec['n_orbits']} orbits "
            f"({rec['n_complete']} complete), converged {an['status_counts']['converged']}/{n_init} "
            f"({time.time() - t0:.1f} s)")
    return out


# --- the study -------------------------------------------------------------------------------------


def run(config: AugmentationConfig, progress=None, *, data_path: str = "shift_data.npz") -> dict:
    """Both studies and their verdicts. Needs float64 (``jax_enable_x64``).

    Args:
      progress: optional callback taking one line of text per step (e.g. ``ccdyn.cli.log``).
      data_path: where :func:`shift_data` is saved, for the recorded ``scripts/basins.py`` commands.

    Returns:
      ``{"config", "dynamics", "verdicts": {"rotation", "shift"}, "rotation": {"per_act": activation ->
      {"scale_max_abs_E_none", "rows"}, "ripple": activation -> {"views", "energy_range_rel",
      "loglog_slope"}}, "shift": {"patterns", "settings"}, "timings_s": {"rotation", "shift"}}``.
    """
    if not jax.config.read("jax_enable_x64"):
        raise RuntimeError("the augmentation study needs float64: jax.config.update('jax_enable_x64', True)")
    log = progress or (lambda message: None)
    log("rotation study (Fig. 8 data) ...")
    t0 = time.time()
    per_act, ripple = _rotation_study(config, log)
    rotation_s = time.time() - t0
    log("shift study ...")
    t0 = time.time()
    base = shift_data(config)
    settings = _shift_study(config, base, data_path, log)
    shift_s = time.time() - t0
    return {"config": dataclasses.asdict(config), "dynamics": dataclasses.asdict(config.dynamics),
            "verdicts": {"rotation": claims.rotation_verdict(config, per_act, ripple),
                         "shift": claims.shift_verdict(settings, config.shift_d)},
            "rotation": {"per_act": per_act, "ripple": ripple},
            "shift": {"patterns": base.patterns, "settings": settings},
            "timings_s": {"rotation": rotation_s, "shift": shift_s}}


# --- tables, text, figures -------------------------------------------------------------------------


def _fmt(v, spec=".2e"):
    return "-" if v is None else format(v, spec)


def rotation_rows(per_act: dict) -> tuple:
    """(header, rows) of the rotation table (``record["rotation"]["per_act"]``)."""
    head = ["act", "a (π)", "V", "strict maxima", "prominent maxima", "smallest prominent", "largest ripple",
            "range of E", "converged", "optima (stable)", "peaks reached", "mass on peaks", "ripple optima (mass)"]
    body = []
    for name, d in per_act.items():
        for r in d["rows"]:
            g, b = r["grid"], r.get("basins")
            body.append([name, r["range"], r["n_views"] or "-", g["n_maxima"], g["n_prominent"],
                         _fmt(g["smallest_prominent"]), _fmt(g["largest_ripple"]), _fmt(g["energy_range_rel"])]
                        + ([b["status_counts"]["converged"], f"{b['n_optima']} ({b['n_stable']})",
                            f"{b['n_peaks_reached']}/{g['n_prominent']}", f"{b['peak_mass']:.4f}",
                            f"{b['n_ripple_optima']} ({b['ripple_mass']:.4f})"] if b else ["-"] * 5))
    return head, body


def rotation_key(config: AugmentationConfig) -> list:
    """The key of :func:`rotation_rows`' table."""
    return report.key_lines(
        "act: the activation; a (π): views R(t) x0 with t ~ U[-a pi, a pi] (0: no augmentation, 1: the whole "
        "circle); V: quadrature angles of t; strict maxima: local maxima of E(theta) on the float64 grid; "
        f"prominent maxima: those with prominence >= {config.min_prominence:g} of max |E| without augmentation "
        "(the others are ripple of the finite quadrature); smallest prominent, largest ripple: their prominences "
        "(relative), the gap between the two; range of E: (max E - min E) / max |E without augmentation|; "
        "converged ... ripple optima (mass), the basins engine (flow): converged: inits that converged; optima "
        "(stable): its optima (certified stable); peaks reached: prominent maxima with an engine optimum on their "
        "summit / prominent maxima; mass on peaks: the share of inits in their basins; ripple optima (mass): "
        "optima on no summit and their basins' share; -: not run.")


def shift_key() -> list:
    """The key of :func:`shift_rows`' table (:func:`ccdyn.one_layer.symmetry.orbit_summary`)."""
    return report.key_lines(
        "setting: none, or cyclic shifts by |s| <= r; views: views per sample; orbit: the index of a shift orbit "
        "of optima; size: its optima; d / #stab: the size a full orbit has (d over its stabilizer); complete: "
        "size = d / #stab; energy: the orbit's mean E; rel. spread: (max - min) E / |mean E| over its members; "
        "all stable: every member certified stable; basin mass: the share of inits in the orbit's basins; "
        "fractions (min–max): its members' basins; CIs cover mean: members whose 95% Wilson interval covers the "
        "orbit's mean fraction; CIs overlap: all those intervals share a point; chi² p: the p-value of equal "
        "counts (chi-square); closest pattern (shift, cos): the planted pattern and cyclic shift nearest its "
        "first member, and their cosine.")


def shift_rows(records: list) -> tuple:
    """(header, rows) of the shift table, one row per orbit (``record["shift"]["settings"]``)."""
    head = ["setting", "views", "orbit", "size", "d / #stab", "complete", "energy", "rel. spread", "all stable",
            "basin mass", "fractions (min–max)", "CIs cover mean", "CIs overlap", "chi² p",
            "closest pattern (shift, cos)"]
    body = []
    for r in records:
        for k, o in enumerate(r["orbits"]):
            body.append([r["setting"], r["n_views"], k, o["size"], o["expected_size"], o["complete"],
                         f"{o['energy']:.6g}", f"{o['relative_spread']:.1e}", o["all_stable"], f"{o['mass']:.4f}",
                         f"{min(o['fractions']):.4f}–{max(o['fractions']):.4f}", f"{o['covering']}/{o['size']}",
                         o["wilson_overlap"],
                         f"{o['chi2_pvalue']:.3f}", f"u{o['best_pattern']} ({o['best_shift']}, {o['best_cos']:.3f})"])
    return head, body


def markdown(config: AugmentationConfig, record: dict, command: str) -> str:
    """``augmentation.md``: the tables and verdicts of ``record`` under the command that made it."""
    ripple, shift_records, verdicts = record["rotation"]["ripple"], record["shift"]["settings"], record["verdicts"]
    rip = report.markdown_table(["act"] + [f"V = {v}" for v in config.ripple_views] + ["log-log slope"],
                                [[n] + [f"{x:.1e}" for x in r["energy_range_rel"]] + [_fmt(r["loglog_slope"], ".2f")]
                                 for n, r in ripple.items()])
    summary = report.markdown_table(
        ["setting", "views", "converged", "optima", "stable", "orbits", "complete", "max rel. spread",
         "all Wilson overlap", "min chi² p"],
        [[r["setting"], r["n_views"], r["status_counts"]["converged"], r["n_optima"], r["n_stable"], r["n_orbits"],
          r["n_complete"], f"{r['max_relative_spread']:.1e}", r["all_wilson_overlap"],
          _fmt(r["min_chi2_pvalue"], ".3f")] for r in shift_records])
    return "\n".join([
        "# App. B.5: augmentation and local optima", "", f"`{command}`", "",
        "## Rotations of the Fig. 8 circle data", "",
        f"V quadrature angles of t; E and prominences relative to max |E| without augmentation; a maximum is "
        f"prominent when its prominence is >= {config.min_prominence:g}, else ripple (of the finite quadrature). "
        "Smallest prominent / largest ripple show the gap between the two. Engine (scripts/basins.py): "
        f"{config.n_init} inits, flow (euler_halving), float32 run, float64 refinement; peaks reached: prominent "
        f"maxima with an engine optimum on their summit (E within {config.min_prominence:g} of the peak); ripple "
        "optima: on no summit.", "",
        report.markdown_table(*rotation_rows(record["rotation"]["per_act"])), "",
        "Whole circle (a = 1): (max E − min E) / max |E without augmentation| against the quadrature size V:", "",
        rip, "", verdicts["rotation"], "",
        f"## Cyclic shifts of 1-D signals (d = {config.shift_d}, act = {config.shift_act})", "",
        summary, "", report.markdown_table(*shift_rows(shift_records)), "", verdicts["shift"], ""])


def figures(config: AugmentationConfig, record: dict) -> dict:
    """``{"rotation.png": ..., "shift.png": ...}`` matplotlib figures of ``record``. The rotation figure's
    E(theta) curves (first activation, every range) are evaluated again on the study's grid."""
    name = config.acts[0]
    act = activations.get_activation(name)
    per_act, ripple = record["rotation"]["per_act"], record["rotation"]["ripple"]
    scale = per_act[name]["scale_max_abs_E_none"]
    theta = jnp.linspace(-np.pi, np.pi, config.n_grid + 1, dtype=jnp.float64)[:-1]  # landscape.local_maxima's grid
    curves = {}
    for r in per_act[name]["rows"]:
        ds64 = build_dataset(_circle_spec(r["a"], r["n_views"]), jnp.float64)
        curves[r["range"]] = np.asarray(landscape.energy_on_circle(ds64, act, UNIFORM, theta)) / scale
    counts = {n: ([r["grid"]["n_prominent"] for r in d["rows"]], [r["grid"]["n_maxima"] for r in d["rows"]])
              for n, d in per_act.items()}
    settings = record["shift"]["settings"]
    return {
        "rotation.png": rotation_augmentation_figure(
            np.asarray(theta), curves, counts, list(config.ranges),
            {n: (r["views"], r["energy_range_rel"]) for n, r in ripple.items()},
            f"App. B.5: rotation augmentation of the Fig. 8 data ({name} on the left)", ROUNDING),
        "shift.png": orbit_basins_figure(
            {f"{r['setting']}: {r['n_optima']} optima": r["orbits"] for r in settings},
            f"App. B.5: cyclic shifts, d = {config.shift_d}, {config.shift_act}, {config.shift_n_init} inits"),
    }
