"""App. B.5: a group augmentation removes optima (continuous group) or ties them into orbits (discrete).

    python scripts/augmentation.py --overwrite     # -> results/theory/augmentation (~3 min on 2 CPU cores)

With views x = R(t) x0, t ~ Uniform(T), {R(t)} a group, the view-averaged output b(w|x0) = E_t h(w^T R(t) x0)
satisfies b(R w|x0) = b(w|x0), hence E_alpha(R w) = E_alpha(w) (Eq. 105-108, alpha under stop-gradient).

Rotation study (continuous group): the nine points of Fig. 8 on the unit circle, rotated by
t ~ U[-a pi, a pi] for each half-range a in --ranges (a = 1: the whole circle; the uniform t is
represented exactly by a midpoint rule with V = max(--min_views, round(a * --views_per_circle)) angles,
so a = 1 is the cyclic group C_V, which tends to SO(2)). Per activation and range: the local maxima of
E(theta) on a dense float64 grid (``ccdyn.landscape``) and their prominence (a finite quadrature leaves
ripple maxima of tiny prominence: a maximum counts as *prominent* when its prominence is at least
--min_prominence times max |E| without augmentation), the range of E, and for --basin_acts the basins
engine of scripts/basins.py (flow, --n_init inits; its optima are matched to the grid maxima). Then the
flatness (max E - min E) at a = 1 against V (--ripple_views). App. B.5 predicts no strict optimum
with the whole circle (no w != 0 is rotation invariant).

Shift study (discrete group): 1-D signals of length --shift_d, the latent-summation model (Eq. 9) on
--shift_m zero-mean orthonormal patterns of amplitude --shift_amplitude, with the cyclic shifts by
|s| <= r for r in --shift_ranges (0: none; 2r + 1 >= d: the whole group Z_d). Per setting: the optima
of the basins engine, grouped into shift orbits (``ccdyn.symmetry``): complete orbits, equal energies,
equal basins (95% Wilson intervals, chi-square). App. B.5 predicts complete orbits with equal energies
(and, by the rotation invariance of the inits, equal basins) for Z_d only.

Writes into --output_dir: augmentation.json (everything, with the command), augmentation.md (tables,
verdicts), rotation.csv, shift.csv, rotation.png, shift.png and shift_data.npz (the 2^m signals, so
that scripts/basins.py --data=file --data_path=... --aug=shift reproduces a row).
"""

from __future__ import annotations

import dataclasses
import fractions
import platform
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)  # landscapes and certificates in float64

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import ccdyn  # noqa: E402
from ccdyn.data import files
from ccdyn import activations, io, pairwise, plotting, report, stats  # noqa: E402
from ccdyn.one_layer import basins, engine, landscape, symmetry  # noqa: E402
from ccdyn.data import models  # noqa: E402
from ccdyn.data.dataset import make_dataset  # noqa: E402
from ccdyn.data.registry import DataSpec, augment, build_dataset  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("ranges", ["0", "1/36", "1/18", "1/9", "1/6", "1/4", "1/2", "1"],
                  "Rotation half-ranges a in units of pi, in [0, 1] (0: no augmentation; fractions allowed).")
flags.DEFINE_list("acts", ["relu", "leaky_relu", "linear"], "Activations of the rotation landscapes.")
flags.DEFINE_list("basin_acts", ["relu"], "Activations (among --acts) that also get the basins engine.")
flags.DEFINE_integer("views_per_circle", 512, "Rotation quadrature angles per 2 pi (a range a uses "
                     "max(--min_views, round(a * this)) angles).", lower_bound=2)
flags.DEFINE_integer("min_views", 16, "Fewest quadrature angles of a rotation range.", lower_bound=1)
flags.DEFINE_list("ripple_views", ["8", "16", "32", "64", "128", "256", "512"],
                  "Quadrature sizes V of the full-circle flatness table (>= 2).")
flags.DEFINE_float("min_prominence", 5e-5, "A maximum is prominent when its prominence is at least this "
                   "times max |E| without augmentation, in (0, 1).")
flags.DEFINE_integer("n_grid", 1 << 14, "Landscape grid points over [-pi, pi).", lower_bound=16)
flags.DEFINE_integer("refine_max", 64, "Refine the grid maxima only when there are at most this many.",
                     lower_bound=0)
flags.DEFINE_integer("n_init", 4000, "Inits of the rotation basins runs.", lower_bound=1)
flags.DEFINE_integer("shift_n_init", 8000, "Inits of the shift basins runs.", lower_bound=1)
flags.DEFINE_integer("max_steps", 2000, "Flow steps before a run is declared not converged.", lower_bound=1)
flags.DEFINE_float("step_size", 1.0, "Initial Euler step of the flow (> 0).")
flags.DEFINE_float("cluster_tol", 1e-2, "Endpoints closer than this are one optimum, in (0, 1).")
flags.DEFINE_integer("tile", 512, "Inits per tile (as scripts/basins.py).", lower_bound=1)
flags.DEFINE_integer("chunk_size", 16384, "Inits per chunk (as scripts/basins.py).", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of the initializations (init i uses fold_in(seed, i)).")
flags.DEFINE_integer("shift_d", 8, "Signal length d of the shift study (>= 3).", lower_bound=3)
flags.DEFINE_integer("shift_m", 3, "Patterns of the shift study, in [1, min(d - 1, 16)].", lower_bound=1)
flags.DEFINE_float("shift_q", 0.2, "Latent summation q of the shift study, in (0, 1).")
flags.DEFINE_float("shift_amplitude", 3.0, "Norm of each shift-study pattern (> 0).")
flags.DEFINE_enum("shift_act", "gelu", activations.ACTIVATIONS, "Activation of the shift study.")
flags.DEFINE_list("shift_ranges", ["0", "1", "4"], "Largest shifts r of the shift study (0: none; integers >= 0).")
flags.DEFINE_integer("data_seed", 0, "Seed of the shift-study patterns.")
flags.DEFINE_string("output_dir", "results/theory/augmentation", "Where the outputs go.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")


def _fraction(text) -> float | None:
    try:
        return float(fractions.Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        return None


def _ints(values):
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        return None


flags.register_validator("ranges", lambda v: len(v) > 0 and all(_fraction(x) is not None and 0 <= _fraction(x) <= 1
                                                                 for x in v),
                         "--ranges must be numbers or fractions in [0, 1] (units of pi), e.g. 0,1/36,1/2,1")
flags.register_validator("acts", lambda v: len(v) > 0 and all(a in activations.ACTIVATIONS for a in v),
                         f"--acts must be a non-empty list from: {', '.join(activations.ACTIVATIONS)}")
flags.register_multi_flags_validator(["basin_acts", "acts"], lambda f: set(f["basin_acts"]) <= set(f["acts"]),
                                     "--basin_acts must be a subset of --acts")
flags.register_validator("ripple_views", lambda v: _ints(v) is not None and len(v) >= 2 and min(_ints(v)) >= 2,
                         "--ripple_views must be at least two integers >= 2")
flags.register_validator("min_prominence", lambda v: 0 < v < 1, "--min_prominence must lie in (0, 1)")
flags.register_validator("step_size", lambda v: v > 0, "--step_size must be > 0")
flags.register_validator("cluster_tol", lambda v: 0 < v < 1, "--cluster_tol must lie in (0, 1)")
flags.register_validator("shift_q", lambda v: 0 < v < 1, "--shift_q must lie in (0, 1)")
flags.register_validator("shift_amplitude", lambda v: v > 0, "--shift_amplitude must be > 0")
flags.register_validator("shift_ranges", lambda v: _ints(v) is not None and len(v) > 0 and min(_ints(v)) >= 0,
                         "--shift_ranges must be integers >= 0 (0: no augmentation)")
flags.register_multi_flags_validator(
    ["shift_m", "shift_d"], lambda f: f["shift_m"] <= min(f["shift_d"] - 1, models.MAX_EXACT_M),
    f"--shift_m must lie in [1, min(--shift_d - 1, {models.MAX_EXACT_M})]")

UNIFORM = pairwise.get_pairwise("uniform")
ROUNDING = 1e-14  # a relative range of E below this is float64 rounding, not quadrature ripple


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _dynamics() -> engine.Dynamics:
    return engine.Dynamics(method="flow", step_size=FLAGS.step_size, max_steps=FLAGS.max_steps)


def cast(ds, dtype):
    return make_dataset(np.asarray(ds.x), ds.p, ds.x_aug, ds.p_aug, ds.patterns, dtype=dtype)


def run_basins(ds64, act, n_init: int) -> dict:
    """The basins engine of scripts/basins.py (float32 flow, float64 refinement) on one dataset."""
    dyn = _dynamics()
    runner = engine.ChunkRunner(cast(ds64, jnp.float32), act, UNIFORM, dyn, tile=FLAGS.tile)
    result = engine.collect(runner, jax.random.PRNGKey(FLAGS.seed), n_init, FLAGS.chunk_size, jnp.float32)
    an = basins.analyze(ds64, act, UNIFORM, dyn, result, cluster_tol=FLAGS.cluster_tol)
    an["steps_median"] = float(np.median(result["steps"]))
    return an


def _engine_flags(act: str, n_init: int) -> str:
    return (f"--act={act} --method=flow --step_size={FLAGS.step_size} --max_steps={FLAGS.max_steps} "
            f"--n_init={n_init} --seed={FLAGS.seed} --tile={FLAGS.tile} --chunk_size={FLAGS.chunk_size} "
            f"--cluster_tol={FLAGS.cluster_tol}")


# --- rotation study --------------------------------------------------------------------------------


def rotation_views_for(a: float) -> int:
    return max(FLAGS.min_views, int(round(a * FLAGS.views_per_circle)))


def circle_spec(a: float, n_views: int) -> DataSpec:
    if a == 0:
        return DataSpec(data="circle")
    return DataSpec(data="circle", aug="rotation", aug_range=a, aug_views=n_views)


def grid_maxima(ds64, act, scale: float) -> dict:
    """Local maxima of E on the circle, their prominence relative to ``scale`` and the summits of the
    prominent ones. Maxima are refined (golden section + Newton) only when there are at most
    --refine_max of them; more means a ripple landscape, kept at grid resolution."""
    theta, e, m = landscape.local_maxima(ds64, act, UNIFORM, n_grid=FLAGS.n_grid, refine_iters=0, newton_iters=0)
    refined = m.theta.size <= FLAGS.refine_max
    if refined:
        theta, e, m = landscape.local_maxima(ds64, act, UNIFORM, n_grid=FLAGS.n_grid)
    prom = landscape.prominence(theta, e, m.theta, m.energy) / scale
    big = prom >= FLAGS.min_prominence
    summit = landscape.summit_labels(theta, e, m.theta[big], m.energy[big], FLAGS.min_prominence * scale)
    return {"theta": theta, "energy_grid": e, "maxima": m, "prominence_rel": prom, "prominent": big,
            "summit": summit, "refined": refined, "n_maxima": int(m.theta.size), "n_prominent": int(big.sum()),
            "smallest_prominent": float(prom[big].min()) if big.any() else None,
            "largest_ripple": float(prom[~big].max()) if (~big).any() else None,
            "energy_range_rel": float((e.max() - e.min()) / scale), "energy_max_rel": float(e.max() / scale)}


def rotation_engine(ds64, act, grid: dict, scale: float) -> dict:
    """The basins engine on one rotation range; each optimum is attributed to the prominent grid
    maximum whose summit (``landscape.summit_labels``) it sits on, or counted as a ripple optimum."""
    an = run_basins(ds64, act, FLAGS.n_init)
    rows = an["rows"]
    theta = np.array([np.arctan2(r["w"][1], r["w"][0]) for r in rows])
    peak = grid["summit"][landscape.grid_index(grid["theta"], theta)] if rows else np.zeros(0, int)
    on_peak = np.array([r["stable"] for r in rows], bool) & (peak >= 0)
    counts = np.bincount(peak[on_peak], weights=[r["count"] for r, ok in zip(rows, on_peak) if ok],
                         minlength=grid["n_prominent"]).astype(int)
    m, big = grid["maxima"], grid["prominent"]
    peaks = [{"theta_over_pi": t / np.pi, "prominence_rel": p, "energy_rel": en / scale, "at_kink": kink,
              "basin_fraction": c / FLAGS.n_init, "ci95": stats.wilson_interval(c, FLAGS.n_init),
              "engine_optima": int(np.sum(on_peak & (peak == k)))}
             for k, (t, p, en, kink, c) in enumerate(zip(m.theta[big], grid["prominence_rel"][big], m.energy[big],
                                                         m.at_kink[big], counts))]
    optima = [{"theta_over_pi": t / np.pi, "fraction": r["fraction"], "count": r["count"],
               "energy_rel": r["energy"] / scale, "stable": r["stable"], "smooth": r["smooth"], "peak": int(k)}
              for r, t, k in zip(rows, theta, peak)]
    energies = [o["energy_rel"] for o in optima]
    return {"status_counts": an["status_counts"], "steps_median": an["steps_median"], "n_optima": len(rows),
            "n_stable": int(sum(r["stable"] for r in rows)), "n_peaks_reached": int(np.sum(counts > 0)),
            "peak_mass": float(counts.sum() / FLAGS.n_init), "n_ripple_optima": int(np.sum(~on_peak)),
            "ripple_mass": float(sum(r["fraction"] for r, ok in zip(rows, on_peak) if not ok)),
            "optima_energy_range_rel": float(max(energies) - min(energies)) if optima else None,
            "peaks": peaks, "optima": optima[:40], "optima_listed": min(len(optima), 40)}


def rotation_study() -> tuple:
    ranges = [(label, _fraction(label)) for label in FLAGS.ranges]
    per_act, curves, ripple = {}, {}, {}
    for name in FLAGS.acts:
        act = activations.get_activation(name)
        none = build_dataset(DataSpec(data="circle"), jnp.float64)
        scale = float(np.max(np.abs(np.asarray(landscape.local_maxima(none, act, UNIFORM, n_grid=FLAGS.n_grid)[1]))))
        rows = []
        for label, a in ranges:
            t0 = time.time()
            v = rotation_views_for(a) if a > 0 else None
            ds64 = build_dataset(circle_spec(a, v), jnp.float64)
            grid = grid_maxima(ds64, act, scale)
            row = {"act": name, "range": label, "a": a, "n_views": v, "views_total": int(ds64.n * (v or 1)),
                   "grid": {k: grid[k] for k in ("n_maxima", "n_prominent", "smallest_prominent", "largest_ripple",
                                                 "energy_range_rel", "energy_max_rel", "refined")}}
            if grid["refined"]:  # a ripple landscape has thousands: its counts and extremes are above
                row.update(maxima_theta_over_pi=grid["maxima"].theta / np.pi,
                           maxima_prominence_rel=grid["prominence_rel"], maxima_at_kink=grid["maxima"].at_kink)
            if name == FLAGS.acts[0]:
                curves[label] = grid["energy_grid"] / scale
                theta = grid["theta"]
            if name in FLAGS.basin_acts:
                row["basins"] = rotation_engine(ds64, act, grid, scale)
                aug = "" if a == 0 else f" --aug=rotation --aug_range={a!r} --aug_views={v}"
                row["basins_command"] = (f"python scripts/basins.py --data=circle {_engine_flags(name, FLAGS.n_init)}"
                                         f"{aug} --output_dir=runs/augmentation-{name}-{label.replace('/', 'over')}")
            rows.append(row)
            eng = row.get("basins")
            _log(f"  rotation {name} a={label} (V={v}): {grid['n_maxima']} maxima, {grid['n_prominent']} prominent"
                 + (f"; engine: {eng['n_optima']} optima on {eng['n_peaks_reached']} prominent peaks, converged "
                    f"{eng['status_counts']['converged']}/{FLAGS.n_init}" if eng else "")
                 + f" ({time.time() - t0:.1f} s)")
        per_act[name] = {"scale_max_abs_E_none": scale, "rows": rows}
        ripple[name] = ripple_table(act, scale)
    return ranges, per_act, curves, theta, ripple


def ripple_table(act, scale: float) -> dict:
    """(max E - min E) / scale on the circle with the whole circle of rotations, per quadrature size V."""
    views = _ints(FLAGS.ripple_views)
    theta = jnp.linspace(-np.pi, np.pi, FLAGS.n_grid + 1, dtype=jnp.float64)[:-1]
    rel = []
    for v in views:
        ds64 = build_dataset(circle_spec(1.0, v), jnp.float64)
        e = np.asarray(landscape.energy_on_circle(ds64, act, UNIFORM, theta))
        rel.append(float((e.max() - e.min()) / scale))
    r = np.asarray(rel)
    ok = r > ROUNDING
    slope = float(np.polyfit(np.log(np.asarray(views, float)[ok]), np.log(r[ok]), 1)[0]) if ok.sum() >= 2 else None
    return {"views": views, "energy_range_rel": rel, "loglog_slope": slope}


def rotation_verdict(per_act: dict, ripple: dict) -> str:
    full = {name: next((r for r in d["rows"] if r["a"] == 1.0), None) for name, d in per_act.items()}
    if any(r is None for r in full.values()):
        return "rotation: no verdict (--ranges lacks 1, the whole circle)"
    none = {name: next((r for r in d["rows"] if r["a"] == 0.0), None) for name, d in per_act.items()}
    holds = all(r["grid"]["n_prominent"] == 0 and r["grid"]["energy_range_rel"] < FLAGS.min_prominence
                and r.get("basins", {"peak_mass": 0.0})["peak_mass"] == 0 for r in full.values())
    parts = []
    for name, r in full.items():
        before = none[name]["grid"]["n_prominent"] if none[name] else "?"
        text = (f"{name}: {before} -> {r['grid']['n_prominent']} prominent maxima, E flat to "
                f"{r['grid']['energy_range_rel']:.1e} of max|E| without augmentation")
        if ripple[name]["loglog_slope"] is not None and name != "linear":
            text += f" (ripple ~ V^{ripple[name]['loglog_slope']:.1f})"
        if "basins" in r:
            b = r["basins"]
            text += (f"; engine: {b['status_counts']['converged']}/{FLAGS.n_init} inits converge, "
                     f"basin mass on prominent peaks {b['peak_mass']:.3f}")
        parts.append(text)
    v = rotation_views_for(1.0)
    return (f"rotation verdict: App. B.5 {'HOLDS' if holds else 'FAILS'} — with the whole circle of rotations "
            f"(C_{v} -> SO(2)) no prominent local maximum is left: " + "; ".join(parts) + ".")


# --- shift study -----------------------------------------------------------------------------------


def shift_base():
    u = FLAGS.shift_amplitude * models.zero_mean_basis(jax.random.PRNGKey(FLAGS.data_seed), FLAGS.shift_d, FLAGS.shift_m)
    return models.latent_summation(u, FLAGS.shift_q)


def shift_label(r: int, d: int) -> str:
    if r == 0:
        return "none"
    return f"Z_{d} (all shifts)" if 2 * r + 1 >= d else f"shifts -{r}..{r} (not a group)"


def best_pattern(w, patterns) -> tuple:
    """(pattern index, shift, cosine) of the shifted pattern closest to w."""
    u = np.asarray(patterns) / np.linalg.norm(patterns, axis=1, keepdims=True)
    cos = np.stack([symmetry.cyclic_shifts(p) @ w for p in u])  # (m, d)
    k, s = np.unravel_index(np.argmax(cos), cos.shape)
    return int(k), int(s), float(cos[k, s])


def shift_study(base, act) -> list:
    out = []
    for r in _ints(FLAGS.shift_ranges):
        t0 = time.time()
        ds64 = base if r == 0 else augment(base, DataSpec(aug="shift", aug_range=r), None)
        an = run_basins(ds64, act, FLAGS.shift_n_init)
        orbits = symmetry.orbit_summary(an["rows"], an["optima"], FLAGS.shift_n_init, FLAGS.cluster_tol)
        for orb in orbits:
            orb["ci95"] = [an["rows"][i]["ci95"] for i in orb["members"]]
            orb["best_pattern"], orb["best_shift"], orb["best_cos"] = best_pattern(
                np.asarray(an["optima"][orb["members"][0]]), base.patterns)
            orb["w"] = an["optima"][orb["members"][0]]
        views = 1 if r == 0 else models.shift_amounts(base.dim, r).size
        rec = {"max_shift": r, "setting": shift_label(r, base.dim), "n_views": int(views),
               "status_counts": an["status_counts"], "steps_median": an["steps_median"],
               "n_optima": len(an["rows"]), "n_stable": sum(x["stable"] for x in an["rows"]),
               "n_orbits": len(orbits), "n_complete": sum(o["complete"] for o in orbits),
               "orbit_sizes": [o["size"] for o in orbits],
               "max_relative_spread": max((o["relative_spread"] for o in orbits), default=0.0),
               "all_wilson_overlap": all(o["wilson_overlap"] for o in orbits),
               "min_chi2_pvalue": min((o["chi2_pvalue"] for o in orbits if o["size"] > 1), default=None),
               "orbits": orbits,
               "basins_command": (f"python scripts/basins.py --data=file --data_path={FLAGS.output_dir}/shift_data.npz "
                                  f"{_engine_flags(act.name, FLAGS.shift_n_init)}"
                                  + ("" if r == 0 else f" --aug=shift --aug_range={r}")
                                  + f" --output_dir=runs/augmentation-shift{r}")}
        out.append(rec)
        _log(f"  shift {rec['setting']}: {rec['n_optima']} optima in {rec['n_orbits']} orbits "
             f"({rec['n_complete']} complete), converged {an['status_counts']['converged']}/{FLAGS.shift_n_init} "
             f"({time.time() - t0:.1f} s)")
    return out


def shift_verdict(records: list, d: int) -> str:
    """Holds when, with the whole group Z_d, every orbit is complete, energies agree within an orbit to
    1e-9 (relative) and no orbit's basin counts reject equal basins (chi-square, Bonferroni over orbits)."""
    group = [r for r in records if 2 * r["max_shift"] + 1 >= d]
    if not group:
        return f"shift: no verdict (--shift_ranges has no r with 2r + 1 >= d = {d})"
    g = group[0]
    multi = [o for o in g["orbits"] if o["size"] > 1]
    level = 0.05 / max(len(multi), 1)
    equal_basins = all(o["chi2_pvalue"] >= level for o in multi)
    holds = (g["n_optima"] > 0 and g["n_complete"] == g["n_orbits"] and g["max_relative_spread"] <= 1e-9
             and equal_basins)
    covered = sum(o["covering"] for o in multi)
    members = sum(o["size"] for o in multi)
    p_text = "n/a" if g["min_chi2_pvalue"] is None else f"{g['min_chi2_pvalue']:.2g}"
    others = "; ".join(f"{r['setting']}: {r['n_complete']}/{r['n_orbits']} orbits complete, {r['n_optima']} optima"
                       for r in records if r is not g)
    return (f"shift verdict: App. B.5 {'HOLDS' if holds else 'FAILS'} for Z_{d} — {g['n_optima']} optima fall into "
            f"{g['n_orbits']} shift orbits of sizes {g['orbit_sizes']}, {g['n_complete']}/{g['n_orbits']} complete "
            f"(size d / #stab), energies equal within an orbit to {g['max_relative_spread']:.1e} (relative); basins "
            f"equal within an orbit: smallest chi-square p {p_text} (Bonferroni level {level:.2g}), {covered}/{members} "
            f"members' 95% Wilson intervals cover their orbit's mean fraction (~95% expected), intervals of "
            f"{sum(o['wilson_overlap'] for o in multi)}/{len(multi)} orbits share a common point; {others}.")


# --- output ----------------------------------------------------------------------------------------


def _fmt(v, spec=".2e"):
    return "-" if v is None else format(v, spec)


def rotation_rows(per_act: dict) -> tuple:
    head = ["act", "a (π)", "V", "strict maxima", "prominent maxima", "smallest prominent", "largest ripple",
            "range of E", "converged", "optima (stable)", "peaks reached", "mass on peaks", "ripple optima (mass)"]
    body = []
    for name, d in per_act.items():
        for r in d["rows"]:
            g, b = r["grid"], r.get("basins")
            body.append([name, r["range"], r["n_views"] or "-", g["n_maxima"], g["n_prominent"], _fmt(g["smallest_prominent"]),
                         _fmt(g["largest_ripple"]), _fmt(g["energy_range_rel"])]
                        + ([b["status_counts"]["converged"], f"{b['n_optima']} ({b['n_stable']})",
                            f"{b['n_peaks_reached']}/{g['n_prominent']}", f"{b['peak_mass']:.4f}",
                            f"{b['n_ripple_optima']} ({b['ripple_mass']:.4f})"] if b else ["-"] * 5))
    return head, body


def shift_rows(records: list) -> tuple:
    head = ["setting", "views", "orbit", "size", "d / #stab", "complete", "energy", "rel. spread", "all stable",
            "basin mass", "fractions (min–max)", "CIs cover mean", "CIs overlap", "chi² p", "closest pattern (shift, cos)"]
    body = []
    for r in records:
        for k, o in enumerate(r["orbits"]):
            body.append([r["setting"], r["n_views"], k, o["size"], o["expected_size"], o["complete"], f"{o['energy']:.6g}",
                         f"{o['relative_spread']:.1e}", o["all_stable"], f"{o['mass']:.4f}",
                         f"{min(o['fractions']):.4f}–{max(o['fractions']):.4f}", f"{o['covering']}/{o['size']}",
                         o["wilson_overlap"],
                         f"{o['chi2_pvalue']:.3f}", f"u{o['best_pattern']} ({o['best_shift']}, {o['best_cos']:.3f})"])
    return head, body


def markdown(rot_head, rot_body, ripple, shift_head, shift_body, shift_records, verdicts, command) -> str:
    views = _ints(FLAGS.ripple_views)
    rip = report.markdown_table(["act"] + [f"V = {v}" for v in views] + ["log-log slope"],
                                [[n] + [f"{x:.1e}" for x in r["energy_range_rel"]] + [_fmt(r["loglog_slope"], ".2f")]
                                 for n, r in ripple.items()])
    summary = report.markdown_table(
        ["setting", "views", "converged", "optima", "stable", "orbits", "complete", "max rel. spread",
         "all Wilson overlap", "min chi² p"],
        [[r["setting"], r["n_views"], r["status_counts"]["converged"], r["n_optima"], r["n_stable"], r["n_orbits"],
          r["n_complete"], f"{r['max_relative_spread']:.1e}", r["all_wilson_overlap"], _fmt(r["min_chi2_pvalue"], ".3f")]
         for r in shift_records])
    return "\n".join([
        "# App. B.5: augmentation and local optima", "", f"`{command}`", "",
        "## Rotations of the Fig. 8 circle data", "",
        f"V quadrature angles of t; E and prominences relative to max |E| without augmentation; a maximum is "
        f"prominent when its prominence is >= {FLAGS.min_prominence:g}, else ripple (of the finite quadrature). "
        "Smallest prominent / largest ripple show the gap between the two. Engine (scripts/basins.py): "
        f"{FLAGS.n_init} inits, flow, float32 run, float64 refinement; peaks reached: prominent maxima with an "
        f"engine optimum on their summit (E within {FLAGS.min_prominence:g} of the peak); ripple optima: on no "
        "summit.", "",
        report.markdown_table(rot_head, rot_body), "",
        "Whole circle (a = 1): (max E − min E) / max |E without augmentation| against the quadrature size V:", "",
        rip, "", verdicts["rotation"], "",
        f"## Cyclic shifts of 1-D signals (d = {FLAGS.shift_d}, act = {FLAGS.shift_act})", "",
        summary, "", report.markdown_table(shift_head, shift_body), "", verdicts["shift"], ""])


def main(argv):
    del argv
    t_start = time.time()
    try:
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except FileExistsError as e:
        sys.exit(f"error: {e}")
    command = " ".join(["python", "scripts/augmentation.py"] + sys.argv[1:])
    _log(f"ccdyn augmentation (App. B.5) -> {out}")

    _log("rotation study (Fig. 8 data) ...")
    t0 = time.time()
    ranges, per_act, curves, theta, ripple = rotation_study()
    rotation_s = time.time() - t0
    _log("shift study ...")
    t0 = time.time()
    base = shift_base()
    files.save_dataset(out / "shift_data.npz", base)
    shift_records = shift_study(base, activations.get_activation(FLAGS.shift_act))
    shift_s = time.time() - t0

    verdicts = {"rotation": rotation_verdict(per_act, ripple), "shift": shift_verdict(shift_records, FLAGS.shift_d)}
    rot_head, rot_body = rotation_rows(per_act)
    shift_head, shift_body = shift_rows(shift_records)
    io.write_csv(out / "rotation.csv", rot_head, rot_body)
    io.write_csv(out / "shift.csv", shift_head, shift_body)
    md = markdown(rot_head, rot_body, ripple, shift_head, shift_body, shift_records, verdicts, command)
    io.atomic_write_bytes(out / "augmentation.md", md.encode())
    counts = {n: ([r["grid"]["n_prominent"] for r in d["rows"]], [r["grid"]["n_maxima"] for r in d["rows"]])
              for n, d in per_act.items()}
    io.save_figure(out / "rotation.png", plotting.rotation_augmentation_figure(
        theta, curves, counts, [label for label, _ in ranges],
        {n: (r["views"], r["energy_range_rel"]) for n, r in ripple.items()},
        f"App. B.5: rotation augmentation of the Fig. 8 data ({FLAGS.acts[0]} on the left)", ROUNDING))
    io.save_figure(out / "shift.png", plotting.orbit_basins_figure(
        {f"{r['setting']}: {r['n_optima']} optima": r["orbits"] for r in shift_records},
        f"App. B.5: cyclic shifts, d = {FLAGS.shift_d}, {FLAGS.shift_act}, {FLAGS.shift_n_init} inits"))
    io.write_json(out / "augmentation.json", {
        "command": command,
        "config": {k: FLAGS[k].value for k in (
            "ranges", "acts", "basin_acts", "views_per_circle", "min_views", "ripple_views", "min_prominence", "n_grid",
            "n_init", "shift_n_init", "max_steps", "step_size", "cluster_tol", "tile", "chunk_size", "seed", "shift_d",
            "shift_m", "shift_q", "shift_amplitude", "shift_act", "shift_ranges", "data_seed")},
        "dynamics": dataclasses.asdict(_dynamics()),
        "verdicts": verdicts,
        "rotation": {"per_act": per_act, "ripple": ripple},
        "shift": {"patterns": base.patterns, "settings": shift_records},
        "versions": {"ccdyn": ccdyn.__version__, "jax": jax.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "devices": [str(d) for d in jax.devices()],
        "timings_s": {"rotation": rotation_s, "shift": shift_s, "total": time.time() - t_start},
    })
    print(report.format_table(rot_head, rot_body))
    print()
    print(report.format_table(shift_head, shift_body))
    print()
    print(verdicts["rotation"])
    print(verdicts["shift"])
    print(f"\nwrote {out}/augmentation.json, augmentation.md, rotation.csv, shift.csv, rotation.png, shift.png, "
          f"shift_data.npz ({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    app.run(main)
