"""Training throughput of the 2-layer token experiment (steps per second) against a naive loop.

    python benchmarks/bench_two_layer.py                        # a few minutes on 2 CPU cores
    python benchmarks/bench_two_layer.py --Ms=15 --runs=1,3 --repeats=3
    python benchmarks/bench_two_layer.py --grid_results=results/two_layer/fig4_infonce/results.json \\
        --output_json=results/bench_two_layer.json

Setting: the Sec. 5 defaults (K = 10, d = 20, G = 40, batch 128, d_out = 50, InfoNCE, SGD), relu,
P = 5, M filters per RF for each --Ms, float32. For each M and each number of runs R in --runs:

- engine: ``ccdyn.two_layer.train`` with R runs vmapped in one jit and ``--steps`` steps in one
  ``lax.scan`` block (compiled once, then timed ``--repeats`` times; the median is reported);
- naive: the per-step loop a PyTorch user would write, one jitted step per run and per step driven
  from Python (same loss, optimizer and minibatches), on one run; compared per run-step.

Reported: run-steps/s of both and their ratio. With --grid_results, the wall time of a finished grid
(sum of per-setting wall_s, compilation included) is added, split by activation. No timing is asserted.
"""

from __future__ import annotations

import statistics
import sys
import time

from absl import app, flags

import jax
import jax.numpy as jnp
import optax

from ccdyn import activations, io, two_layer
from ccdyn.data import tokens

FLAGS = flags.FLAGS
flags.DEFINE_list("Ms", ["5", "15", "50"], "Filters per RF to time.")
flags.DEFINE_list("runs", ["1", "3", "12"], "Numbers of vmapped runs to time.")
flags.DEFINE_integer("steps", 500, "Steps per timed call.", lower_bound=1)
flags.DEFINE_integer("naive_steps", 100, "Steps of the naive Python loop per timed call.", lower_bound=1)
flags.DEFINE_integer("repeats", 3, "Timed calls per measurement (median).", lower_bound=1)
flags.DEFINE_string("grid_results", None, "results.json of a finished scripts/two_layer.py grid.")
flags.DEFINE_string("output_json", None, "Optional JSON output path.")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _median_time(fn, repeats):
    fn()  # compile
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _setup(m, r, steps):
    spec = tokens.TokenSpec(n_candidates=5)
    net = two_layer.Net(n_rf=spec.n_positions, d=spec.n_tokens, n_filters=m, act=activations.get_activation("relu"))
    cfg = two_layer.TrainConfig(steps=steps)
    keys = jax.random.split(jax.random.PRNGKey(0), 3 * r).reshape(3, r, 2)
    datas = jax.vmap(lambda k: tokens.make_tokens(k, spec, jnp.float32))(keys[0])
    return net, cfg, keys, datas


def engine_rate(m, r):
    net, cfg, keys, datas = _setup(m, r, FLAGS.steps)

    def go():
        st, _ = two_layer.train(keys[1], keys[2], datas, net, cfg, block=FLAGS.steps)
        jax.block_until_ready(st.params)

    return r * FLAGS.steps / _median_time(go, FLAGS.repeats)


def naive_rate(m):
    net, cfg, keys, datas = _setup(m, 1, FLAGS.naive_steps)
    data = jax.tree_util.tree_map(lambda a: a[0], datas)
    opt = two_layer.make_optimizer(cfg)

    @jax.jit
    def step(params, opt_state, t):
        x1, x2 = tokens.sample_views(jax.random.fold_in(keys[2, 0], t), data, cfg.batch_size)
        grads = jax.grad(two_layer.loss)(params, x1, x2, net, cfg)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    def go():
        params = two_layer.init_params(keys[1, 0], net, jnp.float32)
        opt_state = opt.init(params)
        for t in range(FLAGS.naive_steps):
            params, opt_state = step(params, opt_state, t)
        jax.block_until_ready(params)

    return FLAGS.naive_steps / _median_time(go, FLAGS.repeats)


def grid_time(path):
    rows = io.read_json(path)["rows"]
    by_act = {}
    for r in rows:
        by_act[r["act"]] = by_act.get(r["act"], 0.0) + r["wall_s"]
    homogeneous = sum(v for a, v in by_act.items() if a in activations.HOMOGENEOUS)
    return {"path": str(path), "n_settings": len(rows), "wall_s_by_act": by_act,
            "wall_s_homogeneous_4": homogeneous, "steps": None}


def main(argv):
    del argv
    results = {"device": str(jax.devices()[0]), "steps": FLAGS.steps, "repeats": FLAGS.repeats, "rows": []}
    print(f"{'M':>4} {'runs':>4} {'engine run-steps/s':>19} {'naive steps/s':>14} {'ratio':>6}")
    for m in (int(v) for v in FLAGS.Ms):
        naive = naive_rate(m)
        for r in (int(v) for v in FLAGS.runs):
            eng = engine_rate(m, r)
            results["rows"].append({"M": m, "runs": r, "engine_run_steps_per_s": eng, "naive_steps_per_s": naive,
                                    "ratio": eng / naive})
            print(f"{m:>4} {r:>4} {eng:>19.0f} {naive:>14.0f} {eng / naive:>6.1f}", flush=True)
    if FLAGS.grid_results:
        g = grid_time(FLAGS.grid_results)
        cfg = io.read_json(FLAGS.grid_results)["config"]
        g["steps"] = cfg["train"]["steps"]
        results["grid"] = g
        print(f"\ngrid {g['path']}: {g['n_settings']} settings x {cfg['n_seeds']} seeds x {g['steps']} steps")
        for a, v in g["wall_s_by_act"].items():
            print(f"  {a:>10}: {v / 60:6.1f} min")
        print(f"  4 homogeneous activations: {g['wall_s_homogeneous_4'] / 60:.1f} min (target <= 20 min)")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, results)
        log(f"wrote {FLAGS.output_json}")


if __name__ == "__main__":
    app.run(main)
