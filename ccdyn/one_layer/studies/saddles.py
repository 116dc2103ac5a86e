"""Saddles, barriers and the disconnectivity graph of a basins run (docs/saddles.md).

A finished basins run (:mod:`ccdyn.one_layer.basins`: its ``summary.json`` holds the config and the optima)
in, a plain record out. The pairs of optima whose basins touch (probes, :mod:`ccdyn.one_layer.saddle_seeds`)
are searched from every distinct region of their shared boundary that the probes found (at most
``max_seeds`` per pair) and along the great circle between them: each search is a string with a climbing
image, the refined saddle and its certificate (:mod:`ccdyn.one_layer.saddles`), and the optima its two
sides reach (the run's own dynamics from w +- ``probe_angle`` along the direction in which E rises). Every
distinct certified saddle is kept with the two optima it joins (a pair can have several,
:mod:`ccdyn.one_layer.saddle_graph`); the minimax barrier matrix and the merge tree are built from all of
them, so each pair counts through its lowest barrier. Pure: no I/O.
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
from ccdyn.one_layer import engine, saddle_graph, saddle_paths, saddle_seeds, saddles
from ccdyn.one_layer.basins import BasinsConfig
from ccdyn.one_layer.studies import continuation as continuation_study

__all__ = ["SaddlesConfig", "MAX_IMAGES", "MAX_SEEDS", "check_summary", "MAX_STEPS", "MAX_TOUCH_INITS", "MAX_PAIRS",
           "TABLE_WIDTH", "optima_of", "touching", "components", "compare", "run", "table", "pair_rows", "PAIR_COLUMNS",
           "along", "ALONG_COLUMNS", "ALONG_KEY", "along_rows"]


# sizes beyond these are refused before any work (one (searches x images, d) matrix per string step; the probes
# of the touching test in one batch)
MAX_IMAGES = 1025
MAX_STEPS = 10**7
MAX_TOUCH_INITS = 10**7
MAX_PAIRS = 10**6
MAX_SEEDS = 64


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
    n_bisect: int = 8
    region_angle: float = 0.25
    max_seeds: int = 4
    great_circle: bool = True

    def __post_init__(self):
        checks = [(3 <= self.n_images <= MAX_IMAGES, f"n_images must lie in [3, {MAX_IMAGES}]"),
                  (2 <= self.n_steps <= MAX_STEPS, f"n_steps must lie in [2, {MAX_STEPS}]"),
                  (self.pairs in ("touching", "all"), "pairs must be 'touching' or 'all'"),
                  (1 <= self.touch_inits <= MAX_TOUCH_INITS, f"touch_inits must lie in [1, {MAX_TOUCH_INITS}]"),
                  (0 < self.touch_angle < 0.5, "touch_angle must lie in (0, 0.5)"),
                  (1 <= self.max_pairs <= MAX_PAIRS, f"max_pairs must lie in [1, {MAX_PAIRS}]"),
                  (0 < self.step <= 1, "step must lie in (0, 1]"),
                  (0 <= self.min_fraction < 1, "min_fraction must lie in [0, 1)"),
                  (0 < self.probe_angle < 0.1, "probe_angle must lie in (0, 0.1)"),
                  (0 < self.match_tol < 1, "match_tol must lie in (0, 1)"),
                  (0 <= self.n_bisect <= 40, "n_bisect must lie in [0, 40]"),
                  (0 < self.region_angle <= 3.15, "region_angle must lie in (0, pi]"),
                  (0 <= self.max_seeds <= MAX_SEEDS, f"max_seeds must lie in [0, {MAX_SEEDS}]"),
                  (self.great_circle or (self.pairs == "touching" and self.max_seeds > 0),
                   "without great_circle, seeds are the only searches: needs pairs='touching' and max_seeds >= 1")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)


def check_summary(summary: dict) -> str | None:
    """What makes a basins ``summary.json`` unusable here (its config does not build, an optimum row lacks a
    field the search reads or has a w of the wrong size), or None."""
    try:
        d = build_dataset(BasinsConfig.from_dict(summary["config"]).data, jnp.float32).dim
    except (ValueError, TypeError, KeyError) as e:
        return f"its config is not a basins config ({e.__class__.__name__}: {e})"
    need: dict[str, type | tuple[type, ...]] = {"w": list, "energy": (int, float), "fraction": (int, float),
                                               "ci95": list, "stable": bool}
    for k, r in enumerate(summary["optima"]):
        bad = [f for f, t in need.items() if not isinstance(r, dict) or not isinstance(r.get(f), t)]
        if bad or len(r["w"]) != d or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in r["w"]):
            return f"optimum {k}: " + (f"no {', '.join(bad)}" if bad else f"w is not {d} finite numbers")
    return None


def optima_of(summary: dict, min_fraction: float) -> list:
    """The optima rows of a basins summary with fraction >= ``min_fraction``, their index in the run kept."""
    return [dict(r, index=k) for k, r in enumerate(summary["optima"]) if r["fraction"] >= min_fraction]


touching = saddle_seeds.touching


def components(n: int, pairs) -> int:
    """Connected components of the graph on n nodes with edges ``pairs``."""
    return n - len(saddles.merge_tree(n, [(0.0, int(i), int(j)) for i, j in pairs]))


def _searches(cfg, ds64, act, pw, opt, pairs, seeds):
    """Every search's starting path (great circles, then seeds) and its description."""
    out, paths = [], []
    if cfg.great_circle and len(pairs):
        paths.append(np.asarray(saddles.great_circle_paths(opt[pairs[:, 0]], opt[pairs[:, 1]], cfg.n_images)))
        out += [{"pair": [int(i), int(j)], "seed": {"kind": "great circle"}} for i, j in pairs]
    if seeds:
        lo, hi = np.stack([s["lo"] for s in seeds]), np.stack([s["hi"] for s in seeds])
        a, b = (opt[[s["pair"][k] for s in seeds]] for k in (0, 1))
        if act.odd:  # the sign of each optimum that the bracket's side reaches
            a, b = a * np.sign(np.sum(a * lo, 1, keepdims=True)), b * np.sign(np.sum(b * hi, 1, keepdims=True))
        paths.append(np.asarray(saddle_paths.seeded_paths(ds64, act, pw, lo, hi, a, b, cfg.n_images)))
        out += [{"pair": list(s["pair"]), "seed": {"kind": "boundary", "region": s["region"], "n_probes": s["n_probes"],
                                                    "energy": s["energy"], "spread": s["spread"],
                                                    "point": s["point"].tolist()}} for s in seeds]
    return out, np.concatenate(paths)


def run(cfg: SaddlesConfig, summary: dict, *, log=None, mesh=None) -> dict:
    """The saddle search on a basins run's ``summary`` (module docstring). ``log``: optional progress lines;
    ``mesh``: the searches (string) and saddles (refinement, certificates) split over its devices
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
    touch, seeds, n_regions = None, [], {}
    if cfg.pairs == "touching":
        touch = touching(build_dataset(bcfg.data, jnp.float32), act, pw, bcfg.dynamics, opt, n_probe=cfg.touch_inits,
                         angle=cfg.touch_angle, match_tol=cfg.match_tol, seed=cfg.touch_seed, n_bisect=cfg.n_bisect)
        keep = touch["counts"][pairs[:, 0], pairs[:, 1]] > 0
        pairs = pairs[keep]
        if len(pairs) == 0:
            raise ValueError(f"no two basins touch in {cfg.touch_inits} probes (--touch_inits) at {cfg.touch_angle} "
                             "rad (--touch_angle); raise them or give --pairs=all")
        seeds, n_regions = saddle_seeds.regions(touch["brackets"], lambda w: saddles.landscape(ds64, act, pw, w),
                                                region_angle=cfg.region_angle, max_seeds=cfg.max_seeds)
        timings["touching"] = time.time() - t0
        say(f"  touching basins: {len(pairs)} of {len(keep)} pairs ({touch['n_flips']} of {cfg.touch_inits} probes "
            f"flip at {cfg.touch_angle} rad, bisected {cfg.n_bisect} times; {sum(n_regions.values())} boundary "
            f"regions, {len(seeds)} seeded; {timings['touching']:.1f} s)")
    if len(pairs) > cfg.max_pairs:
        raise ValueError(f"{len(pairs)} pairs of {len(rows)} optima, more than {cfg.max_pairs} (--max_pairs); raise "
                         "--min_fraction or --max_pairs")
    ts = time.time()
    searches, path = _searches(cfg, ds64, act, pw, opt, pairs, seeds)
    say(f"saddles: {len(pairs)} pairs of {len(rows)} optima, {len(searches)} searches, {cfg.n_images} images, "
        f"{cfg.n_steps} string steps")
    st = jax.block_until_ready(saddles.string(ds64, act, pw, path, n_steps=cfg.n_steps, step=cfg.step, mesh=mesh))
    timings["string"] = time.time() - ts
    say(f"  string: {timings['string']:.1f} s")
    t1 = time.time()
    n = len(searches)
    climb = np.asarray(st.path)[np.arange(n), np.asarray(st.climb)]
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
    reach = saddle_seeds.match(np.asarray(ends["w"], np.float64), opt, cfg.match_tol, act.odd).reshape(-1, 2)
    timings["connect"] = time.time() - t3
    say(f"  sides followed to optima: {timings['connect']:.1f} s")
    found = []
    for k, (sr, c) in enumerate(zip(searches, certs)):
        ends_e = e_opt[reach[k]] if np.all(reach[k] >= 0) else None
        kind = saddles.classify_kind(reach[k], sr["pair"], c["energy"], ends_e)
        if c["certified"] and kind in ("direct", "joins another pair"):
            found.append((w[k], c["energy"], reach[k], k))
        sr.update({"saddle": w[k].tolist(), "energy": c["energy"], "certified": c["certified"], "note": c["note"],
                   "reaches": reach[k].tolist(), "kind": kind,
                   "certificate": {key: v for key, v in c.items()
                                   if key not in ("certified", "note", "energy", "unstable_direction")},
                   "string": {"climbing_image": int(st.climb[k]), "perp_force": float(st.perp_force[k]),
                              "climb_force": float(st.climb_force[k])},
                   "path_energies": np.asarray(st.energy[k]).tolist(),
                   "path_arc": _arc(np.asarray(st.path[k])).tolist()})
    distinct = saddle_graph.distinct_saddles(found)
    for sid, sd in enumerate(distinct):
        for k in sd["found_by"]:
            searches[k]["saddle_id"] = sid
        c = certs[sd["found_by"][0]]
        sd.update(id=sid, w=sd["w"].tolist(), ends=list(sd["ends"]), kink_rank=c["kink_rank"], index=c["index"],
                  residual=c["residual"])
    edges = [(sd["energy"], sd["ends"][0], sd["ends"][1]) for sd in distinct]
    b = saddles.barrier_matrix(e_opt, edges)
    timings["total"] = time.time() - t0
    check = None
    if cfg.check_all and cfg.pairs == "touching":
        say("  the same with every pair's great circle (--check_all):")
        full = run(dataclasses.replace(cfg, pairs="all", check_all=False, great_circle=True), summary, log=log,
                   mesh=mesh)
        check = compare(b, np.array(full["barrier_matrix"]))
        check.update(n_pairs_all=full["n_pairs"], n_certified_all=full["n_certified"],
                     total_s_all=full["timings_s"]["total"])
        say(f"  all pairs: {check['n_lower']} entries of the barrier matrix higher than with touching pairs "
            f"(max difference {check['max_abs_diff']:.2e})")
    pair_list = _pair_summary(pairs, searches, distinct, n_regions)
    return {"config": dataclasses.asdict(cfg), "basins_config": summary["config"],
            "basins_command": summary.get("command"),
            "landscape": "E_alpha" if pw.kind == "uniform" else "potential Psi (Gaussian alpha)",
            "tau": None if pw.kind == "uniform" else float(pw.tau),
            "optima": [{"optimum": k, "run_index": r["index"], "energy": float(e_opt[k]), "energy_alpha": r["energy"],
                        "fraction": r["fraction"],
                        "ci95": r["ci95"], "stable": r["stable"], "pattern": r.get("pattern"),
                        "overlap": r.get("overlap")} for k, r in enumerate(rows)],
            "searches": searches, "saddles": distinct, "pairs": pair_list, "barrier_matrix": b.tolist(),
            "merges": [list(m) for m in saddles.merge_tree(len(rows), edges)],
            "touching": None if touch is None else {
                **{k: v for k, v in touch.items() if k != "brackets"}, "counts": touch["counts"].tolist(),
                "components": components(len(rows), pairs), "n_regions": int(sum(n_regions.values())),
                "n_seeds": len(seeds)},
            "all_pairs_check": check,
            "n_pairs": len(pairs), "n_searches": len(searches), "n_certified": sum(c["certified"] for c in certs),
            "n_direct": sum(r["kind"] == "direct" for r in searches),
            "n_distinct_saddles": len(distinct), "n_pairs_several": sum(len(p["saddles"]) > 1 for p in pair_list),
            "timings_s": timings, "per_pair_s": timings["total"] / len(pairs)}


def _pair_summary(pairs, searches, distinct, n_regions) -> list:
    """Per pair of optima searched or joined by a saddle found: its searches, its boundary regions, and the
    distinct saddles joining it, highest (lowest barrier) first."""
    keys = sorted({tuple(map(int, p)) for p in pairs} | {tuple(sd["ends"]) for sd in distinct})
    out = []
    for key in keys:
        mine = [k for k, s in enumerate(searches) if tuple(s["pair"]) == key]
        joined = sorted((sd for sd in distinct if tuple(sd["ends"]) == key), key=lambda sd: -sd["energy"])
        out.append({"pair": list(key), "searches": mine, "n_regions": int(n_regions.get(key, 0)),
                    "n_seeded": sum(searches[k]["seed"]["kind"] == "boundary" for k in mine),
                    "saddles": [sd["id"] for sd in joined], "saddle_energies": [sd["energy"] for sd in joined]})
    return out


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


PAIR_COLUMNS = ["pair", "patterns", "searches", "saddles", "saddle E", "barrier i", "barrier j", "rank", "index",
                "found by", "other outcomes"]
KIND_SHORT = {"direct": "direct", "joins another pair": "other", "both ends reach the same optimum": "same",
              "an end reaches no known optimum": "lost", "not below both optima it reaches": "above"}
TABLE_WIDTH = 120
TABLE_KEY = ("key: one row per pair i-j of optima (0-based; patterns u_m, -: none) searched or joined by a saddle "
             "found; searches: g = along the great circle, nb = from n regions of the pair's basin boundary (nb/m: "
             "m regions found, the n highest seeded), - = not searched; saddles: distinct certified index-1 saddles "
             "joining i and j (2 or more: several, the highest shown); saddle E: that saddle's energy, the pair's "
             "lowest barrier: barrier i = E_i - saddle E (always > 0); rank = its active kink hyperplanes (0: smooth); "
             "index = directions along which E rises (1); found by: the search that found it (g, b1, ...; i-j g: "
             "another pair's); other outcomes: this pair's searches that gave no saddle joining it: other = a "
             "saddle of another pair (named), same / lost / above = both sides reach one optimum / a side reaches "
             "none / the saddle is not below both, no (n) = not certified, note n below. E: the landscape's energy "
             "(saddles.json: landscape). Every number: saddles.json.")


def _pattern(o) -> str:
    return "-" if o.get("pattern") is None else f"u{o['pattern']}"


def _tag(search) -> str:
    s = search["seed"]
    return "g" if s["kind"] == "great circle" else f"b{s['region']}"


def pair_rows(record: dict) -> tuple:
    """One table row per pair (PAIR_COLUMNS) and the distinct notes of the searches not certified (numbered)."""
    opt, searches, distinct = record["optima"], record["searches"], record["saddles"]
    out, notes = [], []
    for p in record["pairs"]:
        i, j = p["pair"]
        mine = [searches[k] for k in p["searches"]]
        n_gc = sum(s["seed"]["kind"] == "great circle" for s in mine)
        tags = (["g"] if n_gc else []) + ([f"{p['n_seeded']}b" + (f"/{p['n_regions']}" if p["n_regions"] > p["n_seeded"]
                                                                  else "")] if p["n_regions"] else [])
        other = []
        for s in mine:
            if s.get("saddle_id") is not None and s["saddle_id"] in p["saddles"]:
                continue
            if not s["certified"]:
                if s["note"] not in notes:
                    notes.append(s["note"])
                other.append(f"{_tag(s)} no ({notes.index(s['note']) + 1})")
            elif s["kind"] == "joins another pair":
                other.append(f"{_tag(s)} other {'-'.join(map(str, sorted(s['reaches'])))}")
            else:
                other.append(f"{_tag(s)} {KIND_SHORT.get(s['kind'], s['kind'])}")
        row = [f"{i}-{j}", f"{_pattern(opt[i])}-{_pattern(opt[j])}", "+".join(tags) or "-", len(p["saddles"])]
        if p["saddles"]:
            sd = distinct[p["saddles"][0]]
            first = searches[sd["found_by"][0]]
            by = _tag(first) if tuple(first["pair"]) == (i, j) else f"{'-'.join(map(str, first['pair']))} {_tag(first)}"
            row += [f"{sd['energy']:.6f}", f"{opt[i]['energy'] - sd['energy']:.6f}",
                    f"{opt[j]['energy'] - sd['energy']:.6f}", sd["kink_rank"], sd["index"], by]
        else:
            row += ["-"] * 6
        row.append(", ".join(other[:3]) + (f" +{len(other) - 3}" if len(other) > 3 else "") or "-")
        out.append(row)
    return out, notes


def table(record: dict) -> str:
    """The pair table (at most TABLE_WIDTH characters wide) with its key and the notes of the searches not
    certified; the JSON keeps every number and the full notes."""
    rows, notes = pair_rows(record)
    t = report.format_table(PAIR_COLUMNS, rows, width=TABLE_WIDTH)
    k = len(record["optima"])
    tc, ck = record.get("touching"), record.get("all_pairs_check")
    head = (f"pairs whose basins touch: {record['n_pairs']} of {k * (k - 1) // 2} ({tc['n_flips']} of {tc['n_probe']} "
            f"probes flip at {tc['angle']} rad; {tc['components']} component(s); {tc.get('n_regions', 0)} boundary "
            f"regions, {tc.get('n_seeds', 0)} seeded)\n" if tc else "")
    tail = (f"every pair's great circle ({ck['n_pairs_all']}): {ck['n_lower']} barrier entries lower than with the "
            f"touching pairs (largest difference {ck['max_abs_diff']:.1e}; {ck['total_s_all']:.1f} s)" if ck else "")
    wrap = lambda text, indent="": textwrap.fill(text, TABLE_WIDTH, subsequent_indent=indent)  # noqa: E731
    notes_text = "".join("\n" + wrap(f"({n}) {note}", "    ") for n, note in enumerate(notes, 1))
    summary = (f"{record['n_searches']} searches for {record['n_pairs']} pairs: {record['n_certified']} certified "
               f"index-1 saddles, {record['n_direct']} join the pair they were searched for; "
               f"{record['n_distinct_saddles']} distinct saddles in the graph, {record['n_pairs_several']} pair(s) "
               f"joined by several; {record['timings_s']['total']:.1f} s ({record['per_pair_s']:.2f} s per pair)")
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
                   barrier_min=float(h.min()) if h.size else None,
                   barrier_median=float(np.median(h)) if h.size else None,
                   barrier_max=float(h.max()) if h.size else None, energy_max=float(e.max()),
                   notes=sorted({p["note"] for p in rec["searches"] if not p["certified"]}), record=rec)
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
