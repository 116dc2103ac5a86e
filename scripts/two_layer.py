"""2-layer contrastive learning on token-generator data (Sec. 5, App. E.2): one run or a grid.

    python scripts/two_layer.py --acts=relu --betas=5 --Ps=3 --n_seeds=1          # one setting
    python scripts/two_layer.py --acts=linear,relu,leaky_relu,quadratic,gelu \\
        --output_dir=results/two_layer/fig4_infonce                                # Fig. 4 / 9 grid

Every combination of --losses x --bn x --zeta x --acts x --Ps x --betas is a setting; the --n_seeds
runs of a setting are vmapped and trained together (SGD, the paper's settings by default). Writes
into --output_dir:
  runs/<setting>.json   per-seed chi_+ / chi_- (overall and per RF), the mean angle each filter turned
                        from its initialization (turn_deg), loss per block, finiteness;
                        these are the unit of --resume
  results.json, results.csv   mean and std over the finite seeds of every setting, and the scores of
                        the untrained initial filters (the chance level, which grows with M)
  chi_<loss>_zeta<z>.png      chi_bar_+ and chi_bar_- against beta, a panel per P (Fig. 4/9/10/11)
  weights.npz, weights.png    with --save_weights: seed-0 filters in the token basis (Fig. 5)
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time

from absl import app, flags

import numpy as np

from ccdyn import activations, io, plotting, report, two_layer
from ccdyn.two_layer import experiment
from ccdyn.data import tokens

FLAGS = flags.FLAGS
_T = two_layer.TrainConfig()
_S = tokens.TokenSpec()
flags.DEFINE_list("acts", ["relu"], f"Activations, from {', '.join(activations.ACTIVATIONS)}.")
flags.DEFINE_list("betas", ["1", "2", "5", "10"], "Over-parameterization beta (integers >= 1); M = beta P.")
flags.DEFINE_list("Ps", ["1", "3", "5", "10"], "Candidate tokens per position P, integers in [1, --n_tokens].")
flags.DEFINE_list("losses", ["infonce"], f"Losses, from {', '.join(two_layer.LOSSES)}.")
flags.DEFINE_list("bn", ["none"], f"BatchNorm variants, from {', '.join(two_layer.BN_VARIANTS)}.")
flags.DEFINE_list("zeta", ["1"], "Embedding norm non-uniformity zeta (> 0), App. E.2.")
flags.DEFINE_integer("n_seeds", 3, "Seeds per setting (vmapped together).", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Base seed: seed s uses fold_in(seed, s) for data, minibatches and init.")
flags.DEFINE_integer("steps", _T.steps, "Minibatches.", lower_bound=1)
flags.DEFINE_integer("batch_size", _T.batch_size, "Positive pairs per minibatch (>= 2).")
flags.DEFINE_float("lr", _T.lr, "SGD learning rate (> 0).")
flags.DEFINE_float("momentum", _T.momentum, "SGD momentum, in [0, 1).")
flags.DEFINE_float("weight_decay", _T.weight_decay, "Weight decay (>= 0), PyTorch SGD semantics.")
flags.DEFINE_float("tau", _T.tau, "InfoNCE temperature (> 0).")
flags.DEFINE_bool("normalize", _T.normalize, "L2-normalize the outputs before the loss.")
flags.DEFINE_integer("d_out", 50, "Output dimension (rows of V).", lower_bound=1)
flags.DEFINE_integer("n_generators", _S.n_generators, "Generators G.", lower_bound=1)
flags.DEFINE_integer("n_positions", _S.n_positions, "Positions / receptive fields K.", lower_bound=1)
flags.DEFINE_integer("n_tokens", _S.n_tokens, "Tokens d (also the embedding dimension).", lower_bound=1)
flags.DEFINE_integer("n_fixed", _S.n_fixed, "Positions each generator fixes, in [1, --n_positions].", lower_bound=1)
flags.DEFINE_integer("block", 500, "Steps per compiled scan block (progress is reported between blocks).",
                     lower_bound=1)
flags.DEFINE_bool("save_weights", False, "Write weights.npz and weights.png (seed-0 filters, Fig. 5).")
flags.DEFINE_string("output_dir", "runs/two_layer", "Run directory.")
flags.DEFINE_bool("resume", False, "Continue in an existing output_dir: finished settings are kept.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")


def _ints(values):
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        return None


def _floats(values):
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        return None


def _subset(allowed):
    return lambda v: bool(v) and all(x in allowed for x in v)


flags.register_validator("acts", _subset(activations.ACTIVATIONS),
                         f"--acts must be a comma-separated list from {', '.join(activations.ACTIVATIONS)}")
flags.register_validator("losses", _subset(two_layer.LOSSES),
                         f"--losses must be a comma-separated list from {', '.join(two_layer.LOSSES)}")
flags.register_validator("bn", _subset(two_layer.BN_VARIANTS),
                         f"--bn must be a comma-separated list from {', '.join(two_layer.BN_VARIANTS)}")
flags.register_validator("betas", lambda v: _ints(v) is not None and len(v) > 0 and min(_ints(v)) >= 1,
                         "--betas must be a comma-separated list of integers >= 1")
flags.register_validator("zeta", lambda v: _floats(v) is not None and len(v) > 0 and min(_floats(v)) > 0,
                         "--zeta must be a comma-separated list of numbers > 0")
flags.register_validator("batch_size", lambda v: v >= 2, "--batch_size must be >= 2 (negatives are needed)")
flags.register_validator("lr", lambda v: 0 < v < float("inf"), "--lr must be > 0")
flags.register_validator("momentum", lambda v: 0 <= v < 1, "--momentum must lie in [0, 1)")
flags.register_validator("weight_decay", lambda v: v >= 0, "--weight_decay must be >= 0")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_multi_flags_validator(
    ["Ps", "n_tokens"], lambda f: _ints(f["Ps"]) is not None and len(f["Ps"]) > 0
    and all(1 <= p <= f["n_tokens"] for p in _ints(f["Ps"])),
    "--Ps must be a comma-separated list of integers in [1, --n_tokens]")
flags.register_multi_flags_validator(["n_fixed", "n_positions"], lambda f: f["n_fixed"] <= f["n_positions"],
                                     "--n_fixed must be <= --n_positions")


def _settings():
    grid = itertools.product(FLAGS.losses, FLAGS.bn, _floats(FLAGS.zeta), FLAGS.acts, _ints(FLAGS.Ps),
                             _ints(FLAGS.betas))
    return [experiment.Setting(act=a, beta=b, n_candidates=p, loss=lo, bn=bn, zeta=z)
            for lo, bn, z, a, p, b in grid]


def _row(setting, res, spec):
    c = dataclasses.asdict(setting)
    init = experiment.init_scores(setting, n_seeds=FLAGS.n_seeds, seed=FLAGS.seed, spec=spec, d_out=FLAGS.d_out)
    return {**c, "M": setting.beta * setting.n_candidates,
            "chi_plus": experiment.aggregate(res["chi_plus"]), "chi_minus": experiment.aggregate(res["chi_minus"]),
            "chi_plus_init": experiment.aggregate(init["chi_plus"]),
            "chi_minus_init": experiment.aggregate(init["chi_minus"]),
            "turn_deg": experiment.aggregate(res["turn_deg"]) if "turn_deg" in res else None,
            "n_seeds": len(res["finite"]), "n_nonfinite": int(np.sum(~np.asarray(res["finite"], bool))),
            "wall_s": res["wall_s"]}


def _figures(out, rows, betas, ps):
    bns = sorted({r["bn"] for r in rows})
    for loss, zeta in sorted({(r["loss"], r["zeta"]) for r in rows}):
        curves = {}
        for r in rows:
            if (r["loss"], r["zeta"]) != (loss, zeta):
                continue
            label = r["act"] + (f" bn={r['bn']}" if len(bns) > 1 else "")
            curves.setdefault(label, {})[(r["n_candidates"], r["beta"])] = r
        fig = plotting.matching_figure(curves, betas, ps, f"{loss}, ζ = {zeta:g}, {FLAGS.n_seeds} seeds, "
                                                          f"{FLAGS.steps} steps, lr {FLAGS.lr:g}")
        io.save_figure(out / f"chi_{loss}_zeta{zeta:g}.png", fig)


def main(argv):
    del argv
    t0 = time.time()
    try:
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite, resume=FLAGS.resume)
    except FileExistsError as e:
        sys.exit(f"error: {e}")
    (out / "runs").mkdir(exist_ok=True)
    cfg = two_layer.TrainConfig(tau=FLAGS.tau, normalize=FLAGS.normalize, lr=FLAGS.lr, momentum=FLAGS.momentum,
                                weight_decay=FLAGS.weight_decay, batch_size=FLAGS.batch_size, steps=FLAGS.steps)
    spec = tokens.TokenSpec(n_generators=FLAGS.n_generators, n_positions=FLAGS.n_positions,
                            n_tokens=FLAGS.n_tokens, n_fixed=FLAGS.n_fixed)
    config = {"train": dataclasses.asdict(cfg), "tokens": dataclasses.asdict(spec), "d_out": FLAGS.d_out,
              "n_seeds": FLAGS.n_seeds, "seed": FLAGS.seed, "command": " ".join(sys.argv),
              "readings": ["R_k^g = candidates some generator fixes at position k",
                           "chi_- divided by the number of tokens outside R_k^g",
                           "odd activations (linear, tanh) score |cos|",
                           "init: PyTorch nn.Linear default U(+-1/sqrt(fan_in)), no biases"]}
    settings = _settings()
    rows = []
    for i, s in enumerate(settings):
        path = out / "runs" / f"{s.tag}.json"
        if FLAGS.resume and path.exists() and (not FLAGS.save_weights or s.tag in _saved_weights(out)):
            res = io.read_json(path)
            print(f"[{i + 1}/{len(settings)}] {s.tag}: kept from an earlier run", flush=True)
        else:
            t1 = time.time()

            def progress(done, losses, tag=s.tag, t1=t1, i=i):
                if done == FLAGS.steps or done % max(FLAGS.block, FLAGS.steps // 5) == 0:
                    print(f"[{i + 1}/{len(settings)}] {tag}: step {done}/{FLAGS.steps}  loss "
                          f"{np.nanmean(np.asarray(losses)):.4f}  {time.time() - t1:.1f} s", flush=True)

            r = experiment.run_setting(s, cfg, n_seeds=FLAGS.n_seeds, seed=FLAGS.seed, spec=spec,
                                        d_out=FLAGS.d_out, block=FLAGS.block, on_block=progress)
            res = {k: r[k] for k in ("chi_plus", "chi_minus", "chi_plus_rf", "chi_minus_rf", "turn_deg", "finite",
                                     "stopped_at", "loss")}
            res.update(setting=dataclasses.asdict(s), wall_s=time.time() - t1)
            io.write_json(path, res)
            if FLAGS.save_weights:
                e = r["embeddings"][0]
                coords = r["W"][0] @ (e / np.linalg.norm(e, axis=1, keepdims=True)).T
                coords = coords / np.maximum(np.abs(coords).max(axis=-1, keepdims=True), 1e-30)
                io.write_npz(out / "runs" / f"{s.tag}.weights.npz", coords=coords, used=r["used"][0],
                             W=r["W"][0])
            for k, bad in enumerate(~np.asarray(r["finite"], bool)):
                if bad:
                    print(f"  WARNING {s.tag} seed {k} went non-finite at step {int(r['stopped_at'][k])}; "
                          "it is left out of the means", flush=True)
        rows.append(_row(s, res, spec))
    io.write_json(out / "results.json", {"config": config, "rows": rows, "wall_s": time.time() - t0})
    headers = ["loss", "act", "bn", "zeta", "P", "beta", "M", "chi_plus_mean", "chi_plus_std", "chi_minus_mean",
               "chi_minus_std", "chi_plus_init", "chi_minus_init", "turn_deg", "n_finite", "n_seeds", "wall_s"]
    table = [[r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"], r["beta"], r["M"],
              round(r["chi_plus"]["mean"], 4), round(r["chi_plus"]["std"], 4), round(r["chi_minus"]["mean"], 4),
              round(r["chi_minus"]["std"], 4), round(r["chi_plus_init"]["mean"], 4),
              round(r["chi_minus_init"]["mean"], 4), "" if r["turn_deg"] is None else round(r["turn_deg"]["mean"], 2),
              r["chi_plus"]["n"], r["n_seeds"], round(r["wall_s"], 1)]
             for r in rows]
    io.write_csv(out / "results.csv", headers, table)
    _figures(out, rows, _ints(FLAGS.betas), _ints(FLAGS.Ps))
    if FLAGS.save_weights:
        _weights_figure(out, settings)
    print()
    print(report.format_table(["loss", "act", "bn", "ζ", "P", "β", "χ̄₊", "χ̄₋", "χ̄₊/χ̄₋ at init", "finite"],
                              [[r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"], r["beta"],
                                f"{r['chi_plus']['mean']:.3f} ± {r['chi_plus']['std']:.3f}",
                                f"{r['chi_minus']['mean']:.3f} ± {r['chi_minus']['std']:.3f}",
                                f"{r['chi_plus_init']['mean']:.2f}/{r['chi_minus_init']['mean']:.2f}",
                                f"{r['chi_plus']['n']}/{r['n_seeds']}"] for r in rows]))
    print(f"\nwrote {out}/results.json, results.csv and figures in {time.time() - t0:.1f} s")


def _saved_weights(out):
    return {p.name[: -len(".weights.npz")] for p in (out / "runs").glob("*.weights.npz")}


def _weights_figure(out, settings):
    panels, arrays = {}, {}
    for s in settings:
        z = np.load(out / "runs" / f"{s.tag}.weights.npz")
        label = f"{s.act} β={s.beta} P={s.n_candidates}" + (f" bn={s.bn}" if s.bn != "none" else "")
        panels[label] = (z["coords"], z["used"])
        arrays[s.tag], arrays[s.tag + ".used"] = z["coords"], z["used"]
    io.write_npz(out / "weights.npz", **arrays)
    io.save_figure(out / "weights.png", plotting.weights_figure(panels, "learned filters, seed 0"))


if __name__ == "__main__":
    app.run(main)
