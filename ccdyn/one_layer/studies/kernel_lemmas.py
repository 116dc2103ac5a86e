"""Lemma 1 and the variance-sum form of Lemma 2 (Eq. 4, Cor. 1) for Gaussian alpha, on an exact
population with augmentation (:mod:`ccdyn.one_layer.gaussian_kernel`).

Population: latent summation (Eq. 9, exact support) with ``aug_views`` Gaussian-noise views per point.
Features f(x) = ReLU(W x) for a seeded W (k x d); alpha_ij = exp(-||f(x0_i) - f(x0_j)||^2 / 2 tau) on the
un-augmented points (Lemma 1's g = f). For each tau: (1) Lemma 1: the truncated feature map is >= 0 and
phi phi^T -> alpha as the degree grows; (2) Eq. 4: sum_a z_a^2 V_{p~_a}[fbar] (fbar the views' mean)
against the exact-population pairwise form of Eq. 3 (``ccdyn.covariance.population_cov``); (3) the
batch C_alpha of Eq. 3 (two sampled views, ``ccdyn.covariance.batch_cov``) against (N - 1)/N times the
kernel sum, its relative error over ``n_batches`` draws at each batch size N (it must fall like
1/sqrt N). ``scripts/kernel_lemmas.py`` writes the record.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import covariance, report
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import gaussian_kernel

__all__ = ["KernelLemmasConfig", "run", "markdown", "COLUMNS", "BATCH_COLUMNS"]

COLUMNS = ("tau", "degree", "n_features", "max_abs_alpha_err", "min_phi", "eq4_rel_diff")
BATCH_COLUMNS = ("tau", "batch_size", "mean_rel_err", "std_rel_err")


@dataclasses.dataclass(frozen=True)
class KernelLemmasConfig:
    """Data (latent summation d, m, q, ortho_eps; noise views), k features, taus, truncation degrees,
    batch sizes and draws per size, and the seed of W and of the batches."""

    d: int = 4
    m: int = 4
    q: float = 0.2
    ortho_eps: float = 0.1
    aug_views: int = 4
    aug_std: float = 0.2
    k: int = 2
    taus: tuple = (2.0, 1.0)
    degrees: tuple = (10, 20, 30, 40, 50, 60)
    batch_sizes: tuple = (64, 256, 1024)
    n_batches: int = 8
    seed: int = 0


def _relu_features(x, w):
    return np.maximum(np.asarray(x, np.float64) @ w.T, 0.0)


def _batches(cfg, p_support, w, xv, pv, f0, fbar_kernel, tau, rng) -> list:
    rows = []
    n = xv.shape[0]
    for size in cfg.batch_sizes:
        errs = []
        for _ in range(cfg.n_batches):
            i = rng.choice(n, size=size, p=p_support)
            v1 = np.array([rng.choice(pv.shape[1], p=pv[j]) for j in i])
            v2 = np.array([rng.choice(pv.shape[1], p=pv[j]) for j in i])
            a, a2 = _relu_features(xv[i, v1], w), _relu_features(xv[i, v2], w)
            g = f0[i]
            alpha = np.exp(-np.sum((g[:, None] - g[None]) ** 2, axis=2) / (2.0 * tau))
            c = np.asarray(covariance.batch_cov(jnp.asarray(a), jnp.asarray(a), jnp.asarray(alpha),
                                                jnp.asarray(a2), jnp.asarray(a2)))
            target = (size - 1) / size * fbar_kernel
            errs.append(np.linalg.norm(c - target) / np.linalg.norm(target))
        rows.append([tau, size, float(np.mean(errs)), float(np.std(errs))])
    return rows


def run(cfg: KernelLemmasConfig) -> dict:
    """Returns ``{"config", "rows" (COLUMNS), "batch_rows" (BATCH_COLUMNS)}``."""
    if not cfg.degrees or not cfg.taus or cfg.n_batches < 2:
        raise ValueError("need degrees, taus and n_batches >= 2")
    spec = DataSpec(data="latent_summation", d=cfg.d, m=cfg.m, q=(cfg.q,), ortho_eps=cfg.ortho_eps, aug="noise",
                    aug_views=cfg.aug_views, aug_std=cfg.aug_std)
    ds = build_dataset(spec, jnp.float64)
    rng = np.random.default_rng(cfg.seed)
    w = rng.standard_normal((cfg.k, cfg.d))
    xv, pv = (np.asarray(v, np.float64) for v in ds.views())
    pv = pv / pv.sum(axis=1, keepdims=True)
    p = np.asarray(ds.p, np.float64)
    f0 = _relu_features(ds.x, w)
    fbar = np.einsum("nv,nvk->nk", pv, _relu_features(xv, w))
    rows, batch_rows = [], []
    for tau in cfg.taus:
        alpha = np.exp(-np.sum((f0[:, None] - f0[None]) ** 2, axis=2) / (2.0 * tau))
        pairwise_form = np.asarray(covariance.population_cov(jnp.asarray(fbar), jnp.asarray(fbar), jnp.asarray(p),
                                                             jnp.asarray(alpha)))
        kernel_sum = None
        for deg in cfg.degrees:
            phi = gaussian_kernel.gaussian_features(f0, tau, deg)
            kernel_sum = gaussian_kernel.variance_sum(fbar, p, phi)
            rows.append([tau, deg, phi.shape[1], float(np.max(np.abs(phi @ phi.T - alpha))), float(phi.min()),
                         float(np.linalg.norm(kernel_sum - pairwise_form) / np.linalg.norm(pairwise_form))])
        batch_rows += _batches(cfg, p, w, xv, pv, f0, kernel_sum, tau, rng)
    return {"config": dataclasses.asdict(cfg), "rows": rows, "batch_rows": batch_rows,
            "support_points": int(ds.n), "views": int(xv.shape[1]),
            "jax_x64": bool(jax.config.read("jax_enable_x64"))}


def markdown(record: dict) -> str:
    """``kernel_lemmas.md``: the Lemma 1 / Eq. 4 rows, then the batch rows."""
    return (report.markdown_table(COLUMNS, record["rows"]) + "\n\n"
            + report.markdown_table(BATCH_COLUMNS, record["batch_rows"]) + "\n")
