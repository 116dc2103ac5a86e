"""Images for the MNIST experiment of App. E.3: the IDX files of MNIST, scikit-learn's 8x8 digits as
an offline stand-in, and the split of an image into disjoint receptive fields (Fig. 2(b)).

- :func:`parse_idx` turns the bytes of an IDX file (LeCun's format: two zero bytes, a type code, the
  number of dimensions, big-endian uint32 sizes, big-endian data) into a numpy array; every defect
  (wrong magic, unknown type, truncated header or data, bytes past the data) is a ``ValueError`` that
  names the file. :func:`load_mnist` reads the two files of a split from a folder (``.gz`` or not,
  through :func:`ccdyn.io.read_bytes`) and checks that they agree.
- :func:`load_digits` is scikit-learn's bundled 1797 digits (8x8, 0..16), which need no download:
  the default of ``scripts/mnist.py``, a stand-in for MNIST (4 receptive fields of 4x4 instead of
  14x14), not MNIST.
- :func:`receptive_fields` cuts (n, H, W) images into a 2x2 (in general s x s) grid of disjoint
  blocks, flattened row-major, in the order of Fig. 12: upper left 0, upper right 1, bottom left 2,
  bottom right 3.

Pixels are scaled to [0, 1] (MNIST / 255, digits / 16), as PyTorch's ``ToTensor`` does for the
authors' MNIST loader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ccdyn import io

__all__ = ["IDX_TYPES", "MNIST_FILES", "parse_idx", "encode_idx", "mnist_paths", "load_mnist", "load_digits",
           "receptive_fields"]

# IDX type code -> numpy dtype (big-endian).
IDX_TYPES = {0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
             0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
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
