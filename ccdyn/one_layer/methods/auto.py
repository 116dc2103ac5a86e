"""``--method=auto``: power iteration where it converges, the sliding flow where it circles a ReLU kink.

On generic data every ReLU maximum sits on a kink hyperplane w^T x_i = 0 (the core paper's Fig. 8). There
A(w) w is not parallel to w, so power iteration (Eq. PI) has no fixed point and circles the kink until
``max_steps`` (``--method=power`` then reports CIRCLING_KINK); the flow with Filippov sliding
(:mod:`.sliding_flow`) reaches such maxima but costs several times more per init. ``auto`` runs each init by
power iteration and hands it to the sliding flow as soon as it circles:

1. **Power phase** (the method's step): power iteration's step (:func:`.power.step`) w <- normalize(A(w) w +
   s w), and a record of the iterate's activation pattern (the signs of w^T x_i over every view, as a 32-bit
   hash) over the last ``HISTORY`` steps. While the pattern changes (a step crossed a kink hyperplane within
   the last ``HISTORY`` steps, or fewer steps were taken), s = ``--shift`` + lambda_M, where lambda_M
   (:func:`field_bound`) bounds lambda_max(A(w)) at every w: such a step is an Euler step of the flow (Eq. 7)
   of length 1 / lambda_M, which scales each eigen-component of w by 1 + lambda_i / lambda_M in [1, 2] (A(w) is
   PSD), so these inits keep the flow's basins.
   Once the pattern has held for ``HISTORY`` steps, s = ``--shift`` (power iteration's long steps): in one
   region A(w) is one matrix (uniform alpha, homogeneous h), whose top eigenvector the flow approaches too.
   Unshifted power steps everywhere (the method before the tenth round, docs/flow.md) jump over basins: on a
   5-cluster mixture they sent none of 10^3 inits to a maximum holding 5.8% of the flow's. With a Gaussian alpha
   A(w) moves with w and has no such bound: the steps are power iteration's own. An iterate on its way to a
   smooth optimum crosses each kink hyperplane once; one that circles a kink crosses the same hyperplanes back
   and forth and *returns to a pattern it had*. From ``AUTO_DETECT`` steps on, an init whose pattern changes to
   one of its last ``HISTORY`` patterns stops with KINK_LIMIT: power iteration follows no kink at all (the
   status means "more kinks than this method follows", as for the sliding flow's analysis). So does an init
   still running after ``HANDOVER`` power steps: near a point where many hyperplanes meet (the default data's
   lattice: up to 9 at a vertex) an iterate can wander through more than ``HISTORY`` regions without returning
   to one it remembers, and before this rule such inits ran power steps to ``max_steps`` and ended CIRCLING_KINK
   (3 of 10^4 inits of the main job, 144 of 10^6; the chunk's tail ran for them alone). Power iteration converges
   long before: on the main job 99.9% of its converging inits within 28 steps (2 of 9953 above 200).
2. **Flow phase** (finish pass 1, a :class:`.base.Rerun` of KINK_LIMIT rows): the sliding flow
   (:func:`.sliding_flow.step`, ``--method=flow``'s step) from the iterate where power iteration left it,
   with a fresh step size (the first step restarts as the flow's first step does); its steps add to the power
   steps (``max_steps`` bounds both). Power iteration circles close to the kink, so the flow has little way
   to go; it converges where the flow does.
3. **Second pass** (finish pass 2): rows the flow phase ends KINK_LIMIT (more views on their kinks than its
   analysis holds) run on with the wider analysis, as ``--method=flow``'s own second pass.

Rows still running after ``max_steps`` get power iteration's kink watch first (CIRCLING_KINK). With a
non-kinked homogeneous activation (linear, ...) ``auto`` is ``--method=power`` itself, with a non-homogeneous
one (tanh, GELU: no power iteration) the flow (:func:`choose`).

Every row is computed on its own (the hash is an exact integer sum), so the runner's results are the same
bits whatever the chunk size, tile padding or device count (tests/one_layer/test_auto.py).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import compiling
from ccdyn.one_layer import sliding
from ccdyn.one_layer.methods import flow, power, sliding_flow
from ccdyn.one_layer.methods.base import KINKED, Method, Proposal, Rerun, Watch

__all__ = ["AUTO_DETECT", "HANDOVER", "HISTORY", "FLOW_TILE", "CPU_FLOW_TILE", "flow_tile", "Carry", "init",
           "pattern_hash", "field_bound", "power_phase", "method", "choose", "AUTO"]

AUTO_DETECT = 20  # power steps before a return to an earlier activation pattern counts as circling
HANDOVER = 200  # power steps after which a row still running is handed to the flow whatever its patterns did
HISTORY = 8  # the activation patterns remembered (a return within this many steps is circling)
FLOW_TILE = 256  # rows per tile of the flow phase on an accelerator (at most the run's tile)
CPU_FLOW_TILE = 32  # the same on a CPU (flow_tile)
_SEED = 20261128  # the hash's fixed random weights (one per view)


def flow_tile(backend: str | None = None) -> int:
    """Rows per tile of the flow phase on ``backend`` (default JAX's): 32 on CPU, 256 on an accelerator.

    A tile runs until its slowest row stops, and the sliding flow's rows stop far apart, so narrow tiles
    waste less; on a CPU a step costs about its rows (measured on the default data and four user sets, warm,
    per chunk: 256 -> 32 rows took the flow phase from 2.1-3.0 s to 0.4-0.6 s on the main job's 10^4 inits
    and from 0.4-6.9 s to 0.3-3.7 s on 10^3 inits of the user sets; it compiles in about the same time). An
    accelerator's step is a chain of small kernels whose launches cost the same whatever the rows (launch-bound
    on the H100, results/README.md "GPU"), so it keeps wide tiles (not measured there at 32 rows). The
    tile is part of the program: it changes the flow phase's rounding, and with it a few tail inits' paths."""
    return CPU_FLOW_TILE if (backend or jax.default_backend()) == "cpu" else FLOW_TILE


class Carry(NamedTuple):
    previous: jax.Array  # (k, d) power iteration's previous iterate
    history: jax.Array  # (k, HISTORY) uint32 hashes of the activation patterns of the last steps, newest first
    u: jax.Array  # (k, d) the sliding flow's carry (sliding_flow.Carry; eta = 0: not started)
    eta: jax.Array  # (k,)
    kinks: jax.Array  # (k, m) int32
    pinned: jax.Array  # (k,) bool
    reach: jax.Array  # (k,)
    q: jax.Array  # (k, m, d)
    idle: jax.Array  # (k,) int32
    best: jax.Array  # (k, 2)


def init(W, dyn) -> Carry:
    k = W.shape[0]
    fl = sliding_flow.init(W, dyn)
    return Carry(W, jnp.zeros((k, HISTORY), jnp.uint32), fl.u, jnp.zeros((k,), W.dtype), fl.kinks, fl.pinned,
                 fl.reach, fl.q, fl.idle, fl.best)


def pattern_hash(ds, w):
    """(k,) uint32: sum over the views with w^T x_i > 0 (x_i != 0) of fixed random 32-bit weights, mod 2^32
    (an exact integer sum: the same bits whatever the rows; two patterns collide with probability 2^-32)."""
    x = sliding.flat_views(ds)[0]
    weights = np.random.default_rng(_SEED).integers(0, 2 ** 32, size=x.shape[0], dtype=np.uint64).astype(np.uint32)
    on = ((w @ x.T) > 0) & (jnp.linalg.norm(x, axis=1) > 0)[None]
    return jnp.sum(jnp.where(on, jnp.asarray(weights), jnp.uint32(0)), axis=1, dtype=jnp.uint32)


def field_bound(ds):
    """lambda_M = lambda_max(sum_i p_i E_aug[x x^T | x0_i]), a bound on lambda_max(A(w)) at every w for ReLU and
    leaky ReLU with uniform alpha: A(w) = Cov_p(g_i) with g_i = E_aug[x h'(w^T x) | x0_i] (Lemma 3), and
    Cov_p(g) <= sum_i p_i g_i g_i^T <= sum_i p_i E_aug[h'^2 x x^T] <= sum_i p_i E_aug[x x^T] (Jensen, h'^2 <= 1).
    One d x d eigenvalue problem (loop-invariant in a block of steps)."""
    xv, pv = ds.views()
    return jnp.linalg.eigvalsh(jnp.einsum("n,nv,nvd,nve->de", ds.p, pv, xv, xv))[-1]


def power_phase(scale: float = 1.0, hold: bool = True):
    """The power phase's step: crossing steps shifted by ``--shift`` + ``scale`` lambda_M, and, with ``hold``,
    unshifted once the pattern has held for ``HISTORY`` steps. The method uses (1, True); ``scale=0`` is the
    method before the tenth round, ``hold=False`` the shift on every step (benchmarks/bench_auto_basins.py)."""

    def step(ds, act, pw, dyn, w, carry: Carry, steps, active) -> Proposal:
        h = pattern_hash(ds, w)
        # long (unshifted) steps once the activation pattern has held for HISTORY steps: inside one region A(w)
        # is one matrix, whose top eigenvector both the flow and power iteration approach
        held = jnp.all(carry.history == h[:, None], axis=1) & (steps >= HISTORY) & hold
        row_shift = None  # a Gaussian alpha: no bound on A(w) (it moves with w), power iteration's own steps
        if pw.kind == "uniform" and scale:
            crossing = (scale * field_bound(ds)).astype(w.dtype)
            row_shift = dyn.shift + jnp.where(held, jnp.zeros((), w.dtype), crossing)
        p = power.step(ds, act, pw, dyn, w, power.Carry(carry.previous), steps, active, row_shift)
        back = (h != carry.history[:, 0]) & jnp.any(carry.history[:, 1:] == h[:, None], axis=1)
        # a period-2 cycle (w(t+1) = w(t-1), power iteration's CYCLING) circles a kink too: A(w) of a ReLU region
        # is PSD (uniform alpha), so power iteration inside one region converges
        circling = ((back & (steps >= max(AUTO_DETECT, HISTORY))) | p.cycling | (steps >= HANDOVER)) & ~p.done
        # (steps >= HANDOVER: wandering among many kinks without a return within HISTORY steps, module docstring)
        history = jnp.concatenate([h[:, None], carry.history[:, :-1]], axis=1)
        return p._replace(carry=carry._replace(previous=p.carry.previous, history=history), over=circling,
                          cycling=None)

    return step


def _flow_step(ds, act, pw, dyn, w, carry: Carry, steps, active, wide=None) -> Proposal:
    fresh = carry.eta == 0  # handed over by the power phase: the flow's first step (A(w) w, a fresh step size)
    inner = sliding_flow.Carry(carry.u, carry.eta, carry.kinks, carry.pinned, carry.reach, carry.q, carry.idle,
                               carry.best)
    p = sliding_flow.step(ds, act, pw, dyn, w, inner, jnp.where(fresh, 0, steps), active, None, wide)
    c = p.carry
    return p._replace(carry=carry._replace(u=c.u, eta=c.eta, kinks=c.kinks, pinned=c.pinned, reach=c.reach, q=c.q,
                                           idle=c.idle, best=c.best))


def _phase(wide=None) -> Method:
    step = lambda ds, act, pw, dyn, w, carry, steps, active: _flow_step(ds, act, pw, dyn, w, carry, steps,  # noqa: E731
                                                                        active, wide)
    return Method("auto", knobs=("tol", "step_size", "flow_rtol"), init=init, step=step, check=flow.check,
                  compiler_options=compiling.SLIDING)  # the sliding flow's step: its options


def finish(ds, act, dyn) -> tuple:
    wide = sliding.wide_active(sliding.flat_views(ds)[0].shape[0], ds.dim)
    return (Watch("CIRCLING_KINK", power.circles), Rerun("KINK_LIMIT", _phase(), flow_tile(), sliding_flow.PASS_BLOCK),
            Rerun("KINK_LIMIT", _phase(wide), sliding_flow.WIDE_TILE, sliding_flow.PASS_BLOCK))


def check(act, dyn) -> None:
    if act.name not in KINKED:
        raise ValueError(f"the auto method's kink handover needs relu or leaky_relu; act={act.name!r} (choose() "
                         "gives power or the flow there)")


def method() -> Method:
    """``auto`` for a kinked activation (ReLU, leaky ReLU)."""
    return Method("auto", knobs=("tol", "shift", "step_size", "flow_rtol"), init=init, step=power_phase(),
                  finish=finish, check=check)


AUTO = method()


def choose(act, dyn) -> Method:
    """``auto`` for ``act``: the power-then-flow method for ReLU / leaky ReLU (and when ``act`` is unknown),
    power iteration for another homogeneous activation, the flow for a non-homogeneous one."""
    if act is None or act.name in KINKED:
        return AUTO
    return power.POWER if act.homogeneous else flow.choose(act, dyn)
