"""The engine that runs many 1-layer initializations to a stop (Sec. 3.3): per-init stopping rules and
:class:`Status`, the generic step around a dynamics method, compiled blocks of steps, the method's finish.

Random unit inits (``ccdyn.parallel.init_weights``) are advanced by a dynamics method, one (attempted)
step per engine step, until each stops. The methods are values with one interface, one module each
(:mod:`ccdyn.one_layer.methods`: ``power``, Eq. PI; ``flow``, Eq. 7 integrated to a tolerance, sliding on
ReLU kinks; ``euler_halving``, the fixed-step flow): ``init`` makes the method's per-row state, ``step``
proposes the next iterate (a :class:`~ccdyn.one_layer.methods.base.Proposal`), ``finish`` runs once a
chunk has stopped (the sliding flow's second pass, power iteration's kink watch). The engine's
:func:`step` is the bookkeeping around ``method.step``, the same for every method: which inits are
active, the status codes, freezing stopped inits, counting steps. :mod:`ccdyn.one_layer.runner` runs
chunks of inits tiled and sharded over devices (``ChunkRunner``, :func:`collect`, both also importable
from here); :mod:`ccdyn.one_layer.basins` turns the stopped inits into optima and basins.

Every init's result depends on its own row only (each init is frozen once it stops), so it is the same
bits whatever else is run beside it. Every init ends with one :class:`Status`; only converged runs
enter the basins, the others are counted and reported, never averaged in.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import compiling, parallel
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, methods
from ccdyn.one_layer.methods import Method, Rerun, Watch
from ccdyn.pairwise import Pairwise

METHODS = tuple(methods.REGISTRY)

__all__ = ["METHODS", "Status", "FINAL_STATUSES", "Dynamics", "State", "initial_state", "step", "make_block",
           "watch", "mark_circling", "finish", "result", "converge",
           "ChunkRunner", "collect",  # noqa: F822 -- served by the module __getattr__ below (they live in runner)
           "status_counts", "recheck_dead", "range_problems"]


class Status(enum.IntEnum):
    """How an init's run ended (its code in ``optima.npz``'s ``status``; ``labels`` hold -code).

    RUNNING only exists inside the engine. NOT_CONVERGED: still moving after ``max_steps``.
    NONFINITE: NaN in w or its residual without an overflow. CYCLING: power iteration in a period-2
    cycle. DEAD: A(w) w = 0 exactly (a flat region of E, e.g. no data point on the active side of a
    ReLU). OVERFLOW: A(w) w or the step left the dtype's range (an infinity, or a retraction whose norm
    overflowed). UNDERFLOW: A(w) w is 0 in the run's dtype but not in float64 (:func:`recheck_dead`);
    both say: use ``--x64`` or rescale the data / the step. CIRCLING_KINK: power iteration not converged
    after ``max_steps`` and its iterate still crosses a ReLU kink hyperplane (w^T x_i = 0) in the next
    steps: on a kink A(w) w is not parallel to w, so power iteration has no fixed point there and
    circles it; the flow (``--method=flow``) slides onto such maxima. KINK_LIMIT: the flow reached more
    than :func:`ccdyn.one_layer.sliding.max_active` kink hyperplanes within ``KINK_DELTA * tol`` at once,
    and in the second pass with the wider analysis (:func:`second_pass`) more than
    :func:`ccdyn.one_layer.sliding.wide_active` (the most it follows), and stopped there. STALLED: the
    sliding flow made no progress in ``methods.sliding_flow.STALL_STEPS`` steps in a row (E no higher and the
    residual no lower than their best: every attempt rejected or undone at kinks, or a cycle among kink
    hyperplanes) without reaching a Clarke-stationary point: it would go on so until ``max_steps``.
    """

    RUNNING = 0
    CONVERGED = 1
    NONFINITE = 2
    CYCLING = 3
    NOT_CONVERGED = 4
    DEAD = 5
    OVERFLOW = 6
    UNDERFLOW = 7
    CIRCLING_KINK = 8
    KINK_LIMIT = 9
    STALLED = 10

    @property
    def key(self) -> str:
        """Machine name: ``status_counts`` keys, ``n_<key>`` in summary.json."""
        return self.name.lower()

    @property
    def text(self) -> str:
        """Human name for tables."""
        return {"NONFINITE": "non-finite", "NOT_CONVERGED": "not converged", "DEAD": "dead (A(w)w = 0)",
                "CIRCLING_KINK": "circling a kink", "KINK_LIMIT": "too many kinks",
                "STALLED": "stalled on kinks"}.get(self.name, self.name.lower())


FINAL_STATUSES = tuple(s for s in Status if s is not Status.RUNNING)


def status_counts(status) -> dict:
    """Number of inits ending in each final status, keyed by :attr:`Status.key`."""
    status = np.asarray(status)
    return {s.key: int(np.sum(status == s)) for s in FINAL_STATUSES}


@dataclasses.dataclass(frozen=True)
class Dynamics:
    """How each init is advanced (hashable; static under jit).

    Attributes:
      method: a name of :data:`ccdyn.one_layer.methods.REGISTRY`: ``auto`` (the default: power iteration,
        and the sliding flow for the inits that circle a ReLU kink; power iteration itself for another
        homogeneous activation, the flow for a non-homogeneous one: :func:`ccdyn.one_layer.methods.auto.choose`),
        ``power`` (Eq. PI), ``flow`` (Eq. 7 integrated to ``flow_rtol``) or ``euler_halving`` (Eq. 7 by fixed
        Euler steps, halved on reversal; no error control). Each method reads the fields in its ``knobs``.
      step_size: initial step of the flow (> 0), in time units of Eq. 7.
      tol: relative convergence threshold (dimensionless): power stops when ||w(t+1) - w(t)|| <= tol,
        the flow when ||P^perp A(w) w|| <= tol ||A(w) w||.
      max_steps: steps after which a running init is declared not converged (for ``flow``: attempted
        steps, accepted or rejected, each ``stepper.BS32.evaluations`` = 3 evaluations of A(w) w).
      block: steps per ``lax.scan`` block between host checks.
      shift: power-iteration shift s in A(w) w + s w (App. B.4; populations have PSD A, s = 0); ``auto`` adds
        the data's bound on lambda_max(A(w)) on its steps that cross kinks (:func:`.methods.auto.power_phase`).
      flow_rtol: ``flow`` only: the bound on each step's angular error (radians on the unit sphere).
      sliding: ``flow`` with ReLU / leaky ReLU only: an init pinned on kink hyperplanes slides along
        their intersection (Filippov; :mod:`ccdyn.one_layer.sliding`, docs/flow.md) instead of
        stopping there. False: the flow before sliding (stops where pinned), kept for comparisons.
    """

    method: str = "auto"
    step_size: float = 1.0
    tol: float = 1e-6
    max_steps: int = 2000
    block: int = 50
    shift: float = 0.0
    flow_rtol: float = 1e-4
    sliding: bool = True


class State(NamedTuple):
    """Every init's state (k rows) between engine steps."""

    w: jax.Array  # (k, d) current iterate
    status: jax.Array  # (k,) int32 :class:`Status` code
    steps: jax.Array  # (k,) int32 steps taken
    residual: jax.Array  # (k,) the method's stationarity residual at the last evaluated iterate
    carry: Any  # the method's own per-row state (``Method.init``; e.g. power iteration's previous iterate)


def initial_state(W, dyn: Dynamics, act: Activation | None = None, method: Method | None = None) -> State:
    """The state of the inits W (k, d) before their first step, for ``method`` (default: the one
    ``dyn.method`` names for ``act``, :func:`ccdyn.one_layer.methods.select`)."""
    method = methods.select(dyn, act) if method is None else method
    k = W.shape[0]
    return State(W, jnp.zeros((k,), jnp.int32), jnp.zeros((k,), jnp.int32), jnp.full((k,), jnp.inf, W.dtype),
                 method.init(W, dyn))


def step(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, method: Method) -> State:
    """One engine step: ``method.step`` on the running inits, then the bookkeeping, the same for every
    method. A running init (RUNNING and fewer than ``max_steps`` steps) ends OVERFLOW where A(w) w or the
    proposal holds an infinity or the retraction lost the unit norm, NONFINITE where the proposal or its
    residual is NaN, DEAD where A(w) w = 0 exactly, then KINK_LIMIT, CONVERGED, CYCLING, STALLED as the
    method flags it (in this order of precedence); its w and carry take the proposal's where that is finite
    and unit, its residual the proposal's. A stopped init is frozen."""
    active = (st.status == int(Status.RUNNING)) & (st.steps < dyn.max_steps)
    p = method.step(ds, act, pw, dyn, st.w, st.carry, st.steps, active)
    cycling = jnp.zeros_like(active) if p.cycling is None else p.cycling
    over = jnp.zeros_like(active) if p.over is None else p.over
    stalled = jnp.zeros_like(active) if p.stalled is None else p.stalled
    finite = jnp.all(jnp.isfinite(p.w), axis=1) & jnp.isfinite(p.residual)
    # an infinity in A(w) w or the new iterate, or a retraction that lost the unit norm (its norm overflowed)
    lost = finite & (jnp.abs(jnp.linalg.norm(p.w, axis=1) - 1) > 0.5)
    overflow = jnp.any(jnp.isinf(p.u) | jnp.isinf(p.u_new), axis=1) | jnp.any(jnp.isinf(p.w), axis=1) | lost
    dead = jnp.all(p.u == 0, axis=1)  # A(w) w = 0 exactly: e.g. no input active for ReLU
    status = jnp.where(active & overflow, int(Status.OVERFLOW),
             jnp.where(active & ~finite, int(Status.NONFINITE),
             jnp.where(active & dead, int(Status.DEAD),
             jnp.where(active & over, int(Status.KINK_LIMIT),
             jnp.where(active & p.done, int(Status.CONVERGED),
             jnp.where(active & cycling, int(Status.CYCLING),
             jnp.where(active & stalled, int(Status.STALLED), st.status)))))))
    keep = active & finite & ~lost
    kept = lambda new, old: jnp.where(keep.reshape(keep.shape + (1,) * (new.ndim - 1)), new, old)
    return State(
        w=kept(p.w, st.w),
        status=status.astype(jnp.int32),
        steps=st.steps + active.astype(jnp.int32),
        residual=jnp.where(active, p.residual, st.residual),
        carry=jax.tree.map(kept, p.carry, st.carry),
    )


def make_block(act: Activation, pw: Pairwise, dyn: Dynamics, method: Method | None = None, length: int | None = None):
    """``block(ds, state) -> state`` advancing every init by ``length`` (default ``dyn.block``) steps of
    ``method`` (one lax.scan; default: the one ``dyn.method`` names for ``act``). ``ValueError``: a method that
    cannot run this activation or these knobs."""
    method = methods.select(dyn, act) if method is None else method
    if method.check is not None:
        method.check(act, dyn)
    length = dyn.block if length is None else int(length)

    def block(ds, st):
        return jax.lax.scan(lambda s, _: (step(ds, act, pw, dyn, s, method), None), st, None, length=length)[0]

    return block


def watch(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, pass_: Watch) -> State:
    """``st`` with every init still RUNNING that the watch marks set to its status (w, steps, residual and
    the carry unchanged)."""
    marked = (st.status == int(Status.RUNNING)) & pass_.mark(ds, act, pw, dyn, st.w)
    return st._replace(status=jnp.where(marked, int(Status[pass_.status]), st.status).astype(st.status.dtype))


def mark_circling(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State) -> State:
    """``st`` with every power-iteration init still running (after ``max_steps``) whose iterate crosses a
    kink hyperplane within ``methods.power.CIRCLE_STEPS`` more steps marked CIRCLING_KINK (power
    iteration's kink watch, :func:`ccdyn.one_layer.methods.power.circles`)."""
    return watch(ds, act, pw, dyn, st, Watch("CIRCLING_KINK", methods.power.circles))


def finish_passes(ds: Dataset, act: Activation, dyn: Dynamics, method: Method) -> tuple:
    """The method's finish passes for this dataset (``()`` when it has none)."""
    return () if method.finish is None else tuple(method.finish(ds, act, dyn))


def _running(st: State, dyn: Dynamics) -> bool:
    status, steps = jax.device_get((st.status, st.steps))
    return bool(np.any((status == int(Status.RUNNING)) & (steps < dyn.max_steps)))


def finish(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, method: Method) -> State:
    """The method's finish on one batch (:func:`converge`; the runner does the same tile by tile): each
    :class:`~ccdyn.one_layer.methods.base.Rerun` runs the inits that ended in its status on from where
    they stopped with its method (the others frozen) until they stop or reach ``max_steps`` in all; each
    :class:`~ccdyn.one_layer.methods.base.Watch` marks inits still running."""
    for pass_ in finish_passes(ds, act, dyn, method):
        if isinstance(pass_, Rerun):
            code = int(Status[pass_.status])
            if not np.any(np.asarray(st.status) == code):
                continue
            block = jax.jit(make_block(act, pw, dyn, pass_.method, pass_.block),
                            compiler_options=compiling.block_options(pass_.method.compiler_options))
            st = st._replace(status=jnp.where(st.status == code, int(Status.RUNNING), st.status).astype(jnp.int32))
            while _running(st, dyn):
                st = block(ds, st)
        else:
            st = jax.jit(lambda d, s, p=pass_: watch(d, act, pw, dyn, s, p))(ds, st)
    return st


def result(st: State) -> dict:
    """numpy w, status (int8; RUNNING becomes NOT_CONVERGED), steps, residual of a stopped state."""
    out = {k: np.asarray(v) for k, v in st._asdict().items() if k in RESULT_FIELDS}
    running = out["status"] == int(Status.RUNNING)
    out["status"] = np.where(running, int(Status.NOT_CONVERGED), out["status"]).astype(np.int8)
    return out


RESULT_FIELDS = ("w", "status", "steps", "residual")


def converge(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, W) -> dict:
    """Runs every row of W to a stop (unsharded, one jit) and the method's finish; returns numpy w,
    status, steps, residual."""
    method = methods.select(dyn, act)
    block = jax.jit(make_block(act, pw, dyn, method), compiler_options=compiling.block_options(method.compiler_options))
    st = initial_state(W, dyn, method=method)
    while _running(st, dyn):
        st = block(ds, st)
    return result(finish(ds, act, pw, dyn, st, method))


def __getattr__(name: str):
    """``ChunkRunner`` and ``collect`` live in :mod:`ccdyn.one_layer.runner` (which imports this module)."""
    if name in ("ChunkRunner", "collect"):
        from ccdyn.one_layer import runner  # noqa: PLC0415 -- runner imports engine

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def recheck_dead(ds64: Dataset, act: Activation, pw: Pairwise, result: dict, *, batch: int = 4096) -> dict:
    """``result`` with every DEAD init whose A(w) w is not 0 in float64 relabelled UNDERFLOW (its float32
    A(w) w was 0 only because the products left float32's range). ``ds64``: the float64 dataset."""
    dead = np.flatnonzero(result["status"] == Status.DEAD)
    if dead.size == 0 or result["w"].dtype == np.float64:
        return result
    f = jax.jit(lambda W: jnp.any(dynamics.ascent(ds64, act, W, pw) != 0, axis=1))
    status = result["status"].copy()
    for lo in range(0, dead.size, batch):
        idx = dead[lo:lo + batch]
        W = np.zeros((batch, ds64.dim))
        W[:idx.size] = result["w"][idx]
        W[idx.size:, 0] = 1.0
        status[idx[np.asarray(f(jnp.asarray(W)))[:idx.size]]] = int(Status.UNDERFLOW)
    return {**result, "status": status}


def range_problems(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, dtype, *, n_probe: int = 64,
                   seed: int = 0) -> list:
    """Start-up check of the run's dtype against the problem's scale: one line per problem (naming the
    flag to change), empty if none. A(w) w is evaluated at ``n_probe`` random unit w in float64 and in
    ``dtype``: its float64 size must be representable in ``dtype`` with room for the step
    (``step_size * max ||A(w) w||`` squared must not overflow) and must not vanish there (0, or in
    float64 below its normal range). Where float64 itself gives 0 or inf, A(w) w on the data scaled to
    max |x| = 1 says whether it should be non-zero (float64 has no wider reference). A Gaussian alpha
    must not be 0 / 1 to ``dtype``'s precision at most w (:func:`ccdyn.pairwise.degenerate_tau`)."""
    from ccdyn.pairwise import degenerate_tau  # noqa: PLC0415 -- the check of a Gaussian alpha

    name, info, wide = np.dtype(dtype).name, np.finfo(np.dtype(dtype)), np.dtype(dtype) == np.float64
    W = parallel.init_weights(jax.random.PRNGKey(seed), 0, n_probe, ds64.dim, jnp.float64)
    top = float(np.max(np.abs(np.asarray(ds64.x))))
    # one small program per dtype (op by op, the field compiled some 13 programs per dtype: 0.7 s of every run)
    field = jax.jit(lambda d, W: dynamics.ascent(d, act, W, pw), compiler_options=compiling.QUICK)
    with np.errstate(all="ignore"):
        u64 = np.linalg.norm(np.asarray(field(ds64, W)), axis=1)
        u_ref = u64  # where A(w) w is non-zero: on the data scaled to max |x| = 1 when float64 gave 0 or inf
        if not np.all(np.isfinite(u64) & (u64 > 0)) and 0 < top < np.inf:
            ref = dataclasses.replace(ds64, x=ds64.x / top, x_aug=None if ds64.x_aug is None else ds64.x_aug / top)
            u_ref = np.linalg.norm(np.asarray(field(ref, W)), axis=1)
        u_dt = u64 if wide else np.linalg.norm(np.asarray(field(ds64.astype(dtype), W.astype(dtype)), np.float64),
                                               axis=1)
    scale = float(np.max(u64)) if np.all(np.isfinite(u64)) else np.inf
    fix = "rescale the data (--data_path / the data flags)" if wide else \
        "use --x64 or rescale the data (--data_path / the data flags)"
    problems = []
    if np.max(u_ref) > 0 and not np.all(np.isfinite(u_dt)) or scale > info.max / 1e3:
        size = f"overflows (the data's largest entry is {top:.1e})" if scale == np.inf else f"reaches {scale:.1e}"
        problems.append(f"||A(w) w|| {size}, beyond {name}'s range: {fix}")
    elif np.max(u_ref) > 0 and np.all(u_dt[u_ref > 0] < info.tiny if wide else u_dt[u_ref > 0] == 0):
        size = f"is about {scale:.1e}" if scale > 0 else f"vanishes (the data's largest entry is {top:.1e})"
        problems.append(f"||A(w) w|| {size}, which is 0 in {name}: "
                        + (fix if scale > 0 else fix.split("use --x64 or ")[-1]))
    elif dyn.method == "euler_halving" and dyn.step_size * scale > np.sqrt(info.max) / 1e3:
        problems.append(f"--step_size={dyn.step_size:g} times ||A(w) w|| (up to {scale:.1e}) overflows "
                        f"{name} in the retraction; use --step_size <= "
                        f"{np.sqrt(info.max) / 1e3 / scale:.1e}" + ("" if wide else " or --x64"))
    if pw.kind == "gaussian" and not problems:
        tau_min, delta = degenerate_tau(act.h(np.asarray(W) @ np.asarray(ds64.x).T), dtype)
        if pw.tau < tau_min:
            problems.append(f"--tau={pw.tau:g} makes the Gaussian alpha 0 or 1 in {name} at most w (the closest "
                            f"distinct features h(w^T x) are about {delta:.1e} apart): every start would look "
                            f"stationary; use --tau >= {tau_min:.1e} or rescale the data")
    return problems
