"""The main job end to end, as a user runs it: whole processes of ``scripts/basins.py``, power iteration
against the default method (``auto``), interleaved in one run (docs/flow.md, "The main job end to end").

    python benchmarks/bench_main_job.py --output_json=results/bench_main_job.json                 # ~6 min, 2 cores
    python benchmarks/bench_main_job.py --n_init=1000000 --repeats=1 --cached=false \
        --basins_flags=--chunk_size=65536 --output_json=results/bench_main_job_1e6.json          # ~5 min
    python benchmarks/bench_main_job.py --repeats=2 --output_json=results/bench_main_job_user_sets.json \
        --sets=mixture8,digits,unit30,mixture5,cloud3,cloud16,patches,digit_patches,mixture6_leaky,mixture5_d12,cloud9,digits017

Each repeat runs every method of ``--methods`` in turn: a *cold* process on an empty compilation cache (a
user's first run: every program compiled), then, with ``--cached``, a second process on the cache the first
one filled (a rerun, ``CCDYN_COMPILE_CACHE``, docs/guide.md "Compilation"). The machine's speed drifts by
10-20% between minutes, so the methods alternate and the table quotes medians over the repeats (and their
spread); the ratio is each method's median over the first method's (``power``), both measured here.

Per method and kind: the process's wall time from start to exit (imports, data, engine, analysis, files),
summary.json's own split (``run``: the engine; ``analyze``: clustering, float64 refinement, certificates), and
what the run found: converged inits, optima, stable optima and the basin mass on the planted patterns. Other
flags of ``scripts/basins.py`` go in ``--basins_flags`` (e.g. ``--basins_flags="--act=leaky_relu --d=8"``).

``--sets``: the main job's data (``default``, ``--n_init`` inits) and / or the data users bring
(:mod:`ccdyn.data.user_sets`, written as ``.npz`` files and run with ``--data=file``, each with its activation,
``--user_n_init`` inits): a user's own runs, one process each, so nothing compiled for one run serves another
(``benchmarks/bench_flow.py`` times the engine alone, its methods in one process). No timing is asserted.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import jax
from absl import app, flags

from ccdyn import io
from ccdyn.data import user_sets

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", 10000, "Inits per run.", lower_bound=1)
flags.DEFINE_integer("repeats", 3, "Runs per method and kind (medians).", lower_bound=1)
flags.DEFINE_list("methods", ["power", "auto"], "Methods (--method of scripts/basins.py); ratios are to the first.")
flags.DEFINE_bool("cached", True, "Also time a second process on the compilation cache the cold one filled.")
flags.DEFINE_string("basins_flags", "", "Other flags of scripts/basins.py for every run, as one string.")
flags.DEFINE_list("sets", ["default"], "Data: default (the main job's) and / or user sets (ccdyn.data.user_sets.SETS).")
flags.DEFINE_integer("user_n_init", 1000, "Inits per run on a user set.", lower_bound=1)
flags.DEFINE_string("output_json", None, "Where to write the numbers.")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOUND = ("n_init", "n_converged", "n_optima", "n_stable_optima", "basin_mass_on_patterns")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def data_flags(name: str, files: dict) -> list:
    """The flags of scripts/basins.py for the set ``name``: its inits, and a user set's file and activation."""
    if name == "default":
        return [f"--n_init={FLAGS.n_init}"]
    return [f"--n_init={FLAGS.user_n_init}", "--data=file", f"--data_path={files[name]}",
            f"--act={user_sets.ACTIVATION[name]}"]


def one_process(method: str, cache: str, out: str, extra: list) -> dict:
    """One ``scripts/basins.py`` process: its wall time, summary.json's timings and what it found."""
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "basins.py"), f"--method={method}", f"--output_dir={out}",
           "--overwrite", *extra]
    env = {**os.environ, "CCDYN_COMPILE_CACHE": cache}
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    s = io.read_json(os.path.join(out, "summary.json"))
    return {"wall_s": wall, **{f"{k}_s": v for k, v in s["timings_s"].items()}, **{k: s[k] for k in FOUND}}


def spread(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv):
    if argv[1:]:
        raise app.UsageError(f"unexpected arguments {argv[1:]}: flags of scripts/basins.py go in --basins_flags")
    unknown = [name for name in FLAGS.sets if name != "default" and name not in user_sets.SETS]
    if unknown:
        raise app.UsageError(f"--sets: unknown {', '.join(unknown)} (default or one of {', '.join(user_sets.SETS)})")
    extra = shlex.split(FLAGS.basins_flags)
    kinds = ["cold", "cached"] if FLAGS.cached else ["cold"]
    work = tempfile.mkdtemp(prefix="ccdyn-bench-main-")
    runs: dict = {(d, m, k): [] for d in FLAGS.sets for m in FLAGS.methods for k in kinds}
    try:
        files = user_sets.write_sets(os.path.join(work, "sets"), [d for d in FLAGS.sets if d != "default"])
        for d in FLAGS.sets:
            for r in range(FLAGS.repeats):
                for m in FLAGS.methods:
                    cache = os.path.join(work, f"cache-{m}-{r}")  # empty: the cold process compiles everything
                    for k in kinds:
                        row = one_process(m, cache, os.path.join(work, f"run-{m}"), data_flags(d, files) + extra)
                        runs[d, m, k].append(row)
                        log(f"{d} repeat {r + 1}/{FLAGS.repeats} {m:>6} {k:>6}: {row['wall_s']:6.1f} s (run "
                            f"{row['run_s']:.1f} s, analyze {row['analyze_s']:.1f} s), converged "
                            f"{row['n_converged']}/{row['n_init']}, {row['n_stable_optima']} stable optima")
                    shutil.rmtree(cache, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ref = FLAGS.methods[0]
    rows = []
    for (d, m, k), rs in runs.items():
        row = {"set": d, "method": m, "kind": k,
               **{t: spread([x[t] for x in rs]) for t in ("wall_s", "run_s", "analyze_s")},
               "found": {f: rs[-1][f] for f in FOUND}, "runs": rs}
        row["ratio_to_" + ref] = row["wall_s"]["median"] / statistics.median([x["wall_s"] for x in runs[d, ref, k]])
        rows.append(row)
    flags_note = f", {' '.join(extra)}" if extra else ""
    print(f"\n{FLAGS.n_init} inits (default data), {FLAGS.user_n_init} (user sets), {FLAGS.repeats} repeat(s) "
          f"interleaved{flags_note}")
    print(f"{'set':<15} {'method':>7} {'kind':>6} {'wall s':>8} {'[min, max]':>15} {'run s':>7} {'analyze s':>10} "
          f"{'/ ' + ref:>8} {'converged':>10} {'stable':>7}")
    for row in rows:
        w = row["wall_s"]
        span = f"[{w['min']:.1f}, {w['max']:.1f}]"
        print(f"{row['set']:<15} {row['method']:>7} {row['kind']:>6} {w['median']:8.1f} {span:>15} "
              f"{row['run_s']['median']:7.1f} {row['analyze_s']['median']:10.1f} {row['ratio_to_' + ref]:7.2f}x "
              f"{row['found']['n_converged']:>10} {row['found']['n_stable_optima']:>7}")
    medians = {f"{m}_{k}": statistics.median(r["ratio_to_" + ref] for r in rows
                                             if r["method"] == m and r["kind"] == k and r["set"] != "default")
               for m in FLAGS.methods[1:] for k in kinds if any(d != "default" for d in FLAGS.sets)}
    for name, v in medians.items():
        print(f"median over the user sets, {name} / {ref}: {v:.2f}x")
    print("key: wall s: the process from start to exit, median over the repeats [min, max]; run s / analyze s: "
          "summary.json's engine and analysis times (medians); / " + ref + ": the wall time's median over " + ref +
          "'s of the same kind; cold: an empty compilation cache (a first run); cached: a rerun on it; converged, "
          "stable: inits converged and stable optima found (the last repeat)")
    if FLAGS.output_json:
        record = {"n_init": FLAGS.n_init, "user_n_init": FLAGS.user_n_init, "sets": FLAGS.sets,
                  "repeats": FLAGS.repeats, "methods": FLAGS.methods, "extra_flags": extra,
                  "devices": [str(d) for d in jax.devices()], "cpu_count": os.cpu_count(), "rows": rows,
                  "median_ratio_user_sets": medians}
        io.write_json(FLAGS.output_json, record)
        log(f"wrote {FLAGS.output_json}")


if __name__ == "__main__":
    app.run(main)
