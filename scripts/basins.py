"""Basins of attraction of the 1-layer contrastive energy over many random initializations.

    python scripts/basins.py --act=relu --n_init=10000
    python scripts/basins.py --act=linear --n_init=10000          # only +-phi_1 (PCA)
    python scripts/basins.py --data=circle --method=flow --act=relu
    python scripts/basins.py --alpha=gaussian --tau=0.5 --act=relu
    python scripts/basins.py --data=circle --method=flow --aug=rotation --aug_range=0.25 --aug_views=128
    python scripts/basins.py --n_init=1000000 --chunk_size=65536   # bounded memory; --resume after a kill
    python scripts/basins.py --n_init=1000000 --target_miss=0.001   # stop once no basin >= 0.1% can be missed

Default data: latent summation (Eq. 9), d = M = 10, q = 0.2, ||U^T U - I||_2 = 0.1 (seed 0), exact
population (2^10 points), uniform alpha. Several hosts: run one process per host with
--coordinator_address=HOST:PORT --num_processes=P --process_id=I (or --coordinator_address=auto under
SLURM / Open MPI / a TPU pod); the init axis is sharded over every device of every process, and
process 0 alone writes --output_dir (no shared file system is needed): see docs/guide.md, "Several hosts".

Writes <output_dir>/optima.npz, basins.png, then summary.json (last: its presence means complete),
keeps chunks/ for --resume, and prints a table of the optima. The run directory is ccdyn's own
(ccdyn-run.json, a lock while it runs): see docs/reproducibility.md.
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)  # certificates are float64; the run uses --x64 or float32

from ccdyn import cli  # noqa: E402
from ccdyn.one_layer import basins, script_flags  # noqa: E402

FLAGS = flags.FLAGS
script_flags.define_basins_flags()
script_flags.define_stop_flags()
cli.define_run_flags(None, what="Run directory (default runs/basins-<act>-<data>-...).")
cli.define_multihost_flags()


def main(argv):
    del argv
    t_start = time.time()
    pid, n_proc = cli.start_processes(FLAGS)  # before any JAX work
    cfg = script_flags.basins_config(FLAGS, **script_flags.stop_fields(FLAGS))
    ds64 = script_flags.basins_data(cfg)
    out_name = FLAGS.output_dir or (f"runs/basins-{cfg.act}-{cfg.data.data}-{cfg.alpha}-{cfg.dynamics.method}"
                                    f"-n{cfg.n_init}-seed{cfg.seed}")

    def verify(run):  # on --resume, every chunk file present must belong to this run
        if FLAGS.resume:
            cli.log(f"resume: {cli.or_fail(run.chunk_store().verify)} chunk files of this run found")

    # process 0 alone writes (its own --output_dir); the others check the config and take its chunk size
    run, chunk = cli.open_run_of_process_0(
        pid, n_proc, out_name, dataclasses.asdict(cfg), prepare=verify, value=lambda r: r.config["chunk_size"],
        agree=dataclasses.asdict(cfg) | {"chunk_size": 0},
        **basins.open_options(overwrite=FLAGS.overwrite, resume=FLAGS.resume))
    cfg = dataclasses.replace(cfg, chunk_size=chunk or cfg.chunk_size)  # a resumed run keeps its chunks
    cli.log(f"ccdyn basins: act={cfg.act} data={cfg.data.data} (n={ds64.n}, d={ds64.dim}) alpha={cfg.alpha} "
            f"method={cfg.dynamics.method} n_init={cfg.n_init} on {jax.device_count()} {jax.default_backend()} "
            f"device(s), process {pid}/{n_proc}, tile {cfg.tile}, chunk_size {cfg.chunk_size}"
            + (f" -> {out_name}" if pid == 0 else ""))
    t_run = time.time()
    progress = cli.progress(time.time(), max_steps=cfg.dynamics.max_steps, chunk_size=cfg.chunk_size)
    job = basins.run_job(cfg, run, ds64=ds64, auto=script_flags.sized_by_rule(FLAGS), t_start=t_start,
                         record=cli.run_record("scripts/basins.py", num_processes=n_proc), finish=cli.finish,
                         progress=progress if pid == 0 else None, log=cli.log if pid == 0 else None)
    if job is None:  # the other processes compute their share of every chunk and write nothing
        cli.log(f"process {pid}: all chunks done in {time.time() - t_run:.1f} s")
        return
    print(basins.table(job["summary"]))
    print(f"\nwrote {job['path']}/summary.json, optima.npz, basins.png ({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
