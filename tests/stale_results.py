"""Stored results made on data that the current code no longer builds.

A result under ``results/`` stores its config and what it found on the data that config described when
it ran. ``tests/test_stored_commands.py`` checks that the stored command still makes the stored config;
this module checks the other half: that the config still makes the *data* the result was computed on.
For every record that stores optima (a basins ``summary.json``, a continuation's ``continuation.json`` at
each value, ``flow_accuracy.py --check=rtol`` at each rtol, the maxima of Fig. 8's ``landscape.json`` per
activation) it rebuilds the data with today's code (:func:`ccdyn.data.registry.build_dataset`, float64; a
continuation's data at each value through :func:`ccdyn.one_layer.studies.continuation.configs`; the
landscape's through :func:`ccdyn.one_layer.studies.landscape_fig8.points`) and checks each stored optimum w
there:

- **energy**: E_alpha(w) (:func:`ccdyn.one_layer.dynamics.energy`, alpha at w) equals the stored energy
  to ``ENERGY_RTOL`` (relative to max(|E|, ||A(w)w||)): a fingerprint of the data along w;
- **kinks**: each view the record lists as active (``active_views``) lies on its hyperplane,
  |w^T x_i| / ||x_i|| <= ``ANGLE_TOL``;
- **critical**: the ascent field u(w) = A(w)w (:func:`ccdyn.one_layer.dynamics.ascent`; grad E for a
  non-homogeneous activation) minus its projection on span{w, x_i : i active} has norm
  <= max(``CRIT_RTOL``, 10 x the stored relative residual) x ||u||. Off the kinks this is the residual
  ||P_w^perp A(w) w|| of Eq. 7; on kinks the gates of the active views only move u inside the span of
  those views, so the test does not depend on the convention h'(0) (docs/flow.md); a landscape maximum
  stored as on a kink, without its views, is tested against the view nearest its hyperplane. The stored relative
  residual is the record's ``stationarity`` on kinks, else ``residual / |lam1|``: an optimum the record
  itself does not call critical is held to what the record says, not better.

An optimum stored with ``refined = False`` (its float64 refinement failed: an active set that cycles, the
iteration limit) keeps its cluster's centre as ``w`` while its residuals describe the failed refinement;
only its energy is checked.

Records whose data is stored next to them (the random sets of ``flow_exact_2d*`` and ``kink_check*``,
the shift study's ``shift_data.npz``) are compared with the data today's generator draws for the same
seed and config (to ``DATA_RTOL``).

``python -m tests.stale_results`` prints one line per record (``--only=SUBSTRING`` to select);
``tests/test_stale_results.py`` runs it over the whole of results/ (slow) and on a small case (fast).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import NamedTuple

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import io  # noqa: E402
from ccdyn.data import registry  # noqa: E402
from ccdyn.one_layer import dynamics, sliding  # noqa: E402
from ccdyn.one_layer.basins import BasinsConfig  # noqa: E402
from ccdyn.one_layer.studies import augmentation, continuation, flow_accuracy, landscape_fig8  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
# The data models are drawn in float32 (docs/reproducibility.md), and XLA's CPU optimization level changes the
# last bits of that draw (measured: up to 2.8e-8 in the entries of the d = 6 basis; the test suite compiles at
# level 0, the scripts at the default level). At the level a result was made, the checks below agree to
# ~1e-15; at level 0, energies move by up to 1e-8 (relative), residuals by 6e-8, kink angles by 3e-8 rad. The
# tolerances are 30x above that and far below what another draw of the data gives (~0.1 to 0.6).
ENERGY_RTOL = 1e-6
ANGLE_TOL = 1e-6  # |w^T x_i| / ||x_i|| of a stored active view, radians
CRIT_RTOL = 1e-5  # relative residual of a refined optimum
DATA_RTOL = 1e-6  # stored data against today's draw (numpy's draws agree exactly)

# Files that hold a stored optimum w and that no reader below checks, each with the reason.
NOT_READ = {
    "theory/cor2/exact/cor2_exact.json": "rows hold the exact population's w with no stored energy (Cor. 2 ratios); "
                                         "its data has no random draw (theory/cor2_exact)",
    "saddles/tau/along.json": "saddle points along the tau continuation of saddles/tau_basins (read there); their "
                              "stored energy is the flow's potential Psi of the Gaussian alpha (docs/saddles.md, "
                              "'Which E, with Gaussian alpha'), which the energy check here does not compute",
    **{f"basins/{run}/kink_check.json": "its optima (w per set) are probed by kink_check itself on the stored "
                                        "clouds (sets/set*.npz), which stored_data compares with today's draw"
       for run in ("kink_check", "kink_check_gaussian", "kink_check_seeds2000", "kink_check_gaussian_seeds2000")},
}


class Source(NamedTuple):
    """Stored optima and the config that rebuilds their data."""

    rel: str  # file, relative to results/
    where: str  # location in the file ("runs[2]" for a continuation's third value)
    cfg: BasinsConfig
    rows: list  # dicts with "w", "energy" and, where stored, "residual", "lam1", "stationarity", "active_views"
    data: object = None  # a function building the float64 data, where ``cfg.data`` does not describe it


class Finding(NamedTuple):
    rel: str
    where: str
    n: int  # optima (or data sets) checked
    bad: int  # of them, how many fail
    energy_rel: float  # largest |E_now - E_stored| / scale (nan: no energy compared)
    crit_rel: float  # largest ||u - projection|| / ||u|| (nan: not computed)
    angle: float  # largest |w^T x_i| / ||x_i|| over the stored active views (0: none)
    note: str  # what failed, first case
    unrefined: int = 0  # optima stored with refined = False (their refinement failed): checked by energy only

    @property
    def stale(self) -> bool:
        return self.bad > 0


def _configs(record: dict, folder: Path):
    """Yields (where, config, rows) for the optima a record stores."""
    if isinstance(record.get("optima"), list) and isinstance(record.get("config"), dict) \
            and "dynamics" in record["config"]:  # a basins summary.json
        yield "optima", BasinsConfig.from_dict(record["config"]), record["optima"]
    elif isinstance(record.get("config"), dict) and "base" in record["config"] and "runs" in record:  # continuation
        c = record["config"]
        cfgs = continuation.configs(BasinsConfig.from_dict(c["base"]), c["param"], c["values"])
        for k, (cfg, run) in enumerate(zip(cfgs, record["runs"])):
            yield f"runs[{k}]", cfg, run["optima"]
    elif isinstance(record.get("basins_config"), dict) and isinstance(record.get("saddles"), list):
        # saddles.json: the certified saddle points of the basins run it read; energy only (a saddle is not a
        # maximum: its criticality on a kink is the saddles certificate's, tests/one_layer/test_saddles.py)
        rows = [{"w": r["w"], "energy": r["energy"], "refined": False} for r in record["saddles"]]
        yield "saddles", BasinsConfig.from_dict(record["basins_config"]), rows
    elif "runs" in record and _folder_config(folder).get("check") == "rtol":
        # flow_accuracy --check=rtol: the basins rows at each rtol (the data does not depend on it)
        cfg = BasinsConfig.from_dict(_folder_config(folder)["basins"])
        for rtol, run in record["runs"].items():
            yield f"runs/{rtol}", cfg, run["rows"]


    elif isinstance(record.get("activations"), dict) and (folder / "config.json").is_file() \
            and "angles" in _folder_config(folder):  # the landscape of Fig. 8: maxima on the circle, per activation
        c = _folder_config(folder)
        fig8 = landscape_fig8.Fig8Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in c.items()})
        if fig8.data_path is None:  # a user's file is not part of the repository
            for act, m in record["activations"].items():
                cfg = BasinsConfig(act=act, leaky_slope=fig8.leaky_slope, alpha=fig8.alpha, tau=fig8.tau)
                rows = [{"w": [np.cos(t), np.sin(t)], "energy": e, "residual": r, "on_kink": k}
                        for t, e, r, k in zip(m["maxima_theta"], m["maxima_energy"], m["maxima_residual"],
                                              m["maxima_at_kink"])]
                yield f"activations/{act}", cfg, rows, lambda: landscape_fig8.points(fig8).astype(jnp.float64)


def _folder_config(folder: Path) -> dict:
    return io.read_json(folder / "config.json") if (folder / "config.json").is_file() else {}


def _holds_w(node) -> bool:
    if isinstance(node, dict):
        return ("w" in node and isinstance(node["w"], list)) or any(_holds_w(v) for v in node.values())
    return isinstance(node, list) and any(_holds_w(v) for v in node)


@functools.lru_cache(maxsize=4)
def _records(root: Path) -> tuple:
    """(file relative to ``root``, path, parsed JSON) of every result record under ``root`` (read once)."""
    return tuple((path.relative_to(root).as_posix(), path, json.loads(path.read_text()))
                 for path in sorted(root.rglob("*.json"))
                 if not ("chunks" in path.parts or path.name in ("ccdyn-run.json", "config.json") or path.parent == root
                         or any(part.startswith(".") for part in path.relative_to(root).parts)))  # a run being written


def sources(root: Path = RESULTS) -> tuple:
    """(the stored optima this module checks, as :class:`Source`; the files holding a stored w that no
    reader here understands and ``NOT_READ`` does not name)."""
    found, unread = [], []
    for rel, path, record in _records(root):
        got = [Source(rel, *item) for item in _configs(record, path.parent)]
        found += got
        if not got and rel not in NOT_READ and rel != "theory/augmentation/augmentation.json" and _holds_w(record):
            unread.append(rel)
    return found, unread


def _stored_rel_residual(row: dict) -> float:
    if row.get("kink_rank") and row.get("stationarity") is not None:
        return float(row["stationarity"])
    lam = abs(float(row.get("lam1") or 0.0))
    return float(row["residual"]) / lam if lam > 0 and row.get("residual") is not None else 0.0


def check_rows(cfg: BasinsConfig, rows: list, ds64=None) -> dict:
    """Each stored optimum checked on the data ``cfg`` builds now (``ds64``: that data, if built already):
    {"n", "bad", "energy_rel", "crit_rel", "angle", "note"} (see the module docstring)."""
    ds64 = registry.build_dataset(cfg.data, jnp.float64) if ds64 is None else ds64
    act, pw = cfg.activation, cfg.pairwise
    W = np.array([r["w"] for r in rows], np.float64).reshape(len(rows), -1)
    if W.shape[0] == 0:
        return {"n": 0, "bad": 0, "energy_rel": 0.0, "crit_rel": 0.0, "angle": 0.0, "note": "", "unrefined": 0}
    if W.shape[1] != ds64.dim:
        return {"n": len(rows), "bad": len(rows), "energy_rel": np.nan, "crit_rel": np.nan, "angle": np.nan,
                "note": f"stored w has dimension {W.shape[1]}, the data {ds64.dim}", "unrefined": 0}
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    e = np.asarray(dynamics.energy(ds64, act, jnp.asarray(W), pw))
    U = np.asarray(dynamics.ascent(ds64, act, jnp.asarray(W), pw))
    x = np.asarray(sliding.flat_views(ds64)[0])
    bad, e_max, c_max, a_max, note, unrefined = 0, 0.0, 0.0, 0.0, "", len(rows)
    for j, (w, u, row) in enumerate(zip(W, U, rows)):
        un = max(float(np.linalg.norm(u)), 1e-300)
        de = abs(float(e[j]) - float(row["energy"])) / max(abs(float(row["energy"])), un)
        e_max = max(e_max, de)
        angle, crit, bound = 0.0, 0.0, np.inf
        if row.get("refined", True):  # an optimum whose refinement failed is its cluster's centre: energy only
            unrefined -= 1
            idx = np.asarray(row.get("active_views") or [], int)
            if row.get("on_kink") and not idx.size:  # a maximum stored as on a kink, without its views: the nearest
                xn = np.linalg.norm(x, axis=1)
                idx = np.flatnonzero(xn > 0)[[np.argmin(np.abs(x[xn > 0] @ w) / xn[xn > 0])]]
            xa = x[idx]
            angle = float(np.max(np.abs(xa @ w) / np.linalg.norm(xa, axis=1))) if idx.size else 0.0
            q = _span(np.column_stack([w, *xa]))
            crit = float(np.linalg.norm(u - q @ (q.T @ u))) / un
            bound = max(CRIT_RTOL, 10.0 * _stored_rel_residual(row))
            c_max, a_max = max(c_max, crit), max(a_max, angle)
        why = [f"energy {float(e[j]):.12g} vs stored {float(row['energy']):.12g}"] if de > ENERGY_RTOL else []
        why += [f"active views off their hyperplanes by {angle:.2e} rad"] if angle > ANGLE_TOL else []
        why += [f"not critical: relative residual {crit:.2e} > {bound:.1e}"] if crit > bound else []
        if why:
            bad += 1
            note = note or f"optimum {row.get('optimum', j)}: " + "; ".join(why)
    return {"n": len(rows), "bad": bad, "energy_rel": e_max, "crit_rel": c_max, "angle": a_max, "note": note,
            "unrefined": unrefined}


def _span(m):
    """An orthonormal basis of the column span of ``m`` (d, k); dependent columns (views x_a, x_b, x_a + x_b
    of the latent summation data) count once."""
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    return u[:, s > 1e-10 * s[0]]


def check(source: Source) -> Finding:
    ds64 = None if source.data is None else source.data()
    return Finding(source.rel, source.where, **check_rows(source.cfg, source.rows, ds64=ds64))


def _same(a, b) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=DATA_RTOL, atol=DATA_RTOL * np.max(np.abs(b), initial=0)))


def _data_reader(rel: str, path: Path, record: dict):
    """The function comparing a record's stored data with today's draw (-> (sets compared, those that
    differ)), or None when the record keeps no data of its own."""
    if path.name == "flow_accuracy.json" and _folder_config(path.parent).get("check") == "exact_2d":
        def sets():
            cfg = _folder_config(path.parent)
            bad = [s for s, st in record["sets"].items() if not _same(
                flow_accuracy.random_angles(int(s), cfg["min_points"], cfg["max_points"]), st["angles"])]
            return len(record["sets"]), bad
        return sets
    if path.name == "kink_check.json":
        def clouds():
            cfg = _folder_config(path.parent)
            bad = []
            for st in record["sets"]:
                z = np.load(path.parent / "sets" / f"set{st['set_seed']}.npz")
                x, _ = flow_accuracy.random_cloud(int(st["set_seed"]), cfg["min_points"], cfg["max_points"])
                if not _same(x, z["x"]):
                    bad.append(st["set_seed"])
            return len(record["sets"]), bad
        return clouds
    if rel == "theory/augmentation/augmentation.json":
        def shift():
            c = record["config"]
            cfg = augmentation.AugmentationConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in c.items()})
            ds, z = augmentation.shift_data(cfg), np.load(path.parent / "shift_data.npz")
            return 1, [] if all(_same(getattr(ds, k), z[k]) for k in ("x", "p", "patterns")) else ["shift_data.npz"]
        return shift
    return None


def stored_data_records(root: Path = RESULTS) -> list:
    """The records (relative to ``root``) that keep the data they ran on."""
    return [rel for rel, path, record in _records(root) if _data_reader(rel, path, record) is not None]


def stored_data(root: Path = RESULTS, only: str = "") -> list:
    """Records that keep the data they ran on, compared exactly with what today's generator draws:
    one :class:`Finding` per record (``n`` data sets, ``bad`` of them differ)."""
    out = []
    for rel, path, record in _records(root):
        reader = _data_reader(rel, path, record) if only in rel else None
        if reader is None:
            continue
        n, bad = reader()
        note = f"data differs from today's draw: {', '.join(map(str, bad[:5]))}" if bad else ""
        out.append(Finding(rel, "data", n, len(bad), np.nan, np.nan, 0.0, note))
    return out


def findings(root: Path = RESULTS, only: str = "") -> list:
    """Every check of this module over ``root``: the stored optima, then the stored data."""
    out = [check(s) for s in sources(root)[0] if only in s.rel]
    return out + stored_data(root, only)


def main(argv) -> int:
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    rows = findings(RESULTS, only)
    for f in rows:
        print(f"{'STALE' if f.stale else 'ok   '} {f.rel} {f.where}: {f.bad}/{f.n} bad, energy {f.energy_rel:.1e}, "
              f"critical {f.crit_rel:.1e}, angle {f.angle:.1e}"
              + (f" ({f.unrefined} unrefined: energy only)" if f.unrefined else "") + f"  {f.note}")
    unread = sources(RESULTS)[1]
    for rel in unread:
        print(f"UNREAD {rel}: holds a stored optimum w that no reader here checks")
    print(f"{sum(f.stale for f in rows)} stale of {len(rows)} checked")
    return 1 if any(f.stale for f in rows) or unread else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
