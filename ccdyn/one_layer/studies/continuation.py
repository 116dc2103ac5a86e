"""Continuation of basins across a parameter: optima followed as branches, and tipping between basins.

The question behind Cor. 2 (how the optima change with the Gaussian alpha's temperature tau), App. B.5
(with the augmentation range) and Fig. 1 (with the pattern overlap ||U^T U - I||, ``ortho_eps``) of
Tian, *Understanding the Role of Nonlinearity in Training Dynamics of Contrastive Learning*: run the
basins job (:mod:`ccdyn.one_layer.basins`) at each value v_0, v_1, ... of one parameter with the SAME
seed, so init i is the same point of the sphere at every value, then follow each optimum from one
value to the next (docs/guide.md, "The main job: scripts/basins.py", describes the basins job).

Matching between neighbouring values v_k -> v_{k+1} (:func:`match`). With labels L_k (the optimum of
each init, or -status when it did not converge) the overlap matrix is O[a, b] = #{i : L_k[i] = a,
L_{k+1}[i] = b}, and d(a, b) is the distance of the optima on the sphere, min(|w_a - w_b|, |w_a + w_b|)
for an odd activation (w and -w are one optimum, as in :func:`ccdyn.one_layer.basins.merge_duplicates`).

1. Candidate successor of a: among the optima b with d(a, b) <= ``match_tol``, the one with the
   largest O[a, b] (ties: the nearest). None when no optimum is that close.
2. When several a have the same candidate b, the one with the largest O[a, b] (ties: the nearest)
   continues into b; the others do not.
3. An a that does not continue ends its track at v_{k+1} (``dies_at``). If at least ``merge_share``
   of its basin lands in one optimum b (the largest share), its track *merges into* b's track.
4. An optimum b at v_{k+1} that nothing continues into starts a new track (``born_at`` = v_{k+1});
   ``born_from`` is the track at v_k that gives it the most inits (None if none does), so a basin
   that splits in two shows up as a continued track plus a track born from it.

Tipping matrix of the step: P[a, b] = O[a, b] / #{i : L_k[i] = a}, with a last column for the inits
of a that did not converge at v_{k+1} (any status), so each row sums to 1. Equal values give the
identity: same config, same seed, same labels. Every entry of every step's P has an interval, all of
them right at once with probability >= 95% (:func:`ccdyn.stats.tipping_intervals`: each row is a
multinomial given the basins at v_k; docs/statistics.md section 6).

Batched: where the values change only the dataset's arrays, not their shapes (``ortho_eps``, ``q``,
``std``, ``aug_std``, ``data_seed``, ...), every value runs in one compiled program
(:class:`ccdyn.one_layer.runner.ChunkRunner` with a values axis: the values are a batch axis of the tiles,
the inits shared; the method's finish, e.g. the sliding flow's second pass, as on every path), with the
same results as value by value; other parameters (shapes, the activation, alpha,
the dynamics) run value by value (``batch=False`` forces it, to compare).

:func:`run` drives the basins runs; :func:`follow` does the matching on analyses from anywhere (the
tests feed it hand-made ones). Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import report, stats
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import basins, engine, methods, runner
from ccdyn.one_layer.basins import BasinsConfig
from ccdyn.one_layer.engine import Dynamics

__all__ = ["PARAMS", "configs", "inert", "overlap", "tipping", "match", "follow", "sequential_reason", "run",
           "track_rows", "tipping_rows", "compact", "shown", "table"]

# Parameters that change which inits exist or where they live cannot be continued across.
_FIXED = {"n_init": "it changes the inits", "seed": "it changes the inits",
          "target_unseen": "it changes the number of inits", "target_miss": "it changes the number of inits",
          "target_halfwidth": "it changes the number of inits", "d": "it changes the sphere the inits live on",
          "data": "it is not a number", "dynamics": "name one of its fields"}


def _numeric_fields(cls, owner: str) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        t = str(f.type)
        if t.startswith(("int", "float")) and f.name not in _FIXED:
            out[f.name] = (owner, int if t.startswith("int") else float)
    return out


# name -> (where the field lives: "config" / "data" / "dynamics", its type)
PARAMS = {**_numeric_fields(BasinsConfig, "config"), **_numeric_fields(DataSpec, "data"),
          **_numeric_fields(Dynamics, "dynamics"), "q": ("data", float)}
_RANGES = {"tau": (lambda v: v > 0, "> 0"), "leaky_slope": (lambda v: 0 <= v < 1, "in [0, 1)"),
           "ortho_eps": (lambda v: 0 <= v < 1, "in [0, 1)"), "q": (lambda v: 0 < v < 1, "in (0, 1)"),
           "aug_range": (lambda v: v > 0, "> 0"), "std": (lambda v: v >= 0, ">= 0"),
           "aug_std": (lambda v: v >= 0, ">= 0"), "step_size": (lambda v: v > 0, "> 0"),
           "tol": (lambda v: 0 < v < 0.1, "in (0, 0.1)"), "shift": (lambda v: v >= 0, ">= 0"),
           "cluster_tol": (lambda v: 0 < v < 1, "in (0, 1)"), "data_seed": (lambda v: v >= 0, ">= 0"),
           "n_samples": (lambda v: v >= 2, ">= 2")}


def _knob_rule(knob: str) -> tuple:
    """(reads, why) of a Dynamics knob for :data:`_READ`."""
    return (lambda c: knob in _knobs(c),
            lambda c: f"--method={c.dynamics.method} --act={c.act} (its method reads no {knob})")


def _knobs(c: BasinsConfig) -> tuple:
    """The Dynamics fields the run's method reads (``auto`` resolved for the activation: power iteration
    for linear or quadratic reads no step size)."""
    return methods.select(c.dynamics, c.activation).knobs


# param -> (is it read under this config?, the flags that decide it): a parameter the run never reads
# gives identical runs at every value.
_READ = {
    "tau": (lambda c: c.alpha == "gaussian",
            lambda c: f"--alpha={c.alpha} (only the Gaussian alpha has a temperature)"),
    "leaky_slope": (lambda c: c.act == "leaky_relu", lambda c: f"--act={c.act} (only leaky_relu has a slope)"),
    "ortho_eps": (lambda c: c.data.data in ("latent_summation", "latent_categorical", "gaussian_mixture"),
                  lambda c: f"--data={c.data.data} (no pattern basis U)"),
    "q": (lambda c: c.data.data == "latent_summation", lambda c: f"--data={c.data.data} (q is latent summation's)"),
    "std": (lambda c: c.data.data == "gaussian_mixture", lambda c: f"--data={c.data.data} (std is the mixture's)"),
    "m": (lambda c: c.data.data not in ("circle", "file"), lambda c: f"--data={c.data.data} (no M patterns)"),
    "n_samples": (lambda c: c.data.data in ("latent_summation", "gaussian_mixture"),
                  lambda c: f"--data={c.data.data} (nothing is sampled)"),
    "data_seed": (lambda c: c.data.data not in ("circle", "file") or c.data.aug == "noise",
                  lambda c: f"--data={c.data.data} --aug={c.data.aug} (nothing is random)"),
    "aug_std": (lambda c: c.data.aug == "noise", lambda c: f"--aug={c.data.aug} (aug_std is the noise views')"),
    "aug_views": (lambda c: c.data.aug in ("noise", "rotation"), lambda c: f"--aug={c.data.aug} (no drawn views)"),
    "aug_range": (lambda c: c.data.aug in ("rotation", "shift"), lambda c: f"--aug={c.data.aug} (no range)"),
    # the dynamics' knobs: read when the method the run uses (auto resolved for the activation) lists them
    **{knob: _knob_rule(knob) for knob in ("step_size", "flow_rtol", "shift")},
    "chunk_size": (lambda c: False, lambda c: "any flags (results do not depend on chunk_size)"),
}


def inert(base: BasinsConfig, param: str) -> str | None:
    """The reason, naming the deciding flag, why ``param`` has no effect under ``base`` (every value
    would give the same run), or None when the run reads it."""
    if param not in _READ:
        return None
    reads, why = _READ[param]
    return None if reads(base) else f"--param={param} has no effect under {why(base)}: every value gives the same run"


def configs(base: BasinsConfig, param: str, values) -> list:
    """``base`` with ``param`` set to each value (same seed, same inits); ``ValueError`` names a
    parameter that is unknown or cannot be continued, or a value out of its range."""
    if param in _FIXED:
        raise ValueError(f"--param={param} cannot be continued: {_FIXED[param]}")
    if param not in PARAMS:
        raise ValueError(f"--param={param!r} is unknown; allowed: {', '.join(sorted(PARAMS))}")
    values = [float(v) for v in values]
    if not values:
        raise ValueError("--values needs at least one value")
    owner, kind = PARAMS[param]
    ok, text = _RANGES.get(param, (lambda v: kind is float or v >= 1, ">= 1"))
    out = []
    for v in values:
        if not math.isfinite(v) or not ok(v) or (kind is int and v != int(v)):
            raise ValueError(f"--values: {param}={v:g} must be {'an integer ' if kind is int else ''}{text}")
        value: Any = (v,) if param == "q" else kind(v)  # the field's own type: a 1-tuple for q, else int / float
        if owner == "config":
            out.append(dataclasses.replace(base, **{param: value}))
        else:
            sub = getattr(base, owner)
            out.append(dataclasses.replace(base, **{owner: dataclasses.replace(sub, **{param: value})}))
    return out


def overlap(labels_a, labels_b, k_a: int, k_b: int) -> np.ndarray:
    """O (k_a, k_b + 1): O[a, b] = #inits with label a before and b after; the last column counts the
    inits of a that did not converge after (a negative label)."""
    la, lb = np.asarray(labels_a), np.asarray(labels_b)
    if la.shape != lb.shape or la.ndim != 1:
        raise ValueError(f"labels of the two values differ in shape: {la.shape} vs {lb.shape} (same inits needed)")
    keep = la >= 0
    dest = np.where(lb[keep] >= 0, lb[keep], k_b)
    out = np.zeros((k_a, k_b + 1), np.int64)
    np.add.at(out, (la[keep], dest), 1)
    return out


def tipping(O) -> np.ndarray:
    """P = O with each row divided by its sum (rows of empty basins stay 0): P[a, b] is the share of
    basin a that lands in basin b, the last column the share that does not converge."""
    O = np.asarray(O, np.float64)
    n = O.sum(axis=1, keepdims=True)
    return np.divide(O, n, out=np.zeros_like(O), where=n > 0)


def _distance(A, B, odd: bool) -> np.ndarray:
    A, B = np.asarray(A, np.float64).reshape(-1, np.shape(B)[-1]), np.asarray(B, np.float64)
    d = np.linalg.norm(A[:, None] - B[None], axis=-1)
    return np.minimum(d, np.linalg.norm(A[:, None] + B[None], axis=-1)) if odd else d


def match(optima_a, optima_b, O, *, odd: bool, match_tol: float, merge_share: float = 0.5) -> dict:
    """One step of the matching rule (module docstring).

    Args:
      optima_a, optima_b: (k_a, d), (k_b, d) unit optima at v_k and v_{k+1}.
      O: (k_a, k_b + 1) :func:`overlap`.

    Returns:
      {"successor": (k_a,) b that a continues into or -1, "merges_into": (k_a,) b whose track a merges
      into or -1, "parent": (k_b,) a that b continues or -1, "distance": (k_a, k_b)}.
    """
    O = np.asarray(O)
    k_a, k_b = O.shape[0], O.shape[1] - 1
    if np.shape(optima_a)[0] != k_a or np.shape(optima_b)[0] != k_b:
        raise ValueError(f"overlap {O.shape} does not fit {np.shape(optima_a)[0]} and {np.shape(optima_b)[0]} optima")
    dist = _distance(optima_a, optima_b, odd) if k_a and k_b else np.zeros((k_a, k_b))
    cand = np.full(k_a, -1)
    for a in range(k_a):
        near = np.flatnonzero(dist[a] <= match_tol)
        if near.size:
            cand[a] = near[np.lexsort((dist[a, near], -O[a, near]))[0]]
    successor, parent = np.full(k_a, -1), np.full(k_b, -1)
    for b in range(k_b):
        claim = np.flatnonzero(cand == b)
        if claim.size:
            win = claim[np.lexsort((dist[claim, b], -O[claim, b]))[0]]
            successor[win], parent[b] = b, win
    merges = np.full(k_a, -1)
    P = tipping(O)
    for a in np.flatnonzero(successor < 0).tolist():
        if k_b:
            b = int(np.argmax(P[a, :k_b]))
            if P[a, b] >= merge_share and P[a, b] > 0:
                merges[a] = b
    return {"successor": successor, "merges_into": merges, "parent": parent, "distance": dist}


def _row_values(row) -> dict:
    return {"fraction": row["fraction"], "ci95": row["ci95"], "energy": row["energy"], "stable": row["stable"],
            "pattern": row["pattern"], "overlap": row["overlap"]}


def follow(analyses: list, values, *, odd: bool, match_tol: float, merge_share: float = 0.5) -> dict:
    """Tracks and tipping matrices from per-value basins analyses (:func:`ccdyn.one_layer.basins.analyze`:
    ``optima``, ``labels``, ``rows``), in the order of ``values``.

    Returns:
      {"tracks": [{"id", "born_at", "born_from", "dies_at", "merges_into", "lost_to_not_converged" (share
      of the basin of a track that dies whose inits do not converge at ``dies_at``: a large share says
      the dynamics failed there, not that the optimum vanished), "optimum" (per value: index
      or None), "fraction", "ci95", "energy", "stable", "pattern", "overlap" (per value, None where the
      track is absent)}], "steps": [{"from", "to", "overlap" O, "tipping" P, "successor", "merges_into",
      "distance"}]}. ``dies_at`` is the first value where the track is gone (None: alive at the last).
    """
    values = [float(v) for v in values]
    if len(analyses) != len(values):
        raise ValueError(f"{len(analyses)} analyses for {len(values)} values")
    n = len(values)
    tracks: list[dict[str, Any]] = []
    current: dict[int, int] = {}  # optimum index at the latest value -> track id

    def new_track(k, b, born_from=None):
        t = {"id": len(tracks), "born_at": values[k] if k else None, "born_from": born_from, "dies_at": None,
             "merges_into": None, "lost_to_not_converged": None, "optimum": [None] * n}
        t.update({key: [None] * n for key in ("fraction", "ci95", "energy", "stable", "pattern", "overlap")})
        tracks.append(t)
        return t["id"]

    def place(tid, k, b):
        t = tracks[tid]
        t["optimum"][k] = int(b)
        for key, v in _row_values(analyses[k]["rows"][b]).items():
            t[key][k] = v

    for b in range(len(analyses[0]["rows"])):
        current[b] = new_track(0, b)
        place(current[b], 0, b)
    steps = []
    for k in range(n - 1):
        A, B = analyses[k], analyses[k + 1]
        k_a, k_b = len(A["rows"]), len(B["rows"])
        O = overlap(A["labels"], B["labels"], k_a, k_b)
        rows = lambda optima, k: np.reshape(optima, (k, -1)) if k else np.zeros((0, 1))  # a value may have none
        m = match(rows(A["optima"], k_a), rows(B["optima"], k_b), O, odd=odd, match_tol=match_tol,
                  merge_share=merge_share)
        nxt = {}
        for a in range(k_a):
            if m["successor"][a] >= 0:
                nxt[int(m["successor"][a])] = current[a]
        for b in range(k_b):
            if b not in nxt:
                src = O[:, b]
                parent = current[int(np.argmax(src))] if k_a and src.max() > 0 else None
                nxt[b] = new_track(k + 1, b, parent)
            place(nxt[b], k + 1, b)
        for a in range(k_a):
            if m["successor"][a] < 0:
                tracks[current[a]]["dies_at"] = values[k + 1]
                tracks[current[a]]["lost_to_not_converged"] = float(tipping(O)[a, -1])
                if m["merges_into"][a] >= 0:
                    tracks[current[a]]["merges_into"] = nxt[int(m["merges_into"][a])]
        steps.append({"from": values[k], "to": values[k + 1], "overlap": O, "tipping": tipping(O),
                      "successor": m["successor"], "merges_into": m["merges_into"], "distance": m["distance"],
                      "from_tracks": [current[a] for a in range(k_a)], "to_tracks": [nxt[b] for b in range(k_b)]})
        current = nxt
    return {"tracks": tracks, "steps": steps}


def sequential_reason(base: BasinsConfig, param: str, datasets) -> str | None:
    """Why the values of ``param`` cannot share one compiled program (None: they can): a parameter that
    is not the data's changes the program (activation, alpha, dynamics) or nothing the engine sees
    (``cluster_tol``); a data parameter may change the dataset's shapes."""
    owner = PARAMS[param][0]
    if owner != "data":
        return f"--param={param} is a {'basins' if owner == 'config' else owner} parameter, not the data's"
    if not runner.same_shapes(datasets):
        return f"--param={param} changes the dataset's shapes"
    return None


def _entry(cfg, v, an, timings) -> dict:
    return {"value": float(v), "n_optima": len(an["rows"]), "status_counts": an["status_counts"], "optima": an["rows"],
            "timings_s": timings}


def run(base: BasinsConfig, param: str, values, *, match_tol: float = 0.2, merge_share: float = 0.5,
        batch: bool = True, progress=None, log=None) -> dict:
    """Basins at each value of ``param`` (same seed, so the same inits), then :func:`follow`.

    Args:
      base: the basins config; ``param`` (a field of it, of its ``data`` or ``dynamics``: :data:`PARAMS`)
        is replaced by each of ``values`` in turn.
      match_tol: distance on the sphere under which two optima at neighbouring values may be one branch.
      merge_share: share of a vanishing optimum's basin that one optimum must take to count as a merge.
      batch: run every value in one compiled program where they share shapes (:func:`sequential_reason`);
        False: value by value (the results are the same).
      progress: passed to the engine (:func:`ccdyn.one_layer.engine.collect`); log: ``log(text)`` after
        each value.

    Returns:
      {"param", "values", "match_tol", "merge_share", "batched", "sequential_reason", "runs": per value
      {"value", "n_optima", "status_counts", "optima" (basins rows), "timings_s"}, "timings_s" {"engine",
      "analyze"}, "tracks", "steps" (:func:`follow`, each step with ``tipping_ci``), "tipping_confidence"}.
    """
    cfgs = configs(base, param, values)
    datasets = [build_dataset(cfg.data, jnp.float64) for cfg in cfgs]
    why = "batch=False" if not batch else sequential_reason(base, param, datasets)
    analyses, runs, engine_s = [], [], 0.0
    say = lambda cfg, v, an, t: log is not None and log(
        f"{param}={v:g}: {len(an['rows'])} optima, {an['status_counts']['converged']} of {cfg.n_init} inits "
        f"converged ({sum(t.values()):.1f} s)")
    if why is None:
        chunk_runner = engine.ChunkRunner([ds.astype(base.dtype) for ds in datasets], base.activation,
                                          base.pairwise, base.dynamics, tile=base.tile)
        t0 = time.time()
        result = engine.collect(chunk_runner, jax.random.PRNGKey(base.seed), base.n_init, base.chunk_size,
                                base.dtype, progress=progress)
        engine_s = time.time() - t0
        if log is not None:
            log(f"{len(cfgs)} values in one program: {engine_s:.1f} s")
        for k, (cfg, v) in enumerate(zip(cfgs, values)):
            t0 = time.time()
            _, an = basins.analyze_result(cfg, datasets[k], {key: a[:, k] for key, a in result.items()})
            timings = {"analyze": time.time() - t0}
            analyses.append(an)
            runs.append(_entry(cfg, v, an, timings))
            say(cfg, v, an, timings)
    else:
        for cfg, v, ds64 in zip(cfgs, values, datasets):
            done = basins.run(cfg, ds64=ds64, progress=progress)
            assert done is not None  # None only on processes other than 0; the continuation runs in one process
            an = done["analysis"]
            engine_s += done["timings_s"]["run"]
            analyses.append(an)
            runs.append(_entry(cfg, v, an, done["timings_s"]))
            say(cfg, v, an, done["timings_s"])
    out = follow(analyses, values, odd=base.activation.sign_symmetric, match_tol=match_tol, merge_share=merge_share)
    level = 0.95
    for step, ci in zip(out["steps"], stats.tipping_intervals([s["overlap"] for s in out["steps"]], level)):
        step["tipping_ci"] = ci
    return {"param": param, "values": [float(v) for v in values], "match_tol": match_tol,
            "merge_share": merge_share, "batched": why is None, "sequential_reason": why,
            "timings_s": {"engine": engine_s, "analyze": sum(r["timings_s"]["analyze"] for r in runs)},
            "tipping_confidence": level, "runs": runs, **out}


def track_rows(record: dict) -> tuple:
    """(header, rows) of ``tracks.csv``: one row per track and value where it is present."""
    header = ("track", "value", "optimum", "fraction", "ci95_lo", "ci95_hi", "energy", "stable", "pattern", "overlap",
              "born_at", "born_from", "dies_at", "merges_into", "lost_to_not_converged")
    rows = []
    for t in record["tracks"]:
        for k, v in enumerate(record["values"]):
            if t["optimum"][k] is not None:
                rows.append([t["id"], v, t["optimum"][k], t["fraction"][k], *t["ci95"][k], t["energy"][k],
                             t["stable"][k], t["pattern"][k], t["overlap"][k], t["born_at"], t["born_from"],
                             t["dies_at"], t["merges_into"], t["lost_to_not_converged"]])
    return header, rows


def tipping_rows(record: dict) -> tuple:
    """(header, rows) of ``tipping.csv``: one row per nonzero P[a, b] of every step (``to_track`` empty
    and ``to_optimum`` = not_converged for the last column), with its simultaneous interval (``ci_lo``,
    ``ci_hi``: every entry of every step at once, 95%) and ``zero_share_hi``, the upper end of the
    entries of its row that no init took (empty when there is none)."""
    header = ("from_value", "to_value", "from_optimum", "from_track", "to_optimum", "to_track", "share", "count",
              "ci_lo", "ci_hi", "zero_share_hi")
    rows = []
    for s in record["steps"]:
        O, P = np.asarray(s["overlap"]), np.asarray(s["tipping"])
        ci = np.asarray(s["tipping_ci"]) if "tipping_ci" in s else np.full(O.shape + (2,), np.nan)
        for a in range(O.shape[0]):
            zero = O[a] == 0  # the upper end of any entry of this row that no init took (the same for all)
            zero_hi = float(ci[a][zero][0, 1]) if zero.any() else None
            for b in np.flatnonzero(O[a]):
                last = b == O.shape[1] - 1
                rows.append([s["from"], s["to"], a, s["from_tracks"][a], "not_converged" if last else int(b),
                             None if last else s["to_tracks"][b], float(P[a, b]), int(O[a, b]), float(ci[a, b, 0]),
                             float(ci[a, b, 1]), zero_hi])
    return header, rows


def compact(record: dict) -> dict:
    """``record`` for JSON: each step's dense matrices become the nonzero entries of O as
    ``[a, b, count]`` (b = -1: did not converge), their simultaneous intervals ``tipping_ci`` (same order),
    per row the upper end ``tipping_ci_zero_hi`` of an entry no init took, and the distance of each
    continued pair."""
    steps = []
    for s in record["steps"]:
        O = np.asarray(s["overlap"])
        a, b = np.nonzero(O)
        succ = np.asarray(s["successor"])
        steps.append({"from": s["from"], "to": s["to"], "from_tracks": s["from_tracks"], "to_tracks": s["to_tracks"],
                      "successor": succ.tolist(), "merges_into": np.asarray(s["merges_into"]).tolist(),
                      "successor_distance": [float(s["distance"][i, j]) if j >= 0 else None
                                             for i, j in enumerate(succ)],
                      "overlap": [[int(i), int(j) if j < O.shape[1] - 1 else -1, int(O[i, j])] for i, j in zip(a, b)]})
        if "tipping_ci" in s:  # the intervals of the entries listed in overlap, and per row that of a zero entry
            ci = np.asarray(s["tipping_ci"])
            steps[-1]["tipping_ci"] = [[float(ci[i, j, 0]), float(ci[i, j, 1])] for i, j in zip(a, b)]
            steps[-1]["tipping_ci_zero_hi"] = [float(ci[i][O[i] == 0][0, 1]) if np.any(O[i] == 0) else None
                                               for i in range(O.shape[0])]
    return {**record, "steps": steps}


def shown(record: dict, min_fraction: float) -> list:
    """The tracks whose basin fraction reaches ``min_fraction`` at some value."""
    return [t for t in record["tracks"] if max(f for f in t["fraction"] if f is not None) >= min_fraction]


def table(record: dict, min_fraction: float = 0.0) -> str:
    """The stdout summary: one row per track (born / died / merged; ``lost`` the share of a dying track's
    basin that does not converge where it dies) with its basin fraction at every value (``stable`` /
    ``unstable``, ``-`` absent), then a key of these columns; tracks below ``min_fraction`` at every
    value are counted, not listed."""
    def cell(t, k):
        word = "stable" if t["stable"][k] else "unstable"
        return "-" if t["optimum"][k] is None else f"{t['fraction'][k]:.3f} {word}"

    show = lambda v: "-" if v is None else v
    lost = lambda t: "-" if t["lost_to_not_converged"] is None else f"{t['lost_to_not_converged']:.2f}"
    head = ["track", "born at", "from", "dies at", "merges into", "lost"] + [
        f"{record['param']}={v:g}" for v in record["values"]]
    tracks = shown(record, min_fraction)
    body = [[t["id"], show(t["born_at"]), show(t["born_from"]), show(t["dies_at"]), show(t["merges_into"]), lost(t)]
            + [cell(t, k) for k in range(len(record["values"]))] for t in tracks]
    hidden = len(record["tracks"]) - len(tracks)
    nc = [r["status_counts"]["converged"] for r in record["runs"]]
    key = ["key: a track follows one optimum across the values. born at: the value where it first appears;",
           "     from: the track giving it the most inits; dies at: the value where it ends; merges into: the track",
           f"     taking >= {record.get('merge_share', 0.5):g} of its basin there; lost: the share of its basin "
           "that converges nowhere there.",
           "     per value: basin fraction (share of all inits), stable / unstable (linear stability of the flow,",
           "     Eq. 7; on a kink, the exact kink certificate); -: none, or the optimum is absent at that value."]
    how = ("one compiled program for every value" if record.get("batched") else
           f"value by value ({record['sequential_reason']})" if record.get("sequential_reason") else None)
    ci = ([f"tipping.csv: each share P[a, b] with an interval; all of them, every step, right at once with probability "
           f">= {100 * record['tipping_confidence']:g}% (docs/statistics.md)"]
          if "tipping_confidence" in record else [])
    return "\n".join([report.format_table(head, body), *key, "",
                      *([f"{hidden} tracks with basin fraction < {min_fraction:g} at every value not listed "
                         "(tracks.csv has all)"] if hidden else []), *ci,
                      *([f"runs: {how}, engine {record['timings_s']['engine']:.1f} s, analysis "
                         f"{record['timings_s']['analyze']:.1f} s"] if how else []),
                      "optima per value: " + ", ".join(str(r["n_optima"]) for r in record["runs"]),
                      "converged inits per value: " + ", ".join(map(str, nc))])
