"""Whose basins does ``--method=auto`` have? Its power phase against the flow's, on the default data and user sets.

    python benchmarks/bench_auto_basins.py --output_json=results/bench_auto_basins.json   # ~12 min on 2 cores

For each set the sliding flow (``--method=flow``, the reference: its basins are the flow's, docs/flow.md) and
three power phases of auto (``ccdyn.one_layer.methods.auto.power_phase``, each plugged into the engine as a
method value; the flow phase and second pass are auto's own) run the same inits (one chunk, float32):

- ``unshifted``: power iteration's own steps (auto before issue 36's tenth round; ``scale=0``);
- ``always``: every power step shifted by lambda_M, the bound on lambda_max(A(w)) (an Euler step of the flow
  of length 1 / lambda_M; ``hold=False``);
- ``auto``: the method: shifted while the activation pattern changes, power iteration's own steps once it has
  held for 8 steps.

Per method: ``same_init`` the share of inits whose endpoint lies within ``--tol`` of the flow's endpoint from the
same init (both converged); ``tv`` the total-variation distance between its basin fractions and the flow's
(each endpoint assigned to the nearest centre of the flow's endpoint clusters, ``basins.cluster`` at ``--tol``,
within 2 ``--tol``; the rest count as
"elsewhere"); ``reached`` the flow's clusters holding >= 1% of the inits that get at least one init;
``min_ratio`` the smallest ratio of its fraction to the flow's among those; steps per init and the wall time
(compilation included; methods share the data's programs, so compare steps, not seconds).
"""

from __future__ import annotations

import time

import jax
from absl import app, flags

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, io, pairwise  # noqa: E402
from ccdyn.data import user_sets  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import basins, engine, methods  # noqa: E402
from ccdyn.one_layer.methods import auto  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("sets", ["default", "unit30", "mixture5", "cloud3", "mixture6_leaky", "mixture5_d12", "cloud9",
                           "mixture8", "cloud16", "patches", "digit_patches", "digits017"],
                  "The default data (default) and user sets (ccdyn.data.user_sets.SETS).")
flags.DEFINE_integer("n_init", 2000, "Inits per set and method.", lower_bound=1)
flags.DEFINE_float("tol", 1e-2, "Endpoints closer than this are one optimum.", lower_bound=0)
flags.DEFINE_string("output_json", None, "Where to write the rows.")

VARIANTS = {"unshifted": (0.0, True), "always": (1.0, False), "auto": (1.0, True)}
for _name, (_scale, _hold) in VARIANTS.items():  # each a method value, plugged in by name
    methods.REGISTRY[f"bench_{_name}"] = (lambda m: lambda act, dyn: m)(auto.AUTO._replace(
        step=auto.power_phase(_scale, _hold)))


def load(name: str):
    if name == "default":
        return build_dataset(DataSpec(), jnp.float64), "relu"
    return user_sets.dataset(name, jnp.float64), user_sets.ACTIVATION[name]


def run(ds, act, method: str):
    runner = engine.ChunkRunner(ds, act, pairwise.get_pairwise("uniform"), engine.Dynamics(method=method), tile=512)
    t0 = time.perf_counter()
    out = runner.run(jax.random.PRNGKey(0), 0, FLAGS.n_init, jnp.float32)
    return out, time.perf_counter() - t0


def compare(out, ref, centres) -> dict:
    conv = lambda o: o["status"] == int(engine.Status.CONVERGED)  # noqa: E731
    def fractions(o):
        dist = np.linalg.norm(o["w"][:, None, :] - centres[None], axis=2)
        label = np.where(conv(o) & (dist.min(axis=1) < 2 * FLAGS.tol), dist.argmin(axis=1), -1)
        return np.array([np.mean(label == i) for i in range(len(centres))])
    q, p = fractions(out), fractions(ref)
    big = p >= 0.01
    same = conv(out) & conv(ref) & (np.linalg.norm(out["w"] - ref["w"], axis=1) < FLAGS.tol)
    return {"same_init": float(np.mean(same)), "tv": float(0.5 * (np.abs(q - p).sum() + abs(q.sum() - p.sum()))),
            "reached": f"{int(np.sum(big & (q > 0)))}/{int(big.sum())}", "min_ratio": float(np.min(q[big] / p[big])),
            "converged": float(np.mean(conv(out))), "mean_steps": float(np.mean(out["steps"])),
            "median_steps": float(np.median(out["steps"]))}


def main(argv):
    del argv
    rows = []
    for name in FLAGS.sets:
        ds64, act_name = load(name)
        act, ds = activations.get_activation(act_name), ds64.astype(jnp.float32)
        ref, wall = run(ds, act, "flow")
        centres = basins.cluster(np.asarray(ref["w"][ref["status"] == int(engine.Status.CONVERGED)], np.float64),
                                 FLAGS.tol)[1]  # the basins analysis' greedy clusters of the flow's endpoints
        rows.append({"set": name, "act": act_name, "method": "flow", "wall_s": wall, "lambda_M":
                     float(auto.field_bound(ds64)), **compare(ref, ref, centres)})
        for v in VARIANTS:
            out, wall = run(ds, act, f"bench_{v}")
            rows.append({"set": name, "act": act_name, "method": v, "wall_s": wall, **compare(out, ref, centres)})
        for r in rows[-4:]:
            print(f"{name:15s} {r['method']:9s} same_init {r['same_init']:.4f} tv {r['tv']:.4f} "
                  f"reached {r['reached']:5s} min_ratio {r['min_ratio']:.2f} converged {r['converged']:.4f} steps {r['mean_steps']:6.1f} "
                  f"(median {r['median_steps']:.0f}) {r['wall_s']:.1f} s", flush=True)
    print("key: same_init: share of inits ending within --tol of the flow's endpoint from the same init; tv: total "
          "variation between its basin fractions and the flow's; reached: the flow's >= 1% optima that get an init; "
          "min_ratio: the smallest fraction / the flow's among them; steps: per init (power + flow phases)")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, {"n_init": FLAGS.n_init, "tol": FLAGS.tol, "devices": [str(d) for d in
                      jax.devices()], "variants": {k: {"scale": s, "hold": h} for k, (s, h) in VARIANTS.items()},
                      "rows": rows})


if __name__ == "__main__":
    app.run(main)
