"""File I/O of ccdyn: atomic JSON / npz / CSV / PNG writes and reads that name the file when they fail.

Run directories and chunk stores live in :mod:`ccdyn.rundir`; the ``.npz`` format of a user's data
file in :mod:`ccdyn.data.files`."""

from __future__ import annotations

import collections
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["recently_read", "atomic_write_bytes", "write_json", "read_json", "write_npz", "read_npz", "write_csv",
           "read_csv", "save_figure", "as_json", "read_bytes"]


_READ: collections.deque[object] = collections.deque(maxlen=3)  # the files the reads below opened last


def recently_read(clear: bool = False) -> list:
    """The files (paths as given) that :func:`read_json`, :func:`read_csv`, :func:`read_npz` and
    :func:`read_bytes` opened last, oldest first (at most 3): the scripts' error line of an unexpected
    failure names them (the file a reader's failure most likely concerns). ``clear``: forget them after."""
    out = [str(p) for p in _READ]
    if clear:
        _READ.clear()
    return out


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path, data: bytes) -> None:
    """Writes ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``; an
    ``OSError`` (disk full, read-only, ...) names ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, f"{e.strerror} (writing)", str(path)) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None:
            raise OSError(e.errno, f"{e.strerror} (writing)", str(path)) from None
        raise


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.generic,)):
        return obj.item()
    if hasattr(obj, "tolist") and hasattr(obj, "shape"):
        return _jsonable(np.asarray(obj).tolist())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None if np.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def as_json(obj):
    """``obj`` as it reads back from JSON (tuples become lists, arrays lists, NaN None)."""
    return json.loads(json.dumps(_jsonable(obj), allow_nan=False))


def write_json(path, obj) -> None:
    """Atomically writes ``obj`` as indented JSON (numpy / jax arrays become lists, NaN -> null)."""
    text = json.dumps(_jsonable(obj), indent=2, sort_keys=False, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode())


def read_json(path):
    """The JSON in ``path`` (``OSError`` / ``ValueError`` as ``open`` and ``json`` raise them)."""
    _READ.append(path)
    with open(path) as f:
        return json.load(f)


def write_npz(path, **arrays) -> None:
    """Atomically writes a compressed ``.npz`` of numpy-convertible arrays."""
    import io as _io

    buf = _io.BytesIO()
    named: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}  # (the stub's ** would take allow_pickle)
    np.savez_compressed(buf, **named)
    atomic_write_bytes(path, buf.getvalue())


def read_npz(path) -> dict:
    """All arrays of an ``.npz`` file (no pickles), read eagerly. ``ValueError`` naming the file when it
    is missing, empty, truncated, not an ``.npz`` (e.g. a ``.npy``) or holds pickled objects."""
    _READ.append(path)
    try:
        with open(path, "rb") as raw:
            magic = raw.read(6)
        if not magic:
            raise EOFError
        if magic.startswith(b"\x93NUMPY"):
            raise ValueError("a single array (.npy), not an .npz archive of named arrays")
        if not magic.startswith(b"PK"):
            raise ValueError("no zip header")
        _check_npz_sizes(path)
        f = np.load(path, allow_pickle=False)
        with f:
            return {k: f[k] for k in f.files}
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, ValueError, MemoryError) as e:
        text = "empty file" if isinstance(e, EOFError) else str(e) or e.__class__.__name__
        raise ValueError(f"{path} is not a readable .npz file ({text})") from None


def _check_npz_sizes(path) -> None:
    """``ValueError`` when an array of the ``.npz`` at ``path`` claims in its header more bytes than its
    member holds (a corrupt or crafted header: 10^12 rows in a small file), read before any array is
    allocated."""
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with z.open(info) as member:
                version = np.lib.format.read_magic(member)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(member)
                header = member.tell()
            claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if claimed != info.file_size - header:
                raise ValueError(f"array {info.filename[:-4]!r} claims shape {tuple(shape)} of {dtype} "
                                 f"({claimed:,} bytes) but its member holds {info.file_size - header:,}")


def write_csv(path, header, rows) -> None:
    """Atomically writes a CSV file: one ``header`` line, then ``rows`` (``\\n`` line ends)."""
    import csv
    import io as _io

    buf = _io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([list(header), *[list(r) for r in rows]])
    atomic_write_bytes(path, buf.getvalue().encode())


def read_csv(path) -> list:
    """The rows of a CSV file with a header line, as dicts of strings."""
    _READ.append(path)
    import csv

    return list(csv.DictReader(Path(path).read_text().splitlines()))


def save_figure(path, fig, dpi: int = 120) -> None:
    """Atomically writes a matplotlib figure as PNG and closes it."""
    import io as _io

    import matplotlib.pyplot as plt

    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path) -> bytes:
    """The bytes of ``path``, decompressed when the file is gzip (by its magic bytes, whatever its
    name). ``ValueError`` naming the file when it is missing, unreadable or a broken gzip stream."""
    _READ.append(path)
    import gzip
    import zlib

    try:
        with open(path, "rb") as f:
            data = f.read()
        return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data
    except (OSError, EOFError, zlib.error) as e:
        text = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or e.__class__.__name__
        raise ValueError(f"{path} cannot be read ({text})") from None
