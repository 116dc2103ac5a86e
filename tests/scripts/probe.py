"""The reliability probe: every script in scripts/ run as a new user would run it, each case in its own
Python process, judged by the scripts' failure contract (DEVELOPERS.md; issue #24's list of cases).

The cases, per script (:func:`cases`): a tiny run that must succeed (``smoke``); an unknown flag; the
output folder as a file, a foreign folder, a live run, a finished run with a user's file in a subfolder
(``--overwrite``), a read-only folder; every seed flag at -1 and 2^32; every size flag at 10^12; every
input-file flag absent, empty, not what it should hold (garbage, non-numeric, another script's run); data
x1e200 / x1e-200 in float32 and with --x64; a tiny tau and a huge learning rate; and the particular
cases the issue names (its numbers re-run). A case is **good** when the script either ends with exit
status 2 and exactly one ``error: ...`` line that names the flag or file of the case, or (where the case
allows it) succeeds: exit 0, its run marked complete. Always: no traceback, no ``Fatal Python error``,
no raw ``...Warning:`` line, no death by a signal, no run past the case's time limit, no output folder
left on a refusal (unless it holds what a late failure wrote, marked ``failed``), and every file of the
user's that the case planted intact. Otherwise it is **bad**. A case that is good by these rules is
**borderline** when it held only just: its one line came from an exception no check expected (the
contract's catch-all, which says ``set CCDYN_TRACEBACK=1``: the flag was named by luck, not by a check),
or its run used more than half its CPU-time limit.

Every run gets the small sizes of the README-command test (``SHRINK``) for the flags the case does not
set itself, and runs in a folder of its own (inputs are given by absolute paths).

    python -m tests.scripts.probe --jobs=2 --csv=probe.csv          # all cases (slow: hours on 2 busy cores)
    python -m tests.scripts.probe --only=basins,hltm --root=CHECKOUT  # some scripts, of another checkout
    python -m tests.scripts.probe --slice=1/4 > part1.log            # a quarter of the cases (interleaved)
    python -m tests.scripts.probe --done_in=part1.log                # the cases part1.log has no verdict for
    python -m tests.scripts.probe --bad_in=part1.log                 # again, those it judged bad or borderline

``tests/scripts/test_probe.py`` runs every case under ``pytest -m slow``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import csv
import dataclasses
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BIG = "1000000000000"  # 10^12: an absurd size
SIZE_FLAGS = ("n_init n_seeds n_grid n_dirs n_mc n_samples d m widths depths batch_size n_filters d_out n_tokens "
              "n_positions "
              "n_generators tile aug_views mc_seeds mc_Ms small_sizes Ks lemma_Ks batch_sizes degrees n M D "
              "hidden d_in n_points x_points ds shift_n_init shift_d shift_m views_per_circle n_eval samples_per_epoch "
              "n_views sizes n_random n_radii n_images max_pairs probe_dirs max_points ripple_views n_patterns "
              "eps_dims "
              "n_batches draws min_views measure_samples "
              "steps n_steps grid_steps epochs checkpoints n_random_w max_steps").split()  # and counts (issue 38)
GRANULARITY = ("chunk_size",)  # how the work is cut, not how much there is
TAU_FLAGS = ("tau", "taus", "lemma_taus")
NOT_SEEDS = ("set_seeds",)  # START:STOP ranges of seeds: their own cases
# Inputs every run of a script needs (absolute paths into the checkout {R}); the output flag when it is
# not --output_dir.
BASE = {
    "basins_table": ["--runs={R}/results/basins/relu"],
    "roughness": ["--runs={R}/results/basins/relu", "--n_radii=3"],
    "saddles": ["--run={R}/results/basins/relu", "--min_fraction=0.01", "--max_pairs=45", "--n_images=5"],  # 10 optima
    "ddn_figures": ["--run_dirs={R}/results/ddn/table6"],
    "two_layer_table": ["--run={R}/results/two_layer/table1"],
    "two_layer_claims": ["--root={t}/grids"],
    "simclr_var_claims": ["--sphere={R}/results/simclr_var/sphere/sphere.json",
                          "--kernel={R}/results/simclr_var/kernel/kernel.json",
                          "--clusters={R}/results/simclr_var/kernel/clusters.json"],
    "claims": ["--root={t}/grids"],
    "kernel_dynamics": ["--at=0,10,20", "--widths=8", "--small_sizes=8,4", "--taus=0.2"],
    "ntxent_sphere": ["--Ks=1,2,3", "--taus=0.2,0.5", "--lemma_Ks=2", "--lemma_taus=0.5"],
    "two_layer": ["--betas=1", "--Ps=1", "--n_positions=3", "--n_tokens=6", "--n_generators=4", "--n_fixed=2",
                  "--d_out=8", "--batch_size=16"],
    "two_layer_steps": ["--betas=1", "--Ps=3", "--acts=relu"],
    "hltm": ["--depths=2", "--widths=2", "--deltas_lower=0.8", "--batch_size=64"],
    "mnist": ["--mnist={d}/mnist_ok.pkl.gz", "--batch_size=2", "--n_filters=2", "--d_out=4"],
    "ddn_digits": ["--checkpoints=0,10", "--batch_size=16", "--variants=nce"],
    "ddn_operator": ["--sigmas=0,0.1", "--betas=0"],
    "modulation": ["--eps_dims=5", "--c=0,0.1", "--eps=0,0.5"],
    "modulation_bounds": ["--draws=4", "--ds=2", "--scales=1.0", "--x_points=21"],
    "augmentation": ["--acts=relu", "--ranges=0,1", "--ripple_views=8,16", "--shift_ranges=0", "--basin_acts=relu"],
    "cor2_exact": ["--taus=0.5", "--n_random_w=0", "--n_samples=4000"],
    "thm3_exact": ["--d=4", "--m=4", "--ortho_eps=0.05", "--angles_deg=0", "--n_patterns=2", "--gammas=0.1,0.4",
                   "--n_samples=16"],
    "irregularity": ["--d=4", "--m=4", "--ortho_eps=0.05", "--angles_deg=0", "--n_patterns=2", "--gammas=0.1,0.4",
                     "--n_samples=16"],
    "kernel_lemmas": ["--batch_sizes=64", "--degrees=10", "--n_batches=2", "--taus=1"],
    "lemma5_general": ["--draws=1", "--shapes=2x3x1x3x4"],
    "landscape": ["--acts=relu", "--n_grid=1024"],
    "continuation": ["--param=ortho_eps", "--values=0.1,0.2", "--d=4", "--m=4"],
    "flow_accuracy": ["--check=rtol", "--d=4", "--m=4", "--rtols=1e-3,1e-4"],
    "kink_check": ["--set_seeds=1000:1001", "--max_points=14", "--probe_dirs=50", "--compare_methods=false"],
    "basins": ["--d=4", "--m=4"],
}
OUT_FLAG = {"basins_table": "--output_prefix={o}/table", "simclr_var_claims": "--output={o}/claims.md",
            "two_layer_claims": None, "claims": None, "two_layer_table": None}
DATA_SCRIPTS = ("basins", "continuation", "flow_accuracy", "kink_check")  # --data=file --data_path
READERS = {  # flag: (the file of a run it reads, another script's run to give it)
    ("basins_table", "runs"): ("summary.json", "{R}/results/two_layer/table1"),
    ("roughness", "runs"): ("summary.json", "{R}/results/two_layer/table1"),
    ("saddles", "run"): ("summary.json", "{R}/results/two_layer/table1"),
    ("saddles", "continuation"): ("continuation.json", "{R}/results/basins/relu"),
    ("ddn_figures", "run_dirs"): ("results.json", "{R}/results/two_layer/table1"),
    ("two_layer_table", "run"): ("results.json", "{R}/results/ddn/table6"),
    ("two_layer_claims", "root"): ("g/results.json", None),
    ("two_layer_steps", "reference"): ("", "{R}/results/ddn/table6/results.json"),
    ("simclr_var_claims", "sphere"): ("", "{R}/results/simclr_var/kernel/kernel.json"),
    ("simclr_var_claims", "kernel"): ("", "{R}/results/simclr_var/sphere/sphere.json"),
    ("simclr_var_claims", "clusters"): ("", "{R}/results/simclr_var/sphere/sphere.json"),
    ("claims", "root"): ("results/", None),
}


@dataclasses.dataclass(frozen=True)
class Case:
    """One run of ``scripts/<script>.py``. ``args`` may hold {R} (the checkout), {d} (the probe's data
    files), {t} (the case's own folder, the working directory) and {o} (its output folder). ``expect``:
    ``refuse`` (one ``error:`` line holding ``names``), ``either`` (that, or success) or ``succeed``.
    ``setup``: what {o} is before the run (absent, ``file``, ``foreign``, ``live``, ``finished``,
    ``readonly``). ``timeout``: the CPU seconds the run may take (then it counts as running on)."""
    script: str
    name: str
    args: tuple
    expect: str = "refuse"
    names: str = ""
    setup: str = ""
    timeout: float = 120.0

    @property
    def id(self) -> str:
        return f"{self.script} {self.name}"


def script_flags(root: Path, name: str) -> dict:
    """{flag name: default} of the flags ``scripts/<name>.py`` defines (imported in this process)."""
    from absl import flags

    import ccdyn.cli  # noqa: F401 -- the shared flags exist before

    before = set(flags.FLAGS)
    spec = importlib.util.spec_from_file_location(f"_probe_{name}", root / "scripts" / f"{name}.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    out = {k: flags.FLAGS[k].default for k in set(flags.FLAGS) - before}
    for k in out:
        delattr(flags.FLAGS, k)
    return out


def _list(default) -> bool:
    return isinstance(default, list)


def cases(root: Path = ROOT, only=()) -> list:
    """Every case, over every script in ``root``/scripts (or the scripts named in ``only``)."""
    out = []
    for path in sorted((root / "scripts").glob("*.py")):
        s = path.stem
        if only and s not in only:
            continue
        fl = _FLAGS[s] = script_flags(root, s)
        base = tuple(BASE.get(s, ()))
        o_flag = OUT_FLAG.get(s, "--output_dir={o}" if "output_dir" in fl else None)
        run = base + ((o_flag,) if o_flag else ())

        def add(name, args, **kw):
            out.append(Case(s, name, _merged(run, args), **kw))

        if s != "claims":  # the ledger's tool re-reads the whole repository; its own tests run it
            add("smoke", [], expect="succeed", timeout=600)
        add("unknown flag", ["--no_such_flag=1"], names="no_such_flag")
        add("positional argument", ["stray"], names="stray")  # (issue 38) was accepted
        twice = next((f for f, v in sorted(fl.items()) if isinstance(v, int) and not isinstance(v, bool)), None)
        if twice:  # an integer flag given twice: absl keeps the last silently
            add("a flag given twice", [f"--{twice}={fl[twice]}", f"--{twice}={fl[twice]}"], names=f"--{twice}")
        add("--helpshort", ["--helpshort"], expect="succeed")  # exited 1
        if "set_seeds" in fl:
            sets = ["--check=exact_2d"] if s == "flow_accuracy" else []  # (its --check=rtol draws no sets)
            add("--set_seeds beyond 2^32", sets + ["--set_seeds=4294967290:4294967300"], names="--set_seeds")
            add("--set_seeds=0:10^8", sets + ["--set_seeds=0:100000000"], names="--set_seeds", timeout=60)
        if o_flag:
            what = o_flag.split("=")[0] + "|{o}"  # the flag or the path
            ow = ["--overwrite"] if "overwrite" in fl else []
            run_dir = o_flag.startswith("--output_dir")
            add("output is a file", [], names=what, setup="file")
            add(f"output foreign {' '.join(ow)}", ow, names=what, setup="foreign",  # a file beside the outputs
                expect="refuse" if run_dir else "either")
            add("output readonly", [], names=what, setup="readonly")
            if run_dir:
                add(f"output live {' '.join(ow)}", ow, names=what, setup="live")
                add(f"finished run + user's files in subfolders {' '.join(ow)}", ow, names=what, setup="finished")
                if ow:  # (issue 38) was computed in full, then "Operation not permitted" and a staged folder left
                    add("finished run read-only --overwrite", ow, names=what, setup="finished_readonly")
        for f, default in sorted(fl.items()):
            if f.endswith("seed") and f not in NOT_SEEDS and isinstance(default, int):
                for v in ("-1", "4294967296"):
                    add(f"--{f}={v}", [f"--{f}={v}"], names=f"--{f}")
            if f in SIZE_FLAGS and (isinstance(default, int) or _list(default)) and not isinstance(default, bool):
                add(f"--{f}=10^12", [f"--{f}={BIG}"], expect="either", names=f"--{f}", timeout=60)  # a cap may run
            if f in GRANULARITY and isinstance(default, int):  # not a size: any value runs (the run's own time)
                add(f"--{f}=10^12", [f"--{f}={BIG}"], expect="either", names=f"--{f}", timeout=600)
            if f in TAU_FLAGS:
                add(f"--{f}=1e-10", [f"--{f}=1e-10"], expect="either", names=f"--{f}", timeout=600)
            if f == "lr":
                add("--lr=1e10", ["--lr=1e10"], expect="either", names="--lr", timeout=600)
        for (rs, flag), (inner, other) in READERS.items():
            if rs != s:
                continue
            is_dir = inner != ""
            for what, where, file in (("absent", "{t}", "absent"), ("empty", "{t}", "empty"),
                                      ("garbage", "{d}", "garbage"), ("non-numeric", "{d}", "strings")):
                file += ("_dir" if what in ("garbage", "non-numeric") else "") if is_dir else ".json"
                add(f"--{flag} {what}", [f"--{flag}={where}/{file}"], names=f"--{flag}|{file}")
            if other:
                add(f"--{flag} another script's run", [f"--{flag}={other}"], names=f"--{flag}")
        if s in DATA_SCRIPTS or s == "landscape":
            pre = ["--data=file"] if s != "landscape" else []
            suffix = "_2d" if s == "landscape" else ""
            for f in ("absent", "empty", "garbage", "strings", "nan", "header1e12"):
                add(f"--data_path {f}", pre + [f"--data_path={{d}}/{f}{suffix}.npz"],
                    names=f"--data_path|{f}{suffix}.npz")
            for scale in ("big200", "tiny200"):
                for x64 in ([], ["--x64"]) if s != "landscape" else ([],):  # landscape is always float64
                    add(f"data {scale} {'x64' if x64 or s == 'landscape' else 'f32'}",
                        pre + [f"--data_path={{d}}/{scale}{suffix}.npz"] + x64,
                        names=f"--data_path|{scale}{suffix}.npz")
        if s in ("basins", "landscape"):
            add("gaussian alpha tau=1e-12", ["--alpha=gaussian", "--tau=1e-12"], names="--tau")
    out += [c for c in _issue_cases() if not only or c.script in only]
    return out


def _merged(base, args) -> tuple:
    """``base`` then ``args``, without the flags of ``base`` that ``args`` sets (a flag given twice is refused)."""
    name = lambda a: a.split("=", 1)[0] if a.startswith("--") else None  # noqa: E731
    given = {name(a) for a in args} - {None}
    return tuple(a for a in base if name(a) not in given) + tuple(args)


def _issue_cases() -> list:
    """The cases issues #24 and #38 name one by one (those the generic ones do not already hold)."""
    c = []

    def add(script, name, args, issue=24, **kw):
        o = OUT_FLAG.get(script, "--output_dir={o}")
        c.append(Case(script, f"#{issue} {name}", _merged(tuple(BASE.get(script, ())) + ((o,) if o else ()), args), **kw))

    for name, args, flag in [("hltm", "--widths=10000000", "--widths"), ("hltm", "--depths=40", "--depths"),
                             ("hltm", "--n_seeds=100000000", "--n_seeds"),
                             ("kernel_dynamics", "--n_seeds=1000000000", "--n_seeds"),
                             ("power_iteration", "--d=1000000000 --m=2", "--d"),
                             ("augmentation", "--n_grid=1000000000000", "--n_grid"),
                             ("modulation", "--n_mc=1000000000000", "--n_mc"),
                             ("two_layer", "--n_seeds=100000000", "--n_seeds"),
                             ("two_layer", "--betas=2,2", "--betas"), ("two_layer", "--betas=", "--betas"),
                             ("basins", "--coordinator_address=127.0.0.1:9 --num_processes=2 --process_id=1 "
                                        "--coordinator_timeout=5", "--coordinator_timeout"),
                             ("basins", "--coordinator_address=127.0.0.1 --num_processes=2", "--coordinator_address"),
                             ("basins", "--data=file --data_path={d}/nan.npz", "--data_path|nan.npz"),  # or the file
                             ("two_layer_table", "--run={R}/results/ddn/table6", "--run"),
                             ("landscape", "--angles=0,0", "--angles"),
                             ("ddn_operator", "--tau=1e-10", "--tau")]:
        add(name, args, args.split(), names=flag, timeout=60)
    add("mnist", "--lr=10000", ["--lr=10000"], expect="either", names="--lr", timeout=600)
    for name, args, flag in [  # issue 38's cases one by one
            ("augmentation", "--ranges=1/0", "--ranges"), ("kink_check", "--alpha=gaussian --tau=1e-12", "--tau"),
            ("flow_accuracy", "--check=exact_2d --alpha=gaussian --tau=1e-12", "--tau"),
            ("basins", "--method=flow --step_size=1e300", "--step_size"), ("kernel_dynamics", "--at=0,10 --at=20", "--at"),
            ("thm3_exact", "--n_steps=1000000000000", "--n_steps"), ("thm42_moving", "--steps=1000000000000", "--steps"),
            ("cor2_exact", "--n_random_w=1000000000000", "--n_random_w"), ("ddn_thm5", "--c=1e300", "--c"),
            ("ddn_thm5", "--gamma=0.9999999999", "--gamma"), ("lemma5_general", "--shapes=2x1x1x1000000000000x1", "--shapes"),
            ("basins", "--q=0.5,0.5", "--q"), ("basins", "--data=latent_categorical --probs=0.7,0.7", "--probs"),
            ("basins", "--data=file --data_path={d}/nan.npz", "row 1")]:  # the file and the row
        add(name, args, args.split(), 38, names=flag, timeout=60)
    for name, args in [("cor2_exact", "--n_samples=1000"), ("cor2_exact", "--n_samples=5000 --taus=8,2"),
                       ("kink_check", "--method=power")]:  # valid settings that crashed
        add(name, args, args.split(), 38, expect="succeed", timeout=600)
    add("kernel_dynamics", "--tau=1e-10", ["--tau=1e-10"], expect="either", names="--tau", timeout=600)
    add("basins_table", "--output_prefix=notes over a user's notes.md", [], names="--output_prefix", setup="file")
    add("simclr_var_claims", "--output=o/claims.csv", ["--output={o}/claims.csv"], names="--output")
    add("two_layer_claims", "--root with a user's summary.md", [], names="--root", setup="summary")
    return c


# -- data files ---------------------------------------------------------------------------------------
def make_data(d: Path) -> None:
    """The input files the cases name under {d}."""
    from tests.data import mnist_pickle

    x = np.random.default_rng(0).normal(size=(40, 4))
    for suffix, arr in (("", x), ("_2d", x[:12, :2])):
        for name, scale in (("big200", 1e200), ("tiny200", 1e-200)):
            np.savez(d / f"{name}{suffix}.npz", x=arr * scale)
        np.savez(d / f"strings{suffix}.npz", x=np.array([["a", "b"], ["c", "d"]]))
        np.savez(d / f"nan{suffix}.npz", x=np.where(arr > 1.5, np.nan, arr))
        (d / f"empty{suffix}.npz").write_bytes(b"")
        (d / f"garbage{suffix}.npz").write_text("not an npz\n")
        buf = io.BytesIO()  # an .npz whose header claims 10^12 rows (8 numbers held)
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 2)})
        with zipfile.ZipFile(d / f"header1e12{suffix}.npz", "w") as z:
            z.writestr("x.npy", buf.getvalue() + np.ones(8).tobytes())
    parts = mnist_pickle.splits(np.random.default_rng(1))
    (d / "mnist_ok.pkl.gz").write_bytes(mnist_pickle.gz(mnist_pickle.py2_pickle(parts)))
    (d / "garbage.json").write_text("{not json")
    (d / "strings.json").write_text('{"rows": "abc", "config": "x", "verdicts": "v", "optima": "o", '
                                    '"prop21": 1, "thm32": 1, "propA1": 1, "lemmaA2": 1, "fig3": 1}')
    for name in ("garbage_dir", "strings_dir"):
        src = d / ("garbage.json" if name.startswith("garbage") else "strings.json")
        for inner in ("summary.json", "results.json", "continuation.json", "g/results.json", "results/x.json"):
            (d / name / inner).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, d / name / inner)


# -- one case --------------------------------------------------------------------------------------------
MINE = "a user's file"


def _prepare(case: Case, t: Path, o: Path, root: Path) -> tuple:
    """Makes {o}'s state; returns (the planted user files, a context holding a live run open)."""
    from ccdyn import io, rundir

    (t / "empty").mkdir()
    (t / "empty.json").write_text("")
    if case.script in ("two_layer_claims", "claims"):  # a grid to read
        (t / "grids" / "table1").mkdir(parents=True)
        shutil.copy(root / "results" / "two_layer" / "table1" / "results.json", t / "grids" / "table1" / "results.json")
    planted, hold = [], contextlib.nullcontext()
    target = {"basins_table": o / "table.md", "simclr_var_claims": o / "claims.md"}.get(case.script, o)
    if case.setup == "file":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(MINE)
        planted.append(target)
    elif case.setup == "summary":
        (t / "grids" / "summary.md").write_text(MINE)
        planted.append(t / "grids" / "summary.md")
    elif case.setup == "foreign":
        o.mkdir()
        (o / "notes.txt").write_text(MINE)
        planted.append(o / "notes.txt")
    elif case.setup in ("live", "finished", "finished_readonly"):
        run = rundir.RunDir.open(o, {"probe": 1}, script=f"scripts/{case.script}.py", version="0",
                                 outputs=("chunks", "runs", "sub", "summary.json"))
        io.write_json(run.path / "summary.json", {"probe": 1})
        if case.setup == "finished":
            for sub in ("chunks", "runs", "sub"):
                (o / sub).mkdir()
                (o / sub / "notes.txt").write_text(MINE)
                planted.append(o / sub / "notes.txt")
            run.finish()
        elif case.setup == "finished_readonly":  # immutable (root) or 0555: it cannot be swapped out or deleted
            run.finish()
            (o / "summary.json").write_text(MINE)
            planted.append(o / "summary.json")
            hold = contextlib.ExitStack()
            if subprocess.run(["chattr", "+i", str(o)], capture_output=True).returncode == 0:
                hold.callback(subprocess.run, ["chattr", "-i", str(o)], capture_output=True)
            else:
                o.chmod(0o555)
                hold.callback(o.chmod, 0o755)
        else:  # held open (its lock taken) by this process while the case runs
            hold = contextlib.ExitStack()
            hold.callback(run.release)
    elif case.setup == "readonly":
        o.mkdir()
    return planted, hold


def _command(case: Case, t: Path, o: Path, root: Path, d: Path) -> list:
    from tests.test_readme_commands import SHRINK

    args = [a.format(R=root, d=d, t=t, o=o) for a in case.args]
    given = {a.split("=")[0].lstrip("-") for a in args}
    if case.script not in _FLAGS:  # (cases() fills it, in one thread)
        _FLAGS[case.script] = script_flags(root, case.script)
    fl = _FLAGS[case.script]
    shrink = [f"--{k}={v}" for k, v in SHRINK.items() if k in fl and k not in given]
    cmd = [sys.executable, str(root / "scripts" / f"{case.script}.py"), *shrink, *args]
    if case.setup == "readonly":
        if hasattr(os, "geteuid") and os.geteuid() != 0:
            o.chmod(0o555)
        elif shutil.which("unshare"):  # root writes to a 0555 folder: make it a read-only mount instead
            inner = " ".join(f"'{w}'" for w in cmd)
            cmd = ["unshare", "-m", "sh", "-c", f"mount --bind '{o}' '{o}' && mount -o remount,ro,bind '{o}' && "
                   f"exec {inner}"]
        else:
            return []
    return cmd


_FLAGS: dict = {}


def flag_stage(case: Case, root: Path, data: Path, work: Path) -> dict | None:
    """The row of a case whose flags ``cli.start`` refuses at parsing (``ccdyn.cli.contract``'s parser: the
    line it prints, before any JAX work), judged in this process; None for a case that gets past parsing
    (it runs in a process of its own). Not thread-safe (absl's FLAGS): call from one thread."""
    from absl import app, flags

    from ccdyn.cli import contract

    if case.setup:
        return None
    app.define_help_flags()  # as app.run does before parsing (--helpshort)
    t, o = work / "flag-stage", work / "flag-stage" / "out"
    cmd = _command(case, t, o, root, data)
    err = io.StringIO()
    before = set(flags.FLAGS)
    spec = importlib.util.spec_from_file_location(f"_probe_flags_{case.script}", cmd[1])
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):  # (--helpshort's text)
            contract._parse_flags(cmd[1:])
        return None
    except SystemExit as e:
        rc = e.code
    finally:
        flags.FLAGS.unparse_flags()
        for k in set(flags.FLAGS) - before:
            delattr(flags.FLAGS, k)
    verdict, why = judge(case, rc, "", err.getvalue(), [], o)
    errors = [line for line in err.getvalue().splitlines() if line.startswith("error")]
    return {"script": case.script, "case": case.name, "expect": case.expect, "verdict": verdict,
            "why": why + " (at parsing)", "rc": rc, "error": (errors[0] if errors else "")[:300], "wall_s": 0.0}


IN_PROCESS = ("file", "foreign", "live", "finished", "finished_readonly", "summary")  # refused when the output is opened


def in_process(case: Case, root: Path, data: Path, work: Path) -> dict:
    """Runs ``case`` as ``cli.start`` runs the script, in this process (its main thread, its working
    directory the case's folder): the cases about the output folder, refused when the script opens it
    (no JAX work before; a case that is not refused runs the script here at the small sizes)."""
    from absl import flags

    from ccdyn.cli import contract

    t = Path(tempfile.mkdtemp(dir=work, prefix=re.sub(r"\W+", "_", case.id)[:60]))
    o = t / "out"
    planted, hold = _prepare(case, t, o, root)
    cmd = _command(case, t, o, root, data)
    err, out, rc, cwd = io.StringIO(), io.StringIO(), 0, os.getcwd()
    before = set(flags.FLAGS)
    spec = importlib.util.spec_from_file_location(f"_probe_run_{case.script}", cmd[1])
    t0 = time.time()
    try:
        os.chdir(t)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with hold, contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            contract.start(module.main, argv=cmd[1:])
    except SystemExit as e:
        rc = e.code or 0
    finally:
        os.chdir(cwd)
        flags.FLAGS.unparse_flags()
        for k in set(flags.FLAGS) - before:
            delattr(flags.FLAGS, k)
    verdict, why = judge(case, rc, out.getvalue(), err.getvalue(), planted, o)
    errors = [line for line in err.getvalue().splitlines() if line.startswith("error")]
    if verdict == "good":
        shutil.rmtree(t, ignore_errors=True)
    return {"script": case.script, "case": case.name, "expect": case.expect, "verdict": verdict,
            "why": why + " (in process)", "rc": rc, "error": (errors[0] if errors else "")[:300],
            "wall_s": round(time.time() - t0, 1)}


def _cpu_limit(seconds: float):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))
    return limit


def run_case(case: Case, root: Path, data: Path, work: Path) -> dict:
    """Runs ``case`` in a folder of its own under ``work``; returns its row (verdict good / borderline / bad / skipped)."""
    t = Path(tempfile.mkdtemp(dir=work, prefix=re.sub(r"\W+", "_", case.id)[:60]))
    o = t / "out"
    planted, hold = _prepare(case, t, o, root)
    cmd = _command(case, t, o, root, data)
    row = {"script": case.script, "case": case.name, "expect": case.expect}
    if not cmd:
        return {**row, "verdict": "skipped", "why": "no way to make a read-only folder here", "rc": "", "error": ""}
    t0 = time.time()
    with hold:
        rc, so, se, cpu = _run(cmd, t, 10 * case.timeout + 300, case.timeout,
                               dict(os.environ, PYTHONPATH=str(root), JAX_PLATFORMS="cpu"))
    verdict, why = judge(case, rc, so, se, planted, o)
    if verdict == "good" and cpu > case.timeout / 2:
        verdict, why = "borderline", f"{why}, but in {cpu:.0f} s of its {case.timeout:.0f} s CPU-time limit"
    errors = [line for line in se.splitlines() if line.startswith("error")]
    row.update(verdict=verdict, why=why, rc=rc, error=(errors[0] if errors else "")[:300],
               wall_s=round(time.time() - t0, 1), cpu_s=round(cpu, 1))
    if verdict == "good":
        shutil.rmtree(t, ignore_errors=True)
    return row


def _run(cmd, cwd: Path, wall: float, cpu: float, env: dict) -> tuple:
    """Runs ``cmd`` under a CPU-time limit of ``cpu`` seconds, killed after ``wall`` seconds of wall clock;
    (exit status, None if killed for the wall clock; stdout; stderr; CPU seconds it and its children used)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, preexec_fn=_cpu_limit(cpu), env=env)
        fired = threading.Event()
        timer = threading.Timer(wall, lambda: (fired.set(), p.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)  # (Popen.wait would not give the child's resource usage)
        finally:
            timer.cancel()
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = [f.read().decode(errors="replace") for f in (out, err)]
    return None if fired.is_set() else rc, text[0], text[1], usage.ru_utime + usage.ru_stime


def judge(case: Case, rc, stdout: str, stderr: str, planted, o: Path) -> tuple:
    """(``good`` / ``bad``, why) of one run by the failure contract (the module's docstring)."""
    from ccdyn import io, rundir

    lost = [str(p) for p in planted if not p.is_file() or p.read_text() != MINE]
    if lost:
        return "bad", f"a user's file lost: {lost[0]}"
    if rc is None or rc in (-24, -9):  # SIGXCPU, then SIGKILL at the hard limit: past its CPU-time limit
        return "bad", f"still running after {case.timeout:.0f} s of CPU time" if rc else "still running (wall clock)"
    for marker in ("Traceback", "Fatal Python error"):
        if marker in stderr:
            return "bad", marker
    warns = [w for w in (stderr + stdout).splitlines() if re.search(r"\b\w*Warning: ", w) and "absl" not in w]
    if warns:
        return "bad", f"raw warning: {warns[0].strip()[:150]}"
    if rc < 0:
        return "bad", f"killed by signal {-rc}"
    errors = [line for line in stderr.splitlines() if line.startswith("error")]
    manifest = o / rundir.MANIFEST
    state = io.read_json(manifest).get("state") if manifest.is_file() else None
    if rc == 0:
        if case.expect == "refuse":
            return "bad", "exit 0 where a refusal was due"
        if errors:
            return "bad", "exit 0 with an error line"
        if state not in (None, "complete"):
            return "bad", f"exit 0 with the run {state}"
        return "good", "succeeded"
    if rc != 2:
        return "bad", f"exit status {rc}"
    if case.expect == "succeed":
        return "bad", "refused a run that should succeed"
    if len(errors) != 1:
        return "bad", f"{len(errors)} error lines"
    if case.names and not any(n.format(o=o) in errors[0] for n in case.names.split("|")):
        return "bad", f"the error line does not name {case.names.replace('|', ' or ')}"
    if not case.setup and o.exists() and state != "failed":
        return "bad", "an output folder left behind by a refusal"
    if CATCH_ALL in errors[0]:
        return "borderline", "refused by the contract's catch-all (an exception no check expected)"
    return "good", "refused"


CATCH_ALL = "set CCDYN_TRACEBACK=1"  # the line of an unexpected exception (ccdyn.cli.contract._one_line)


def run_all(chosen, root: Path, data: Path, work: Path, *, jobs: int = 1, show=lambda row: None) -> list:
    """The rows of the cases ``chosen``: those refused at parsing and those about the output folder
    judged in this process (its main thread), the others in ``jobs`` processes at a time, the quick
    ones first. ``show(row)`` as each is judged."""
    rows, later = [], []
    for c in chosen:
        row = flag_stage(c, root, data, work)
        if row is None and c.setup in IN_PROCESS:
            row = in_process(c, root, data, work)
        if row is None:
            later.append(c)
        else:
            rows.append(row)
            show(row)
    later.sort(key=lambda c: c.timeout)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for row in pool.map(lambda c: run_case(c, root, data, work), later):
            rows.append(row)
            show(row)
    return rows


VERDICTS = ("good", "borderline", "bad", "skipped")


def _show(row) -> None:
    print(f"{row['verdict']:10s} {row['script']} | {row['case']} | {row['why']} | {row['error'][:160]}", flush=True)


def judged(log: Path) -> dict:
    """{(script, case name): verdict} of the lines a former run printed (:func:`_show`, any width)."""
    out = {}
    for line in log.read_text().splitlines():
        head, _, rest = line.partition(" ")
        if head in VERDICTS and " | " in rest:
            script, name = (w.strip() for w in rest.split(" | ")[:2])
            out[script, name] = head
    return out


def in_slice(chosen: list, text: str) -> list:
    """Slice K of N (``K/N``, 1 <= K <= N) of the cases ``chosen``: every N-th, from the K-th (interleaved, so
    each slice holds every script's quick and slow cases alike)."""
    k, n = (int(v) for v in text.split("/"))
    if not 1 <= k <= n:
        raise ValueError(f"--slice={text} must be K/N with 1 <= K <= N")
    return chosen[k - 1::n]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout whose scripts run (default: this one)")
    p.add_argument("--only", default="", help="comma-separated script names")
    p.add_argument("--match", default="", help="only cases whose id holds this text")
    p.add_argument("--bad_in", type=Path, help="only the cases a former run's output (its lines) judged bad or "
                   "borderline")
    p.add_argument("--done_in", type=Path, action="append", default=[],
                   help="leave out the cases a former run's output (its lines) judged (repeatable: resume a run)")
    p.add_argument("--slice", default="", help="K/N: the K-th of N interleaved slices of the chosen cases")
    p.add_argument("--skip", default="", help="leave out the cases whose name is one of these (comma-separated)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--csv", type=Path, help="write every row here")
    a = p.parse_args(argv)
    root = a.root.resolve()
    warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called")  # each fork execs a script at once
    chosen = [c for c in cases(root, tuple(filter(None, a.only.split(",")))) if a.match in c.id
              and c.name not in a.skip.split(",")]
    if a.bad_in:
        bad = {k for k, v in judged(a.bad_in).items() if v in ("bad", "borderline")}
        chosen = [c for c in chosen if (c.script, c.name) in bad]
    done = {k for log in a.done_in for k in judged(log)}
    chosen = [c for c in chosen if (c.script, c.name) not in done]
    if a.slice:
        chosen = in_slice(chosen, a.slice)
    work = Path(tempfile.mkdtemp(prefix="ccdyn-probe-"))
    (work / "data").mkdir()
    make_data(work / "data")
    rows = run_all(chosen, root, work / "data", work, jobs=a.jobs, show=_show)
    for r in rows:  # the CSV names no folder of this machine
        r["error"] = r["error"].replace(str(work), "<probe>").replace(str(root), "<checkout>")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["script", "case", "expect", "verdict", "why", "rc", "wall_s", "cpu_s",
                                              "error"])
            w.writeheader()
            w.writerows(rows)
    for s, n in tally(rows).items():
        print(f"{s:20s} cases {sum(n.values()):3d}  " + "  ".join(f"{v} {n[v]:3d}" for v in VERDICTS))
    print(f"kept the folders of the cases that were not good under {work}")
    return int(any(r["verdict"] == "bad" for r in rows))


def tally(rows) -> dict:
    """{script: {verdict: count}} of ``rows`` (every verdict of :data:`VERDICTS`, zeros included)."""
    per = {}
    for r in rows:
        per.setdefault(r["script"], dict.fromkeys(VERDICTS, 0))[r["verdict"]] += 1
    return per


if __name__ == "__main__":
    sys.exit(main())
