"""Cost of the saddle search (docs/saddles.md) against one basins run of the same data, in one process.

    python benchmarks/bench_saddles.py --output_json=results/bench_saddles.json
    python benchmarks/bench_saddles.py --pairs=all --output_json=results/bench_saddles_all.json

Data: the basins default (latent summation, 2^10 support points, d = 10), relu, uniform alpha. First one
basins run (``ccdyn.one_layer.basins.run``: ``n_init`` inits, power iteration in float32, clustering,
float64 refinement and certificates), then the saddle study on its optima
(``ccdyn.one_layer.studies.saddles.run``: the study's default pairs, those whose basins touch, with their
probes timed as a stage, or every pair; float64, string + refinement + certificates + both sides followed
to their optima). Wall times include compilation, as a user sees them. Reported:
both wall times, the study's per-stage times, pairs per second, image-steps per second of the string
(pairs x images x steps / string time) and the ratio of the cost per pair to the basins run. No timing is
asserted.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

from ccdyn import io  # noqa: E402
from ccdyn.one_layer import basins  # noqa: E402
from ccdyn.one_layer.studies import saddles  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", 10000, "Inits of the basins run.", lower_bound=1, upper_bound=10**8)
flags.DEFINE_integer("n_steps", saddles.SaddlesConfig.n_steps, "String steps.", lower_bound=2,
                     upper_bound=saddles.MAX_STEPS)
flags.DEFINE_integer("n_images", saddles.SaddlesConfig.n_images, "Images per path.", lower_bound=3,
                     upper_bound=saddles.MAX_IMAGES)
flags.DEFINE_enum("pairs", saddles.SaddlesConfig.pairs, ["all", "touching"], "The study's pairs: the touching "
                  "ones (the study's default; their probes timed as a stage) or every pair.")
flags.DEFINE_string("output_json", None, "Where to write the numbers (optional).")


def main(argv):
    del argv
    cfg = basins.BasinsConfig(n_init=FLAGS.n_init)
    t0 = time.time()
    out = basins.run(cfg)
    t_basins = time.time() - t0
    s = basins.summary(out["analysis"], out["result"], config=dataclasses.asdict(cfg),
                       record={"command": "", "versions": {}, "devices": [], "num_processes": 1},
                       timings_s={**out["timings_s"], "total": t_basins})
    scfg = saddles.SaddlesConfig(n_steps=FLAGS.n_steps, n_images=FLAGS.n_images, pairs=FLAGS.pairs)
    t1 = time.time()
    rec = saddles.run(scfg, s, log=lambda line: print(line, file=sys.stderr))
    t_saddles = time.time() - t1
    n_pairs = rec["n_pairs"]
    res = {"command": " ".join(["python", *sys.argv]), "pairs": scfg.pairs, "backend": jax.default_backend(), "device_kind": jax.devices()[0].device_kind,
           "n_init": FLAGS.n_init, "n_optima": len(rec["optima"]), "n_pairs": n_pairs, "n_images": scfg.n_images,
           "n_steps": scfg.n_steps, "basins_wall_s": t_basins, "saddles_wall_s": t_saddles,
           "saddles_stages_s": rec["timings_s"], "pairs_per_s": n_pairs / t_saddles,
           "n_searches": rec["n_searches"],
           "string_image_steps_per_s": rec["n_searches"] * scfg.n_images * scfg.n_steps / rec["timings_s"]["string"],
           "per_pair_over_basins_run": t_saddles / n_pairs / t_basins, "n_certified": rec["n_certified"]}
    for k, v in res.items():
        print(f"{k}: {v}")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, res)


if __name__ == "__main__":
    app.run(main)
