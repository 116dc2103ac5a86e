"""A user's data file: the ``.npz`` format that ``--data=file --data_path=...`` reads.

Arrays: ``x`` (n, d) required; optional ``p`` (n,), ``x_aug`` (n, V, d), ``p_aug`` (n, V),
``patterns`` (m, d). Contents are validated by :func:`ccdyn.data.make_dataset`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ccdyn import io
from ccdyn.data.dataset import Dataset, make_dataset

__all__ = ["FIELDS", "load_dataset", "save_dataset"]

FIELDS = ("x", "p", "x_aug", "p_aug", "patterns")


def load_dataset(path, dtype=None) -> Dataset:
    """Reads a user's ``.npz`` data file (``ValueError`` names the file and the bad field)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"data_path {str(path)!r} is not a file")
    try:
        fields = io.read_npz(path)
    except ValueError as e:
        raise ValueError(f"data_path {e}") from None
    if "x" not in fields:
        raise ValueError(f"data_path {str(path)!r} has no array 'x' (fields: {sorted(fields)})")
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise ValueError(f"data_path {str(path)!r} has unknown arrays {unknown}; allowed: {sorted(FIELDS)}")
    try:
        return make_dataset(dtype=dtype, **fields)
    except ValueError as e:  # a bad field (non-finite, wrong shape, ...): name the file too, and the first bad row
        raise ValueError(f"data_path {str(path)!r}: {e}{_first_non_finite(fields)}") from None


def _first_non_finite(fields) -> str:
    """`` (the first: x row 3, column 1)``: where the first non-finite entry of the fields lies, or ""."""
    for name in FIELDS:
        a = fields.get(name)
        if a is None or np.asarray(a).dtype.kind not in "fc" or np.all(np.isfinite(a)):
            continue
        at = np.argwhere(~np.isfinite(np.asarray(a)))[0]
        where = f"row {at[0]}" + (f", column {at[-1]}" if len(at) == 2 else f", index {tuple(int(i) for i in at[1:])}"
                                  if len(at) > 2 else "")
        return f" (the first: {name} {where}, {np.asarray(a)[tuple(at)]})"
    return ""


def save_dataset(path, ds: Dataset) -> None:
    """Writes a dataset in the format that :func:`load_dataset` reads."""
    arrays = {k: getattr(ds, k) for k in FIELDS}
    io.write_npz(path, **{k: v for k, v in arrays.items() if v is not None})
