"""Training throughput of the 2-layer token experiment, with ratios measured in the same run.

    python benchmarks/bench_two_layer.py --output_json=results/bench_two_layer.json     # ~10 min on 2 CPU cores
    python benchmarks/bench_two_layer.py --Ms=15 --runs=3 --skip_end_to_end

Setting: the Sec. 5 shapes (K = 10, d = 20, G = 40, batch 128), InfoNCE, SGD, float32, relu, P = 3.
Reported, no timing asserted (issues #15, #16):

- backend and device;
- steady state (compile excluded, median of --repeats calls of --steps steps), in run-steps/s, at the
  bar case's shapes (below; 3 runs) and at the Sec. 5 defaults (d_out 50, no BN) for each M in --Ms
  and R in --runs, of: the engine (``ccdyn.two_layer.train``: R runs vmapped, a ``lax.scan``
  per block, gather first layer), the same engine with the dense first layer (the path before
  issue #15), and a Python loop of one jitted step per call on one run (what a PyTorch user writes);
- the engine's rate as a fraction of the same-shape GEMM rate: a scan of only the matrix products of
  a training step (forward and both backward products of the first layer, of V and of the similarity
  matrix) with the same shapes, runs and steps, timed the same way;
- the bar case of issue #15, end to end with compilation: 3 seeds x 5000 steps, P = 3, beta = 5,
  lr 2e-2, vanilla BN, d_out 20, in this process (``run_setting`` and the chance-level scores, after
  clearing JAX's caches) and as ``scripts/two_layer.py`` in a fresh process; compared with the
  authors' PyTorch code on the 2-core CPU of issue #15 (57 it/s end to end, 556 it/s model step alone);
- a large case: the trainer with --many_seeds vmapped seeds (one setting, --many_steps steps), end to
  end with compilation.
With --grid_results, the wall time of a finished grid (sum of per-setting wall_s) is added, per activation.
"""

from __future__ import annotations

import dataclasses
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from absl import app, flags

import jax
import jax.numpy as jnp
import optax

from ccdyn import activations, io, two_layer
from ccdyn.data import tokens
from ccdyn.two_layer.studies import token_grid

FLAGS = flags.FLAGS
flags.DEFINE_list("Ms", ["5", "15", "50"], "Filters per RF to time.")
flags.DEFINE_list("runs", ["1", "3", "12"], "Numbers of vmapped runs to time.")
flags.DEFINE_integer("steps", 500, "Steps per timed call.", lower_bound=1)
flags.DEFINE_integer("naive_steps", 100, "Steps of the Python loop per timed call.", lower_bound=1)
flags.DEFINE_integer("repeats", 3, "Timed calls per measurement (median).", lower_bound=1)
flags.DEFINE_integer("many_seeds", 1000, "Seeds of the large end-to-end case.", lower_bound=1)
flags.DEFINE_integer("many_steps", 200, "Steps of the large end-to-end case.", lower_bound=1)
flags.DEFINE_bool("skip_end_to_end", False, "Only the steady-state rates.")
flags.DEFINE_string("grid_results", None, "results.json of a finished scripts/two_layer.py grid.")
flags.DEFINE_string("output_json", None, "Optional JSON output path.")

P = 3
AUTHORS = {"end_to_end_it_per_s": 57.0, "model_step_it_per_s": 556.0,
           "source": "issue #15: facebookresearch/luckmatters ssl/real-dataset/bn_gen.py on a 2-core CPU"}
BAR = dict(setting=token_grid.Setting(act="relu", beta=5, n_candidates=P, bn="vanilla"), n_seeds=3, d_out=20,
           train=two_layer.TrainConfig(lr=0.02, steps=5000))
ROOT = Path(__file__).resolve().parents[1]


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


def _setup(m, r, steps, bar=False):
    """Shapes, config, keys and data; ``bar``: the bar case's d_out 20, vanilla BN and lr 2e-2."""
    spec = tokens.TokenSpec(n_candidates=P)
    net = two_layer.Net(n_rf=spec.n_positions, d=spec.n_tokens, n_filters=m, act=activations.get_activation("relu"),
                        d_out=BAR["d_out"] if bar else 50, bn=BAR["setting"].bn if bar else "none")
    cfg = dataclasses.replace(BAR["train"] if bar else two_layer.TrainConfig(), steps=steps)
    keys = jax.random.split(jax.random.PRNGKey(0), 3 * r).reshape(3, r, 2)
    return net, cfg, keys, tokens.make_tokens_batch(keys[0], spec, jnp.float32)


def engine_rate(m, r, first_layer, bar=False):
    net, cfg, keys, datas = _setup(m, r, FLAGS.steps, bar)

    def go():
        st, _ = two_layer.train(keys[1], keys[2], datas, net, cfg, block=FLAGS.steps, first_layer=first_layer)
        jax.block_until_ready(st.params)

    return r * FLAGS.steps / _median_time(go, FLAGS.repeats)


def naive_rate(m, bar=False):
    net, cfg, keys, datas = _setup(m, 1, FLAGS.naive_steps, bar)
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


def gemm_rate(m, r, bar=False):
    """Run-steps/s of only a training step's matrix products at the engine's shapes: per run and step the
    first layer (2N x d)(d x M) per RF, V (2N x KM)(KM x d_out), similarities (N x d_out)(d_out x N), each
    forward and its two backward products. Returns (rate, flops per run-step)."""
    net, cfg, keys, _ = _setup(m, r, FLAGS.steps, bar)
    n, k, d, dout = cfg.batch_size, net.n_rf, net.d, net.d_out
    shapes = [((k, 2 * n, d), (k, d, m)), ((2 * n, k * m), (k * m, dout)), ((n, dout), (dout, n))]
    ops = [(jax.random.normal(keys[0, 0], (r,) + a), jax.random.normal(keys[1, 0], (r,) + b)) for a, b in shapes]
    flops = 3 * 2 * sum(a[-2] * a[-1] * b[-1] * (a[0] if len(a) == 3 else 1) for a, b in shapes)

    def products(a, b):  # forward a b, backward g b^T and a^T g
        c = a @ b
        return jnp.sum(c) + jnp.sum(c @ jnp.swapaxes(b, -1, -2)) + jnp.sum(jnp.swapaxes(a, -1, -2) @ c)

    @jax.jit
    def run(ops):
        def one(ops):
            def body(acc, t):
                return acc + sum(products(a + t * 1e-6, b) for a, b in ops), None
            return jax.lax.scan(body, jnp.float32(0), jnp.arange(FLAGS.steps, dtype=jnp.float32))[0]
        return jax.vmap(one)(ops)

    return r * FLAGS.steps / _median_time(lambda: jax.block_until_ready(run(ops)), FLAGS.repeats), flops


def bar_in_process():
    jax.clear_caches()
    t = time.perf_counter()
    b = BAR
    res = token_grid.run_setting(b["setting"], b["train"], n_seeds=b["n_seeds"], d_out=b["d_out"])
    token_grid.init_scores(b["setting"], n_seeds=b["n_seeds"], d_out=b["d_out"])
    wall = time.perf_counter() - t
    return {"wall_s": wall, "run_iterations_per_s": b["n_seeds"] * b["train"].steps / wall,
            "chi_plus": float(res["chi_plus"].mean())}


def bar_script():
    args = ["--acts=relu", "--betas=5", f"--Ps={P}", "--bn=vanilla", "--lr=0.02", "--d_out=20", "--n_seeds=3"]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "two_layer.py"), *args, f"--output_dir={tmp}/run"],
                       check=True, capture_output=True, env={"PYTHONPATH": str(ROOT), **dict(__import__("os").environ)})
        wall = time.perf_counter() - t
    return {"command": "python scripts/two_layer.py " + " ".join(args), "wall_s": wall,
            "run_iterations_per_s": 3 * 5000 / wall}


def many_seeds():
    s = dataclasses.replace(BAR["setting"], bn="none")
    cfg = two_layer.TrainConfig(steps=FLAGS.many_steps)
    t = time.perf_counter()
    res = token_grid.run_setting(s, cfg, n_seeds=FLAGS.many_seeds, block=FLAGS.many_steps)
    wall = time.perf_counter() - t
    return {"setting": dataclasses.asdict(s), "n_seeds": FLAGS.many_seeds, "steps": FLAGS.many_steps, "wall_s": wall,
            "run_steps_per_s": FLAGS.many_seeds * FLAGS.many_steps / wall, "finite": int(res["finite"].sum())}


def grid_time(path):
    res = io.read_json(path)
    by_act = {}
    for r in res["rows"]:
        by_act[r["act"]] = by_act.get(r["act"], 0.0) + r["wall_s"]
    return {"path": str(path), "n_settings": len(res["rows"]), "n_seeds": res["config"]["n_seeds"],
            "steps": res["config"]["train"]["steps"], "wall_s_by_act": by_act, "wall_s": sum(by_act.values())}


def main(argv):
    del argv
    dev = jax.devices()[0]
    out = {"backend": jax.default_backend(), "device": str(dev), "device_kind": dev.device_kind,
           "jax": jax.__version__, "P": P, "steps": FLAGS.steps, "repeats": FLAGS.repeats, "authors": AUTHORS,
           "rows": []}
    log(f"backend {out['backend']}, device {out['device']} ({out['device_kind']})")
    print(f"{'case':>5} {'M':>4} {'runs':>4} {'engine':>8} {'dense':>8} {'naive':>8} {'GEMM-only':>10} "
          f"{'eng/dense':>9} {'eng/naive':>9} {'eng/GEMM':>8} {'GFLOP/s':>8}")
    cases = [(BAR["setting"].beta * P, [BAR["n_seeds"]], True)] + [(int(m), [int(r) for r in FLAGS.runs], False)
                                                                  for m in FLAGS.Ms]
    for m, runs, bar in cases:
        naive = naive_rate(m, bar)
        for r in runs:
            eng, dense = engine_rate(m, r, "gather", bar), engine_rate(m, r, "dense", bar)
            gemm, flops = gemm_rate(m, r, bar)
            row = {"case": "bar" if bar else "sec5", "M": m, "runs": r, "engine_run_steps_per_s": eng,
                   "dense_first_layer_run_steps_per_s": dense, "naive_steps_per_s": naive,
                   "gemm_only_run_steps_per_s": gemm, "gemm_flops_per_run_step": flops,
                   "engine_vs_dense": eng / dense, "engine_vs_naive": eng / naive,
                   "engine_fraction_of_gemm": eng / gemm, "engine_gemm_gflops": eng * flops / 1e9}
            if bar:
                row["engine_vs_authors_model_step"] = eng / AUTHORS["model_step_it_per_s"]
            out["rows"].append(row)
            print(f"{row['case']:>5} {m:>4} {r:>4} {eng:>8.0f} {dense:>8.0f} {naive:>8.0f} {gemm:>10.0f} "
                  f"{eng / dense:>9.2f} {eng / naive:>9.2f} {eng / gemm:>8.3f} {eng * flops / 1e9:>8.2f}", flush=True)
    if not FLAGS.skip_end_to_end:
        bar = {"in_process": bar_in_process(), "script": bar_script()}
        for k in ("in_process", "script"):
            bar[k]["vs_authors_end_to_end"] = bar[k]["run_iterations_per_s"] / AUTHORS["end_to_end_it_per_s"]
        out["bar_case"] = bar
        print(f"\nbar case (3 seeds x 5000 steps, P=3, beta=5, lr 2e-2, vanilla BN, d_out 20), compile included:")
        for k, v in bar.items():
            print(f"  {k:>10}: {v['wall_s']:.1f} s, {v['run_iterations_per_s']:.0f} run-iterations/s "
                  f"= {v['vs_authors_end_to_end']:.1f}x the authors' end to end (goal >= 20x = 1140)")
        out["many_seeds"] = many = many_seeds()
        print(f"\n{many['n_seeds']} seeds x {many['steps']} steps (M = {BAR['setting'].beta * P}), compile included: "
              f"{many['wall_s']:.1f} s, {many['run_steps_per_s']:.0f} run-steps/s")
    if FLAGS.grid_results:
        out["grid"] = g = grid_time(FLAGS.grid_results)
        print(f"\ngrid {g['path']}: {g['n_settings']} settings x {g['n_seeds']} seeds x {g['steps']} steps: "
              f"{g['wall_s'] / 60:.1f} min")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, out)
        log(f"wrote {FLAGS.output_json}")


if __name__ == "__main__":
    app.run(main)
