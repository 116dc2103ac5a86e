"""The configuration of a basins run and its sizing: :class:`BasinsConfig` (everything that determines
the numbers), the memory estimate and the tile / chunk-size rule behind ``--tile`` / ``--chunk_size``,
the ``sizing`` record of ``summary.json``, and the up-front cost estimate of a run whose field is far
dearer per init than a uniform alpha's (:func:`cost_estimate`; its warning:
:func:`ccdyn.one_layer.basins.report.cost_warning`)."""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp

from ccdyn import activations, pairwise, parallel
from ccdyn.activations import Activation
from ccdyn.data.registry import DataSpec, spec_from_dict
from ccdyn.one_layer import fused_ascent
from ccdyn.one_layer.engine import Dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["BasinsConfig", "memory_estimate", "sized", "sizing", "cost_estimate"]


@dataclasses.dataclass(frozen=True)
class BasinsConfig:
    """Everything that determines a basins run's numbers (``config.json``; compared on ``--resume``).

    Field names are ``scripts/basins.py``'s flags; ``data`` is the data model, ``dynamics`` how each
    init is advanced. ``x64`` runs the dynamics in float64 (refinement and certificates always are).
    ``target_unseen`` (None: off) ends the run at the first chunk after which the unseen-mass bound
    and every optimum's 95% half-width are <= it (:func:`precise_enough`); ``n_init`` is then the cap.
    ``target_miss`` / ``target_halfwidth`` (None: off) end it at the first chunk after which no basin
    >= ``target_miss`` can have been missed and every simultaneous interval's half-width is <=
    ``target_halfwidth`` (:func:`stop_plan`, docs/statistics.md section 5).
    """

    data: DataSpec = DataSpec()
    act: str = "relu"
    leaky_slope: float = activations.DEFAULT_LEAKY_SLOPE
    alpha: str = "uniform"
    tau: float = 1.0
    dynamics: Dynamics = Dynamics()
    n_init: int = 10000
    seed: int = 0
    chunk_size: int = 16384
    tile: int = 512
    x64: bool = False
    cluster_tol: float = 1e-2
    target_unseen: float | None = None
    target_miss: float | None = None
    target_halfwidth: float | None = None

    @property
    def activation(self) -> Activation:
        return activations.get_activation(self.act, self.leaky_slope)

    @property
    def pairwise(self) -> Pairwise:
        return pairwise.get_pairwise(self.alpha, self.tau)

    @property
    def dtype(self):
        return jnp.float64 if self.x64 else jnp.float32

    @classmethod
    def from_dict(cls, fields: dict) -> BasinsConfig:
        """The config as saved in ``config.json`` / ``summary.json`` (lists back to tuples)."""
        fields = dict(fields)
        fields["data"] = spec_from_dict(fields["data"])
        fields["dynamics"] = Dynamics(**fields["dynamics"])
        return cls(**fields)


def memory_estimate(cfg: BasinsConfig, shape) -> tuple:
    """(bytes, flag, formula): a coarse upper estimate of a run's peak memory per device from the data's
    (n, views, d) (:func:`ccdyn.data.registry.support_shape`) and the tile, naming the flag that drives
    it. The dataset is held 3 times in float64; a tile holds about 8 arrays of tile x n x views."""
    n, v, d = shape
    item = 8 if cfg.x64 else 4
    data, tile = 3.0 * n * v * d * 8, 8.0 * cfg.tile * n * v * item
    if cfg.alpha != "uniform":
        tile += 3.0 * min(cfg.tile, 16) * n * n * item  # dynamics.GAUSSIAN_BATCH inits at a time
    if data >= tile:  # the data's factor furthest above its default (d = 10, 8 views, 1024 points) names the flag
        flag = max((("--d", d / 10), ("--aug_views", v / 8), ("--n_samples", n / 1024)), key=lambda kv: kv[1])[0]
        return data + tile, flag, f"3 copies of {n} points x {v} views x d={d} float64"
    flag = "--tile" if cfg.tile / 512 >= v / 8 else "--aug_views"  # the factor furthest above its default
    return data + tile, flag, f"8 arrays of tile {cfg.tile} x {n} points x {v} views, {item} B each"


def sized(cfg: BasinsConfig, shape, *, tile: int | None, chunk_size: int | None) -> BasinsConfig:
    """``cfg`` with the tile and chunk size given, or, where ``None``, chosen by the rule of
    :data:`ccdyn.parallel.SIZING_RULE` from the backend, the device memory and this run's memory
    estimate (:func:`memory_estimate`) at the data's (n, views, d) ``shape``."""
    if tile is None:  # memory_estimate is fixed + tile x per_init for tiles >= 16
        n, v, _ = shape
        per_init = 8.0 * n * v * (8 if cfg.x64 else 4)
        fixed = memory_estimate(dataclasses.replace(cfg, tile=16), shape)[0] - 16 * per_init
        tile = parallel.default_tile(per_init, fixed, cfg.n_init, activation_bytes=4.0 * n * v,
                                     fused=fused_ascent.used_for(cfg.alpha, cfg.act, v > 1, not cfg.x64))
    return dataclasses.replace(cfg, tile=tile, chunk_size=chunk_size or parallel.default_chunk(tile))


def sizing(cfg: BasinsConfig, auto) -> dict:
    """The ``sizing`` record of ``summary.json``: the tile and chunk size in force, which of them the
    rule chose (``auto``: names), the rule, and the devices it saw."""
    dev = jax.devices()[0]
    return {"tile": cfg.tile, "chunk_size": cfg.chunk_size, "auto": list(auto), "rule": parallel.SIZING_RULE,
            "backend": jax.default_backend(), "device_kind": dev.device_kind, "n_devices": jax.device_count(),
            "device_memory_gib": round(parallel.device_memory(dev) / 2**30, 1)}


COST_PROBE_INITS, COST_PROBE_REPEATS = 64, 5  # inits per timed evaluation; evaluations timed (the fastest counts)


def _seconds_per_init(ds, act, pw, dtype) -> float:
    """Measured seconds of one evaluation of A(w) w per init: the fastest of :data:`COST_PROBE_REPEATS`
    compiled evaluations on :data:`COST_PROBE_INITS` inits (a loaded machine only slows some of them)."""
    from ccdyn.one_layer import dynamics  # the engine's field

    W = jnp.ones((COST_PROBE_INITS, ds.dim), dtype) / jnp.sqrt(ds.dim)
    field = jax.jit(lambda W: dynamics.ascent(ds, act, W, pw))
    jax.block_until_ready(field(W))  # compile
    best = float("inf")
    for _ in range(COST_PROBE_REPEATS):
        t0 = time.perf_counter()
        jax.block_until_ready(field(W))
        best = min(best, time.perf_counter() - t0)
    return best / COST_PROBE_INITS


def cost_estimate(cfg: BasinsConfig, ds64) -> dict | None:
    """The up-front cost of a run whose field is far dearer per init than a uniform alpha's, or None.

    A Gaussian alpha (Cor. 2) builds an (n, n) matrix per init and field evaluation, O(n^2) against the
    O(n views d) of a uniform alpha, or, where its K Taylor features pay (:func:`dynamics.taylor_order`),
    O(n K): 10^3 inits on 400 points could take more than an hour where the default data take seconds.
    Measured, not modelled: one evaluation of the field on
    :data:`COST_PROBE_INITS` inits in the run's dtype (the fastest of a few), against the same with a
    uniform alpha. ``max_s``: the time if every init runs to ``max_steps`` (an upper estimate: inits
    that converge sooner cost less) over the devices; ``evals_per_step``: 3 for the flow (Bogacki-Shampine
    3(2)), else 1; ``taylor_order``: K of the expansion used, or None for the dense kernel. None for a
    uniform alpha (no O(n^2) term)."""
    if cfg.alpha == "uniform":
        return None
    from ccdyn.one_layer import dynamics, gaussian_kernel, stepper

    ds = ds64.astype(cfg.dtype)
    pw = gaussian_kernel.bounded(cfg.pairwise, [ds.x], cfg.activation)
    per_init = _seconds_per_init(ds, cfg.activation, pw, cfg.dtype)
    uniform = _seconds_per_init(ds, cfg.activation, pairwise.get_pairwise("uniform"), cfg.dtype)
    evals = stepper.BS32.evaluations if cfg.dynamics.method == "flow" else 1
    max_s = cfg.n_init * cfg.dynamics.max_steps * evals * per_init / jax.device_count()
    order = dynamics.taylor_order(pw, cfg.dtype, ds64.x.shape[0])
    return {"seconds_per_eval": per_init, "uniform_seconds_per_eval": uniform, "taylor_order": order,
            "ratio": per_init / max(uniform, 1e-12), "evals_per_step": evals, "max_s": max_s, "n": ds64.n}
