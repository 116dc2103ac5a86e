"""File I/O of ccdyn: atomic JSON / npz / CSV / PNG writes, run directories, chunk stores.

The ``.npz`` format of a user's data file lives in :mod:`ccdyn.data.files`."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["atomic_write_bytes", "write_json", "read_json", "write_npz", "read_npz", "write_csv",
           "prepare_output_dir", "save_figure", "ChunkStore", "as_json", "wait_for_file"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path, data: bytes) -> None:
    """Writes ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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


def wait_for_file(run_dir, name: str, timeout: float, poll: float = 0.2) -> Path:
    """Waits until ``run_dir/name`` exists (written by process 0 of a multi-host run)."""
    deadline = time.monotonic() + timeout
    while not (Path(run_dir) / name).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{Path(run_dir) / name} did not appear within {timeout:.0f} s")
        time.sleep(poll)
    return Path(run_dir)


def write_json(path, obj) -> None:
    """Atomically writes ``obj`` as indented JSON (numpy / jax arrays become lists, NaN -> null)."""
    text = json.dumps(_jsonable(obj), indent=2, sort_keys=False, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode())


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_npz(path, **arrays) -> None:
    """Atomically writes a compressed ``.npz`` of numpy-convertible arrays."""
    import io as _io

    buf = _io.BytesIO()
    np.savez_compressed(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    atomic_write_bytes(path, buf.getvalue())


def read_npz(path) -> dict:
    """All arrays of an ``.npz`` file (no pickles), read eagerly."""
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def write_csv(path, header, rows) -> None:
    """Atomically writes a CSV file: one ``header`` line, then ``rows`` (``\\n`` line ends)."""
    import csv
    import io as _io

    buf = _io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([list(header), *[list(r) for r in rows]])
    atomic_write_bytes(path, buf.getvalue().encode())


def prepare_output_dir(path, *, overwrite: bool = False, resume: bool = False) -> Path:
    """Creates the run directory ``path``.

    An existing non-empty directory is an error unless ``resume`` (keep it) or ``overwrite``
    (delete it first) is set; the error names the flags that allow it.
    """
    path = Path(path)
    if path.exists() and any(path.iterdir()):
        if resume:
            return path
        if not overwrite:
            raise FileExistsError(
                f"output_dir {str(path)!r} exists and is not empty; pass --overwrite to replace it"
                " or --resume to continue the run in it"
            )
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_figure(path, fig, dpi: int = 120) -> None:
    """Atomically writes a matplotlib figure as PNG and closes it."""
    import io as _io

    import matplotlib.pyplot as plt

    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


class ChunkStore:
    """Per-chunk results of a run under ``<run_dir>/chunks``: written atomically, so a chunk file is
    either complete or absent, and an interrupted run resumes by skipping the chunks present."""

    def __init__(self, run_dir):
        self.dir = Path(run_dir) / "chunks"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, c: int) -> Path:
        return self.dir / f"chunk_{c:06d}.npz"

    def has(self, c: int) -> bool:
        return self.path(c).exists()

    def save(self, c: int, arrays: dict) -> None:
        write_npz(self.path(c), **arrays)

    def load(self, c: int) -> dict:
        return read_npz(self.path(c))

    def wait(self, chunks, timeout: float, poll: float = 0.2) -> None:
        """Blocks until every chunk in ``chunks`` exists (other processes write them)."""
        deadline = time.monotonic() + timeout
        missing = [c for c in chunks if not self.has(c)]
        while missing:
            if time.monotonic() > deadline:
                raise TimeoutError(f"chunks {missing[:5]}... still missing after {timeout:.0f} s")
            time.sleep(poll)
            missing = [c for c in missing if not self.has(c)]
