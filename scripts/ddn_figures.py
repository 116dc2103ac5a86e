"""Figs. 13-14 analogues (Dual Deep Networks, App. D.1) from the per-setting records of hltm.py runs.

    python scripts/ddn_figures.py --run_dirs=results/ddn/table6,results/ddn/depth6 \\
        --output_dir=results/ddn/figures

Reads runs/*.json of every --run_dirs (settings may come from several runs, e.g. another depth),
and draws the median over seeds of ||OP_mu||_F against epoch: fig13_<reading>.png for z_s0 and z_s1
(the root's children), fig14_<reading>.png for z_s010 and z_s1100, a column per factor (depth L,
delta_lower, |N_mu|) with the other two held at a reference. The medians are in figures.json.
"""

from __future__ import annotations

import os
from pathlib import Path

from absl import flags

from ccdyn import cli, io
from ccdyn.deep import figures, hltm
from ccdyn.deep.studies import hltm_grid

FLAGS = flags.FLAGS
OUTPUTS = ("fig13_*.png", "fig14_*.png", "figures.json")
flags.DEFINE_list("run_dirs", ["results/ddn/table6"], "Run directories of scripts/hltm.py.")
flags.DEFINE_list("readings", ["paper"], f"Readings to draw, from {', '.join(hltm.READINGS)}.")
flags.DEFINE_enum("arrangement", "op", ["op", "op_authors"], "||OP||_F as the paper arranges it, or the authors'.")
cli.define_run_flags("runs/ddn_figures", resume=False, what="Output directory.")
cli.register_subset("readings", hltm.READINGS)
cli.register_unique("run_dirs", os.path.realpath)


def main(argv):
    del argv
    records = []
    for d in FLAGS.run_dirs:  # each a finished hltm run (checked before anything is written)
        cli.read_run_json(Path(d) / "results.json", script="scripts/hltm.py", flag="--run_dirs", keys=("rows",))
        runs = sorted((Path(d) / "runs").glob("*.json"))
        if not runs:
            cli.fail(f"--run_dirs: {d} has no runs/*.json")
        records += [cli.read_run_json(p, script="scripts/hltm.py", flag="--run_dirs",
                                      keys=("setting", "nc", "op", "op_authors")) for p in runs]
    config = {"run_dirs": list(FLAGS.run_dirs), "readings": list(FLAGS.readings), "arrangement": FLAGS.arrangement}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/ddn_figures.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    medians = {}
    for reading in FLAGS.readings:
        panels = hltm_grid.figure_panels(records, reading, FLAGS.arrangement)
        if not panels:
            cli.log(f"no {reading} records in --run_dirs")
            continue
        seeds = sorted({len(r["nc"]) for r in records if r["setting"]["reading"] == reading})
        for name, lats in (("fig13", ("s0", "s1")), ("fig14", ("s010", "s1100"))):
            title = (f"{reading} reading: median ||OP_mu||_F over {'/'.join(map(str, seeds))} seeds "
                     f"({FLAGS.arrangement})")
            io.save_figure(out / f"{name}_{reading}.png", figures.ddn_op_figure(panels, lats, title))
        medians[reading] = {f: {lab: {lat: {"epochs": v[0], "median": v[1]} for lat, v in c.items()}
                                for lab, c in p.items()} for f, p in panels.items()}
        print(f"{reading}: panels {', '.join(panels)}")
    io.write_json(out / "figures.json", {**cli.run_record("scripts/ddn_figures.py"), "config": config,
                                         "medians": medians})
    print(f"wrote {cli.finish(run)}")


if __name__ == "__main__":
    cli.start(main)
