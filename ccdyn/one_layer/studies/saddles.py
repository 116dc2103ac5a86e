"""Saddles, barriers and the disconnectivity graph of a basins run (docs/saddles.md).

A finished basins run (:mod:`ccdyn.one_layer.basins`: its ``summary.json`` holds the config and the optima)
in, a plain record out: for every pair of optima (optima with basin fraction >= ``min_fraction``), the
string path with a climbing image, the refined saddle and its certificate (:mod:`ccdyn.one_layer.saddles`),
which optima its two sides reach (the run's own dynamics from w +- ``probe_angle`` along the direction in
which E rises), the minimax barrier matrix over the certified saddles, and the merge tree. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import itertools
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import report, sphere
from ccdyn.data.registry import build_dataset
from ccdyn.one_layer import engine, saddles
from ccdyn.one_layer.basins import BasinsConfig
from ccdyn.one_layer.studies import continuation as continuation_study

__all__ = ["SaddlesConfig", "MAX_IMAGES", "MAX_STEPS", "MAX_TOUCH_INITS", "MAX_PAIRS", "TABLE_WIDTH", "optima_of", "touching", "components", "compare", "run", "table", "pair_rows", "PAIR_COLUMNS", "along", "ALONG_COLUMNS", "ALONG_KEY",
           "along_rows"]


# sizes beyond these are refused before any work (one (pairs x images, d) matrix per string step; the probes
# of the touching test in one batch)
MAX_IMAGES = 1025
MAX_STEPS = 10**7
MAX_TOUCH_INITS = 10**7
MAX_PAIRS = 10**6


@dataclasses.dataclass(frozen=True)
class SaddlesConfig:
    """The saddle search's settings (``scripts/saddles.py`` flags)."""

    n_images: int = 17
    n_steps: int = 3000
    step: float = 0.2
    min_fraction: float = 0.0
    probe_angle: float = 1e-3
    match_tol: float = 1e-2
    pairs: str = "touching"
    touch_inits: int = 2000
    touch_angle: float = 0.1
    touch_seed: int = 0
    max_pairs: int = 2000
    check_all: bool = False

    def __post_init__(self):
        checks = [(3 <= self.n_images <= MAX_IMAGES, f"n_images must lie in [3, {MAX_IMAGES}]"),
                  (2 <= self.n_steps <= MAX_STEPS, f"n_steps must lie in [2, {MAX_STEPS}]"),
                  (self.pairs in ("touching", "all"), "pairs must be 'touching' or 'all'"),
                  (1 <= self.touch_inits <= MAX_TOUCH_INITS, f"touch_inits must lie in [1, {MAX_TOUCH_INITS}]"),
                  (0 < self.touch_angle < 0.5, "touch_angle must lie in (0, 0.5)"),
                  (1 <= self.max_pairs <= MAX_PAIRS, f"max_pairs must lie in [1, {MAX_PAIRS}]"),
                  (0 < self.step <= 1, "step must lie in (0, 1]"), (0 <= self.min_fraction < 1, "min_fraction must lie in [0, 1)"),
                  (0 < self.probe_angle < 0.1, "probe_angle must lie in (0, 0.1)"),
                  (0 < self.match_tol < 1, "match_tol must lie in (0, 1)")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)


def optima_of(summary: dict, min_fraction: float) -> list:
    """The optima rows of a basins summary with fraction >= ``min_fraction``, their index in the run kept."""
    return [dict(r, index=k) for k, r in enumerate(summary["optima"]) if r["fraction"] >= min_fraction]


def _match(W, optima, tol: float, odd: bool):
    """Index of the optimum within ``tol`` of each row of W (-1: none)."""
    d = np.linalg.norm(W[:, None] - optima[None], axis=-1)
    if odd:
        d = np.minimum(d, np.linalg.norm(W[:, None] + optima[None], axis=-1))
    return np.where(d.min(axis=1) <= tol, d.argmin(axis=1), -1)


def touching(ds, act, pw, dyn, opt, *, n_probe: int, angle: float, match_tol: float, seed: int) -> dict:
    """Which optima's basins touch, by probes: ``n_probe`` uniform random inits and, for each, a point
    ``angle`` radians away along a random tangent; both run to a stop by the run's own dynamics (one
    batch) and matched to the optima ``opt`` (k, d). A probe whose two ends reach two different optima
    a, b puts a point of basin a within ``angle`` of basin b: the basins touch (to that resolution).
    Returns ``counts`` (k, k) symmetric (probes that flip between i and j), ``n_flips``, ``n_unmatched``
    (ends that reach no optimum within ``match_tol``) and the settings. ``ds`` in float32 is enough (the
    ends are only matched to the optima, as the basins run's float32 dynamics do)."""
    rng = np.random.default_rng(seed)
    d = opt.shape[1]
    w = rng.standard_normal((n_probe, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    u = rng.standard_normal((n_probe, d))
    u -= np.sum(u * w, axis=1, keepdims=True) * w
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    w2 = np.cos(angle) * w + np.sin(angle) * u
    ends = engine.converge(ds, act, pw, dyn, jnp.asarray(np.concatenate([w, w2]), ds.x.dtype))
    lab = _match(np.asarray(ends["w"], np.float64), opt, match_tol, act.odd).reshape(2, n_probe)
    flip = (lab[0] >= 0) & (lab[1] >= 0) & (lab[0] != lab[1])
    k = opt.shape[0]
    counts = np.zeros((k, k), np.int64)
    np.add.at(counts, (lab[0][flip], lab[1][flip]), 1)
    counts = counts + counts.T
    return {"counts": counts, "n_probe": int(n_probe), "angle": float(angle), "seed": int(seed),
            "n_flips": int(flip.sum()), "n_unmatched": int(np.sum(lab < 0))}


def components(n: int, pairs) -> int:
    """Connected components of the graph on n nodes with edges ``pairs``."""
    return n - len(saddles.merge_tree(n, [(0.0, int(i), int(j)) for i, j in pairs]))


def run(cfg: SaddlesConfig, summary: dict, *, log=None, mesh=None) -> dict:
    """The saddle search on a basins run's ``summary`` (module docstring). ``log``: optional progress lines;
    ``mesh``: the pairs (string) and saddles (refinement, certificates) split over its devices
    (:func:`ccdyn.one_layer.saddles.on_mesh`), None: one device."""
    bcfg = BasinsConfig.from_dict(summary["config"])
    act, pw = bcfg.activation, bcfg.pairwise
    ds64 = build_dataset(bcfg.data, jnp.float64)
    rows = optima_of(summary, cfg.min_fraction)
    if len(rows) < 2:
        raise ValueError(f"{len(rows)} optima with basin fraction >= {cfg.min_fraction}; a saddle needs two")
    opt = np.array([r["w"] for r in rows], np.float64)
    # the landscape the flow climbs (E_alpha for uniform alpha; the potential for Gaussian alpha)
    e_opt = np.asarray(saddles.landscape(ds64, act, pw, opt), np.float64)
    pairs = np.array(list(itertools.combinations(range(len(rows)), 2)))
    say = log or (lambda s: None)
    timings = {}
    t0 = time.time()
    touch = None
    if cfg.pairs == "touching":
        touch = touching(build_dataset(bcfg.data, jnp.float32), act, pw, bcfg.dynamics, opt, n_probe=cfg.touch_inits, angle=cfg.touch_angle,
                         match_tol=cfg.match_tol, seed=cfg.touch_seed)
        keep = touch["counts"][pairs[:, 0], pairs[:, 1]] > 0
        timings["touching"] = time.time() - t0
        say(f"  touching basins: {int(keep.sum())} of {len(pairs)} pairs ({touch['n_flips']} of {cfg.touch_inits} "
            f"probes flip at {cfg.touch_angle} rad; {timings['touching']:.1f} s)")
        pairs = pairs[keep]
        if len(pairs) == 0:
            raise ValueError(f"no two basins touch in {cfg.touch_inits} probes (--touch_inits) at {cfg.touch_angle} "
                             "rad (--touch_angle); raise them or give --pairs=all")
    if len(pairs) > cfg.max_pairs:
        raise ValueError(f"{len(pairs)} pairs of {len(rows)} optima, more than {cfg.max_pairs} (--max_pairs); raise "
                         "--min_fraction or --max_pairs")
    say(f"saddles: {len(pairs)} pairs of {len(rows)} optima, {cfg.n_images} images, {cfg.n_steps} string steps")
    ts = time.time()
    path = saddles.great_circle_paths(opt[pairs[:, 0]], opt[pairs[:, 1]], cfg.n_images)
    st = jax.block_until_ready(saddles.string(ds64, act, pw, path, n_steps=cfg.n_steps, step=cfg.step, mesh=mesh))
    timings["string"] = time.time() - ts
    say(f"  string: {timings['string']:.1f} s")
    t1 = time.time()
    climb = np.asarray(st.path)[np.arange(len(pairs)), np.asarray(st.climb)]
    ref = jax.block_until_ready(saddles.refine(ds64, act, pw, climb, mesh=mesh))
    timings["refine"] = time.time() - t1
    t2 = time.time()
    certs = saddles.certificate(ds64, act, pw, ref, mesh=mesh)
    timings["certify"] = time.time() - t2
    say(f"  refine {timings['refine']:.1f} s, certify {timings['certify']:.1f} s: "
        f"{sum(c['certified'] for c in certs)}/{len(certs)} certified index-1 saddles")
    t3 = time.time()
    w = np.asarray(ref["w"])
    dirs = np.stack([c["unstable_direction"] for c in certs])
    starts = np.concatenate([sphere.at_angle(jnp.asarray(wi), jnp.asarray(s * di)[None], cfg.probe_angle)
                             for wi, di in zip(w, dirs) for s in (1.0, -1.0)])
    ends = engine.converge(ds64, act, pw, bcfg.dynamics, jnp.asarray(starts))
    reach = _match(np.asarray(ends["w"], np.float64), opt, cfg.match_tol, act.odd).reshape(-1, 2)
    timings["connect"] = time.time() - t3
    say(f"  sides followed to optima: {timings['connect']:.1f} s")
    records, edges = [], []
    for k, (i, j) in enumerate(pairs):
        c = certs[k]
        kind = saddles.classify_kind(reach[k], (i, j))
        if c["certified"] and kind in ("direct", "joins another pair"):
            edges.append((c["energy"], int(reach[k][0]), int(reach[k][1])))
        records.append({"pair": [int(i), int(j)], "optima_run_index": [rows[i]["index"], rows[j]["index"]],
                        "saddle": w[k].tolist(), "energy": c["energy"], "certified": c["certified"],
                        "note": c["note"], "reaches": reach[k].tolist(), "kind": kind,
                        "certificate": {key: v for key, v in c.items()
                                        if key not in ("certified", "note", "energy", "unstable_direction")},
                        "string": {"climbing_image": int(st.climb[k]), "perp_force": float(st.perp_force[k]),
                                   "climb_force": float(st.climb_force[k])},
                        "path_energies": np.asarray(st.energy[k]).tolist(),
                        "path_arc": _arc(np.asarray(st.path[k])).tolist()})
    energies = e_opt
    unique = _unique_edges(edges, records)
    b = saddles.barrier_matrix(energies, [(e, i, j) for e, i, j in unique])
    timings["total"] = time.time() - t0
    check = None
    if cfg.check_all and cfg.pairs == "touching":
        say("  the same with every pair (--check_all):")
        full = run(dataclasses.replace(cfg, pairs="all", check_all=False), summary, log=log, mesh=mesh)
        check = compare(b, np.array(full["barrier_matrix"]))
        check.update(n_pairs_all=full["n_pairs"], n_certified_all=full["n_certified"],
                     total_s_all=full["timings_s"]["total"])
        say(f"  all pairs: {check['n_lower']} entries of the barrier matrix higher than with touching pairs "
            f"(max difference {check['max_abs_diff']:.2e})")
    return {"config": dataclasses.asdict(cfg), "basins_config": summary["config"],
            "basins_command": summary.get("command"),
            "landscape": "E_alpha" if pw.kind == "uniform" else "potential Psi (Gaussian alpha)",
            "optima": [{"optimum": k, "run_index": r["index"], "energy": float(e_opt[k]), "energy_alpha": r["energy"],
                        "fraction": r["fraction"],
                        "ci95": r["ci95"], "stable": r["stable"], "pattern": r.get("pattern"),
                        "overlap": r.get("overlap")} for k, r in enumerate(rows)],
            "pairs": records, "barrier_matrix": b.tolist(),
            "merges": [list(m) for m in saddles.merge_tree(len(rows), unique)],
            "touching": None if touch is None else {**touch, "counts": touch["counts"].tolist(),
                                                    "components": components(len(rows), pairs)},
            "all_pairs_check": check,
            "n_pairs": len(pairs), "n_certified": sum(c["certified"] for c in certs),
            "n_direct": sum(r["kind"] == "direct" for r in records),
            "n_distinct_saddles": len(unique),
            "timings_s": timings, "per_pair_s": timings["total"] / len(pairs)}


def compare(b_touch, b_all, tol: float = 1e-10) -> dict:
    """The barrier matrix from the touching pairs against the one from every pair (both (k, k), NaN: not
    joined). A lower barrier missed is an entry where every pair joins i and j at a higher saddle than the
    touching pairs do (E_ij(all) > E_ij(touching) + tol), or joins a pair the touching pairs leave apart."""
    bt, ba = np.asarray(b_touch, np.float64), np.asarray(b_all, np.float64)
    iu = np.triu_indices(bt.shape[0], 1)
    t, a = bt[iu], ba[iu]
    both = np.isfinite(t) & np.isfinite(a)
    lower = (both & (a > t + tol)) | (np.isfinite(a) & ~np.isfinite(t))
    return {"n_entries": int(t.size), "n_lower": int(lower.sum()),
            "n_joined_only_by_all": int(np.sum(np.isfinite(a) & ~np.isfinite(t))),
            "n_joined_only_by_touching": int(np.sum(np.isfinite(t) & ~np.isfinite(a))),
            "max_abs_diff": float(np.max(np.abs(t[both] - a[both]), initial=0.0)),
            "lower_pairs": [[int(i), int(j)] for i, j, m in zip(*iu, lower) if m]}


def _arc(path):
    seg = 2 * np.arctan2(np.linalg.norm(path[1:] - path[:-1], axis=1), np.linalg.norm(path[1:] + path[:-1], axis=1))
    return np.concatenate([[0.0], np.cumsum(seg)])


def _unique_edges(edges, records):
    """One edge per distinct saddle: pairs that found the same saddle (same ends, energy within 1e-12)."""
    out = []
    for e, i, j in edges:
        key = tuple(sorted((i, j)))
        if not any(tuple(sorted((a, b))) == key and abs(e - f) <= 1e-12 * max(1.0, abs(e)) for f, a, b in out):
            out.append((e, i, j))
    return out


PAIR_COLUMNS = ["pair", "patterns", "saddle E", "barrier i", "barrier j", "rank", "index", "certified", "reaches",
                "kind"]
KIND_SHORT = {"direct": "direct", "joins another pair": "other", "both ends reach the same optimum": "same",
              "an end reaches no known optimum": "lost"}
TABLE_WIDTH = 120
TABLE_KEY = ("key: pair i-j (optima, 0-based) and their patterns (u_m; -: none); barrier i = E_i - saddle E; rank = "
             "active kink hyperplanes at the saddle (0: smooth); index = directions along which E rises (1: a "
             "saddle); reaches = the optima its two sides reach (-1: none); kind: direct = joins the pair searched, "
             "other = another pair, same = both sides reach one optimum, lost = a side reaches no optimum; no (n): "
             "note n below. E is the landscape's energy (saddles.json: landscape). Every number: saddles.json.")


def _pattern(o) -> str:
    return "-" if o.get("pattern") is None else f"u{o['pattern']}"


def pair_rows(record: dict) -> tuple:
    """One table row per pair (PAIR_COLUMNS) and the distinct notes of the pairs not certified (numbered)."""
    opt = record["optima"]
    out, notes = [], []
    for p in record["pairs"]:
        i, j = p["pair"]
        cert = "yes"
        if not p["certified"]:
            if p["note"] not in notes:
                notes.append(p["note"])
            cert = f"no ({notes.index(p['note']) + 1})"
        out.append([f"{i}-{j}", f"{_pattern(opt[i])}-{_pattern(opt[j])}", f"{p['energy']:.6f}",
                    f"{opt[i]['energy'] - p['energy']:.6f}", f"{opt[j]['energy'] - p['energy']:.6f}",
                    p["certificate"]["kink_rank"], p["certificate"]["index"], cert, "-".join(map(str, p["reaches"])),
                    KIND_SHORT.get(p["kind"], p["kind"])])
    return out, notes


def table(record: dict) -> str:
    """The pair table (at most TABLE_WIDTH characters wide) with its key and the notes of the pairs not
    certified; the JSON keeps every number and the full notes."""
    rows, notes = pair_rows(record)
    t = report.format_table(PAIR_COLUMNS, rows)
    k = len(record["optima"])
    tc, ck = record.get("touching"), record.get("all_pairs_check")
    head = (f"pairs whose basins touch: {record['n_pairs']} of {k * (k - 1) // 2} ({tc['n_flips']} of {tc['n_probe']} "
            f"probes flip at {tc['angle']} rad; {tc['components']} component(s))\n" if tc else "")
    tail = (f"every pair ({ck['n_pairs_all']}): {ck['n_lower']} barrier entries lower than with the touching pairs "
            f"(largest difference {ck['max_abs_diff']:.1e}; {ck['total_s_all']:.1f} s)" if ck else "")
    wrap = lambda text, indent="": textwrap.fill(text, TABLE_WIDTH, subsequent_indent=indent)  # noqa: E731
    notes_text = "".join("\n" + wrap(f"({n}) {note}", "    ") for n, note in enumerate(notes, 1))
    summary = (f"{record['n_certified']}/{record['n_pairs']} certified index-1 saddles, {record['n_direct']} join the "
               f"pair they were searched for, {record['n_distinct_saddles']} distinct saddles in the graph; "
               f"{record['timings_s']['total']:.1f} s ({record['per_pair_s']:.2f} s per pair)")
    return f"{head}{t}\n{wrap(TABLE_KEY)}{notes_text}\n\n{wrap(summary)}{chr(10) + wrap(tail) if tail else ''}"


def along(cfg: SaddlesConfig, record: dict, *, log=None, mesh=None) -> dict:
    """:func:`run` at every value of a continuation record (``scripts/continuation.py``'s
    ``continuation.json``: its base config, parameter, values and each value's optima), e.g. the barriers
    against ``ortho_eps`` (Thm. 3 / Fig. 1) or against tau for Gaussian alpha (Cor. 2). Per value: the
    optima, the certified saddles, and over the pairs joined by certified saddles the barrier
    min(E_i, E_j) - E_ij (from the lower optimum of the pair; min / median / max)."""
    c = record["config"]
    base = BasinsConfig.from_dict(c["base"])
    cfgs = continuation_study.configs(base, c["param"], c["values"])
    say = log or (lambda s: None)
    per_value = []
    for value, bcfg, r in zip(c["values"], cfgs, record["runs"]):
        summ = {"config": dataclasses.asdict(bcfg), "optima": r["optima"], "command": record.get("command")}
        k = len(optima_of(summ, cfg.min_fraction))
        row = {"value": value, "n_optima": k}
        if k < 2:
            per_value.append({**row, "note": "fewer than two optima: no saddle"})
            continue
        say(f"{c['param']}={value}:")
        rec = run(cfg, summ, log=log, mesh=mesh)
        b = np.array(rec["barrier_matrix"])
        e = np.diag(b)
        iu = np.triu_indices(k, 1)
        h = (np.minimum(e[:, None], e[None]) - b)[iu]
        h = h[np.isfinite(h)]
        row.update(n_pairs=rec["n_pairs"], n_certified=rec["n_certified"], n_joined=int(h.size),
                   barrier_min=float(h.min()) if h.size else None, barrier_median=float(np.median(h)) if h.size else None,
                   barrier_max=float(h.max()) if h.size else None, energy_max=float(e.max()),
                   notes=sorted({p["note"] for p in rec["pairs"] if not p["certified"]}), record=rec)
        per_value.append(row)
    return {"param": c["param"], "values": list(c["values"]), "config": dataclasses.asdict(cfg),
            "continuation_command": record.get("command"), "per_value": per_value}


ALONG_COLUMNS = ["value", "optima", "pairs", "certified", "pairs joined", "barrier min", "barrier median",
                 "barrier max", "not certified because"]
ALONG_KEY = ("per value of the continuation's parameter: optima (basin >= --min_fraction) and the pairs searched, "
             "certified: saddles with a certificate, pairs joined: pairs the graph joins below the top, barrier "
             "min / median / max: E_i - E(saddle) over the certified saddles (in the flow's potential for Gaussian "
             "alpha); not certified because: the reasons of the others (saddles.json)")


def along_rows(rec: dict) -> list:
    """One row per value of :func:`along` (ALONG_COLUMNS)."""
    f = lambda v: "" if v is None else f"{v:.6f}"  # noqa: E731
    return [[r["value"], r["n_optima"], r.get("n_pairs", 0), r.get("n_certified", 0), r.get("n_joined", 0),
             f(r.get("barrier_min")), f(r.get("barrier_median")), f(r.get("barrier_max")),
             "; ".join(r.get("notes", [])) or r.get("note", "")] for r in rec["per_value"]]
