"""The flags of the 1-layer part's basins scripts (``scripts/basins.py``, ``scripts/continuation.py``)
and their start-up checks, on top of the shared script layer :mod:`ccdyn.cli`.

- :func:`define_data_flags` defines the flags of :class:`ccdyn.data.registry.DataSpec` (defaults from
  a frozen spec) and :func:`data_spec` builds the spec back from the parsed flag values.
- :func:`define_basins_flags` defines the data flags and the flags of a basins run (activation, alpha,
  dynamics, inits, tiles); :func:`basins_config` builds the :class:`ccdyn.one_layer.basins.BasinsConfig`
  back and :func:`basins_data` runs the start-up checks of a config and returns its float64 data (a
  failed check ends the script through :func:`ccdyn.cli.fail`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax.numpy as jnp
from absl import flags

from ccdyn import activations, pairwise, parallel
from ccdyn.cli import check_memory, check_tolerance, define_seed, fail, floats, or_fail, register_numbers
from ccdyn.data.registry import AUGMENTATIONS, DATA_MODELS, DataSpec, build_dataset, support_shape
from ccdyn.one_layer import basins, engine

__all__ = ["define_data_flags", "data_spec", "CONFIG_FLAGS", "DYNAMICS_FLAGS", "RUN_FLAGS", "STOP_FLAGS",
           "define_basins_flags", "define_stop_flags", "stop_fields", "basins_config", "sized_by_rule", "basins_data"]

# The flags that define_data_flags / define_basins_flags define belong to the script calling them (its
# --helpshort lists them).
flags.disclaim_key_flags()


DATA_FLAG_NAMES = ("data", "d", "m", "q", "ortho_eps", "probs", "angles", "std", "n_samples", "data_path", "data_seed",
                   "aug", "aug_views", "aug_std", "aug_range")  # the flags define_data_flags defines


def define_data_flags(defaults: DataSpec = DataSpec()) -> None:
    """Defines one flag per :class:`DataSpec` field (the basins / landscape data flags) with validators."""
    D = defaults
    flags.DEFINE_enum("data", D.data, DATA_MODELS, "Data model.")
    flags.DEFINE_integer("d", D.d, "Input dimension (latent models, gaussian_mixture), >= 2.", lower_bound=2)
    flags.DEFINE_integer("m", D.m, "Number of patterns M (<= d).", lower_bound=1)
    flags.DEFINE_list("q", [str(v) for v in D.q], "Latent summation q_m in (0, 1): one value or M values.")
    flags.DEFINE_float("ortho_eps", D.ortho_eps, "||U^T U - I||_2 of the pattern basis, in [0, 1).")
    flags.DEFINE_list("probs", None, "Probabilities of the categories / circle points / mixture components.")
    flags.DEFINE_list("angles", [repr(a) for a in D.angles], "Circle angles in units of pi.")
    flags.DEFINE_float("std", D.std, "Gaussian mixture standard deviation (>= 0).")
    flags.DEFINE_integer("n_samples", D.n_samples, "Sample this many points (gaussian_mixture; latent_summation, "
                         "required beyond M = 16) instead of the exact population.")
    flags.DEFINE_string("data_path", D.data_path, "--data=file: a .npz with x (n, d); optional p, x_aug, p_aug, "
                        "patterns.")
    define_seed("data_seed", D.data_seed, "Seed of the data model (basis, samples, views).")
    flags.DEFINE_enum("aug", D.aug, AUGMENTATIONS, "Augmentation: none, noise (Gaussian views), rotation (2-D data: "
                      "x = R(t) x0, t ~ U[-aug_range pi, aug_range pi], App. B.5) or shift (cyclic shifts by "
                      "|s| <= aug_range; all d shifts when 2 aug_range + 1 >= d, App. B.5).")
    flags.DEFINE_integer("aug_views", D.aug_views, "Views per point for --aug=noise; quadrature angles of t for "
                         "--aug=rotation.", lower_bound=1)
    flags.DEFINE_float("aug_std", D.aug_std, "Noise std for --aug=noise (>= 0).")
    flags.DEFINE_float("aug_range", D.aug_range, "--aug=rotation: half-range of t in units of pi, in (0, 1] (1: "
                       "the whole circle); --aug=shift: the largest shift, an integer >= 1.")
    register_numbers("q", float, 0, 1, lo_open=True, unique=False)
    register_numbers("angles", float, min_len=2, what="numbers (units of pi)", unique=False)
    register_numbers("probs", float, allow_none=True, unique=False)
    flags.register_validator("ortho_eps", lambda v: 0 <= v < 1, "--ortho_eps must lie in [0, 1)")
    flags.register_validator("std", lambda v: v >= 0, "--std must be >= 0")
    flags.register_validator("aug_std", lambda v: v >= 0, "--aug_std must be >= 0")
    flags.register_validator("n_samples", lambda v: v is None or v >= 2, "--n_samples must be >= 2")
    flags.register_multi_flags_validator(
        ["aug", "aug_range"], lambda f: f["aug"] != "rotation" or 0 < f["aug_range"] <= 1,
        "--aug_range must lie in (0, 1] for --aug=rotation (half-range of the angle in units of pi)")
    flags.register_multi_flags_validator(
        ["aug", "aug_range"],
        lambda f: f["aug"] != "shift" or (f["aug_range"] >= 1 and f["aug_range"] == int(f["aug_range"])),
        "--aug_range must be an integer >= 1 for --aug=shift (the largest cyclic shift)")
    flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"], "--m must be <= --d")
    flags.register_multi_flags_validator(["q", "m"], lambda f: floats(f["q"]) is None or len(f["q"]) in (1, f["m"]),
                                         "--q must hold one value or --m values (one per pattern)")
    flags.register_multi_flags_validator(["probs", "data", "m", "angles"], _probs_fit, "--probs must hold one value "
                                         ">= 0 per category (--m of them; one per --angles for --data=circle), "
                                         "summing to 1")


def _probs_fit(f) -> bool:
    p, angles = floats(f["probs"] or ()), floats(f["angles"]) or ()
    n = {"latent_categorical": f["m"], "gaussian_mixture": f["m"], "circle": len(angles)}.get(f["data"])
    return (not f["probs"] or p is None or n is None  # (the dataset's own check: 1e-6 sqrt(n))
            or (len(p) == n and min(p) >= 0 and abs(sum(p) - 1) <= 1e-6 * n ** 0.5))


def data_spec(values) -> DataSpec:
    """The :class:`DataSpec` of parsed data flags (``values``: the scripts' ``FLAGS``)."""
    kw = {f.name: values[f.name].value for f in dataclasses.fields(DataSpec)}
    kw.update(q=floats(kw["q"]), angles=floats(kw["angles"]), probs=floats(kw["probs"]) if kw["probs"] else None)
    return DataSpec(**kw)


# The help of every BasinsConfig / Dynamics field that is one flag of the same name, type and default
# (:func:`define_basins_flags` takes the name, type and default from the dataclass, :func:`basins_config` reads
# the fields back by the same table). Fields without an entry are not 1:1 flags: the data (its own flags),
# the dynamics (its fields are), tile and chunk_size (None: chosen by a rule, :func:`sized_by_rule`),
# Dynamics.block and .sliding (fixed); the stopping rules are :data:`STOP_FLAGS` (scripts/basins.py only).
CONFIG_FLAGS: dict[str, tuple[str, dict]] = {
    "act": ("Activation h.", {"enum_values": activations.ACTIVATIONS}),
    "leaky_slope": ("leaky_relu negative slope, in [0, 1).", {}),
    "alpha": ("Pairwise importance alpha (Gaussian: Cor. 2).", {"enum_values": pairwise.KINDS}),
    "tau": ("Temperature of the Gaussian alpha (> 0).", {}),
}
DYNAMICS_FLAGS: dict[str, tuple[str, dict]] = {
    "method": ("Power iteration (Eq. PI), the flow (Eq. 7) integrated to --flow_rtol, euler_halving: the flow by "
               "fixed Euler steps halved on reversal (no error control; biased basins, docs/flow.md), or auto: power "
               "iteration, and the sliding flow for the inits that circle a ReLU kink (docs/flow.md).",
               {"enum_values": list(engine.METHODS)}),
    "step_size": ("Initial step of the flow (> 0; --method=flow starts at most this, moving w by 0.01 rad).", {}),
    "flow_rtol": ("--method=flow: bound on each step's angular error (radians), in (0, 0.1).", {}),
    "shift": ("Power-iteration shift s: A(w) w + s w (App. B.4), >= 0. --method=auto adds a bound on the largest "
              "eigenvalue of A(w) to it on the steps that cross kinks (docs/flow.md, tenth round).", {}),
    "max_steps": ("Steps before a run is declared not converged.",
                  {"lower_bound": 1, "upper_bound": 2**31 - 1}),  # the engine's int32 step counter
    "tol": ("Relative convergence tolerance, in (0, 0.1).", {}),
}
RUN_FLAGS: dict[str, tuple[str, dict]] = {
    "cluster_tol": ("Endpoints closer than this are one optimum, in (0, 1).", {}),
    "n_init": ("Number of random initializations.", {"lower_bound": 1, "upper_bound": parallel.MAX_INITS}),
    "seed": ("Seed of the initializations (init i uses fold_in(seed, i)).", {"seed": True}),
}
X64_FLAG: dict[str, tuple[str, dict]] = {"x64": ("Run the dynamics in float64 (certificates are always float64).", {})}


def _define_field(cls, name: str, help_text: str, kw: dict, default=None) -> None:
    """One flag for the dataclass field ``cls.name``: its type picks the flag kind, its default the flag's."""
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    value = field.default if default is None else default
    assert value is not dataclasses.MISSING, f"{cls.__name__}.{name} has no default"  # every flagged field has one
    kind = getattr(field.type, "__name__", str(field.type)).split(" ")[0]  # a type, or its name ("float | None")
    kw = dict(kw)
    if kw.pop("seed", False):
        define_seed(name, value, help_text)
    elif "enum_values" in kw:
        flags.DEFINE_enum(name, value, kw.pop("enum_values"), help_text, **kw)
    else:
        defines: dict[str, Callable[..., object]] = {"str": flags.DEFINE_string, "int": flags.DEFINE_integer,
                                                     "float": flags.DEFINE_float, "bool": flags.DEFINE_bool}
        defines[kind](name, value, help_text, **kw)


def define_basins_flags(n_init: int | None = None) -> None:
    """The data flags and one flag per 1:1 field of :class:`ccdyn.one_layer.basins.BasinsConfig` and its
    :class:`ccdyn.one_layer.engine.Dynamics` (:data:`CONFIG_FLAGS`, :data:`DYNAMICS_FLAGS`,
    :data:`RUN_FLAGS`: name, type and default from the dataclass; ``n_init`` overrides its default), then
    ``--chunk_size`` / ``--tile`` (default: the sizing rule) and ``--x64``, with validators
    (scripts/basins.py, scripts/continuation.py)."""
    define_data_flags()
    for name, (text, kw) in CONFIG_FLAGS.items():
        _define_field(basins.BasinsConfig, name, text, kw)
    for name, (text, kw) in DYNAMICS_FLAGS.items():
        _define_field(engine.Dynamics, name, text, kw)
    for name, (text, kw) in RUN_FLAGS.items():
        _define_field(basins.BasinsConfig, name, text, kw, default=n_init if name == "n_init" else None)
    flags.DEFINE_integer("chunk_size", None, "Inits per chunk (bounds memory; unit of resume); default: tile x "
                         f"devices x {parallel.TILES_PER_CHUNK}.", lower_bound=1)
    flags.DEFINE_integer("tile", None, "Inits per tile: the fixed GEMM width (results do not depend on chunk_size, "
                         f"device or process count at a fixed tile); default: {parallel.CPU_TILE} on CPU, on an "
                         "accelerator from its memory (docs/reproducibility.md, Sizing).", lower_bound=1)
    for name, (text, kw) in X64_FLAG.items():
        _define_field(basins.BasinsConfig, name, text, kw)
    flags.register_validator("leaky_slope", lambda v: 0 <= v < 1, "--leaky_slope must lie in [0, 1)")
    flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
    flags.register_validator("step_size", lambda v: v > 0, "--step_size must be > 0")
    flags.register_validator("step_size", lambda v: not v > 1e30, "--step_size must be <= 1e30 (float32 holds it; "
                             "the flow's first move is at most 0.01 rad whatever it is)")
    flags.register_validator("shift", lambda v: v >= 0, "--shift must be >= 0")
    flags.register_validator("flow_rtol", lambda v: 0 < v < 0.1, "--flow_rtol must lie in (0, 0.1)")
    flags.register_validator("tol", lambda v: 0 < v < 0.1, "--tol must lie in (0, 0.1)")
    flags.register_validator("cluster_tol", lambda v: 0 < v < 1, "--cluster_tol must lie in (0, 1)")
    flags.register_multi_flags_validator(
        ["method", "act"], lambda f: f["method"] != "power" or f["act"] in activations.HOMOGENEOUS,
        f"--method=power needs a homogeneous --act ({', '.join(activations.HOMOGENEOUS)}); use --method=flow")


STOP_FLAGS: dict[str, tuple[str, dict]] = {
    "target_miss": ("Stop at the first chunk after which no optimum with a basin >= this share of the inits can have "
                    "been missed (95%): at least ccdyn.stats.inits_for_miss(this) inits, fixed before the run; in "
                    "(0, 1).", {}),
    "target_halfwidth": ("Also (or alone) stop only when every basin fraction's simultaneous interval has half-width "
                         "<= this, in (0, 1); the intervals then hold at 95% over all the checkpoints "
                         "(docs/statistics.md).", {}),
    "target_unseen": ("Stop at the first chunk where the bound on the basin mass of optima not found and every 95% "
                      "half-width are <= this, in (0, 1); --n_init is then the cap.", {}),
}


def define_stop_flags() -> None:
    """The stopping rules of scripts/basins.py (``--n_init`` is then the cap), one flag per
    :class:`ccdyn.one_layer.basins.BasinsConfig` field of :data:`STOP_FLAGS` (default None: off):
    ``--target_miss``, ``--target_halfwidth`` (docs/statistics.md section 5) and the older ``--target_unseen``."""
    for name, (text, kw) in STOP_FLAGS.items():
        _define_field(basins.BasinsConfig, name, text, kw)
        flags.register_validator(name, lambda v: v is None or 0 < v < 1, f"--{name} must lie in (0, 1)")
    flags.register_multi_flags_validator(
        ["target_unseen", "target_miss", "target_halfwidth"],
        lambda f: f["target_unseen"] is None or (f["target_miss"] is None and f["target_halfwidth"] is None),
        "--target_unseen cannot be combined with --target_miss / --target_halfwidth: choose one stopping rule")


def stop_fields(values) -> dict:
    """The :class:`ccdyn.one_layer.basins.BasinsConfig` fields of the :func:`define_stop_flags` values."""
    return {name: values[name].value for name in STOP_FLAGS}


def basins_config(values, **extra) -> basins.BasinsConfig:
    """The :class:`ccdyn.one_layer.basins.BasinsConfig` of parsed :func:`define_basins_flags` values
    (``values``: the scripts' ``FLAGS``; the 1:1 fields by the tables of that function, then the sizing
    rule for ``--tile`` / ``--chunk_size`` not given); ``extra``: fields a script adds (e.g. ``target_unseen``)."""
    v = {name: values[name].value for name in (*CONFIG_FLAGS, *RUN_FLAGS, *X64_FLAG)}
    dyn = engine.Dynamics(**{name: values[name].value for name in DYNAMICS_FLAGS})
    cfg = basins.BasinsConfig(data=data_spec(values), dynamics=dyn, **v, **extra)
    return basins.sized(cfg, support_shape(cfg.data), tile=values["tile"].value, chunk_size=values["chunk_size"].value)


def sized_by_rule(values) -> list:
    """The sizing fields (``tile``, ``chunk_size``) not given as flags, chosen by the rule (``summary.json``'s
    ``sizing.auto``)."""
    return [name for name in ("tile", "chunk_size") if values[name].value is None]


def basins_data(cfg: basins.BasinsConfig, context: str = ""):
    """The start-up checks of a basins run, before anything is compiled or written: ``--tol`` against the
    dtype, the memory estimate (from the data flags, then from the data), d >= 2, and the dtype against
    the data's scale (:func:`ccdyn.one_layer.engine.range_problems`). Returns the float64 dataset; a
    failed check ends the script, its line prefixed with ``context``."""
    check_tolerance(cfg.dynamics.tol, "--tol", cfg.dtype)
    check_memory(*basins.memory_estimate(cfg, support_shape(cfg.data)))
    ds64 = or_fail(build_dataset, cfg.data, jnp.float64)
    if ds64.dim < 2:
        fail(f"{context}the data has dimension {ds64.dim}; basins live on the sphere S^(d-1) and need d >= 2 "
             "(--d / --data_path)")
    check_memory(*basins.memory_estimate(cfg, (ds64.n, 1 if ds64.x_aug is None else ds64.x_aug.shape[1], ds64.dim)))
    for problem in engine.range_problems(ds64, cfg.activation, cfg.pairwise, cfg.dynamics, cfg.dtype):
        fail(f"{context}{problem}")
    return ds64
