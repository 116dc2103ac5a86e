"""Thm. 3 made measurable: irregularity omega (Def. 4) on the ball B_gamma around a start w(0), and
power iteration (Eq. PI) from that start, on latent summation models whose basis is only nearly
orthogonal (the setting of Fig. 1 right).

    python scripts/irregularity.py                    # eps in {0, 0.05, 0.1, 0.2} -> results/theory/thm3
    python scripts/irregularity.py --ortho_eps=0.1 --angles_deg=0,5 --n_patterns=3 --output_dir=/tmp/t3

For every ||U^T U - I||_2 = eps, pattern u_m (m < --n_patterns) and start angle a, w(0) is u_m turned
by a toward a random tangent direction. For each gamma of --gammas (ascending) the script samples
B_gamma = {w : w^T w(0) >= (c0 - c_gamma)/(1 - c_gamma)}, estimates the Lipschitz constant L of
A(w) and the eigenvector constant kappa (Lemma 9) on the samples, and evaluates
omega = mu + nu (Eq. 10) there; the smallest gamma with sup omega <= gamma certifies the start
(Eq. 11). Power iteration is then run from w(0) and Lemma 11's claims are checked: w(t) stays in
B_gamma, c_t increases, 1 - c_t <= gamma^t (1 - c0), and w(t) converges.

Writes thm3.json (every start, with the command), starts.csv, summary.md/.csv, and prints the summary.
"""

from __future__ import annotations

import functools
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn import activations, data, io, one_layer, pairwise, report  # noqa: E402
from ccdyn.one_layer import irregularity  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("d", 10, "Input dimension (>= m).", lower_bound=1)
flags.DEFINE_integer("m", 10, "Number of patterns M (<= 16: exact population).", lower_bound=1)
flags.DEFINE_float("q", 0.2, "q_m of every latent, in (0, 1).")
flags.DEFINE_list("ortho_eps", ["0", "0.05", "0.1", "0.2"], "Values of ||U^T U - I||_2, each in [0, 1).")
flags.DEFINE_list("angles_deg", ["0", "2", "5", "10"], "Angles (degrees, in [0, 90)) between w(0) and u_m.")
flags.DEFINE_integer("n_patterns", 5, "Start near u_0 .. u_{n-1} (<= m).", lower_bound=1)
flags.DEFINE_list("gammas", [f"{g:.1f}" for g in np.arange(0.1, 1.0, 0.1)], "Candidate gammas, in (0, 1).")
flags.DEFINE_integer("n_samples", 64, "Sample points of each B_gamma.", lower_bound=4)
flags.DEFINE_integer("n_steps", 200, "Power-iteration steps.", lower_bound=1)
flags.DEFINE_enum("act", "relu", list(activations.HOMOGENEOUS), "Homogeneous activation.")
flags.DEFINE_integer("data_seed", 0, "Seed of the bases and of the start directions.")
flags.DEFINE_string("output_dir", "results/theory/thm3", "Where the JSON and tables go.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")


def _numbers(values, lo, hi):
    try:
        v = [float(x) for x in values]
    except ValueError:
        return None
    return v if v and all(lo <= x < hi for x in v) else None


flags.register_validator("ortho_eps", lambda v: _numbers(v, 0, 1) is not None,
                         "--ortho_eps must be a comma-separated list of numbers in [0, 1)")
flags.register_validator("angles_deg", lambda v: _numbers(v, 0, 90) is not None,
                         "--angles_deg must be a comma-separated list of numbers in [0, 90)")
flags.register_validator("gammas", lambda v: _numbers(v, 1e-12, 1) is not None,
                         "--gammas must be a comma-separated list of numbers in (0, 1)")
flags.register_validator("q", lambda v: 0 < v < 1, "--q must lie in (0, 1)")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"] and f["m"] <= data.MAX_EXACT_M,
                                     f"--m must be <= --d and <= {data.MAX_EXACT_M} (exact population)")
flags.register_multi_flags_validator(["n_patterns", "m"], lambda f: f["n_patterns"] <= f["m"],
                                     "--n_patterns must be <= --m")

START_COLUMNS = ("ortho_eps", "pattern", "angle_deg", "c0", "gamma", "cap_deg", "sup_omega", "L", "kappa",
                 "stays_in_ball", "c_monotone", "rate_holds", "converged", "steps", "cos_end_u_m")
SUMMARY_COLUMNS = ("ortho_eps", "angle_deg", "starts", "certified", "certified_and_all_claims_hold",
                   "converged", "uncertified_but_converged", "median_c0")


def _start(u_m, angle_deg, rng):
    w = u_m / np.linalg.norm(u_m)
    t = rng.standard_normal(w.size)
    t -= (t @ w) * w
    a = np.radians(angle_deg)
    return np.cos(a) * w + np.sin(a) * t / np.linalg.norm(t)


def main(argv):
    del argv
    t0 = time.time()
    try:
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except FileExistsError as e:
        sys.exit(f"error: {e}")
    act, pw = activations.get_activation(FLAGS.act), pairwise.get_pairwise("uniform")
    gammas = _numbers(FLAGS.gammas, 1e-12, 1)
    starts, table, summary = [], [], []
    for eps in _numbers(FLAGS.ortho_eps, 0, 1):
        u = data.near_orthogonal_basis(jax.random.PRNGKey(FLAGS.data_seed), FLAGS.d, FLAGS.m, eps)
        ds = data.latent_summation(u, FLAGS.q)
        a_fn = lambda w, ds=ds: one_layer.a_matrix(ds, act, w, pw)
        batched = functools.partial(one_layer.a_matrices, ds, act, pairwise=pw)  # one compile per eps
        rng = np.random.default_rng(FLAGS.data_seed)
        for ang in _numbers(FLAGS.angles_deg, 0, 90):
            rows = []
            for m in range(FLAGS.n_patterns):
                res = irregularity.theorem3_check(a_fn, _start(u[:, m], ang, rng), gammas,
                                                  n_samples=FLAGS.n_samples, n_steps=FLAGS.n_steps,
                                                  seed=FLAGS.data_seed + m, batched=batched)
                cert = next((g for g in res["gammas"] if g["holds"]), res["gammas"][-1])
                cos_end = float(np.dot(res["w_final"], u[:, m] / np.linalg.norm(u[:, m])))
                res.update({"ortho_eps": eps, "pattern": m, "angle_deg": ang, "cos_end_u_m": cos_end})
                starts.append(res)
                rows.append(res)
                table.append([eps, m, ang, res["c0"], res["gamma_certified"] or "-", cert["cap_angle_deg"],
                              cert["sup_omega"], cert["L"], cert["kappa"], res.get("stays_in_ball", "-"),
                              res.get("c_monotone", "-"), res.get("rate_holds", "-"), res["converged"],
                              res["steps_to_tol"] or "-", cos_end])
            ok = [r for r in rows if r["gamma_certified"] is not None]
            summary.append([eps, ang, len(rows), len(ok),
                            sum(r["stays_in_ball"] and r["c_monotone"] and r["rate_holds"] and r["converged"]
                                for r in ok),
                            sum(r["converged"] for r in rows),
                            sum(r["converged"] for r in rows if r["gamma_certified"] is None),
                            float(np.median([r["c0"] for r in rows]))])
            print(f"  eps={eps} angle={ang}: {len(ok)}/{len(rows)} certified ({time.time() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    certified = sum(r[3] for r in summary)
    held = sum(r[4] for r in summary)
    word = "untested (no start certified)" if certified == 0 else "holds" if held == certified else "FAILS"
    verdict = (f"Thm. 3 {word}: {held}/{certified} certified starts stayed "
               f"in B_gamma, had c_t increasing at rate gamma and converged; "
               f"{sum(r[6] for r in summary)}/{sum(r[2] - r[3] for r in summary)} uncertified starts "
               f"converged anyway (the condition is sufficient, not necessary)")
    io.write_csv(out / "starts.csv", START_COLUMNS, table)
    io.write_csv(out / "summary.csv", SUMMARY_COLUMNS, summary)
    io.atomic_write_bytes(out / "summary.md", "\n".join([
        report.markdown_table(SUMMARY_COLUMNS, summary), "", f"Verdict: {verdict}", "", "## Every start", "",
        report.markdown_table(START_COLUMNS, table), ""]).encode())
    io.write_json(out / "thm3.json", {
        "command": " ".join(["python", "scripts/irregularity.py"] + sys.argv[1:]),
        "config": {"d": FLAGS.d, "m": FLAGS.m, "q": FLAGS.q, "act": FLAGS.act, "gammas": gammas,
                   "n_samples": FLAGS.n_samples, "n_steps": FLAGS.n_steps, "data_seed": FLAGS.data_seed},
        "verdict": verdict, "starts": starts})
    print(report.format_table(SUMMARY_COLUMNS, summary))
    print(f"\n{verdict}\nwrote {out}/thm3.json, starts.csv, summary.md/.csv ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    app.run(main)
