"""Basins of attraction of the 1-layer flow over many random initializations (Sec. 3.3).

Pipeline: random unit inits (``ccdyn.parallel.init_weights``) -> run each to convergence with the
flow (Eq. 7) or power iteration (Eq. PI), per-init status flags -> cluster the converged endpoints
into distinct optima -> refine every optimum in float64 and certify it
(``ccdyn.fixed_points.certify``) -> basin fractions with 95% Wilson intervals.

Per-init dynamics (each init is frozen once it stops, so its result never depends on the others):

- flow: w <- normalize(w + eta_i P_w^perp A(w) w). eta_i starts at ``step_size`` and is halved each
  time the tangent direction reverses (t_k . t_{k-1} < 0). Smooth optima are unaffected, and the
  iterate converges onto a *kink* maximum (a point where a data point crosses the ReLU hyperplane and
  E is not differentiable) instead of oscillating around it. Converged: ||P^perp A w|| <= tol ||A w||
  (a critical point: the angle between w and A(w) w is at most tol), or the direction reversed again
  with a move <= tol (pinned on a kink; the refinement in float64 pins it further).
- power: w <- normalize(A(w) w + shift w) (App. B.4); converged when one step moves w by at most
  ``tol``. A period-2 cycle (||w(t+1) - w(t-1)|| <= tol < ||w(t+1) - w(t)||) is detected and
  reported; longer or chaotic wandering (seen for ReLU) ends as not converged.
 Status codes: 0 running,
1 converged, 2 non-finite, 3 cycling (power), 4 not converged within ``max_steps``, 5 dead (A(w) w = 0
exactly: a flat region of E, e.g. no data point on the active side of a ReLU). Only converged runs
enter the basins; the others are counted and reported, never averaged in.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import fixed_points, one_layer, parallel
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.pairwise import Pairwise

__all__ = ["Dynamics", "State", "RUNNING", "CONVERGED", "NONFINITE", "CYCLING", "NOT_CONVERGED",
           "DEAD", "initial_state", "make_block", "converge", "ChunkRunner", "cluster", "wilson_interval",
           "refine", "probe_local_max", "describe_optima", "merge_duplicates",
           "basin_mass_on_patterns", "summarize_status", "collect", "analyze"]

RUNNING, CONVERGED, NONFINITE, CYCLING, NOT_CONVERGED, DEAD = 0, 1, 2, 3, 4, 5
STATUS_NAMES = {CONVERGED: "converged", NONFINITE: "non-finite", CYCLING: "cycling",
                NOT_CONVERGED: "not converged", DEAD: "dead"}


@dataclasses.dataclass(frozen=True)
class Dynamics:
    """How each init is advanced (hashable; static under jit).

    Attributes:
      method: ``flow`` (Eq. 7, Euler + retraction) or ``power`` (Eq. PI).
      step_size: initial Euler step of the flow (> 0).
      tol: relative convergence threshold (dimensionless): power stops when ||w(t+1) - w(t)|| <= tol,
        the flow when ||P^perp A(w) w|| <= tol ||A(w) w||.
      max_steps: steps after which a running init is declared not converged.
      block: steps per ``lax.scan`` block between host checks.
      shift: power-iteration shift s in A(w) w + s w (App. B.4; populations have PSD A, s = 0).
    """

    method: str = "power"
    step_size: float = 1.0
    tol: float = 1e-6
    max_steps: int = 2000
    block: int = 50
    shift: float = 0.0


class State(NamedTuple):
    w: jax.Array  # (k, d) current iterate
    aux: jax.Array  # (k, d) flow: previous tangent step; power: previous iterate
    eta: jax.Array  # (k,) flow step size
    status: jax.Array  # (k,) int32
    steps: jax.Array  # (k,) int32 steps taken
    residual: jax.Array  # (k,) ||P^perp A(w) w|| at the last evaluated iterate


def initial_state(W, dyn: Dynamics) -> State:
    k = W.shape[0]
    aux = jnp.zeros_like(W) if dyn.method == "flow" else W
    return State(W, aux, jnp.full((k,), dyn.step_size, W.dtype), jnp.zeros((k,), jnp.int32),
                 jnp.zeros((k,), jnp.int32), jnp.full((k,), jnp.inf, W.dtype))


def _safe_normalize(v, fallback):
    norm = jnp.linalg.norm(v, axis=1, keepdims=True)
    return jnp.where(norm > 0, v / jnp.where(norm > 0, norm, 1), fallback)


def _step(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State) -> State:
    u = one_layer.ascent(ds, act, st.w, pw)
    t = one_layer.tangent(st.w, u)
    res = jnp.linalg.norm(t, axis=1)
    active = (st.status == RUNNING) & (st.steps < dyn.max_steps)
    if dyn.method == "flow":
        flip = jnp.sum(t * st.aux, axis=1) < 0
        eta = jnp.where(active & flip, st.eta / 2, st.eta)
        w_new = _safe_normalize(st.w + eta[:, None] * t, st.w)
        move = jnp.linalg.norm(w_new - st.w, axis=1)
        # a critical point, or pinned on a kink: still reversing, but by steps below tol
        done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | (flip & (move <= dyn.tol))
        cycling = jnp.zeros_like(active)
        aux_new = t
    else:
        eta = st.eta
        w_new = _safe_normalize(u + dyn.shift * st.w, st.w)
        done = jnp.linalg.norm(w_new - st.w, axis=1) <= dyn.tol
        cycling = jnp.linalg.norm(w_new - st.aux, axis=1) <= dyn.tol  # w(t+1) = w(t-1)
        aux_new = st.w
    finite = jnp.all(jnp.isfinite(w_new), axis=1) & jnp.isfinite(res)
    dead = jnp.all(u == 0, axis=1)  # A(w) w = 0 exactly: e.g. no input active for ReLU
    status = jnp.where(active & ~finite, NONFINITE,
             jnp.where(active & dead, DEAD,
             jnp.where(active & done, CONVERGED,
             jnp.where(active & cycling, CYCLING, st.status))))
    keep = active & finite
    return State(
        w=jnp.where(keep[:, None], w_new, st.w),
        aux=jnp.where(keep[:, None], aux_new, st.aux),
        eta=eta,
        status=status.astype(jnp.int32),
        steps=st.steps + active.astype(jnp.int32),
        residual=jnp.where(active, res, st.residual),
    )


def make_block(act: Activation, pw: Pairwise, dyn: Dynamics):
    """``block(ds, state) -> state`` advancing every init by ``dyn.block`` steps (one lax.scan)."""
    if dyn.method not in ("flow", "power"):
        raise ValueError(f"method={dyn.method!r} must be 'flow' or 'power'")
    if dyn.method == "power" and not act.homogeneous:
        raise ValueError(f"--method=power needs a homogeneous activation; act={act.name!r} is not")

    def block(ds, st):
        return jax.lax.scan(lambda s, _: (_step(ds, act, pw, dyn, s), None), st, None,
                            length=dyn.block)[0]

    return block


def _running(st: State, dyn: Dynamics) -> bool:
    status, steps = jax.device_get((st.status, st.steps))
    return bool(np.any((status == RUNNING) & (steps < dyn.max_steps)))


def _finish(st: State) -> dict:
    out = {k: np.asarray(v) for k, v in st._asdict().items() if k in ("w", "status", "steps", "residual")}
    out["status"] = np.where(out["status"] == RUNNING, NOT_CONVERGED, out["status"]).astype(np.int8)
    return out


def converge(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, W) -> dict:
    """Runs every row of W to a stop (unsharded, one jit); returns numpy w, status, steps, residual."""
    block = jax.jit(make_block(act, pw, dyn))
    st = initial_state(W, dyn)
    while _running(st, dyn):
        st = block(ds, st)
    return _finish(st)


class ChunkRunner:
    """Runs chunks of inits, tiled and sharded over the local devices (``ccdyn.parallel``).

    The compiled block is built once and reused by every chunk of the same padded size.
    """

    def __init__(self, ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, *, tile: int,
                 mesh=None):
        self.ds, self.dyn, self.tile = ds, dyn, int(tile)
        self.mesh = parallel.local_mesh() if mesh is None else mesh
        self.n_devices = self.mesh.devices.size
        block = make_block(act, pw, dyn)
        self._block = jax.jit(parallel.tiled_sharded(block, self.mesh, self.tile))

    def padded(self, count: int) -> int:
        return parallel.padded_chunk(count, self.tile, self.n_devices)

    def run(self, key, start: int, count: int, dtype, on_block=None) -> dict:
        """Inits start .. start+count-1 to a stop; numpy arrays of length ``count``.

        ``on_block(n_running, max_steps_taken)``, if given, is called after every block.

        Inits that stop are compacted away between blocks (the running ones are re-packed into
        fewer tiles), which leaves every init's arithmetic unchanged: rows of a tile never mix.
        """
        total = self.padded(count)
        W = parallel.init_weights(key, start, total, self.ds.dim, dtype)
        st = initial_state(W, self.dyn)
        rows = np.arange(total)
        st = st._replace(status=jnp.where(jnp.asarray(rows < count), RUNNING, NOT_CONVERGED))
        result = {"w": np.zeros((count, self.ds.dim), np.dtype(dtype)), "status": np.zeros(count, np.int8),
                  "steps": np.zeros(count, np.int32), "residual": np.zeros(count, np.dtype(dtype))}

        def record(host, sel):
            real = sel[rows[sel] < count]
            fin = _finish(State(*[a[real] for a in host]))
            for k in result:
                result[k][rows[real]] = fin[k]

        while True:
            st = self._block(self.ds, st)
            status, steps = jax.device_get((st.status, st.steps))
            running = (status == RUNNING) & (steps < self.dyn.max_steps)
            if on_block is not None:
                on_block(int(np.sum(running & (rows < count))), int(steps.max()))
            size = self.padded(int(running.sum())) if running.any() else 0
            if size == 0 or size < rows.size:  # record the stopped rows, re-pack the running ones
                host = State(*jax.device_get(tuple(st)))
                record(host, np.flatnonzero(~running))
                if size == 0:
                    return result
                keep = np.flatnonzero(running)
                sel = np.concatenate([keep, np.full(size - keep.size, keep[0])])
                packed = [a[sel] for a in host]
                packed[3] = np.where(np.arange(size) < keep.size, packed[3], NOT_CONVERGED)
                st = State(*[jnp.asarray(a) for a in packed])
                rows = np.concatenate([rows[keep], np.full(size - keep.size, count)])


def _odd_distance(W, c, odd: bool):
    d = np.linalg.norm(W - c[None], axis=1)
    return np.minimum(d, np.linalg.norm(W + c[None], axis=1)) if odd else d


def cluster(W: np.ndarray, tol: float, odd: bool = False):
    """Greedy clustering of unit vectors in row order: each unassigned row starts a cluster that takes
    every unassigned row within Euclidean distance ``tol`` (w and -w together if ``odd``).

    Returns:
      (labels (n,), centers (k, d)): clusters ordered by size (largest first), centers = normalized
      mean of the members (sign-aligned for odd activations).
    """
    n = W.shape[0]
    labels = np.full((n,), -1, np.int64)
    centers = []
    for i in range(n):
        if labels[i] >= 0:
            continue
        free = np.flatnonzero(labels < 0)
        near = free[_odd_distance(W[free], W[i], odd) <= tol]
        labels[near] = len(centers)
        members = W[near]
        if odd:
            members = members * np.sign(members @ W[i])[:, None]
        c = members.mean(axis=0)
        centers.append(c / np.linalg.norm(c))
    centers = np.asarray(centers).reshape(-1, W.shape[1])
    order, rank = _largest_first(np.bincount(labels, minlength=len(centers)))
    return rank[labels], centers[order]


def _largest_first(counts):
    """(order, rank): indices sorted by decreasing count (stable), and each index's position."""
    order = np.argsort(-np.asarray(counts), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return order, rank


def wilson_interval(count, n, z: float = 1.959963984540054):
    """95% Wilson score interval for a binomial proportion count / n."""
    count, n = np.asarray(count, float), float(n)
    p = count / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.stack([np.maximum(center - half, 0.0), np.minimum(center + half, 1.0)], axis=-1)


def refine(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, centers, *,
           tol: float = 1e-12, max_steps: int = 20000) -> dict:
    """Continues the dynamics from each cluster center in float64 down to ``tol``."""
    fine = dataclasses.replace(dyn, tol=tol, max_steps=max_steps)
    return converge(ds64, act, pw, fine, jnp.asarray(centers, ds64.x.dtype))


def probe_local_max(ds: Dataset, act: Activation, pw: Pairwise, w, radius: float = 1e-5,
                    n_random: int = 32, key=None):
    """True when E(w) exceeds E at every probe point cos(r) w + sin(r) v, for v = +-each tangent basis
    vector and ``n_random`` random tangent directions (alpha evaluated at each probe point).

    This checks maxima that sit on a kink of E, where the Hessian certificate does not apply.
    """
    key = jax.random.PRNGKey(0) if key is None else key
    q = fixed_points.tangent_basis(w)
    rand = jax.random.normal(key, (n_random, q.shape[1]), w.dtype) @ q.T
    dirs = jnp.concatenate([q.T, -q.T, rand / jnp.linalg.norm(rand, axis=1, keepdims=True)])
    probes = jnp.cos(radius) * w[None] + jnp.sin(radius) * dirs
    e0 = one_layer.energy(ds, act, w[None], pw)[0]
    e = one_layer.energy(ds, act, probes, pw)
    return bool(jnp.all(e < e0))


def describe_optima(ds64: Dataset, act: Activation, pw: Pairwise, optima, counts, n_init: int, *,
                    smooth_tol: float = 1e-8) -> list:
    """Per optimum: basin fraction + Wilson interval, certificate, and the best planted pattern.

    ``stable`` is linear stability of the flow (Eq. 7) at a smooth fixed point (every eigenvalue of
    :func:`ccdyn.one_layer.field_jacobian` has a negative real part; for uniform alpha this is the
    Hessian certificate), or, for a fixed point on a kink of E, :func:`probe_local_max`.
    ``strict_max_fixed_alpha`` is the Hessian certificate of ``ccdyn.fixed_points.certify``.
    """
    rows = []
    ci = wilson_interval(counts, n_init)
    patterns = None if ds64.patterns is None else np.asarray(ds64.patterns)
    if patterns is not None:
        patterns = patterns / np.linalg.norm(patterns, axis=1, keepdims=True)
    for k, w in enumerate(np.asarray(optima)):
        wj = jnp.asarray(w, ds64.x.dtype)
        cert = jax.device_get(fixed_points.certify(ds64, act, wj, pw))
        scale = max(abs(float(cert.lam1)), 1e-300)
        smooth = bool(cert.residual <= smooth_tol * scale)
        flow_max = fixed_points.flow_stability(ds64, act, wj, pw)
        stable = flow_max < -fixed_points.default_tol(ds64.x.dtype) * scale if smooth else \
            probe_local_max(ds64, act, pw, wj)
        row = {
            "optimum": k, "fraction": counts[k] / n_init, "ci95": ci[k].tolist(),
            "count": int(counts[k]), "energy": float(cert.energy), "eigengap": float(cert.gap),
            "lam1": float(cert.lam1), "residual": float(cert.residual), "smooth": smooth,
            "stable": bool(stable), "is_lme": bool(cert.is_lme), "hessian_max": float(cert.hessian_max),
            "strict_max_fixed_alpha": bool(cert.is_stable), "flow_jacobian_max_real": flow_max,
            "pattern": None, "overlap": None, "w": w.tolist(),
        }
        if patterns is not None:
            cos = patterns @ w
            score = np.abs(cos) if act.odd else cos
            best = int(np.argmax(score))
            row["pattern"], row["overlap"] = best, float(score[best])
        rows.append(row)
    return rows


def merge_duplicates(optima: np.ndarray, counts: np.ndarray, tol: float, odd: bool):
    """Merges refined optima closer than ``tol``; returns (optima, counts, mapping old -> new)."""
    labels, centers = cluster(optima, tol, odd)
    k = centers.shape[0]
    new_counts = np.bincount(labels, weights=counts, minlength=k).astype(np.int64)
    # Keep the refined optimum of the largest member cluster, not the mean of refined points.
    keep = np.stack([optima[max(np.flatnonzero(labels == j), key=lambda i: counts[i])] for j in range(k)])
    order, rank = _largest_first(new_counts)
    return keep[order], new_counts[order], rank[labels]


def basin_mass_on_patterns(rows: list, min_overlap: float = 0.9) -> float:
    """Total basin fraction of stable optima whose best planted pattern has overlap >= min_overlap."""
    return float(sum(r["fraction"] for r in rows
                     if r["stable"] and r["overlap"] is not None and r["overlap"] >= min_overlap))


def summarize_status(status: np.ndarray) -> dict:
    return {name: int(np.sum(status == code)) for code, name in STATUS_NAMES.items()}


def collect(runner: ChunkRunner, key, n_init: int, chunk_size: int, dtype, *, store=None,
            process_id: int = 0, num_processes: int = 1, progress=None, wait_timeout: float = 3600.0):
    """Runs this process's chunks of inits 0 .. n_init-1 and gathers all of them on process 0.

    Args:
      store: a :class:`ccdyn.io.ChunkStore` (chunks already in it are skipped: resume), or ``None``
        to keep results in memory (single process only).
      progress: optional callback ``progress(done_inits, total_inits, running_in_chunk, steps)``,
        called after every block of steps and at the end of every chunk (running_in_chunk = 0).

    Returns:
      On process 0, numpy arrays w (n_init, d), status, steps, residual in init order; else None.
    """
    ranges = parallel.chunk_ranges(n_init, chunk_size)
    mine = parallel.chunks_of_process(len(ranges), process_id, num_processes)
    if store is None and num_processes > 1:
        raise ValueError("several processes need a shared store (an output directory)")
    memory = {}
    done = sum(ranges[c][1] for c in mine if store is not None and store.has(c))
    for c in mine:
        if store is not None and store.has(c):
            continue
        total = sum(ranges[i][1] for i in mine)
        on_block = None if progress is None else (lambda r, k, d=done: r and progress(d, total, r, k))
        out = runner.run(key, ranges[c][0], ranges[c][1], dtype, on_block)
        if store is None:
            memory[c] = out
        else:
            store.save(c, out)
        done += ranges[c][1]
        if progress is not None:
            progress(done, total, 0, 0)
    if process_id != 0:
        return None
    if store is not None:
        store.wait(range(len(ranges)), timeout=wait_timeout)
    parts = [memory[c] if store is None else store.load(c) for c in range(len(ranges))]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def analyze(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, result: dict, *,
            cluster_tol: float) -> dict:
    """Clusters the converged endpoints, refines and certifies each optimum, labels every init.

    Args:
      ds64: the dataset in float64 (refinement and certificates are always float64).
      result: output of :func:`collect` (w, status, steps, residual for every init).

    Returns:
      dict with ``rows`` (one per optimum, largest basin first: see :func:`describe_optima`, plus
      ``refined``), ``optima`` (k, d), ``labels`` (n_init,) with -1 not converged, -2 non-finite,
      -3 cycling, -4 dead, and ``status_counts``.
    """
    status = result["status"]
    n_init = status.shape[0]
    conv = status == CONVERGED
    labels = np.full((n_init,), -1, np.int32)
    labels[status == NONFINITE] = -2
    labels[status == CYCLING] = -3
    labels[status == DEAD] = -4
    rows, optima = [], np.zeros((0, ds64.dim))
    if conv.any():
        first, centers = cluster(np.asarray(result["w"][conv], np.float64), cluster_tol, act.odd)
        ref = refine(ds64, act, pw, dyn, centers)
        counts = np.bincount(first, minlength=centers.shape[0])
        optima, counts, mapping = merge_duplicates(ref["w"], counts, cluster_tol, act.odd)
        refined = np.zeros(optima.shape[0], bool)
        refined[mapping] = ref["status"] == CONVERGED
        labels[conv] = mapping[first]
        rows = describe_optima(ds64, act, pw, optima, counts, n_init)
        for r, ok in zip(rows, refined):
            r["refined"] = bool(ok)
    return {"rows": rows, "optima": optima, "labels": labels, "status_counts": summarize_status(status)}
