"""A basins run: the engine over the inits, then the analysis (:func:`run`, returning arrays), and the
whole job into a run directory (:func:`run_job`: ``optima.npz``, ``basins.png``, then ``summary.json``,
the files of ``scripts/basins.py``), so that a script and a notebook get the same files from one call."""

from __future__ import annotations

import dataclasses
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import ccdyn
from ccdyn import io, parallel, rundir
from ccdyn.data.dataset import Dataset
from ccdyn.data.registry import build_dataset
from ccdyn.one_layer import engine
from ccdyn.one_layer.basins.analysis import analyze
from ccdyn.one_layer.basins.config import BasinsConfig, sizing
from ccdyn.one_layer.basins.report import cost_warning, summary, write_summary
from ccdyn.one_layer.basins.stopping import stop_rule

__all__ = ["SCRIPT", "OUTPUTS", "open_options", "analyze_result", "run", "library_record", "run_job"]

SCRIPT = "scripts/basins.py"  # the script whose run directories these are (their manifest names it)
OUTPUTS = ("summary.json", "optima.npz", "basins.png", "chunks")  # what a basins run directory holds


def open_options(*, overwrite: bool = False, resume: bool = False) -> dict:
    """The keyword arguments that open a basins run directory (:meth:`ccdyn.rundir.RunDir.open`, or
    ``ccdyn.cli.open_run_dir`` in a script): its script, outputs, and ``chunk_size`` left out of the
    fingerprint (it does not change results; a resumed run keeps its own)."""
    return {"script": SCRIPT, "outputs": OUTPUTS, "overwrite": overwrite, "resume": resume, "ignore": ("chunk_size",)}


def analyze_result(cfg: BasinsConfig, ds64: Dataset, result: dict, *, log=None) -> tuple[dict, dict]:
    """The host part of :func:`run` on an engine result: DEAD inits rechecked in float64, then
    :func:`analyze` (on the host CPU, as in :func:`run`); returns (result, analysis)."""
    host = parallel.host_device()
    with jax.default_device(host):
        ds_host = jax.device_put(ds64, host)
        result = engine.recheck_dead(ds_host, cfg.activation, cfg.pairwise, result)
        return result, analyze(ds_host, cfg.activation, cfg.pairwise, cfg.dynamics, result,
                               cluster_tol=cfg.cluster_tol, log=log)


def run(cfg: BasinsConfig, *, ds64: Dataset | None = None, store=None, mesh=None, progress=None,
        log=None) -> dict | None:
    """The whole basins pipeline: engine over ``cfg.n_init`` inits -> :func:`analyze`.

    Args:
      ds64: the float64 dataset; default ``build_dataset(cfg.data)`` (pass one to study a dataset
        that no flag describes). The dynamics run on ``ds64.astype(cfg.dtype)``.
      mesh: default every device of every process (:func:`ccdyn.parallel.device_mesh`).
      store, progress: as :func:`ccdyn.one_layer.engine.collect` (``store`` on process 0 only).
      log: optional callable taking one progress line of the analysis (:func:`analyze`).

    Returns:
      On process 0, ``{"result": per-init arrays, "analysis": analyze(...), "timings_s": {"run",
      "analyze"}}``; on the other processes ``None`` (they compute their share of every chunk). The
      analysis (float64 refinement and certificates of a few optima: small and latency-bound) runs
      on the host CPU on purpose, whatever the accelerator (docs/reproducibility.md, "Sizing").
    """
    ds64 = build_dataset(cfg.data, jnp.float64) if ds64 is None else ds64
    act, pw = cfg.activation, cfg.pairwise
    runner = engine.ChunkRunner(ds64.astype(cfg.dtype), act, pw, cfg.dynamics, tile=cfg.tile, mesh=mesh)
    t0 = time.time()
    stop = stop_rule(cfg)
    result = engine.collect(runner, jax.random.PRNGKey(cfg.seed), cfg.n_init, cfg.chunk_size, cfg.dtype, store=store,
                            progress=progress, stop=stop)
    run_s = time.time() - t0
    if result is None:
        return None
    t0 = time.time()
    result, an = analyze_result(cfg, ds64, result, log=log)
    return {"result": result, "analysis": an, "timings_s": {"run": run_s, "analyze": time.time() - t0}}


def library_record(num_processes: int = 1) -> dict:
    """The run record of a :func:`run_job` called from Python (a script passes its own,
    :func:`ccdyn.cli.run_record`): no command line, the versions and devices."""
    return {"command": "ccdyn.one_layer.basins.run_job (a library call: the config is in config.json)",
            "versions": {"ccdyn": ccdyn.__version__, "jax": jax.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
            "devices": [str(d) for d in jax.devices()], "num_processes": num_processes}


def run_job(cfg: BasinsConfig, run_dir, *, ds64: Dataset | None = None, overwrite: bool = False,
            resume: bool = False, auto=(), record: dict | None = None, progress=None, log=None, mesh=None,
            finish=None, t_start: float | None = None) -> dict | None:
    """Runs a basins job into a run directory: :func:`run`, then ``optima.npz`` (``optima``, ``labels``,
    ``status``, ``steps``), ``basins.png`` and, last, ``summary.json`` (:func:`summary`; its presence
    means the run is complete), with ``chunks/`` kept for ``resume`` (docs/guide.md, the main job).

    Args:
      run_dir: a path: the run directory is opened here (:meth:`ccdyn.rundir.RunDir.open` with
        :func:`open_options`; ``overwrite`` / ``resume`` as there; a refusal raises
        :class:`ccdyn.rundir.RunDirError`) and marked failed if the job raises. Or a run directory
        already opened (``scripts/basins.py`` opens it through :mod:`ccdyn.cli`, once for all its
        processes), or None on the processes of a multi-process run other than process 0: they compute
        their share of every chunk and write nothing.
      ds64, mesh, progress, log: as :func:`run`; ``log`` also takes the start-up cost warning
        (:func:`ccdyn.one_layer.basins.report.cost_warning`).
      auto: the sizing fields (``tile``, ``chunk_size``) that the rule chose (the ``sizing`` record).
      record: the run record (default :func:`library_record`); finish: marks the run complete (default
        :meth:`ccdyn.rundir.RunDir.finish`); t_start: when the job started (``timings_s["total"]``).

    Returns:
      ``{"summary": summary.json's dict, "result": per-init arrays, "analysis": analyze(...), "path":
      the run directory}`` on process 0 (print ``table(out["summary"])`` for the script's table), else None.
    """
    t_start = time.time() if t_start is None else t_start
    opened = isinstance(run_dir, (str, os.PathLike))
    run_ = (rundir.RunDir.open(run_dir, dataclasses.asdict(cfg), version=ccdyn.__version__,
                               **open_options(overwrite=overwrite, resume=resume)) if opened else run_dir)
    try:
        store = None
        if run_ is not None:
            cfg = dataclasses.replace(cfg, chunk_size=run_.config["chunk_size"])  # a resumed run keeps its chunks
            store = run_.chunk_store()
            if opened and resume:
                store.verify()
        ds64 = build_dataset(cfg.data, jnp.float64) if ds64 is None else ds64
        warning = None if log is None else cost_warning(cfg, ds64)  # measured: only where someone reads it
        if warning is not None:
            log(warning)
        done = run(cfg, ds64=ds64, store=store, mesh=mesh, progress=progress, log=log)
        if done is None:  # a process other than 0
            return None
        result, an, out = done["result"], done["analysis"], run_.path  # (a replacement has moved into place)
        s = summary(an, result, config=dataclasses.asdict(cfg), record=record or library_record(),
                    timings_s={**done["timings_s"], "total": time.time() - t_start}, sizing=sizing(cfg, auto))
        io.write_npz(out / "optima.npz", optima=an["optima"], labels=an["labels"], status=result["status"],
                     steps=result["steps"])
        from ccdyn.one_layer import figures  # here: importing the package should not load matplotlib

        title = (f"{cfg.act}, {cfg.data.data}, alpha={cfg.alpha}, {cfg.dynamics.method}: "
                 f"{s['n_optima']} optima from {s['n_init']} inits")
        io.save_figure(out / "basins.png", figures.basins_figure(s["optima"], title))
        write_summary(out, s)  # last: a summary means every output is there
        (rundir.RunDir.finish if finish is None else finish)(run_)
        return {"summary": s, "result": result, "analysis": an, "path": run_.path}
    except BaseException as e:
        if opened and run_.holds_lock:
            run_.fail(f"{type(e).__name__}: {e}")
        raise
