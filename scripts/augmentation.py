"""App. B.5: a group augmentation removes optima (continuous group) or ties them into orbits (discrete).

    python scripts/augmentation.py --overwrite     # -> results/theory/augmentation (~3 min on 2 CPU cores)

The study (rotations of the Fig. 8 circle data; cyclic shifts of 1-D signals) is
``ccdyn.one_layer.studies.augmentation``; its docstring says what is computed and what the verdicts test.

Writes into --output_dir: augmentation.json (everything, with the command), augmentation.md (tables,
verdicts), rotation.csv, shift.csv, rotation.png, shift.png and shift_data.npz (the 2^m signals, so
that scripts/basins.py --data=file --data_path=... --aug=shift reproduces a row).
"""

from __future__ import annotations

import dataclasses
import fractions
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)  # landscapes and certificates in float64

from ccdyn import activations, cli, io, parallel, report  # noqa: E402
from ccdyn.data import files  # noqa: E402
from ccdyn.one_layer.studies import augmentation  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("shift_data.npz", "rotation.csv", "shift.csv",
           "augmentation.md", "rotation.png", "shift.png", "augmentation.json")
flags.DEFINE_list("ranges", ["0", "1/36", "1/18", "1/9", "1/6", "1/4", "1/2", "1"],
                  "Rotation half-ranges a in units of pi, in [0, 1] (0: no augmentation; fractions allowed).")
flags.DEFINE_list("acts", ["relu", "leaky_relu", "linear"], "Activations of the rotation landscapes.")
flags.DEFINE_list("basin_acts", ["relu"], "Activations (among --acts) that also get the basins engine.")
flags.DEFINE_integer("views_per_circle", 512, "Rotation quadrature angles per 2 pi (a range a uses "
                     "max(--min_views, round(a * this)) angles).", lower_bound=2)
flags.DEFINE_integer("min_views", 16, "Fewest quadrature angles of a rotation range.", lower_bound=1)
flags.DEFINE_list("ripple_views", ["8", "16", "32", "64", "128", "256", "512"],
                  "Quadrature sizes V of the full-circle flatness table (>= 2).")
flags.DEFINE_float("min_prominence", 5e-5, "A maximum is prominent when its prominence is at least this "
                   "times max |E| without augmentation, in (0, 1).")
flags.DEFINE_integer("n_grid", 1 << 14, "Landscape grid points over [-pi, pi).", lower_bound=16)
flags.DEFINE_integer("refine_max", 64, "Refine the grid maxima only when there are at most this many.",
                     lower_bound=0)
flags.DEFINE_integer("n_init", 4000, "Inits of the rotation basins runs.", lower_bound=1,
                     upper_bound=parallel.MAX_INITS)
flags.DEFINE_integer("shift_n_init", 8000, "Inits of the shift basins runs.", lower_bound=1,
                     upper_bound=parallel.MAX_INITS)
flags.DEFINE_integer("max_steps", 2000, "Flow steps before a run is declared not converged.", lower_bound=1)
flags.DEFINE_float("step_size", 1.0, "Initial Euler step of the flow (> 0).")
flags.DEFINE_float("cluster_tol", 1e-2, "Endpoints closer than this are one optimum, in (0, 1).")
flags.DEFINE_integer("tile", 512, "Inits per tile (as scripts/basins.py).", lower_bound=1)
flags.DEFINE_integer("chunk_size", 16384, "Inits per chunk (as scripts/basins.py).", lower_bound=1)
cli.define_seed("seed", 0, "Seed of the initializations (init i uses fold_in(seed, i)).")
flags.DEFINE_integer("shift_d", 8, "Signal length d of the shift study (>= 3).", lower_bound=3)
flags.DEFINE_integer("shift_m", 3, "Patterns of the shift study, in [1, min(d - 1, 16)].", lower_bound=1)
flags.DEFINE_float("shift_q", 0.2, "Latent summation q of the shift study, in (0, 1).")
flags.DEFINE_float("shift_amplitude", 3.0, "Norm of each shift-study pattern (> 0).")
flags.DEFINE_enum("shift_act", "gelu", activations.ACTIVATIONS, "Activation of the shift study.")
flags.DEFINE_list("shift_ranges", ["0", "1", "4"], "Largest shifts r of the shift study (0: none; integers >= 0).")
cli.define_seed("data_seed", 0, "Seed of the shift-study patterns.")
cli.define_run_flags("results/theory/augmentation", resume=False, what="Where the outputs go.")
cli.register_unique("ranges", fractions.Fraction)  # the config checks the entries; 1/2 and 0.5 repeat
cli.register_subset("acts", activations.ACTIVATIONS)
cli.register_unique("basin_acts", allow_empty=True)  # none: no basins engine
cli.register_numbers("ripple_views", int, 2, min_len=2)
cli.register_numbers("shift_ranges", int, 0)
SIZES = ("n_grid", "views_per_circle", "ripple_views", "min_views", "tile", "n_init", "shift_n_init", "shift_m",
         "shift_d")


def _memory(**f) -> int:  # float64 bytes: 8 arrays of grid (or tile) x the 9 circle points x views; the shift tiles
    views, tile = max(f["--views_per_circle"], f["--ripple_views"], f["--min_views"]), f["--tile"]  # a tile's
    shift = 2 ** min(f["--shift_m"], 64) * f["--shift_d"] ** 2 * tile  # arrays have its full size (fixed shapes)
    return 64 * (9 * views * (f["--n_grid"] + tile) + shift)


def main(argv):
    del argv
    t_start = time.time()
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, SIZES), "8 float64 arrays of (n_grid + tile) x 9 points x "
                        "max(views_per_circle, ripple_views) + of tile x 2^shift_m x shift_d^2")
    cli.check_counts(FLAGS, ("max_steps",), loops=("max_steps",), formula="the engine's step counter")
    values = {f.name: FLAGS[f.name].value for f in dataclasses.fields(augmentation.AugmentationConfig)}
    values.update(ripple_views=cli.ints(FLAGS.ripple_views), shift_ranges=cli.ints(FLAGS.shift_ranges))
    try:  # the config validates every flag; its message names the flag
        cfg = augmentation.AugmentationConfig(**values)
    except ValueError as e:
        cli.fail(e)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/augmentation.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    rec = cli.run_record("scripts/augmentation.py")
    cli.log(f"ccdyn augmentation (App. B.5) -> {out}")
    record = augmentation.run(cfg, cli.log, data_path=f"{FLAGS.output_dir}/shift_data.npz")
    files.save_dataset(out / "shift_data.npz", augmentation.shift_data(cfg))

    rot_head, rot_body = augmentation.rotation_rows(record["rotation"]["per_act"])
    shift_head, shift_body = augmentation.shift_rows(record["shift"]["settings"])
    io.write_csv(out / "rotation.csv", rot_head, rot_body)
    io.write_csv(out / "shift.csv", shift_head, shift_body)
    io.atomic_write_bytes(out / "augmentation.md", augmentation.markdown(cfg, record, rec["command"]).encode())
    for name, fig in augmentation.figures(cfg, record).items():
        io.save_figure(out / name, fig)
    timings = {**record.pop("timings_s"), "total": time.time() - t_start}
    io.write_json(out / "augmentation.json", {"command": rec["command"], **record, "versions": rec["versions"],
                                              "devices": rec["devices"], "timings_s": timings})
    out = cli.finish(run)
    verdicts = record["verdicts"]
    print("\n".join([report.format_table(rot_head, rot_body), *augmentation.rotation_key(cfg), "",
                     report.format_table(shift_head, shift_body), *augmentation.shift_key(), ""]))
    print(verdicts["rotation"])
    print(verdicts["shift"])
    print(f"\nwrote {out}/augmentation.json, augmentation.md, rotation.csv, shift.csv, rotation.png, shift.png, "
          f"shift_data.npz ({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
