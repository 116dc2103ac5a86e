"""MNIST's IDX files (written here by hand with struct, plain and gzipped), each bad file's error,
the digits stand-in and the receptive-field split (against a loop)."""

import gzip
import struct

import numpy as np
import pytest

from ccdyn import io
from ccdyn.data import mnist


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


@pytest.mark.slow
def test_digits_stand_in():  # slow only for importing scikit-learn (1-2 s); the committed results use it
    x, y = mnist.load_digits()
    assert x.shape == (1797, 8, 8) and y.shape == (1797,) and x.min() == 0 and x.max() == 1
