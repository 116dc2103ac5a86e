"""Roughness rho, eigengap and stability of every optimum of basins runs (Thm. 1-2, Cor. 2).

For every optimum w* of every run (its ``summary.json``, read by the script with
:func:`ccdyn.one_layer.basins.read_summary`): lambda_gap and lambda_1 of A(w*), the local roughness
rho(w*) from tangent perturbations at shrinking radii (:func:`ccdyn.one_layer.roughness.roughness`,
alpha evaluated at each probe), the Thm. 1 test lambda_gap > rho, stability of the flow at the
resolved radius (finite-difference Jacobian, alpha moving with w) beside the basins engine's verdict
and the Hessian certificate, and the Thm. 2 / Cor. 2 ingredients: r(w*, alpha_u) = max of p_D on the
plane w*^T x = 0 (k-NN estimate), the Thm. 2 bound, z0(alpha_g) and r(w*, alpha_g) = z0 r(w*, alpha_u).
With ``compare_taus``, rho at the optima of the first run is re-measured under Gaussian alpha at each
tau (Cor. 2 at fixed points). ``scripts/roughness.py`` writes the record and its tables.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import pairwise, report
from ccdyn.data.registry import build_dataset
from ccdyn.one_layer import basins, certify, roughness

__all__ = ["RoughnessConfig", "run", "markdown", "table", "OPTIMA_COLUMNS", "RUN_COLUMNS", "COMPARE_COLUMNS"]

OPTIMA_COLUMNS = ("run", "optimum", "fraction", "pattern", "cos", "lam1", "gap", "rho", "rho_radius",
                  "crossings", "thm1_gap_gt_rho", "fd_stable", "engine_stable", "hessian_cert", "z0", "r_uniform",
                  "r_gaussian", "thm2_bound")
RUN_COLUMNS = ("run", "alpha", "tau", "optima", "resolved", "thm1_holds", "fd_stable", "thm1_and_not_stable",
               "median_rho", "median_gap", "median_rho_over_gap", "mass_fd_stable_on_patterns", "median_z0")
COMPARE_COLUMNS = ("alpha", "tau", "median_z0", "median_rho", "median_gap", "median_rho_over_gap",
                   "median_rho_ratio_to_uniform")


@dataclasses.dataclass(frozen=True)
class RoughnessConfig:
    """Radii: ``n_radii`` on a geometric grid from ``r_max`` down to ``r_min`` (radians); a radius of a
    sample counts as resolved when a median of ``min_crossings`` points cross the ReLU plane.
    ``measure_samples`` > 0 measures a sampled run on a fresh sample of that size of the same model.
    ``n_random`` random tangent probes per radius; only optima with basin fraction >= ``min_fraction``;
    ``tau`` of z0 for runs with uniform alpha; ``compare_taus``: see the module docstring."""

    r_max: float = 0.2
    r_min: float = 1e-4
    n_radii: int = 12
    min_crossings: int = 50
    measure_samples: int = 0
    n_random: int = 16
    min_fraction: float = 0.0
    tau: float = 0.5
    compare_taus: tuple = ()

    @property
    def radii(self) -> np.ndarray:
        return np.geomspace(self.r_max, self.r_min, self.n_radii)


def _load(cfg: RoughnessConfig, summary: dict):
    """The run's float64 dataset (a larger sample with ``measure_samples``), activation, alpha, and
    whether the support is exact / has a density."""
    c = basins.BasinsConfig.from_dict(summary["config"])
    spec = c.data
    if cfg.measure_samples and spec.n_samples is not None:  # the run drew a sample: draw a larger one
        spec = dataclasses.replace(spec, n_samples=cfg.measure_samples)
    return build_dataset(spec, jnp.float64), c.activation, c.pairwise, not spec.sampled, spec.has_density


def _measure(cfg, ds, act, pw, w, tau_z0, exact, density) -> dict:
    radii = cfg.radii
    rough = roughness.roughness(ds, act, w, pw, radii, min_crossings=0 if exact else cfg.min_crossings,
                                n_random=cfg.n_random)
    cert = jax.device_get(certify.certify(ds, act, jnp.asarray(w), pw))
    at = np.flatnonzero(rough.resolved)
    k = int(at[-1]) if at.size else -1
    r_u = roughness.plane_density_max(ds, w) if density else None
    z0 = roughness.gaussian_z0(ds, act, w, tau_z0)
    return {"lam1": float(cert.lam1), "gap": float(cert.gap), "rho": rough.rho,
            "rho_radius": float(rough.radii[k]) if k >= 0 else None,
            "crossings": int(rough.crossings[k]) if k >= 0 else None,
            "fd_stable": bool(rough.jacobian_max[k] < 0) if k >= 0 else None,
            "thm1": bool(cert.gap > rough.rho) if k >= 0 else None,
            "z0": z0, "r_uniform": r_u, "r_gaussian": None if r_u is None else z0 * r_u,
            "thm2_bound": None if r_u is None else roughness.theorem2_bound(ds, r_u),
            "profile": {"radii": rough.radii, "rho_at": rough.rho_at, "crossings": rough.crossings,
                        "jacobian_max": rough.jacobian_max}}


def _dash(v):
    return "-" if v is None else v


def _median(values) -> float:
    v = [x for x in values if x is not None and np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def _optimum_row(name, o, m) -> list:
    return [name, o["optimum"], round(o["fraction"], 4), o["pattern"], o["overlap"], m["lam1"], m["gap"], m["rho"],
            _dash(m["rho_radius"]), _dash(m["crossings"]), _dash(m["thm1"]), _dash(m["fd_stable"]), o["stable"],
            o["strict_max_fixed_alpha"], m["z0"], _dash(m["r_uniform"]), _dash(m["r_gaussian"]),
            _dash(m["thm2_bound"])]


def _run_row(name, alpha, tau, rows) -> list:
    thm1 = [r["thm1"] for r in rows]
    stable = [r["fd_stable"] for r in rows]
    return [name, alpha, tau, len(rows), sum(r["rho_radius"] is not None for r in rows), sum(bool(t) for t in thm1),
            sum(bool(s) for s in stable), sum(bool(t) and s is False for t, s in zip(thm1, stable)),
            _median([r["rho"] for r in rows]), _median([r["gap"] for r in rows]),
            _median([r["rho"] / r["gap"] if r["gap"] > 0 else None for r in rows]),
            round(sum(r["fraction"] for r in rows if r["fd_stable"] and (r["cos"] or 0) >= 0.9), 4),
            _median([r["z0"] for r in rows])]


def run(cfg: RoughnessConfig, runs, log=None) -> dict:
    """Measures every optimum of every run, then (``compare_taus``) the first run's optima under each alpha.

    Args:
      runs: ``[(name, summary.json dict)]`` of basins runs.
      log: optional callable taking one progress line per run / alpha.

    Returns:
      ``{"config", "radii", "min_crossings", "runs": {name: {"alpha", "tau", "optima": [measurements]}},
      "compare": [dict per alpha], "tables": {"optima", "runs", "compare": rows of the *_COLUMNS}}``.
    """
    t0 = time.time()
    log = log or (lambda line: None)
    loaded = [(name, s, *_load(cfg, s)) for name, s in runs]
    per_run, table_rows, run_rows = {}, [], []
    for name, s, ds, act, pw, exact, density in loaded:
        tau = pw.tau if pw.kind == "gaussian" else cfg.tau
        rows = []
        for o in s["optima"]:
            if o["fraction"] < cfg.min_fraction:
                continue
            m = _measure(cfg, ds, act, pw, np.asarray(o["w"]), tau, exact, density)
            m.update({"optimum": o["optimum"], "fraction": o["fraction"], "pattern": o["pattern"],
                      "cos": o["overlap"], "engine_stable": o["stable"]})
            rows.append(m)
            table_rows.append(_optimum_row(name, o, m))
        log(f"  {name}: {len(rows)} optima measured ({time.time() - t0:.1f} s)")
        per_run[name] = {"alpha": pw.kind, "tau": pw.tau if pw.kind == "gaussian" else None, "optima": rows}
        run_rows.append(_run_row(name, pw.kind, per_run[name]["tau"] or "-", rows))

    compare = []
    if cfg.compare_taus:  # Cor. 2 at fixed points w: the first run's optima under each alpha
        name, s, ds, act, _, exact, density = loaded[0]
        ws = [np.asarray(o["w"]) for o in s["optima"] if o["fraction"] >= cfg.min_fraction]
        base = None
        for kind, tau in [("uniform", None)] + [("gaussian", float(t)) for t in cfg.compare_taus]:
            pw = pairwise.get_pairwise(kind, tau or 1.0)
            ms = [_measure(cfg, ds, act, pw, w, tau or cfg.tau, exact, density) for w in ws]
            rho = np.array([m["rho"] for m in ms])
            base = rho if base is None else base
            with np.errstate(divide="ignore", invalid="ignore"):  # rho = 0 at uniform alpha: inf / nan, dropped
                ratio = rho / base
            compare.append([kind, tau or "-", _median([m["z0"] for m in ms]) if tau else 1.0,
                            _median(rho), _median([m["gap"] for m in ms]),
                            _median([m["rho"] / m["gap"] if m["gap"] > 0 else None for m in ms]),
                            _median(ratio)])
            log(f"  compare {kind} tau={tau}: done ({time.time() - t0:.1f} s)")
    return {"config": dataclasses.asdict(cfg), "radii": cfg.radii, "min_crossings": cfg.min_crossings,
            "runs": per_run, "compare": [dict(zip(COMPARE_COLUMNS, r)) for r in compare],
            "tables": {"optima": table_rows, "runs": run_rows, "compare": compare}}


def table(record: dict) -> str:
    """The per-run table, then the same-points comparison (if any)."""
    t = record["tables"]
    parts = [report.format_table(RUN_COLUMNS, t["runs"]), *report.key_lines(RUN_KEY)]
    if t["compare"]:
        parts += ["", report.format_table(COMPARE_COLUMNS, t["compare"]), *report.key_lines(COMPARE_KEY)]
    return "\n".join(parts)


RUN_KEY = ("run: the basins run; alpha, tau: its pairwise weight; optima: its optima measured; resolved: those whose "
           "roughness has a resolved radius (enough data points cross the ReLU plane, or an exact population); "
           "thm1_holds: optima with lambda_gap > rho (Thm. 1's condition); fd_stable: optima stable by the "
           "finite-difference flow Jacobian at that radius; thm1_and_not_stable: Thm. 1's condition without "
           "stability (a counterexample); median_rho, median_gap, median_rho_over_gap: medians over the optima of "
           "rho(w*), lambda_gap and their ratio; mass_fd_stable_on_patterns: the share of inits in the basins of "
           "fd-stable optima near a planted pattern; median_z0: the median z0(alpha_g) of Cor. 2.")
COMPARE_KEY = ("alpha, tau: the pairwise weight at which the first run's optima are measured again (Cor. 2 at fixed "
               "points); median_z0, median_rho, median_gap, median_rho_over_gap: medians over those optima; "
               "median_rho_ratio_to_uniform: the median of rho under this alpha over rho under uniform alpha.")


def markdown(record: dict) -> str:
    """``roughness.md``: per run, per optimum, and the same-points comparison (if any)."""
    t = record["tables"]
    md = ["## Per run", "", report.markdown_table(RUN_COLUMNS, t["runs"]), "", "## Per optimum", "",
          report.markdown_table(OPTIMA_COLUMNS, t["optima"])]
    if t["compare"]:
        first = next(iter(record["runs"]))
        md += ["", f"## Same points, different alpha (optima of {first})", "",
               report.markdown_table(COMPARE_COLUMNS, t["compare"])]
    return "\n".join(md) + "\n"
