"""What the absl scripts share: list-flag parsing and validators, the data flags, the run record and
the run directory. Scripts read their flags only in ``main`` and hand the values to these helpers.

- :func:`floats` / :func:`ints` parse a list flag; :func:`register_numbers` and :func:`register_subset`
  register a validator whose one-line message names the flag and the accepted range.
- :func:`define_data_flags` defines the flags of :class:`ccdyn.data.registry.DataSpec` (defaults from
  a frozen spec) and :func:`data_spec` builds the spec back from the parsed flag values.
- :func:`define_basins_flags` defines the data flags and the flags of a basins run (activation, alpha,
  dynamics, inits, tiles); :func:`basins_config` builds the :class:`ccdyn.one_layer.basins.BasinsConfig`
  back and :func:`basins_data` runs the start-up checks of a config and returns its float64 data.
- :func:`run_record` is the provenance every output carries: command line, versions, devices;
  :func:`with_run_record` puts it in front of a study's record (``ccdyn.studies``) for its JSON.
- :func:`define_run_flags` defines ``--output_dir``, ``--overwrite`` (and ``--resume``);
  :func:`open_run_dir` opens the run directory (:class:`ccdyn.rundir.RunDir`: manifest, lock, staged
  overwrite, config fingerprint) or ends the script with the reason.
- :func:`start` replaces ``app.run``: a flag error, a non-finite float flag, or any exception in
  ``main`` ends the script with one ``error:`` line and exit status 2, never a traceback, and marks
  the open run directory failed (or removes it if it never started); :func:`fail` is that exit.
- :data:`SEED_MAX`, :func:`check_memory`, :func:`check_tolerance`: the start-up checks against the
  key range, the device's memory and the dtype's resolution; :func:`or_fail` turns a library
  ``ValueError`` / ``OSError`` (which names the flag or file) into that one-line exit.
- :func:`log` and :func:`progress` print progress on stderr (stdout is the summary table).

This is the scripts' layer: it may print and exit; the rest of the library does neither.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import platform
import sys
import time

import jax
import numpy as np
from absl import app, flags

import ccdyn
import jax.numpy as jnp

from ccdyn import activations, pairwise, parallel, rundir
from ccdyn.data.registry import AUGMENTATIONS, DATA_MODELS, DataSpec, build_dataset, support_shape
from ccdyn.one_layer import basins, engine

__all__ = ["floats", "ints", "register_numbers", "register_subset", "define_data_flags", "data_spec",
           "run_record", "with_run_record", "define_run_flags", "open_run_dir", "finish", "start", "or_fail", "fail",
           "log", "progress", "SEED_MAX", "check_memory", "check_tolerance", "define_basins_flags", "basins_config",
           "basins_data"]

SEED_MAX = 2**32 - 1  # jax.random.PRNGKey(s) is distinct for s in [0, 2**32) with or without x64

# The flags that define_data_flags defines belong to the script calling it (its --helpshort lists them).
flags.disclaim_key_flags()


def _parse(values, kind):
    try:
        return tuple(kind(v) for v in values)
    except (TypeError, ValueError):
        return None


def floats(values) -> tuple | None:
    """A list flag as floats, or None when an entry is not a number."""
    return _parse(values, float)


def ints(values) -> tuple | None:
    """A list flag as ints, or None when an entry is not an integer."""
    return _parse(values, int)


def register_numbers(name: str, kind=float, lo=None, hi=None, *, lo_open=False, hi_open=True, min_len=1,
                     allow_none=False, what=None) -> None:
    """Validator of a list flag whose entries are ``kind`` in [lo, hi) (ends per ``lo_open``/``hi_open``;
    None: unbounded), at least ``min_len`` of them. ``what`` overrides the range text of the message."""
    def ok(values):
        if values is None:
            return allow_none
        v = _parse(values, kind)
        return (v is not None and len(v) >= min_len and all(math.isfinite(x) for x in v)
                and all((lo is None or (x > lo if lo_open else x >= lo)) and
                        (hi is None or (x < hi if hi_open else x <= hi)) for x in v))

    noun = "integers" if kind is int else "numbers"
    if what is None:
        parts = ([f"{'>' if lo_open else '>='} {lo:g}"] if lo is not None and hi is None else
                 [f"{'<' if hi_open else '<='} {hi:g}"] if hi is not None and lo is None else
                 [f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"] if lo is not None else [])
        what = " ".join([noun] + parts)
    count = f"at least {min_len} " if min_len > 1 else ""
    flags.register_validator(name, ok, f"--{name} must be a comma-separated list of {count}{what}")


def register_subset(name: str, allowed) -> None:
    """Validator of a non-empty list flag whose entries come from ``allowed``."""
    flags.register_validator(name, lambda v: bool(v) and all(x in allowed for x in v),
                             f"--{name} must be a comma-separated list from {', '.join(allowed)}")


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
    flags.DEFINE_integer("data_seed", D.data_seed, "Seed of the data model (basis, samples, views).", lower_bound=0,
                         upper_bound=SEED_MAX)
    flags.DEFINE_enum("aug", D.aug, AUGMENTATIONS, "Augmentation: none, noise (Gaussian views), rotation (2-D data: "
                      "x = R(t) x0, t ~ U[-aug_range pi, aug_range pi], App. B.5) or shift (cyclic shifts by "
                      "|s| <= aug_range; all d shifts when 2 aug_range + 1 >= d, App. B.5).")
    flags.DEFINE_integer("aug_views", D.aug_views, "Views per point for --aug=noise; quadrature angles of t for "
                         "--aug=rotation.", lower_bound=1)
    flags.DEFINE_float("aug_std", D.aug_std, "Noise std for --aug=noise (>= 0).")
    flags.DEFINE_float("aug_range", D.aug_range, "--aug=rotation: half-range of t in units of pi, in (0, 1] (1: "
                       "the whole circle); --aug=shift: the largest shift, an integer >= 1.")
    register_numbers("q", float, 0, 1, lo_open=True)
    register_numbers("angles", float, min_len=2, what="numbers (units of pi)")
    register_numbers("probs", float, allow_none=True)
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


def data_spec(values) -> DataSpec:
    """The :class:`DataSpec` of parsed data flags (``values``: the scripts' ``FLAGS``)."""
    kw = {f.name: values[f.name].value for f in dataclasses.fields(DataSpec)}
    kw.update(q=floats(kw["q"]), angles=floats(kw["angles"]), probs=floats(kw["probs"]) if kw["probs"] else None)
    return DataSpec(**kw)


def define_basins_flags(n_init: int = 10000) -> None:
    """The data flags and one flag per field of :class:`ccdyn.one_layer.basins.BasinsConfig` (and its
    :class:`ccdyn.one_layer.engine.Dynamics`), with validators (scripts/basins.py, scripts/continuation.py)."""
    define_data_flags()
    flags.DEFINE_enum("act", "relu", activations.ACTIVATIONS, "Activation h.")
    flags.DEFINE_float("leaky_slope", activations.DEFAULT_LEAKY_SLOPE, "leaky_relu negative slope, in [0, 1).")
    flags.DEFINE_enum("alpha", "uniform", pairwise.KINDS, "Pairwise importance alpha (Gaussian: Cor. 2).")
    flags.DEFINE_float("tau", 1.0, "Temperature of the Gaussian alpha (> 0).")
    flags.DEFINE_enum("method", "power", list(engine.METHODS), "Power iteration (Eq. PI), the flow (Eq. 7) integrated "
                      "to --flow_rtol, or euler_halving: the flow by fixed Euler steps halved on reversal (no error "
                      "control; biased basins, docs/flow.md).")
    flags.DEFINE_float("step_size", 1.0, "Initial step of the flow (> 0; --method=flow starts at most this, moving "
                       "w by 0.01 rad).")
    flags.DEFINE_float("flow_rtol", 1e-4, "--method=flow: bound on each step's angular error (radians), in (0, 0.1).")
    flags.DEFINE_float("shift", 0.0, "Power-iteration shift s: A(w) w + s w (App. B.4), >= 0.")
    flags.DEFINE_integer("max_steps", 2000, "Steps before a run is declared not converged.", lower_bound=1)
    flags.DEFINE_float("tol", 1e-6, "Relative convergence tolerance, in (0, 0.1).")
    flags.DEFINE_float("cluster_tol", 1e-2, "Endpoints closer than this are one optimum, in (0, 1).")
    flags.DEFINE_integer("n_init", n_init, "Number of random initializations.", lower_bound=1,
                         upper_bound=parallel.MAX_INITS)
    flags.DEFINE_integer("seed", 0, "Seed of the initializations (init i uses fold_in(seed, i)).", lower_bound=0,
                         upper_bound=SEED_MAX)
    flags.DEFINE_integer("chunk_size", None, "Inits per chunk (bounds memory; unit of resume); default: tile x "
                         f"devices x {parallel.TILES_PER_CHUNK}.", lower_bound=1)
    flags.DEFINE_integer("tile", None, "Inits per tile: the fixed GEMM width (results do not depend on chunk_size, "
                         f"device or process count at a fixed tile); default: {parallel.CPU_TILE} on CPU, on an "
                         "accelerator from its memory (docs/reproducibility.md, Sizing).", lower_bound=1)
    flags.DEFINE_bool("x64", False, "Run the dynamics in float64 (certificates are always float64).")
    flags.register_validator("leaky_slope", lambda v: 0 <= v < 1, "--leaky_slope must lie in [0, 1)")
    flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
    flags.register_validator("step_size", lambda v: v > 0, "--step_size must be > 0")
    flags.register_validator("shift", lambda v: v >= 0, "--shift must be >= 0")
    flags.register_validator("flow_rtol", lambda v: 0 < v < 0.1, "--flow_rtol must lie in (0, 0.1)")
    flags.register_validator("tol", lambda v: 0 < v < 0.1, "--tol must lie in (0, 0.1)")
    flags.register_validator("cluster_tol", lambda v: 0 < v < 1, "--cluster_tol must lie in (0, 1)")
    flags.register_multi_flags_validator(
        ["method", "act"], lambda f: f["method"] != "power" or f["act"] in activations.HOMOGENEOUS,
        f"--method=power needs a homogeneous --act ({', '.join(activations.HOMOGENEOUS)}); use --method=flow")


def basins_config(values, **extra) -> basins.BasinsConfig:
    """The :class:`ccdyn.one_layer.basins.BasinsConfig` of parsed :func:`define_basins_flags` values
    (``values``: the scripts' ``FLAGS``); ``extra``: fields a script adds (e.g. ``target_unseen``)."""
    v = {name: values[name].value for name in ("act", "leaky_slope", "alpha", "tau", "n_init", "seed", "x64",
                                               "cluster_tol")}
    dyn = engine.Dynamics(**{name: values[name].value for name in ("method", "step_size", "tol", "max_steps", "shift",
                                                                    "flow_rtol")})
    cfg = basins.BasinsConfig(data=data_spec(values), dynamics=dyn, **v, **extra)
    return basins.sized(cfg, support_shape(cfg.data), tile=values["tile"].value, chunk_size=values["chunk_size"].value)


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


def run_record(script: str, argv=None, num_processes: int = 1) -> dict:
    """Provenance of an output: the command line, package versions, devices and process count."""
    argv = sys.argv[1:] if argv is None else list(argv)
    return {"command": " ".join(["python", script] + argv),
            "versions": {"ccdyn": ccdyn.__version__, "jax": jax.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
            "devices": [str(d) for d in jax.devices()],
            "num_processes": num_processes}


def with_run_record(script: str, record: dict, *, omit=("tables",), argv=None, num_processes: int = 1) -> dict:
    """A study's record as an output JSON: the :func:`run_record` first, then the record without the
    keys in ``omit`` (the rows that the script writes as tables instead)."""
    return {**run_record(script, argv, num_processes), **{k: v for k, v in record.items() if k not in omit}}


def define_run_flags(default: str | None, *, resume: bool = True, what: str = "Run directory.") -> None:
    """``--output_dir`` (default ``default``), ``--overwrite`` and, if ``resume``, ``--resume`` (the
    two exclude each other)."""
    flags.DEFINE_string("output_dir", default, what)
    flags.DEFINE_bool("overwrite", False, "Replace output_dir if it holds a finished or failed ccdyn run of this "
                      "script (never other files); the old run goes only once the new one has started.")
    if resume:
        flags.DEFINE_bool("resume", False, "Continue the run in output_dir (same configuration; refused otherwise).")
        flags.register_multi_flags_validator(["resume", "overwrite"], lambda f: not (f["resume"] and f["overwrite"]),
                                             "--resume and --overwrite exclude each other")


_ACTIVE: list = []  # the run directory this process opened (marked failed by start() on an error)


def open_run_dir(path, config: dict, *, script: str, outputs=(), overwrite: bool = False, resume: bool = False,
                 can_resume: bool = True, ignore=()) -> rundir.RunDir:
    """Opens the run directory (:meth:`ccdyn.rundir.RunDir.open`) and prints its notes; a refusal ends
    the script with the reason (exit status 2, nothing created)."""
    try:
        run = rundir.RunDir.open(path, config, script=script, version=ccdyn.__version__, outputs=outputs,
                                 overwrite=overwrite, resume=resume, can_resume=can_resume, ignore=ignore)
    except rundir.RunDirError as e:
        fail(e)
    _ACTIVE.append(run)
    for note in run.notes:
        log(f"note: {note}")
    return run


def _parse_flags(argv):
    try:
        rest = flags.FLAGS(argv)
    except flags.Error as e:
        fail(e)
    for name in list(flags.FLAGS):
        f = flags.FLAGS[name]
        if isinstance(f.value, float) and not math.isfinite(f.value):
            fail(f"--{name}={f.value} must be a finite number")
    return rest


def start(main, argv=None) -> None:
    """``app.run(main)`` with ccdyn's failure contract: every failure is one ``error:`` line and exit
    status 2 (set ``CCDYN_TRACEBACK=1`` to see the traceback of an unexpected one). ``argv``: default
    ``sys.argv``."""
    def guarded(argv):
        try:
            return main(argv)
        except SystemExit as e:
            _close_active(f"exit {e.code}")
            raise
        except KeyboardInterrupt:
            _close_active("interrupted")
            fail("interrupted")
        except BaseException as e:  # noqa: BLE001 -- the contract: one line, never a traceback
            _close_active(f"{type(e).__name__}: {e}")
            if os.environ.get("CCDYN_TRACEBACK"):
                raise
            fail(_one_line(e))

    app.run(guarded, argv=argv, flags_parser=_parse_flags)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in first or "out of memory" in first.lower():
        return f"out of memory ({first[:200]}); use smaller sizes (set CCDYN_TRACEBACK=1 for details)"
    if isinstance(e, OSError):
        return f"{e.strerror or first} ({e.filename})" if e.filename else first
    return f"{type(e).__name__}: {first[:300]} (set CCDYN_TRACEBACK=1 for the traceback)"


def _close_active(error: str) -> None:
    while _ACTIVE:
        run = _ACTIVE.pop()
        if run.manifest.get("state") == "running" and run.holds_lock:
            run.fail(error)


def finish(run: rundir.RunDir):
    """Marks ``run`` complete (after its last output) and forgets it; returns where it now lives."""
    run.finish()
    if run in _ACTIVE:
        _ACTIVE.remove(run)
    return run.path


def check_memory(estimate_bytes: float, flag: str, formula: str) -> None:
    """Ends the script if ``estimate_bytes`` exceeds the memory of the device the run uses
    (:func:`ccdyn.parallel.device_memory`), naming ``flag`` and the estimate's ``formula``."""
    have = parallel.device_memory()
    if estimate_bytes > have:
        fail(f"{flag} needs about {estimate_bytes / 2**30:,.1f} GiB ({formula}), more than the "
             f"{have / 2**30:,.1f} GiB of the {jax.default_backend()} device; use a smaller {flag}")


def check_tolerance(value: float, flag: str, dtype) -> None:
    """Ends the script if a relative tolerance is below what ``dtype`` resolves (4 eps)."""
    eps = float(np.finfo(np.dtype(dtype)).eps)
    if value < 4 * eps:
        fail(f"{flag}={value:g} is below what {np.dtype(dtype).name} resolves (4 eps = {4 * eps:.2g}); "
             f"use a larger {flag}" + (" or --x64" if np.dtype(dtype) == np.float32 else ""))


def or_fail(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or the end of the script with its ``ValueError`` / ``OSError`` as the
    one ``error:`` line (the library's errors name the flag or file)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, OSError) as e:
        fail(e)


def fail(message) -> None:
    """Ends the script with one ``error: ...`` line on stderr and exit status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def log(message: str) -> None:
    """One progress line on stderr, flushed."""
    print(message, file=sys.stderr, flush=True)


def progress(t0: float, every_s: float = 2.0):
    """A ``progress(done, total, running, steps)`` callback for :func:`ccdyn.one_layer.engine.collect`:
    a line on stderr after every chunk, and at most every ``every_s`` seconds within one."""
    last = [0.0]

    def report_progress(done, total, running, steps):
        now = time.time()
        if running and now - last[0] < every_s:
            return
        last[0] = now
        rate = done / max(now - t0, 1e-9)
        inside = f", chunk: {running} inits still running after {steps} steps" if running else ""
        log(f"  [{done}/{total} inits done] {rate:,.0f} inits/s, {now - t0:.1f} s{inside}")

    return report_progress


def define_multihost_flags() -> None:
    """``--coordinator_address``, ``--num_processes``, ``--process_id`` of a run over several hosts
    (README.md, "Several hosts"), with their validators; :func:`start_processes` uses them."""
    flags.DEFINE_string("coordinator_address", None, "Multi-host: HOST:PORT of process 0, or 'auto' (read from the "
                        "cluster's environment: SLURM, Open MPI, TPU pods).")
    flags.DEFINE_integer("num_processes", 1, "Multi-host: number of processes.", lower_bound=1)
    flags.DEFINE_integer("process_id", 0, "Multi-host: this process's index.", lower_bound=0)
    flags.register_multi_flags_validator(
        ["process_id", "num_processes"], lambda f: f["process_id"] < f["num_processes"],
        "--process_id must lie in [0, --num_processes - 1]")
    flags.register_multi_flags_validator(
        ["num_processes", "coordinator_address"], lambda f: f["num_processes"] == 1 or bool(f["coordinator_address"]),
        "--num_processes > 1 needs --coordinator_address=HOST:PORT of process 0")


def start_processes(values) -> tuple:
    """Joins the run's processes (:func:`ccdyn.parallel.initialize_distributed`, before any JAX work) from
    the :func:`define_multihost_flags` values; returns (this process's index, the process count)."""
    return or_fail(parallel.initialize_distributed, values["coordinator_address"].value,
                   values["num_processes"].value, values["process_id"].value)


def agree_processes(pid: int, config: dict, run, value: int = 0) -> int:
    """Every process of a multi-process run checks that all were started with the same ``config`` (its
    fingerprint) and that process 0 opened its run directory (``run``, None elsewhere); returns process
    0's ``value`` (e.g. a chunk size kept from a resumed run). Process 0 calls it also when opening its
    run failed (then it returns at once and its own error follows), so the others never wait for it."""
    fp = np.frombuffer(rundir.fingerprint(config).encode(), np.uint8)
    rows = parallel.gather_rows(np.concatenate([[int(pid > 0 or run is not None), value], fp]).astype(np.int64))
    if pid == 0 and run is None:
        return value
    if not rows[:, 0].all():
        fail("process 0 could not open its run directory (see its error)")
    if (rows[:, 2:] != rows[0, 2:]).any():
        fail("the processes were started with different configurations: give every process the same flags")
    return int(rows[0, 1])


def open_run_of_process_0(pid: int, n_proc: int, path, config: dict, *, prepare=None, value=None, agree=None,
                          **open_kw):
    """The run directory of a multi-process run, opened (:func:`open_run_dir`, ``open_kw``) and made ready
    (``prepare(run)``) by process 0 alone; every process then checks with :func:`agree_processes` that all
    share the config (``agree``: the config to compare, default ``config``) and receives process 0's
    ``value(run)`` (default 0). Returns (the run on process 0 / None elsewhere, that value)."""
    run = None
    try:
        if pid == 0:
            opened = open_run_dir(path, config, **open_kw)
            if prepare is not None:
                prepare(opened)
            run = opened
    finally:  # also when process 0 failed to open its run: the others must not wait for it
        got = value(run) if (run is not None and value is not None) else 0
        if n_proc > 1:
            got = agree_processes(pid, config if agree is None else agree, run, got)
    return run, got


def spread_over_processes(pid: int, items, work, write) -> dict:
    """Independent units of a multi-process run (e.g. the settings of a grid): ``work(item)`` (any
    picklable value) runs on process i mod P alone for item i (:func:`ccdyn.parallel.spread`), and
    process 0 calls ``write(item, value)`` for every item in order. Returns ``{item: write's return}`` on
    process 0, ``{}`` elsewhere."""
    done = parallel.spread(items, lambda item: pickle.dumps(work(item)))
    out = {item: write(item, pickle.loads(payload)) if pid == 0 else None for item, payload in done}
    return out if pid == 0 else {}
