"""Build a dataset from a flat, hashable specification (what the scripts' data flags fill in)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax

from ccdyn.data import files, models
from ccdyn.data.dataset import Dataset

__all__ = ["DataSpec", "DATA_MODELS", "AUGMENTATIONS", "augment", "build_dataset", "spec_from_dict", "support_shape",
           "describe"]

DATA_MODELS = ("latent_summation", "latent_categorical", "circle", "gaussian_mixture", "file")
AUGMENTATIONS = ("none", "noise", "rotation", "shift")


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """Data model and its parameters; field names are the scripts' flag names.

    Defaults are the basins default: latent summation, d = M = 10, q = 0.2, ||U^T U - I||_2 = 0.1,
    exact population (2^10 points), no augmentation.

    Augmentation (``aug``): ``noise`` adds ``aug_views`` Gaussian views of std ``aug_std``;
    ``rotation`` (2-D data, App. B.5) rotates by t ~ Uniform[-aug_range pi, aug_range pi] with
    ``aug_views`` quadrature angles (aug_range in (0, 1]; 1 is the whole circle); ``shift`` (App. B.5)
    shifts cyclically by every s in {-aug_range, ..., aug_range} (aug_range an integer >= 1; the whole
    group Z_d when 2 aug_range + 1 >= d).
    """

    data: str = "latent_summation"
    d: int = 10
    m: int = 10
    q: tuple = (0.2,)
    ortho_eps: float = 0.1
    probs: tuple | None = None
    angles: tuple = models.PAPER_ANGLES
    std: float = 0.3
    n_samples: int | None = None
    data_path: str | None = None
    data_seed: int = 0
    aug: str = "none"
    aug_views: int = 8
    aug_std: float = 0.1
    aug_range: float = 1.0

    @property
    def sampled(self) -> bool:
        """True when the support is a sample (a continuous model, a latent summation model drawn
        rather than enumerated, noise views, a user's file), False for an exact discrete population
        (whose A(w) is the population's own)."""
        drawn = self.data == "latent_summation" and (self.n_samples is not None or self.m > models.MAX_EXACT_M)
        return drawn or self.data in ("gaussian_mixture", "file") or self.aug == "noise"

    @property
    def has_density(self) -> bool:
        """True when x0 are samples of a continuous density p_D (what Thm. 2 needs)."""
        return self.data in ("gaussian_mixture", "file")


def augment(ds: Dataset, spec: DataSpec, key) -> Dataset:
    """``ds`` with the views of ``spec.aug`` (see :class:`DataSpec`); ``ValueError`` names the flag."""
    if spec.aug not in AUGMENTATIONS:
        raise ValueError(f"--aug={spec.aug!r} is unknown; allowed: {', '.join(AUGMENTATIONS)}")
    if spec.aug == "noise":
        return models.gaussian_noise_views(ds, key, spec.aug_views, spec.aug_std)
    if spec.aug == "rotation":
        if not (0.0 < spec.aug_range <= 1.0):
            raise ValueError(f"--aug_range={spec.aug_range} must lie in (0, 1] for --aug=rotation "
                             "(half-range of the angle in units of pi)")
        if ds.dim != 2:
            raise ValueError(f"--aug=rotation needs 2-D data; this data has d={ds.dim}")
        return models.rotation_views(ds, spec.aug_range, spec.aug_views)
    if spec.aug == "shift":
        if spec.aug_range != int(spec.aug_range) or spec.aug_range < 1:
            raise ValueError(f"--aug_range={spec.aug_range} must be an integer >= 1 for --aug=shift "
                             "(the largest cyclic shift)")
        return models.shift_views(ds, int(spec.aug_range))
    return ds


def build_dataset(spec: DataSpec, dtype=None) -> Dataset:
    """The dataset described by ``spec`` (``ValueError`` names the flag at fault)."""
    if spec.data not in DATA_MODELS:
        raise ValueError(f"--data={spec.data!r} is unknown; allowed: {', '.join(DATA_MODELS)}")
    if spec.aug not in AUGMENTATIONS:
        raise ValueError(f"--aug={spec.aug!r} is unknown; allowed: {', '.join(AUGMENTATIONS)}")
    key = jax.random.PRNGKey(spec.data_seed)
    k_basis, k_sample, k_aug = jax.random.split(key, 3)
    q = spec.q[0] if len(spec.q) == 1 else spec.q
    if spec.data == "latent_summation":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        sampled = spec.n_samples is not None or spec.m > models.MAX_EXACT_M  # else enumerated exactly
        n = spec.n_samples or 20000
        ds = models.latent_summation(u, q, key=k_sample if sampled else None,
                                     n_samples=n if sampled else None)
    elif spec.data == "latent_categorical":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        ds = models.latent_categorical(u, spec.probs)
    elif spec.data == "circle":
        ds = models.circle(spec.angles, spec.probs)
    elif spec.data == "gaussian_mixture":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        ds = models.gaussian_mixture(k_sample, 2.0 * u.T, spec.std, spec.n_samples or 2000, spec.probs)
    else:
        if not spec.data_path:
            raise ValueError("--data=file needs --data_path")
        ds = files.load_dataset(spec.data_path)
    return augment(ds, spec, k_aug).astype(dtype)


def support_shape(spec: DataSpec) -> tuple:
    """(support points n, views per point V, dimension d) that :func:`build_dataset` would make, found
    without building it (for memory checks before a run starts); a data file counts as (0, 1, 0)."""
    d = 2 if spec.data == "circle" else spec.d
    sampled = spec.n_samples is not None or spec.m > models.MAX_EXACT_M
    n = {"latent_summation": (spec.n_samples or 20000) if sampled else 2 ** spec.m, "latent_categorical": spec.m,
         "circle": len(spec.angles), "gaussian_mixture": spec.n_samples or 2000}.get(spec.data, 0)
    views = {"noise": spec.aug_views, "rotation": spec.aug_views, "shift": min(2 * int(spec.aug_range) + 1, d)}
    return n, views.get(spec.aug, 1), d if spec.data != "file" else 0


def spec_from_dict(fields: dict) -> DataSpec:
    """The :class:`DataSpec` saved as a dict (e.g. a basins run's ``summary.json``); lists back to tuples."""
    known = {f.name for f in dataclasses.fields(DataSpec)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(f"unknown data fields {unknown}; known: {sorted(known)}")
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return DataSpec(**values)


def describe(fields) -> str:
    """A short label of the data a spec (or its dict, e.g. a ``summary.json`` config) describes, by what
    it is: the latent and mixture models by d, M (and ||U^T U - I||_2, sampled size, std), the circle by
    its points (the paper's Fig. 8 angles or their count), a file by its name; then the augmentation."""
    f = {**dataclasses.asdict(DataSpec()), **(dataclasses.asdict(fields) if isinstance(fields, DataSpec) else fields)}
    g = lambda v: f"{float(v):g}"  # noqa: E731
    kind = f["data"]
    if kind == "circle":
        angles = tuple(float(a) for a in f["angles"])
        pts = "Fig. 8's 9 points" if angles == tuple(models.PAPER_ANGLES) else f"{len(angles)} points"
        text = f"circle, {pts}"
    elif kind == "file":
        text = f"file {Path(str(f['data_path'])).name}"
    else:
        text = f"{kind} d={f['d']} m={f['m']}"
        if kind in ("latent_summation", "latent_categorical", "gaussian_mixture") and f["ortho_eps"]:
            text += f" eps={g(f['ortho_eps'])}"
        if kind == "gaussian_mixture":
            text += f" std={g(f['std'])} n={f['n_samples'] or 2000}"
        elif kind == "latent_summation" and (f["n_samples"] is not None or f["m"] > models.MAX_EXACT_M):
            text += f" n={f['n_samples'] or 20000}"
    aug = f["aug"]
    if aug == "noise":
        text += f", noise views {f['aug_views']} x std {g(f['aug_std'])}"
    elif aug == "rotation":
        text += f", rotations |t| <= {g(f['aug_range'])} pi ({f['aug_views']} views)"
    elif aug == "shift":
        text += f", cyclic shifts |s| <= {int(f['aug_range'])}"
    return text
