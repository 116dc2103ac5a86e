"""Global modulation (Thm. 5-6, Fig. 7, Eq. 155) and BatchNorm across RFs (Cor. 3), checked numerically.

    python scripts/modulation.py          # -> results/theory/modulation (about a minute on 2 CPU cores)

Writes into --output_dir:
  eq15.json / eq15.md      max |Eq. 15 - Lemma 4| over random conditionally independent populations
                           (relu, leaky_relu, linear; without and with BatchNorm, Cor. 3 / Lemma 6), x64
  fig7.png, fig7.json      y' = (y + b) y: closed form (Eq. 147) vs RK4, blow-up times t* (Eq. 150)
  eq155.md / eq155.csv     P[E_l] of Eq. 155 vs Monte Carlo (--n_mc draws, 95% Wilson intervals)
  thm6.md / thm6.json      the flow of A(w) = sum_l (u_l^T w + b_l) u_l u_l^T from --n_mc random unit
                           starts: share of starts that reach u_0 when b_0 = b + c (Thm. 6), and how
                           often Thm. 6's predictor (first blow-up time) names the attractor
  cor3.md / cor3.json      RFs of input scales --scales: d_k and d_k^bn, each filter's initial speed and
                           the angle it has turned after 2e3, 2e4, 2e5 Euler steps of the Eq. 15 flow
                           without and with BatchNorm (Cor. 3); the step size is set by the fastest RF
"""

from __future__ import annotations

import sys

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, io, plotting, report, stats  # noqa: E402
from ccdyn.two_layer import modulation  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_mc", 100_000, "Monte Carlo draws / random starts (>= 1000).", lower_bound=1000)
flags.DEFINE_integer("d", 10, "Dimension of Eq. 155 and of the Thm. 6 flow (>= 2).", lower_bound=2)
flags.DEFINE_float("b", 0.5, "b_l of the unmodulated components in the Thm. 6 flow (> 0).")
flags.DEFINE_list("c", ["0", "0.1", "0.2", "0.3", "0.5", "0.8"], "Modulations c >= 0 of u_0 (Thm. 6).")
flags.DEFINE_list("eps", ["-1.5", "-0.5", "-0.2", "0", "0.2", "0.5", "1", "1.5"], "Modulation factors of Eq. 155.")
flags.DEFINE_list("eps_dims", ["5", "10", "20"], "Dimensions d of the Eq. 155 table (>= 2).")
flags.DEFINE_list("scales", ["0.1", "1", "10"], "Input scales of the RFs in the BatchNorm study (> 0).")
flags.DEFINE_integer("seed", 0, "Seed.")
flags.DEFINE_string("output_dir", "results/theory/modulation", "Where the outputs go.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")
flags.register_validator("b", lambda v: v > 0, "--b must be > 0")
flags.register_validator("c", lambda v: all(float(x) >= 0 for x in v), "--c must be numbers >= 0")
flags.register_validator("scales", lambda v: len(v) >= 2 and all(float(x) > 0 for x in v),
                         "--scales must be at least two numbers > 0")
flags.register_validator("eps_dims", lambda v: all(int(x) >= 2 for x in v), "--eps_dims must be integers >= 2")


def eq15_check(key):
    rows = []
    for i, (k, n, d) in enumerate([(3, 3, 4), (4, 3, 5), (2, 6, 3), (5, 2, 4)]):
        pop = modulation.modulated_population(jax.random.fold_in(key, i), k, d, n, p1=0.3)
        pop = pop.replace(x=pop.x * jnp.geomspace(0.2, 5.0, k)[:, None, None])
        w = jax.random.normal(jax.random.fold_in(key, 100 + i), (k, d))
        for name in ("relu", "leaky_relu", "linear"):
            act = activations.get_activation(name)
            for bn in (False, True):
                if bn and np.any(np.asarray(modulation.rf_moments(pop, w, act)["sigma"]) == 0):
                    continue
                v15, v4 = modulation.eq15_velocity(pop, w, act, bn), modulation.lemma4_velocity(pop, w, act, bn)
                err = float(jnp.abs(v15 - v4).max())
                rows.append({"K": k, "n_per_rf": n, "d": d, "joint_points": 2 * n**k, "act": name, "batch_norm": bn,
                             "max_abs_diff": err, "max_abs_velocity": float(jnp.abs(v4).max()),
                             "relative": err / float(jnp.abs(v4).max())})
    return rows


def fig7():
    b, y0s = 1.0, [-0.5, -0.2, 0.2, 0.5, 1.0]
    curves, errors = {}, {}
    for y0 in y0s:
        t_star = float(modulation.blowup_time(y0, b))
        t_end = 4.0 if not np.isfinite(t_star) else 0.97 * t_star
        t = np.linspace(0, t_end, 2001)
        num = np.asarray(modulation.integrate_1d(y0, b, t_end, 20000))[::10]
        exact = np.asarray(modulation.closed_form_1d(y0, b, t))
        curves[y0] = {"t": t, "rk4": num, "closed_form": exact, "t_star": t_star}
        errors[str(y0)] = {"t_star": t_star, "max_rel_err": float(np.max(np.abs(num - exact) / np.maximum(1, np.abs(exact))))}
    y_grid = np.geomspace(0.01, 3, 200)
    tstar = {bb: np.asarray(modulation.blowup_time(y_grid, bb)) for bb in (0.5, 1.0, 2.0)}
    return curves, errors, y_grid, tstar


def eq155(key):
    rows = []
    for d in (int(x) for x in FLAGS.eps_dims):
        for eps in (float(x) for x in FLAGS.eps):
            count = modulation.p_converge_mc(jax.random.fold_in(key, d * 1000 + int(100 * eps + 500)), eps, d, FLAGS.n_mc)
            lo, hi = stats.wilson_interval(count, FLAGS.n_mc)
            theory = modulation.p_converge(eps, d)
            rows.append({"d": d, "eps": eps, "theory": theory, "monte_carlo": count / FLAGS.n_mc, "ci95": [lo, hi],
                         "inside": bool(lo <= theory <= hi)})
    return rows


def thm6(key):
    d, n = FLAGS.d, FLAGS.n_mc
    y0 = jax.random.normal(key, (n, d))
    y0 = y0 / jnp.linalg.norm(y0, axis=1, keepdims=True)
    run = jax.jit(lambda y, b: modulation.structured_flow(y, b, n_steps=3000))
    rows = []
    for c in (float(x) for x in FLAGS.c):
        b = jnp.full((d,), FLAGS.b).at[0].add(c)
        y = np.asarray(run(y0, b))
        on_pattern = y.max(axis=1) > 1 - 1e-6
        negative = np.all(y < 0, axis=1)
        winner = np.where(on_pattern, y.argmax(axis=1), -1)
        pred = np.asarray(modulation.predicted_winner(y0, b))
        to_u0 = int(np.sum(winner == 0))
        rows.append({"c": c, "b0": FLAGS.b + c, "to_u0": to_u0 / n, "to_u0_ci95": stats.wilson_interval(to_u0, n),
                     "to_other_u": float(np.mean(on_pattern & (winner != 0))), "negative_attractor": float(negative.mean()),
                     "unsettled": float(np.mean(~on_pattern & ~negative)),
                     "predictor_agrees": float(np.mean(pred[on_pattern] == winner[on_pattern]))})
    return rows


CHECKPOINTS = (2_000, 20_000, 200_000)


def cor3(key):
    scales = np.array([float(x) for x in FLAGS.scales])
    k, n, d = len(scales), 4, 3
    pop = modulation.modulated_population(key, k, d, n, p1=0.4)
    pop = pop.replace(x=pop.x * jnp.asarray(scales)[:, None, None])
    act = activations.get_activation("leaky_relu")
    w0 = jax.random.normal(jax.random.fold_in(key, 1), (k, d))
    out = {"scales": scales, "act": act.name}
    for bn in (False, True):
        m = modulation.rf_moments(pop, w0, act, bn)
        eta = 0.1 / float(jnp.max(jnp.linalg.norm(m["A"], ord=2, axis=(1, 2))))  # time unit of the fastest RF
        n_steps, every = 200_000, 100
        record, _ = modulation.eq15_flow(pop, w0, act, batch_norm=bn, eta=eta, n_steps=n_steps, record_every=every)
        speed0 = np.asarray(jnp.linalg.norm(modulation.eq15_velocity(pop, w0, act, bn), axis=1))
        wn0 = w0 / jnp.linalg.norm(w0, axis=1, keepdims=True)
        angle = np.degrees(np.arccos(np.clip(np.asarray(jnp.einsum("tkd,kd->tk", record, wn0)), -1, 1)))
        out["bn" if bn else "none"] = {"d_k": np.asarray(m["d"]), "eta": eta, "initial_speed": speed0,
                                       "angle_moved_deg": {t: angle[t // every - 1] for t in CHECKPOINTS},
                                       "n_steps": n_steps}
    return out


def main(argv):
    del argv
    try:
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except FileExistsError as e:
        sys.exit(f"error: {e}")
    key = jax.random.PRNGKey(FLAGS.seed)
    print("Thm. 5: Eq. 15 vs Lemma 4 on joint populations ...", flush=True)
    rows = eq15_check(jax.random.fold_in(key, 1))
    io.write_json(out / "eq15.json", rows)
    md = report.markdown_table(["K", "points/RF", "d", "joint points", "act", "BatchNorm", "max |Eq.15 − Lemma 4|",
                                "max |velocity|"],
                               [[r["K"], r["n_per_rf"], r["d"], r["joint_points"], r["act"], r["batch_norm"],
                                 f"{r['max_abs_diff']:.1e}", f"{r['max_abs_velocity']:.3g}"] for r in rows])
    io.atomic_write_bytes(out / "eq15.md", (md + "\n").encode())
    print(f"  worst relative difference {max(r['relative'] for r in rows):.1e} over {len(rows)} cases")

    print("Fig. 7: closed form vs RK4 ...", flush=True)
    curves, errors, y_grid, tstar = fig7()
    io.write_json(out / "fig7.json", {"b": 1.0, "per_y0": errors})
    io.save_figure(out / "fig7.png", plotting.blowup_figure(curves, y_grid, tstar))
    print(f"  worst relative error {max(e['max_rel_err'] for e in errors.values()):.1e}")

    print(f"Eq. 155 vs Monte Carlo ({FLAGS.n_mc} draws per cell) ...", flush=True)
    rows = eq155(jax.random.fold_in(key, 2))
    io.write_csv(out / "eq155.csv", ["d", "eps", "theory", "monte_carlo", "ci95_lo", "ci95_hi", "inside"],
                 [[r["d"], r["eps"], f"{r['theory']:.6f}", f"{r['monte_carlo']:.6f}", f"{r['ci95'][0]:.6f}",
                   f"{r['ci95'][1]:.6f}", r["inside"]] for r in rows])
    md = report.markdown_table(["d", "ε", "Eq. 155", "Monte Carlo", "95% interval", "inside"],
                               [[r["d"], r["eps"], f"{r['theory']:.4f}", f"{r['monte_carlo']:.4f}",
                                 f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]", r["inside"]] for r in rows])
    io.atomic_write_bytes(out / "eq155.md", (md + "\n").encode())
    print(f"  {sum(r['inside'] for r in rows)}/{len(rows)} theory values inside the 95% interval")

    print(f"Thm. 6: flow from {FLAGS.n_mc} starts per c ...", flush=True)
    rows = thm6(jax.random.fold_in(key, 3))
    io.write_json(out / "thm6.json", {"d": FLAGS.d, "b": FLAGS.b, "n": FLAGS.n_mc, "rows": rows})
    md = report.markdown_table(["c", "b₀", "→ u₀", "95% interval", "→ other u_l", "negative orthant", "unsettled",
                                "t* predictor right"],
                               [[r["c"], r["b0"], f"{r['to_u0']:.4f}", f"[{r['to_u0_ci95'][0]:.4f}, "
                                 f"{r['to_u0_ci95'][1]:.4f}]", f"{r['to_other_u']:.4f}",
                                 f"{r['negative_attractor']:.4f}", f"{r['unsettled']:.4f}",
                                 f"{r['predictor_agrees']:.3f}"] for r in rows])
    io.atomic_write_bytes(out / "thm6.md", (md + "\n").encode())
    print(md)

    print("Cor. 3: BatchNorm across RFs of different scales ...", flush=True)
    c3 = cor3(jax.random.fold_in(key, 4))
    io.write_json(out / "cor3.json", c3)
    md = report.markdown_table(
        ["RF scale", "d_k", "d_k^bn", "initial speed (no BN)", "initial speed (BN)"]
        + [f"angle moved by step {t} ({bn})" for bn in ("no BN", "BN") for t in CHECKPOINTS],
        [[s, f"{c3['none']['d_k'][j]:.3g}", f"{c3['bn']['d_k'][j]:.3g}", f"{c3['none']['initial_speed'][j]:.2e}",
          f"{c3['bn']['initial_speed'][j]:.2e}"]
         + [f"{c3[bn]['angle_moved_deg'][t][j]:.1f}°" for bn in ("none", "bn") for t in CHECKPOINTS]
         for j, s in enumerate(c3["scales"])])
    io.atomic_write_bytes(out / "cor3.md", (md + "\n").encode())
    print(md)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    app.run(main)
